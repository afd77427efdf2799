"""A LATERAL subquery the client evaluates (compile/allowed.py: DuckDB's lateral join
reads it as PostgreSQL does), and the casts written as a call of the type's name
(``float8(x)``, ``int4(s)``: syntax/sqltext.py), judged against PostgreSQL on an ICU and
a libc collation; translate() and ascii() of text.  All were refusals (0A000)."""

from __future__ import annotations

from .pairs import Pair, script_differences

DDL = [
    "CREATE TABLE s (k int PRIMARY KEY, f1 int, f2 int, f3 float8, name text, digits text)",
    "INSERT INTO s VALUES (1, 1, 2, 3, 'b', '7'), (2, 2, 3, 4, 'a', '12'),"
    " (3, 1, 1, 1, 'B', '-3'), (4, 8, 9, NULL, 'c', '0'), (5, 2, 5, 2.5, NULL, '5')",
]

LATERAL = [
    "SELECT * FROM s s1, LATERAL (SELECT max(f3) AS m FROM s s2 WHERE s2.f1 = s1.f1) l ORDER BY 1",
    "SELECT s1.k, l.name FROM s s1, LATERAL (SELECT name FROM s s2 WHERE s2.f1 = s1.f1"
    " ORDER BY name LIMIT 1) l ORDER BY 1",
    "SELECT s1.k, l.n FROM s s1 LEFT JOIN LATERAL (SELECT count(*) AS n FROM s s2"
    " WHERE s2.f2 > s1.f2) l ON true ORDER BY 1",
    "SELECT s1.k, l.k FROM s s1 LEFT JOIN LATERAL (SELECT s2.k FROM s s2"
    " WHERE s2.f2 > s1.f2 + 5) l ON true ORDER BY 1, 2",
    "SELECT s1.k, l.k FROM s s1 CROSS JOIN LATERAL (SELECT s2.k FROM s s2"
    " WHERE s2.name < s1.name ORDER BY s2.name DESC LIMIT 2) l ORDER BY 1, 2",
    "SELECT s1.k, l.x FROM s s1, LATERAL (SELECT s1.f1 + s1.f2 AS x) l ORDER BY 1",
    "SELECT s1.k, l.* FROM s s1 JOIN LATERAL (SELECT upper(s1.name) AS u,"
    " length(s1.name) AS n) l ON l.n > 0 ORDER BY 1",
    "SELECT name, top.k FROM (SELECT DISTINCT name FROM s) d, LATERAL (SELECT k FROM s"
    " WHERE s.name = d.name ORDER BY k DESC LIMIT 1) top ORDER BY 1",
    "SELECT k, l.m FROM s s1, LATERAL (SELECT sum(f2) AS m FROM s s2 WHERE s2.k <= s1.k) l"
    " ORDER BY 1",
]

FUNCTION_CASTS = [
    "SELECT float8(f1) FROM s ORDER BY k",
    "SELECT float8(count(*)) / 3 FROM s",
    "SELECT int8(f1) + 1, text(f1), int4(digits) FROM s ORDER BY k",
    "SELECT k FROM s WHERE float8(f1) > 1.5 ORDER BY k",
    "SELECT int2(f2) * 2, float8(1) FROM s WHERE k < 3 ORDER BY k",
    "SELECT int4(name) FROM s WHERE k = 1",
]


TEXT_FUNCTIONS = [
    "SELECT translate(name, 'abc', 'xyz'), translate(digits, '-1', 'm'),"
    " translate(name, 'B', '') FROM s ORDER BY k",
    "SELECT ascii(name), ascii(digits) FROM s ORDER BY k",
    "SELECT k FROM s WHERE ascii(name) > 97 ORDER BY k",
]


def test_lateral_subqueries_as_in_postgresql(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, LATERAL) == []


def test_translate_and_ascii(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, TEXT_FUNCTIONS) == []


def test_casts_called_by_type_name(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, FUNCTION_CASTS) == []
