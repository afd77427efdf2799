"""The onion columns of a table on the server, and the catalog change that adds them.

Shared by the DDL (CREATE TABLE, ALTER TABLE ... ADD COLUMN / TYPE) and by the
adaptations that add an onion to a column (a build, ondemand.py): an onion column's
anonymized name (:func:`onion_anon`, :func:`fresh_name`), its keys
(:func:`new_onion_column`: fresh ones, a join group's, the database's one Paillier
key), its server type (:func:`storage_type`), adding it to the server table with its
layer row (:func:`add_onion_columns`, :func:`set_not_null`), and the epoch bump that
tells the other clients the catalog changed (:func:`bump_epoch`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import sql

from ..catalog import ord_layers
from ..catalog.keys import new_key
from ..catalog.metadata import Catalog, CatalogHead, ColumnMeta, OnionColumn, TableMeta
from ..catalog.onions import TOKEN_ONIONS, Onion
from ..errors import StaleMetadata
from ..schemes import HOM

# the shared key group that holds the database's one Paillier key
HOM_GROUP = "__paillier__"


def storage_type(col: ColumnMeta, oc: OnionColumn) -> str:
    """The server column type of onion ``oc`` of ``col``."""
    if oc.stack == ("PLAIN",):  # in the clear: the server orders it, by its collation
        collate = col.collation and col.type.name in ("text", "varchar", "char")
        return col.type.sql() + (col.collation.clause() if collate and col.collation else "")
    if oc.onion is Onion.SUM:
        return "int8[]" if oc.stack == ("ASHE",) else "numeric"
    if oc.onion in TOKEN_ONIONS:
        return "bytea[]"
    return ord_layers.ORE_TYPE if oc.ord_scheme == "ORE" else "bytea"


def hom_key(conn: psycopg.Connection[Any], catalog: Catalog, bits: int) -> bytes:
    """One Paillier key per database: Paillier is IND-CPA, sharing it leaks nothing."""
    keys = catalog.shared_keys(conn, HOM_GROUP, lambda: {"HOM": HOM.generate(bits).to_bytes()})
    return keys["HOM"]


def bump_epoch(conn: psycopg.Connection[Any]) -> None:
    """Tell the other clients the catalog changed (they reload it on the notification,
    or when they next read the epoch)."""
    conn.execute("UPDATE adaptive.epoch SET value = value + 1 WHERE id = 1")
    conn.execute("NOTIFY adaptive_epoch")


def fresh_name(taken: set[str], make: Callable[..., str], *parts: str) -> str:
    """An anonymized name not in use: the keyed hash of ``parts``, salted with a counter
    when a renamed object still holds it."""
    name = make(*parts)
    n = 1
    while name in taken:
        name = make(*parts, str(n))
        n += 1
    return name


def onion_anon(catalog: Catalog, table: str, column: str, onion: Onion, taken: set[str]) -> str:
    """The anonymized name of a column's onion, salted while a renamed column holds it."""
    anon, n = catalog.anon_column(table, column, onion), 1
    while anon in taken:
        anon, n = catalog.anon_column(table, f"{column}\x1f{n}", onion), n + 1
    return anon


def lock_for_rewrite(
    conn: psycopg.Connection[Any], catalog: Catalog, meta: TableMeta, what: str
) -> CatalogHead:
    """Lock ``meta``'s table (``ACCESS EXCLUSIVE``) and the catalog head, in the
    caller's transaction, and return the head.  Raises :class:`StaleMetadata` when the
    table's sealed version moved since ``catalog`` was loaded (``what`` was planned from
    older metadata: the caller reloads it and plans again).

    The table's layer rows are locked first, then the table: the order a peel takes
    them in (peel.py, adaptive.peel_layers), so that a rewrite and a peel of the same
    table queue one behind the other instead of each holding what the other waits for."""
    conn.execute(
        "SELECT 1 FROM adaptive.layers WHERE anon_table = %s FOR UPDATE", (meta.anon,)
    ).fetchall()
    conn.execute(
        sql.SQL("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE").format(sql.Identifier(meta.anon))
    )
    head = catalog._read_head(conn, lock=True)
    if head.tables.get(meta.anon) != meta.version:
        raise StaleMetadata(f"table {meta.name} changed while {what} was planned")
    return head


