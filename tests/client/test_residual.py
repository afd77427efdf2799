"""Split execution: SELECTs the server cannot evaluate over ciphertexts, finished on the
client (compile/residual.py), run against plain PostgreSQL with the same data.  Every
query is answered equal to plain (rows, order where ordered, column names and types) or
refused with UnsupportedQuery, and a refusal peels nothing."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.compile import output_names, split
from adaptive_client.compile.statements import compile_statement
from adaptive_client.engine import runtime as engine
from adaptive_client.errors import ConfigError, RowCapExceeded, UnsupportedQuery
from adaptive_client.syntax import sqltext

from .test_differential import _rows

DDL = [
    "CREATE TABLE author (id integer PRIMARY KEY, name varchar(40), joined date, karma bigint)",
    "CREATE TABLE post (id integer PRIMARY KEY, author_id integer, title text, "
    "created timestamp, score integer, price numeric(10,2), rating double precision, "
    "draft boolean)",
]
TITLES = ["Hello World", "hello", None, "Ünïcode straße", "a_b%c", "Zebra", "ÉCOLE élan", "x"]


def author_rows() -> list[tuple[Any, ...]]:
    names = ["Ann", "bob", "Élise", None, "Zoë", "ann", "Bob"]
    return [
        (i, names[i - 1], None if i % 4 == 0 else dt.date(2019 + i % 3, 1 + i, 2 * i), i * 10**10)
        for i in range(1, len(names) + 1)
    ]


def post_rows() -> list[tuple[Any, ...]]:
    rows = []
    for i in range(1, 121):
        rows.append(
            (
                i,
                (i % 8) + 1 if i % 9 else None,  # 8 has no author: joins drop it
                TITLES[i % len(TITLES)],
                dt.datetime(2023 + i % 2, 1 + i % 12, 1 + i % 28, i % 24, (7 * i) % 60, 0, 1000 * i)
                if i % 10
                else None,
                (i * 37) % 23 - 11 if i % 6 else None,
                Decimal((i * 1237) % 100000 - 20000) / 100 if i % 11 else None,
                [0.5, -1.25, 3.0, None][i % 4],
                [True, False, None][i % 3],
            )
        )
    return rows


class Pair:
    def __init__(self, plain: psycopg.Connection[Any], enc: adaptive_client.Connection, dsn: str):
        self.plain, self.enc, self.enc_dsn = plain, enc, dsn


@pytest.fixture(scope="module")
def pair(new_database: Any, master_key: Any) -> Iterator[Pair]:
    plain = psycopg.connect(new_database("resplain"), autocommit=True)
    enc_dsn = new_database("resenc")
    enc = adaptive_client.connect(enc_dsn, master_key=master_key, autocommit=True)
    for stmt in DDL:
        plain.execute(stmt)
        enc.execute(stmt)
    for c in (plain, enc):
        c.cursor().executemany("INSERT INTO author VALUES (%s, %s, %s, %s)", author_rows())
        c.cursor().executemany(
            "INSERT INTO post VALUES (%s, %s, %s, %s, %s, %s, %s, %s)", post_rows()
        )
    try:
        yield Pair(plain, enc, enc_dsn)
    finally:
        plain.close()
        enc.close()


# (sql, params): ordered when the query orders its rows
ANSWERED: list[tuple[str, tuple[Any, ...]]] = [
    # functions
    ("SELECT id, lower(title), upper(title) FROM post ORDER BY id", ()),
    (
        "SELECT post.id, length(title), char_length(name) FROM post, author WHERE author.id = post.author_id ORDER BY post.id",
        (),
    ),
    ("SELECT coalesce(name, 'none'), coalesce(karma, 0) FROM author ORDER BY id", ()),
    (
        "SELECT id, CASE WHEN score > 0 THEN 'pos' WHEN score < 0 THEN 'neg' ELSE 'zero' END AS sign FROM post ORDER BY id",
        (),
    ),
    (
        "SELECT CASE score WHEN 1 THEN 'one' ELSE 'other' END AS c, count(*) FROM post GROUP BY c ORDER BY c",
        (),
    ),
    (
        "SELECT id, date_trunc('month', created), date_trunc('hour', created) FROM post ORDER BY id",
        (),
    ),
    (
        "SELECT extract(year FROM created), extract(dow FROM created), date_part('month', created) FROM post ORDER BY id",
        (),
    ),
    ("SELECT extract(doy FROM joined), extract(quarter FROM joined) FROM author ORDER BY id", ()),
    (
        "SELECT substr(title, 2, 3), substr(title, -1, 3), substring(title FROM 3) FROM post ORDER BY id",
        (),
    ),
    ("SELECT position('l' IN title), title || '!' FROM post ORDER BY id", ()),
    (
        "SELECT nullif(score, 0), greatest(score, author_id), least(score, 1), abs(score) FROM post ORDER BY id",
        (),
    ),
    (
        "SELECT round(price, 1), round(price), price * 2, price * price, -price + 1 FROM post ORDER BY id",
        (),
    ),
    (
        "SELECT id::text, '2020-01-01'::date, price::numeric(12,3), score::bigint FROM post ORDER BY id",
        (),
    ),
    # GROUP BY expressions, output aliases, HAVING
    ("SELECT date_trunc('month', created) AS m, count(*) FROM post GROUP BY m ORDER BY m", ()),
    (
        "SELECT lower(title) AS t, count(*), sum(score), min(price), max(created) FROM post GROUP BY lower(title) ORDER BY t",
        (),
    ),
    ("SELECT extract(year FROM created) AS y, sum(price) FROM post GROUP BY 1 ORDER BY 1 DESC", ()),
    (
        "SELECT author_id, sum(price) FROM post GROUP BY author_id HAVING sum(price) > 10 ORDER BY 2 DESC",
        (),
    ),
    (
        "SELECT author_id, avg(score), avg(price), sum(score) FROM post GROUP BY author_id HAVING count(*) > 3 ORDER BY author_id",
        (),
    ),
    (
        "SELECT sum(karma), avg(karma), count(DISTINCT name) FROM author WHERE lower(name) <> 'x'",
        (),
    ),
    # LIKE / ILIKE, text ranges
    ("SELECT id FROM post WHERE title LIKE 'h%' ORDER BY id", ()),
    ("SELECT id FROM post WHERE title ILIKE 'h%' OR title ILIKE '%É%' ORDER BY id", ()),
    ("SELECT id FROM post WHERE title LIKE 'a\\_b%' ORDER BY id", ()),
    ("SELECT id FROM post WHERE title NOT LIKE '%%o%%' AND id > %s ORDER BY id", (5,)),
    ("SELECT id FROM post WHERE title BETWEEN 'a' AND 'i' ORDER BY id", ()),
    ("SELECT name FROM author WHERE name > %s ORDER BY name DESC", ("B",)),
    ("SELECT id, name FROM author ORDER BY name, id", ()),
    # arithmetic in WHERE, integer division, modulo
    ("SELECT id FROM post WHERE score + author_id > 3 ORDER BY id", ()),
    (
        "SELECT id, score / 3, score % 3, -7 / 2, 7 % -3 FROM post WHERE score / 3 <> 0 ORDER BY id",
        (),
    ),
    ("SELECT id FROM post WHERE price * 2 > %s AND id < %s ORDER BY id", (Decimal("100.5"), 90)),
    # subqueries
    (
        "SELECT id FROM post WHERE author_id IN (SELECT id FROM author WHERE joined > '2020-01-01') ORDER BY id",
        (),
    ),
    (
        "SELECT id FROM post WHERE author_id NOT IN (SELECT id FROM author WHERE lower(name) = 'ann') ORDER BY id",
        (),
    ),
    (
        "SELECT id FROM author a WHERE EXISTS (SELECT 1 FROM post p WHERE p.author_id = a.id AND p.score > 8) ORDER BY id",
        (),
    ),
    (
        "SELECT id FROM author a WHERE NOT EXISTS (SELECT 1 FROM post p WHERE p.author_id = a.id AND p.score > 8) ORDER BY id",
        (),
    ),
    (
        "SELECT a.name, (SELECT count(*) FROM post p WHERE p.author_id = a.id) AS posts FROM author a ORDER BY a.id",
        (),
    ),
    ("SELECT id FROM post WHERE score = (SELECT max(score) FROM post) ORDER BY id", ()),
    (
        "SELECT t.a, count(*) FROM (SELECT author_id AS a FROM post WHERE draft) t GROUP BY t.a ORDER BY t.a",
        (),
    ),
    # CTEs
    (
        "WITH c AS (SELECT author_id, count(*) AS n FROM post GROUP BY author_id) SELECT * FROM c ORDER BY n DESC, author_id",
        (),
    ),
    (
        "WITH big AS (SELECT id, price FROM post WHERE price > 100) SELECT a.name, b.price FROM big b JOIN post p ON p.id = b.id JOIN author a ON a.id = p.author_id ORDER BY b.price, a.name",
        (),
    ),
    # set operations
    ("SELECT name FROM author UNION SELECT title FROM post ORDER BY 1", ()),
    ("SELECT author_id FROM post UNION ALL SELECT id FROM author ORDER BY 1", ()),
    ("SELECT author_id FROM post INTERSECT SELECT id FROM author ORDER BY 1", ()),
    ("SELECT id FROM author EXCEPT SELECT author_id FROM post WHERE score > 9 ORDER BY 1", ()),
    ("SELECT lower(name) FROM author INTERSECT ALL SELECT lower(title) FROM post", ()),
    # window functions
    (
        "SELECT id, row_number() OVER (ORDER BY id DESC), rank() OVER (PARTITION BY author_id ORDER BY score, id) FROM post ORDER BY id",
        (),
    ),
    (
        "SELECT id, dense_rank() OVER (ORDER BY score DESC), sum(score) OVER (PARTITION BY author_id), count(*) OVER (PARTITION BY draft) FROM post ORDER BY id",
        (),
    ),
    ("SELECT id, sum(price) OVER (ORDER BY id) FROM post ORDER BY id", ()),
    # joins of columns with no join group (joined on the client)
    ("SELECT p.title, a.name FROM post p JOIN author a ON p.score = a.id ORDER BY p.id", ()),
    (
        "SELECT a.name, count(p.id) FROM author a LEFT JOIN post p ON p.author_id = a.id AND p.score > 0 GROUP BY a.name ORDER BY a.name",
        (),
    ),
    ("SELECT * FROM author a JOIN post p ON lower(a.name) = lower(p.title) ORDER BY p.id", ()),
    # DISTINCT ON, NULL order, LIMIT
    ("SELECT DISTINCT ON (author_id) author_id, id FROM post ORDER BY author_id, id DESC", ()),
    ("SELECT id, score FROM post ORDER BY score DESC, id LIMIT 12", ()),
    ("SELECT id, score FROM post ORDER BY score NULLS FIRST, id LIMIT 5 OFFSET %s", (3,)),
    ("SELECT lower(title) FROM post ORDER BY 1 DESC", ()),
    # found by the differential fuzzer: an explicit NULLS LAST on a descending key
    ("SELECT id FROM post WHERE title BETWEEN 'a' AND 'zz' ORDER BY score DESC NULLS LAST, id", ()),
    ("SELECT id, row_number() OVER (ORDER BY score DESC NULLS LAST, id) FROM post ORDER BY id", ()),
    ("SELECT count(*) FROM post WHERE lower(title) = 'hello' AND id > %s", (10,)),
    ("SELECT id, rating * 2 FROM post WHERE rating / 2 > 0.2 OR rating * 2 < -1 ORDER BY id", ()),
    ("SELECT (SELECT name FROM author WHERE id = 1), 1 + 1, true, NULL, 'x' FROM post LIMIT 1", ()),
    ("SELECT count(*) FROM (SELECT DISTINCT lower(title) FROM post) s", ()),
    # numeric division: the output's scale per value, and inside the statement exact
    (
        "SELECT id, price / 3, 100.00 * price / (score + 100) FROM post WHERE lower(title) = 'hello' ORDER BY id",
        (),
    ),
    ("SELECT sum(price) / count(*), sum(score) / 7.0 FROM post WHERE lower(title) <> 'x'", ()),
    (
        "SELECT id FROM post WHERE price > (SELECT avg(price) FROM post) AND lower(title) <> 'x' ORDER BY id",
        (),
    ),
    (
        "SELECT id FROM post p WHERE score * 1.5 < (SELECT avg(score) FROM post q WHERE q.author_id = p.author_id) ORDER BY id",
        (),
    ),
    # date +- interval constants, folded (a timestamp; against a date column, the date)
    ("SELECT id FROM author WHERE joined < date '2021-03-31' + interval '1' month ORDER BY id", ()),
    (
        "SELECT id FROM author WHERE joined BETWEEN date '2020-01-01' - interval '1 year' AND date '2021-02-28' + interval '2' day ORDER BY id",
        (),
    ),
    (
        "SELECT date '2020-01-31' + interval '1' month, 0.06 - 0.01, 1 + 10 FROM author WHERE lower(name) = 'ann'",
        (),
    ),
    (
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r",
        (),
    ),
]

# unordered statements with LIMIT: any rows PostgreSQL could return are fine
REFUSED = [
    "SELECT string_agg(title, ',') FROM post",  # order of aggregation
    "SELECT quote_ident(name) FROM author",  # quote_ident()
    "SELECT to_char(score, '999') FROM post",
]


def _names(desc: Any) -> list[tuple[str, int]]:
    # varchar's OID is reported where the output is a varchar column itself; PostgreSQL's
    # type resolution of expressions over varchar (coalesce, CASE) is not reproduced
    return [(d[0], 25 if d[1] == 1043 else d[1]) for d in desc]


def test_enough_queries() -> None:
    assert len(ANSWERED) >= 40


@pytest.mark.parametrize("sql,params", ANSWERED, ids=[q[:60] for q, _ in ANSWERED])
def test_answered_equal_to_plain(pair: Pair, sql: str, params: tuple[Any, ...]) -> None:
    ordered = "ORDER BY" in sql.upper().rsplit(")", 1)[-1]
    cur = pair.plain.execute(sql, params or None)
    expected, expected_desc = cur.fetchall(), cur.description
    got_cur = pair.enc.execute(sql, params or None)
    got = got_cur.fetchall()
    assert _rows(got, ordered) == _rows(expected, ordered)
    assert _names(got_cur.description) == _names(expected_desc)


@pytest.mark.parametrize("sql", REFUSED)
def test_refused_typed(pair: Pair, sql: str) -> None:
    pair.plain.execute(sql).fetchall()  # PostgreSQL answers it
    with pytest.raises(UnsupportedQuery):
        pair.enc.execute(sql).fetchall()


def test_errors_as_postgresql_raises(pair: Pair) -> None:
    for sql, cls in [
        ("SELECT id FROM post WHERE score / 0 > 1", psycopg.errors.DivisionByZero),
        ("SELECT id FROM post WHERE rating / 0 > 1", psycopg.errors.DivisionByZero),
        ("SELECT id FROM post WHERE price / (score - score) > 1", psycopg.errors.DivisionByZero),
        (
            "SELECT 2147483647 + 1 FROM post WHERE lower(title) = 'x'",
            psycopg.errors.NumericValueOutOfRange,
        ),
        ("SELECT (SELECT id FROM author) FROM post", psycopg.errors.CardinalityViolation),
    ]:
        with pytest.raises(cls):
            pair.plain.execute(sql).fetchall()
        with pytest.raises(cls):
            pair.enc.execute(sql).fetchall()


def _layers(dsn: str) -> list[Any]:
    with psycopg.connect(dsn) as c:
        layers = c.execute("SELECT * FROM adaptive.layers ORDER BY 1, 2").fetchall()
        peels = c.execute("SELECT count(*) FROM adaptive.peel_log").fetchone()
    return [layers, peels]


def test_refusal_changes_nothing(pair: Pair) -> None:
    """A refused statement peels nothing, even where a part of it could be pushed down
    (here ``score > 5`` would peel score's Ord onion)."""
    before = _layers(pair.enc_dsn)
    with pytest.raises(UnsupportedQuery):
        pair.enc.execute(
            "SELECT string_agg(title, ',') FROM post WHERE karma_x(score) > 5 AND score > 5"
        )
    with pytest.raises(UnsupportedQuery):
        pair.enc.execute("SELECT string_agg(title, ',') FROM post WHERE score > 5").fetchall()
    assert _layers(pair.enc_dsn) == before
    assert pair.enc.execute("SELECT count(*) FROM author").fetchall() == [(7,)]


def test_where_pushed_down_to_the_server(pair: Pair) -> None:
    """The conjuncts that compile over ciphertexts filter the fetch on the server; the
    rest is evaluated on the client."""
    stmt = pair.enc.parse("SELECT count(*) FROM post WHERE lower(title) = 'hello' AND id > 10")[0]
    plan = compile_statement(pair.enc.catalog, stmt)
    assert plan.residual is not None
    (fetch,) = plan.residual.fetches
    assert "WHERE" in fetch.sql and "lower" not in fetch.sql.lower()
    # the nullable side of an outer join is not filtered before the join
    stmt = pair.enc.parse(
        "SELECT a.id FROM author a LEFT JOIN post p ON p.author_id = a.id "
        "WHERE p.score IS NULL AND lower(a.name) = 'ann'"
    )[0]
    plan = compile_statement(pair.enc.catalog, stmt)
    assert plan.residual is not None
    by_table = {f.tables[0].name: f.sql for f in plan.residual.fetches}
    assert "WHERE" not in by_table["post"]


def test_residual_in_a_transaction_sees_its_writes(pair: Pair) -> None:
    with pair.enc.transaction():
        pair.enc.execute("INSERT INTO author VALUES (99, 'Tmp', NULL, NULL)")
        got = pair.enc.execute("SELECT lower(name) FROM author WHERE id = 99").fetchall()
        assert got == [("tmp",)]
        pair.enc.execute("DELETE FROM author WHERE id = 99")


def test_named_parameters_keep_their_case(pair: Pair) -> None:
    # keys as SQLAlchemy escapes them (``percent%signs`` -> ``percentPsigns_1``): the
    # split plan's fetches bind them by the application's key, not a lowered one
    sql = (
        "SELECT id, lower(name) FROM author WHERE name IN (%(percentPsigns_1)s, %(Par_2)s) "
        "OR id = %(ID)s ORDER BY id"
    )
    params = {"percentPsigns_1": "bob", "Par_2": "Zoë", "ID": 1}
    expected = pair.plain.execute(sql, params).fetchall()
    assert (
        pair.enc.execute(sql, params).fetchall()
        == expected
        == [
            (1, "ann"),
            (2, "bob"),
            (5, "zoë"),
        ]
    )


# -- the small functions, alone -----------------------------------------------------------


def test_pg_substr_and_case_mapping() -> None:
    assert engine.pg_substr("hello", -1, 3) == "h"
    assert engine.pg_substr("hello", 0, 3) == "he"
    assert engine.pg_substr("héllo", 2, 2) == "él"
    assert engine.pg_substr("hello", 5, 0) == ""
    assert engine.pg_substr_from("hello", -3) == "hello"
    with pytest.raises(ValueError):
        engine.pg_substr("x", 1, -1)
    assert engine.pg_lower("ÉCOLE Abc") == "École abc"
    assert engine.pg_upper("straße é") == "STRAßE é"


def test_conjuncts_and_names() -> None:
    import sqlglot

    tree = sqlglot.parse_one("SELECT 1 FROM t WHERE (a = 1 AND b > 2) AND c", read="postgres")
    assert [c.sql() for c in split.conjuncts(tree.args["where"].this)] == ["a = 1", "b > 2", "c"]
    (tree,) = sqltext.parse(
        "SELECT a, b AS x, lower(a), count(*), a + 1, a::text, '1'::int, date_part('year', d), "
        "extract(year FROM d), substr(a, 1), substring(a, 1), (SELECT y FROM u), EXISTS (SELECT 1) "
        "FROM t"
    )
    names = [output_names.pg_name(e) or "?column?" for e in tree.expressions]
    assert names == [
        "a", "x", "lower", "count", "?column?", "a", "int4", "date_part", "extract", "substr",
        "substring", "y", "exists",
    ]  # fmt: skip


def test_row_cap_refuses_typed_and_changes_nothing(pair: Pair, master_key: Any) -> None:
    """Past the connection's row cap a split statement raises RowCapExceeded naming what
    the server could not run and the server SELECT that passed the cap; layers and data
    are as they were, and the application's transaction is failed."""
    sql = "SELECT id, lower(title) FROM post WHERE lower(title) <> 'x' ORDER BY id"
    expected = pair.plain.execute(sql).fetchall()
    pair.enc.execute(sql).fetchall()  # any peels it needs happen here, uncapped
    before = _layers(pair.enc_dsn)
    conn = adaptive_client.connect(pair.enc_dsn, master_key=master_key)
    try:
        conn.execute("INSERT INTO author VALUES (100, 'capped', NULL, 1)")
        conn.residual_row_cap = 50
        with pytest.raises(RowCapExceeded) as info:
            conn.execute(sql)
        assert info.value.cap == 50 and "lower" in info.value.part.lower()
        assert info.value.relation == "the rows of post"
        shipped = conn.stats.last_residual
        assert shipped is not None and shipped.rows == 51  # one past the cap, then stopped
        assert _layers(pair.enc_dsn) == before
        # the transaction failed, as at a statement_timeout: the next statement is
        # refused, the commit rolls back the insert
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            conn.execute("SELECT name FROM author WHERE id = 100")
        conn.commit()
        assert conn.execute("SELECT count(*) FROM author").fetchall() == [(7,)]
        conn.residual_row_cap = 120  # all of post's rows: lower() runs on the client
        assert conn.execute(sql).fetchall() == expected
        shipped = conn.stats.last_residual
        assert shipped is not None and shipped.rows == 120 and shipped.bytes > 120 * 16
        assert shipped.fetches[0][0] == "the rows of post"
    finally:
        conn.close()


def test_row_cap_from_the_configuration(pair: Pair, master_key: Any) -> None:
    conn = adaptive_client.connect(
        pair.enc_dsn, master_key=master_key, config={"defaults": {"residual_row_cap": 10}}
    )
    try:
        assert conn.residual_row_cap == 10
        with pytest.raises(RowCapExceeded):
            conn.execute("SELECT count(*) FROM post WHERE lower(title) = 'hello'")
        conn.rollback()  # (the refusal failed the transaction)
        small = "SELECT count(*) FROM author WHERE lower(name) = 'ann'"  # 7 rows shipped
        assert conn.execute(small).fetchall() == pair.plain.execute(small).fetchall()
    finally:
        conn.close()
    with pytest.raises(ConfigError):
        adaptive_client.connect(
            pair.enc_dsn, master_key=master_key, config={"defaults": {"residual_row_cap": -1}}
        )


def test_common_conjuncts_factored_out_of_or(pair: Pair) -> None:
    """(A AND B) OR (A AND C) runs as A AND (B OR C): equal answers, NULLs included."""
    for sql in [
        "SELECT id FROM post WHERE (score > 0 AND lower(title) = 'hello') OR (score > 0 AND draft) ORDER BY id",
        "SELECT id FROM post WHERE (draft AND score > 2) OR (draft AND score < -2) OR (draft AND lower(title) = 'x') ORDER BY id",
        "SELECT id FROM post WHERE (price > 0 AND lower(title) <> 'x') OR price > 0 ORDER BY id",
    ]:
        assert pair.enc.execute(sql).fetchall() == pair.plain.execute(sql).fetchall()
