"""A bulk insert into a bigserial-keyed table through the client, against the same insert
with explicit ids, in one run.

    python bench/serial_insert.py [--dsn DSN] [--rows 100000] [--batch 1000] [--rounds 2]
                                  [--modes batched,executemany]

Two scratch databases with the same table but for its key: ``id bigint PRIMARY KEY``
(the application gives the ids) and ``id bigserial PRIMARY KEY`` (the client draws them
from the server's sequence, in blocks).  The same rows go into both by multi-row INSERT
statements of ``--batch`` rows, in one transaction, then by ``executemany`` of a
single-row INSERT; each load runs ``--rounds`` times alternately on fresh tables and the
best time counts.  The contents are compared (the drawn ids are 1..n, as the explicit
ones); the last lines are the ratios serial / explicit (the target: at most 1.2).
"""

from __future__ import annotations

import argparse
import os
import secrets
import time
from decimal import Decimal
from typing import Any

from scratch import scratch

import adaptive_client
from adaptive_client.admin.embedded import EmbeddedCluster

EXPLICIT = "CREATE TABLE reading (id bigint PRIMARY KEY, sensor varchar(20), value numeric(10,3))"
SERIAL = "CREATE TABLE reading (id bigserial PRIMARY KEY, sensor varchar(20), value numeric(10,3))"


def load_batched(conn: Any, rows: list[tuple[Any, ...]], batch: int, explicit: bool) -> float:
    cols = "id, sensor, value" if explicit else "sensor, value"
    one = "(%s, %s, %s)" if explicit else "(%s, %s)"
    data = rows if explicit else [r[1:] for r in rows]
    t = time.perf_counter()
    with conn.transaction():
        cur = conn.cursor()
        for start in range(0, len(data), batch):
            chunk = data[start : start + batch]
            values = ", ".join([one] * len(chunk))
            cur.execute(f"INSERT INTO reading ({cols}) VALUES {values}", sum(chunk, ()))
    return time.perf_counter() - t


def load_many(conn: Any, rows: list[tuple[Any, ...]], explicit: bool) -> float:
    if explicit:
        sql, data = "INSERT INTO reading (id, sensor, value) VALUES (%s, %s, %s)", rows
    else:
        sql, data = "INSERT INTO reading (sensor, value) VALUES (%s, %s)", [r[1:] for r in rows]
    t = time.perf_counter()
    with conn.transaction():
        conn.cursor().executemany(sql, data)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsn", default=None, help="maintenance DSN (default: embedded cluster)")
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--modes", default="batched,executemany")
    args = ap.parse_args()
    admin = args.dsn or EmbeddedCluster.default().dsn("postgres")
    key = os.environ.get("ADAPTIVE_MASTER_KEY") or secrets.token_hex(32)
    rows = [(i, f"sensor-{i % 97}", Decimal(i % 10007) / 1000) for i in range(1, args.rows + 1)]
    conns = {
        explicit: adaptive_client.connect(
            scratch(admin, f"bench_serial_{'explicit' if explicit else 'drawn'}"),
            master_key=key,
            autocommit=True,
        )
        for explicit in (True, False)
    }
    best: dict[tuple[str, bool], float] = {}
    for round_ in range(args.rounds):
        for mode in args.modes.split(","):
            # alternate which goes first: a machine's load drifts within a round
            for explicit in (True, False) if round_ % 2 == 0 else (False, True):
                conn = conns[explicit]
                conn.execute("DROP TABLE IF EXISTS reading")
                conn.execute(EXPLICIT if explicit else SERIAL)
                if mode == "batched":
                    took = load_batched(conn, rows, args.batch, explicit)
                else:
                    took = load_many(conn, rows, explicit)
                got = conn.execute("SELECT id, sensor, value FROM reading ORDER BY id").fetchall()
                assert got == rows, f"{mode}: the contents differ from the rows given"
                key_ = (mode, explicit)
                best[key_] = min(best.get(key_, took), took)
    n = args.rows
    print(f"rows: {n}, best of {args.rounds}")
    for mode in args.modes.split(","):
        e, s = best[(mode, True)], best[(mode, False)]
        label = f"INSERT x{args.batch}" if mode == "batched" else "executemany"
        print(f"{label:<14} explicit ids: {e:7.2f} s   bigserial: {s:7.2f} s   ratio {s / e:.2f}")
    for c in conns.values():
        c.close()


if __name__ == "__main__":
    main()
