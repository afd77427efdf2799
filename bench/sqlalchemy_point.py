"""A point SELECT through SQLAlchemy Core: postgresql+adaptive:// on an encrypted
database against postgresql+psycopg:// on a plain one, in one run.

    python bench/sqlalchemy_point.py [--dsn DSN] [--rows 10000] [--queries 3000]

Both databases get the same table and rows; each engine then runs the same compiled
``SELECT ... WHERE id = :id`` for random keys on one connection (the statement cache
warm, the key's Eq onion at DET as primary keys are), in alternating rounds of 100
queries.  The last line is the median of the rounds' ratios, encrypted / plain.
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import statistics
import time
from decimal import Decimal

import psycopg
import sqlalchemy as sa
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

import adaptive_client.sqlalchemy  # noqa: F401  (registers the dialect in a checkout)
from adaptive_client.admin.embedded import EmbeddedCluster
from adaptive_client.catalog.install import install
from adaptive_client.catalog.keys import MasterKey


def url(dsn: str, driver: str) -> sa.URL:
    d = conninfo_to_dict(dsn)
    return sa.URL.create(
        f"postgresql+{driver}",
        username=d.get("user"),
        password=d.get("password"),
        host=d.get("host"),
        port=int(d["port"]) if d.get("port") else None,
        database=d.get("dbname"),
    )


def scratch(maintenance: str, name: str) -> str:
    with psycopg.connect(maintenance, autocommit=True) as c:
        c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        c.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return make_conninfo(maintenance, dbname=name)


def interleaved(
    plain: sa.Engine, enc: sa.Engine, table: sa.Table, keys: list[int], per_round: int
) -> tuple[list[float], list[float]]:
    """Seconds per query on each engine, one figure per round of ``per_round`` queries;
    the two engines' rounds alternate, so that both see the same load on a shared
    machine."""
    q = sa.select(table).where(table.c.id == sa.bindparam("k"))
    out: tuple[list[float], list[float]] = ([], [])
    with plain.connect() as pc, enc.connect() as ec:
        conns = (pc, ec)
        for conn in conns:
            for k in keys[:200]:  # warm: statement cache, plan cache, a first peel if any
                conn.execute(q, {"k": k}).one()
        for start in range(0, len(keys), per_round):
            batch = keys[start : start + per_round]
            for conn, times in zip(conns, out, strict=True):
                t0 = time.perf_counter()
                for k in batch:
                    conn.execute(q, {"k": k}).one()
                times.append((time.perf_counter() - t0) / len(batch))
                conn.commit()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dsn", default=None, help="maintenance DSN (default: the embedded cluster)")
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=3000)
    args = ap.parse_args()
    maintenance = args.dsn or EmbeddedCluster.default().dsn("postgres")
    tag = secrets.token_hex(3)
    plain_dsn = scratch(maintenance, f"bench_sa_plain_{tag}")
    enc_dsn = scratch(maintenance, f"bench_sa_enc_{tag}")
    with psycopg.connect(enc_dsn) as c:
        install(c)
    key = MasterKey.generate()
    md = sa.MetaData()
    table = sa.Table(
        "account",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("owner", sa.String(40)),
        sa.Column("balance", sa.Numeric(12, 2)),
    )
    plain = sa.create_engine(url(plain_dsn, "psycopg"))
    enc = sa.create_engine(url(enc_dsn, "adaptive"), connect_args={"master_key": key})
    data = [
        {"id": i, "owner": f"owner {i % 1000}", "balance": Decimal(i % 100_000) / 100}
        for i in range(args.rows)
    ]
    for eng in (plain, enc):
        md.create_all(eng)
        with eng.begin() as conn:
            conn.execute(table.insert(), data)
    rnd = random.Random(1)
    keys = [rnd.randrange(args.rows) for _ in range(args.queries)]
    try:
        p, e = interleaved(plain, enc, table, keys, 100)
    finally:
        plain.dispose()
        enc.dispose()
        with psycopg.connect(maintenance, autocommit=True) as c:
            for name in (f"bench_sa_plain_{tag}", f"bench_sa_enc_{tag}"):
                c.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
                )
    pm, em = statistics.median(p), statistics.median(e)
    ratio = statistics.median(b / a for a, b in zip(p, e, strict=True))
    print(f"plain  (postgresql+psycopg):     {pm * 1e6:8.1f} us per point SELECT (median)")
    print(f"encrypted (postgresql+adaptive): {em * 1e6:8.1f} us per point SELECT (median)")
    print(f"ratio {ratio:.2f} (median of the rounds' ratios)")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
