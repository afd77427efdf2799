"""A VALUES list used as a query, rewritten as the UNION ALL of its rows' SELECTs.

``(VALUES (1, 'a'), (2, 'b')) AS v(x, y)`` in a FROM clause, ``x IN (VALUES (1), (3))``,
``WITH v(x) AS (VALUES ...)`` and a VALUES statement of its own are, in PostgreSQL, the
rows listed, their columns typed across the rows as a UNION's are, named ``column1``,
``column2``, ... unless an alias names them.  ``SELECT 1 AS x, 'a' AS y UNION ALL
SELECT 2, 'b'`` is the same relation, which every path of the client compiles (the
client's engine refused VALUES).  The union is balanced (UNION ALL is associative), so
that a list of many rows does not nest deeply.  An INSERT's own VALUES is left alone.
"""

from __future__ import annotations

from typing import cast

from psycopg import errors as pg_errors
from sqlglot import exp


def with_values_as_selects(tree: exp.Expression) -> exp.Expression:
    """``tree`` with each VALUES list that is not an INSERT's rewritten (see the module);
    a copy where it has any."""
    if not any(_rewritten(v) for v in tree.find_all(exp.Values)):
        return tree
    tree = tree.copy()
    for values in list(tree.find_all(exp.Values)):
        if not _rewritten(values):
            continue
        alias = values.args.get("alias")
        union = _union(values, alias)
        parent = values.parent
        if values is tree:
            for key in ("order", "limit", "offset"):
                if values.args.get(key) is not None:
                    union.set(key, values.args[key])
            tree = cast(exp.Expression, union)
        elif isinstance(parent, exp.In):
            parent.set("expressions", [])
            parent.set("query", exp.Subquery(this=union))
        elif alias is not None:
            values.replace(exp.Subquery(this=union, alias=exp.TableAlias(this=alias.this)))
        else:
            values.replace(exp.Subquery(this=union))
    return tree


def _rewritten(values: exp.Values) -> bool:
    return not isinstance(values.parent, exp.Insert)


def _union(values: exp.Values, alias: exp.TableAlias | None) -> exp.Query:
    rows = [row.expressions if isinstance(row, exp.Tuple) else [row] for row in values.expressions]
    width = len(rows[0])
    if any(len(row) != width for row in rows):
        raise pg_errors.SyntaxError("VALUES lists must all be the same length")
    named = [c.name for c in alias.columns] if alias is not None else []
    names = named + [f"column{i + 1}" for i in range(len(named), width)]
    selects: list[exp.Query] = [
        exp.Select(
            expressions=[
                exp.alias_(e.copy(), names[i], quoted=True) if n == 0 else e.copy()
                for i, e in enumerate(row)
            ]
        )
        for n, row in enumerate(rows)
    ]
    return _balanced(selects)


def _balanced(selects: list[exp.Query]) -> exp.Query:
    if len(selects) == 1:
        return selects[0]
    middle = len(selects) // 2
    return exp.Union(
        this=_balanced(selects[:middle]), expression=_balanced(selects[middle:]), distinct=False
    )


__all__ = ["with_values_as_selects"]
