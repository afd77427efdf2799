"""Two connections of one process contending for a lock, in threads and in asyncio: they
finish as with plain psycopg, and the process's other threads (the event loop) keep
running while one waits for the server.

Each scenario runs in a child process (scenarios.py says why) under a timeout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import Pair
from .scenarios import CONTENTION, HOLD_SECONDS

ROOT = Path(__file__).parents[2]
TIMEOUT = 90  # seconds a scenario may take before it counts as hung


def run(
    name: str, driver: str, dsn: str, pair: Pair, *args: str, timeout: float = TIMEOUT
) -> dict[str, Any]:
    """What scenario ``name`` observed, run in a child process killed after ``timeout``."""
    env = {**os.environ, "ADAPTIVE_MASTER_KEY": pair.key.hex()}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tests.concurrency.scenarios", name, driver, dsn, *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{name} on the {driver} database hung (killed after {timeout} s)")
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("kind", sorted(CONTENTION))
def test_two_connections_in_threads(kind: str, pair: Pair) -> None:
    plain = run(f"contention_{kind}", "plain", pair.plain, pair)
    enc = run(f"contention_{kind}", "adaptive", pair.enc, pair)
    assert enc["result"] == plain["result"]
    assert enc["final"] == plain["final"]
    assert enc["order_ok"], "the waiter finished before the holder committed"
    if kind != "peel":
        assert enc["waited"] > 0.75 * HOLD_SECONDS  # it did wait for the holder
    assert enc["gap"] < 0.1, f"the process stood still {enc['gap']:.3f} s"


@pytest.mark.parametrize("kind", sorted(CONTENTION))
def test_two_connections_in_asyncio(kind: str, pair: Pair) -> None:
    plain = run(f"async_{kind}", "plain", pair.plain, pair)
    enc = run(f"async_{kind}", "adaptive", pair.enc, pair)
    assert enc["result"] == plain["result"]
    assert enc["final"] == plain["final"]
    assert enc["gap"] < 0.1, f"the event loop stood still {enc['gap']:.3f} s"


def test_other_threads_run_during_a_lock_wait(pair: Pair) -> None:
    """A 1 s wait for a row another session holds: the largest gap a ticker thread sees
    is under 100 ms (it was the whole wait when libpq waited holding the GIL)."""
    enc = run("lock_wait_ticker", "adaptive", pair.enc, pair)
    assert enc["waited"] > 0.75 * HOLD_SECONDS
    assert enc["gap"] < 0.1, f"the process stood still {enc['gap']:.3f} s"


@pytest.mark.parametrize("how", ["cancel_from_thread", "interrupt", "cancel_async_task"])
def test_a_lock_wait_is_cancelled_as_with_psycopg(how: str, pair: Pair) -> None:
    """conn.cancel() from another thread, Ctrl-C, an asyncio task's cancellation: the
    wait ends, the transaction is failed, a rollback makes the connection usable."""
    plain = run(how, "plain", pair.plain, pair)
    enc = run(how, "adaptive", pair.enc, pair)
    assert enc.pop("waited", 0) < 10
    plain.pop("waited", None)
    assert enc == plain
    assert enc["next"] == "25P02"  # InFailedSqlTransaction
