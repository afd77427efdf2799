"""What the online design builds (compile/design_wants.py), and the precomputed columns
built on first use that it shares with the field onions (field_onions.py).

:func:`build_table` builds everything one statement needs and wants of one table in
**one pass**: its columns' pending onions (those built on first use, each at the layer
the statement needs it at, and the Sum onions the online design pends) and its
precomputed expressions (catalog/precomputed.py:
a hidden column of the table in the onions the statement asked for, each at the layer
the statement needs -- a Sum onion's one layer, DET for an Eq onion it groups or filters
by, OPE for an Ord onion it orders or ranges over: built at RND, the statement would
peel it there at once, a second rewrite of the table for what the provider learns
either way).  One scan reads the
inputs' readable onions, the client computes and encrypts every new value, and one
``UPDATE ... FROM`` joined on ``ctid`` writes them all: the table is rewritten once,
however many onions the statement wanted.

The build has an onion build's guarantees (ondemand.py): one transaction (a savepoint
inside the application's), the table locked ``ACCESS EXCLUSIVE`` and its sealed version
checked; each input's readable onion renamed, so that a client whose cached metadata
predates the new onions (and would write rows without them) fails and retries from the
reloaded catalog; audited as ``build`` rows in ``adaptive.peel_log``; recorded in the
table's ``designed`` list with the bytes per row each was counted at.

From then on the client computes the precomputed columns on every INSERT, COPY and UPDATE
of their inputs, and the precomputed pass (compile/precomputed_pass.py) gives the
statements naming the expressions to the server.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from ..catalog import foreign_keys, precomputed, recipes
from ..catalog.metadata import Catalog, ColumnMeta, OnionColumn, TableMeta
from ..catalog.onions import STACKS, Onion
from ..compile.design_wants import row_bytes
from ..compile.needs import BuildNeed, DesignNeed, ExpressionNeed
from ..errors import NumericOutOfRange, UnsupportedQuery, ValueOutOfDomain
from ..values.encodings import parse_sql_type
from . import range_indexes
from .index_rebuild import indexes_dropped
from .joins import rename_onion
from .ondemand import add_pending, readable_onion, settle_pending
from .onion_storage import (
    add_onion_columns,
    bump_epoch,
    drop_onion_columns,
    fresh_name,
    lock_for_rewrite,
    new_onion_column,
    onion_anon,
    storage_type,
)
from .progress import Progress


@dataclass(frozen=True)
class Precomputed:
    """A precomputed column to add: its name's stem, expression, type and onions, and
    the entry it is recorded under in the table's ``designed`` list (None: not the
    online design's)."""

    stem: str
    expression: str
    type: str
    onions: tuple[Onion, ...]
    designed: dict[str, Any] | None = None
    # each onion at its innermost layer: the layer the statement asking for it needs
    # (equality, grouping: DET; ranges, order: OPE), where it would peel it at once
    inner: bool = False


@dataclass
class _Target:
    """One new stored onion column: the column it belongs to, and the onion."""

    col: ColumnMeta
    oc: OnionColumn


def build_table(
    conn: psycopg.Connection[Any], catalog: Catalog, table: str, wants: list[DesignNeed]
) -> int:
    """Build what a statement needs and the online design wants of ``table`` in one
    pass (its columns' pending onions, each at the layer asked for, and its precomputed
    expressions); return the rows written (-1: everything was built already, by another
    client)."""
    meta = catalog.table(table)
    pending = [
        w for w in wants if isinstance(w, BuildNeed) and w.onion in meta.column(w.column).on_demand
    ]
    exprs = [_precomputed(w) for w in wants if isinstance(w, ExpressionNeed)]
    try:
        return _build(conn, catalog, meta, pending, exprs)
    except (ValueOutOfDomain, NumericOutOfRange) as exc:
        # a row's value beyond what a new onion holds (a precomputed product past its
        # 38 digits, a sum past ASHE's 96 bits): the build is undone with its
        # transaction; the precomputed expressions are the online design's wish, left
        # out (the one that did not fit declined for good: a later statement would scan
        # the table again for it), and what the statement itself needs is refused, not
        # a DataError
        catalog.reload(conn)  # (what the failed build changed in memory, dropped)
        if exprs:
            unfit = exc.expression if isinstance(exc, precomputed.PrecomputedUnfit) else None
            if unfit is None or all(e.expression != unfit for e in exprs):
                kept: list[DesignNeed] = [w for w in wants if isinstance(w, BuildNeed)]
            else:
                _decline(conn, catalog, catalog.table(table), unfit)
                kept = [
                    w
                    for w in wants
                    if not (isinstance(w, ExpressionNeed) and w.expression == unfit)
                ]
            return build_table(conn, catalog, table, kept)
        raise UnsupportedQuery(
            f"{table}: an onion this statement needs cannot hold a stored value ({exc})",
            "a value beyond an onion's domain",
        ) from None


