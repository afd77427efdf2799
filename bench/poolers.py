"""What a transaction pooler costs the client: point statements directly and through
PgBouncer in ``transaction`` mode, the client against plain psycopg, in one run.

    python bench/poolers.py [--dsn DSN] [--rows 5000] [--rounds 20] [--per-round 200]

A plain and an encrypted database get the same table and rows; a PgBouncer in
transaction mode (``adaptive_client.admin.pgbouncer``, on a port of 54436-54439) is
started in front of the server.  Four connections then run the same workload in
alternating rounds, so that all see the same load on a shared machine:

* plain psycopg, direct (its statements prepared from the fifth run on);
* the client, direct (prepared statements, the direct path, ``LISTEN``);
* plain psycopg through the pooler, ``prepare_threshold=None`` (PgBouncer 1.18 keeps no
  prepared statement from one transaction to the next);
* the client through the pooler (detected: nothing prepared, the catalog's epoch read
  before each transaction instead of a notification: docs/poolers.md).

Workloads: ``point`` -- an autocommit ``SELECT ... WHERE id = %s``; ``txn`` -- a
transaction of that SELECT and an ``UPDATE ... SET v = v + 1 WHERE id = %s``, committed.
Printed: each connection's median time per workload item, and the client's ratio to
plain psycopg (median of the rounds' ratios) directly and through the pooler.
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import statistics
import time
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

import adaptive_client
from adaptive_client.admin.embedded import EmbeddedCluster
from adaptive_client.admin.pgbouncer import PgBouncer
from adaptive_client.catalog.install import install
from adaptive_client.catalog.keys import MasterKey

PORTS = range(54436, 54440)
SELECT = "SELECT name, v FROM item WHERE id = %s"
UPDATE = "UPDATE item SET v = v + 1 WHERE id = %s"


def scratch(maintenance: str, name: str) -> str:
    with psycopg.connect(maintenance, autocommit=True) as c:
        c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        c.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return make_conninfo(maintenance, dbname=name)


def point(conn: Any, key: int) -> None:
    conn.execute(SELECT, (key,)).fetchall()


def txn(conn: Any, key: int) -> None:
    conn.execute(SELECT, (key,)).fetchall()
    conn.execute(UPDATE, (key,))
    conn.commit()


WORKLOADS: dict[str, tuple[Callable[[Any, int], None], bool]] = {
    "point": (point, True),  # (the item, autocommit)
    "txn": (txn, False),
}


def rounds(
    conns: dict[str, Any], work: Callable[[Any, int], None], keys: list[int], per_round: int
) -> dict[str, list[float]]:
    """Seconds per item on each connection, one figure per round, the connections'
    rounds alternating (their order rotated each round)."""
    names = list(conns)
    out: dict[str, list[float]] = {n: [] for n in names}
    for n in names:  # warm: statement caches, plans, a first peel
        for k in keys[:50]:
            work(conns[n], k)
    for r, start in enumerate(range(0, len(keys), per_round)):
        batch = keys[start : start + per_round]
        for n in names[r % len(names) :] + names[: r % len(names)]:
            t0 = time.perf_counter()
            for k in batch:
                work(conns[n], k)
            out[n].append((time.perf_counter() - t0) / len(batch))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dsn", default=None, help="maintenance DSN (default: the embedded cluster)")
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--per-round", type=int, default=200)
    args = ap.parse_args()
    maintenance = args.dsn or EmbeddedCluster.default().dsn("postgres")
    tag = secrets.token_hex(3)
    names = (f"bench_pool_plain_{tag}", f"bench_pool_enc_{tag}")
    plain_dsn, enc_dsn = (scratch(maintenance, n) for n in names)
    with psycopg.connect(enc_dsn) as c:
        install(c)
    key = MasterKey.generate()
    rows = [(i, f"name {i % 997}", i % 100) for i in range(args.rows)]
    with psycopg.connect(plain_dsn) as plain:
        plain.execute("CREATE TABLE item (id integer PRIMARY KEY, name text, v integer)")
        plain.cursor().executemany("INSERT INTO item VALUES (%s, %s, %s)", rows)
    with adaptive_client.connect(enc_dsn, master_key=key) as enc:
        enc.execute("CREATE TABLE item (id integer PRIMARY KEY, name text, v integer)")
        enc.cursor().executemany("INSERT INTO item VALUES (%s, %s, %s)", rows)
    bouncer = PgBouncer(maintenance, PORTS, "transaction", pool_size=4, lifetime=1800)
    rnd = random.Random(1)
    keys = [rnd.randrange(args.rows) for _ in range(args.rounds * args.per_round)]
    results: dict[str, dict[str, list[float]]] = {}
    try:
        for workload, (work, autocommit) in WORKLOADS.items():
            conns: dict[str, Any] = {
                "plain direct": psycopg.connect(plain_dsn, autocommit=autocommit),
                "client direct": adaptive_client.connect(
                    enc_dsn, master_key=key, autocommit=autocommit
                ),
                "plain pooled": psycopg.connect(
                    bouncer.dsn(plain_dsn), autocommit=autocommit, prepare_threshold=None
                ),
                "client pooled": adaptive_client.connect(
                    bouncer.dsn(enc_dsn), master_key=key, autocommit=autocommit
                ),
            }
            assert conns["client pooled"].pooling.transaction
            try:
                results[workload] = rounds(conns, work, keys, args.per_round)
            finally:
                for conn in conns.values():
                    conn.close()
    finally:
        bouncer.stop()
        with psycopg.connect(maintenance, autocommit=True) as c:
            for name in names:
                c.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
                )
    for workload, times in results.items():
        print(f"{workload}:")
        for name, xs in times.items():
            print(f"  {name:14s} {statistics.median(xs) * 1e6:8.1f} us (median of rounds)")
        for where in ("direct", "pooled"):
            p, e = times[f"plain {where}"], times[f"client {where}"]
            ratio = statistics.median(b / a for a, b in zip(p, e, strict=True))
            print(f"  ratio client / plain, {where}: {ratio:.2f}")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
