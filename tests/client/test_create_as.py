"""``CREATE TABLE ... AS`` and ``SELECT ... INTO`` (dbapi/create_as.py), judged against
PostgreSQL: the new table's columns (names, listed names, declared types with their
modifiers: a char(3) stays char(3)), its rows, ``WITH NO DATA``, ``IF NOT EXISTS``, the
row counts and the errors (42P07, 42601 for too many names, 42701 for a repeated
one).  They were refused.  Found beside them: the first query of a transaction that
defers an onion's build described a varchar(20) column without its length."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, outcome, plain_and_encrypted, script_differences

SCRIPT = [
    "CREATE TABLE src (id integer PRIMARY KEY, name varchar(20), price numeric(8,2), ts timestamp(0), tags text[], doc jsonb, f real, ok boolean, c char(3))",
    "INSERT INTO src VALUES (1, 'a', 1.50, '2024-01-01 10:00', '{x,y}', '{\"k\": 1}', 0.1, true, 'ab'), (2, 'b', 2.25, NULL, NULL, NULL, NULL, false, NULL), (3, 'c', NULL, '2024-02-02', '{}', '[]', 1.5, NULL, 'xyz')",
    "CREATE TABLE dst AS SELECT * FROM src WHERE id < 3",
    "SELECT * FROM dst ORDER BY id",
    "CREATE TABLE dst2 (a, b) AS SELECT id, upper(name), price * 2 AS dbl FROM src ORDER BY id",
    "SELECT * FROM dst2 ORDER BY a",
    "CREATE TABLE dst3 AS SELECT name, count(*) AS n, sum(price) FROM src GROUP BY name WITH NO DATA",
    "SELECT * FROM dst3",
    "CREATE TABLE IF NOT EXISTS dst AS SELECT 1",
    "CREATE TABLE dst AS SELECT 1",
    "CREATE TABLE dst AS SELECT 1/0",  # (42P07: the name is checked before the query runs)
    "CREATE TABLE dst4 (a, b, c) AS SELECT id, name FROM src",
    "CREATE TABLE dst5 AS SELECT id, id FROM src",
    "SELECT id, name INTO dst6 FROM src WHERE price > 2",
    "SELECT * FROM dst6",
    "CREATE TABLE dst7 AS SELECT id + 1 AS k, name || '!' AS n2, price FROM src ORDER BY id",
    "SELECT k, n2, price FROM dst7 WHERE price > 1 ORDER BY k",
    "INSERT INTO dst7 VALUES (10, 'zz', 123456.78)",
    "SELECT count(*) FROM dst7",
]


def _described(d: Any) -> tuple[Any, ...]:
    return (d[0], d[1], d[2], d[4], d[5])


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "create_as", {}, [], {}) as pair:
        yield pair


def test_tables_made_from_queries_as_in_postgresql(pair: Pair) -> None:
    assert script_differences(pair, SCRIPT, _described) == []


def test_a_failed_create_as_leaves_nothing(pair: Pair) -> None:
    plain, enc = pair
    for conn in pair:
        conn.execute("CREATE TABLE s (id integer PRIMARY KEY, v varchar(3))")
        conn.execute("INSERT INTO s VALUES (1, 'a'), (2, NULL)")
    # the query fails on its second row: no table, in autocommit and in a transaction
    bad = "CREATE TABLE t AS SELECT id, 10 / (id - 2) AS q FROM s ORDER BY id"
    assert outcome(enc, bad) == outcome(plain, bad) == ("error", "22012")
    for conn in pair:
        conn.autocommit = False
    try:
        assert outcome(enc, bad) == outcome(plain, bad)
        assert enc.pg.pgconn.transaction_status == plain.pgconn.transaction_status
        for conn in pair:
            conn.rollback()
    finally:
        for conn in pair:
            conn.autocommit = True
    check = "SELECT count(*) FROM t"
    assert outcome(enc, check) == outcome(plain, check) == ("error", "42P01")


def test_first_query_of_a_transaction_describes_declared_types(pair: Pair) -> None:
    plain, enc = pair
    for conn in pair:
        conn.execute("CREATE TABLE d (id integer PRIMARY KEY, v varchar(20), n numeric(8,2))")
        conn.execute("INSERT INTO d VALUES (1, 'a', 1.5)")
        conn.autocommit = False
    try:
        query = "SELECT * FROM d WHERE id < 3"
        assert outcome(enc, query, describe=_described) == outcome(
            plain, query, describe=_described
        )
    finally:
        for conn in pair:
            conn.rollback()
            conn.autocommit = True
