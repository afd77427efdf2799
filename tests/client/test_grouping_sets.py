"""Aggregation forms judged against PostgreSQL on an ICU and a libc collation: GROUPING
SETS, ROLLUP, CUBE and grouping() in the client engine (compile/allowed.py; refused
before); string_agg/array_agg of DISTINCT values without ORDER BY, which PostgreSQL
sorts (compile/distinct_aggregates.py; refused before); min/max/sum/avg of booleans,
42883 in PostgreSQL (compile/aggregate_types.py; answered before); percentile_disc
and percentile_cont computed as PostgreSQL computes them (engine/ordered_sets.py) and
bit_and/bit_or/bit_xor of integers (refused before)."""

from __future__ import annotations

from .pairs import Pair, script_differences

DDL = [
    "CREATE TABLE g (k int PRIMARY KEY, a int, b text, c numeric(8,2), ok bool)",
    "INSERT INTO g VALUES (1, 1, 'x', 1.50, true), (2, 1, 'Y', 2.25, false),"
    " (3, 2, 'x', NULL, true), (4, 2, 'z', 4.00, NULL), (5, 3, 'b', 0.75, true),"
    " (6, 3, NULL, 1, false)",
    "CREATE TABLE p (k int PRIMARY KEY, a int, b text, c numeric(8,2), f float8, r real,"
    " s smallint, n bigint)",
    "INSERT INTO p VALUES (1, 1, 'x', 1.50, 0.1, 1.5, 3, 12), (2, 1, 'Y', 2.25, 0.7, 2, 7, 10),"
    " (3, 2, 'x', NULL, 1e10, NULL, 5, NULL), (4, 2, 'z', 4.00, NULL, 3.25, 1, 6),"
    " (5, 3, 'b', 0.75, 3.5, 7, NULL, 5), (6, 3, NULL, 1, -2.25, 0.1, 2, 3),"
    " (7, 3, 'a', 1, 0.3, 0.2, 6, 9)",
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


# percentiles computed as PostgreSQL computes them (engine/ordered_sets.py), bit_and/or/xor
PERCENTILES_AND_BITS = [
    "SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY c) FROM p",
    "SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY b) FROM p",
    "SELECT percentile_disc(0) WITHIN GROUP (ORDER BY b),"
    " percentile_disc(1) WITHIN GROUP (ORDER BY b) FROM p",
    "SELECT percentile_disc(0.3) WITHIN GROUP (ORDER BY a DESC) FROM p",
    "SELECT a, percentile_disc(0.5) WITHIN GROUP (ORDER BY f) FROM p GROUP BY a ORDER BY a",
    "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY f) FROM p",
    "SELECT percentile_cont(0.25) WITHIN GROUP (ORDER BY f),"
    " percentile_cont(0.9) WITHIN GROUP (ORDER BY f DESC) FROM p",
    "SELECT percentile_cont(0.33) WITHIN GROUP (ORDER BY a) FROM p",
    "SELECT a, percentile_cont(0.5) WITHIN GROUP (ORDER BY r) FROM p GROUP BY a ORDER BY a",
    "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY f) FROM p WHERE k > 100",
    "SELECT percentile_cont(1.5) WITHIN GROUP (ORDER BY f) FROM p",
    'SELECT percentile_disc(0.75) WITHIN GROUP (ORDER BY b COLLATE "C") FROM p',
    "SELECT b, percentile_disc(0.5) WITHIN GROUP (ORDER BY k) FROM p GROUP BY b ORDER BY b",
    "SELECT bit_and(a), bit_or(a), bit_xor(a), bit_and(n), bit_or(n), bit_xor(s) FROM p",
    "SELECT b, bit_or(s), bit_and(n) FROM p GROUP BY b ORDER BY b",
    "SELECT bit_or(a) FILTER (WHERE b = 'x'), bit_and(DISTINCT a) FROM p",
    "SELECT k, bit_or(s) OVER (ORDER BY k) FROM p ORDER BY k",
]


def test_grouping_sets_as_in_postgresql(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, GROUPING_SETS) == []


def test_percentiles_and_bit_aggregates(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, PERCENTILES_AND_BITS) == []


def test_distinct_and_boolean_aggregates(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, DISTINCT_AND_BOOLEAN) == []
