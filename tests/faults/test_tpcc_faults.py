"""TPC-C on an adaptive database under faults: peels during the measured run (no
priming), and a server restart in the middle of a run.

The restart happens on a throwaway cluster of its own (initdb into a temporary
directory, another port): the shared test cluster is never restarted.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from adaptive_client.admin.embedded import EmbeddedCluster
from adaptive_client.catalog.install import install
from adaptive_client.catalog.keys import MasterKey
from tpcc import driver
from tpcc.check import check
from tpcc.load import TINY, load

pytestmark = pytest.mark.slow

# what a client may see when the server goes away under it
CONNECTION_ERRORS = {
    "AdminShutdown",
    "OperationalError",
    "InterfaceError",
    "ConnectionTimeout",
    "CannotConnectNow",
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _orders(dsn: str, key: MasterKey) -> int:
    conn = driver.open_connection("adaptive", dsn, key.hex(), "read committed")
    try:
        row = conn.execute("SELECT count(*) FROM orders").fetchone()
        conn.commit()
        return int(row[0])
    finally:
        conn.close()


def _load(dsn: str, key: MasterKey) -> None:
    conn = driver.open_connection("adaptive", dsn, key.hex(), "read committed")
    load(conn, 1, TINY)
    conn.close()


def _spec(dsn: str, key: MasterKey, clients: int, duration: float) -> driver.RunSpec:
    return driver.RunSpec(
        config="adaptive",
        dsn=dsn,
        clients=clients,
        duration=duration,
        warmup=0,
        warehouses=1,
        master_key=key.hex(),
        scale=TINY,
        prime=False,
    )


@pytest.mark.parametrize("clients", [4, 20])
def test_peels_during_the_measured_run_are_retried(
    new_database: Any, master_key: MasterKey, clients: int
) -> None:
    """All-RND start, no priming: the peels happen while clients run REPEATABLE READ
    transactions, whose stale snapshots are retried by the driver; check passes."""
    dsn = new_database("tpcc_noprime")
    _load(dsn, master_key)
    result = driver.run(_spec(dsn, master_key, clients=clients, duration=8), log=lambda m: None)
    assert result["peels"]["measured"] > 0 and result["peels"]["warmup"] == 0, result["peels"]
    assert not result["errors"], result["errors"]
    assert sum(result["retries"].values()) > 0, result["retries"]
    assert result["tpm"] > 0
    conn = driver.open_connection("adaptive", dsn, master_key.hex(), "repeatable read")
    assert check(conn) == []
    conn.close()
    print(
        f"{clients} clients from all-RND: tpm {result['tpm']:.0f}, "
        f"peels in the measured run {result['peels']['measured']}, retries {result['retries']}"
    )


@pytest.fixture()
def own_cluster() -> Iterator[EmbeddedCluster]:
    root = Path(tempfile.mkdtemp(prefix="adaptive-restart-"))
    root.chmod(0o755)  # the server runs as the postgres OS user
    cluster = EmbeddedCluster(root, port=_free_port(), dbname="tpcc_restart")
    try:
        cluster.up()
        yield cluster
    finally:
        cluster.destroy()
        subprocess.run(["rm", "-rf", str(root)], check=False)


def test_server_restart_during_an_adaptive_run(
    own_cluster: EmbeddedCluster, master_key: MasterKey
) -> None:
    dsn = own_cluster.dsn()
    with psycopg.connect(dsn) as c:
        install(c)
    _load(dsn, master_key)
    before = _orders(dsn, master_key)
    mid: dict[str, int] = {}

    def restart() -> None:
        time.sleep(4)
        own_cluster.down()  # pg_ctl stop -m fast: sessions are terminated
        time.sleep(0.5)
        own_cluster.up()
        mid["orders"] = _orders(dsn, master_key)

    restarter = threading.Thread(target=restart)
    restarter.start()
    result = driver.run(_spec(dsn, master_key, clients=4, duration=12), log=lambda m: None)
    restarter.join(60)
    assert "orders" in mid
    errors = {k.split(": ")[1] for k in result["errors"]}
    assert errors <= CONNECTION_ERRORS, result["errors"]  # failed cleanly, nothing else
    after = _orders(dsn, master_key)
    committed_new_orders = result["committed"].get("new_order", 0)
    assert after - before >= committed_new_orders  # nothing committed was lost
    assert after > mid["orders"]  # the clients reconnected and went on
    env = {**os.environ, "ADAPTIVE_MASTER_KEY": master_key.hex()}
    out = subprocess.run(
        [sys.executable, "-m", "tpcc.cli", "check", "--config", "adaptive", "--dsn", dsn],
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.returncode == 0 and "consistent" in out.stdout, out
    print(
        f"restart: {sum(result['committed'].values())} transactions committed, "
        f"errors {result['errors']}, orders {before} -> {mid['orders']} (restart) -> {after}"
    )
