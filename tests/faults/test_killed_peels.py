"""Rule 3 of the design: a peel killed at any point leaves the column wholly at the old
layer or wholly at the new one, with metadata, constraint and indexes to match.

A 200,000-row onion is built once per module; each kill lands at a random moment of a
peel (from the lock through the UPDATE, the index rebuild and the commit), and after
each one the column is checked set-based in SQL (see ``bigtable.BigTable.state``).
Peels that committed before the kill landed are undone by restoring the original
ciphertexts, so that every kill hits a peel from RND.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import random
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.admin.controls import peel_column
from adaptive_client.catalog.keys import MasterKey

from .bigtable import BigTable, peel_backends, plaintexts_through_client

ROWS = 200_000
KILLS = 20

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def big(new_database: Any, master_key: Any) -> Iterator[BigTable]:
    yield BigTable.build(new_database("kill"), master_key, ROWS)


def _wait_for_peel_start(dsn: str, pid: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    with psycopg.connect(dsn, autocommit=True) as c:
        while time.monotonic() < deadline:
            row = c.execute(
                "SELECT state, query FROM pg_stat_activity WHERE pid = %s", (pid,)
            ).fetchone()
            if row and row[0] == "active" and "adaptive.peel_layer" in (row[1] or ""):
                return
            time.sleep(0.002)
    raise AssertionError("the peel did not start")


def _wait_gone(dsn: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while peel_backends(dsn):
        assert time.monotonic() < deadline, "a killed peel's backend is still running"
        time.sleep(0.02)


# the kills are drawn over this part of an undisturbed peel's length, from its start:
# most land inside it, whatever the machine's load does to the peel's speed meanwhile
SPREAD = 0.6


def _peel_duration(big: BigTable) -> float:
    """One undisturbed peel, to spread the kills over its whole length."""
    if big.state() == "DET":  # left peeled by the previous test
        big.restore()
    t0 = time.monotonic()
    with psycopg.connect(big.dsn, autocommit=True) as c:
        assert peel_column(c, big.key, "big", "v", "Eq", "DET") == ROWS
    took = time.monotonic() - t0
    assert big.state() == "DET"
    big.restore()
    return took


def _finish(big: BigTable, outcomes: dict[str, int]) -> None:
    """After the kills: the column is still what was written, and a query peels it."""
    if big.state() == "DET":
        big.restore()
    with adaptive_client.connect(big.dsn, master_key=big.key, autocommit=True) as c:
        probe_id, probe_v = 4242, big.values[4242]
        assert c.execute("SELECT id FROM big WHERE v = %s", (probe_v,)).fetchall() == [(probe_id,)]
    assert big.state() == "DET"
    assert plaintexts_through_client(big) == big.values
    print(f"kills survived: {outcomes}")


def test_peel_survives_backend_termination(big: BigTable) -> None:
    rng = random.Random()
    duration = _peel_duration(big)
    outcomes = {"rolled back": 0, "committed first": 0}
    for _ in range(KILLS):
        conn = psycopg.connect(big.dsn, autocommit=True)
        pid = conn.info.backend_pid
        errors: list[BaseException] = []

        def run(conn: psycopg.Connection[Any] = conn, errors: list[BaseException] = errors) -> None:
            try:
                peel_column(conn, big.key, "big", "v", "Eq", "DET")
            except psycopg.OperationalError as exc:  # terminated: the expected outcome
                errors.append(exc)

        peeler = threading.Thread(target=run)
        peeler.start()
        _wait_for_peel_start(big.dsn, pid)
        time.sleep(rng.uniform(0, SPREAD * duration))
        with psycopg.connect(big.dsn, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        peeler.join(30)
        assert not peeler.is_alive()
        with contextlib.suppress(psycopg.Error):
            conn.close()
        _wait_gone(big.dsn)
        layer = big.state()
        assert (layer == "RND") == bool(errors), (layer, errors)
        outcomes["rolled back" if layer == "RND" else "committed first"] += 1
        if layer == "DET":
            big.restore()
    assert outcomes["rolled back"] >= KILLS // 2, outcomes
    _finish(big, outcomes)


def _child_peel(dsn: str, key_hex: str, backend_pid: Any) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        backend_pid.value = conn.info.backend_pid
        peel_column(conn, MasterKey(bytes.fromhex(key_hex)), "big", "v", "Eq", "DET")


def test_peel_survives_client_sigkill(big: BigTable) -> None:
    rng = random.Random()
    duration = _peel_duration(big)
    ctx = mp.get_context("fork")
    outcomes = {"rolled back": 0, "committed first": 0}
    for _ in range(KILLS):
        backend_pid = ctx.Value("i", 0)
        child = ctx.Process(target=_child_peel, args=(big.dsn, big.key.hex(), backend_pid))
        child.start()
        deadline = time.monotonic() + 30
        while backend_pid.value == 0:
            assert time.monotonic() < deadline and child.is_alive()
            time.sleep(0.001)
        _wait_for_peel_start(big.dsn, backend_pid.value)
        time.sleep(rng.uniform(0, SPREAD * duration))
        assert child.pid is not None
        os.kill(child.pid, signal.SIGKILL)
        child.join(10)
        _wait_gone(big.dsn)  # the orphaned backend notices within client_connection_check_interval
        layer = big.state()
        # killed, or (the kill drawn near the end) finished first, its peel committed
        assert child.exitcode == -signal.SIGKILL or (child.exitcode == 0 and layer == "DET"), (
            child.exitcode,
            layer,
        )
        outcomes["rolled back" if layer == "RND" else "committed first"] += 1
        if layer == "DET":
            big.restore()
    assert outcomes["rolled back"] >= KILLS // 2, outcomes
    _finish(big, outcomes)
