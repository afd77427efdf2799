"""Late decryption: a pass of the split execution.

A column the client engine only carries -- an output of the statement's SELECT, and
maybe one of its GROUP BY keys, used nowhere else -- need not be decrypted for every row
the server ships: loaded as its ciphertext, it is decrypted after the statement ran, for
the rows it returns.  TPC-H Q10 ships one row per customer with revenue (38 thousand at
SF 1) and returns 20: its six customer columns are decrypted for those 20.

Exact because the engine never looks inside a carried value: it copies it to the output,
and groups by it only where equal ciphertexts mean equal values and conversely -- the
onion the server shipped is at DET, or at OPE of an exact type (for a column only
copied, any layer will do).  A column an ORDER BY, a HAVING, a window, an expression, a
subquery or a run-time semi-join reads -- or that an ORDER BY names by its output name
or position -- is decrypted on arrival as before.  The decrypted value is made what the
engine would have returned: char(n) without its padding (the residual pads outputs
again), a numeric at its column's scale.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from sqlglot import exp
from sqlglot.optimizer.scope import traverse_scope

from ..catalog import recipes
from ..catalog.metadata import ColumnMeta, OnionColumn
from ..engine.runtime import decimal_scale
from ..stats import STATS
from .plan import ColumnValue, Compiled, StoredValue
from .relations import Relation, source_of

# the engine types whose values come back from the engine as the decrypted value is
# (after the adjustments of _as_engine_returns)
_CARRIED_TYPES = ("VARCHAR", "DATE", "INTEGER", "BIGINT", "SMALLINT", "BOOLEAN")


@dataclass(frozen=True)
class Carried:
    """One output position of the statement: a relation column loaded as ciphertext, or
    -- where the engine only copies it (``reference``: relation and column index) -- as
    the number of the fetched row it comes from."""

    position: int
    column: ColumnMeta
    onion: OnionColumn
    engine_type: str
    reference: tuple[int, int] | None = None


@dataclass
class LatePlan:
    """The carried outputs, and the relations' tables as loaded (carried columns BLOB)."""

    carried: list[Carried] = field(default_factory=list)
    tables: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)
    # (relation, column index) of the columns carried as row numbers
    references: set[tuple[int, int]] = field(default_factory=set)

    def by_reference(
        self, relation: int, columns: list[list[Any]], kept: dict[tuple[int, int], list[Any]]
    ) -> list[list[Any]]:
        """The fetched ``columns`` of ``relation`` as loaded: each column carried by
        reference replaced by the row numbers, its ciphertexts put in ``kept`` (one
        execution's, for :meth:`decrypt`).  Loading 38,000 integers costs the engine a
        fraction of what 38,000 ciphertexts do."""
        mine = [i for r, i in self.references if r == relation]
        if not mine or not columns:
            return columns
        out = list(columns)
        numbers = list(range(len(columns[0])))
        for i in mine:
            kept[(relation, i)] = columns[i]
            out[i] = numbers
        return out

    def decrypt(
        self, rows: list[tuple[Any, ...]], kept: dict[tuple[int, int], list[Any]] | None = None
    ) -> list[tuple[Any, ...]]:
        """The statement's rows with the carried outputs decrypted (one batched call per
        column); ``kept``: the ciphertexts of the columns carried by reference."""
        if not self.carried or not rows:
            return rows
        columns = list(zip(*rows, strict=True))
        out: list[Sequence[Any]] = list(columns)
        for c in self.carried:
            values: Sequence[Any] = columns[c.position]
            if c.reference is not None:
                source = (kept or {})[c.reference]
                values = [None if v is None else source[v] for v in values]
            stored = [None if v is None else bytes(v) for v in values]
            with STATS.crypto():
                plain = recipes.decrypt_many(c.column, c.onion, stored)
            out[c.position] = [_as_engine_returns(v, c.engine_type) for v in plain]
        return list(zip(*out, strict=True))


def _as_engine_returns(value: Any, engine_type: str) -> Any:
    if value is None:
        return None
    if engine_type.startswith("CHAR("):
        return value.rstrip(" ")  # (the residual pads char(n) outputs again)
    if engine_type.startswith("DECIMAL(") and isinstance(value, Decimal):
        return value.quantize(Decimal(1).scaleb(-decimal_scale(engine_type)))
    return value


def _carriable_type(engine_type: str) -> bool:
    if engine_type.startswith(("CHAR(", "DECIMAL(")):
        return True
    return engine_type in _CARRIED_TYPES


