"""Bulk load through the client: COPY FROM STDIN against the client's batched multi-row
INSERT, in one run (plain psycopg COPY alongside, for scale).

    python bench/copy_load.py [--dsn DSN] [--rows 100000] [--batch 1000] [--rounds 3]

The same rows go into three scratch databases: plain (psycopg's COPY), and twice through
the client with the default onion configuration (every column in all the onions its type
supports, its Ord and Search onions built on first use): once by ``cursor.copy()`` and
``write_row``, once by multi-row INSERT statements of ``--batch`` rows each (the batched
path an application would otherwise use).  The three loads run in interleaved rounds (a
drift of the machine's speed moves all three alike), into a table made again each round;
the medians are printed.  The contents of the three are compared; the last two lines are
the ratios of the client's COPY time to its INSERT time (below 1: COPY is faster) and to
plain psycopg's COPY.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import secrets
import statistics
import time
from decimal import Decimal
from typing import Any

import psycopg
from scratch import scratch

import adaptive_client
from adaptive_client.admin.embedded import EmbeddedCluster

DDL = (
    "CREATE TABLE reading (id bigint PRIMARY KEY, sensor varchar(20), value numeric(10,3), "
    "taken timestamp, ok boolean)"
)
COLUMNS = "id, sensor, value, taken, ok"


def rows(n: int) -> list[tuple[Any, ...]]:
    t0 = dt.datetime(2024, 1, 1)
    return [
        (i, f"sensor-{i % 97}", Decimal(i % 10007) / 1000, t0 + dt.timedelta(seconds=i), i % 3 > 0)
        for i in range(1, n + 1)
    ]


def _copy(conn: Any, data: list[tuple[Any, ...]]) -> float:
    """The time of one COPY of ``data`` into a table made again (plain psycopg's or the
    client's connection: the same calls)."""
    conn.execute("DROP TABLE IF EXISTS reading")
    conn.execute(DDL)
    t = time.perf_counter()
    with conn.cursor().copy(f"COPY reading ({COLUMNS}) FROM STDIN") as cp:
        for r in data:
            cp.write_row(r)
    return time.perf_counter() - t


def _client_insert(
    conn: adaptive_client.Connection, data: list[tuple[Any, ...]], batch: int
) -> float:
    conn.execute("DROP TABLE IF EXISTS reading")
    conn.execute(DDL)
    values = ", ".join(["(%s, %s, %s, %s, %s)"] * batch)
    statement = f"INSERT INTO reading ({COLUMNS}) VALUES {values}"
    t = time.perf_counter()
    with conn.transaction():
        cur = conn.cursor()
        for start in range(0, len(data), batch):
            chunk = data[start : start + batch]
            if len(chunk) < batch:
                tail = ", ".join(["(%s, %s, %s, %s, %s)"] * len(chunk))
                cur.execute(f"INSERT INTO reading ({COLUMNS}) VALUES {tail}", sum(chunk, ()))
            else:
                cur.execute(statement, sum(chunk, ()))
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsn", default=None, help="maintenance DSN (default: embedded cluster)")
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (medians)")
    args = ap.parse_args()
    admin = args.dsn or EmbeddedCluster.default().dsn("postgres")
    key = os.environ.get("ADAPTIVE_MASTER_KEY") or secrets.token_hex(32)
    data = rows(args.rows)

    plain = psycopg.connect(scratch(admin, "bench_copy_plain", False), autocommit=True)
    via_copy = adaptive_client.connect(
        scratch(admin, "bench_copy_client", True), master_key=key, autocommit=True
    )
    via_insert = adaptive_client.connect(
        scratch(admin, "bench_copy_insert", True), master_key=key, autocommit=True
    )
    times: dict[str, list[float]] = {"plain": [], "copy": [], "insert": []}
    for _ in range(args.rounds):  # interleaved: a drift of the machine moves all three
        times["plain"].append(_copy(plain, data))
        times["copy"].append(_copy(via_copy, data))
        times["insert"].append(_client_insert(via_insert, data, args.batch))

    query = "SELECT * FROM reading ORDER BY id"
    expected = plain.execute(query).fetchall()
    assert via_copy.execute(query).fetchall() == expected, "COPY contents differ from plain"
    assert via_insert.execute(query).fetchall() == expected, "INSERT contents differ"
    plain_copy, client_copy, client_insert = (
        statistics.median(times[k]) for k in ("plain", "copy", "insert")
    )
    n = args.rows
    print(f"rows: {n}, medians of {args.rounds} interleaved rounds")
    print(f"plain COPY:             {plain_copy:8.2f} s  ({n / plain_copy:10.0f} rows/s)")
    print(f"client COPY:            {client_copy:8.2f} s  ({n / client_copy:10.0f} rows/s)")
    label = f"client INSERT x{args.batch}:"
    print(f"{label:<24}{client_insert:8.2f} s  ({n / client_insert:10.0f} rows/s)")
    print(f"client COPY / client INSERT: {client_copy / client_insert:.2f}")
    print(f"client COPY / plain COPY: {client_copy / plain_copy:.2f}")


if __name__ == "__main__":
    main()
