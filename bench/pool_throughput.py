"""Throughput of a pool shared by threads: the adaptive client against plain psycopg.

    python bench/pool_throughput.py [--dsn DSN] [--threads 8] [--pool 4] [--seconds 5]
                                    [--rounds 3] [--rows 20000]

What an application server does: ``--threads`` worker threads share a pool of
``--pool`` connections (psycopg_pool's ``ConnectionPool``; for the client, the one in
``adaptive_client.dbapi.pool``), each taking a connection per operation.  An operation is one
transaction: a point SELECT of two columns by primary key, then an UPDATE of another
column of the same row.  Each thread works on rows of its own, so no operation waits for
another's row lock: what limits the rate is the client's CPU, the server's, and how
long each thread keeps the others from running.

The same table is built in two scratch databases -- plain, and through the client with
the default onion configuration (peeled to what the statements need before timing).
``--rounds`` rounds alternate plain and client, ``--seconds`` each, so that other load on
the machine affects both alike.  Printed: operations per second per round and the
median ratio client/plain (the target: at least 0.5).
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg
import psycopg_pool

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from scratch import scratch

from adaptive_client.admin.embedded import EmbeddedCluster
from adaptive_client.dbapi.pool import ConnectionPool

DDL = (
    "CREATE TABLE acct (id integer PRIMARY KEY, owner varchar(40), balance numeric(12,2), "
    "opened date, branch integer)"
)
READ = "SELECT owner, balance FROM acct WHERE id = %s"
WRITE = "UPDATE acct SET branch = %s WHERE id = %s"


def fill(conn: Any, rows: int) -> None:
    conn.execute(DDL)
    data = [(i, f"owner {i}", i / 100, "2024-01-01", i % 7) for i in range(1, rows + 1)]
    conn.cursor().executemany("INSERT INTO acct VALUES (%s, %s, %s, %s, %s)", data)
    conn.commit()


def operation(conn: Any, row: int, n: int) -> None:
    conn.execute(READ, (row,)).fetchall()
    conn.execute(WRITE, (n % 7, row))


def measure(pool: Any, threads: int, rows: int, seconds: float) -> float:
    """Operations per second of ``threads`` threads sharing ``pool`` for ``seconds``."""
    per_thread = rows // threads
    done = [0] * threads
    start = threading.Barrier(threads + 1)
    stop = threading.Event()

    def work(t: int) -> None:
        first = t * per_thread + 1
        n = 0
        start.wait()
        while not stop.is_set():
            with pool.connection() as conn:
                operation(conn, first + n % per_thread, n)
            n += 1
        done[t] = n

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    start.wait()
    t0 = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for w in workers:
        w.join()
    return sum(done) / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dsn", help="server to use (default: the embedded cluster)")
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--pool", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rows", type=int, default=20_000)
    args = ap.parse_args()
    admin = args.dsn or EmbeddedCluster.default().dsn()
    key = os.environ.get("ADAPTIVE_MASTER_KEY") or secrets.token_hex(32)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    config = os.path.join(root, "onion_config", "default.toml")
    plain_dsn = scratch(admin, "bench_pool_plain", with_schema=False)
    enc_dsn = scratch(admin, "bench_pool_client")
    with psycopg.connect(plain_dsn) as c:
        fill(c, args.rows)
    import adaptive_client

    with adaptive_client.connect(enc_dsn, master_key=key, config=config) as c:
        fill(c, args.rows)
        for i in range(3):  # the peels the statements need, before timing
            operation(c, i + 1, i)
            c.commit()
    pools: dict[str, Callable[[], Any]] = {
        "plain": lambda: psycopg_pool.ConnectionPool(
            plain_dsn, min_size=args.pool, max_size=args.pool
        ),
        "client": lambda: ConnectionPool(
            enc_dsn, min_size=args.pool, max_size=args.pool, master_key=key, config=config
        ),
    }
    rates: dict[str, list[float]] = {"plain": [], "client": []}
    for make in pools.values():  # warm: prepared statements, caches
        with make() as pool:
            pool.wait()
            measure(pool, args.threads, args.rows, 1.0)
    print(f"{args.threads} threads, pool of {args.pool}, {args.seconds:.0f} s a round")
    print(f"{'round':<8}{'plain op/s':>12}{'client op/s':>13}{'ratio':>8}")
    for r in range(args.rounds):
        for name, make in pools.items():
            with make() as pool:
                pool.wait()
                rates[name].append(measure(pool, args.threads, args.rows, args.seconds))
        p, c = rates["plain"][-1], rates["client"][-1]
        print(f"{r + 1:<8}{p:>12.0f}{c:>13.0f}{c / p:>8.2f}")
    ratio = statistics.median(c / p for p, c in zip(rates["plain"], rates["client"], strict=True))
    print(
        f"client/plain operations per second, median of {args.rounds}: {ratio:.2f} (target >= 0.5)"
    )


if __name__ == "__main__":
    main()
