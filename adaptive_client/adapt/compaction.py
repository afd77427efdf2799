"""Tables compacted after an adaptation rewrote every row.

A peel, an onion built on first use and a join adjustment rewrite a column in every row
with one UPDATE.  PostgreSQL writes each updated row as a new version: the table's file
doubles, and the space the old versions leave (reclaimed by autovacuum later) is then
filled by the application's inserts scattered over the whole file.  TPC-C's adaptive
database, primed (two or three onions of its largest tables built or peeled), stored
order lines in four times the pages of the same rows loaded once, and its inserts and
updates cost the server several times the encrypted configuration's.

So once the adaptation has committed, and the application holds no transaction open, the
client compacts the tables it rewrote with ``VACUUM (FULL, ANALYZE)`` -- never on the
statement's path: a :class:`Compactor` does it in the background, on a connection of its
own, while the application goes on.  ``VACUUM FULL`` is PostgreSQL's own rewrite,
MVCC-safe (versions a running transaction may still see are kept), about a fifth of the
time the UPDATE took, and ``ANALYZE`` gives the planner the rewritten table's statistics
(a new onion's values, a peeled layer's distribution); a table left uncompacted (too
small to be worth it, or held) is analyzed alone.  It holds the table's ACCESS
EXCLUSIVE lock meanwhile, as the peel did.  It first waits for the transactions that
began before the adaptation committed to end -- anywhere in the cluster: until then the
replaced versions are not removable (at most :data:`BACKGROUND_WAIT_MS` in the
background) -- then for the table's lock: at most 1 s, and past
the server's ``deadlock_timeout`` in any case -- an autovacuum holding the table (which
the rewrite's dead rows themselves call in) is cancelled by the waiting VACUUM FULL's
deadlock check after that timeout, and a shorter wait would give up first.  One
client compacts a table at a time; another that finds it being compacted goes on.  A
table another transaction holds a lock on past that wait, or an older transaction that
runs on, leaves the table as it is (the DBA's ``VACUUM FULL`` does the same later), and a
table smaller than :data:`MIN_PAGES` is not worth the lock.  The provider learns nothing:
the rows and their values are the ones the adaptation wrote.

Behind a transaction pooler the background connection's statements may each run on
another server session: the session advisory lock would stay on one and its release
miss it, the ``lock_timeout`` would bound some other client's statements, and
``VACUUM`` cannot run in a transaction that would hold both.  A :class:`Compactor` made
with ``rewrite=False`` then only analyzes the tables (the DBA's ``VACUUM FULL`` on a
direct connection compacts them: docs/poolers.md), and :func:`compact` compacts nothing
on a connection it finds :func:`behind_pooler` (an explicit peel's, made from a
connection string that reaches the server through one).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import psycopg
from psycopg import sql

MIN_PAGES = 1024  # 8 MiB of 8 KiB pages: a smaller table is read whole in no time anyway
# how long the client waits for older transactions to end (and then, separately, for the
# table's lock: LOCK_WAIT_MS): an adaptation of a table this size took seconds already
WAIT_MS = 3000
LOCK_WAIT_MS = 1000  # (VACUUM FULL queued for the lock holds every later statement back)
# how long past the server's deadlock_timeout the lock wait lasts at least: the deadlock
# check then cancels an autovacuum of the table, which releases its lock at its next page
AUTOVACUUM_CANCEL_MS = 500


def compact(
    conn: psycopg.Connection[Any],
    tables: Iterable[str],
    wait_ms: int,
    stopped: threading.Event | None = None,
) -> list[str]:
    """``VACUUM FULL`` each of ``tables`` (anonymized names) of at least :data:`MIN_PAGES`
    pages on ``conn`` (autocommit, idle); return the ones compacted.  One client at a
    time compacts a table (a session advisory lock per table): the others go on.
    ``stopped``: set, the wait for older transactions ends (nothing is compacted).
    Behind a pooler nothing is compacted (the lock and the timeout need a session)."""
    tables = [t for t in tables if _pages(conn, t) >= MIN_PAGES]
    if tables and behind_pooler(conn):
        return []
    mine = [t for t in tables if _try_lock(conn, t)]
    done: list[str] = []
    try:
        if not mine or not older_transactions_ended(conn, wait_ms, stopped):
            return done  # the old row versions are still visible to someone: nothing to gain
        lock_wait = lock_wait_ms(conn)
        for anon in mine:
            conn.execute(f"SET lock_timeout = '{lock_wait}ms'")
            try:
                conn.execute(sql.SQL("VACUUM (FULL, ANALYZE) {}").format(sql.Identifier(anon)))
                done.append(anon)
            except psycopg.errors.LockNotAvailable:
                pass  # another transaction holds the table: left as it is
            finally:
                conn.execute("RESET lock_timeout")
        return done
    finally:
        for anon in mine:
            conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (_KEY + anon,))


# how long the background compaction waits for the transactions older than the adaptation
# (it holds nothing meanwhile: a long one only delays the compaction)
BACKGROUND_WAIT_MS = 60_000


class Compactor:
    """Compacts the tables a connection's adaptations rewrote, in the background.

    One thread and one connection (opened by ``connect`` on first use) per client
    connection; :meth:`submit` never waits.  The thread waits for the server only
    through psycopg, which releases the GIL; :meth:`close` cancels a compaction under
    way (the table stays as it was: ``VACUUM FULL`` rolls back whole) and ends the
    thread.  ``rewrite=False``: the tables are analyzed only (behind a transaction
    pooler)."""

    def __init__(
        self, connect: Callable[[], psycopg.Connection[Any]], rewrite: bool = True
    ) -> None:
        self._connect = connect
        self._rewrite = rewrite
        self._queue: list[str] = []
        self._busy = False
        self._closed = threading.Event()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._conn: psycopg.Connection[Any] | None = None

    def submit(self, tables: Iterable[str]) -> None:
        """Queue ``tables`` (anonymized names) for compaction, and return."""
        with self._cond:
            if self._closed.is_set():
                return
            self._queue += [t for t in tables if t not in self._queue]
            if self._thread is None or not self._thread.is_alive():
                # (none yet, or none in this process: a fork copies no thread)
                self._thread = threading.Thread(
                    target=self._run, name="adaptive-compaction", daemon=True
                )
                self._thread.start()
            self._cond.notify_all()

    def idle(self, timeout: float) -> bool:
        """Wait (at most ``timeout`` seconds) until nothing is queued or under way."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._queue and not self._busy, timeout)

    def close(self) -> None:
        with self._cond:
            self._closed.set()
            self._queue.clear()
            self._cond.notify_all()
            conn, thread = self._conn, self._thread
        if conn is not None and not conn.closed:
            with contextlib.suppress(psycopg.Error):
                (getattr(conn, "cancel_safe", None) or conn.cancel)()
        if thread is not None:
            thread.join(timeout=10)

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: bool(self._queue) or self._closed.is_set())
                if self._closed.is_set():
                    break
                tables, self._queue, self._busy = self._queue, [], True
            try:
                if self._conn is None:
                    self._conn = self._connect()
                compacted = (
                    compact(self._conn, tables, BACKGROUND_WAIT_MS, self._closed)
                    if self._rewrite
                    else []
                )
                for anon in tables:  # (the rest: statistics of the rewritten columns)
                    if anon not in compacted and not self._closed.is_set():
                        self._conn.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(anon)))
            except psycopg.Error:
                # it only saves the server work: the tables stay as they are, and a
                # broken connection is opened again for the next ones
                if self._conn is not None and self._conn.closed:
                    self._conn = None
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()
        if self._conn is not None:
            with contextlib.suppress(psycopg.Error):
                self._conn.close()


