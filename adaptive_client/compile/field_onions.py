"""Which jsonb fields a statement would have the server compare, order or group by, given
onions of their own (the wants a plan carries: :class:`~.needs.FieldNeed`).

A field is a text part of a jsonb column by a constant path -- ``attrs ->> 'sku'``,
``attrs -> 'dims' ->> 'w'``, ``attrs #>> '{tags,0}'`` -- that the statement compares
(``=``, ``<>``, ``<``, ``IN``, ``BETWEEN``), orders or groups by, in a SELECT that split
execution evaluates.  Without an onion of its own, every such statement reads the column
and extracts the field on the client.  Built once (adapt/field_onions.py: a precomputed
expression, catalog/precomputed.py, with Eq and Ord onions at RND), the statement is
compiled again and the precomputed pass (:mod:`.precomputed_pass`) gives the comparison,
order or grouping to the server over them, peeled as any column's onions are.

At most ``limit`` fields per jsonb column (the configuration's ``json_fields``): fields
beyond it are extracted on the client, as before.
"""

from __future__ import annotations

from typing import cast

from sqlglot import exp

from ..catalog import precomputed
from ..catalog.metadata import Catalog, TableMeta
from ..errors import ConfigError
from .needs import FieldNeed

# the operators whose result is the part's text
_TEXT_PARTS = (exp.JSONExtractScalar, exp.JSONBExtractScalar)
# the operators a field is compared by (with the field as either side)
_COMPARED = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.In, exp.Between)


def wanted(catalog: Catalog, stmt: exp.Expression, limit: int) -> list[FieldNeed]:
    """The field onions ``stmt`` would have the server use, not built yet, within
    ``limit`` per jsonb column."""
    out: list[FieldNeed] = []
    if not limit:
        return out
    for select in stmt.find_all(exp.Select):
        tables = _tables(catalog, select)
        for node in _used_fields(select):
            need = _need(tables, node)
            if need is not None and need not in out and _room(catalog, need, out, limit):
                out.append(need)
    return out


def _tables(catalog: Catalog, select: exp.Select) -> dict[str, TableMeta]:
    """The select's own FROM and JOIN tables the catalog knows, by alias."""
    items = [select.args.get("from_"), *(select.args.get("joins") or [])]
    out: dict[str, TableMeta] = {}
    for item in items:
        table = item.this if item is not None else None
        if isinstance(table, exp.Table) and not table.args.get("db"):
            meta = catalog.tables.get(table.name.lower())
            if meta is not None:
                out[(table.alias or table.name).lower()] = meta
    return out


def _used_fields(select: exp.Select) -> list[exp.Expression]:
    """The text parts of jsonb values the select compares, orders or groups by (its own
    clauses, not its subqueries')."""
    found: list[exp.Expression] = []
    clauses: list[exp.Expression | None] = [
        select.args.get("where"),
        select.args.get("having"),
        select.args.get("group"),
        select.args.get("order"),
    ]
    clauses += [j.args.get("on") for j in select.args.get("joins") or []]
    for clause in clauses:
        if clause is None:
            continue
        for part in clause.find_all(*_TEXT_PARTS):
            node = cast(exp.Expression, part)
            if node.find_ancestor(exp.Select) is not select:
                continue  # (a subquery's: found with its own select)
            parent = node.parent
            while isinstance(parent, exp.Paren):
                parent = parent.parent
            if isinstance(parent, (*_COMPARED, exp.Ordered, exp.Group)):
                found.append(node)
    return found


def _need(tables: dict[str, TableMeta], node: exp.Expression) -> FieldNeed | None:
    """The field onion of one part, if it is a field of a known table's jsonb column
    that the table has no precomputed column for."""
    base = node
    while type(base) in precomputed.JSON_PATHS:
        base = base.this
    if not isinstance(base, exp.Column):
        return None
    if base.table:
        meta = tables.get(base.table.lower())
    else:
        owners = [m for m in tables.values() if base.name.lower() in m.columns]
        meta = owners[0] if len(owners) == 1 else None
    if meta is None or base.name.lower() not in meta.columns:
        return None
    column = meta.columns[base.name.lower()]
    if column.type.name != "jsonb":
        return None
    tree = node.copy()
    for col in tree.find_all(exp.Column):
        col.set("table", None)
    try:
        expression = precomputed.compile_expression(
            tree.sql(dialect="postgres"), meta.columns, f"field of {meta.name}"
        )
    except ConfigError:
        return None  # (a path that is not constant)
    if any(c.expression == expression.text for c in meta.precomputed.values()):
        return None
    return FieldNeed(meta.name, column.name, expression.text)


def _room(catalog: Catalog, need: FieldNeed, taken: list[FieldNeed], limit: int) -> bool:
    """Whether the column may have one more field onion."""
    meta = catalog.table(need.table)
    built = sum(
        1
        for c in meta.precomputed.values()
        if precomputed.expression_of(meta, c).inputs == (need.column,)
    )
    asked = sum(1 for n in taken if (n.table, n.column) == (need.table, need.column))
    return built + asked < limit
