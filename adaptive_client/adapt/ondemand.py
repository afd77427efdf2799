"""Onions built on first use: a column stores only the onions its queries have needed.

A column's configuration may leave an onion out of CREATE TABLE (``on_demand``, by
default ``[defaults] on_demand``; see config.py): its sealed metadata records the onion
as *to be built*, with the start layer and floor it will have, and nothing of it is
stored -- no ciphertexts, no keys.  The first statement that needs what only that onion
offers (an order, a range, a word search) builds it, an adaptation with a peel's guarantees:

* **by the client** in every peel mode: only it can compute a new onion's values.  The
  build is designed.py's (``build_table``: a statement's pending onions of one table in
  one pass, at the layers it needs, else at their start layers); this module adds and
  settles the pending onion's column (:func:`add_pending`, :func:`settle_pending`) and
  names the onion it is computed from (:func:`readable_onion`);
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

from typing import Any

import psycopg
from psycopg import sql

from ..catalog import recipes
from ..catalog.metadata import Catalog, ColumnMeta, OnionColumn, TableMeta
from ..catalog.onions import STACKS, Cap, Onion, capabilities, sum_layer_for
from ..compile.needs import BuildNeed
from ..errors import OnionBuildDisabled, StaleMetadata
from .onion_storage import (
    add_onion_columns,
    new_onion_column,
    onion_anon,
    set_not_null,
)


def check_allowed(need: BuildNeed, mode: str) -> None:
    if mode == "off":
        raise OnionBuildDisabled(
            f"{need.describe()} is built when a query first needs it (an adaptation like a "
            "peel), and peeling is off"
        )


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
    if onion is Onion.SUM:  # (nothing stored yet: ASHE, or HOM where ASHE cannot hold
        # the values -- recorded as ASHE before that was told apart)
        start = sum_layer_for(col.encoding.hom_bound, start)
        stack = (start,)
    # (HOM's keys of 2048 bits; no join group's keys: a column in one keeps every onion
    # from CREATE TABLE)
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
