"""Tables compacted after an adaptation (compaction.py).

A peel rewrites every row of its column with one UPDATE: without compaction the table's
file doubles with each.  Once the adaptation committed and the application holds no
transaction, the client runs ``VACUUM FULL`` on the tables it rewrote: the file is back
to its size, the answers are PostgreSQL's, a transaction's peel is compacted at its
commit, and a table another session holds is left as it is, without an error.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.adapt import compaction
from adaptive_client.catalog.keys import MasterKey

# every onion stored at CREATE TABLE (none built on first use): what this file examines
STORED = {"defaults": {"on_demand": []}}


ROWS = [(i, f"name {i % 97}", (i * 7919) % 1000) for i in range(3000)]
QUERY = "SELECT id, name FROM item WHERE qty < 40 ORDER BY qty, id"


@pytest.fixture
def dbs(new_database: Any, master_key: MasterKey) -> Iterator[tuple[Any, Any]]:
    plain = psycopg.connect(new_database("cplain"), autocommit=True)
    enc = adaptive_client.connect(
        new_database("cenc"), master_key=master_key, autocommit=True, config=STORED
    )
    for conn in (plain, enc):
        conn.execute("CREATE TABLE item (id integer PRIMARY KEY, name text, qty integer)")
        conn.cursor().executemany("INSERT INTO item VALUES (%s, %s, %s)", ROWS)
    yield plain, enc
    plain.close()
    enc.close()


def _file(enc: Any) -> tuple[int, int]:
    """(file node, pages) of the item table on the server."""
    return _node(enc), _pages(enc)


def _node(enc: Any) -> int:
    """The item table's file (read from the catalog: no lock, unlike the size)."""
    anon = enc.catalog.table("item").anon
    row = enc.control.execute("SELECT relfilenode FROM pg_class WHERE relname = %s", (anon,))
    return int(row.fetchone()[0])


def _pages(enc: Any) -> int:
    anon = enc.catalog.table("item").anon
    row = enc.control.execute("SELECT pg_relation_size(%s::regclass) / 8192", (anon,))
    return int(row.fetchone()[0])


def test_a_peel_leaves_the_table_compact(dbs: tuple[Any, Any], monkeypatch: Any) -> None:
    plain, enc = dbs
    monkeypatch.setattr(compaction, "MIN_PAGES", 1)
    node, pages = _file(enc)
    assert enc.execute(QUERY).fetchall() == plain.execute(QUERY).fetchall()  # peels Ord
    assert enc.compactor.idle(60)  # (in the background)
    node_after, pages_after = _file(enc)
    assert node_after != node  # rewritten by VACUUM FULL
    assert pages_after <= pages * 1.1  # not the peel's two versions of every row
    assert enc.execute(QUERY).fetchall() == plain.execute(QUERY).fetchall()


def test_the_statement_does_not_wait_for_the_compaction(
    dbs: tuple[Any, Any], monkeypatch: Any
) -> None:
    """An older transaction elsewhere keeps the replaced versions visible: the compaction
    waits for it in the background, and the statement that peeled has its answer
    meanwhile; once it ends, the table is compacted."""
    plain, enc = dbs
    monkeypatch.setattr(compaction, "MIN_PAGES", 1)
    node = _node(enc)
    older = psycopg.connect(enc.control.info.dsn)
    try:
        older.execute("SELECT txid_current()")  # a transaction open from before the peel
        assert enc.execute(QUERY).fetchall() == plain.execute(QUERY).fetchall()
        assert not enc.compactor.idle(0.5)  # waiting for the older transaction
        assert enc.execute(QUERY).fetchall() == plain.execute(QUERY).fetchall()
        older.rollback()
        assert enc.compactor.idle(60)
        assert _node(enc) != node
    finally:
        older.close()


def test_closing_ends_a_waiting_compaction(dbs: tuple[Any, Any], monkeypatch: Any) -> None:
    plain, enc = dbs
    monkeypatch.setattr(compaction, "MIN_PAGES", 1)
    older = psycopg.connect(enc.control.info.dsn)
    try:
        older.execute("SELECT txid_current()")
        assert enc.execute(QUERY).fetchall() == plain.execute(QUERY).fetchall()
        assert not enc.compactor.idle(0.2)
        enc.close()  # (returns: the background wait ends with it)
        assert enc.compactor._thread is not None and not enc.compactor._thread.is_alive()
    finally:
        older.close()


def test_below_the_threshold_nothing_is_compacted(dbs: tuple[Any, Any], monkeypatch: Any) -> None:
    plain, enc = dbs
    monkeypatch.setattr(compaction, "MIN_PAGES", 10_000)
    node = _node(enc)
    assert enc.execute(QUERY).fetchall() == plain.execute(QUERY).fetchall()
    assert enc.compactor.idle(60)
    assert _node(enc) == node
    # analyzed, though: the planner has the peeled column's statistics
    anon = enc.catalog.table("item").anon
    row = enc.control.execute(
        "SELECT last_analyze IS NOT NULL FROM pg_stat_user_tables WHERE relname = %s", (anon,)
    ).fetchone()
    assert row is not None and row[0]


