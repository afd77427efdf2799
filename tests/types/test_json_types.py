"""json and jsonb columns against PostgreSQL 15, on a C and an ICU database: the input
literals of PostgreSQL's json and jsonb regression tests (accepted or refused with the
same SQLSTATE) as literals and as parameters (str, Json, Jsonb), read back as psycopg
loads them; jsonb's equality, order and grouping; json's refusals of ``=``, ``GROUP BY``,
``DISTINCT`` and ``ORDER BY`` (42883); each column shown by ``adaptive-db layers``."""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from functools import partial
from typing import Any

import psycopg
import pytest
from psycopg.types.json import Json, Jsonb, set_json_loads
from type_pairs import Pair, check

import adaptive_client
from adaptive_client.admin import controls as admin
from adaptive_client.catalog.keys import MasterKey

# the input literals of json.sql / jsonb.sql (strings, numbers, arrays, objects,
# miscellaneous) and json_encoding.sql's Unicode escapes
REGRESSION = [
    '""', "''", '"abc"', '"abc', '"abc\ndef"', '"\\n\\"\\\\"', '"\\v"',
    "1", "0", "01", "0.1", "9223372036854775808", "1e100", "1.3e100", "1f2", "0.x1",
    "1.3ex100", "[]", "[" * 80 + "]" * 80, "[1,2]", "[1,2,]", "[1,2", "[1,[2]", "{}",
    '{"abc"}', '{"abc":1}', '{1:"abc"}', '{"abc",1}', '{"abc"=1}', '{"abc"::1}',
    '{"abc":1,"def":2,"ghi":[3,4],"hij":{"klm":5,"nop":[6]}}', '{"abc":1:2}',
    '{"abc":1,3}', "true", "false", "null", " true ", "true false", "true, false", "truf",
    "trues", "", "    ",
    '"\\u"', '"\\u00"', '"\\u000g"', '"\\u0000"', '"\\uaBcD"', '"\\ud83d\\ude04\\ud83d\\udc36"',
    '"\\ud83d\\ud83d"', '"\\ude04\\ud83d"', '"\\ud83dX"', '"\\ude04X"', '"the Copyright \\u00a9 sign"',
    '"dollar \\u0024 character"', '"dollar \\\\u0024 character"', '"null \\\\u0000 escape"',
    '{"a":"the Copyright \\u00a9 sign"}', '{"a":"\\ud83d"}',
]  # fmt: skip
# PostgreSQL's normal forms: key order and duplicates, spacing, numbers as written
SHAPES = [
    '{"b":1, "a" : 1.0, "aa":[1e2, 1.50,-0, -0.0, 1E-2], "a":2}', '  {"a" :  [ 1 , 2 ] }  ',
    '{"a": {}, "b": "x\\ny\\u00e9\\u0041\\"", "c": null, "d": true}', '{"z" : 1,"z":2}',
    '"\\u00e9\\t\\u001f\\u007f/"', "1e400", "-1.5e-3", "0.00001e5", '[1, [2]]', '[1, 3]',
    '{"b":5}', '{"a":1,"c":0}', '{"a":1,"b":2}', '["b"]', '["aa"]', '"a"', '"B"', '"b"',
    '[null]', '[[]]', '[{}]', "123456789012345678901234567890.5",
]  # fmt: skip


def test_jsonb_literals(pair: Pair) -> None:
    check(pair, "jsonb", REGRESSION + SHAPES, as_literals=True)


def test_json_literals(pair: Pair) -> None:
    check(pair, "json", REGRESSION + SHAPES, as_literals=True)


OBJECTS: list[Any] = [
    {"b": 1, "a": [1.5, "x"], "a ": None}, [1, 2, {"k": "v"}], "text", 7, None, True,
    {"é": "ü", "": ""}, [], {},
]  # fmt: skip


@pytest.mark.parametrize("sql_type", ["json", "jsonb"])
def test_parameters(pair: Pair, sql_type: str) -> None:
    """str, Json and Jsonb parameters (a Jsonb into json is cast: jsonb_out's text);
    a dict or a number without a wrapper refused as psycopg and PostgreSQL refuse it."""
    values: list[Any] = [*REGRESSION[:30], *SHAPES[:8]]
    values += [Json(o) for o in OBJECTS] + [Jsonb(o) for o in OBJECTS]
    values += [5, 1.5, True, [1, 2]]
    check(pair, sql_type, values, probes=['{"a":1}', "[]", "null", '"text"', Jsonb([])])


