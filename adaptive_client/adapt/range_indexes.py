"""Range indexes: a key's leading Eq onions, then the next column's Ord onion.

A B-tree over plain ``(w, d, o)`` serves ``w = ? AND d = ? AND o BETWEEN ? AND ?`` and
``... ORDER BY o LIMIT 1`` by walking one small range of the index.  The encrypted table's
index over the same key holds the columns' Eq onions (DET: equality only), so such a
statement reads every row with that ``w`` and ``d`` -- in TPC-C's stock level and
delivery, every order line or new order of a district, hundreds of times the rows plain
PostgreSQL reads.  For each key (primary key, UNIQUE, index) ``(c1, ..., cn)`` and each
``ck`` whose Ord onion is at OPE, the table gets a B-tree over ``(c1's Eq, ...,
c(k-1)'s Eq, ck's Ord)``: what the plain index offers, split by onion.  (An Ord onion at
RND orders nothing: its index would cost every write and serve no statement.)

The set follows the catalog (:func:`sync`, after every change of keys or layers: CREATE
TABLE, CREATE/DROP INDEX, ALTER TABLE, an Ord onion built on first use or peeled to OPE
-- in the peel's transaction --, ``adaptive-db migrate`` for a database made before
them).  They are named ``r_`` + a keyed hash of the table, its columns and their onions,
so the set on the server is found and kept in step without any record of its own.

What the provider learns: nothing it could not compute.  An index orders the
ciphertexts it stores by their bytes: at RND that order is random; at DET it groups equal
values, as the key's own index does; at OPE it is the order the OPE layer reveals.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

from ..catalog.metadata import Catalog, OnionColumn, TableMeta
from ..catalog.onions import Onion


def wanted(
    catalog: Catalog, meta: TableMeta, *, at_rnd: bool = False
) -> dict[str, list[OnionColumn]]:
    """The range indexes ``meta``'s keys and onions call for: name -> onion columns
    (``at_rnd``: also those of Ord onions still at RND, which call for none yet)."""
    # a CREATE INDEX whose columns all have Ord onions has its own index over them, which
    # already serves a range on its first column
    ordered = [
        i.columns
        for i in meta.indexes
        if not i.unique and all(Onion.ORD in meta.column(c).onions for c in i.columns)
    ]
    keys = [meta.primary_key, *meta.unique_keys.values(), *(i.columns for i in meta.indexes)]
    out: dict[str, list[OnionColumn]] = {}
    for key in keys:
        prefix: list[OnionColumn] = []
        named: list[str] = []  # (plain names and onions: a build renames onion columns)
        for name in key:
            col = meta.columns.get(name)
            if col is None:
                break
            ord_oc = col.onions.get(Onion.ORD)
            # (an Ord onion at RND orders nothing: its index waits for the peel to OPE)
            peeled = ord_oc is not None and (at_rnd or ord_oc.layer != "RND")
            if ord_oc is not None and peeled and not (not prefix and key in ordered):
                index = catalog.root.anonymize("range", meta.anon, *named, f"{name}:Ord")
                out[index] = [*prefix, ord_oc]
            eq = col.onions.get(Onion.EQ) or col.onions.get(Onion.SINGLE)
            if eq is None:  # (no onion serves equality on it: the prefix ends here)
                break
            prefix.append(eq)
            named.append(f"{name}:{eq.onion.value}")
    return out


def sync(
    conn: psycopg.Connection[Any],
    catalog: Catalog,
    meta: TableMeta,
    only: OnionColumn | None = None,
) -> list[str]:
    """Create the range indexes ``meta`` calls for and drop the ones no key calls for any
    more (a key dropped); return the names created.  ``only``: just create those over that
    onion, nothing dropped (after its peel, under the table's lock).

    The layers in a client's catalog may lag behind another client's peels: an index is
    dropped only when no key of the table could call for it at any layer, so a stale
    catalog can leave an index to be made later, never take one away."""
    want = wanted(catalog, meta)
    have = {
        r[0]
        for r in conn.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() "
            "AND tablename = %s AND indexname LIKE 'r\\_%%'",
            (meta.anon,),
        )
    }
    if only is None:
        for name in sorted(have - set(wanted(catalog, meta, at_rnd=True))):
            conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(name)))
    created = []
    for name, cols in want.items():
        if name in have or (only is not None and cols[-1] is not only):
            continue
        conn.execute(
            sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} ({})").format(
                sql.Identifier(name),
                sql.Identifier(meta.anon),
                sql.SQL(", ").join(sql.Identifier(oc.anon) for oc in cols),
            )
        )
        created.append(name)
    return created


def after_peel(
    conn: psycopg.Connection[Any], catalog: Catalog, meta: TableMeta, oc: OnionColumn, rows: int
) -> None:
    """After a peel of ``oc`` that ran (``rows`` >= 0, under the table's lock, in its
    transaction): an Ord onion now at OPE gets its range indexes, if on a key."""
    if rows >= 0 and oc.onion is Onion.ORD:
        sync(conn, catalog, meta, only=oc)


__all__ = ["after_peel", "sync", "wanted"]
