"""Values written that are expressions of the statement's parameters and constants
(``VALUES (%s + 1, upper(%s))``, ``SET t = lower(%s) || '!'``), computed by the client
engine with PostgreSQL's semantics, and ``INSERT ... DEFAULT VALUES``: results, errors
and the table's contents equal plain PostgreSQL's."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.keys import MasterKey

DDL = (
    "CREATE TABLE w (id serial PRIMARY KEY, n integer DEFAULT 7, t varchar(6), "
    "at timestamp, price numeric(6,2))"
)


@pytest.fixture
def conns(new_database: Any, master_key: MasterKey) -> Iterator[tuple[Any, Any]]:
    plain = psycopg.connect(new_database("wv_plain"), autocommit=True)
    enc = adaptive_client.connect(new_database("wv_enc"), master_key=master_key, autocommit=True)
    for c in (plain, enc):
        c.execute(DDL)
        c.execute("INSERT INTO w (n, t) VALUES (1, 'one'), (2, 'two')")
    yield plain, enc
    plain.close()
    enc.close()


def _run(conn: Any, sql: str, params: tuple[Any, ...]) -> Any:
    try:
        cur = conn.execute(sql, params or None)
        return cur.fetchall() if cur.description else cur.rowcount
    except psycopg.Error as exc:
        return ("error", exc.sqlstate)


@pytest.mark.parametrize(
    "sql,params",
    [
        ("INSERT INTO w DEFAULT VALUES RETURNING id, n, t", ()),
        ("INSERT INTO w (n, t) VALUES (%s + 1, upper(%s)) RETURNING n, t", (41, "ab")),
        (
            "INSERT INTO w (t, price) VALUES (lower(%s) || '!', %s * 2) RETURNING t, price",
            ("XY", 1.25),
        ),
        (
            "INSERT INTO w (at) VALUES (%s::timestamp + interval '1 month') RETURNING at",
            ("2024-01-31",),
        ),
        ("INSERT INTO w (n) VALUES (abs(-5) * 3), (length('abc')) RETURNING n", ()),
        ("INSERT INTO w (t) VALUES (%s || 'abcdef')", ("z",)),  # too long: an error, alike
        ("INSERT INTO w (n) VALUES (10 / (2 - 2))", ()),  # division by zero, alike
        ("UPDATE w SET t = upper(%s) || %s WHERE id = 1 RETURNING id, t", ("ab", "c")),
        (
            "UPDATE w SET n = 2 * 21, at = %s::date + 1 WHERE id = 2 RETURNING n, at",
            ("2024-02-28",),
        ),
    ],
)
def test_values_computed_on_the_client_equal_plain(
    conns: tuple[Any, Any], sql: str, params: tuple[Any, ...]
) -> None:
    plain, enc = conns
    assert _run(enc, sql, params) == _run(plain, sql, params)
    order = "SELECT id, n, t, at, price FROM w ORDER BY id"
    assert enc.execute(order).fetchall() == plain.execute(order).fetchall()
