"""GROUP BY a table's primary key: the table's other columns are functionally dependent.

PostgreSQL accepts ``SELECT a.id, a.name, count(*) FROM a JOIN b ... GROUP BY a.id``
when ``a.id`` is ``a``'s primary key: each group is one row of ``a``, so ``a.name`` has
one value per group.  Neither the anonymized tables' grouping (the primary key is
declared on one onion column, the statement groups by another) nor the client engine
knows that.  This pass writes the dependency out: each column of such a table that the
SELECT uses outside its aggregates is added to its GROUP BY, which groups the same rows
the same way -- so every path (the server's, the split one) answers as PostgreSQL does.
"""

from __future__ import annotations

from collections.abc import Iterator

from sqlglot import exp

from ..catalog.metadata import Catalog


def with_dependent_keys(catalog: Catalog, stmt: exp.Expression) -> exp.Expression:
    """``stmt`` with each SELECT's functionally dependent columns in its GROUP BY; the
    same object where there is nothing to add (the parse cache's trees stay as they are)."""
    if not any(_additions(catalog, s) for s in stmt.find_all(exp.Select)):
        return stmt
    stmt = stmt.copy()
    for select in list(stmt.find_all(exp.Select)):
        added = _additions(catalog, select)
        if added:
            group = select.args["group"]
            group.set("expressions", [*group.expressions, *added])
    return stmt


def _own_nodes(select: exp.Select) -> Iterator[exp.Expression]:
    """The nodes of ``select`` itself: not those of a subquery inside it."""
    stack = [v for k, v in select.args.items() if k not in ("with_",)]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, exp.Expression) or isinstance(node, exp.Select | exp.Subquery):
            continue
        yield node
        stack.extend(node.args.values())


def _additions(catalog: Catalog, select: exp.Select) -> list[exp.Expression]:
    group = select.args.get("group")
    if group is None or any(group.args.get(k) for k in ("grouping_sets", "cube", "rollup")):
        return []
    tables: dict[str, list[str]] = {}  # alias -> the table's columns
    keyed: dict[str, list[str]] = {}  # alias -> its primary key
    for source in [select.args.get("from_"), *(select.args.get("joins") or [])]:
        table = source.this if source is not None else None
        if not isinstance(table, exp.Table) or not catalog.has_table(table.name.lower()):
            continue
        meta = catalog.table(table.name.lower())
        alias = (table.alias or table.name).lower()
        tables[alias] = list(meta.columns)
        if meta.primary_key:
            keyed[alias] = list(meta.primary_key)
    if not keyed:
        return []

    def owner(col: exp.Column) -> str | None:
        if col.table:
            return col.table.lower() if col.table.lower() in tables else None
        owners = [a for a, cols in tables.items() if col.name.lower() in cols]
        return owners[0] if len(owners) == 1 else None

    grouped = {(owner(g), g.name.lower()) for g in group.expressions if isinstance(g, exp.Column)}
    whole = {a for a, pk in keyed.items() if all((a, c) in grouped for c in pk)}
    if not whole:
        return []
    added: list[exp.Expression] = []
    for node in _own_nodes(select):
        if not isinstance(node, exp.Column) or node.find_ancestor(exp.AggFunc, exp.Group):
            continue
        source = owner(node)
        key = (source, node.name.lower())
        if source in whole and key not in grouped and node.name.lower() in tables[source]:
            grouped.add(key)
            added.append(exp.column(node.name.lower(), table=source))
    return added


__all__ = ["with_dependent_keys"]
