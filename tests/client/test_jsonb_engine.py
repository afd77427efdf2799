"""The client engine's jsonb and array operators, functions and set-returning functions
against PostgreSQL, on a C and an ICU database: the same statement on a plain database
and through the client on an encrypted one gives the same rows (in order where ordered),
the same Python values, or the same SQLSTATE."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from psycopg.types.json import Jsonb

from adaptive_client import UnsupportedQuery
from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted

ICU = "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"

DDL = [
    "CREATE TABLE d (id int PRIMARY KEY, attrs jsonb, tags text[], nums int[])",
    "CREATE TABLE j (id int PRIMARY KEY, doc json)",
    "CREATE TABLE a (id int PRIMARY KEY, attrs jsonb)",
    "CREATE TABLE t (id int PRIMARY KEY, name text, price numeric(10,2), born date, "
    "at timestamp, ok boolean, r double precision, v varchar(5))",
]
ROWS = {
    "d": [
        (1, Jsonb({"color": "red", "n": 1, "a": [1, 2]}), ["a", "b"], [1, 2, 3]),
        (2, Jsonb({"color": "blue", "n": 2.5, "k": None}), ["b", "c"], [4]),
        (3, Jsonb([1, 2, {"x": 1}]), [], None),
        (4, None, None, []),
        (5, Jsonb({"color": "Red", "é": "ü"}), ["Z", "é"], [5, 5]),
    ],
    "j": [(1, '{"a": 1}')],
    "t": [
        (1, 'a"b', "1.50", "2020-01-02", "2020-01-02 03:04:05.5", True, 1.5, "xy"),
        (2, None, None, None, None, None, None, None),
        (3, "B", "2.5", None, None, False, -0.5, "é"),
        (4, "a", "0", None, None, None, None, None),
    ],
    # (equal under jsonb's =, printed differently: 1 and 1.0)
    "a": [(1, '{"c": "red", "n": 1}'), (2, '{"c": "red", "n": 1.0}'), (3, '{"c": "blue", "n": 2}')],
}

QUERIES: list[tuple[str, Any]] = [
    ("SELECT id FROM d WHERE 'b' = ANY(tags) ORDER BY id", None),
    ('SELECT id FROM d WHERE attrs @> \'{"color":"red"}\' ORDER BY id', None),
    ("SELECT id FROM d WHERE attrs ->> 'color' = 'red' ORDER BY id", None),
    ("SELECT id FROM d WHERE attrs ? 'k' ORDER BY id", None),
    ("SELECT id FROM d WHERE attrs ?| ARRAY['k', 'a'] ORDER BY id", None),
    ("SELECT id FROM d WHERE attrs ?& ARRAY['n', 'color'] ORDER BY id", None),
    ("SELECT id FROM d WHERE tags @> ARRAY['b'] ORDER BY id", None),
    ("SELECT id FROM d WHERE tags && ARRAY['a'] ORDER BY id", None),
    ("SELECT id FROM d WHERE '{b}' <@ tags ORDER BY id", None),
    ("SELECT id FROM d WHERE 'z' <> ALL(tags) ORDER BY id", None),
    ("SELECT id FROM d WHERE 5 = ANY(nums) ORDER BY id", None),
    ("SELECT id, jsonb_array_elements(attrs) FROM d WHERE id = 3 ORDER BY id", None),
    ("SELECT id, jsonb_build_object('i', id, 't', tags) FROM d ORDER BY id", None),
    ("SELECT id FROM d ORDER BY attrs ->> 'color', id", None),
    ("SELECT id, unnest(tags) FROM d ORDER BY 1, 2", None),
    ("SELECT id, unnest(tags), unnest(nums) FROM d ORDER BY 1", None),
    ("SELECT id, array_length(nums, 1) FROM d ORDER BY id", None),
    ("SELECT id, cardinality(tags) FROM d ORDER BY id", None),
    ("SELECT id, tags || ARRAY['z'] FROM d ORDER BY id", None),
    ("SELECT id, attrs || '{\"q\": 1}' FROM d ORDER BY id", None),
    ("SELECT id, attrs - 'color' FROM d ORDER BY id", None),
    ("SELECT id, attrs -> 'n', attrs -> 'a' ->> 1 FROM d ORDER BY id", None),
    ("SELECT id, attrs #> '{a,1}', attrs #>> '{a,0}' FROM d ORDER BY id", None),
    ("SELECT id, tags[1], nums[2] FROM d ORDER BY id", None),
    ("SELECT id, jsonb_typeof(attrs), to_jsonb(tags) FROM d ORDER BY id", None),
    ("SELECT id FROM d WHERE (attrs ->> 'n')::int > 1 ORDER BY id", None),
    ("SELECT id FROM d WHERE (attrs ->> 'n')::numeric = 1 ORDER BY id", None),
    ("SELECT id FROM d ORDER BY (attrs ->> 'n')::numeric, id", None),
    ("SELECT id FROM d WHERE (attrs ->> 'color')::numeric = 1", None),
    ("SELECT id, (attrs ->> 'n')::numeric FROM d ORDER BY id", None),
    ("SELECT d.id, e FROM d, unnest(d.tags) AS e WHERE e > 'b' ORDER BY 1, 2", None),
    ("SELECT id FROM d WHERE attrs -> 'n' = '1' ORDER BY id", None),
    ("SELECT attrs ->> 'color', count(*) FROM d GROUP BY 1 ORDER BY 1", None),
    ("SELECT d.id, e.value FROM d, jsonb_array_elements(d.attrs) AS e WHERE d.id = 3", None),
    ("SELECT d.id, e FROM d, unnest(d.tags) AS e ORDER BY 1, 2", None),
    (
        "SELECT id, kv.k, kv.v FROM d CROSS JOIN LATERAL jsonb_each(attrs) AS kv(k, v) "
        "WHERE id IN (1, 2) ORDER BY 1, 2",
        None,
    ),
    ("SELECT id, u.t, u.n FROM d, unnest(tags) WITH ORDINALITY AS u(t, n) ORDER BY 1, 3", None),
    ("SELECT count(*) FROM d, unnest(tags) AS t WHERE t = 'b'", None),
    ("SELECT id, jsonb_object_keys(attrs) FROM d WHERE id < 3 ORDER BY 1, 2", None),
    ("SELECT id, array_to_string(tags, ',') FROM d ORDER BY id", None),
    ("SELECT id FROM d WHERE %s = ANY(tags) ORDER BY id", ("c",)),
    ("SELECT id FROM d WHERE tags && %s ORDER BY id", (["a", "Z"],)),
    ("SELECT id FROM d WHERE attrs @> %s ORDER BY id", (Jsonb({"n": 1}),)),
    ("SELECT id FROM d WHERE attrs @> %s ORDER BY id", ('{"color": "blue"}',)),
    ("SELECT id FROM d WHERE attrs ->> %s = %s ORDER BY id", ("color", "Red")),
    ("SELECT id, e FROM d, jsonb_array_elements_text(d.attrs) AS e WHERE id = 3", None),
    ("SELECT * FROM d, jsonb_array_elements_text(d.attrs) AS e WHERE id = 3", None),
    ("SELECT id, jsonb_build_array(id, tags, attrs -> 'n') FROM d ORDER BY 1", None),
    ("SELECT id, coalesce(attrs ->> 'color', 'none') FROM d ORDER BY 1", None),
    ("SELECT id, x.key, x.value FROM d, jsonb_each_text(attrs) AS x WHERE id = 1 ORDER BY 2", None),
    ("SELECT count(*) FROM d, unnest(tags)", None),
    ("SELECT count(*) FROM d, jsonb_array_elements(attrs) AS e", None),
    ("SELECT DISTINCT attrs ->> 'color' FROM d ORDER BY 1", None),
    ("SELECT id FROM d WHERE attrs @> '{\"n\": 1.0}' ORDER BY 1", None),
    ("SELECT id, nums || 9, 0 || nums FROM d ORDER BY 1", None),
    ("SELECT id, tags[0], tags[5] FROM d ORDER BY 1", None),
    ("SELECT id, tags[1:2], tags[:1], tags[2:], nums[2:3], tags[1:id] FROM d ORDER BY 1", None),
    ("SELECT id, ARRAY[id, 2], ARRAY['x', attrs ->> 'color'] FROM d ORDER BY 1", None),
    ("SELECT id, to_jsonb(id * 1.50), to_jsonb(id + 0.5) FROM d ORDER BY 1", None),
    (
        "SELECT id, to_jsonb(name), to_jsonb(price), to_jsonb(born), to_jsonb(at), "
        "to_jsonb(ok), to_jsonb(r), to_jsonb(v) FROM t ORDER BY 1",
        None,
    ),
    (
        "SELECT id, jsonb_build_object('n', name, 'p', price, 'd', born, 't', at, 'b', ok, "
        "'r', r) FROM t ORDER BY 1",
        None,
    ),
    ("SELECT jsonb_agg(price ORDER BY id), jsonb_object_agg(id, name ORDER BY id) FROM t", None),
    ("SELECT id FROM t ORDER BY to_jsonb(name), id", None),
    ("SELECT id FROM t ORDER BY jsonb_build_object('c', name, 'i', id)", None),
    ("SELECT id FROM t WHERE to_jsonb(name) > '\"a\"' ORDER BY 1", None),
    ("SELECT id FROM t WHERE upper(name) = 'A' AND name -> 'c' IS NULL", None),
    ("SELECT id FROM d WHERE id IN (SELECT id FROM d WHERE attrs @> '{\"n\": 1}')", None),
    ("SELECT id FROM d WHERE id IN (SELECT id FROM d WHERE tags && '{c}') ORDER BY 1", None),
    (
        "SELECT id, n FROM (SELECT id, jsonb_array_elements(attrs) AS n FROM d) s ORDER BY 1, 2",
        None,
    ),
    (
        "WITH x AS (SELECT id, attrs -> 'n' AS n FROM d) "
        "SELECT id, n FROM x WHERE n IS NOT NULL ORDER BY 1",
        None,
    ),
    # aggregates
    ("SELECT jsonb_agg(attrs ORDER BY id) FROM d", None),
    ("SELECT jsonb_agg(attrs ORDER BY id) FILTER (WHERE id > 1) FROM d", None),
    ("SELECT jsonb_agg(id ORDER BY id DESC) FROM d WHERE id > 100", None),
    ("SELECT jsonb_object_agg(id, attrs ORDER BY id) FROM d", None),
    (
        "SELECT jsonb_object_agg(attrs ->> 'color', id ORDER BY id) FROM d WHERE attrs ? 'color'",
        None,
    ),
    ("SELECT attrs ->> 'color', jsonb_agg(tags ORDER BY id) FROM d GROUP BY 1 ORDER BY 1", None),
    ("SELECT jsonb_build_object('n', count(*)) FROM d", None),
    ("SELECT array_agg(attrs ->> 'color' ORDER BY id) FROM d", None),
    ("SELECT string_agg(attrs ->> 'color', ',' ORDER BY id) FROM d", None),
    ("SELECT id FROM d WHERE tags @> %(x)s OR tags = %(x)s ORDER BY 1", {"x": ["b"]}),
    ("SELECT id, attrs @> %(j)s, attrs = %(j)s FROM d ORDER BY 1", {"j": Jsonb({"n": 1})}),
    (
        "SELECT id FROM d WHERE %(t)s = ANY(tags) AND attrs ->> 'color' <> %(t)s ORDER BY 1",
        {"t": "b"},
    ),
    ("SELECT id FROM d WHERE attrs ->> 'color' = ANY(ARRAY['red', 'blue']) ORDER BY 1", None),
    ("SELECT id FROM d WHERE attrs ->> 'color' = ANY(%s) ORDER BY 1", (["red"],)),
    ("SELECT id FROM d WHERE id = ANY(%s) AND attrs ? 'color' ORDER BY 1", ([1, 2],)),
    # errors: the same SQLSTATE
    ("SELECT id, attrs #- '{a}' FROM d ORDER BY id", None),
    ("SELECT id FROM d WHERE attrs @> '{bad' ORDER BY id", None),
    ("SELECT id FROM j WHERE doc = doc", None),
    ("SELECT id FROM j WHERE doc @> '{}'", None),
    # a text computed per row read as jsonb, then taken apart (was refused: ->(json, ...))
    (
        "SELECT id, (attrs ->> 'a')::jsonb -> 0, CAST(attrs ->> 'a' AS jsonb) #> '{1}' "
        "FROM d ORDER BY id",
        None,
    ),
    (
        "SELECT id FROM d WHERE (attrs -> 'a') -> 1 = ((attrs ->> 'a')::jsonb -> 1) ORDER BY id",
        None,
    ),
    ("SELECT id, (attrs ->> 'color')::jsonb FROM d ORDER BY id", None),
    # a key or an index given as a parameter: its type chooses, as in PostgreSQL (an
    # integer index was refused)
    (
        "SELECT id, attrs -> 'a' -> %s, attrs -> %s FROM d WHERE upper(attrs ->> 'color') <> '' "
        "ORDER BY id",
        (1, "n"),
    ),
    (
        "SELECT id, attrs -> 'a' ->> %s FROM d WHERE upper(attrs ->> 'color') <> '' ORDER BY id",
        (-1,),
    ),
    ("SELECT id, ((attrs ->> %s))::jsonb -> %s FROM d ORDER BY id", ("a", 0)),
    (
        "SELECT id FROM d WHERE (attrs -> 'a') -> %s = ((attrs ->> 'a')::jsonb -> %s) ORDER BY id",
        (0, 0),
    ),
    ("SELECT id, attrs -> 'a' -> %s FROM d WHERE upper(attrs ->> 'color') <> ''", (3000000000,)),
    ("SELECT id, attrs -> 'a' -> %s FROM d WHERE upper(attrs ->> 'color') <> ''", (True,)),
    # a jsonb cast to jsonb, and a parameter cast to jsonb (as Django writes a JSONField's
    # key transforms over a Cast and a value), then taken apart
    ("SELECT id, CAST((attrs -> %s) AS jsonb) -> %s FROM d ORDER BY id", ("a", 0)),
    (
        "SELECT id FROM d WHERE (attrs #> %s) = (CAST((attrs -> %s) AS jsonb) #> %s) ORDER BY id",
        (["a", "1"], "a", ["1"]),
    ),
    (
        "SELECT id FROM d WHERE (attrs -> %s) = (CAST(%s AS jsonb) -> %s) ORDER BY id",
        ("a", '{"x": [1, 2]}', "x"),
    ),
    (
        "SELECT id FROM d WHERE attrs <@ (CAST(%s AS jsonb) -> %s) ORDER BY id",
        ('{"x": {"color": "red", "n": 1, "a": [1, 2], "z": 0}}', "x"),
    ),
    ("SELECT id, ('[' || (attrs ->> 'n') || ']')::jsonb FROM d ORDER BY id", None),
]


# (a libc collation other than C, the default of most installations: a jsonb value's
# strings were held by strcoll keys the engine could not turn into bytes, and every
# statement the engine finished over a jsonb column was refused)
LIBC = "LC_COLLATE 'en_US.UTF-8' LC_CTYPE 'en_US.UTF-8'"


@pytest.fixture(scope="module", params=["C", "ICU", "libc"])
def pair(
    request: pytest.FixtureRequest, new_database: Callable[..., str], master_key: MasterKey
) -> Iterator[Pair]:
    locale = {"ICU": ICU, "libc": LIBC}.get(request.param, "")
    with plain_and_encrypted(
        new_database, master_key, f"jsonb_engine_{request.param}", {}, DDL, ROWS, locale
    ) as p:
        yield p


def _outcome(conn: Any, sql: str, params: Any) -> tuple[str, Any]:
    try:
        cur = conn.execute(sql, params)
        rows = cur.fetchall() if cur.description else None
    except Exception as exc:  # the SQLSTATE is what is compared
        return ("error", getattr(exc, "sqlstate", type(exc).__name__))
    return ("ok", [tuple((type(v).__name__, v) for v in row) for row in rows or []])


@pytest.mark.parametrize(("sql", "params"), QUERIES)
def test_same_as_postgresql(pair: Pair, sql: str, params: Any) -> None:
    plain, enc = pair
    expected = _outcome(plain, sql, params)
    got = _outcome(enc, sql, params)
    if "ORDER BY" not in sql and expected[0] == "ok":
        expected = ("ok", sorted(expected[1], key=repr))
        got = ("ok", sorted(got[1], key=repr)) if got[0] == "ok" else got
    assert got == expected


WRITES = [
    "UPDATE d SET attrs = jsonb_set(attrs, '{color}', '\"green\"') WHERE id = 1",
    "UPDATE d SET tags = tags || ARRAY['x'] WHERE id = 2",
    "UPDATE d SET attrs = attrs - 'k' WHERE id = 2",
    "UPDATE d SET attrs = attrs || %s WHERE id = 5",
    "UPDATE d SET nums = ARRAY[7] WHERE 'c' = ANY(tags)",
    "UPDATE d SET tags = array_remove(tags, 'b') WHERE tags IS NOT NULL",
    "INSERT INTO d SELECT id + 10, attrs || '{\"copy\": true}', tags, nums FROM d WHERE id = 2",
    # (numbers kept as written: 2.50, not the 2.5 of a loaded float)
    'UPDATE d SET attrs = attrs || \'{"p": 2.50, "big": 12345678901234567890.1}\' '
    "WHERE id = 3 OR 'c' = ANY(tags)",
    "INSERT INTO d SELECT id + 20, attrs || '{\"q\": 1.50}', tags, nums FROM d WHERE id = 2",
]


def test_writes_same_as_postgresql(pair: Pair) -> None:
    plain, enc = pair
    for sql in WRITES:
        params = (Jsonb({"w": 1}),) if "%s" in sql else None
        assert _outcome(enc, sql, params) == _outcome(plain, sql, params)
    for check in (
        "SELECT id, attrs, tags, nums FROM d ORDER BY id",
        "SELECT id, attrs ->> 'p', attrs ->> 'big', attrs ->> 'q' FROM d ORDER BY id",
    ):
        assert _outcome(enc, check, None) == _outcome(plain, check, None)


def test_json_operators_refused_clearly(pair: Pair) -> None:
    """json (not jsonb) is not held by the client engine: its arrows are refused,
    naming it, where the statement needs the client."""
    _, enc = pair
    with pytest.raises(UnsupportedQuery, match="json"):
        enc.execute(
            "SELECT j.id FROM j JOIN d ON d.id = j.id WHERE d.attrs ? 'color' AND j.doc ->> 'a' = '1'"
        )


# statements over values equal under = that print differently: a function whose result
# is the same for each is answered; one whose result shows the difference is refused
EQUAL_VALUES = [
    "SELECT id, attrs ->> 'c' FROM a ORDER BY 1",
    "SELECT id, attrs - 'n' FROM a ORDER BY 1",
    "SELECT id, jsonb_typeof(attrs -> 'n') FROM a ORDER BY 1",
    "SELECT id FROM a WHERE attrs @> '{\"n\": 1}' ORDER BY 1",
]


@pytest.mark.parametrize("sql", EQUAL_VALUES)
def test_equal_values_printed_differently(pair: Pair, sql: str) -> None:
    plain, enc = pair
    assert _outcome(enc, sql, None) == _outcome(plain, sql, None)


def test_result_showing_which_equal_value_is_refused(pair: Pair) -> None:
    _, enc = pair
    with pytest.raises(UnsupportedQuery, match="print differently"):
        enc.execute("SELECT id, attrs ->> 'n' FROM a ORDER BY 1")
