"""Statements the client's engine would answer differently from PostgreSQL, refused by
name instead (compile/allowed.py), each judged by running it: a USING join on a column an
earlier RIGHT or FULL USING join merged (the engine joined on the first table's column,
splitting a row PostgreSQL joins), and an aggregate in a subquery whose argument reads
only an outer query's values (PostgreSQL aggregates it in the outer query: one row; the
engine gave one per row).  The forms PostgreSQL and the engine agree on still answer."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted

SCHEMA = [
    "CREATE TABLE t1 (name text, n integer)",
    "CREATE TABLE t2 (name text, n integer)",
    "CREATE TABLE t3 (name text, n integer)",
    "CREATE TABLE o (u integer)",
]
ROWS = {
    "t1": [("bb", 11)],
    "t2": [("bb", 12), ("cc", 22)],
    "t3": [("bb", 13), ("cc", 23)],
    "o": [(1,), (2,), (3,)],
}
REFUSED = [
    "SELECT * FROM t1 FULL JOIN t2 USING (name) FULL JOIN t3 USING (name)",
    "SELECT name FROM t1 RIGHT JOIN t2 USING (name) JOIN t3 USING (name)",
    "SELECT (SELECT max((SELECT i.u FROM o i WHERE i.u = o.u))) FROM o",
]
ANSWERED = [
    "SELECT * FROM t1 FULL JOIN t2 USING (name) ORDER BY name",
    "SELECT name, t1.n, t3.n FROM t1 LEFT JOIN t2 USING (name) JOIN t3 USING (name)",
    "SELECT (SELECT max(o.u)) FROM o",
    "SELECT (SELECT max(i.u) FROM o i WHERE i.u <= o.u) FROM o ORDER BY 1",
]


@pytest.fixture(scope="module")
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "engine_refusals", {}, SCHEMA, ROWS) as pair:
        yield pair


@pytest.mark.parametrize("sql", REFUSED)
def test_refused_where_the_engine_would_answer_differently(pair: Pair, sql: str) -> None:
    plain, enc = pair
    plain.execute(sql).fetchall()  # (PostgreSQL answers it)
    with pytest.raises(adaptive_client.NotSupportedError):
        enc.execute(sql)


@pytest.mark.parametrize("sql", ANSWERED)
def test_the_forms_both_agree_on_answer(pair: Pair, sql: str) -> None:
    plain, enc = pair
    assert sorted(enc.execute(sql).fetchall(), key=repr) == sorted(
        plain.execute(sql).fetchall(), key=repr
    )


ARRAYS = [
    "SELECT ARRAY[true, false]",
    "SELECT ARRAY['a', 'b'] AS x",
    "SELECT ARRAY[1, 2]::bigint[]",
    "SELECT u, ARRAY[u, u + 1] FROM o ORDER BY u",
    "SELECT ARRAY[1, NULL, 3]",
    "SELECT ARRAY[ARRAY[1], ARRAY[2]]",
]


@pytest.mark.parametrize("sql", ARRAYS)
def test_array_constructors_answer_or_are_refused(pair: Pair, sql: str) -> None:
    """An ARRAY[...] in a select list: PostgreSQL's list under its name (``array``), or
    refused -- it was handed out as the client's internal object, named ?column?."""
    plain, enc = pair
    try:
        cur = enc.execute(sql)
    except adaptive_client.NotSupportedError:
        return
    want = plain.execute(sql)
    assert cur.fetchall() == want.fetchall()
    assert [d.name for d in cur.description or []] == [d.name for d in want.description or []]


@pytest.mark.parametrize(
    "kind", ["name", "point", "xml", "int4range", "path", "pg_catalog.path", "tsvector"]
)
def test_types_the_client_has_no_encoding_for_are_refused(pair: Pair, kind: str) -> None:
    """PostgreSQL's own types the client cannot store: 0A000 (they were a ConfigError
    without SQLSTATE, 42704 as if PostgreSQL had no such type, or sqlglot's ParseError,
    outside the DB-API's exceptions)."""
    _, enc = pair
    with pytest.raises(adaptive_client.NotSupportedError):
        enc.execute(f"CREATE TABLE unstorable (a {kind})")
    with pytest.raises(psycopg.errors.UndefinedObject):
        enc.execute("CREATE TABLE unstorable (a nosuchtype)")


