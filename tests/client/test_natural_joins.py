"""NATURAL JOIN as PostgreSQL reads it: on every shared column name, in the left input's
order; none shared, a cross join.  Compared with plain PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from adaptive_client.catalog.keys import MasterKey
from adaptive_client.errors import UnsupportedQuery

from .pairs import Pair, plain_and_encrypted

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
def pair(new_database: Callable[..., str]) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, MasterKey.generate(), "nat", {}, SCHEMA, {}) as both:
        yield both


@pytest.mark.parametrize("sql", QUERIES)
def test_natural_join_as_postgresql(pair: Pair, sql: str) -> None:
    plain, enc = pair
    expected = plain.execute(sql).fetchall()
    assert enc.execute(sql).fetchall() == expected
    assert expected


def test_over_a_derived_table_refused(pair: Pair) -> None:
    _, enc = pair
    with pytest.raises(UnsupportedQuery, match="NATURAL JOIN"):
        enc.execute("SELECT id FROM t NATURAL JOIN (SELECT k FROM u) s")
