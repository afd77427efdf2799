"""double precision's sqrt(), cbrt(), exp(), ln(), log() and power() finished by the
client engine, judged against PostgreSQL: its values (NaN and the infinities through, -0
kept) and its errors -- 2201F for a negative square root, zero to a negative power or a
negative number to a non-integer one, 2201E for a logarithm of zero or of a negative
number, 22003 for an overflow or underflow.  They were refused."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, outcome, plain_and_encrypted, script_differences

DDL = ["CREATE TABLE m (id int PRIMARY KEY, x float8, n numeric(10,3), i int, r real)"]
ROWS = {
    "m": [
        (1, 2.25, 2.5, 3, 0.5),
        (2, 0.0, 0.001, 100, 1.0),
        (3, None, None, None, None),
        (4, float("nan"), 1, 1, float("inf")),
        (5, float("-inf"), -1, 10, -0.0),
    ]
}
SCRIPT = [
    "SELECT id, sqrt(x), cbrt(x), exp(x), ln(x + 1), log(i), sqrt(i), cbrt(n), exp(i), ln(i), "
    "log(r) FROM m WHERE id <> 5 ORDER BY id",
    "SELECT id, sqrt(x) FROM m WHERE id = 5",
    "SELECT id, ln(x) FROM m WHERE id = 2",
    "SELECT id, ln(x) FROM m WHERE id = 5",
    "SELECT id, log(x) FROM m WHERE id = 2",
    "SELECT exp(-745::float8), exp(-740::float8)",
    "SELECT exp(710::float8)",
    "SELECT exp(-746::float8)",
    "SELECT sqrt('-0'::float8), cbrt(-8::float8), sqrt(2), exp(1), ln(2), log(1000)",
    "SELECT id FROM m WHERE sqrt(x) > 1 OR exp(i) > 1e40 ORDER BY id",
    # power (pow): of integers too, which PostgreSQL resolves to double precision's
    "SELECT id, power(i, 2), pow(i, 3), power(x, 2), power(2, i), power(x, i), power(i, x) "
    "FROM m ORDER BY id",
    "SELECT id, power(r, i), power(x, r) FROM m ORDER BY id",
    "SELECT power(i - 3, -1) FROM m WHERE id = 1",
    "SELECT power(x - 3, x) FROM m WHERE id = 1",
    "SELECT power(10, i * 4) FROM m WHERE id = 2",
    "SELECT power(10, -i * 4) FROM m WHERE id = 2",
    "SELECT power(0, 0), power(-2, 3), power(4, -1)",
    "SELECT sum(power(i, 2)) FROM m",
    "SELECT id FROM m WHERE power(i, 2) > 50 ORDER BY id",
]


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "floatfn", {}, DDL, ROWS) as pair:
        yield pair


def test_float_functions_as_postgresql(pair: Pair) -> None:
    differences = script_differences(pair, SCRIPT)
    # (NaN is not equal to itself: a row holding one compares by its text)
    assert [d for d in differences if repr(d[1]) != repr(d[2])] == []


def test_random_in_a_statement_the_client_finishes(pair: Pair) -> None:
    """random() where the client engine finishes the statement (was refused): a double
    precision in [0, 1) drawn per row, so that ``ORDER BY random() LIMIT n`` samples n
    distinct rows; with an argument, PostgreSQL's 42883."""
    _, enc = pair
    script = [
        "SELECT count(*), count(DISTINCT id) FROM (SELECT id FROM m ORDER BY random() LIMIT 3) s",
        "SELECT bool_and(r >= 0 AND r < 1), count(DISTINCT r) FROM (SELECT random() AS r FROM m) s",
        "SELECT count(*) FROM m WHERE random() < 2 AND sqrt(i) >= 0",
        "SELECT random(1)",
    ]
    assert script_differences(pair, script) == []
    drawn = enc.execute("SELECT id, random() FROM m WHERE sqrt(i) >= 0 ORDER BY id").fetchall()
    assert len({r for _, r in drawn}) == len(drawn) > 1


@pytest.mark.parametrize(
    ("sql", "params"),
    [
        ("SELECT id, power(x, %s), power(%s, i) FROM m WHERE id < 3 ORDER BY id", (2, 2.5)),
        ("UPDATE m SET x = power(x, %s) WHERE id = 1 RETURNING x", (3,)),
        ("SELECT power(i, %s) FROM m WHERE id = 1", (-1.5,)),
        ("SELECT id, power(n, %s) FROM m WHERE id = 1", (2,)),
        ("SELECT power(i, %s) FROM m WHERE id = 1", (Decimal("2"),)),
        ("SELECT power(x, %s) FROM m WHERE id = 1", (Decimal("2"),)),
    ],
)
def test_power_of_parameters(pair: Pair, sql: str, params: tuple[Any, ...]) -> None:
    """A parameter beside an integer or a double precision is a double precision, as
    PostgreSQL infers it -- but a Decimal (sent as numeric) beside no double precision,
    or anything beside a numeric, is numeric's power: refused, not answered in floats."""
    plain, enc = pair
    want = outcome(plain, sql, params)
    if "power(n" in sql or (params == (Decimal("2"),) and "power(i" in sql):
        assert outcome(enc, sql, params) == ("error", "0A000")
        return
    assert outcome(enc, sql, params) == want
