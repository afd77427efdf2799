"""Join adjustments under concurrency and failure (rules 2 and 3 of the design).

* two clients triggering the same adjustment at once, and crossing ones (a = b against
  b = a, a = b against b = c): every answer equals plain PostgreSQL's, the columns end
  under one key, nothing is lost;
* a client killed in the middle of an adjustment: the group is wholly under its old key
  or wholly under the new one, every value readable, the join right afterwards;
* a stale client writing into an adjusted column: refused as stale (retryable), then
  written under the new key once retried.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import random
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.catalog.onions import Onion
from adaptive_client.errors import RetryableError

RETRYABLE = (RetryableError, psycopg.errors.SerializationFailure, psycopg.errors.DeadlockDetected)
PAIRS = 4  # join-key columns per table: one fresh pair per concurrent round or kill


def _ddl(name: str) -> str:
    keys = ", ".join(f"k{i} integer" for i in range(PAIRS))
    return f"CREATE TABLE {name} (id integer PRIMARY KEY, {keys})"


def _rows(n: int, mod: int, seed: int) -> list[tuple[int, ...]]:
    rng = random.Random(seed)
    return [
        (i, *(None if rng.random() < 0.05 else rng.randrange(mod) for _ in range(PAIRS)))
        for i in range(n)
    ]


def _load(dsn: str, key: MasterKey, tables: dict[str, list[tuple[int, ...]]]) -> None:
    with adaptive_client.connect(dsn, master_key=key, peel="client") as c:
        for name, rows in tables.items():
            c.execute(_ddl(name))
            with c.cursor().copy(f"COPY {name} FROM STDIN") as copy:
                for r in rows:
                    copy.write_row(r)


def _expected_join(
    left: list[tuple[int, ...]], right: list[tuple[int, ...]], i: int
) -> list[tuple[int, int]]:
    by: dict[int, list[int]] = {}
    for r in right:
        if r[1 + i] is not None:
            by.setdefault(r[1 + i], []).append(r[0])
    return sorted((lr[0], rid) for lr in left for rid in by.get(lr[1 + i], []))  # type: ignore[arg-type]


def _join(conn: adaptive_client.Connection, a: str, b: str, i: int) -> list[tuple[int, int]]:
    return sorted(
        conn.execute(f"SELECT x.id, y.id FROM {a} x JOIN {b} y ON x.k{i} = y.k{i}").fetchall()
    )


def _retrying(fn: Callable[[], Any]) -> Any:
    for _ in range(20):
        try:
            return fn()
        except RETRYABLE:
            time.sleep(0.05)
    raise AssertionError("kept failing with retryable errors")


def _run_together(*fns: Callable[[], Any]) -> list[Any]:
    barrier = threading.Barrier(len(fns))
    out: list[Any] = [None] * len(fns)
    errors: list[BaseException] = []

    def run(k: int) -> None:
        try:
            barrier.wait()
            out[k] = _retrying(fns[k])
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(fns))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    return out


def test_concurrent_and_crossing_adjustments(new_database: Any, master_key: MasterKey) -> None:
    dsn = new_database("jconc")
    data = {n: _rows(400, 60, s) for s, n in enumerate(("ta", "tb", "tc"))}
    _load(dsn, master_key, data)
    clients = [
        adaptive_client.connect(dsn, master_key=master_key, peel=mode, autocommit=True)
        for mode in ("server", "client", "server")
    ]
    try:
        # the same adjustment from two clients at once
        got = _run_together(
            lambda: _join(clients[0], "ta", "tb", 0), lambda: _join(clients[1], "ta", "tb", 0)
        )
        assert got[0] == got[1] == _expected_join(data["ta"], data["tb"], 0)
        # crossing: a = b against b = a
        got = _run_together(
            lambda: _join(clients[0], "ta", "tb", 1), lambda: _join(clients[1], "tb", "ta", 1)
        )
        assert got[0] == _expected_join(data["ta"], data["tb"], 1)
        assert got[1] == _expected_join(data["tb"], data["ta"], 1)
        # crossing groups: a = b, b = c and c = a at once
        got = _run_together(
            lambda: _join(clients[0], "ta", "tb", 2),
            lambda: _join(clients[1], "tb", "tc", 2),
            lambda: _join(clients[2], "tc", "ta", 2),
        )
        assert got[0] == _expected_join(data["ta"], data["tb"], 2)
        assert got[1] == _expected_join(data["tb"], data["tc"], 2)
        assert got[2] == _expected_join(data["tc"], data["ta"], 2)
        with adaptive_client.connect(dsn, master_key=master_key) as fresh:
            for name, rows in data.items():
                assert sorted(fresh.execute(f"SELECT * FROM {name}").fetchall()) == rows
            for i in range(3):
                keys = {
                    fresh.catalog.table(t).column(f"k{i}").onions[Onion.EQ].keys["DET"]
                    for t in (("ta", "tb") if i < 2 else ("ta", "tb", "tc"))
                }
                assert len(keys) == 1
            log = fresh.control.execute(
                "SELECT count(*) FROM adaptive.peel_log WHERE mode = 'join'"
            ).fetchone()
            # k0 and k1: one column moved each; k2: two adjustments join three columns
            assert log == (4,)
    finally:
        for c in clients:
            c.close()


def _join_in_child(dsn: str, key_hex: str, i: int) -> None:
    with adaptive_client.connect(
        dsn, master_key=MasterKey.from_hex(key_hex), peel="client", autocommit=True
    ) as c:
        _join(c, "big_l", "big_r", i)


@pytest.mark.slow
def test_killed_adjustment_is_atomic(new_database: Any, master_key: MasterKey) -> None:
    dsn = new_database("jkill")
    left, right = _rows(40_000, 30_000, 1), _rows(40_000, 30_000, 2)
    _load(dsn, master_key, {"big_l": left, "big_r": right})
    ctx = mp.get_context("spawn")

    t0 = time.monotonic()
    child = ctx.Process(target=_join_in_child, args=(dsn, master_key.hex(), 0))
    child.start()
    child.join(300)
    took = time.monotonic() - t0
    assert child.exitcode == 0
    rng = random.Random(7)
    for i in range(1, PAIRS):
        child = ctx.Process(target=_join_in_child, args=(dsn, master_key.hex(), i))
        child.start()
        time.sleep(rng.uniform(0.3, 1.0) * took)
        if child.pid is not None and child.is_alive():
            os.kill(child.pid, signal.SIGKILL)
        child.join(60)
    deadline = time.monotonic() + 60
    with psycopg.connect(dsn, autocommit=True) as c:
        while c.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND state <> 'idle'"
        ).fetchone() != (0,):
            assert time.monotonic() < deadline
            time.sleep(0.05)
    with adaptive_client.connect(dsn, master_key=master_key, autocommit=True) as fresh:
        assert sorted(fresh.execute("SELECT * FROM big_l").fetchall()) == left
        assert sorted(fresh.execute("SELECT * FROM big_r").fetchall()) == right
        for i in range(PAIRS):
            assert _join(fresh, "big_l", "big_r", i) == _expected_join(left, right, i)


@pytest.mark.parametrize("written", [False, True])
def test_stale_writer_into_an_adjusted_column(
    new_database: Any, master_key: MasterKey, written: bool
) -> None:
    """Writers whose metadata predates a join adjustment: each transaction, which had
    only read, started again by the client (dbapi/restart.py), or, where it had written,
    refused with a retryable error and retried by the application; every row lands."""
    dsn = new_database("jstale")
    data = {n: _rows(50, 20, s) for s, n in enumerate(("sa", "sb", "sx"))}
    _load(dsn, master_key, data)
    adjuster = adaptive_client.connect(dsn, master_key=master_key, autocommit=True)
    writers = [adaptive_client.connect(dsn, master_key=master_key) for _ in range(2)]
    try:
        for n, w in enumerate(writers):  # cached metadata, a transaction open on sx
            w.execute("SELECT count(*) FROM sx").fetchall()
            if written:
                # (rolled back with the refused transaction: sx is not compared)
                w.execute("INSERT INTO sx VALUES (%s, %s, %s, %s, %s)", (2000 + n, 1, 1, 1, 1))
        _join(adjuster, "sa", "sb", 0)
        refused = 0
        for n, w in enumerate(writers):
            row = (1000 + n, 7, 7, 7, 7)
            try:
                for table in ("sa", "sb"):
                    w.execute(f"INSERT INTO {table} VALUES (%s, %s, %s, %s, %s)", row)
                w.commit()
            except RetryableError:
                refused += 1
                w.rollback()
                for table in ("sa", "sb"):
                    w.execute(f"INSERT INTO {table} VALUES (%s, %s, %s, %s, %s)", row)
                w.commit()
            for table in ("sa", "sb"):
                data[table].append(row)
        assert refused == (2 if written else 0)
        for name in ("sa", "sb"):
            got = sorted(adjuster.execute(f"SELECT * FROM {name}").fetchall())
            assert got == sorted(data[name])
        assert _join(adjuster, "sa", "sb", 0) == _expected_join(data["sa"], data["sb"], 0)
    finally:
        adjuster.close()
        for w in writers:
            w.close()
