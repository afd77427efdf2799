"""An infix LIKE through the client against the same query on plain PostgreSQL.

    python bench/like_search.py [--dsn DSN] [--rows 100000] [--repeat 20]

The same ``--rows`` texts go into a plain database and, through the client with the
Substr onion (``substring = true``), into an encrypted one.  The first search peels the
Substr onion (not timed); then each of a few infix, prefix and ILIKE patterns runs
``--repeat`` times on both, answers compared.  Plain PostgreSQL scans every row (no
index); the client's server filters candidates through the trigram GIN index and the
client checks them exactly.  The last line is the worst ratio of the client's median time
to plain's (the target: at most 3).
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import time
from typing import Any

import psycopg
from scratch import scratch

import adaptive_client
from adaptive_client.admin.embedded import EmbeddedCluster

PATTERNS = [
    ("body LIKE %s", "%word123 %"),
    ("body LIKE %s", "%tail7"),
    ("body LIKE %s", "row 4242 %"),
    ("body ILIKE %s", "%WORD77 tail%"),
]


def timed(conn: Any, query: str, param: str, repeat: int) -> tuple[float, list[Any]]:
    times, rows = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        rows = conn.execute(query, (param,)).fetchall()
        times.append(time.perf_counter() - t)
    return statistics.median(times), rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsn", default=None, help="maintenance DSN (default: embedded cluster)")
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    admin = args.dsn or EmbeddedCluster.default().dsn("postgres")
    key = os.environ.get("ADAPTIVE_MASTER_KEY") or secrets.token_hex(32)
    data = [(i, f"row {i} word{i % 997} tail{i % 13}") for i in range(args.rows)]
    plain = psycopg.connect(scratch(admin, "bench_like_plain", False), autocommit=True)
    enc = adaptive_client.connect(
        scratch(admin, "bench_like_client", True),
        master_key=key,
        config={"defaults": {"substring": True}},
        autocommit=True,
    )
    for conn in (plain, enc):
        conn.execute("CREATE TABLE doc (id integer, body text)")
        with conn.cursor().copy("COPY doc FROM STDIN") as cp:
            for r in data:
                cp.write_row(r)
    plain.execute("VACUUM ANALYZE doc")
    enc.execute("SELECT count(*) FROM doc WHERE body LIKE '%peel%'").fetchall()  # peels
    with psycopg.connect(enc.pg.info.dsn, autocommit=True) as raw:
        raw.execute("VACUUM ANALYZE")
    worst = 0.0
    print(f"rows: {args.rows}")
    for where, param in PATTERNS:
        query = f"SELECT id, body FROM doc WHERE {where} ORDER BY id"
        p_time, expected = timed(plain, query, param, args.repeat)
        c_time, got = timed(enc, query, param, args.repeat)
        assert got == expected, (where, param)
        worst = max(worst, c_time / p_time)
        print(
            f"{where % repr(param):<32} rows {len(got):6d}  plain {1000 * p_time:8.2f} ms  "
            f"client {1000 * c_time:8.2f} ms  x{c_time / p_time:.2f}"
        )
    print(f"worst client / plain: {worst:.2f}")


if __name__ == "__main__":
    main()
