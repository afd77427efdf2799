"""``adaptive-db migrate``: move a database from the AES-CBC RND layer to the compact one,
and give it the range indexes (range_indexes.py) its keys call for.

Keyring formats 1 and 2 stored every RND layer as ``0x01 || iv(16) || AES-CBC(PKCS#7)``;
format 3 stores ``0x01 || nonce(12) || AES-CTR`` (``schemes/rnd.py``).  Only the client
holds the keys, so the client re-encrypts: for every onion column still at RND, the values
are read through a server-side cursor in batches, decrypted with the old format, encrypted
with the new one and written back by ``ctid``; the inner layers (DET, OPE, the search
tokens) are untouched, so equality, order, joins and foreign keys are as before.

Everything runs in one transaction holding the keyring row and an ACCESS EXCLUSIVE lock on
each table it rewrites, which also installs this format's stored procedures (the
server-side peel strips CTR, no longer CBC): killed at any point, the database is wholly
in the old format (still refused by new clients, still readable by old ones) or wholly in
the new one.  The format number is bound to the root key's wrapping
(``metadata.root_label``), so the provider cannot set it back without the root key
failing to unwrap.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import sql

from ..adapt import range_indexes
from ..catalog.install import install_database
from ..catalog.keys import MasterKey
from ..catalog.metadata import CBC_RND_FORMATS, KEYRING_FORMAT, Catalog, OnionColumn
from ..catalog.onions import TOKEN_ONIONS
from ..errors import MetadataTampered
from ..schemes.rnd import RND, LegacyCbcRnd

BATCH = 5_000


@dataclass
class MigrationReport:
    """What ``migrate`` did: the format before and after, and per table the values moved."""

    from_format: int
    to_format: int = KEYRING_FORMAT
    values: dict[str, int] = field(default_factory=dict)  # table -> RND values re-encrypted
    range_indexes: int = 0  # created (range_indexes.py): a database made before them

    def summary(self) -> str:
        indexes = f"; {self.range_indexes} range index(es) created" if self.range_indexes else ""
        if self.from_format == self.to_format:
            return f"already in format {self.to_format}{indexes or ': nothing to do'}"
        moved = sum(self.values.values())
        return (
            f"format {self.from_format} -> {self.to_format}: {moved} RND values re-encrypted "
            f"in {len(self.values)} table(s){indexes}"
        )


def _convert(old: LegacyCbcRnd, new: RND, values: Sequence[Any], tokens: bool) -> list[Any]:
    """One batch of a column's RND values in the new format (NULLs kept as NULL; a token
    array's one RND element)."""
    out: list[bytes | None] = []
    for v in values:
        if tokens:
            v = v[0] if v else None
        out.append(None if v is None else new.encrypt(old.decrypt(bytes(v))))
    return out


def _migrate_table(conn: psycopg.Connection[Any], anon: str, columns: list[OnionColumn]) -> int:
    tbl = sql.Identifier(anon)
    conn.execute(sql.SQL("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE").format(tbl))
    names = [sql.Identifier(oc.anon) for oc in columns]
    tokens = [oc.onion in TOKEN_ONIONS for oc in columns]  # one RND value in a bytea[]
    schemes = [(LegacyCbcRnd(oc.keys["RND"]), RND(oc.keys["RND"])) for oc in columns]
    news = [sql.Identifier(f"c{i}") for i in range(len(columns))]
    # a value left NULL in the batch (a NULL, or an empty token array) keeps what it was
    update = sql.SQL(
        "UPDATE {t} SET {sets} FROM unnest(%s::tid[], {arrays}) AS u(row_id, {news}) "
        "WHERE {t}.ctid = u.row_id"
    ).format(
        t=tbl,
        sets=sql.SQL(", ").join(
            sql.SQL(
                "{0} = CASE WHEN u.{1} IS NULL THEN {0} ELSE ARRAY[u.{1}] END"
                if is_tokens
                else "{0} = coalesce(u.{1}, {0}::bytea)"  # (an Ord onion at ORE: adaptive.ore)
            ).format(n, c)
            for n, c, is_tokens in zip(names, news, tokens, strict=True)
        ),
        arrays=sql.SQL(", ").join(sql.SQL("%s::bytea[]") for _ in columns),
        news=sql.SQL(", ").join(news),
    )
    select = sql.SQL("SELECT ctid, {} FROM {} WHERE {}").format(
        sql.SQL(", ").join(
            n if is_tokens else sql.SQL("{}::bytea").format(n)
            for n, is_tokens in zip(names, tokens, strict=True)
        ),
        tbl,
        sql.SQL(" OR ").join(sql.SQL("{} IS NOT NULL").format(n) for n in names),
    )
    moved = 0
    # a named cursor reads the table as of its opening: the rows this transaction rewrites
    # behind it are not read again
    with conn.cursor(name=f"adaptive_migrate_{anon}") as cur:
        cur.itersize = BATCH
        cur.execute(select)
        while batch := cur.fetchmany(BATCH):
            params: list[Any] = [[r[0] for r in batch]]
            for i, (old, new) in enumerate(schemes):
                converted = _convert(old, new, [r[i + 1] for r in batch], tokens[i])
                moved += sum(v is not None for v in converted)
                params.append(converted)
            conn.execute(update, params)
    return moved


def migrate(conn: psycopg.Connection[Any], master: MasterKey) -> MigrationReport:
    """Re-encrypt every RND layer of a format-1/2 database into format 3, and create the
    range indexes its keys call for (a database made before them), atomically."""
    catalog = Catalog.open(conn, master, outdated_ok=True)
    with conn.transaction():
        row = conn.execute("SELECT format FROM adaptive.keyring WHERE id = 1 FOR UPDATE").fetchone()
        if row is None:
            raise MetadataTampered("the keyring is missing")
        report = MigrationReport(int(row[0]))
        catalog.reload(conn)  # the layers as they are under the keyring's lock
        tables = sorted(catalog.tables.values(), key=lambda m: m.anon)
        if report.from_format in CBC_RND_FORMATS:
            for meta in tables:
                at_rnd = [
                    oc for col in meta.columns.values() for oc in col.storage if oc.layer == "RND"
                ]
                report.values[meta.name] = _migrate_table(conn, meta.anon, at_rnd) if at_rnd else 0
            # the stored procedures of this format: the previous ones strip CBC, not CTR
            install_database(conn)
            catalog.set_format(conn, master, KEYRING_FORMAT)
            conn.execute("UPDATE adaptive.epoch SET value = value + 1 WHERE id = 1")
        else:
            report.to_format = report.from_format
        # (after the rewrite: it would have kept them up to date row by row)
        for meta in tables:
            report.range_indexes += len(range_indexes.sync(conn, catalog, meta))
    return report
