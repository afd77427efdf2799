"""The first statement after a load: a four-table join with a grouped sum, on a fresh
encrypted TPC-H database with the default onion configuration (no designer).

    python bench/first_use.py [--sf 0.1] [--dsn DSN] [--data DIR]

The statement's first run performs every adaptation it needs -- peels, join adjustments,
the online design's Sum onions and precomputed expressions -- and is timed whole.  The
baseline is what a crypto-free rewrite of the same columns costs the same server: on the
plain database, per table the adaptations touched, one ``UPDATE`` setting each adapted
column to itself (PostgreSQL writes every row again, as an adaptation does).  The report
lists each adaptation (``adaptive.peel_log``: what, rows, time), the first run, the
second run, plain's time, and the ratio first run / rewrite.  Compaction of the rewritten
tables happens in the background (adapt/compaction.py): its time is not the statement's
and is reported apart; the second run follows it (a statement on a table being compacted
waits for the compaction's lock).  Every answer is compared with plain PostgreSQL's.
"""

from __future__ import annotations

import argparse
import re
import secrets
import sys
import time
from pathlib import Path
from typing import Any

# this script's own directory first on sys.path would make ``tpch`` this file
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

import psycopg  # noqa: E402
from psycopg import sql  # noqa: E402
from psycopg.conninfo import make_conninfo  # noqa: E402

import adaptive_client  # noqa: E402
from adaptive_client.admin.embedded import EmbeddedCluster  # noqa: E402
from adaptive_client.catalog.install import install  # noqa: E402
from tpch import harness  # noqa: E402

# TPC-H Q5's shape with its own parameters: customer, orders, lineitem, nation joined,
# a year of orders, revenue summed per nation
STATEMENT = """
SELECT n_name, sum(l_extendedprice * (1 - l_discount)) AS revenue, count(*) AS lines
FROM customer, orders, lineitem, nation
WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey AND c_nationkey = n_nationkey
  AND o_orderdate >= date '1995-01-01' AND o_orderdate < date '1996-01-01'
GROUP BY n_name
ORDER BY revenue DESC, n_name
"""


def _fresh(admin: str, name: str, installed: bool) -> str:
    with psycopg.connect(admin, autocommit=True) as c:
        c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        c.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE template0 LOCALE 'C' ENCODING 'UTF8'").format(
                sql.Identifier(name)
            )
        )
    dsn = make_conninfo(admin, dbname=name)
    if installed:
        with psycopg.connect(dsn) as c:
            install(c)
    return dsn


def _adaptations(
    enc: adaptive_client.Connection, since: int
) -> list[tuple[str, str, str, int, float]]:
    """(table, column, what, rows, ms) of each adaptation logged after id ``since``."""
    names: dict[tuple[str, str], tuple[str, str]] = {}
    for meta in enc.catalog.tables.values():
        for col in meta.stored_columns:
            for oc in col.onions.values():
                names[(meta.anon, oc.anon)] = (meta.name, col.expression or col.name)
    rows = enc.control.execute(
        "SELECT anon_table, anon_column, onion, from_layer, to_layer, mode, rows, duration_ms "
        "FROM adaptive.peel_log WHERE id > %s ORDER BY id",
        (since,),
    ).fetchall()
    out = []
    for anon_table, anon_column, onion, frm, to, mode, n, ms in rows:
        table, column = names.get((anon_table, anon_column), (anon_table, anon_column))
        out.append((table, column, f"{onion} {frm}->{to} ({mode})", int(n or 0), float(ms or 0)))
    return out


def _rewrite_seconds(plain: str, touched: dict[str, set[str]]) -> float:
    """The crypto-free rewrite: per table one UPDATE setting the adapted columns to
    themselves (an expression's inputs for a precomputed one), committed."""
    total = 0.0
    with psycopg.connect(plain) as c:
        for table, columns in sorted(touched.items()):
            sets = sql.SQL(", ").join(
                sql.SQL("{0} = {0}").format(sql.Identifier(col)) for col in sorted(columns)
            )
            t0 = time.perf_counter()
            c.execute(sql.SQL("UPDATE {} SET {}").format(sql.Identifier(table), sets))
            c.commit()
            total += time.perf_counter() - t0
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sf", type=float, default=0.1)
    ap.add_argument("--dsn", default=None, help="maintenance DSN (default: embedded cluster)")
    ap.add_argument("--data", type=Path, default=Path("results/tpch-data"))
    args = ap.parse_args()
    admin = args.dsn or EmbeddedCluster.default().dsn("postgres")
    tag = f"{args.sf:g}".replace(".", "_")
    plain_dsn = _fresh(admin, f"bench_first_use_sf{tag}_plain", False)
    enc_dsn = _fresh(admin, f"bench_first_use_sf{tag}_enc", True)
    key = secrets.token_hex(32)
    dbs = harness.build(plain_dsn, enc_dsn, key, args.sf, args.data, config={})
    print(
        f"TPC-H SF {args.sf:g} loaded: plain {dbs.load_seconds['plain']:.1f} s, "
        f"encrypted {dbs.load_seconds['encrypted']:.1f} s (default onion configuration)",
        flush=True,
    )
    with psycopg.connect(plain_dsn) as plain:
        t0 = time.perf_counter()
        expected = plain.execute(STATEMENT).fetchall()
        plain_s = time.perf_counter() - t0
    enc: Any = adaptive_client.connect(enc_dsn, master_key=key, config={}, autocommit=True)
    try:
        row = enc.control.execute("SELECT coalesce(max(id), 0) FROM adaptive.peel_log").fetchone()
        since = int(row[0]) if row else 0
        t0 = time.perf_counter()
        first = enc.execute(STATEMENT).fetchall()
        first_s = time.perf_counter() - t0
        # (the compaction holds the rewritten table's lock while it runs: a statement on
        # the table meanwhile waits for it, as it would for the adaptation itself)
        t0 = time.perf_counter()
        enc.compactor.idle(3600)
        compaction_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        second = enc.execute(STATEMENT).fetchall()
        second_s = time.perf_counter() - t0
        done = _adaptations(enc, since)
    finally:
        enc.close()
    if first != expected or second != expected:
        sys.exit("ANSWERS DIFFER from plain PostgreSQL's")
    print(f"\n{'table':<10} {'column':<36} {'adaptation':<28} {'rows':>9} {'ms':>9}")
    touched: dict[str, set[str]] = {}
    for table, column, what, n, ms in done:
        print(f"{table:<10} {column[:36]:<36} {what:<28} {n:>9} {ms:>9.0f}")
        # (a precomputed expression's inputs: TPC-H's columns are named ``x_word``)
        touched.setdefault(table, set()).update(re.findall(r"\b[a-z]{1,2}_[a-z]+\b", column))
    adapt_ms = sum(d[4] for d in done)
    rewrite_s = _rewrite_seconds(plain_dsn, touched)
    print(
        f"\nfirst run {first_s:.2f} s (adaptations {adapt_ms / 1000:.2f} s of it), "
        f"second run {second_s * 1000:.0f} ms, plain {plain_s * 1000:.0f} ms"
    )
    print(
        f"background compaction after it: {compaction_s:.2f} s (not the statement's; "
        "the second run follows it)"
    )
    print(f"crypto-free rewrite of the adapted columns: {rewrite_s:.2f} s")
    print(f"first run / rewrite: {first_s / rewrite_s:.2f}")


if __name__ == "__main__":
    main()
