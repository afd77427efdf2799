"""Concurrency scenarios, each run in a process of its own by the tests.

A scenario that goes wrong the way these are about -- a thread waiting for the server
while it holds the GIL -- stops every thread of its process, the test's own watchdog
included.  So each runs in a child process the test waits for with a timeout: a hang
kills the child and fails the test, it cannot stop the run.

    python -m tests.concurrency.scenarios NAME DRIVER DSN [ARGUMENT]

``DRIVER`` is ``plain`` (psycopg) or ``adaptive`` (the client; the master key in
``ADAPTIVE_MASTER_KEY``).  The scenario prints one line of JSON: what it observed.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg

import adaptive_client

# How long the holder of a lock keeps it while the other connection waits.
HOLD_SECONDS = 1.0


def connect(driver: str, dsn: str, autocommit: bool = False) -> Any:
    if driver == "plain":
        return psycopg.connect(dsn, autocommit=autocommit)
    return adaptive_client.connect(dsn, autocommit=autocommit)


def setup(driver: str, dsn: str) -> None:
    with connect(driver, dsn, autocommit=True) as c:
        c.execute("CREATE TABLE t (id integer PRIMARY KEY, x integer, y text)")
        c.execute("INSERT INTO t VALUES (1, 0, 'a'), (2, 0, 'b'), (3, 0, 'c')")


class Ticker:
    """A thread that wakes every 10 ms and records the largest gap between two wakes:
    how long the process's other threads were kept from running."""

    def __init__(self) -> None:
        self.largest = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        last = time.perf_counter()
        while not self._stop.wait(0.01):
            now = time.perf_counter()
            self.largest = max(self.largest, now - last - 0.01)
            last = now

    def __enter__(self) -> Ticker:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()


# -- two connections of one process contending for a lock ------------------------------------
# (holder's statements, waiter's statement, the waiter's statement warmed first)
CONTENTION: dict[str, tuple[list[str], str]] = {
    "update": (["UPDATE t SET x = x + 1 WHERE id = 1"], "UPDATE t SET x = x + 10 WHERE id = 1"),
    "select_for_update": (
        ["SELECT x FROM t WHERE id = 1 FOR UPDATE", "UPDATE t SET x = 5 WHERE id = 1"],
        "SELECT x FROM t WHERE id = 1 FOR UPDATE",
    ),
    "advisory_lock": (["SELECT pg_advisory_xact_lock(42)"], "SELECT pg_advisory_xact_lock(42)"),
    # the waiter's equality on y needs its Eq onion peeled: the peel's table lock waits
    # for the holder's transaction on t (plain: no wait)
    "peel": (["UPDATE t SET x = x WHERE id = 2"], "SELECT id FROM t WHERE y = 'b'"),
}


def _rows(cur: Any) -> Any:
    return cur.fetchall() if cur.description else cur.rowcount


