"""A parenthesized join that opens a FROM clause, flattened: ``FROM ((a JOIN b ON p)
JOIN c ON q)`` is ``FROM a JOIN b ON p JOIN c ON q``.

Joins associate to the left, so parentheses around the leftmost items of a FROM clause
change nothing, whatever the kinds of the joins: the same rows in the same NULL
extension.  ``pg_dump`` writes every view's joins so (``FROM (((staff s JOIN address a
ON ...) JOIN city ON ...) JOIN country ON ...)``); flattened, the statement compiles as
the plain joins it is, instead of as derived tables for the client engine
(``nested_joins``, still used where a parenthesized join is on the right of a join).
"""

from __future__ import annotations

from sqlglot import exp


def parenthesized_join(item: exp.Expression) -> exp.Table | exp.Subquery | None:
    """The first item of a parenthesized join without an alias, which carries the joins
    (sqlglot reads the parentheses as subqueries around it); None for anything else."""
    if not isinstance(item, exp.Subquery) or item.alias:
        return None
    inner = item.this
    while isinstance(inner, exp.Subquery) and not inner.alias and not inner.args.get("joins"):
        inner = inner.this
    if isinstance(inner, exp.Table | exp.Subquery) and inner.args.get("joins"):
        return inner
    return None


def _flatten(select: exp.Select) -> None:
    from_ = select.args.get("from_")
    while from_ is not None and parenthesized_join(from_.this) is not None:
        item = from_.this
        levels = []  # the parentheses, outermost first, each with the joins it carries
        while isinstance(item, exp.Subquery) and not item.alias:
            levels.append(item)
            item = item.this
        first = item  # the leftmost FROM item, carrying the innermost joins
        joins = list(first.args.get("joins") or [])
        for level in reversed(levels):
            joins += list(level.args.get("joins") or [])
        first.set("joins", None)
        from_.set("this", first)
        select.set("joins", joins + list(select.args.get("joins") or []))


def _opens_with_one(select: exp.Select) -> bool:
    from_ = select.args.get("from_")
    return from_ is not None and parenthesized_join(from_.this) is not None


def with_flat_joins(stmt: exp.Expression) -> exp.Expression:
    """``stmt`` with the parenthesized joins opening its FROM clauses flattened; the same
    object where it has none (the parse cache's trees stay as they are)."""
    if not any(_opens_with_one(s) for s in stmt.find_all(exp.Select)):
        return stmt
    stmt = stmt.copy()
    for select in list(stmt.find_all(exp.Select)):
        _flatten(select)
    return stmt


__all__ = ["parenthesized_join", "with_flat_joins"]
