"""A table named with column aliases (compile/column_aliases.py), judged against
PostgreSQL: ``FROM j1 AS t1 (a, b)`` renames its columns in order, fewer aliases leave
the rest named, more are 42P10.  The aliases were unknown columns (42703)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted, script_differences

SCRIPT = [
    "CREATE TABLE j1 (i integer, j integer)",
    "CREATE TABLE j2 (i integer, k integer)",
    "INSERT INTO j1 VALUES (1, 4), (2, 5)",
    "INSERT INTO j2 VALUES (1, -1), (3, 2)",
    "SELECT t1.a, t2.e FROM j1 t1 (a, b), j2 t2 (d, e) WHERE t1.a = t2.d",
    "SELECT * FROM j1 AS x (p) ORDER BY p",
    "SELECT x.p, x.j FROM j1 AS x (p) WHERE x.j > 4",
    "SELECT * FROM j1 AS x (p, q, r)",
    "SELECT count(*) FROM j1 t (a, b) JOIN j2 u (c, d) ON t.a = u.c",
]


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "column_aliases", {}, [], {}) as pair:
        yield pair


def test_column_aliases_as_in_postgresql(pair: Pair) -> None:
    assert script_differences(pair, SCRIPT) == []
