"""Field onions built on first use: a jsonb field a statement compares, orders or groups
by (compile/field_onions.py) gets onions of its own, so that the server does it.

A field onion is a precomputed expression (catalog/precomputed.py) that the client adds
itself: a hidden ``text`` column of the table holding ``attrs ->> 'sku'`` (or ``#>>``,
a chain of ``->``), in an Eq and an Ord onion, both at RND -- the provider learns nothing
of the field until a statement peels one, as for any column's onions.  From then on the
client computes it on every INSERT, COPY and UPDATE of the jsonb column, and the
precomputed pass gives the statements naming the field to the server.

The build has an onion build's guarantees (adapt/ondemand.py): one transaction (a
savepoint inside the application's), the table locked ``ACCESS EXCLUSIVE`` and its
sealed version checked, every row's value computed by the client from the jsonb
column's readable onion and set by one ``UPDATE ... FROM`` joined on ``ctid``; that
onion is renamed, so that a client whose cached metadata predates the field (and would
write rows without it) fails and retries from the reloaded catalog; audited as a
``build`` in ``adaptive.peel_log``; refused by peel mode ``off`` (the statement then
runs as compiled, extracting the field on the client).
"""

from __future__ import annotations

import re
import time
from typing import Any

import psycopg
from psycopg import sql

from ..catalog import precomputed, recipes
from ..catalog.metadata import Catalog, ColumnMeta, TableMeta
from ..catalog.onions import STACKS, Onion
from ..compile.needs import FieldNeed
from ..errors import StaleMetadata
from ..values.encoding_base import SqlType
from .joins import rename_onion
from .onion_storage import (
    add_onion_columns,
    bump_epoch,
    fresh_name,
    new_onion_column,
    onion_anon,
)

# the onions of a field: equality and grouping, order and ranges
FIELD_ONIONS = (Onion.EQ, Onion.ORD)


def build(conn: psycopg.Connection[Any], catalog: Catalog, need: FieldNeed) -> int:
    """Build one field onion in its own transaction (a savepoint inside an open one) on
    ``conn``; return the rows written (-1: the table has it already).

    Raises :class:`StaleMetadata` when the catalog changed since it was loaded: the
    caller reloads it and plans again."""
    t0 = time.monotonic()
    meta = catalog.table(need.table)
    if any(c.expression == need.expression for c in meta.precomputed.values()):
        return -1
    source = meta.column(need.column)
    with conn.transaction():
        conn.execute(sql.SQL("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE").format(_t(meta)))
        head = catalog._read_head(conn, lock=True)
        if head.tables.get(meta.anon) != meta.version:
            raise StaleMetadata(f"table {meta.name} changed while a field onion was planned")
        col = ColumnMeta(_name(meta, need), SqlType("text"), True, {})
        col.collation, col.expression = source.collation, need.expression
        taken = {oc.anon for c in meta.stored_columns for oc in c.onions.values()}
        for onion in FIELD_ONIONS:
            stack = STACKS[onion]
            anon = onion_anon(catalog, meta.name, col.name, onion, taken)
            taken.add(anon)
            col.onions[onion] = new_onion_column(
                conn, catalog, 2048, col, onion, stack, stack[0], None, anon, {}
            )
        add_onion_columns(conn, meta, col)
        meta.precomputed[col.name] = col
        readable = recipes.onion_order(source)[0]
        rows = _fill(conn, meta, source, readable, col)
        rename_onion(conn, meta.anon, readable, "b", head.generation + 1)
        conn.execute(
            "INSERT INTO adaptive.peel_log (anon_table, anon_column, onion, from_layer, "
            "to_layer, mode, rows, duration_ms) VALUES (%s, %s, %s, '-', %s, 'build', %s, %s)",
            (
                meta.anon,
                col.onions[Onion.EQ].anon,
                Onion.EQ.value,
                "RND",
                rows,
                (time.monotonic() - t0) * 1000,
            ),
        )
        catalog.write_table(conn, meta, new=False)
        bump_epoch(conn)
    return rows


def _t(meta: TableMeta) -> sql.Identifier:
    return sql.Identifier(meta.anon)


def _name(meta: TableMeta, need: FieldNeed) -> str:
    """A name for the hidden column, unused by the table: the column and the path's
    words (``attrs_sku``), numbered where taken."""
    words = re.findall(r"[a-z0-9]+", need.expression.lower())
    base = "_".join(words)[:48] or need.column
    return fresh_name(set(meta.columns) | set(meta.precomputed), lambda *p: "_".join(p), base)


def _fill(
    conn: psycopg.Connection[Any],
    meta: TableMeta,
    source: ColumnMeta,
    readable: Any,
    col: ColumnMeta,
) -> int:
    """Every row's field, computed from the jsonb column's values (read with their
    ``ctid``, decrypted), encrypted into each onion and set by one UPDATE on ``ctid``."""
    rows = conn.execute(
        sql.SQL("SELECT ctid::text, {c} FROM {t} WHERE {c} IS NOT NULL").format(
            c=sql.Identifier(readable.anon), t=_t(meta)
        )
    ).fetchall()
    docs = recipes.decrypt_many(source, readable, [r[1] for r in rows])
    expression = precomputed.expression_of(meta, col)
    fields = [precomputed.value_of(col, expression, {source.name: d}) for d in docs]
    present = [i for i, v in enumerate(fields) if v is not None]
    if not present:
        return 0
    onions = list(col.onions.values())
    stored = [recipes.encrypt_many(col, oc, [fields[i] for i in present]) for oc in onions]
    staged = sql.Identifier(f"adaptive_field_{onions[0].anon}")
    columns = sql.SQL(", ").join(sql.Identifier(f"v{k}") for k in range(len(onions)))
    conn.execute(
        sql.SQL("CREATE TEMP TABLE {} (at tid, {}) ON COMMIT DROP").format(
            staged,
            sql.SQL(", ").join(
                sql.SQL("{} bytea").format(sql.Identifier(f"v{k}")) for k in range(len(onions))
            ),
        )
    )
    copy_sql = sql.SQL("COPY {} (at, {}) FROM STDIN").format(staged, columns)
    with conn.cursor().copy(copy_sql) as copy:
        for j, i in enumerate(present):
            copy.write_row((rows[i][0], *(values[j] for values in stored)))
    conn.execute(sql.SQL("ANALYZE {}").format(staged))
    sets = sql.SQL(", ").join(
        sql.SQL("{} = s.{}").format(sql.Identifier(oc.anon), sql.Identifier(f"v{k}"))
        for k, oc in enumerate(onions)
    )
    cur = conn.execute(
        sql.SQL("UPDATE {t} AS t SET {sets} FROM {s} AS s WHERE t.ctid = s.at").format(
            t=_t(meta), sets=sets, s=staged
        )
    )
    conn.execute(sql.SQL("DROP TABLE {}").format(staged))
    return cur.rowcount
