"""NATURAL JOIN as PostgreSQL reads it: on every shared column name, in the left input's
order; none shared, a cross join.  Compared with plain PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.errors import UnsupportedQuery
from adaptive_client.keys import MasterKey

SCHEMA = [
    "CREATE TABLE t (id integer PRIMARY KEY, k integer, name text)",
    "CREATE TABLE u (k integer PRIMARY KEY, label text)",
    "CREATE TABLE v (label text, note text)",
    "CREATE TABLE w (z integer)",
    "INSERT INTO t VALUES (1, 1, 'a'), (2, 2, 'b'), (3, 9, 'c')",
    "INSERT INTO u VALUES (1, 'one'), (2, 'two')",
    "INSERT INTO v VALUES ('one', 'first'), ('two', 'second'), ('two', 'again')",
    "INSERT INTO w VALUES (7), (8)",
]
QUERIES = [
    "SELECT id, label FROM t NATURAL JOIN u ORDER BY id",
    "SELECT * FROM t NATURAL JOIN u ORDER BY id",
    "SELECT id, label FROM t NATURAL LEFT JOIN u ORDER BY id",
    "SELECT t.id, note FROM t NATURAL JOIN u NATURAL JOIN v ORDER BY t.id, note",
    "SELECT id, z FROM t NATURAL JOIN w ORDER BY id, z",
    "SELECT count(*) FROM t NATURAL LEFT JOIN w",
    "SELECT k, count(*) FROM t NATURAL JOIN u GROUP BY k ORDER BY k",
]


@pytest.fixture(scope="module")
def pair(new_database: Callable[..., str]) -> Iterator[tuple[Any, Any]]:
    plain = psycopg.connect(new_database("natplain"), autocommit=True)
    enc = adaptive_client.connect(
        new_database("natenc"), master_key=MasterKey.generate(), autocommit=True
    )
    for conn in (plain, enc):
        for sql in SCHEMA:
            conn.execute(sql)
    yield plain, enc
    plain.close()
    enc.close()


@pytest.mark.parametrize("sql", QUERIES)
def test_natural_join_as_postgresql(pair: tuple[Any, Any], sql: str) -> None:
    plain, enc = pair
    expected = plain.execute(sql).fetchall()
    assert enc.execute(sql).fetchall() == expected
    assert expected


def test_over_a_derived_table_refused(pair: tuple[Any, Any]) -> None:
    _, enc = pair
    with pytest.raises(UnsupportedQuery, match="NATURAL JOIN"):
        enc.execute("SELECT id FROM t NATURAL JOIN (SELECT k FROM u) s")
