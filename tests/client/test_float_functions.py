"""double precision's sqrt(), cbrt(), exp(), ln() and log() finished by the client
engine, judged against PostgreSQL: its values (NaN and the infinities through, -0 kept)
and its errors -- 2201F for a negative square root, 2201E for a logarithm of zero or of
a negative number, 22003 for exp()'s overflow and underflow.  They were refused."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted, script_differences

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
]


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "floatfn", {}, DDL, ROWS) as pair:
        yield pair


def test_float_functions_as_postgresql(pair: Pair) -> None:
    differences = script_differences(pair, SCRIPT)
    # (NaN is not equal to itself: a row holding one compares by its text)
    assert [d for d in differences if repr(d[1]) != repr(d[2])] == []