def plan_late(
    tree: exp.Expression,
    relations: list[Relation],
    tables: list[tuple[str, list[tuple[str, str]]]],
    fetches: list[Compiled],
    width: int,
) -> LatePlan:
    """Choose the carried columns of the statement ``tree`` (rewritten to read the
    relations' tables) and make their relations ship them undecrypted: the fetches'
    outputs are changed in place."""
    plan = LatePlan(tables=[(name, list(cols)) for name, cols in tables])
    top = tree if isinstance(tree, exp.Select) else None
    distinct = top.args.get("distinct") if top is not None else None
    if distinct is not None and distinct.args.get("on") is not None:
        top = None  # DISTINCT ON orders by its expressions
    index = {name: i for i, (name, _) in enumerate(tables)}
    avoided = _semi_columns(relations)
    ordered = _ordered_outputs(top) if top is not None else set()
    # the statement's own outputs that are a bare column, by node
    outputs: dict[int, int] = {}
    if top is not None:
        for position, item in enumerate(top.expressions[:width]):
            node = item.this if isinstance(item, exp.Alias) else item
            if isinstance(node, exp.Column) and not (
                position in ordered or item.alias_or_name in ordered
            ):
                outputs[id(node)] = position
    grouping = {
        id(g)
        for group in tree.find_all(exp.Group)
        for g in group.expressions
        if isinstance(g, exp.Column)
    }
    # every reference to each relation column: (output position or None, grouped)
    uses: dict[tuple[int, str], list[tuple[int | None, bool] | None]] = {}
    for scope in traverse_scope(tree):
        for col in scope.columns:
            source = source_of(scope, col.table) if col.table else None
            if not isinstance(source, exp.Table) or source.name not in index:
                continue
            key = (index[source.name], col.name)
            if scope.expression is top and id(col) in outputs:
                use: tuple[int | None, bool] | None = (outputs[id(col)], distinct is not None)
            elif id(col) in grouping:
                use = (None, True)
            else:
                use = None  # read by the engine: decrypted on arrival
            uses.setdefault(key, []).append(use)
    own_groups = _rows_are_groups(relations, tables, fetches, uses)
    for (rel_index, name), found in uses.items():
        carried = [u for u in found if u is not None]
        if len(carried) < len(found) or (tables[rel_index][0], name) in avoided:
            continue
        cols = tables[rel_index][1]
        fetch = fetches[rel_index]
        names = [n for n, _ in cols]
        if name not in names or len(fetch.outputs) != len(cols):
            continue
        col_index = names.index(name)
        fn = fetch.outputs[col_index].fn
        if not isinstance(fn, ColumnValue) or not _carriable_type(cols[col_index][1]):
            continue
        if fn.onion.innermost not in ("DET", "OPE"):
            continue  # (plain values need no decryption, others are not bytea)
        if any(grouped for _, grouped in carried) and not _injective(fn.onion):
            continue
        fetch.outputs[col_index] = replace(fetch.outputs[col_index], fn=StoredValue(fn.index))
        # only copied to the output (never grouped, nor made DISTINCT), or grouped where
        # every row of the relation is a group of its own: the engine may carry the
        # fetched row's number instead of the ciphertext
        by_reference = distinct is None and (
            not any(g for _, g in carried) or rel_index in own_groups
        )
        reference = (rel_index, col_index) if by_reference else None
        plan.tables[rel_index][1][col_index] = (name, "BIGINT" if reference else "BLOB")
        if reference is not None:
            plan.references.add(reference)
        for at, _ in carried:
            if at is not None:
                plan.carried.append(Carried(at, fn.column, fn.onion, cols[col_index][1], reference))
    return plan


def _rows_are_groups(
    relations: list[Relation],
    tables: list[tuple[str, list[tuple[str, str]]]],
    fetches: list[Compiled],
    uses: dict[tuple[int, str], list[tuple[int | None, bool] | None]],
) -> set[int]:
    """The relations the server aggregated (aggregate.py) by keys whose ciphertexts are
    injective, every key of which the statement groups by again: each of their rows is
    a group of its own -- grouping it by its row number groups it as by its values."""

    def regrouped_injective(i: int, j: int) -> bool:
        fn = fetches[i].outputs[j].fn
        grouped = any(u is not None and u[1] for u in uses.get((i, tables[i][1][j][0]), []))
        return isinstance(fn, ColumnValue) and _injective(fn.onion) and grouped

    out: set[int] = set()
    for i, rel in enumerate(relations):
        cols = tables[i][1]
        keys = [j for j, (n, _) in enumerate(cols) if n.startswith("__k")]
        if (
            rel.query is not None
            and keys
            and len(fetches[i].outputs) == len(cols)
            and all(regrouped_injective(i, j) for j in keys)
        ):
            out.add(i)
    return out


def _injective(oc: OnionColumn) -> bool:
    """Whether equal ciphertexts of the onion at its layer mean equal values and
    conversely (what grouping by the ciphertext needs)."""
    return oc.layer == "DET" or (oc.layer == "OPE" and oc.ope_exact)


def _ordered_outputs(select: exp.Select) -> set[Any]:
    """Output positions and names the SELECT's ORDER BY refers to."""
    out: set[Any] = set()
    order = select.args.get("order")
    for ordered in order.expressions if order is not None else []:
        node = ordered.this
        if isinstance(node, exp.Literal) and node.is_int:
            out.add(int(node.name) - 1)
        for col in node.find_all(exp.Column):
            if not col.table:
                out.add(col.name)
    return out


def _semi_columns(relations: list[Relation]) -> set[tuple[str, str]]:
    """(table, column) of the relations' tables that run-time semi-join filters read on
    the client: their values must be plaintexts."""
    out: set[tuple[str, str]] = set()
    for rel in relations:
        for semi in rel.semis:
            src = semi.source
            if src is not None:
                out.add((src.name, src.column_name(*semi.source_column)))
                for f in semi.client_filter:
                    out.update((src.name, c.name) for c in f.find_all(exp.Column))
            if semi.query is not None:
                for c in semi.query.find_all(exp.Column):
                    out.update((r.name, c.name) for r in relations)
    return out


__all__ = ["Carried", "LatePlan", "plan_late"]
