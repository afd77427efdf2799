"""Array columns -- integer[], text[], varchar(n)[], numeric(p,s)[], date[], timestamptz[],
uuid[], boolean[], several dimensions, every spelling of an array type -- created,
written (literals in PostgreSQL's array syntax, ARRAY[...] constructors, Python lists),
read back, ordered, grouped and compared with ``=`` as in a plain database, on a C and an
ICU database; the array column shown by ``adaptive-db layers``."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import psycopg
import pytest
from type_pairs import Pair, check, literal, outcome

import adaptive_client
from adaptive_client.admin import controls as admin
from adaptive_client.catalog.keys import MasterKey

# The array literals of PostgreSQL 15's arrays regression test that feed array input
# (its "general array parser tests", good and bad, and the literals its tables hold),
# and more of array_in's rules: quoting, escapes, NULL and "NULL", whitespace, explicit
# bounds, ragged and malformed literals.
PARSER = [
    "{{1,{2}},{2,3}}", "{{},{}}", "{{1,2},\\{2,3}}", '{{"1 2" x},{3}}', "{}}", "{ }}",
    "{}", "{{{1,2,3,4},{2,3,4,5}},{{3,4,5,6},{4,5,6,7}}}", '{ { "," } , { 3 } }',
    '  {   {  "  0 second  "   ,  0 second  }   }', "{1,2,3,4,5}", "{{{0,0},{1,2}}}",
    "{11,12,23}", "{{3,4},{4,5}}", '{"foobar"}', '{{"elt1", "elt2"}}', "{foo,bar}",
    "{bar,foo}", "{1,null,3}", "{1,2,3}", "{1,2}", "{2,3,4}", "{1,5,3}", "{1,2,10}",
    "{{grey,red},{blue,blue}}", "{{grey,red},{grey,blue}}", "{{red},{black},{purple}}",
    "{{pink,white,blue,red,grey,orange}}", "{3,3,2,4,5,6}", "{2}", "{4,2,6,7,8,1}",
]  # fmt: skip
SYNTAX = [
    "{a b, c  d ,\"e\"  }", '{NULL, null, "NULL", \\NULL, NULLx, "", " "}', '{"a\\"b"}',
    '{"a\\\\b", a\\,b, a\\}}', "[0:1]={1,2}", " [0:1] = {1,2} ", "[-2:-1][3:3]={{1},{2}}",
    "[2]={1,2}", "[1:0]={}", "[1:1]={}", "[0:1]{1,2}", "[a]={1}", "[1:]={1}", "[1:2]={1}",
    "1,2", "{1,}", "{,1}", "{1,2} x", "{{1,2},{3}}", "{{1},{{2}}}", '{"a"b}', '{a"b"}',
    "{ab\\\\}", "{{}}", "{", "{1", '{"1}', "{1,{2}}", "{{1},2}", "{1}}", "}", "",
    "[1:1][1:1][1:1][1:1][1:1][1:1][1:1]={1}", "{{{{{{{1}}}}}}}", "{{{{{{1}}}}}}",
    "{\t1\n,\r2\f}", "{1 2}", "{\"\"}", "[1:2147483647]={1}", "{é,ß}",
]  # fmt: skip


@pytest.mark.parametrize(
    "sql_type",
    ["text[]", "integer[]", "varchar(5)[]", "char(5)[]", "text[][]", "int2[]", "bigint[]"],
)
def test_array_input(pair: Pair, sql_type: str) -> None:
    """array_in's rules, good and bad input with PostgreSQL's SQLSTATE, the elements
    read by the element type's input (22P02 for ``{foo}`` into integer[], 22001 for a
    long element of varchar(5)[], char(5)[] padding)."""
    check(pair, sql_type, PARSER + SYNTAX, as_literals=True, ordered=True)


NUMERICS = [
    "{1.555,2.5,NaN}", "{-1.005}", "{1000}", "{123.456}", "{{1.5,2},{3,4.25}}", "{1e2,0}",
    "{1.50}", "{1.5}", "{abc}", "{Infinity}", [Decimal("1.555"), None], [1.125, 2.0], [1.125, 2],
]  # fmt: skip


@pytest.mark.parametrize("sql_type", ["numeric(5,2)[]", "numeric[]", "real[]", "float8[]"])
def test_numeric_elements(pair: Pair, sql_type: str) -> None:
    """numeric(5,2)[] rounds each element (and overflows, 22003); unconstrained numeric
    keeps each element's scale while ``{1.50} = {1.5}``."""
    ordered = sql_type != "numeric[]"  # (numeric without precision has no Ord onion)
    literals = [v for v in NUMERICS if isinstance(v, str)]
    check(pair, sql_type, literals, as_literals=True, ordered=ordered)
    # (a list compared with the column: psycopg sends numeric[] or float8[], which
    # PostgreSQL compares with no other array type, 42883; the probes are strings)
    check(pair, sql_type, NUMERICS, ordered=ordered, probes=literals)