def contention(driver: str, dsn: str, kind: str) -> dict[str, Any]:
    """The holder takes the lock in one thread and keeps it HOLD_SECONDS; the waiter
    (another connection of the same process, in another thread) asks for it; a ticker
    measures how long the process stood still."""
    setup(driver, dsn)
    holds, waits = CONTENTION[kind]
    holder, waiter = connect(driver, dsn), connect(driver, dsn)
    for conn in (holder, waiter):  # prepared on the direct path, as in a running app
        for _ in range(6):
            for text in (*holds, waits) if kind != "peel" else holds:
                conn.execute(text)
            conn.rollback()
    locked = threading.Event()
    out: dict[str, Any] = {}

    def hold() -> None:
        for text in holds:
            holder.execute(text)
        locked.set()
        # (a peel waits a bounded time beside an open transaction: less than that)
        time.sleep(HOLD_SECONDS if kind != "peel" else 1.0)
        holder.commit()
        out["holder_done"] = time.perf_counter()

    def wait() -> None:
        locked.wait()
        started = time.perf_counter()
        cur = waiter.execute(waits)
        out["waited"] = time.perf_counter() - started
        out["result"] = _rows(cur)
        out["waiter_done"] = time.perf_counter()
        waiter.commit()

    with Ticker() as ticker:
        threads = [threading.Thread(target=hold), threading.Thread(target=wait)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    out["gap"] = ticker.largest
    out["final"] = holder.execute("SELECT id, x FROM t ORDER BY id").fetchall()
    out["order_ok"] = out["waiter_done"] >= out["holder_done"] - 0.05 or kind == "peel"
    for key in ("holder_done", "waiter_done"):
        out.pop(key)
    holder.close()
    waiter.close()
    return out


def contention_async(driver: str, dsn: str, kind: str) -> dict[str, Any]:
    """As :func:`contention`, with asyncio connections and tasks on one event loop."""
    setup(driver, dsn)
    holds, waits = CONTENTION[kind]

    async def aconnect() -> Any:
        if driver == "plain":
            return await psycopg.AsyncConnection.connect(dsn)
        return await adaptive_client.AsyncConnection.connect(dsn)

    async def main() -> dict[str, Any]:
        holder, waiter = await aconnect(), await aconnect()
        for conn in (holder, waiter):
            for _ in range(6):
                for text in (*holds, waits) if kind != "peel" else holds:
                    await conn.execute(text)
                await conn.rollback()
        out: dict[str, Any] = {}
        locked = asyncio.Event()
        largest = 0.0

        async def hold() -> None:
            for text in holds:
                await holder.execute(text)
            locked.set()
            await asyncio.sleep(HOLD_SECONDS if kind != "peel" else 1.0)
            await holder.commit()

        async def wait() -> None:
            await locked.wait()
            cur = await waiter.execute(waits)
            out["result"] = (await cur.fetchall()) if cur.description else cur.rowcount
            await waiter.commit()

        async def tick() -> None:  # the event loop's own responsiveness
            nonlocal largest
            last = time.perf_counter()
            while not done.is_set():
                await asyncio.sleep(0.01)
                now = time.perf_counter()
                largest = max(largest, now - last - 0.01)
                last = now

        done = asyncio.Event()
        ticking = asyncio.create_task(tick())
        await asyncio.gather(hold(), wait())
        done.set()
        await ticking
        out["gap"] = largest
        cur = await holder.execute("SELECT id, x FROM t ORDER BY id")
        out["final"] = await cur.fetchall()
        await holder.close()
        await waiter.close()
        return out

    return asyncio.run(main())


def lock_wait_ticker(driver: str, dsn: str) -> dict[str, Any]:
    """The lock holder is another session (a plain connection, as another process would
    be); the waiter's thread waits HOLD_SECONDS for the row: the ticker's largest gap."""
    setup(driver, dsn)
    waiter = connect(driver, dsn)
    for _ in range(6):
        waiter.execute("UPDATE t SET x = x + 1 WHERE id = 3")
        waiter.rollback()
    other = psycopg.connect(dsn)
    other.execute("SELECT 1")  # (the holder's table access goes through its own names)
    out: dict[str, Any] = {}
    with Ticker() as ticker:
        if driver == "plain":
            other.execute("UPDATE t SET x = x + 1 WHERE id = 3")
        else:  # the encrypted table's anonymized name: lock every row of it
            table = waiter.catalog.table("t").anon
            other.execute(f'SELECT 1 FROM "{table}" FOR UPDATE')

        def wait() -> None:
            started = time.perf_counter()
            waiter.execute("UPDATE t SET x = x + 1 WHERE id = 3")
            out["waited"] = time.perf_counter() - started
            waiter.commit()

        thread = threading.Thread(target=wait)
        thread.start()
        time.sleep(HOLD_SECONDS)
        other.commit()
        thread.join()
    out["gap"] = ticker.largest
    other.close()
    waiter.close()
    return out


# -- cancelling a wait --------------------------------------------------------------------------
def _blocked_update(driver: str, dsn: str) -> tuple[Any, Any]:
    """A connection whose next ``UPDATE t ... WHERE id = 3`` waits for another session's
    row lock; (that connection, the other session)."""
    setup(driver, dsn)
    conn = connect(driver, dsn)
    for _ in range(6):  # prepared: the direct path's wait
        conn.execute("UPDATE t SET x = x + 1 WHERE id = 3")
        conn.rollback()
    other = psycopg.connect(dsn)
    if driver == "plain":
        other.execute("UPDATE t SET x = x + 1 WHERE id = 3")
    else:
        other.execute(f'SELECT 1 FROM "{conn.catalog.table("t").anon}" FOR UPDATE')
    return conn, other


def _once_waiting(dsn: str, conn: Any, act: Callable[[], Any]) -> None:
    """Do ``act`` in a thread once the server shows ``conn``'s statement waiting for the
    lock (not after a fixed delay, which a loaded machine can outrun: a cancel or Ctrl-C
    sent before the statement is in its wait is not the case these scenarios test)."""
    pg = conn if isinstance(conn, psycopg.Connection) else conn.pg
    pid = pg.pgconn.backend_pid

    def watch() -> None:
        with psycopg.connect(dsn, autocommit=True) as probe:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                row = probe.execute(
                    "SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", (pid,)
                ).fetchone()
                if row and row[0] == "Lock":
                    break
                time.sleep(0.02)
        time.sleep(0.2)  # (the client well inside its wait)
        act()

    threading.Thread(target=watch, daemon=True).start()


def _after_cancel(conn: Any, error: BaseException) -> dict[str, Any]:
    out: dict[str, Any] = {"error": type(error).__name__}
    out["sqlstate"] = getattr(error, "sqlstate", None)
    try:
        conn.execute("SELECT 1")
        out["next"] = "ok"
    except psycopg.Error as exc:
        out["next"] = exc.sqlstate
    conn.rollback()
    out["after_rollback"] = conn.execute("SELECT x FROM t WHERE id = 3").fetchall()
    return out


def cancel_from_thread(driver: str, dsn: str) -> dict[str, Any]:
    """``conn.cancel()`` from another thread ends a lock wait with QueryCanceled."""
    conn, other = _blocked_update(driver, dsn)
    _once_waiting(dsn, conn, lambda: (conn.cancel_safe if driver == "plain" else conn.cancel)())
    started = time.perf_counter()
    try:
        conn.execute("UPDATE t SET x = x + 1 WHERE id = 3")
        error: BaseException = AssertionError("not cancelled")
    except psycopg.Error as exc:
        error = exc
    out = {"waited": time.perf_counter() - started, **_after_cancel(conn, error)}
    other.rollback()
    return out


def interrupt(driver: str, dsn: str) -> dict[str, Any]:
    """Ctrl-C (SIGINT) during a lock wait: KeyboardInterrupt, the statement cancelled on
    the server, the connection usable after a rollback."""
    import os
    import signal

    # (a process started in the background of a shell without job control inherits
    # SIGINT ignored, and Python then leaves it so: Ctrl-C must raise here, as at a
    # terminal)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    conn, other = _blocked_update(driver, dsn)
    _once_waiting(dsn, conn, lambda: os.kill(os.getpid(), signal.SIGINT))
    started = time.perf_counter()
    try:
        conn.execute("UPDATE t SET x = x + 1 WHERE id = 3")
        error: BaseException = AssertionError("not interrupted")
    except KeyboardInterrupt as exc:
        error = exc
    out = {"waited": time.perf_counter() - started, **_after_cancel(conn, error)}
    other.rollback()
    return out


def cancel_async_task(driver: str, dsn: str) -> dict[str, Any]:
    """Cancelling the asyncio task awaiting a lock wait: CancelledError, the statement
    cancelled on the server, the connection usable after a rollback."""
    setup(driver, dsn)

    async def main() -> dict[str, Any]:
        if driver == "plain":
            conn: Any = await psycopg.AsyncConnection.connect(dsn)
        else:
            conn = await adaptive_client.AsyncConnection.connect(dsn)
        for _ in range(6):
            await conn.execute("UPDATE t SET x = x + 1 WHERE id = 3")
            await conn.rollback()
        other = psycopg.connect(dsn)
        if driver == "plain":
            other.execute("UPDATE t SET x = x + 1 WHERE id = 3")
        else:
            anon = conn.sync_connection.catalog.table("t").anon
            other.execute(f'SELECT 1 FROM "{anon}" FOR UPDATE')
        task = asyncio.create_task(conn.execute("UPDATE t SET x = x + 1 WHERE id = 3"))
        await asyncio.sleep(0.5)
        task.cancel()
        out: dict[str, Any] = {}
        try:
            await asyncio.wait_for(task, 30)
            out["error"] = "none"
        except asyncio.CancelledError:
            out["error"] = "CancelledError"
        try:
            await conn.execute("SELECT 1")
            out["next"] = "ok"
        except psycopg.Error as exc:
            out["next"] = exc.sqlstate
        await conn.rollback()
        cur = await conn.execute("SELECT x FROM t WHERE id = 3")
        out["after_rollback"] = await cur.fetchall()
        other.rollback()
        await conn.close()
        return out

    return asyncio.run(main())


# -- one connection among threads ------------------------------------------------------------
def serial_threads(driver: str, dsn: str) -> dict[str, Any]:
    """One connection used by 8 threads at once, 10,000 rows with a ``serial`` key, and
    then by four threads in turn (a pool of one, a Flask app's handler threads)."""
    with connect(driver, dsn, autocommit=True) as c:
        c.execute("CREATE TABLE s (id serial PRIMARY KEY, who integer, n integer)")
        c.execute("CREATE TABLE turn (id serial, who integer)")
    conn = connect(driver, dsn, autocommit=True)

    def insert(who: int) -> None:
        cur = conn.cursor()
        for batch in range(25):
            rows = [(who, batch * 50 + i) for i in range(50)]
            cur.executemany("INSERT INTO s (who, n) VALUES (%s, %s)", rows)

    threads = [threading.Thread(target=insert, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for who in range(4):  # in turn: each thread inserts one row and ends
        thread = threading.Thread(
            target=conn.execute, args=("INSERT INTO turn (who) VALUES (%s)", (who,))
        )
        thread.start()
        thread.join()
    out = {
        "rows": conn.execute("SELECT count(*), count(DISTINCT id) FROM s").fetchall(),
        "per_thread": conn.execute(
            "SELECT who, count(*) FROM s GROUP BY who ORDER BY who"
        ).fetchall(),
        "turns": conn.execute("SELECT id, who FROM turn ORDER BY id").fetchall(),
    }
    conn.close()
    return out


# -- a pool shared by threads, with row contention ---------------------------------------------
POOL_SIZE, POOL_THREADS, HOT_ROWS = 5, 20, 5


def pool_contention(driver: str, dsn: str, limit: str) -> dict[str, Any]:
    """20 threads through a pool of 5: each transaction locks one of 5 hot rows, bumps
    it and logs a row.  ``limit``: a number of seconds (``60s``), or the JSON list of
    rounds per thread another run made (to repeat exactly that work)."""
    with connect(driver, dsn, autocommit=True) as c:
        c.execute("CREATE TABLE hot (k integer PRIMARY KEY, n integer)")
        c.execute("CREATE TABLE log (id serial PRIMARY KEY, who integer, round integer, v text)")
        for k in range(HOT_ROWS):
            c.execute("INSERT INTO hot VALUES (%s, 0)", (k,))
    if driver == "plain":
        import psycopg_pool

        pool: Any = psycopg_pool.ConnectionPool(dsn, min_size=POOL_SIZE, max_size=POOL_SIZE)
    else:
        from adaptive_client.dbapi.pool import ConnectionPool

        pool = ConnectionPool(dsn, min_size=POOL_SIZE, max_size=POOL_SIZE)
    pool.wait(timeout=60)
    seconds = float(limit[:-1]) if limit.endswith("s") else None
    rounds_wanted = None if seconds is not None else json.loads(limit)
    deadline = time.monotonic() + (seconds or 0)
    rounds = [0] * POOL_THREADS
    retries = [0]

    def work(who: int) -> None:
        r = 0
        while time.monotonic() < deadline if rounds_wanted is None else r < rounds_wanted[who]:
            k = (who + r) % HOT_ROWS
            while True:
                try:
                    with pool.connection() as c:
                        c.execute("SELECT n FROM hot WHERE k = %s FOR UPDATE", (k,)).fetchall()
                        c.execute("UPDATE hot SET n = n + 1 WHERE k = %s", (k,))
                        c.execute(
                            "INSERT INTO log (who, round, v) VALUES (%s, %s, %s)",
                            (who, r, f"t{who}r{r}"),
                        )
                    break
                except (psycopg.errors.SerializationFailure, psycopg.errors.DeadlockDetected):
                    retries[0] += 1  # (the client's retryable errors are 40001 too)
            r += 1
        rounds[who] = r

    threads = [threading.Thread(target=work, args=(w,)) for w in range(POOL_THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with pool.connection() as c:
        out = {
            "rounds": rounds,
            "retries": retries[0],
            "hot": c.execute("SELECT k, n FROM hot ORDER BY k").fetchall(),
            "log": c.execute("SELECT who, round, v FROM log ORDER BY who, round").fetchall(),
            "ids": c.execute("SELECT count(*), count(DISTINCT id) FROM log").fetchall(),
        }
    pool.close()
    return out


SCENARIOS: dict[str, Callable[..., dict[str, Any]]] = {
    "cancel_from_thread": cancel_from_thread,
    "interrupt": interrupt,
    "cancel_async_task": cancel_async_task,
    "serial_threads": serial_threads,
    "pool_contention": pool_contention,
    **{f"contention_{k}": (lambda d, s, k=k: contention(d, s, k)) for k in CONTENTION},
    **{f"async_{k}": (lambda d, s, k=k: contention_async(d, s, k)) for k in CONTENTION},
    "lock_wait_ticker": lock_wait_ticker,
}


def main(argv: list[str]) -> None:
    name, driver, dsn, *more = argv
    print(json.dumps(SCENARIOS[name](driver, dsn, *more), default=str))


if __name__ == "__main__":
    main(sys.argv[1:])
