"""A peel locks one table, for as long as it runs; the rest of the database stays usable.

While a 200,000-row onion is peeled, other clients read and write another table, open
new connections (reading the metadata) and peel a column of that other table; each must
finish promptly, many while the peel holds its ACCESS EXCLUSIVE lock.  A query on the
peeled table itself waits for the peel and then answers from the new layer.  The test
prints the measured lock time and latencies (docs/peels.md quotes them).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.admin.controls import peel_column
from adaptive_client.catalog.keys import MasterKey

from .bigtable import BigTable

ROWS = 200_000
BOUND = 0.5  # seconds any operation on another table may take during the peel

pytestmark = pytest.mark.slow


def _lock_held(dsn: str, table: str) -> bool:
    with psycopg.connect(dsn, autocommit=True) as c:
        return (
            c.execute(
                "SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
                "WHERE c.relname = %s AND l.mode = 'AccessExclusiveLock' AND l.granted",
                (table,),
            ).fetchone()
            is not None
        )


def test_other_tables_stay_usable_during_a_peel(new_database: Any, master_key: MasterKey) -> None:
    dsn = new_database("blocking")
    big = BigTable.build(dsn, master_key, ROWS)
    other = adaptive_client.connect(dsn, master_key=master_key, autocommit=True)
    other.execute("CREATE TABLE other (id integer PRIMARY KEY, x integer, y integer)")
    other.execute(
        "INSERT INTO other VALUES " + ", ".join(f"({i}, {i * 10}, {i})" for i in range(1, 101))
    )
    assert other.execute("SELECT id FROM other WHERE x = 50").fetchall() == [(5,)]  # Eq(x) peeled
    waiter = adaptive_client.connect(dsn, master_key=master_key, autocommit=True)

    peel_seconds: list[float] = []

    def peel() -> None:
        t0 = time.monotonic()
        with psycopg.connect(dsn, autocommit=True) as c:
            assert peel_column(c, master_key, "big", "v", "Eq", "DET") == ROWS
        peel_seconds.append(time.monotonic() - t0)

    latencies: dict[str, list[float]] = {"read": [], "write": [], "connect": [], "peel other": []}
    during_lock = 0
    next_id = 1000

    def timed(kind: str, fn: Callable[[], Any]) -> None:
        t0 = time.monotonic()
        fn()
        latencies[kind].append(time.monotonic() - t0)

    peeler = threading.Thread(target=peel)
    peeler.start()
    deadline = time.monotonic() + 30
    while not _lock_held(dsn, big.table):  # the peel has its lock
        assert time.monotonic() < deadline and peeler.is_alive()
        time.sleep(0.005)
    blocked: dict[str, Any] = {}

    def query_big() -> None:  # waits for the peel, then is answered from DET
        t0 = time.monotonic()
        blocked["rows"] = waiter.execute(
            "SELECT id FROM big WHERE v = %s", (big.values[77],)
        ).fetchall()
        blocked["seconds"] = time.monotonic() - t0

    blocked_reader = threading.Thread(target=query_big)
    blocked_reader.start()
    while peeler.is_alive():
        held = _lock_held(dsn, big.table)
        next_id += 1
        timed("read", lambda: other.execute("SELECT y FROM other WHERE x = %s", (70,)).fetchall())
        timed(
            "write",
            lambda i=next_id: other.execute(
                "INSERT INTO other VALUES (%s, %s, %s)", (i, i * 10, i)
            ),
        )
        timed("connect", lambda: adaptive_client.connect(dsn, master_key=master_key).close())
        if not latencies["peel other"]:
            timed(
                "peel other",
                lambda: other.execute("SELECT id FROM other WHERE y < 3 ORDER BY id").fetchall(),
            )
        if held and _lock_held(dsn, big.table):
            during_lock += 1
    peeler.join()
    blocked_reader.join(30)
    assert blocked["rows"] == [(77,)]
    assert latencies["peel other"], "the other table's peel did not run during the big one"
    assert during_lock >= 3, during_lock
    worst = {k: max(v) for k, v in latencies.items() if v}
    assert all(w < BOUND for w in worst.values()), worst
    assert big.state() == "DET"
    other.close()
    waiter.close()
    print(
        f"peel of {ROWS} rows: {peel_seconds[0]:.2f} s; a query on the peeled table waited "
        f"{blocked['seconds']:.2f} s; {during_lock} rounds of other-table work under the lock; "
        "worst latency (ms): " + ", ".join(f"{k} {1000 * w:.0f}" for k, w in worst.items())
    )