DATES = [
    "{2024-01-02,1999-12-31}", "{2024-01-02}", "{NULL,2024-01-02}", '{"Jan 8 1999"}',
    "{{2020-02-29},{2021-02-29}}", "{epoch}", "{2024-01-02,NULL}", "{}",
    [dt.date(2024, 1, 2), None], [[dt.date(2001, 1, 1)], [dt.date(2000, 1, 1)]],
]  # fmt: skip


def test_date_elements(pair: Pair) -> None:
    check(pair, "date[]", DATES)


def test_timestamptz_elements(pair: Pair) -> None:
    for zone in ("UTC", "America/New_York"):
        pair.both(f"SET TimeZone = '{zone}'")
        values: list[Any] = [
            '{"1999-01-08 04:05:06+02","2024-11-03 01:30:00 America/New_York"}',
            '{"1999-01-08 02:05:06 UTC"}', "{epoch,NULL}", '{"1999-01-08 04:05:06.5"}',
            [dt.datetime(2024, 6, 1, 12, tzinfo=dt.UTC), None], [dt.datetime(2024, 6, 1, 12)],
        ]  # fmt: skip
        probes = [*values[:5], [dt.datetime(1999, 1, 8, 2, 5, 6, tzinfo=dt.UTC)]]
        check(pair, "timestamptz[]", values, probes=probes)


UUIDS = [
    "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,00000000-0000-0000-0000-000000000000}",
    "{A0EEBC999C0B4EF8BB6D6BB9BD380A11}", "{{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}}",
    "{xyz}", [uuid.UUID(int=7), None], [uuid.UUID(int=2**127)],
]  # fmt: skip
BOOLS = ["{t,f}", "{true,NULL}", "{yes,no,on,off,1,0}", "{maybe}", "{{t},{f}}", [True, None]]


def test_uuid_and_boolean_elements(pair: Pair) -> None:
    check(pair, "uuid[]", UUIDS)
    check(pair, "boolean[]", BOOLS)


LISTS: list[Any] = [
    [1, 2, 3], [1, 2], [], [[1, 2], [3, 4]], [None], [1, None], [None, 1], [[None, None], [1, 2]],
    [[[1]], [[2]]], ["1", "2"], [2.5, 3.5], [2**40], [[1, 2], [3]], [[]], [[1], 2], [1, [2]],
    [[1, 2]], [3], [1, 2, 3, 4], ["NULL"], [" 7 "], ["x"], [1, "2"], [[1], [2.5]],
]  # fmt: skip


@pytest.mark.parametrize("sql_type", ["integer[]", "int[3]", "integer ARRAY", "_int4", "int[][]"])
def test_list_parameters(pair: Pair, sql_type: str) -> None:
    """Python lists as psycopg sends them (nested for several dimensions; a ragged list
    is the malformed literal psycopg's dumper writes: 22P02), into each spelling of
    integer[]; the declared dimensions are ignored, as PostgreSQL ignores them."""
    # (a list compared with the column: psycopg sends int2[] for small numbers, which
    # PostgreSQL does not compare with integer[], 42883; the probes are strings)
    check(pair, sql_type, LISTS, probes=["{1,2}", "{}", "{{1,2},{3,4}}", "{NULL}"])


TEXTS: list[Any] = [
    ["b", "a"], ["a", "b"], ["a", None], [None, "a"], ["B"], ["a b", ""], ["é"], ["e"],
    ["aaaaaaaaaX", "1"], ["aaaaaaaaaY"], [["a", "b"], ["c", "d"]], ["a"], [], ["NULL"],
    ["a\\b", 'q"', "{}", ","], ["abcdefgh", "z"], ["abcdefgh"], ["Zebra"], ["zebra"],
]  # fmt: skip


@pytest.mark.parametrize("sql_type", ["text[]", "varchar(10)[]"])
def test_text_elements_order_by_the_collation(pair: Pair, sql_type: str) -> None:
    """Text elements compare under the column's collation (the ICU database orders
    ``B`` after ``a``), element by element, a NULL element after every string."""
    check(pair, sql_type, TEXTS)


def test_order_of_dimensions_and_bounds(pair: Pair) -> None:
    """array_cmp: equal elements up to the shorter's end, then the number of elements,
    of dimensions, the dimension lengths, the lower bounds; ``'{1,2}'`` and
    ``'[0:1]={1,2}'`` differ (and read back alike, as psycopg drops bounds)."""
    values = [
        "{1,2}", "[0:1]={1,2}", "[5:6]={1,2}", "{{1,2}}", "{{1},{2}}", "[0:0][1:2]={{1,2}}",
        "{1,2,3}", "{1}", "{}", "{NULL,1}", "{1,NULL}", "{{1,2},{3,4}}", "{1,2,3,4}",
        "{{1,2,3,4}}", "{0,5}", "{2}",
    ]  # fmt: skip
    check(pair, "integer[]", values, as_literals=True)
    check(pair, "integer[]", values, as_literals=True, probes=values[:6])


