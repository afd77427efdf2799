"""Bulk load through the client: COPY FROM STDIN against the client's batched multi-row
INSERT, in one run (plain psycopg COPY alongside, for scale).

    python bench/copy_load.py [--dsn DSN] [--rows 100000] [--batch 1000]

The same rows go into three scratch databases: plain (psycopg's COPY), and twice through
the client with the default onion configuration (every column in all the onions its type
supports): once by ``cursor.copy()`` and ``write_row``, once by multi-row INSERT
statements of ``--batch`` rows each (the batched path an application would otherwise
use).  The contents of the three are compared; the last line is the ratio of the
client's COPY time to its INSERT time (below 1: COPY is faster).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import secrets
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsn", default=None, help="maintenance DSN (default: embedded cluster)")
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=1000)
    args = ap.parse_args()
    admin = args.dsn or EmbeddedCluster.default().dsn("postgres")
    key = os.environ.get("ADAPTIVE_MASTER_KEY") or secrets.token_hex(32)
    data = rows(args.rows)

    plain = psycopg.connect(scratch(admin, "bench_copy_plain", False), autocommit=True)
    plain.execute(DDL)
    t = time.perf_counter()
    with plain.cursor().copy(f"COPY reading ({COLUMNS}) FROM STDIN") as cp:
        for r in data:
            cp.write_row(r)
    plain_copy = time.perf_counter() - t

    via_copy = adaptive_client.connect(
        scratch(admin, "bench_copy_client", True), master_key=key, autocommit=True
    )
    via_copy.execute(DDL)
    t = time.perf_counter()
    with via_copy.cursor().copy(f"COPY reading ({COLUMNS}) FROM STDIN") as cp:
        for r in data:
            cp.write_row(r)
    client_copy = time.perf_counter() - t

    via_insert = adaptive_client.connect(
        scratch(admin, "bench_copy_insert", True), master_key=key, autocommit=True
    )
    via_insert.execute(DDL)
    values = ", ".join(["(%s, %s, %s, %s, %s)"] * args.batch)
    statement = f"INSERT INTO reading ({COLUMNS}) VALUES {values}"
    t = time.perf_counter()
    with via_insert.transaction():
        cur = via_insert.cursor()
        for start in range(0, len(data), args.batch):
            chunk = data[start : start + args.batch]
            if len(chunk) < args.batch:
                tail = ", ".join(["(%s, %s, %s, %s, %s)"] * len(chunk))
                cur.execute(f"INSERT INTO reading ({COLUMNS}) VALUES {tail}", sum(chunk, ()))
            else:
                cur.execute(statement, sum(chunk, ()))
    client_insert = time.perf_counter() - t

    query = "SELECT * FROM reading ORDER BY id"
    expected = plain.execute(query).fetchall()
    assert via_copy.execute(query).fetchall() == expected, "COPY contents differ from plain"
    assert via_insert.execute(query).fetchall() == expected, "INSERT contents differ"
    n = args.rows
    print(f"rows: {n}")
    print(f"plain COPY:             {plain_copy:8.2f} s  ({n / plain_copy:10.0f} rows/s)")
    print(f"client COPY:            {client_copy:8.2f} s  ({n / client_copy:10.0f} rows/s)")
    label = f"client INSERT x{args.batch}:"
    print(f"{label:<24}{client_insert:8.2f} s  ({n / client_insert:10.0f} rows/s)")
    print(f"client COPY / client INSERT: {client_copy / client_insert:.2f}")


if __name__ == "__main__":
    main()
