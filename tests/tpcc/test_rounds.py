"""The sweep's rounds and templates: configurations interleaved round by round, rounds
merged into one point, a client that fails reporting instead of holding the run, and
templates settled (compacted, frozen, analyzed) before they are copied for timed runs."""

from __future__ import annotations

import multiprocessing
import os
import signal
import socket
import threading
import time
from collections import Counter
from typing import Any

import psycopg
import pytest

from tpcc import cli, driver
from tpcc.load import TINY


def test_each_round_runs_every_configuration_in_turn() -> None:
    todo = cli.schedule(
        ["plain", "encrypted", "adaptive"], [64], [0.0, 120.0], 3, [0.0], done=set()
    )
    assert [(n, lat) for n, lat, _ in todo] == [(64, 0.0), (64, 120.0)]
    zero, wan = todo[0][2], todo[1][2]
    # plain, its kept-rule twin where asked, encrypted, adaptive; then again
    assert zero == [["plain", cli.KEPT, "encrypted", "adaptive"]] * 3
    assert wan == [["plain", "encrypted", "adaptive"]] * 3
    flat = [v for r in zero for v in r]
    assert flat[:4] == flat[4:8] == flat[8:]  # interleaved, not one after another


def test_a_point_whose_configurations_all_ran_is_not_run_again() -> None:
    done = {(c, 8, 0.0) for c in ("plain", "encrypted", "adaptive")}
    todo = cli.schedule(["plain", "encrypted", "adaptive"], [8], [0.0, 60.0], 2, [], done)
    assert [(n, lat) for n, lat, _ in todo] == [(8, 60.0)]
    # the kept baseline missing: the point runs again, whole
    todo = cli.schedule(["plain", "encrypted", "adaptive"], [8], [0.0], 2, [0.0], done)
    assert [(n, lat) for n, lat, _ in todo] == [(8, 0.0)]


def _collected(committed: int, seconds: float, times: list[float]) -> driver.Collected:
    spec = driver.RunSpec(
        config="plain", dsn="", clients=1, duration=seconds, warmup=1, warehouses=1, scale=TINY
    )
    total = driver.ClientResult()
    total.committed = Counter({"payment": committed})
    total.txn_times["payment"] = times
    rounds = [{"started": 0.0, "duration_s": seconds, "transactions": committed, "tpm": committed}]
    return driver.Collected(spec, total, 0, 0, rounds)


def test_rounds_merge_into_one_point_over_their_seconds() -> None:
    merged = driver.summarize(
        driver.merge([_collected(100, 30, [0.01] * 100), _collected(300, 30, [0.03] * 300)])
    )
    assert merged["duration_s"] == 60
    assert merged["tpm"] == 400  # 400 transactions over the rounds' one minute
    assert merged["committed"] == {"payment": 400}
    assert merged["transactions"]["payment"]["count"] == 400
    assert merged["transactions"]["payment"]["mean_ms"] == pytest.approx(25.0)
    assert [r["transactions"] for r in merged["rounds"]] == [100, 300]


def test_a_client_that_cannot_connect_reports_instead_of_holding_the_run() -> None:
    spec = driver.RunSpec(
        config="plain",
        dsn="host=127.0.0.1 port=1 dbname=nowhere connect_timeout=2",
        clients=2,
        duration=0.5,
        warmup=0,
        warehouses=1,
        scale=TINY,
    )
    t0 = time.monotonic()
    result = driver.run(spec, log=lambda m: None)
    assert time.monotonic() - t0 < 60  # (a lost client held it for the queue's 600 s)
    assert sum(result["errors"].values()) == 2
    assert all(k.startswith("client: OperationalError") for k in result["errors"])


def test_a_killed_client_counts_as_an_error_at_once() -> None:
    """A client killed mid-run (the machine's OOM killer, an operator) never reports: the
    round counts it as an error as soon as it is gone, rather than waiting out the
    queue's ten minutes."""
    silent = socket.socket()  # (a server that never answers: the clients wait in connect)
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    port = silent.getsockname()[1]
    spec = driver.RunSpec(
        config="plain",
        dsn=f"host=127.0.0.1 port={port} dbname=nowhere connect_timeout=8",
        clients=2,
        duration=0.5,
        warmup=0,
        warehouses=1,
        scale=TINY,
    )

    def kill_one() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            children = multiprocessing.active_children()
            if len(children) == 2:
                time.sleep(1.0)  # (both connecting)
                os.kill(children[0].pid, signal.SIGKILL)
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_one, daemon=True)
    killer.start()
    t0 = time.monotonic()
    try:
        result = driver.run(spec, log=lambda m: None)
    finally:
        silent.close()
    killer.join(timeout=5)
    assert time.monotonic() - t0 < 60
    assert result["errors"]["client: died (exit code -9)"] == 1
    assert sum(result["errors"].values()) == 2  # (the other: its connection timed out)
    assert result["rounds"][0]["clients_without_commits"] == 2


def test_clients_do_not_inherit_the_sweeps_heap() -> None:
    """Clients come from a fork server, not from forks of the sweep's process, whose heap
    holds every point's results."""
    assert driver.client_context().get_start_method() == "forkserver"


def test_a_settled_template_is_compact_frozen_and_analyzed(new_database: Any) -> None:
    dsn = new_database("settle")
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(
            "CREATE TABLE t (id integer PRIMARY KEY, pad text) WITH (autovacuum_enabled = off)"
        )
        c.execute("INSERT INTO t SELECT g, repeat('x', 200) FROM generate_series(1, 20000) g")
        c.execute("ALTER TABLE t ADD COLUMN extra integer")  # as an onion built on first use
        c.execute("UPDATE t SET extra = id")  # every row rewritten, as by priming
        before = c.execute("SELECT pg_relation_size('t') / 8192").fetchone()
        # (an xid after every row's: the rows are frozen where the table's frozen xid is
        # not older -- an age would also count the xids other databases' work takes)
        (after_rows,) = c.execute("SELECT (txid_current() % 4294967296)::text").fetchone()
    cli.settle(dsn, compact=True)
    with psycopg.connect(dsn, autocommit=True) as c:
        pages, visible, frozen = c.execute(
            "SELECT relpages, relallvisible, age(relfrozenxid) <= age(%s::xid) "
            "FROM pg_class WHERE relname = 't'",
            (after_rows,),
        ).fetchone()
        assert before is not None and pages < before[0] * 0.6  # the replaced rows gone
        assert visible == pages  # the visibility map built: nothing for a copy to vacuum
        assert frozen  # every row frozen
        analyzed = {r[0] for r in c.execute("SELECT attname FROM pg_stats WHERE tablename = 't'")}
        assert {"id", "pad", "extra"} <= analyzed  # the added column's statistics too


def test_a_run_copy_has_no_autovacuum(new_database: Any) -> None:
    dsn = new_database("noav")
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("CREATE TABLE t (id integer PRIMARY KEY, pad text)")
        c.execute('CREATE TABLE "Mixed Case" (id integer)')
    cli.without_autovacuum(dsn)
    with psycopg.connect(dsn, autocommit=True) as c:
        options = dict(
            c.execute(
                "SELECT relname, reloptions FROM pg_class WHERE relname IN ('t', 'Mixed Case')"
            ).fetchall()
        )
    assert options == {name: ["autovacuum_enabled=off"] for name in ("t", "Mixed Case")}
