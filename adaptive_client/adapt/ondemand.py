"""Onions built on first use: a column stores only the onions its queries have needed.

A column's configuration may leave an onion out of CREATE TABLE (``on_demand``, by
default ``[defaults] on_demand``; see config.py): its sealed metadata records the onion
as *to be built*, with the start layer and floor it will have, and nothing of it is
stored -- no ciphertexts, no keys.  The first statement that needs what only that onion
offers (an order, a range, a word search) builds it, an adaptation with a peel's guarantees:

* **by the client** in every peel mode: only it can compute a new onion's values.  It
  reads the column's readable onion with each row's ``ctid``, decrypts the values,
  encrypts them into the new onion at its start layer (RND outermost: the provider
  learns nothing new until a peel), loads them by COPY into a temporary table and sets
  them with one ``UPDATE ... FROM`` it joined on ``ctid``;
* **atomic**: one transaction (a savepoint inside the application's) adds the column,
  fills it, records its layer row, the audit row and the table's sealed metadata.
  Killed at any point, the column is as it was: onion not built, still pending;
* **concurrent clients**: the table is locked (``ACCESS EXCLUSIVE``) and its sealed
  version checked under the catalog head's lock; a build planned from a catalog another
  client has changed meanwhile is abandoned and planned again (the other client's build
  is then found done).  A client whose cached metadata predates the build would write
  rows without the new onion: the column's readable onion is *renamed* in the same
  transaction, so any statement of such a client that writes (or reads) the column names
  a column that no longer exists and is retried from the reloaded catalog;
* **audited**: an ``adaptive.peel_log`` row, mode ``build``, from layer ``-`` to the
  start layer;
* **refusals**: peel mode ``off`` refuses (:class:`OnionBuildDisabled`), naming the
  column and the onion.

``adaptive-db layers`` lists a pending onion as ``(on first use)``: the provider learns
nothing from it, since it does not exist.
"""

from __future__ import annotations

import time
from typing import Any

import psycopg
from psycopg import sql

from ..catalog import foreign_keys, recipes
from ..catalog.metadata import Catalog, ColumnMeta, OnionColumn, TableMeta
from ..catalog.onions import STACKS, TOKEN_ONIONS, Cap, Onion, capabilities
from ..compile.needs import BuildNeed
from ..errors import OnionBuildDisabled, StaleMetadata
from . import range_indexes
from .index_rebuild import indexes_dropped
from .joins import rename_onion
from .onion_storage import (
    add_onion_columns,
    bump_epoch,
    lock_for_rewrite,
    new_onion_column,
    onion_anon,
    set_not_null,
    storage_type,
)
from .progress import Progress


def check_allowed(need: BuildNeed, mode: str) -> None:
    if mode == "off":
        raise OnionBuildDisabled(
            f"{need.describe()} is built when a query first needs it (an adaptation like a "
            "peel), and peeling is off"
        )


def build(
    conn: psycopg.Connection[Any],
    catalog: Catalog,
    need: BuildNeed,
) -> int:
    """Build one pending onion in its own transaction (a savepoint inside an open one) on
    ``conn``; return the rows written (-1: it was built already).

    Raises :class:`StaleMetadata` when the catalog changed since it was loaded: the
    caller reloads it and plans again."""
    t0 = time.monotonic()
    meta = catalog.table(need.table)
    col = meta.column(need.column)
    if need.onion not in col.on_demand:
        return -1
    with conn.transaction():
        head = lock_for_rewrite(conn, catalog, meta, "an onion build")
        taken = {oc.anon for c in meta.stored_columns for oc in c.onions.values()}
        oc = add_pending(conn, catalog, meta, col, need.onion, taken)
        source = readable_onion(col)
        rows = _fill(conn, meta, col, source, oc, storage_type(col, oc))
        rename_onion(conn, meta.anon, source, "b", head.generation + 1)
        if meta.foreign_keys:
            foreign_keys.set_null_trigger(conn, meta)  # (it names the renamed column)
        settle_pending(conn, meta, col, oc)
        range_indexes.sync(conn, catalog, meta, only=oc)  # (at OPE already: a start layer)
        conn.execute(
            "INSERT INTO adaptive.peel_log (anon_table, anon_column, onion, from_layer, "
            "to_layer, mode, rows, duration_ms) VALUES (%s, %s, %s, '-', %s, 'build', %s, %s)",
            (meta.anon, oc.anon, oc.onion.value, oc.layer, rows, (time.monotonic() - t0) * 1000),
        )
        catalog.write_table(conn, meta, new=False)
        bump_epoch(conn)
    return rows