def test_a_peel_inside_a_transaction_is_compacted_at_commit(
    dbs: tuple[Any, Any], monkeypatch: Any
) -> None:
    plain, enc = dbs
    monkeypatch.setattr(compaction, "MIN_PAGES", 1)
    enc.autocommit = False
    enc.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
    enc.execute("UPDATE item SET name = 'x' WHERE id = 1")  # (holds the table: peel inside)
    plain.execute("UPDATE item SET name = 'x' WHERE id = 1")
    node, _ = _file(enc)
    assert enc.execute(QUERY).fetchall() == plain.execute(QUERY).fetchall()
    assert _node(enc) == node  # not while the transaction is open
    enc.commit()
    assert enc.compactor.idle(60)
    assert _node(enc) != node
    assert enc.execute(QUERY).fetchall() == plain.execute(QUERY).fetchall()


def test_a_table_another_session_holds_is_left_as_it_is(
    dbs: tuple[Any, Any], monkeypatch: Any
) -> None:
    _, enc = dbs
    monkeypatch.setattr(compaction, "MIN_PAGES", 1)
    anon = enc.catalog.table("item").anon
    node = _node(enc)
    with psycopg.connect(enc.control.info.dsn) as other:
        other.execute(f'SELECT count(*) FROM "{anon}"')  # ACCESS SHARE until it ends
        # (its transaction is older than the call: the wait for it ends first)
        assert compaction.compact(enc.control, [anon], wait_ms=100) == []
    assert _node(enc) == node


def test_one_client_compacts_a_table_at_a_time(dbs: tuple[Any, Any], monkeypatch: Any) -> None:
    _, enc = dbs
    monkeypatch.setattr(compaction, "MIN_PAGES", 1)
    anon = enc.catalog.table("item").anon
    node = _node(enc)
    with psycopg.connect(enc.control.info.dsn, autocommit=True) as other:
        assert compaction._try_lock(other, anon)  # another client compacting it
        assert compaction.compact(enc.control, [anon], wait_ms=100) == []
        assert _node(enc) == node
        # (released before the session closes: a closed session's backend releases its
        # locks when it exits, a moment after the client has gone on)
        other.execute("SELECT pg_advisory_unlock_all()")
    assert compaction.compact(enc.control, [anon], wait_ms=compaction.BACKGROUND_WAIT_MS) == [anon]
    assert _node(enc) != node


def test_the_lock_wait_outlasts_the_deadlock_check(dbs: tuple[Any, Any]) -> None:
    """The deadlock check of a VACUUM FULL waiting for its table is what cancels an
    autovacuum holding the table: a lock wait no longer than ``deadlock_timeout`` ends
    first, and the table is left uncompacted (test below)."""
    _, enc = dbs
    for setting in ("1s", "2500ms"):
        enc.control.execute(f"SET deadlock_timeout = '{setting}'")
        row = enc.control.execute(
            "SELECT setting::int FROM pg_settings WHERE name = 'deadlock_timeout'"
        )
        assert compaction.lock_wait_ms(enc.control) > int(row.fetchone()[0])
    enc.control.execute("RESET deadlock_timeout")


@pytest.mark.slow
def test_a_table_autovacuum_is_vacuuming_is_compacted(new_database: Any) -> None:
    """An autovacuum of the table -- which the rewrite's dead rows call in -- gives way
    to the compaction (up to the autovacuum launcher's next visit to the database)."""
    import time

    with psycopg.connect(new_database("cav"), autocommit=True) as conn:
        # (a slow autovacuum of the table as soon as it has dead rows)
        conn.execute(
            "CREATE TABLE big (id integer PRIMARY KEY, pad text) WITH ("
            "autovacuum_vacuum_threshold = 0, autovacuum_vacuum_scale_factor = 0, "
            "autovacuum_vacuum_cost_delay = 100, autovacuum_vacuum_cost_limit = 10)"
        )
        conn.execute("INSERT INTO big SELECT g, repeat('x', 500) FROM generate_series(1, 40000) g")
        conn.execute("UPDATE big SET pad = repeat('y', 500)")
        vacuuming = "SELECT 1 FROM pg_stat_progress_vacuum WHERE relid = 'big'::regclass"
        deadline = time.monotonic() + 240
        while conn.execute(vacuuming).fetchone() is None:
            if time.monotonic() > deadline:
                pytest.skip("no autovacuum came to the table")
            time.sleep(0.2)
        pages = compaction._pages(conn, "big")
        assert compaction.compact(conn, ["big"], wait_ms=compaction.BACKGROUND_WAIT_MS) == ["big"]
        assert compaction._pages(conn, "big") < pages * 0.6
