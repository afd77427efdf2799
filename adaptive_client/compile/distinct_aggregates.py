"""``string_agg(DISTINCT x, ',')`` and ``array_agg(DISTINCT x)`` without ORDER BY are in a
known order in PostgreSQL: it removes the duplicates by sorting the aggregate's input on
the argument (ascending, in its collation, nulls last), so the values come out sorted.
The client engine's DISTINCT keeps no order: such an aggregate is given that ORDER BY
explicitly (it was refused, its order unknown)."""

from __future__ import annotations

from sqlglot import exp


def distinct_aggregates_ordered(tree: exp.Expression) -> exp.Expression:
    """``tree`` with each DISTINCT string_agg / array_agg of one argument ordered by it,
    changed in place."""
    for node in tree.find_all(exp.GroupConcat, exp.ArrayAgg):
        distinct = node.this
        if isinstance(distinct, exp.Distinct) and len(distinct.expressions) == 1:
            key = exp.Ordered(this=distinct.expressions[0].copy(), nulls_first=False)
            node.set("this", exp.Order(this=distinct.copy(), expressions=[key]))
    return tree


__all__ = ["distinct_aggregates_ordered"]