def add_pending(
    conn: psycopg.Connection[Any],
    catalog: Catalog,
    meta: TableMeta,
    col: ColumnMeta,
    onion: Onion,
    taken: set[str],
    layer: str | None = None,
) -> OnionColumn:
    """``col``'s pending ``onion`` as a stored column, not filled yet: its keys, its
    start layer (``layer`` if given: the one a statement needs) and floor as recorded at
    CREATE TABLE, the column and its layer row as ADD COLUMN adds them (``taken``: the
    table's onion column names, the new one added)."""
    pending = col.on_demand[onion]
    anon = onion_anon(catalog, meta.name, col.name, onion, taken)
    taken.add(anon)
    stack = STACKS[onion]
    start = layer or str(pending.get("start") or stack[0])
    # (hom_bits unused: an Ord or Search onion has no HOM layer, a Sum onion is ASHE; no
    # join group's keys: a column in one keeps every onion from CREATE TABLE)
    ord_layer = pending.get("ord_layer")  # (recorded at CREATE TABLE: OPE or ORE)
    oc = new_onion_column(
        conn, catalog, 2048, col, onion, stack, start, pending.get("floor"), anon, {}, ord_layer
    )
    add_onion_columns(conn, meta, ColumnMeta(col.name, col.type, col.nullable, {onion: oc}))
    return oc


def settle_pending(
    conn: psycopg.Connection[Any], meta: TableMeta, col: ColumnMeta, oc: OnionColumn
) -> None:
    """Once ``oc`` is filled: NOT NULL where ``col`` is, no longer pending, and among
    ``col``'s onions in their order."""
    if not col.nullable:
        set_not_null(conn, meta, ColumnMeta(col.name, col.type, False, {oc.onion: oc}))
    del col.on_demand[oc.onion]
    order = list(Onion)
    merged = {**col.onions, oc.onion: oc}
    col.onions = dict(sorted(merged.items(), key=lambda kv: order.index(kv[0])))


def _t(meta: TableMeta) -> sql.Identifier:
    return sql.Identifier(meta.anon)


def readable_onion(col: ColumnMeta) -> OnionColumn:
    """The onion of ``col`` the client decrypts to compute another from (cheapest first)."""
    for oc in recipes.onion_order(col):
        if Cap.DECRYPT in capabilities(oc.onion, oc.layer, oc.ope_exact):
            return oc
    raise StaleMetadata(f"no onion of {col.name} can be decrypted to build another")


def _fill(
    conn: psycopg.Connection[Any],
    meta: TableMeta,
    col: ColumnMeta,
    source: OnionColumn,
    oc: OnionColumn,
    storage: str,
) -> int:
    """Every row's value of the new onion: the column's values read with their ``ctid``,
    decrypted and encrypted in batches, set by one UPDATE joined on ``ctid``."""
    progress = Progress(f"{meta.name}: building {col.name}'s {oc.onion} onion")
    rows = conn.execute(
        sql.SQL("SELECT ctid::text, {c} FROM {t} WHERE {c} IS NOT NULL").format(
            c=sql.Identifier(source.anon), t=_t(meta)
        )
    ).fetchall()
    if not rows:
        return 0
    plains = recipes.decrypt_stored_many(col, source, [r[1] for r in rows])
    progress.step("read and decrypted", len(rows))
    cts = recipes.encrypt_many(col, oc, plains)
    progress.step("encrypted")
    staged = sql.Identifier(f"adaptive_build_{oc.anon}")
    conn.execute(
        sql.SQL("CREATE TEMP TABLE {} (at tid, v {}) ON COMMIT DROP").format(
            staged, sql.SQL(storage)
        )
    )
    with conn.cursor().copy(sql.SQL("COPY {} (at, v) FROM STDIN").format(staged)) as copy:
        for row, ct in zip(rows, cts, strict=True):
            copy.write_row((row[0], list(ct) if oc.onion in TOKEN_ONIONS else ct))
    conn.execute(sql.SQL("ANALYZE {}").format(staged))
    with indexes_dropped(conn, meta.anon):
        cur = conn.execute(
            sql.SQL("UPDATE {t} AS t SET {c} = s.v FROM {s} AS s WHERE t.ctid = s.at").format(
                t=_t(meta), c=sql.Identifier(oc.anon), s=staged
            )
        )
    conn.execute(sql.SQL("DROP TABLE {}").format(staged))
    progress.end()
    return cur.rowcount