def retire(conn: psycopg.Connection[Any], catalog: Catalog, table: str, column: str) -> None:
    """Drop ``table``'s precomputed ``column``, a row's value of which its onions cannot
    hold, and decline its expression (the online design proposes it no more): the write
    that computed the value then runs without it, as PostgreSQL, which has no such
    column, runs it.  One transaction (a savepoint inside the application's), the table
    locked and its sealed version checked as for a build; a client whose metadata
    predates it and names the column fails (42703) and plans again.  Nothing to do where
    another client retired it first."""
    meta = catalog.table(table)
    col = meta.precomputed.get(column)
    if col is None:
        return
    with conn.transaction():
        lock_for_rewrite(conn, catalog, meta, "a precomputed column's retirement")
        drop_onion_columns(conn, meta, col)
        del meta.precomputed[column]
        meta.designed = [d for d in meta.designed if d.get("column") != column]
        if col.expression is not None and col.expression not in meta.declined:
            meta.declined.append(col.expression)
        catalog.write_table(conn, meta, new=False)
        bump_epoch(conn)


def _decline(
    conn: psycopg.Connection[Any], catalog: Catalog, meta: TableMeta, expression: str
) -> None:
    """Record ``expression`` as declined for ``meta``'s table (its sealed metadata only)."""
    with conn.transaction():
        lock_for_rewrite(conn, catalog, meta, "a declined expression")
        meta.declined.append(expression)
        catalog.write_table(conn, meta, new=False)
        bump_epoch(conn)
    catalog.reload(conn)


def add_precomputed(
    conn: psycopg.Connection[Any], catalog: Catalog, meta: TableMeta, wanted: Precomputed
) -> int:
    """Add one precomputed column to ``meta``'s table (a field onion); -1: it has it."""
    return _build(conn, catalog, meta, [], [wanted])


def _precomputed(need: ExpressionNeed) -> Precomputed:
    record = {
        "what": need.expression,
        "onions": [o.value for o in need.onions],
        "bytes": row_bytes(need),
    }
    stem = "pc_" + "_".join(re.findall(r"[a-z0-9]+", need.expression.lower()))[:40]
    return Precomputed(stem, need.expression, need.type, need.onions, record, inner=True)


