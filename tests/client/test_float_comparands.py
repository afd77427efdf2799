"""A Python float compared with a numeric column, judged against PostgreSQL.

psycopg sends a float as float8, and PostgreSQL compares ``numeric = float8`` as float8
(the numeric converted, correctly rounded): ``price = 9.99`` finds the row holding
9.99.  Through the client it found nothing (the float's exact binary value, 9.9900000000
000002131628..., was compared).  Now each comparison with a ``numeric(p,s)`` column gives
PostgreSQL's rows, or -- a range with a float that no value of the column's scale
converts to -- is refused by name, as a range with any value off the scale's grid is;
with an unconstrained numeric, whose stored decimals may be of any length, it is
refused (no one comparand finds every decimal that rounds to the float)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import adaptive_client
from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted

ROWS = [(i, Decimal(i) / 8, Decimal(i) / 7) for i in range(-40, 80)] + [
    (200, Decimal("1.235"), Decimal("1.235")),
    (201, Decimal("0.1"), Decimal("0.1")),
    (202, Decimal("9.99"), Decimal("9.99")),
]
EQUAL = "SELECT id FROM fq WHERE n = %s ORDER BY id"
RANGES = [
    "SELECT id FROM fq WHERE n >= %s ORDER BY id",
    "SELECT id FROM fq WHERE n > %s ORDER BY id",
    "SELECT id FROM fq WHERE n < %s ORDER BY id",
    "SELECT id FROM fq WHERE n <= %s ORDER BY id",
]


@pytest.fixture(scope="module")
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(
        new_database,
        master_key,
        "float_cmp",
        {},
        ["CREATE TABLE fq (id integer PRIMARY KEY, n numeric(10,3), f numeric)"],
        {"fq": ROWS},
    ) as pair:
        for conn in pair:  # (the Ord onion at the layer the ranges need)
            conn.execute("SELECT count(*) FROM fq WHERE n > 0").fetchall()
        yield pair


def _check(pair: Pair, v: float) -> None:
    plain, enc = pair
    assert enc.execute(EQUAL, (v,)).fetchall() == plain.execute(EQUAL, (v,)).fetchall(), v
    for sql in RANGES:
        want = plain.execute(sql, (v,)).fetchall()
        try:
            got = enc.execute(sql, (v,)).fetchall()
        except adaptive_client.NotSupportedError:
            # refused only where no value of the column's scale converts to v
            grid = Decimal(v).quantize(Decimal("0.001"))
            assert all(
                float(g) != v for g in (grid - Decimal("0.001"), grid, grid + Decimal("0.001"))
            )
            continue
        assert got == want, (sql, v)


@pytest.mark.parametrize(
    "v", [9.99, 1.235, 0.1, 0.125, -1.375, 2.5, 0.3, 1 / 7, 1e-20, 123.0, -0.0]
)
def test_floats_compare_with_a_scaled_numeric_as_in_postgresql(pair: Pair, v: float) -> None:
    _check(pair, v)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.one_of(
        st.integers(-50_000, 50_000).map(lambda k: k / 1000),  # on the grid, as floats
        st.floats(-60, 60, allow_nan=False),
    )
)
def test_drawn_floats_compare_as_in_postgresql(pair: Pair, v: float) -> None:
    _check(pair, v)


def test_an_unconstrained_numeric_refuses_a_float(pair: Pair) -> None:
    plain, enc = pair
    # (PostgreSQL finds 1/7 stored to 28 digits; a comparand of 0.14285714285714285 would not)
    assert plain.execute("SELECT id FROM fq WHERE f = %s", (1 / 7,)).fetchall() == [(1,)]
    with pytest.raises(adaptive_client.NotSupportedError, match="float8"):
        enc.execute("SELECT id FROM fq WHERE f = %s", (1 / 7,))
    assert enc.execute("SELECT id FROM fq WHERE f = %s", (Decimal("1.235"),)).fetchall() == [(200,)]


# -- numbers compared with real and double precision columns --------------------------

FLOAT_ROWS = [(1, 0.1, 0.1), (2, 0.5, 0.5), (3, 0.3, 0.30000000000000004), (4, 16777216.0, 1e20)]
FLOAT_QUERIES = [
    "SELECT id FROM fl WHERE d IN (0.1, 0.3) ORDER BY id",
    "SELECT id FROM fl WHERE d = 0.1 + 0.2 ORDER BY id",
    "SELECT id FROM fl WHERE d = 0.1 + 0.2 - 0.3 + 0.5 ORDER BY id",
    "SELECT id FROM fl WHERE d = 100000000000000000000 ORDER BY id",
    "SELECT id FROM fl WHERE d < 0.15 ORDER BY id",
    "SELECT id FROM fl WHERE d >= 0.5 ORDER BY id",
    "SELECT id FROM fl WHERE r = 0.1 ORDER BY id",
    "SELECT id FROM fl WHERE r = 0.5 ORDER BY id",
    "SELECT id FROM fl WHERE r = 0.1::real ORDER BY id",
    "SELECT id FROM fl WHERE r = '0.1' ORDER BY id",
    "SELECT id FROM fl WHERE r IN (0.5, 16777216) ORDER BY id",
    "SELECT id FROM fl WHERE r = %s ORDER BY id",
    "SELECT id FROM fl WHERE d = %s ORDER BY id",
]
FLOAT_PARAMETERS = [0.1, 0.5, Decimal("0.1"), Decimal("0.5"), 16777216, 0.30000000000000004]


@pytest.fixture(scope="module")
def float_pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(
        new_database,
        master_key,
        "float_cols",
        {},
        ["CREATE TABLE fl (id integer PRIMARY KEY, r real, d double precision)"],
        {"fl": FLOAT_ROWS},
    ) as pair:
        for conn in pair:  # (the Ord onion at the layer the ranges need)
            conn.execute("SELECT count(*) FROM fl WHERE d > 0").fetchall()
        yield pair


@pytest.mark.parametrize("sql", FLOAT_QUERIES)
def test_numbers_compare_with_float_columns_as_float8(float_pair: Pair, sql: str) -> None:
    """A numeric constant compared with a double precision column is the float8 it
    converts to (``d IN (0.1, 0.3)`` found nothing: the decimal 0.1 was compared
    exactly); a real is widened to float8 for the comparison, so no real equals the
    float8 0.1 (``r = 0.1`` is false in PostgreSQL), while ``0.1::real`` and ``'0.1'``
    are the real 0.1."""
    plain, enc = float_pair
    for value in FLOAT_PARAMETERS if "%s" in sql else [None]:
        params = None if value is None else (value,)
        assert enc.execute(sql, params).fetchall() == plain.execute(sql, params).fetchall(), (
            sql,
            value,
        )


REAL_ARITHMETIC = [
    "SELECT id, r + '-10', r * '-10', r - '0.1' FROM fl ORDER BY id",
    "SELECT id, r + %s::real FROM fl ORDER BY id",
    "SELECT id, r * 3, r + 0.5, d + r FROM fl ORDER BY id",
]


@pytest.mark.parametrize("sql", REAL_ARITHMETIC)
def test_real_arithmetic_is_single_precision(float_pair: Pair, sql: str) -> None:
    """``r + '-10'`` is real + real in PostgreSQL: computed on the reals' own bits and
    rounded to single precision, shown as its shortest text (994.3, where the client
    gave 994.2999877929688); a real beside another number is double precision."""
    plain, enc = float_pair
    params = (1.5,) if "%s" in sql else None
    assert enc.execute(sql, params).fetchall() == plain.execute(sql, params).fetchall()
