"""Per-connection state stays with its connection, whatever thread uses it: the
statistics each connection reports count its own statements and nothing else's."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from functools import partial
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.stats import Stats

from .conftest import Pair, Watchdog


def test_each_connection_counts_its_own_work(pair: Pair, watchdog: Watchdog) -> None:
    setup = adaptive_client.connect(pair.enc, master_key=pair.key, autocommit=True)
    setup.execute("CREATE TABLE t (id integer PRIMARY KEY, x integer)")
    setup.execute("INSERT INTO t VALUES (1, 10), (2, 20)")
    conns = [
        adaptive_client.connect(pair.enc, master_key=pair.key, autocommit=True) for _ in range(3)
    ]
    counts = [40, 70, 100]
    go = threading.Barrier(len(conns))

    def work(i: int) -> None:
        go.wait()
        for n in range(counts[i]):
            conns[i].execute("SELECT x FROM t WHERE id = %s", (1 + n % 2,)).fetchall()

    for i in range(len(conns)):
        watchdog.start(work, i, name=f"connection {i}")
    watchdog.join_all(120)
    for conn, n in zip(conns, counts, strict=True):
        assert conn.stats.statements["SELECT"] == n
        assert sum(conn.stats.decryptions.values()) >= n  # (its own results decrypted)
    # a connection handed to another thread keeps counting into its own statistics
    moved = threading.Thread(target=lambda: conns[0].execute("SELECT x FROM t WHERE id = 1"))
    moved.start()
    moved.join(60)
    assert conns[0].stats.statements["SELECT"] == counts[0] + 1
    assert conns[1].stats.statements["SELECT"] == counts[1]
    assert setup.stats.statements["SELECT"] == 0
    for conn in (*conns, setup):
        conn.close()


def test_a_fetch_reads_in_its_own_connections_session(pair: Pair) -> None:
    """A server-side cursor's rows are decrypted when fetched, in the session settings of
    the cursor's connection -- not of the connection whose statement ran last."""
    kolkata = adaptive_client.connect(pair.enc, master_key=pair.key)
    utc = adaptive_client.connect(pair.enc, master_key=pair.key)
    kolkata.execute("CREATE TABLE ev (id integer PRIMARY KEY, at timestamptz)")
    kolkata.execute("INSERT INTO ev VALUES (1, '2024-05-01 12:00:00+00')")
    kolkata.commit()
    kolkata.execute("SET TimeZone = 'Asia/Kolkata'")
    utc.execute("SET TimeZone = 'UTC'")
    cur = kolkata.cursor("events")
    cur.execute("SELECT at FROM ev")
    utc.execute("SELECT at FROM ev").fetchall()  # the other session ran last
    (at,) = cur.fetchone() or (None,)
    assert at is not None and at.utcoffset() is not None
    assert at.utcoffset().total_seconds() == 5.5 * 3600
    cur.close()
    for conn in (kolkata, utc):
        conn.close()


def test_counts_made_while_another_thread_reads_them_are_all_kept(watchdog: Watchdog) -> None:
    """Statistics shared by threads (the process-wide ones, or a connection's read by one
    thread while another counts) lose no count to a read adding them up meanwhile."""
    stats = Stats()
    done = threading.Event()

    def count(i: int) -> None:
        for n in range(20_000):
            stats.count("DET")
            stats.opened_columns(("DET", f"column {n % 1500}"), [(1, 0), (2, 1)])

    seen: list[int] = []

    def read() -> None:
        while not done.is_set():
            seen.append(sum(stats.decryptions.values()))  # (adds up what was counted)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # (threads switched as often as they can be: races show)
    try:
        reader = threading.Thread(target=read)
        reader.start()
        for i in range(4):
            watchdog.start(count, i, name=f"counter {i}")
        watchdog.join_all(120)
        done.set()
        reader.join(60)
    finally:
        sys.setswitchinterval(interval)
    assert stats.encryptions["DET"] == 4 * 20_000
    assert stats.decryptions["DET"] == 4 * 20_000
    assert sum(v for k, v in stats.decryptions.items() if k not in ("DET", "RND")) == 4 * 40_000
    assert stats.decryptions["RND"] == 4 * 20_000
    assert seen and seen == sorted(seen)  # (what a read saw only grew)


def test_a_read_committed_transaction_finds_a_table_committed_during_it(
    pair: Pair, watchdog: Watchdog
) -> None:
    """A statement of a READ COMMITTED transaction begun before another client created and
    filled a table finds the table and its committed rows, as on a plain database --
    though the client reads its catalog notifications only between transactions. A
    transaction's own DDL is found in it, and gone after its rollback, as there."""
    answers: list[list[object]] = []

    def run(dsn: str, connect: Callable[..., Any]) -> None:
        seen: list[object] = []
        with connect(dsn, autocommit=True) as a, connect(dsn) as b:
            for i in range(3):
                b.execute("SELECT 1").fetchall()  # the transaction is open
                a.execute(f"CREATE TABLE late{i} (id integer PRIMARY KEY, v text)")
                a.execute(f"INSERT INTO late{i} VALUES (1, 'x{i}')")
                seen.append(b.execute(f"SELECT id, v FROM late{i}").fetchall())
                b.execute(f"CREATE TABLE own{i} (id integer)")
                seen.append(b.execute(f"SELECT count(*) FROM own{i}").fetchall())
                b.rollback()
                seen.append(b.execute(f"SELECT count(*) FROM late{i}").fetchall())
                try:
                    b.execute(f"SELECT count(*) FROM own{i}")
                except psycopg.errors.UndefinedTable as exc:
                    seen.append(exc.sqlstate)
                b.rollback()
        answers.append(seen)

    watchdog.start(run, pair.plain, psycopg.connect, name="plain")
    watchdog.join_all(120)
    watchdog.start(
        run, pair.enc, partial(adaptive_client.connect, master_key=pair.key), name="client"
    )
    watchdog.join_all(120)
    expected = [row for i in range(3) for row in ([(1, f"x{i}")], [(0,)], [(1,)], "42P01")]
    assert answers == [expected, expected]