def _build(
    conn: psycopg.Connection[Any],
    catalog: Catalog,
    meta: TableMeta,
    pending: list[BuildNeed],
    exprs: list[Precomputed],
) -> int:
    """Add the columns' pending onions ``pending`` and the precomputed columns ``exprs``
    in one transaction, one scan and one UPDATE.  Raises :class:`StaleMetadata` when the
    catalog changed since it was loaded: the caller reloads it and plans again."""
    t0 = time.monotonic()
    exprs = [
        e for e in exprs if not any(c.expression == e.expression for c in meta.precomputed.values())
    ]
    if not pending and not exprs:
        return -1
    with conn.transaction():
        head = lock_for_rewrite(conn, catalog, meta, "an onion build")
        stored = {oc.anon for c in meta.stored_columns for oc in c.onions.values()}
        targets: list[_Target] = []
        inputs: dict[str, ColumnMeta] = {}
        records: list[dict[str, Any]] = []
        for need in pending:
            col = meta.column(need.column)
            oc = add_pending(conn, catalog, meta, col, need.onion, stored, need.layer)
            targets.append(_Target(col, oc))
            inputs[col.name] = col
            if need.onion is Onion.SUM:  # (the online design's: counted against the budget)
                records.append(
                    {
                        "what": f"{col.name}'s Sum onion",
                        "bytes": row_bytes(BuildNeed(meta.name, col.name, Onion.SUM)),
                        "column": col.name,
                    }
                )
        for wanted in exprs:
            col = _hidden_column(conn, catalog, meta, wanted, stored)
            targets += [_Target(col, oc) for oc in col.onions.values()]
            for name in precomputed.expression_of(meta, col).inputs:
                inputs[name] = meta.columns[name]
            if wanted.designed is not None:
                records.append({**wanted.designed, "column": col.name})
        rows = _fill(conn, meta, list(inputs.values()), targets)
        for target in targets:
            if target.col.expression is None:  # (a precomputed column is added whole)
                settle_pending(conn, meta, target.col, target.oc)
                # (an Ord onion built at OPE serves a range index at once)
                range_indexes.sync(conn, catalog, meta, only=target.oc)
        for source in inputs.values():
            rename_onion(conn, meta.anon, readable_onion(source), "b", head.generation + 1)
        if meta.foreign_keys:
            foreign_keys.set_null_trigger(conn, meta)  # (it names the renamed columns)
        ms = (time.monotonic() - t0) * 1000
        for target in targets:
            conn.execute(
                "INSERT INTO adaptive.peel_log (anon_table, anon_column, onion, from_layer, "
                "to_layer, mode, rows, duration_ms) VALUES (%s, %s, %s, '-', %s, 'build', %s, %s)",
                (meta.anon, target.oc.anon, target.oc.onion.value, target.oc.layer, rows, ms),
            )
        meta.designed.extend(records)
        catalog.write_table(conn, meta, new=False)
        bump_epoch(conn)
    return rows


def _hidden_column(
    conn: psycopg.Connection[Any],
    catalog: Catalog,
    meta: TableMeta,
    wanted: Precomputed,
    stored: set[str],
) -> ColumnMeta:
    """A precomputed column's metadata and its onion columns, added to the table."""
    name = fresh_name(
        set(meta.columns) | set(meta.precomputed), lambda *p: "_".join(p), wanted.stem
    )
    col = ColumnMeta(name, parse_sql_type(wanted.type), True, {})
    expression = precomputed.compile_expression(
        wanted.expression, meta.columns, f"precomputed {meta.name}.{name}"
    )
    col.expression = expression.text
    if col.type.name in ("text", "varchar") and expression.inputs:
        col.collation = meta.columns[expression.inputs[0]].collation
    for onion in wanted.onions:
        stack = STACKS[onion]
        anon = onion_anon(catalog, meta.name, col.name, onion, stored)
        stored.add(anon)
        start = stack[-1] if wanted.inner else stack[0]
        col.onions[onion] = new_onion_column(
            conn, catalog, 2048, col, onion, stack, start, None, anon, {}
        )
    add_onion_columns(conn, meta, col)
    meta.precomputed[col.name] = col
    return col


def _t(meta: TableMeta) -> sql.Identifier:
    return sql.Identifier(meta.anon)


