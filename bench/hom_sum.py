"""The Sum onion's cost: Paillier encryption on the client and ``adaptive.hom_sum`` on the
server, against ``count(*)`` and ``sum()`` of the same rows side by side in one run.

    python bench/hom_sum.py [--rows 20000] [--bits 2048] [--dsn DSN]

A scratch database gets a table of ``--rows`` rows in four groups, each row a Paillier
ciphertext (a few hundred distinct ones, repeated: the server's cost does not depend on
the plaintexts); the three aggregates are timed on it, alternately, best of three.  The
last line gives the milliseconds per thousand rows of each and hom_sum's ratio to the
plain ``sum()`` of the same numeric column.  The client's encryption cost per value is
timed over 200 values.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

# this script's own directory first on sys.path would shadow the project's packages
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

import psycopg  # noqa: E402
from psycopg.conninfo import make_conninfo  # noqa: E402

from adaptive_client.admin.embedded import EmbeddedCluster  # noqa: E402
from adaptive_client.catalog.install import install  # noqa: E402
from adaptive_client.schemes import HOM  # noqa: E402

NAME = "bench_hom_sum"
QUERIES = {
    "hom_sum": "SELECT g, adaptive.hom_sum(c, %s) FROM hom_rows GROUP BY g",
    "sum": "SELECT g, sum(c) FROM hom_rows GROUP BY g",
    "count": "SELECT g, count(*) FROM hom_rows GROUP BY g",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--bits", type=int, default=2048)
    ap.add_argument("--dsn", help="an admin conninfo (default: the embedded cluster)")
    args = ap.parse_args()
    admin = args.dsn or EmbeddedCluster.default().dsn("postgres")
    key = HOM.generate(args.bits)
    t0 = time.perf_counter()
    cts = [key.encrypt(i) for i in range(200)]
    per_value = (time.perf_counter() - t0) / 200
    with psycopg.connect(admin, autocommit=True) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{NAME}" WITH (FORCE)')
        c.execute(f'CREATE DATABASE "{NAME}"')
    dsn = make_conninfo(admin, dbname=NAME)
    try:
        with psycopg.connect(dsn, autocommit=True) as c:
            install(c)
            c.execute("CREATE TABLE hom_rows (g integer, c numeric)")
            with c.cursor().copy("COPY hom_rows FROM STDIN") as copy:
                for i in range(args.rows):
                    copy.write_row((i % 4, cts[i % len(cts)]))
            c.execute("VACUUM ANALYZE hom_rows")
            best = dict.fromkeys(QUERIES, float("inf"))
            for _ in range(3):
                for name, sql in QUERIES.items():
                    t = time.perf_counter()
                    c.execute(sql, (key.n2,) if "%s" in sql else ()).fetchall()
                    best[name] = min(best[name], time.perf_counter() - t)
    finally:
        with psycopg.connect(admin, autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{NAME}" WITH (FORCE)')
    print(f"Paillier encryption ({args.bits}-bit n): {per_value * 1000:.2f} ms per value")
    per_k = {name: s * 1000 / (args.rows / 1000) for name, s in best.items()}
    print(
        f"per 1000 rows: hom_sum {per_k['hom_sum']:.1f} ms, sum {per_k['sum']:.2f} ms, "
        f"count {per_k['count']:.2f} ms; hom_sum / sum = {best['hom_sum'] / best['sum']:.0f}"
    )


if __name__ == "__main__":
    main()
