"""An Ord onion at ORE against one at OPE: server and client costs, side by side.

    python bench/ore.py [--rows 1000000] [--distinct 20000] [--rounds 15] [--dsn DSN]

One table of ``--rows`` rows holds, per row, the OPE ciphertext (``bytea``) and the ORE
ciphertext (``adaptive.ore``, sql/udf/26_ore.sql) of the same 32-bit value, drawn from
``--distinct`` random values (each stored rows/distinct times).  Measured, each pair in
interleaved rounds (OPE, ORE, OPE, ORE, ...) and reported as medians:

* building a B-tree index on each column (fewer rounds: ``--build-rounds``);
* an indexed range query returning 1,000 rows (``col >= lo AND col < hi``);
* ``ORDER BY col LIMIT 10`` over the index;
* the client's encryption per value: the native OPE against ORE (Python), alternating
  on chunks of the same values, in CPU time.

Without ``--dsn`` a fresh database of the embedded cluster is made (and dropped).  The
ratios ORE/OPE are printed last, against the issue's bounds (2x, 2x, 5x, 2x).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import sql

from adaptive_client.catalog.install import install
from adaptive_client.schemes import OPE, ORE

IN_BITS = 32
CHUNK = 50


def client_encryption(values: list[int], ope: OPE, ore: ORE) -> tuple[float, float]:
    """CPU seconds per value of each scheme, alternating chunk by chunk."""
    t_ope = t_ore = 0.0
    for i in range(0, len(values), CHUNK):
        chunk = values[i : i + CHUNK]
        t0 = time.process_time()
        for x in chunk:
            ope.encrypt(x)
        t1 = time.process_time()
        for x in chunk:
            ore.encrypt(x)
        t2 = time.process_time()
        t_ope, t_ore = t_ope + t1 - t0, t_ore + t2 - t1
    return t_ope / len(values), t_ore / len(values)


def timed(conn: psycopg.Connection[Any], query: sql.Composable, params: Any = None) -> float:
    t0 = time.perf_counter()
    cur = conn.execute(query, params)
    if cur.description is not None:
        cur.fetchall()
    return time.perf_counter() - t0


def interleaved(rounds: int, runs: dict[str, Callable[[], float]]) -> dict[str, float]:
    """The median seconds of each run, the runs taking turns round after round."""
    seen: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            seen[name].append(run())
    return {k: statistics.median(v) for k, v in seen.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description="Ord onion at ORE vs OPE")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--distinct", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--build-rounds", type=int, default=2)
    ap.add_argument("--client-values", type=int, default=2_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dsn", default=None)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    key = rng.randbytes(32)
    ope, ore = OPE(key, IN_BITS), ORE(key, IN_BITS)

    sample = [rng.getrandbits(IN_BITS) for _ in range(args.client_values)]
    per_ope, per_ore = client_encryption(sample, ope, ore)

    dsn, dropper = args.dsn, None
    if dsn is None:
        from psycopg.conninfo import make_conninfo

        from adaptive_client.admin.embedded import EmbeddedCluster

        base = EmbeddedCluster.default().dsn("postgres")
        name = f"bench_ore_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(base, autocommit=True) as c:
            c.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        dsn = make_conninfo(base, dbname=name)

        def dropper() -> None:
            with psycopg.connect(base, autocommit=True) as c:
                c.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))

    try:
        with psycopg.connect(dsn) as c:
            install(c)
        with psycopg.connect(dsn, autocommit=True) as conn:
            t0 = time.perf_counter()
            plains = sorted({rng.getrandbits(IN_BITS) for _ in range(args.distinct)})
            pairs = [(ope.encrypt(x), ore.encrypt(x)) for x in plains]
            print(f"{len(plains)} distinct values encrypted in {time.perf_counter() - t0:.1f} s")
            conn.execute("DROP TABLE IF EXISTS ord_bench")
            conn.execute("CREATE TABLE ord_bench (id integer, ope bytea, ore adaptive.ore)")
            t0 = time.perf_counter()
            with conn.cursor().copy("COPY ord_bench (id, ope, ore) FROM STDIN") as copy:
                for i in range(args.rows):
                    o, r = pairs[i % len(pairs)]
                    copy.write_row((i, o, r))
            conn.execute("VACUUM ANALYZE ord_bench")
            print(f"{args.rows} rows loaded in {time.perf_counter() - t0:.1f} s")

            def build(col: str) -> Callable[[], float]:
                def run() -> float:
                    conn.execute(f"DROP INDEX IF EXISTS ord_bench_{col}")
                    t = timed(conn, sql.SQL(f"CREATE INDEX ord_bench_{col} ON ord_bench ({col})"))
                    return t

                return run

            builds = interleaved(args.build_rounds, {"OPE": build("ope"), "ORE": build("ore")})
            conn.execute("ANALYZE ord_bench")
            per_value = args.rows // len(plains)
            width = max(1, 1000 // per_value)  # distinct values per 1,000 rows
            starts = [rng.randrange(0, len(plains) - width - 1) for _ in range(args.rounds)]
            it = {"OPE": iter(starts), "ORE": iter(starts)}

            def ranged(col: str, k: int) -> Callable[[], float]:
                def run() -> float:
                    s = next(it[col.upper()])
                    lo, hi = pairs[s][k], pairs[s + width][k]
                    q = sql.SQL(f"SELECT id FROM ord_bench WHERE {col} >= %s AND {col} < %s")
                    return timed(conn, q, (lo, hi))

                return run

            ranges = interleaved(args.rounds, {"OPE": ranged("ope", 0), "ORE": ranged("ore", 1)})
            rows_back = conn.execute(
                "SELECT count(*) FROM ord_bench WHERE ope >= %s AND ope < %s",
                (pairs[starts[0]][0], pairs[starts[0] + width][0]),
            ).fetchone()
            plan = conn.execute(
                "EXPLAIN SELECT id FROM ord_bench WHERE ore >= %s AND ore < %s",
                (pairs[starts[0]][1], pairs[starts[0] + width][1]),
            ).fetchall()
            tops = interleaved(
                args.rounds,
                {
                    "OPE": lambda: timed(
                        conn, sql.SQL("SELECT id FROM ord_bench ORDER BY ope LIMIT 10")
                    ),
                    "ORE": lambda: timed(
                        conn, sql.SQL("SELECT id FROM ord_bench ORDER BY ore LIMIT 10")
                    ),
                },
            )
    finally:
        if dropper is not None:
            dropper()

    print(f"range query: {rows_back[0] if rows_back else '?'} rows; ORE plan: {plan[0][0]}")
    print(f"{'measure':<34} {'OPE':>12} {'ORE':>12} {'ORE/OPE':>8} {'bound':>6}")
    lines = [
        ("index build (s)", builds["OPE"], builds["ORE"], 5.0),
        ("range query, 1,000 rows (ms)", ranges["OPE"] * 1e3, ranges["ORE"] * 1e3, 2.0),
        ("ORDER BY ... LIMIT 10 (ms)", tops["OPE"] * 1e3, tops["ORE"] * 1e3, 2.0),
        ("client encryption (µs/value, CPU)", per_ope * 1e6, per_ore * 1e6, 2.0),
    ]
    for name, a, b, bound in lines:
        ratio = b / a if a else float("inf")
        ok = "ok" if ratio <= bound else "over"
        print(f"{name:<34} {a:>12.3f} {b:>12.3f} {ratio:>8.2f} {bound:>5.0f}x {ok}")
    print(f"backends: OPE {ope.backend}, ORE {ore.backend}")


if __name__ == "__main__":
    main()
