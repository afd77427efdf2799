"""Peel speed: stripping RND from a large onion in place, against two references, in one run.

    python bench/peel.py [--rows 1000000] [--dsn DSN]

The table is what the client creates for ``CREATE TABLE peel_bench (id integer PRIMARY
KEY, v integer)`` with Eq onions only: the key's Eq onion at DET (with its primary-key
index) and ``v``'s Eq onion at RND over DET, filled with real ciphertexts of random values
(DET through the client's scheme, the RND layer with the column's own key).  The same
contents are restored (and vacuumed, analyzed, checkpointed) before each of three
measurements, each one transaction including its commit:

* ``update``: a crypto-free ``UPDATE`` of the same column writing values of the peeled
  length (``substring(v from 14)``: the RND layer's 13 bytes dropped), the cost of the
  data movement;
* ``naive``: a per-row PL/Python peel, ``UPDATE ... SET v = adaptive.rnd_decrypt(v, key)``;
* ``peel``: ``adaptive.peel_layer``, the stored procedure the client calls.

After each decrypting run every value is compared, in SQL, with the DET ciphertext the
bench encrypted.  The last line gives the peel's throughput over the two references
(targets: >= 4 over the naive peel, >= 0.7 over the crypto-free UPDATE).
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import sql

import adaptive_client
from adaptive_client.catalog.install import install
from adaptive_client.catalog.keys import MasterKey

DBNAME = "bench_peel"
CONFIG = {"tables": {"peel_bench": {"id": {"onions": ["Eq"]}, "v": {"onions": ["Eq"]}}}}
CHUNK = 50_000


def default_dsn() -> str:
    from adaptive_client.admin.embedded import EmbeddedCluster

    cluster = EmbeddedCluster.default()
    cluster.up()
    return cluster.dsn(DBNAME)


def recreate(dsn: str) -> None:
    name = str(psycopg.conninfo.conninfo_to_dict(dsn)["dbname"])
    admin = psycopg.conninfo.make_conninfo(dsn, dbname="postgres")
    with psycopg.connect(admin, autocommit=True) as c:
        c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        c.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    with psycopg.connect(dsn) as c:
        install(c)


class Bench:
    def __init__(self, dsn: str, rows: int, seed: int) -> None:
        self.dsn, self.rows = dsn, rows
        key = MasterKey.generate()
        with adaptive_client.connect(dsn, master_key=key, config=CONFIG, autocommit=True) as c:
            c.execute("CREATE TABLE peel_bench (id integer PRIMARY KEY, v integer)")
            meta = c.catalog.table("peel_bench")
        self.table = meta.anon
        id_col, v_col = meta.column("id"), meta.column("v")
        id_oc, self.v_oc = next(iter(id_col.onions.values())), next(iter(v_col.onions.values()))
        self.v_anon, self.key = self.v_oc.anon, self.v_oc.keys["RND"]
        self.id_anon = id_oc.anon
        rng = random.Random(seed)
        t0 = time.perf_counter()
        with psycopg.connect(dsn) as c:
            c.execute(
                "CREATE TABLE peel_bench_source (id_det bytea PRIMARY KEY, v_rnd bytea, "
                "v_det bytea)"
            )
            with c.cursor().copy("COPY peel_bench_source FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types(["bytea", "bytea", "bytea"])
                for lo in range(1, rows + 1, CHUNK):
                    ids = list(range(lo, min(rows, lo + CHUNK - 1) + 1))
                    vs = [rng.randrange(-(2**31), 2**31) for _ in ids]
                    id_det = id_oc.det.encrypt_many([id_col.encoding.to_bytes(i) for i in ids])
                    v_det = self.v_oc.det.encrypt_many([v_col.encoding.to_bytes(v) for v in vs])
                    for a, b in zip(id_det, v_det, strict=True):
                        copy.write_row((a, self.v_oc.rnd.encrypt(b), b))
        print(f"built {rows:,} rows of ciphertexts in {time.perf_counter() - t0:.1f} s")

    def reset(self) -> None:
        """The onion back at RND with the bench's ciphertexts, vacuumed and checkpointed."""
        t, v = sql.Identifier(self.table), sql.Identifier(self.v_anon)
        con = sql.Identifier("k_" + self.v_anon)
        with psycopg.connect(self.dsn, autocommit=True) as c:
            with c.transaction():
                c.execute(sql.SQL("ALTER TABLE {} DROP CONSTRAINT IF EXISTS {}").format(t, con))
                c.execute(sql.SQL("TRUNCATE {}").format(t))
                c.execute(
                    sql.SQL(
                        "INSERT INTO {} ({}, {}) SELECT id_det, v_rnd FROM peel_bench_source"
                    ).format(t, sql.Identifier(self.id_anon), v)
                )
                c.execute(
                    sql.SQL("ALTER TABLE {} ADD CONSTRAINT {} CHECK (get_byte({}, 0) = 1)").format(
                        t, con, v
                    )
                )
                c.execute(
                    "UPDATE adaptive.layers SET layer = 'RND' WHERE anon_table = %s "
                    "AND anon_column = %s",
                    (self.table, self.v_anon),
                )
            c.execute(sql.SQL("VACUUM ANALYZE {}").format(t))
            c.execute("CHECKPOINT")

    def timed(self, label: str, statements: Callable[[psycopg.Connection[Any]], None]) -> float:
        """Seconds of one transaction (with its commit) running ``statements``."""
        self.reset()
        with psycopg.connect(self.dsn) as c:
            t0 = time.perf_counter()
            statements(c)
            c.commit()
            secs = time.perf_counter() - t0
        print(
            f"{label:<8} {secs:8.2f} s  {1e6 * secs / self.rows:7.2f} us/row  "
            f"{self.rows / secs:12,.0f} rows/s"
        )
        return secs

    def drop_check(self, c: psycopg.Connection[Any]) -> None:
        c.execute(
            sql.SQL("ALTER TABLE {} DROP CONSTRAINT {}").format(
                sql.Identifier(self.table), sql.Identifier("k_" + self.v_anon)
            )
        )

    def update_with(self, expr: str) -> Callable[[psycopg.Connection[Any]], None]:
        stmt = sql.SQL(
            "UPDATE {t} SET {v} = " + expr + " WHERE {v} IS NOT NULL AND get_byte({v}, 0) = 1"
        ).format(t=sql.Identifier(self.table), v=sql.Identifier(self.v_anon))

        def run(c: psycopg.Connection[Any]) -> None:
            self.drop_check(c)
            c.execute(stmt, {"key": self.key})

        return run

    def peel(self, c: psycopg.Connection[Any]) -> None:
        c.execute(
            "SELECT adaptive.peel_layer(%s, %s, 'RND', 'DET', %s, 2)",
            (self.table, self.v_anon, self.key),
        )

    def verify(self, label: str) -> None:
        """Every value of the onion is now the DET ciphertext the bench encrypted."""
        with psycopg.connect(self.dsn) as c:
            row = c.execute(
                sql.SQL(
                    "SELECT count(*), count(*) FILTER (WHERE t.{v} = s.v_det) FROM {t} t "
                    "JOIN peel_bench_source s ON s.id_det = t.{i}"
                ).format(
                    t=sql.Identifier(self.table),
                    v=sql.Identifier(self.v_anon),
                    i=sql.Identifier(self.id_anon),
                )
            ).fetchone()
        if row != (self.rows, self.rows):
            raise SystemExit(f"{label}: {row} rows / correct values, expected {self.rows}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument(
        "--dsn",
        help=f"an empty database to use (default: {DBNAME} on the embedded cluster, recreated)",
    )
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    dsn = args.dsn or default_dsn()
    recreate(dsn)
    bench = Bench(dsn, args.rows, args.seed)
    update = bench.timed("update", bench.update_with("substring({v} from 14)"))
    naive = bench.timed("naive", bench.update_with("adaptive.rnd_decrypt({v}, %(key)s)"))
    bench.verify("naive")
    peel = bench.timed("peel", bench.peel)
    bench.verify("peel")
    print(
        f"{args.rows:,} rows: peel/naive = {naive / peel:.2f} (target >= 4), "
        f"peel/update = {update / peel:.2f} (target >= 0.7)"
    )


if __name__ == "__main__":
    main()
