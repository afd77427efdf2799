"""GROUP BY a table's primary key with the table's other columns selected (PostgreSQL's
functional dependency), compared with plain PostgreSQL, on a C and an ICU database."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted

SCHEMA = [
    "CREATE TABLE author (id integer PRIMARY KEY, name text, born date, score numeric(6,2))",
    "CREATE TABLE book (id integer PRIMARY KEY, author_id integer, title text, pages integer)",
    "CREATE TABLE pair (a integer, b integer, label text, PRIMARY KEY (a, b))",
    "INSERT INTO author VALUES (1, 'Ann', '1970-01-02', 7.5), (2, 'bob', '1980-03-04', 9.25), "
    "(3, 'Cy', '1990-05-06', NULL)",
    "INSERT INTO book VALUES (10, 1, 'x', 100), (11, 1, 'y', 250), (12, 2, 'z', 80), "
    "(13, 3, 'w', NULL), (14, 2, 'v', 300)",
    "INSERT INTO pair VALUES (1, 1, 'p'), (1, 2, 'q'), (2, 1, 'r')",
]
QUERIES = [
    "SELECT id, name, born FROM author GROUP BY id ORDER BY id",
    "SELECT a.id, a.name, count(b.id), sum(b.pages) FROM author a JOIN book b "
    "ON b.author_id = a.id GROUP BY a.id ORDER BY a.id",
    "SELECT a.name, max(b.pages) FROM author a LEFT JOIN book b ON b.author_id = a.id "
    "GROUP BY a.id ORDER BY a.name",
    "SELECT a.id, a.score FROM author a JOIN book b ON b.author_id = a.id GROUP BY a.id "
    "HAVING a.score > 8 OR count(*) > 1 ORDER BY a.id",
    "SELECT label, a, b FROM pair GROUP BY a, b ORDER BY a, b",
    "SELECT name FROM author WHERE id IN (SELECT author_id FROM book GROUP BY author_id) "
    "GROUP BY id ORDER BY born DESC",
]
# PostgreSQL refuses these: a key covered only in part, a column of another table
REFUSED = [
    "SELECT label FROM pair GROUP BY a",
    "SELECT a.id, b.title FROM author a JOIN book b ON b.author_id = a.id GROUP BY a.id",
]


ICU = "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"


@pytest.fixture(scope="module", params=["", ICU])
def pair(request: Any, new_database: Callable[..., str]) -> Iterator[Pair]:
    key = MasterKey.generate()
    with plain_and_encrypted(new_database, key, "gk", {}, SCHEMA, {}, request.param) as both:
        yield both


@pytest.mark.parametrize("sql", QUERIES)
def test_grouped_by_a_key_as_postgresql(pair: Pair, sql: str) -> None:
    plain, enc = pair
    expected = plain.execute(sql).fetchall()
    assert enc.execute(sql).fetchall() == expected
    assert expected


@pytest.mark.parametrize("sql", REFUSED)
def test_not_dependent_refused_as_postgresql(pair: Pair, sql: str) -> None:
    plain, enc = pair
    with pytest.raises(psycopg.errors.GroupingError):
        plain.execute(sql)
    with pytest.raises(psycopg.errors.GroupingError):
        enc.execute(sql)