@pytest.mark.parametrize(
    "sql",
    [
        "SET standard_conforming_strings = off",
        "SET standard_conforming_strings TO 'off'",
        "SELECT set_config('standard_conforming_strings', 'off', false)",
    ],
)
def test_nonstandard_strings_are_refused(pair: Pair, sql: str) -> None:
    """With standard_conforming_strings off PostgreSQL reads a backslash in a string
    literal as an escape, which the client does not (``'a\\\\b'`` was stored as four
    characters, three in PostgreSQL): refused, the setting left on."""
    _, enc = pair
    with pytest.raises(adaptive_client.NotSupportedError):
        enc.execute(sql)
    assert enc.execute("SHOW standard_conforming_strings").fetchone() == ("on",)
    enc.execute("SET standard_conforming_strings = on")


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT -('-9223372036854775808'::int8)",
        "SELECT -('-32768'::int2)",
        "SELECT split_part('a,b', ',', 0)",
        "SELECT split_part(name, ',', 0) FROM t1",
    ],
)
def test_errors_of_constants_as_in_postgresql(pair: Pair, sql: str) -> None:
    """PostgreSQL's errors where the client answered: the negation of an integer type's
    lowest value overflows (it gave 9223372036854775808), split_part's position 0 is
    22023 (it gave '')."""
    plain, enc = pair
    with pytest.raises(psycopg.Error) as want:
        plain.execute(sql)
    with pytest.raises(psycopg.Error) as got:
        enc.execute(sql)
    assert got.value.sqlstate == want.value.sqlstate


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT char(20) 'characters' || ' and text' AS r",
        "SELECT text 'text' || char(20) ' and characters' AS r",
        "SELECT '2147483520'::float4::int4",
        "SELECT CAST('36854775807.0'::float4 AS int8)",
        "SELECT '1.5'::float4::int2, '2.5'::real::integer",
    ],
)
def test_typed_constants_as_in_postgresql(pair: Pair, sql: str) -> None:
    """A char(n) constant concatenated drops its padding; a real cast to an integer
    rounds the real's own bits (2147483520, where the client rounded 2147483500)."""
    plain, enc = pair
    assert enc.execute(sql).fetchall() == plain.execute(sql).fetchall()


def test_a_real_beyond_an_integer_type_overflows(pair: Pair) -> None:
    for conn in pair:
        with pytest.raises(psycopg.errors.NumericValueOutOfRange):
            conn.execute("SELECT '2147483647'::float4::int4")


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT json_extract_path('{\"f2\":[\"f3\",1]}', 'f2', 0::text)",
        "SELECT json_extract_path_text('{\"f2\":{\"f3\":1}}', 'f2')",
    ],
)
def test_json_functions_of_json_text_are_refused(pair: Pair, sql: str) -> None:
    """json's json_extract_path keeps the text as written and reads every path element;
    the engine's jsonb arrow read the first only and reformatted the text: refused."""
    plain, enc = pair
    plain.execute(sql).fetchall()
    with pytest.raises(adaptive_client.NotSupportedError):
        enc.execute(sql)


def test_a_set_operation_orders_by_its_own_columns(pair: Pair) -> None:
    """ORDER BY of a UNION / EXCEPT names the result's columns: another is PostgreSQL's
    42703 (42P01 qualified); the engine ordered by the left query's column."""
    plain, enc = pair
    for sql in [
        "SELECT u FROM o EXCEPT SELECT n FROM t1 ORDER BY n",
        "SELECT u FROM o UNION SELECT n FROM t1 ORDER BY o.u",
    ]:
        with pytest.raises(psycopg.Error) as want:
            plain.execute(sql)
        with pytest.raises(psycopg.Error) as got:
            enc.execute(sql)
        assert got.value.sqlstate == want.value.sqlstate
    sql = "SELECT u AS x FROM o UNION SELECT n FROM t1 ORDER BY x"
    assert enc.execute(sql).fetchall() == plain.execute(sql).fetchall()


def test_shift_operators_are_not_syntax_errors(pair: Pair) -> None:
    """``<<`` and ``>>`` (read as two tokens): operators, answered by the engine as
    PostgreSQL answers them (test_bitwise.py), where the client's syntax check said
    42601."""
    plain, enc = pair
    for sql in ["SELECT u << 2 FROM o ORDER BY 1", "SELECT u >> 1 FROM o ORDER BY 1"]:
        assert enc.execute(sql).fetchall() == plain.execute(sql).fetchall()


@pytest.mark.parametrize(
    "sql", ["SELECT t - '00:01' FROM tm", "SELECT t + t FROM tm", "SELECT d + t FROM tm"]
)
def test_time_arithmetic_is_refused_not_an_operator_error(pair: Pair, sql: str) -> None:
    """Arithmetic of a time column in the select list: refused by name (it was 42883,
    "operator does not exist", where PostgreSQL answers)."""
    _, enc = pair
    enc.execute("CREATE TABLE IF NOT EXISTS tm (t time, d date)")
    with pytest.raises(adaptive_client.NotSupportedError):
        enc.execute(sql)
