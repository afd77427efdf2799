"""stddev, stddev_samp, stddev_pop, variance, var_samp and var_pop of integers and
numerics, finished by the client engine and judged against PostgreSQL: the numeric
results digit for digit (numeric division's scale, the square root rounded to it), NULL
for no value or a sample of one, per group and with FILTER.  They were refused.  Of
double precision, of DISTINCT values, inside an expression or over a window they stay
refused (PostgreSQL's float accumulation rounds otherwise)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest

from adaptive_client.catalog.keys import MasterKey
from adaptive_client.errors import UnsupportedQuery

from .pairs import Pair, outcome, plain_and_encrypted, script_differences

DDL = [
    "CREATE TABLE s (id int PRIMARY KEY, g int, i int, b bigint, d numeric(12,3), sm smallint, "
    "f float8)"
]
_rand = random.Random(7)
ROWS = {
    "s": [
        (1, 1, 5, 5000000000, Decimal("1.500"), 3, 1.5),
        (2, 1, 7, 7, Decimal("2.250"), 4, 2.0),
        (3, 2, 7, None, None, 5, 3.5),
        (4, 2, 1, -3, Decimal("10.000"), 6, None),
        (5, 3, None, None, Decimal("3.333"), None, 1.0),
        (6, 2, 1, 1, Decimal("10.000"), 6, 2.0),
    ]
    + [
        (
            i,
            4 + i % 5,
            _rand.randint(-(10**6), 10**6),
            _rand.randint(-(10**15), 10**15),
            Decimal(_rand.randint(-(10**9), 10**9)).scaleb(-3),
            _rand.randint(-300, 300),
            None,
        )
        for i in range(7, 300)
    ]
}
SCRIPT = [
    "SELECT stddev(i), stddev_samp(i), stddev_pop(i), variance(i), var_samp(i), var_pop(i) "
    "FROM s WHERE id < 7",
    "SELECT stddev(b), variance(b), stddev_pop(b), var_pop(b) FROM s WHERE id < 7",
    "SELECT stddev(d), variance(d), stddev_pop(d), var_pop(d) FROM s WHERE id < 7",
    "SELECT stddev(sm), var_pop(sm) FROM s WHERE id < 7",
    "SELECT g, stddev(i), variance(d), stddev_pop(b), var_samp(sm), count(*) FROM s "
    "GROUP BY g ORDER BY g",
    "SELECT g, stddev(i) FILTER (WHERE i > 1), var_pop(d) FILTER (WHERE d < 5) FROM s "
    "GROUP BY g ORDER BY g",
    "SELECT stddev(i), var_samp(d) FROM s WHERE id = 1",
    "SELECT stddev_pop(i), var_pop(d) FROM s WHERE id = 1",
    "SELECT stddev(i) FROM s WHERE id > 1000",
    "SELECT stddev(i * 2), variance(i + d), stddev(d - 1) FROM s",
    "SELECT sum(i), stddev(i), avg(i), variance(b) FROM s",
    "SELECT stddev(i) FROM s WHERE i = 1",
]


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "variance", {}, DDL, ROWS) as pair:
        yield pair


def _as_text(conn: Any, sql: str) -> tuple[Any, ...]:
    """:func:`outcome` with each value as its text: a numeric's scale is its own."""
    got = outcome(conn, sql, describe=lambda d: (d.name, d.type_code))
    if got[0] != "rows":
        return got
    return ("rows", [tuple(map(str, row)) for row in got[1]], got[2])


def test_variances_as_postgresql(pair: Pair) -> None:
    assert script_differences(pair, SCRIPT, judged=_as_text) == []
    _, enc = pair
    (value,) = enc.execute("SELECT stddev(d) FROM s WHERE id < 7").fetchone()
    assert isinstance(value, Decimal) and value.as_tuple().exponent == -16


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT stddev(f) FROM s",
        "SELECT stddev(DISTINCT i) FROM s",
        "SELECT g FROM s GROUP BY g HAVING stddev(i) > 1",
        "SELECT stddev(i) OVER (PARTITION BY g) FROM s",
        "SELECT round(variance(d), 3) FROM s",
    ],
)
def test_what_stays_refused(pair: Pair, sql: str) -> None:
    _, enc = pair
    with pytest.raises(UnsupportedQuery):
        enc.execute(sql)
