"""A large encrypted table built fast, and set-based checks of one of its onions.

``CREATE TABLE big (id integer PRIMARY KEY, v integer)`` is created through the client
(Eq onions only: ``id`` at DET with its primary key, ``v`` at RND over DET, plus an index
on ``v``), then filled by COPY with ciphertexts made by the client's own schemes.  A
side table ``big_expected`` keeps, per row, the RND ciphertext written and the DET
ciphertext under it, so that "every value unchanged" is checked in SQL: the column's
digest equals the digest of the RND ciphertexts (not peeled) or of the DET ones (peeled).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import sql

import adaptive_client
from adaptive_client.catalog.keys import MasterKey

CONFIG = {"tables": {"big": {"id": {"onions": ["Eq"]}, "v": {"onions": ["Eq"]}}}}
TAG = {"RND": 1, "DET": 2}


@dataclass
class BigTable:
    dsn: str
    key: MasterKey
    rows: int
    table: str  # anonymized names
    id_col: str
    v_col: str
    values: dict[int, int]  # id -> v, the plaintexts
    digests: dict[str, str] = field(default_factory=dict)  # layer -> md5 of the column
    indexes: list[tuple[str, str]] = field(default_factory=list)

    # -- building and restoring ----------------------------------------------------------
    @classmethod
    def build(cls, dsn: str, key: MasterKey, rows: int, seed: int = 7) -> BigTable:
        rng = random.Random(seed)
        with adaptive_client.connect(dsn, master_key=key, config=CONFIG, autocommit=True) as c:
            c.execute("CREATE TABLE big (id integer PRIMARY KEY, v integer)")
            c.execute("CREATE INDEX big_v ON big (v)")
            meta = c.catalog.table("big")
        id_col, v_col = meta.column("id"), meta.column("v")
        id_oc, v_oc = (
            id_col.onions[next(iter(id_col.onions))],
            v_col.onions[next(iter(v_col.onions))],
        )
        values = {i: rng.randrange(-(2**31), 2**31) for i in range(1, rows + 1)}
        with psycopg.connect(dsn) as c:
            c.execute(
                "CREATE TABLE big_expected (id_det bytea PRIMARY KEY, v_rnd bytea, v_det bytea)"
            )
            with c.cursor().copy("COPY big_expected FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types(["bytea", "bytea", "bytea"])
                ids = list(values)
                for lo in range(0, rows, 50_000):
                    chunk = ids[lo : lo + 50_000]
                    id_det = id_oc.det.encrypt_many([id_col.encoding.to_bytes(i) for i in chunk])
                    v_det = v_oc.det.encrypt_many(
                        [v_col.encoding.to_bytes(values[i]) for i in chunk]
                    )
                    for a, b in zip(id_det, v_det, strict=True):
                        copy.write_row((a, v_oc.rnd.encrypt(b), b))
            digests = {
                layer: c.execute(
                    sql.SQL(
                        "SELECT md5(string_agg({}, ''::bytea ORDER BY id_det)) FROM big_expected"
                    ).format(sql.Identifier(column))
                ).fetchone()[0]  # type: ignore[index]
                for layer, column in (("RND", "v_rnd"), ("DET", "v_det"))
            }
        big = cls(dsn, key, rows, meta.anon, id_oc.anon, v_oc.anon, values, digests)
        big.restore()
        big.indexes = big.index_defs()
        return big

    def restore(self) -> None:
        """The onion back at RND with the original ciphertexts (after a peel committed)."""
        t, v = sql.Identifier(self.table), sql.Identifier(self.v_col)
        con = sql.Identifier("k_" + self.v_col)
        with psycopg.connect(self.dsn, autocommit=True) as c:
            with c.transaction():
                c.execute(sql.SQL("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE").format(t))
                c.execute(sql.SQL("ALTER TABLE {} DROP CONSTRAINT IF EXISTS {}").format(t, con))
                c.execute(sql.SQL("TRUNCATE {}").format(t))
                c.execute(
                    sql.SQL(
                        "INSERT INTO {} ({}, {}) SELECT id_det, v_rnd FROM big_expected"
                    ).format(t, sql.Identifier(self.id_col), v)
                )
                c.execute(
                    sql.SQL("ALTER TABLE {} ADD CONSTRAINT {} CHECK (get_byte({}, 0) = 1)").format(
                        t, con, v
                    )
                )
                c.execute(
                    "UPDATE adaptive.layers SET layer = 'RND' WHERE anon_table = %s AND anon_column = %s",
                    (self.table, self.v_col),
                )
                c.execute("UPDATE adaptive.epoch SET value = value + 1 WHERE id = 1")
                c.execute("NOTIFY adaptive_epoch")
            c.execute(sql.SQL("VACUUM ANALYZE {}").format(t))

    # -- checks --------------------------------------------------------------------------
    def index_defs(self) -> list[tuple[str, str]]:
        with psycopg.connect(self.dsn) as c:
            return [
                (r[0], r[1])
                for r in c.execute(
                    "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s ORDER BY 1",
                    (self.table,),
                )
            ]

    def state(self) -> str:
        """The layer the onion is at, after checking that data, constraint, indexes and
        metadata all agree on it and that every value is the one written."""
        t, v = sql.Identifier(self.table), sql.Identifier(self.v_col)
        with psycopg.connect(self.dsn) as c:
            layer_row = c.execute(
                "SELECT layer FROM adaptive.layers WHERE anon_table = %s AND anon_column = %s",
                (self.table, self.v_col),
            ).fetchone()
            assert layer_row is not None
            layer = str(layer_row[0])
            counts = c.execute(
                sql.SQL(
                    "SELECT count(*), count(*) FILTER (WHERE get_byte({v}, 0) = 1), "
                    "count(*) FILTER (WHERE get_byte({v}, 0) = 2), "
                    "md5(string_agg({v}, ''::bytea ORDER BY {i})) FROM {t}"
                ).format(v=v, t=t, i=sql.Identifier(self.id_col))
            ).fetchone()
            check = c.execute(
                "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = %s",
                ("k_" + self.v_col,),
            ).fetchall()
        assert counts is not None
        n, at_rnd, at_det, digest = counts
        assert n == self.rows, f"{n} rows, expected {self.rows}"
        assert (at_rnd, at_det) == ((n, 0) if layer == "RND" else (0, n)), (layer, at_rnd, at_det)
        assert digest == self.digests[layer], f"values changed at {layer}"
        assert len(check) == 1 and f"= {TAG[layer]})" in check[0][0], check
        assert self.index_defs() == self.indexes
        return layer


def plaintexts_through_client(big: BigTable) -> dict[int, int]:
    """Every (id, v) decrypted by a fresh client."""
    with adaptive_client.connect(big.dsn, master_key=big.key) as c:
        return {int(i): int(v) for i, v in c.execute("SELECT id, v FROM big").fetchall()}


def peel_backends(dsn: str, exclude: int = 0) -> list[int]:
    with psycopg.connect(dsn, autocommit=True) as c:
        return [
            int(r[0])
            for r in c.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                "AND query LIKE %s AND state <> 'idle' AND pid <> pg_backend_pid() AND pid <> %s",
                ("SELECT adaptive.peel_layer%", exclude),
            )
        ]


def row_count(conn: Any, table: str) -> int:
    row = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table))).fetchone()
    return int(row[0])