def test_array_constructors(pair: Pair) -> None:
    """ARRAY[...] in VALUES, resolved into the column as PostgreSQL resolves it."""
    pair.both(
        "CREATE TABLE built (id int PRIMARY KEY, a int[], t text[], n numeric(5,2)[], "
        "v varchar(2)[], d date[], b boolean[])"
    )
    statements = [
        "INSERT INTO built (id, a) VALUES (1, ARRAY[1,2])",
        "INSERT INTO built (id, a) VALUES (2, ARRAY[[1,2],[3,4]])",
        "INSERT INTO built (id, a) VALUES (3, ARRAY[1.5, 2])",
        "INSERT INTO built (id, a) VALUES (4, ARRAY[1, NULL])",
        "INSERT INTO built (id, t) VALUES (5, ARRAY['a', NULL, 'NULL'])",
        "INSERT INTO built (id, t) VALUES (6, ARRAY[1, 2])",
        "INSERT INTO built (id, n) VALUES (7, ARRAY[1.555, -2])",
        "INSERT INTO built (id, v) VALUES (8, ARRAY['abc'])",
        "INSERT INTO built (id, b) VALUES (9, ARRAY[true, NULL])",
        "INSERT INTO built (id, a) VALUES (10, ARRAY[[1,2],[3]])",
        "INSERT INTO built (id, a) VALUES (11, ARRAY[]::int[])",
        "INSERT INTO built (id, a) VALUES (12, ARRAY['1','2']::int[])",
        "INSERT INTO built (id, d) VALUES (13, ARRAY['2020-01-01']::date[])",
        "INSERT INTO built (id, a) VALUES (14, '{1,2}'::int[])",
        "INSERT INTO built (id, a) VALUES (15, %s)",
        "INSERT INTO built (id, a) VALUES (16, ARRAY[1.5, 2]::int[])",
        "INSERT INTO built (id, a) VALUES (17, ARRAY[])",
    ]
    for sql in statements:
        params = ([5, 6],) if "%s" in sql else None
        got = [outcome(c, sql, params) for c in (pair.plain, pair.enc)]
        assert got[0] == got[1], (sql, got)
    sql = "SELECT * FROM built ORDER BY id"
    assert outcome(pair.plain, sql) == outcome(pair.enc, sql)


def test_equality_grouping_and_distinct(pair: Pair) -> None:
    """``=`` with a literal and a list, GROUP BY, DISTINCT and a unique constraint over
    whole arrays, as PostgreSQL (``{1.50} = {1.5}`` in numeric[])."""
    for conn in (pair.plain, pair.enc):
        conn.execute("CREATE TABLE grouped (id int PRIMARY KEY, a int[] UNIQUE, n numeric[])")
    rows = [
        (1, "{1,2}", "{1.50}"), (2, "{2,1}", "{1.5}"), (3, "{{1,2}}", "{1.500,2}"),
        (4, "[0:1]={1,2}", "{1.5,2.0}"), (5, "{1,2}", "{1.5}"), (6, None, None),
    ]  # fmt: skip
    for row in rows:
        sql = "INSERT INTO grouped VALUES (%s, %s, %s)"
        got = [outcome(c, sql, row) for c in (pair.plain, pair.enc)]
        assert got[0] == got[1], (row, got)
    queries = [
        "SELECT id FROM grouped WHERE a = '{1,2}' ORDER BY id",
        "SELECT id FROM grouped WHERE a = '[0:1]={1,2}' ORDER BY id",
        "SELECT id FROM grouped WHERE n = '{1.5}' ORDER BY id",
        "SELECT id FROM grouped WHERE n = '{1.5,2}' ORDER BY id",
        "SELECT id FROM grouped WHERE a <> '{1,2}' ORDER BY id",
        "SELECT id FROM grouped WHERE a IS NULL",
        "SELECT a, count(*) FROM grouped GROUP BY a ORDER BY count(*), a",
        "SELECT DISTINCT a FROM grouped ORDER BY a",
        "SELECT count(DISTINCT n) FROM grouped",
        "SELECT id, n FROM grouped ORDER BY a DESC, id",
        "SELECT min(a), max(a) FROM grouped",
    ]
    for sql in queries:
        assert outcome(pair.plain, sql) == outcome(pair.enc, sql), sql
    sql = "SELECT n, count(*) FROM grouped GROUP BY n"  # (numeric[] has no Ord onion)
    got = [outcome(c, sql) for c in (pair.plain, pair.enc)]
    assert sorted(got[0][1]) == sorted(got[1][1])
    for probe in (["1", "2"], [["1", "2"]], ["2", "1"], [], [None, "1"]):
        sql = "SELECT id FROM grouped WHERE a = %s ORDER BY id"
        assert outcome(pair.plain, sql, (probe,)) == outcome(pair.enc, sql, (probe,)), probe


