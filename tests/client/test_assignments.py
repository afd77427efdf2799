"""Values assigned to typed columns, judged against PostgreSQL statement by statement:
the value stored (rounding of numerics and floats to integers, char(n) padding, a
char(n) value's trailing spaces dropped in a varchar, date and timestamp input forms) or
the error -- its SQLSTATE and its message as PostgreSQL words it (``numeric field
overflow``, ``"1e309" is out of range for type double precision``).  Found different
before: a column named twice in an INSERT was taken (PostgreSQL: 42701), and
``'ab'::char(5)`` stored in a varchar(3) kept a space."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted, script_differences

SCHEMA = "CREATE TABLE w (id serial PRIMARY KEY, i integer, s smallint, b bigint, n numeric(4,2), v varchar(3), c char(3), t text, bo boolean, d date, ts timestamp(0), f real, x double precision)"
SCRIPT = [
    "INSERT INTO w (i) VALUES (1.5)",
    "INSERT INTO w (i) VALUES (2.5)",
    "INSERT INTO w (i) VALUES (-2.5)",
    "INSERT INTO w (i) VALUES ('1.5')",
    "INSERT INTO w (i) VALUES (2.5::float8)",
    "INSERT INTO w (i) VALUES (3.5::real)",
    "INSERT INTO w (s) VALUES (32768)",
    "INSERT INTO w (s) VALUES (-32768)",
    "INSERT INTO w (b) VALUES (9223372036854775808)",
    "INSERT INTO w (n) VALUES (1.005)",
    "INSERT INTO w (n) VALUES (-1.005)",
    "INSERT INTO w (n) VALUES (99.995)",
    "INSERT INTO w (n) VALUES ('1e1')",
    "INSERT INTO w (n) VALUES (1e-5)",
    "INSERT INTO w (v) VALUES ('abcd')",
    "INSERT INTO w (v) VALUES ('abc   ')",
    "INSERT INTO w (v) VALUES ('ab'::char(5))",
    "INSERT INTO w (v) VALUES (12)",
    "INSERT INTO w (c) VALUES ('a')",
    "INSERT INTO w (c) VALUES ('abcd')",
    "INSERT INTO w (c) VALUES ('ab   ')",
    "INSERT INTO w (t) VALUES (12.50)",
    "INSERT INTO w (t) VALUES (true)",
    "INSERT INTO w (bo) VALUES ('yes')",
    "INSERT INTO w (bo) VALUES (1)",
    "INSERT INTO w (bo) VALUES ('t ')",
    "INSERT INTO w (d) VALUES ('2024-02-30')",
    "INSERT INTO w (d) VALUES ('20240229')",
    "INSERT INTO w (d) VALUES ('Feb 29, 2024')",
    "INSERT INTO w (d) VALUES ('2024-02-29 13:00')",
    "INSERT INTO w (d) VALUES ('epoch')",
    "INSERT INTO w (ts) VALUES ('2024-02-29 13:00:00.5')",
    "INSERT INTO w (ts) VALUES ('2024-02-29 13:00:00.4999')",
    "INSERT INTO w (ts) VALUES ('2024-02-29T13:00:00Z')",
    "INSERT INTO w (ts) VALUES ('allballs')",
    "INSERT INTO w (f) VALUES (1e39)",
    "INSERT INTO w (f) VALUES (1e-46)",
    "INSERT INTO w (f) VALUES ('NaN')",
    "INSERT INTO w (x) VALUES ('-inf')",
    "INSERT INTO w (x) VALUES ('1e309')",
    "INSERT INTO w (i) VALUES (NULL), (DEFAULT)",
    "INSERT INTO w DEFAULT VALUES",
    "INSERT INTO w (i, i) VALUES (1, 2)",
    "INSERT INTO w (nope) VALUES (1)",
    "INSERT INTO w (i) VALUES (1, 2)",
    "INSERT INTO w (i, s) VALUES (1)",
    "SELECT id, i, s, b, n, v, c, t, bo, d, ts, f, x FROM w ORDER BY id",
    "UPDATE w SET i = i * 1000000000 WHERE i = 3",
    "UPDATE w SET n = n * 100 WHERE n IS NOT NULL",
    "UPDATE w SET v = v || 'zz' WHERE v IS NOT NULL",
    "UPDATE w SET c = upper(c) WHERE c IS NOT NULL",
    # a row assignment whose values need the client: row by row (was refused)
    "UPDATE w SET (t, i) = (lower(c) || '!', i + 1) WHERE c IS NOT NULL",
    "SELECT id, i, t FROM w WHERE c IS NOT NULL ORDER BY id",
    "SELECT id, n, v, c FROM w WHERE n IS NOT NULL OR v IS NOT NULL OR c IS NOT NULL ORDER BY id",
]


def _same(v: Any) -> Any:
    return "NaN" if isinstance(v, float) and math.isnan(v) else v


def _outcome(conn: Any, sql: str) -> tuple[Any, ...]:
    cur = conn.cursor()
    try:
        cur.execute(sql)
    except psycopg.Error as exc:
        # (42804's message names the column and the expression's type in PostgreSQL;
        # the client's names the column's type and the value's Python type)
        message = str(exc).splitlines()[0] if exc.sqlstate != "42804" else ""
        return ("error", exc.sqlstate, message)
    if cur.description is None:
        return ("ok", cur.rowcount)
    return ("rows", [tuple(_same(v) for v in row) for row in cur.fetchall()])


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "assign", {}, [SCHEMA], {}) as pair:
        yield pair


def test_assignments_as_in_postgresql(pair: Pair) -> None:
    plain, enc = pair
    differ = [
        (sql, want, got)
        for sql in SCRIPT
        if (want := _outcome(plain, sql)) != (got := _outcome(enc, sql))
    ]
    assert differ == []


def test_row_by_row_update_returning(pair: Pair) -> None:
    """An UPDATE whose values need the client (run as a read and writes by key) with
    RETURNING: the rows and their column names as PostgreSQL returns them (it was
    refused)."""
    plain, enc = pair
    for conn in (plain, enc):
        conn.execute("INSERT INTO w (i, t, c) VALUES (1, 'one', 'ab'), (2, 'two', NULL)")
    script = [
        "UPDATE w SET t = upper(t) || '?' WHERE i IN (1, 2) RETURNING i, t AS shown",
        "UPDATE w AS x SET t = lower(x.c) WHERE x.i = 1 RETURNING x.i, t, i + 1",
        "UPDATE w SET t = upper(t) WHERE i = 99 RETURNING i, t",
        "UPDATE w SET (t, i) = (t || t, i * 10) WHERE i = 2 RETURNING *",
        "SELECT i, t FROM w ORDER BY i",
    ]
    assert script_differences(pair, script) == []


def test_values_with_subqueries(pair: Pair) -> None:
    """INSERT ... VALUES whose values hold a subquery, run as the SELECT of its rows (it
    was refused): each row's values read the table as it was before the statement."""
    script = [
        "INSERT INTO w (i, t) VALUES (5, 'five'), (7, 'seven')",
        "INSERT INTO w (i, t) VALUES ((SELECT max(i) FROM w) + 1, 'next'), "
        "((SELECT count(*) FROM w), (SELECT min(t) FROM w))",
        "INSERT INTO w (i, t) VALUES ((SELECT i FROM w), 'two rows')",
        "INSERT INTO w (i) VALUES ((SELECT 2)) RETURNING i",
        "SELECT i, t FROM w ORDER BY i, t",
    ]
    assert script_differences(pair, script) == []