def after_adaptation(conn: psycopg.Connection[Any], tables: Iterable[str]) -> None:
    """:func:`compact` after an adaptation has committed: it only saves the server work,
    so a failure is not the caller's -- the adaptation stands, the table stays as it is."""
    with contextlib.suppress(psycopg.Error):
        compact(conn, tables, WAIT_MS)


_KEY = "adaptive compaction of "


def behind_pooler(conn: psycopg.Connection[Any]) -> bool:
    """Whether ``conn`` reaches its backend through a pooler: the process id announced
    at connection time (a pooler announces a cancel key of its own) is not the
    backend's."""
    row = conn.execute("SELECT pg_backend_pid()").fetchone()
    return row is not None and row[0] != conn.pgconn.backend_pid


def lock_wait_ms(conn: psycopg.Connection[Any]) -> int:
    """How long a VACUUM FULL waits for its table's lock: :data:`LOCK_WAIT_MS`, and
    :data:`AUTOVACUUM_CANCEL_MS` past the server's ``deadlock_timeout`` at least."""
    # (read as an interval: the server logs the statement, and its text names nothing
    # of the application's -- a leak scan looks for their words there)
    row = conn.execute(
        "SELECT extract(epoch FROM current_setting('deadlock_timeout')::interval) * 1000"
    ).fetchone()
    deadlock_ms = round(float(row[0])) if row is not None else 1000
    return max(LOCK_WAIT_MS, deadlock_ms + AUTOVACUUM_CANCEL_MS)


def _try_lock(conn: psycopg.Connection[Any], anon: str) -> bool:
    row = conn.execute(
        "SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (_KEY + anon,)
    ).fetchone()
    return bool(row and row[0])


def _pages(conn: psycopg.Connection[Any], anon: str) -> int:
    row = conn.execute(
        "SELECT pg_relation_size(to_regclass(%s)) / current_setting('block_size')::int",
        (sql.Identifier(anon).as_string(conn),),
    ).fetchone()
    return int(row[0]) if row is not None and row[0] is not None else 0


def older_transactions_ended(
    conn: psycopg.Connection[Any], wait_ms: int, stopped: threading.Event | None = None
) -> bool:
    """Wait (at most ``wait_ms``, and while ``stopped`` is not set) until every
    transaction running now has ended.

    ``VACUUM FULL`` keeps a row version any snapshot may still see, and a snapshot's
    horizon is the oldest transaction running in the whole cluster: right after the
    adaptation committed, the versions it replaced are kept while any transaction that
    began before it -- in any database -- runs on."""
    row = conn.execute("SELECT pg_snapshot_xmax(pg_current_snapshot())").fetchone()
    assert row is not None
    deadline = time.monotonic() + wait_ms / 1000
    while True:
        oldest = conn.execute("SELECT pg_snapshot_xmin(pg_current_snapshot())").fetchone()
        if oldest is not None and int(str(oldest[0])) >= int(str(row[0])):
            return True
        if time.monotonic() > deadline:
            return False
        if stopped is None:
            time.sleep(0.01)
        elif stopped.wait(0.01):
            return False


__all__ = [
    "AUTOVACUUM_CANCEL_MS",
    "BACKGROUND_WAIT_MS",
    "LOCK_WAIT_MS",
    "MIN_PAGES",
    "WAIT_MS",
    "Compactor",
    "behind_pooler",
    "compact",
    "lock_wait_ms",
    "older_transactions_ended",
]
