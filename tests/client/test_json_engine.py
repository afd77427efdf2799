"""A json column (not jsonb) in statements the client engine evaluates, judged against
PostgreSQL: output as written (duplicate keys, white space), cast to text, varchar and
jsonb, counted, tested for NULL, passed to jsonb functions -- refused before (0A000) --
and PostgreSQL's 42883 where a statement orders, groups, compares or makes distinct json,
which has no equality or order (a DISTINCT and a UNION were answered in an early draft of
this: the errors are checked here)."""

from __future__ import annotations

from .pairs import Pair, script_differences

DDL = [
    "CREATE TABLE d (id int PRIMARY KEY, name text, j json, jb jsonb)",
    'INSERT INTO d VALUES (1, \'a\', \'{"b": 1, "a": [1, 2.50], "b": 2}\', \'{"b": 1}\'),'
    " (2, 'b', '[3, \"x\"]', '[1]'), (3, 'a', NULL, NULL), (4, 'c', '\"str\"', '\"s\"'),"
    " (5, 'c', '  {\"x\" : null}  ', '{}')",
]

SCRIPT = [
    "SELECT id, j FROM d ORDER BY upper(name), id",
    "SELECT upper(name), j::text, CAST(j AS varchar) FROM d ORDER BY id",
    "SELECT id, j::jsonb FROM d ORDER BY upper(name), id",
    "SELECT id, j::jsonb -> 'b', (j::jsonb) ->> 'a' FROM d WHERE lower(name) = 'a' ORDER BY id",
    "SELECT count(j), count(*) FROM d WHERE upper(name) <> 'X'",
    "SELECT id FROM d WHERE j IS NULL AND upper(name) = 'A'",
    "SELECT jsonb_build_object('n', name, 'j', j) FROM d ORDER BY id",
    "SELECT jsonb_agg(j ORDER BY id) FROM d WHERE upper(name) = 'A'",
    "SELECT row_number() OVER (ORDER BY id), j FROM d WHERE upper(name) <> 'X' ORDER BY id",
    "SELECT id, upper(name), j FROM d WHERE id IN (SELECT id FROM d WHERE upper(name) = 'C')"
    " ORDER BY id",
    "SELECT upper(name), j FROM d WHERE id < 3 UNION ALL SELECT upper(name), j FROM d"
    " WHERE id = 4 ORDER BY 1",
    # PostgreSQL's errors: json has no equality or order (42883)
    "SELECT id, j FROM d ORDER BY j",
    "SELECT j, count(*) FROM d WHERE upper(name) = 'A' GROUP BY j",
    "SELECT DISTINCT j FROM d WHERE upper(name) = 'A'",
    "SELECT count(DISTINCT j) FROM d WHERE upper(name) = 'A'",
    "SELECT id FROM d WHERE j = '[3, \"x\"]'",
    "SELECT upper(name), j FROM d UNION SELECT upper(name), j FROM d",
    "SELECT upper(name), j FROM d INTERSECT SELECT upper(name), j FROM d",
    "SELECT min(j) FROM d WHERE upper(name) = 'A'",
]


def test_json_columns_in_the_client_engine_as_in_postgresql(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, SCRIPT) == []