@pytest.mark.parametrize("sql_type", ["json", "jsonb"])
def test_a_dict_needs_a_wrapper(pair: Pair, sql_type: str) -> None:
    """psycopg adapts no dict: the application wraps it in Json or Jsonb."""
    pair.both(f"CREATE TABLE jsn_dict_{sql_type} (v {sql_type})")
    for conn in (pair.plain, pair.enc):
        with pytest.raises(psycopg.ProgrammingError, match="cannot adapt type 'dict'"):
            conn.execute(f"INSERT INTO jsn_dict_{sql_type} VALUES (%s)", ({"a": 1},))


def test_jsonb_equality_groups_numbers(pair: Pair) -> None:
    """``{"a":1.0} = {"a":1}``: one group, and each row reads back as written."""
    values = ['{"a":1.0}', '{"a":1}', '{"a":1.00}', "1e2", "100", "100.0", "[1, 1.0]"]
    check(pair, "jsonb", values, read=False, as_literals=True)
    for conn in (pair.plain, pair.enc):
        conn.execute("CREATE TABLE jsn_eq (id int, v jsonb)")
        for i, v in enumerate(values):
            conn.execute("INSERT INTO jsn_eq VALUES (%s, %s)", (i, v))
    queries = [
        "SELECT id, v FROM jsn_eq ORDER BY id",
        "SELECT count(*) FROM jsn_eq GROUP BY v ORDER BY 1",
        "SELECT id FROM jsn_eq WHERE v = '{\"a\": 1}' ORDER BY id",
        "SELECT count(DISTINCT v) FROM jsn_eq",
    ]
    for sql in queries:
        got = [c.execute(sql).fetchall() for c in (pair.plain, pair.enc)]
        assert got[0] == got[1], sql


def test_jsonb_order_collates_strings(pair: Pair) -> None:
    """Strings order by the database's collation ("a" < "B" under ICU, not under C),
    keys in stored order (by length) compared the same way."""
    values = ['"a"', '"B"', '"b"', '"aa"', '{"b":1}', '{"aa":1}', '{"B":1}', '["a"]', '["B"]']
    check(pair, "jsonb", values, as_literals=True)


def test_json_has_no_equality(pair: Pair) -> None:
    for conn in (pair.plain, pair.enc):
        conn.execute("CREATE TABLE jsn_none (id int, v json)")
        conn.execute("INSERT INTO jsn_none VALUES (1, '{\"a\": 1}')")
    for sql, message in [
        ("SELECT v FROM jsn_none GROUP BY v", "equality operator for type json"),
        ("SELECT DISTINCT v FROM jsn_none", "equality operator for type json"),
        ("SELECT count(DISTINCT v) FROM jsn_none", "equality operator for type json"),
        ("SELECT id FROM jsn_none ORDER BY v", "ordering operator for type json"),
        ("SELECT id FROM jsn_none WHERE v = '{}'", "operator does not exist"),
    ]:
        for conn in (pair.plain, pair.enc):
            with pytest.raises(psycopg.errors.UndefinedFunction, match=message):
                conn.execute(sql)


def test_description_type_codes(pair: Pair) -> None:
    pair.both("CREATE TABLE jsn_described (j json, b jsonb)")
    pair.both("INSERT INTO jsn_described VALUES ('[1, 2.0]', '[1, 2.0]')")
    got = [c.execute("SELECT j, b FROM jsn_described") for c in (pair.plain, pair.enc)]
    assert [d.type_code for d in got[0].description or ()] == [114, 3802]
    assert [d.type_code for d in got[1].description or ()] == [114, 3802]
    assert got[0].fetchall() == got[1].fetchall() == [([1, 2.0], [1, 2.0])]


def test_layers_shows_json_columns(new_database: Callable[..., str], master_key: MasterKey) -> None:
    dsn = new_database("jsn_layers")
    with adaptive_client.connect(dsn, master_key=master_key.hex(), autocommit=True) as conn:
        conn.execute("CREATE TABLE jsn_typed (id int PRIMARY KEY, j json, b jsonb)")
        conn.execute("INSERT INTO jsn_typed VALUES (1, '{\"a\": 1}', '{\"a\": 1.0}')")
        conn.execute("SELECT id FROM jsn_typed ORDER BY b").fetchall()
    with psycopg.connect(dsn) as raw:
        rows = admin.layers_report(raw, master_key)
    shown = {(r.column, r.type, r.onion): r.layer for r in rows if r.table == "jsn_typed"}
    assert shown["j", "json", "Exact"] == "RND"
    assert not {k for k in shown if k[0] == "j" and k[2] in ("Eq", "Ord")}
    assert shown["b", "jsonb", "Exact"] == "RND"
    assert shown["b", "jsonb", "Ord"] == "OPE"
    assert ("b", "jsonb", "Eq") in shown


