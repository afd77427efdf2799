"""TPC-C load time and on-disk size: adaptive against plain, loaded in the same run.

    python bench/load_size.py [--scale small|full] [--warehouses 1]

Loads the plain database (psycopg) and the adaptive one (through the client, every
column in all the onions its type supports, all at RND) one after the other into fresh
databases of the embedded cluster, then measures both on disk after VACUUM.  Targets:
adaptive load time <= 3x plain, adaptive size <= 4x plain.

With ``--breakdown``, the adaptive database's bytes are then split by onion and layer
(``adaptive.layers``; columns it does not list -- HOM, storage copies, bookkeeping -- under
their own names), each with its values' count and mean stored size (``pg_column_size``),
and by table (heap, indexes, TOAST).

The last line gives both ratios.
"""

from __future__ import annotations

import argparse
from collections import defaultdict

import psycopg
from psycopg import sql

from tpcc.cli import _cluster_dsn, _load_into, database_bytes


def breakdown(dsn: str) -> None:
    """Print where an adaptive database's bytes go: per onion/layer, then per table."""
    with psycopg.connect(dsn, autocommit=True) as c:
        layers = {
            (t, col): f"{onion}@{layer}"
            for t, col, onion, layer in c.execute(
                "SELECT anon_table, anon_column, onion, layer FROM adaptive.layers"
            ).fetchall()
        }
        tables = c.execute(
            "SELECT c.relname, c.reltuples::bigint, pg_relation_size(c.oid), "
            "pg_indexes_size(c.oid), pg_total_relation_size(c.oid) - pg_relation_size(c.oid) "
            "- pg_indexes_size(c.oid) FROM pg_class c WHERE c.relkind = 'r' "
            "AND c.relnamespace = 'public'::regnamespace ORDER BY 3 DESC"
        ).fetchall()
        per_onion: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # bytes, values
        print(f"{'table':<24} {'rows':>9} {'heap MB':>8} {'index MB':>8} {'toast MB':>8}")
        for name, rows, heap, index, toast in tables:
            print(
                f"{name:<24} {rows:>9} {heap / 2**20:>8.1f} {index / 2**20:>8.1f} "
                f"{toast / 2**20:>8.1f}"
            )
            columns = [
                r[0]
                for r in c.execute(
                    "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass "
                    "AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
                    (name,),
                ).fetchall()
            ]
            sums = sql.SQL(", ").join(
                sql.SQL("coalesce(sum(pg_column_size({0})), 0), count({0})").format(
                    sql.Identifier(col)
                )
                for col in columns
            )
            row = c.execute(sql.SQL("SELECT {} FROM {}").format(sums, sql.Identifier(name)))
            got = row.fetchone() or ()
            for i, col in enumerate(columns):
                kind = layers.get((name, col), "other")
                per_onion[kind][0] += int(got[2 * i])
                per_onion[kind][1] += int(got[2 * i + 1])
        total = sum(b for b, _ in per_onion.values()) or 1
        print(f"{'onion@layer':<24} {'MB':>8} {'share':>6} {'values':>10} {'bytes/value':>11}")
        for kind, (size, count) in sorted(per_onion.items(), key=lambda kv: -kv[1][0]):
            print(
                f"{kind:<24} {size / 2**20:>8.1f} {size / total:>6.1%} {count:>10} "
                f"{size / max(count, 1):>11.1f}"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", default="small", choices=("tiny", "small", "full"))
    ap.add_argument("--warehouses", type=int, default=1)
    ap.add_argument("--databases", default="bench_load", help="prefix of the databases' names")
    ap.add_argument("--breakdown", action="store_true", help="split the bytes by onion/table")
    args = ap.parse_args()
    seconds, size = {}, {}
    for config in ("plain", "adaptive"):
        dsn = _cluster_dsn(f"{args.databases}_{config}")
        seconds[config] = _load_into(dsn, config, args.warehouses, args.scale)
        size[config] = database_bytes(dsn)
        print(f"{config:<9} load {seconds[config]:8.1f} s   size {size[config] / 2**20:8.1f} MB")
    if args.breakdown:
        breakdown(_cluster_dsn(f"{args.databases}_adaptive"))
    load_ratio = seconds["adaptive"] / seconds["plain"]
    size_ratio = size["adaptive"] / size["plain"]
    print(
        f"adaptive/plain ({args.warehouses} warehouse(s), {args.scale}): "
        f"load time {load_ratio:.2f}x (target <= 3x), size {size_ratio:.2f}x (target <= 4x)"
    )


if __name__ == "__main__":
    main()
