"""The columns of a derived table or CTE named as PostgreSQL names them.

``SELECT k.upper FROM (SELECT upper(s) FROM t) k`` reads the column PostgreSQL's
FigureColname named ``upper``; sqlglot's qualification names an unaliased item of a
derived table otherwise (``_col_0``), so the outer reference was an unknown column
(42703).  Each such item of a derived table, a LATERAL subquery or a CTE is given its
PostgreSQL name as an explicit alias (:func:`output_names.pg_name`); items PostgreSQL
calls ``?column?`` are given that name, and a name two items share is left out."""

from __future__ import annotations

from sqlglot import exp

from .output_names import pg_name


def _named_queries(tree: exp.Expression) -> list[exp.Select]:
    """The SELECTs whose items name a derived table's, LATERAL subquery's or CTE's
    columns (a set operation's first branch names its columns)."""
    queries: list[exp.Expression] = [cte.this for cte in tree.find_all(exp.CTE)]
    queries += [
        sub.this
        for sub in tree.find_all(exp.Subquery)
        if isinstance(sub.parent, exp.From | exp.Join | exp.Lateral)
    ]
    selects = []
    for query in queries:
        while isinstance(query, exp.SetOperation | exp.Subquery):
            query = query.this
        if isinstance(query, exp.Select):
            selects.append(query)
    return selects


def _unnamed(item: exp.Expression) -> str | None:
    if isinstance(item, exp.Alias | exp.Column | exp.Star):
        return None
    return pg_name(item) or "?column?"


def with_derived_names(tree: exp.Expression) -> exp.Expression:
    """``tree`` (a copy where anything changes) with the unaliased items of its derived
    tables and CTEs aliased by their PostgreSQL names."""
    if not any(_unnamed(i) for s in _named_queries(tree) for i in s.expressions):
        return tree
    tree = tree.copy()
    for select in _named_queries(tree):
        names = [_unnamed(i) or i.alias_or_name for i in select.expressions]
        items = []
        for item, name in zip(select.expressions, names, strict=True):
            # (a name two items share is left to the engines: PostgreSQL's table has
            # both, which a reference by the name finds ambiguous)
            named = _unnamed(item) is not None and names.count(name) == 1
            items.append(exp.alias_(item, name, quoted=True) if named else item)
        select.set("expressions", items)
    return tree


__all__ = ["with_derived_names"]
