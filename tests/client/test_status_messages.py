"""``cursor.statusmessage``, judged against psycopg on PostgreSQL: the command tag of the
application's statement (``INSERT 0 2``, ``UPDATE 1``, ``CREATE TABLE``), whatever
statements the client ran for it, per result of a script and of ``executemany(...,
returning=True)``.  The client's cursor had no such attribute."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from adaptive_client.catalog.keys import MasterKey
from adaptive_client.syntax.command_tags import command_tag

from .pairs import Pair, plain_and_encrypted

STATEMENTS = [
    "CREATE TABLE t (id int PRIMARY KEY, n int, v text)",
    "CREATE UNIQUE INDEX t_v ON t (v)",
    "INSERT INTO t VALUES (1, 1, 'a'), (2, 2, 'b')",
    "INSERT INTO t VALUES (3, 3, 'c') ON CONFLICT (id) DO NOTHING",
    "UPDATE t SET n = n + 1 WHERE id > 1",
    "UPDATE t SET v = 'q' WHERE id = 99",
    "SELECT * FROM t WHERE id < 3",
    "WITH x AS (SELECT id FROM t) SELECT count(*) FROM x",
    "VALUES (1), (2), (3)",
    "DELETE FROM t WHERE id = 3",
    "SELECT 1 AS a; SELECT v FROM t ORDER BY id",
    "SET TIME ZONE 'UTC'",
    "SHOW TIME ZONE",
    "BEGIN",
    "SAVEPOINT s",
    "RELEASE SAVEPOINT s",
    "COMMIT",
    "CREATE SEQUENCE sq",
    "ALTER SEQUENCE sq RESTART WITH 5",
    "CREATE VIEW tv AS SELECT id FROM t",
    "CREATE TABLE t2 AS SELECT id, v FROM t",
    "ALTER TABLE t2 ADD COLUMN w int",
    "TRUNCATE t2",
    "DROP VIEW tv",
    "DROP TABLE t2",
    "ANALYZE t",
]


def _messages(conn: Any, sql: str) -> list[tuple[Any, ...]]:
    cur = conn.cursor()
    cur.execute(sql)
    out = [(cur.statusmessage, cur.rowcount)]
    while cur.nextset():
        out.append((cur.statusmessage, cur.rowcount))
    return out


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "status_messages", {}, [], {}) as pair:
        yield pair


def test_status_messages_as_psycopg_gives_them(pair: Pair) -> None:
    plain, enc = pair
    differences = [
        (sql, want, got)
        for sql in STATEMENTS
        if (want := _messages(plain, sql)) != (got := _messages(enc, sql))
    ]
    assert differences == []


def test_status_messages_of_executemany_returning(pair: Pair) -> None:
    got = []
    for conn in pair:
        conn.execute("CREATE TABLE m (id int PRIMARY KEY)")
        cur = conn.cursor()
        cur.executemany("INSERT INTO m VALUES (%s) RETURNING id", [(1,), (2,)], returning=True)
        seen = [cur.statusmessage]
        while cur.nextset():
            seen.append(cur.statusmessage)
        got.append(seen)
    assert got[0] == got[1] == ["INSERT 0 1", "INSERT 0 1"]


@pytest.mark.parametrize(
    ("sql", "rows", "tag"),
    [
        ("with a as (delete from t returning *) insert into u select * from a", 2, "INSERT 0 2"),
        ("CREATE OR REPLACE TEMP VIEW v AS SELECT 1", -1, "CREATE VIEW"),
        ("create unique index concurrently i on t (a)", -1, "CREATE INDEX"),
        ("CREATE MATERIALIZED VIEW mv AS SELECT 1", -1, "CREATE MATERIALIZED VIEW"),
        ("SELECT a INTO t2 FROM t", 3, "SELECT 3"),
        ("END", -1, "COMMIT"),
        ("ABORT", -1, "ROLLBACK"),
        ("ROLLBACK TO SAVEPOINT s", -1, "ROLLBACK"),
        ("TRUNCATE t, u", -1, "TRUNCATE TABLE"),
        ("LOCK t IN SHARE MODE", -1, "LOCK TABLE"),
        ("/* c */ -- d\n  update t set a = 1", 0, "UPDATE 0"),
        ("", -1, None),
    ],
)
def test_command_tags(sql: str, rows: int, tag: str | None) -> None:
    assert command_tag(sql, rows) == tag