def test_a_snapshot_transaction_finds_a_table_committed_during_it(
    pair: Pair, watchdog: Watchdog
) -> None:
    """Under REPEATABLE READ and SERIALIZABLE PostgreSQL finds a table another client
    created after the transaction's snapshot (its name lookups see every relation
    committed) and shows it empty (no row of it is in the snapshot); the transaction may
    write into it and reads back its own rows. The client gave 42P01 there. A table
    committed before the snapshot whose notification had not reached the client is
    found with its rows, as the snapshot holds them."""
    answers: list[list[object]] = []

    def run(dsn: str, connect: Callable[..., Any], level: psycopg.IsolationLevel) -> None:
        seen: list[object] = []
        with connect(dsn, autocommit=True) as a, connect(dsn) as b:
            b.isolation_level = level
            a.execute("CREATE TABLE known (id integer PRIMARY KEY)")
            for i in range(2):
                b.execute("SELECT count(*) FROM known").fetchall()  # the snapshot taken
                a.execute(f"CREATE TABLE late{i} (id integer PRIMARY KEY, v text)")
                a.execute(f"INSERT INTO late{i} VALUES (1, 'x{i}')")
                seen.append(b.execute(f"SELECT id, v FROM late{i} WHERE id = 1").fetchall())
                b.execute(f"INSERT INTO late{i} VALUES (2, 'y{i}')")
                seen.append(b.execute(f"SELECT id, v FROM late{i} ORDER BY id").fetchall())
                if i == 0:
                    b.rollback()
                else:
                    b.commit()
                seen.append(b.execute(f"SELECT id, v FROM late{i} ORDER BY id").fetchall())
                b.rollback()
        answers.append(seen)

    for level in (psycopg.IsolationLevel.REPEATABLE_READ, psycopg.IsolationLevel.SERIALIZABLE):
        answers.clear()
        with psycopg.connect(pair.plain, autocommit=True) as c:
            c.execute("DROP TABLE IF EXISTS known, late0, late1")
        with adaptive_client.connect(pair.enc, master_key=pair.key, autocommit=True) as c:
            c.execute("DROP TABLE IF EXISTS known, late0, late1")
        watchdog.start(run, pair.plain, psycopg.connect, level, name="plain")
        watchdog.join_all(120)
        watchdog.start(
            run,
            pair.enc,
            partial(adaptive_client.connect, master_key=pair.key),
            level,
            name="client",
        )
        watchdog.join_all(120)
        expected = [
            [],
            [(2, "y0")],
            [(1, "x0")],
            [],
            [(2, "y1")],
            [(1, "x1"), (2, "y1")],
        ]
        assert answers == [expected, expected], level


def test_a_snapshot_transaction_finds_a_table_its_client_was_not_told_of(pair: Pair) -> None:
    """A table committed before the transaction's snapshot, whose notification has not
    reached the client (another client's commit just before): found with the rows the
    snapshot holds, as PostgreSQL finds it."""
    key = pair.key
    with (
        adaptive_client.connect(pair.enc, master_key=key, autocommit=True) as a,
        adaptive_client.connect(pair.enc, master_key=key) as b,
    ):
        b.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        b.execute("SELECT 1").fetchall()
        b.rollback()
        b._notifications.arrived = lambda: False  # type: ignore[attr-defined]  # (late)
        a.execute("CREATE TABLE early (id integer PRIMARY KEY, v text)")
        a.execute("INSERT INTO early VALUES (1, 'x')")
        assert b.execute("SELECT 1").fetchall() == [(1,)]  # the snapshot, after the commit
        a.execute("INSERT INTO early VALUES (2, 'later')")  # (not in the snapshot)
        assert b.execute("SELECT id, v FROM early ORDER BY id").fetchall() == [(1, "x")]
        b.rollback()


def test_a_failed_snapshot_transaction_answers_25p02_for_a_new_table(pair: Pair) -> None:
    """In a failed transaction a statement on a table another client created meanwhile
    gets PostgreSQL's 25P02, as any statement there does (not 42P01)."""
    codes: list[str | None] = []
    for dsn, connect in (
        (pair.plain, psycopg.connect),
        (pair.enc, partial(adaptive_client.connect, master_key=pair.key)),
    ):
        with connect(dsn, autocommit=True) as a, connect(dsn) as b:
            b.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            b.execute("SELECT 1").fetchall()
            a.execute("CREATE TABLE failed_late (id integer PRIMARY KEY)")
            with pytest.raises(psycopg.errors.DivisionByZero):
                b.execute("SELECT 1 / 0")
            try:
                b.execute("SELECT id FROM failed_late").fetchall()
            except psycopg.Error as exc:
                codes.append(exc.sqlstate)
            b.rollback()
            assert b.execute("SELECT count(*) FROM failed_late").fetchall() == [(0,)]
            b.rollback()
    assert codes == ["25P02", "25P02"]
