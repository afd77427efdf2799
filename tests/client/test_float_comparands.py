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
