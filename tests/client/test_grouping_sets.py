"""Aggregation forms judged against PostgreSQL on an ICU and a libc collation: GROUPING
SETS, ROLLUP, CUBE and grouping() in the client engine (compile/allowed.py; refused
before); string_agg/array_agg of DISTINCT values without ORDER BY, which PostgreSQL
sorts (compile/distinct_aggregates.py; refused before); min/max/sum/avg of booleans,
42883 in PostgreSQL (compile/boolean_aggregates.py; answered before)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted, script_differences
from .test_collation import LOCALES

DDL = [
    "CREATE TABLE g (k int PRIMARY KEY, a int, b text, c numeric(8,2), ok bool)",
    "INSERT INTO g VALUES (1, 1, 'x', 1.50, true), (2, 1, 'Y', 2.25, false),"
    " (3, 2, 'x', NULL, true), (4, 2, 'z', 4.00, NULL), (5, 3, 'b', 0.75, true),"
    " (6, 3, NULL, 1, false)",
]

# (every ORDER BY orders all the outputs: rows tied on it come in the plan's order)
GROUPING_SETS = [
    "SELECT a, b, sum(c) FROM g GROUP BY ROLLUP (a, b) ORDER BY 1, 2, 3",
    "SELECT a, b, count(*) FROM g GROUP BY CUBE (a, b) ORDER BY 1, 2, 3",
    "SELECT a, b, count(*), grouping(a, b) FROM g GROUP BY GROUPING SETS ((a), (b), ())"
    " ORDER BY 1, 2, 3, 4",
    "SELECT a, b, count(*), grouping(a), grouping(b) FROM g GROUP BY a, CUBE (b)"
    " ORDER BY 1, 2, 3, 4, 5",
    "SELECT a, count(*) FROM g GROUP BY GROUPING SETS (a, ()) ORDER BY 1 NULLS FIRST",
    "SELECT CASE WHEN grouping(b) = 1 THEN 'all' ELSE b END AS b, sum(c) FROM g"
    " GROUP BY ROLLUP (b) ORDER BY 1, 2",
    "SELECT a, max(b) FROM g GROUP BY ROLLUP (a) HAVING count(*) > 1 ORDER BY 1",
    "SELECT a, b, sum(c) FROM g GROUP BY GROUPING SETS ((a, b), (a), ()) ORDER BY 1, 2, 3",
    "SELECT ok, count(*) FROM g GROUP BY ROLLUP (ok) ORDER BY 1, 2",
    "SELECT a, b, avg(c) FROM g GROUP BY ROLLUP ((a, b)) ORDER BY 1, 2",
    "SELECT a % 2 AS p, count(*) FROM g GROUP BY ROLLUP (a % 2) ORDER BY 1",
    "SELECT a, grouping(a, a) FROM g GROUP BY ROLLUP (a) ORDER BY 1",
]

DISTINCT_AND_BOOLEAN = [
    "SELECT a, string_agg(DISTINCT b, ',') FROM g GROUP BY a ORDER BY a",
    "SELECT string_agg(DISTINCT b, ','), array_agg(DISTINCT b), array_agg(DISTINCT a) FROM g",
    "SELECT a, array_agg(DISTINCT ok) FROM g GROUP BY a ORDER BY a",
    "SELECT string_agg(DISTINCT upper(b), '|') FROM g",
    "SELECT max(ok) FROM g",
    "SELECT min(DISTINCT ok) FROM g",
    "SELECT sum(ok) FROM g",
    "SELECT max(a > 1) FROM g",
    "SELECT a, avg(ok::int) FROM g GROUP BY a ORDER BY a",
]


@pytest.fixture(params=sorted(LOCALES))
def pair(
    request: pytest.FixtureRequest, new_database: Callable[..., str], master_key: MasterKey
) -> Iterator[Pair]:
    locale = LOCALES[request.param]
    with plain_and_encrypted(new_database, master_key, "gsets", {}, DDL, {}, locale) as p:
        yield p


def test_grouping_sets_as_in_postgresql(pair: Pair) -> None:
    assert script_differences(pair, GROUPING_SETS) == []


def test_distinct_and_boolean_aggregates(pair: Pair) -> None:
    assert script_differences(pair, DISTINCT_AND_BOOLEAN) == []