def test_copy_to_prints_as_postgresql(pair: Pair) -> None:
    """COPY TO prints json as written and jsonb in its normal form."""
    pair.both("CREATE TABLE jsn_copied (id int, j json, b jsonb)")
    for i, text in enumerate(['{"b":1, "a" : 1.0,"a":[1e2]}', '"t\\tab"', "null", " [ ] "]):
        pair.both("INSERT INTO jsn_copied VALUES (%s, %s, %s)", (i, text, text))
    pair.both("INSERT INTO jsn_copied VALUES (9, NULL, NULL)")
    out = []
    for conn in (pair.plain, pair.enc):
        with conn.cursor().copy("COPY (SELECT * FROM jsn_copied ORDER BY id) TO STDOUT") as cp:
            out.append(b"".join(bytes(b) for b in cp))
    assert out[0] == out[1]
    assert b'{"a": [100], "b": 1}' in out[0]


def test_loads_registered_before_connecting(pair: Pair, master_key: MasterKey) -> None:
    """A loads function set globally (psycopg's set_json_loads) is the client's too."""
    pair.both("CREATE TABLE jsn_loads (id int, j json, b jsonb)")
    pair.both("INSERT INTO jsn_loads VALUES (1, '[1.10, 2]', '[1.10, 2]')")
    set_json_loads(partial(json.loads, parse_float=Decimal))
    try:
        dsns = [pair.plain.info.dsn, pair.enc.pg.info.dsn]
        with (
            psycopg.connect(dsns[0]) as plain,
            adaptive_client.connect(dsns[1], master_key=master_key.hex()) as enc,
        ):
            got = [c.execute("SELECT j, b FROM jsn_loads").fetchall() for c in (plain, enc)]
    finally:
        set_json_loads(json.loads)
    assert got[0] == got[1] == [([Decimal("1.10"), 2], [Decimal("1.10"), 2])]
    assert str(got[1][0][0][0]) == "1.10"


def test_jsonb_ties_of_the_prefix(pair: Pair) -> None:
    """Values the 8-byte prefix cannot tell apart (long common string starts, numbers
    equal to 15 digits, arrays and objects of one size) ordered by the client as jsonb."""
    values = [
        '"abcdefghij1"', '"abcdefghij0"', '"abcdefghij"', "12345678901234567890.1",
        "12345678901234567890.2", "1.0000000000000000000001", "1", "[1, 2]", "[1, 3]",
        '[1, "2"]', '{"a": 1, "b": 2}', '{"a": 1, "c": 0}', '{"a": [1], "b": 2}', "null",
        "[]", "[null]", "true", "false",
    ]  # fmt: skip
    check(pair, "jsonb", values, as_literals=True)


@pytest.mark.parametrize("depth", [1_000, 12_000, 16_000])
def test_nesting_depth(pair: Pair, depth: int) -> None:
    """Deep nesting is stored while PostgreSQL's stack holds it, refused (54001) past."""
    for sql_type in ("json", "jsonb"):
        text = "[" * depth + "]" * depth
        got = []
        for conn in (pair.plain, pair.enc):
            conn.execute(f"CREATE TABLE IF NOT EXISTS jsn_deep_{sql_type} (v {sql_type})")
            try:
                conn.execute(f"INSERT INTO jsn_deep_{sql_type} VALUES (%s)", (text,))
                got.append("ok")
            except psycopg.Error as exc:
                got.append(exc.sqlstate)
        assert got[0] == got[1], (sql_type, depth, got)


def test_json_kept_without_exact_onions(
    new_database: Callable[..., str], master_key: MasterKey
) -> None:
    """``exact = false`` leaves numeric without its Exact onion, but json's Exact onion is
    where the value is: kept, and the document reads back as written."""
    conn = adaptive_client.connect(
        new_database("json_noexact"),
        master_key=master_key.hex(),
        config={"defaults": {"exact": False}},
        autocommit=True,
    )
    try:
        conn.execute("CREATE TABLE j (id int PRIMARY KEY, doc json, n numeric)")
        conn.execute("""INSERT INTO j VALUES (1, '{"a": 1.0, "a": 2}', 1.50)""")
        assert conn.execute("SELECT doc, n FROM j").fetchall() == [({"a": 2}, Decimal("1.5"))]
        with conn.cursor().copy("COPY j (doc) TO STDOUT") as copy:
            assert b"".join(bytes(b) for b in copy) == b'{"a": 1.0, "a": 2}\n'
    finally:
        conn.close()
