"""VACUUM, ANALYZE, CLUSTER and REINDEX through the client (maintenance.py), judged
against PostgreSQL: the same commands succeed, fail with the same error classes, and
leave the server's statistics, physical order and indexes on the encrypted tables."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.keys import MasterKey

COMMANDS = [
    "ANALYZE",
    "ANALYZE item",
    "analyse VERBOSE item, note",
    "ANALYZE item (id, name)",
    'ANALYZE public."item"',
    "VACUUM item",
    "VACUUM (ANALYZE, VERBOSE) item (name)",
    "VACUUM FULL ANALYZE note;",
    "VACUUM",
    "CLUSTER item USING item_pkey",
    "CLUSTER VERBOSE item USING item_qty",
    "CLUSTER (VERBOSE) public.item USING item_name_key",
    "CLUSTER item",
    "CLUSTER",
    "REINDEX TABLE item",
    "REINDEX (VERBOSE) TABLE public.item",
    "REINDEX INDEX item_qty",
    "REINDEX INDEX item_pkey",
    "REINDEX TABLE CONCURRENTLY item",
    "REINDEX SCHEMA public",
]
FAILING = [
    ("ANALYZE nosuch", psycopg.errors.UndefinedTable),
    ("ANALYZE item (nosuch)", psycopg.errors.UndefinedColumn),
    ("CLUSTER item USING nosuch", psycopg.errors.UndefinedObject),
    ("CLUSTER nosuch USING item_pkey", psycopg.errors.UndefinedTable),
    ("CLUSTER note", psycopg.errors.UndefinedObject),  # (never clustered: no index to use)
    ("REINDEX INDEX nosuch", psycopg.errors.UndefinedTable),
    ("REINDEX TABLE nosuch", psycopg.errors.UndefinedTable),
    ("REINDEX FOO item", psycopg.errors.SyntaxError),
]


@pytest.fixture
def pair(new_database: Any, master_key: MasterKey) -> Any:
    plain = psycopg.connect(new_database("mplain"), autocommit=True)
    enc = adaptive_client.connect(new_database("menc"), master_key=master_key, autocommit=True)
    for conn in (plain, enc):
        conn.execute("CREATE TABLE item (id integer PRIMARY KEY, name text UNIQUE, qty integer)")
        conn.execute("CREATE INDEX item_qty ON item (qty)")
        conn.execute("CREATE TABLE note (id integer, body text)")
        conn.cursor().executemany(
            "INSERT INTO item VALUES (%s, %s, %s)", [(i, f"n{i}", i % 7) for i in range(50)]
        )
    yield plain, enc
    plain.close()
    enc.close()


def test_the_commands_run_as_on_postgresql(pair: Any) -> None:
    plain, enc = pair
    for command in COMMANDS:
        plain.execute(command)
        enc.execute(command)
    anon = enc.catalog.table("item").anon
    analyzed = enc.control.execute(
        "SELECT count(*) FROM pg_stats WHERE tablename = %s", (anon,)
    ).fetchone()
    assert analyzed is not None and analyzed[0] >= 3  # every onion column of item
    # the stored table is clustered on one of the server's indexes, as PostgreSQL's is
    for conn, table in ((plain, "item"), (enc.control, anon)):
        clustered = conn.execute(
            "SELECT count(*) FROM pg_index WHERE indrelid = %s::regclass AND indisclustered",
            (table,),
        ).fetchone()
        assert clustered == (1,)
    assert enc.execute("SELECT name FROM item WHERE qty = 3 ORDER BY id").fetchall() == (
        plain.execute("SELECT name FROM item WHERE qty = 3 ORDER BY id").fetchall()
    )


def test_errors_as_on_postgresql(pair: Any) -> None:
    plain, enc = pair
    for command, error in FAILING:
        for conn in (plain, enc):
            with pytest.raises(error):
                conn.execute(command)


@pytest.mark.parametrize("command", ["VACUUM item", "REINDEX TABLE CONCURRENTLY item"])
def test_what_cannot_run_in_a_transaction_is_refused_as_by_postgresql(
    pair: Any, command: str
) -> None:
    plain, enc = pair
    for conn in (plain, enc):
        conn.autocommit = False
        with pytest.raises(psycopg.errors.ActiveSqlTransaction):
            conn.execute(command)
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            conn.execute("SELECT 1")
        conn.rollback()
        conn.autocommit = True


def test_lock_table_locks_the_stored_table_as_on_postgresql(
    pair: Any, new_database: Any, master_key: MasterKey
) -> None:
    """LOCK [TABLE] [ONLY] name [, ...] [IN mode MODE] [NOWAIT] in a transaction: a
    second session's NOWAIT lock of the same table fails with PostgreSQL's 55P03 while
    it is held; outside a transaction block it is PostgreSQL's 25P01."""
    plain, enc = pair
    second_plain = psycopg.connect(plain.info.dsn, autocommit=False)
    second_enc = adaptive_client.connect(enc.pg.info.dsn, master_key=master_key)
    for holder, other in ((plain, second_plain), (enc, second_enc)):
        with pytest.raises(psycopg.errors.NoActiveSqlTransaction):
            holder.execute("LOCK TABLE item IN EXCLUSIVE MODE")
        holder.autocommit = False
        holder.execute("lock table only item, public.note * in share row exclusive mode nowait")
        with pytest.raises(psycopg.errors.LockNotAvailable):
            other.execute("LOCK item IN ACCESS EXCLUSIVE MODE NOWAIT")
        other.rollback()
        holder.rollback()
        other.execute("LOCK item IN ACCESS EXCLUSIVE MODE NOWAIT")  # (released)
        other.rollback()
        with pytest.raises(psycopg.errors.UndefinedTable):
            holder.execute("LOCK TABLE nosuch")
        holder.rollback()
        holder.autocommit = True
    second_plain.close()
    second_enc.close()