@pytest.mark.parametrize(
    "sql_type",
    [
        "integer[]", "text[]", "varchar(10)[]", "numeric(10,2)[]", "date[]", "timestamptz[]",
        "uuid[]", "boolean[]", "int8[]", "int2[]", "float8[]", "real[]", "char(3)[]",
        "timestamp[]", "time[]", "bytea[]", "numeric[]", "int[][]", "integer ARRAY[3]", "_int4",
    ],
)  # fmt: skip
def test_description_type_codes(pair: Pair, sql_type: str) -> None:
    table = "described_" + "".join(ch for ch in sql_type if ch.isalnum())
    pair.both(f"CREATE TABLE {table} (v {sql_type})")
    pair.both(f"INSERT INTO {table} VALUES ('{{}}')")
    codes = [c.execute(f"SELECT v FROM {table}").description for c in (pair.plain, pair.enc)]
    assert codes[0] is not None and codes[1] is not None
    assert codes[0][0].type_code == codes[1][0].type_code


def test_element_types_round_trip(pair: Pair) -> None:
    """bytea, time, timestamp and char elements read back as psycopg's loaders give them."""
    values = {
        "bytea[]": [[b"\x00ab", None], '{"\\\\x4142",abc}'],
        "time[]": [[dt.time(4, 5, 6)], '{04:05:06.5,"12:00 am"}'],
        "timestamp(3)[]": ['{"1999-01-08 04:05:06.1234"}', [dt.datetime(2020, 1, 1)]],
        "char(3)[]": ["{a,bb}", ["x", None]],
    }
    for sql_type, written in values.items():
        check(pair, sql_type, written)


def test_layers_shows_an_array_column(
    new_database: Callable[..., str], master_key: MasterKey
) -> None:
    dsn = new_database("arr_layers")
    with adaptive_client.connect(dsn, master_key=master_key.hex(), autocommit=True) as conn:
        conn.execute("CREATE TABLE tagged (id int PRIMARY KEY, tags text[], n int[][])")
        conn.execute("INSERT INTO tagged VALUES (1, '{a,b}', '{{1,2}}'), (2, %s, %s)", (["c"], [3]))
        conn.execute("SELECT id FROM tagged ORDER BY tags").fetchall()
        conn.execute("SELECT id FROM tagged WHERE n = %s", ([3],)).fetchall()
    with psycopg.connect(dsn) as raw:
        rows = admin.layers_report(raw, master_key)
    shown = {(r.column, r.type, r.onion): r for r in rows if r.table == "tagged"}
    assert {("tags", "text[]", "Eq"), ("tags", "text[]", "Ord")} <= set(shown)
    assert {("n", "integer[]", "Eq"), ("n", "integer[]", "Ord")} <= set(shown)
    assert shown["tags", "text[]", "Ord"].layer == "OPE"
    assert shown["n", "integer[]", "Eq"].layer == "DET"


def test_literals_helper_quotes() -> None:
    assert literal("{a'b}") == "'{a''b}'"


@pytest.mark.parametrize(
    ("sql_type", "text"),
    [
        ("text[]", '{a b, c  d ,"e"  , NULL, "NULL", "", "x\\\\y", "q\\"", "{", é}'),
        ("integer[]", "[0:1]={1,2}"), ("integer[]", "[-2:-1][3:3]={{1},{2}}"),
        ("integer[]", "{{1,2},{3,NULL}}"), ("integer[]", "{}"), ("bytea[]", "{\\\\x00ff}"),
        ("numeric[]", "{1.50,NaN,-0}"), ("boolean[]", "{t,f,NULL}"), ("date[]", "{epoch}"),
        ("float8[]", "{1.5,1e20,-Infinity}"), ("char(3)[]", "{a}"),
    ],
)  # fmt: skip
def test_array_text_as_array_out(pair: Pair, sql_type: str, text: str) -> None:
    """pg_text (COPY ... TO) prints an array value as PostgreSQL's array_out: quoting,
    escapes, NULL, bounds decoration."""
    from adaptive_client.values.encodings import encoding_for, pg_text

    pair.plain.execute("SET TimeZone = 'UTC'")
    row = pair.plain.execute(f"SELECT {literal(text)}::{sql_type}::text").fetchone()
    assert row is not None
    assert pg_text(encoding_for(sql_type).coerce(text)) == row[0]