def _fill(
    conn: psycopg.Connection[Any],
    meta: TableMeta,
    inputs: list[ColumnMeta],
    targets: list[_Target],
) -> int:
    """Every row's value of every target, computed from the inputs' values (read once
    with their ``ctid``, decrypted), encrypted into each target's onion and set by one
    UPDATE on ``ctid``."""
    built = sorted({t.col.expression or f"{t.col.name}'s {t.oc.onion} onion" for t in targets})
    progress = Progress(f"{meta.name}: building {'; '.join(built)}")
    readable = [readable_onion(c) for c in inputs]
    rows = conn.execute(
        sql.SQL("SELECT ctid::text, {} FROM {}").format(
            sql.SQL(", ").join(sql.Identifier(oc.anon) for oc in readable), _t(meta)
        )
    ).fetchall()
    if not rows:
        return 0
    values = {
        c.name: recipes.decrypt_stored_many(c, oc, [r[k + 1] for r in rows])
        for k, (c, oc) in enumerate(zip(inputs, readable, strict=True))
    }
    progress.step("read and decrypted", len(rows))
    columns: list[list[Any]] = []
    computed: dict[str, list[Any]] = {}
    for target in targets:
        col = target.col
        if col.expression is None:
            plain = values[col.name]
        else:
            if col.name not in computed:
                computed[col.name] = precomputed.values_of(meta, col, values)
            plain = computed[col.name]
        columns.append(_encrypted(col, target.oc, plain))
    progress.step("computed and encrypted")
    staged = sql.Identifier(f"adaptive_build_{targets[0].oc.anon}")
    names = [sql.Identifier(f"v{k}") for k in range(len(targets))]
    conn.execute(
        sql.SQL("CREATE TEMP TABLE {} (at tid, {}) ON COMMIT DROP").format(
            staged,
            sql.SQL(", ").join(
                sql.SQL("{} {}").format(n, sql.SQL(storage_type(t.col, t.oc)))
                for n, t in zip(names, targets, strict=True)
            ),
        )
    )
    copy_sql = sql.SQL("COPY {} (at, {}) FROM STDIN").format(staged, sql.SQL(", ").join(names))
    texts = [
        _copy_texts(column, storage_type(t.col, t.oc))
        for column, t in zip(columns, targets, strict=True)
    ]
    with conn.cursor().copy(copy_sql) as copy:
        lines = ("\t".join((row[0], *(t[i] for t in texts))) for i, row in enumerate(rows))
        copy.write("\n".join(lines) + "\n")
    progress.step("sent")
    conn.execute(sql.SQL("ANALYZE {}").format(staged))
    sets = sql.SQL(", ").join(
        sql.SQL("{} = s.{}").format(sql.Identifier(t.oc.anon), n)
        for n, t in zip(names, targets, strict=True)
    )
    with indexes_dropped(conn, meta.anon):
        cur = conn.execute(
            sql.SQL("UPDATE {t} AS t SET {sets} FROM {s} AS s WHERE t.ctid = s.at").format(
                t=_t(meta), sets=sets, s=staged
            )
        )
        progress.step("written")
    conn.execute(sql.SQL("DROP TABLE {}").format(staged))
    progress.end()
    return cur.rowcount


# each staged column's values in COPY's text format, by server type: formatted at once
# rather than dumped row by row (an ASHE ciphertext's array through psycopg's generic
# array dumper took most of a build's client time)
_COPY_TEXT: dict[str, Callable[[Any], str]] = {
    "bytea": lambda v: "\\\\x" + bytes(v).hex(),
    "adaptive.ore": lambda v: "\\\\x" + bytes(v).hex(),  # (an Ord onion at ORE: bytea's form)
    "int8[]": lambda v: "{" + ",".join(str(int(x)) for x in v) + "}",
    # a token onion's tokens: each element quoted, its backslash escaped for the array
    # literal and again for COPY's text format
    "bytea[]": lambda v: "{" + ",".join('"\\\\\\\\x' + bytes(t).hex() + '"' for t in v) + "}",
    "numeric": str,
}


def _copy_texts(values: list[Any], server_type: str) -> list[str]:
    text = _COPY_TEXT[server_type]
    return ["\\N" if v is None else text(v) for v in values]


def _encrypted(col: ColumnMeta, oc: OnionColumn, plain: list[Any]) -> list[Any]:
    """``plain`` encrypted into ``oc`` in one batch, NULL kept where a row has none."""
    present = [i for i, v in enumerate(plain) if v is not None]
    out: list[Any] = [None] * len(plain)
    for i, ct in zip(
        present, recipes.encrypt_many(col, oc, [plain[i] for i in present]), strict=True
    ):
        out[i] = ct
    return out


__all__ = ["Precomputed", "add_precomputed", "build_table"]