def new_onion_column(
    conn: psycopg.Connection[Any],
    catalog: Catalog,
    hom_bits: int,
    col: ColumnMeta,
    onion: Onion,
    stack: tuple[str, ...],
    start: str,
    floor: str | None,
    anon: str,
    group_keys: dict[str, bytes],
    ord_layer: str | None = None,
) -> OnionColumn:
    """One onion of ``col`` under fresh keys (a join group's DET and OPE keys if it has
    one), nothing written yet; an Ord onion's order layer is ``ord_layer`` (OPE or ORE;
    None: ``ord_layers.chosen``'s default)."""
    keys: dict[str, bytes] = {}
    for layer in stack:
        if layer in ("DET", "OPE") and layer in group_keys:
            keys[layer] = group_keys[layer]
        elif layer == "HOM":
            keys[layer] = hom_key(conn, catalog, hom_bits)
        elif layer != "PLAIN":
            keys[layer] = new_key()
    if onion is Onion.SINGLE and stack[0] == "RND":
        keys.setdefault("RND", new_key())
    enc = col.encoding
    return OnionColumn(
        onion=onion,
        anon=anon,
        stack=stack,
        layer=start,
        floor=floor,
        keys=keys,
        ope_bits=enc.ope_bits,
        ope_exact=enc.ope_exact,
        ord_scheme=ord_layers.chosen(ord_layer) if onion is Onion.ORD else "OPE",
    )


def add_onion_columns(conn: psycopg.Connection[Any], meta: TableMeta, col: ColumnMeta) -> None:
    for oc in col.onions.values():
        piece = sql.SQL("ADD COLUMN {} {}").format(
            sql.Identifier(oc.anon), sql.SQL(storage_type(col, oc))
        )
        # (no layer-tag check: no client has the new onion at another layer, see
        # ddl.create_table; a build renames the column it reads, which stops stale writers)
        conn.execute(sql.SQL("ALTER TABLE {} {}").format(sql.Identifier(meta.anon), piece))
    conn.execute(
        "INSERT INTO adaptive.layers (anon_table, anon_column, onion, layer) "
        "SELECT %s, unnest(%s::text[]), unnest(%s::text[]), unnest(%s::text[])",
        (
            meta.anon,
            [oc.anon for oc in col.onions.values()],
            [oc.onion.value for oc in col.onions.values()],
            [oc.layer for oc in col.onions.values()],
        ),
    )


def drop_onion_columns(
    conn: psycopg.Connection[Any], meta: TableMeta, col: ColumnMeta, cascade: bool = False
) -> None:
    """Drop ``col``'s onion columns from ``meta``'s table and their layer rows (what
    :func:`add_onion_columns` added); ``cascade``: with what depends on them."""
    for oc in col.onions.values():
        conn.execute(
            sql.SQL("ALTER TABLE {} DROP COLUMN {} {}").format(
                sql.Identifier(meta.anon),
                sql.Identifier(oc.anon),
                sql.SQL("CASCADE" if cascade else ""),
            )
        )
    conn.execute(
        "DELETE FROM adaptive.layers WHERE anon_table = %s AND anon_column = ANY(%s)",
        (meta.anon, [oc.anon for oc in col.onions.values()]),
    )


def set_not_null(conn: psycopg.Connection[Any], meta: TableMeta, col: ColumnMeta) -> None:
    for oc in col.onions.values():
        conn.execute(
            sql.SQL("ALTER TABLE {} ALTER COLUMN {} SET NOT NULL").format(
                sql.Identifier(meta.anon), sql.Identifier(oc.anon)
            )
        )


__all__ = [
    "add_onion_columns",
    "bump_epoch",
    "fresh_name",
    "hom_key",
    "lock_for_rewrite",
    "new_onion_column",
    "onion_anon",
    "set_not_null",
    "storage_type",
]
