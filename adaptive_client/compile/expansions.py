"""Comparisons PostgreSQL defines by expansion, expanded before compiling.

* ``x BETWEEN SYMMETRIC a AND b`` is ``(x BETWEEN a AND b) OR (x BETWEEN b AND a)``
  (PostgreSQL's transformAExprBetween).  Compiled as a plain BETWEEN, the flag was
  dropped: ``qty BETWEEN SYMMETRIC 7 AND 1`` found nothing.
* A row comparison ``(a1, a2, ...) op (b1, b2, ...)`` compares pairs left to right and
  stops at the first unequal or NULL pair (a NULL pair makes it NULL):
  ``=`` is ``a1 = b1 AND a2 = b2 ...``, ``<>`` is ``a1 <> b1 OR a2 <> b2 ...``, and
  ``<`` is ``a1 < b1 OR (a1 = b1 AND (a2 < b2 OR ...))`` with the last pair compared by
  the operator itself (``<=``: ``a2 <= b2``) -- the same three-valued answer.  The
  client's engine, finishing a statement, compared rows with NULLs ordered instead
  (``(NULL, 2) > (5, 1)`` was true).

* A row assignment ``UPDATE t SET (a, b) = (x, y)`` (and in ``ON CONFLICT DO UPDATE``)
  is ``SET a = x, b = y``: every source expression reads the row as it was.  (It is
  not a row comparison: expanded as one, it was refused as a SET item.)

Each rewrite keeps a statement's meaning exactly; the compiled statement then holds
only comparisons of one column with one value, which every path compiles.
"""

from __future__ import annotations

from psycopg import errors as pg_errors
from sqlglot import exp

_ORDERED: dict[type[exp.Expr], type[exp.Expr]] = {
    exp.LT: exp.LT,
    exp.LTE: exp.LT,
    exp.GT: exp.GT,
    exp.GTE: exp.GT,
}


def with_expansions(tree: exp.Expression) -> exp.Expression:
    """``tree`` with its symmetric BETWEENs and row comparisons expanded (a copy where
    it has any)."""
    for item in tree.find_all(exp.EQ):
        if (
            _is_assignment(item)
            and isinstance(item.this, exp.Tuple)
            and isinstance(item.expression, exp.Tuple)
            and len(item.this.expressions) != len(item.expression.expressions)
        ):
            raise pg_errors.SyntaxError("number of columns does not match number of values")
    if not _found(tree) and not _row_assignments(tree):
        return tree
    tree = tree.copy()
    for node in _found(tree):
        node.replace(exp.Paren(this=_expanded(node)))
    for owner in _row_assignments(tree):
        items: list[exp.Expr] = []
        for item in owner.expressions:
            if _is_assignment(item) and _expandable(item):
                items += [
                    exp.EQ(this=a.copy(), expression=b.copy())
                    for a, b in zip(item.this.expressions, item.expression.expressions, strict=True)
                ]
            else:
                items.append(item)
        owner.set("expressions", items)
    return tree


def _found(tree: exp.Expr) -> list[exp.Expr]:
    return [
        n
        for n in tree.find_all(exp.Between, exp.EQ, exp.NEQ, *_ORDERED)
        if _expandable(n) and not _is_assignment(n)
    ]


def _is_assignment(node: exp.Expr) -> bool:
    """Is ``node`` an item of an UPDATE's (or ON CONFLICT DO UPDATE's) SET list?"""
    return isinstance(node, exp.EQ) and isinstance(node.parent, exp.Update | exp.OnConflict)


def _row_assignments(tree: exp.Expr) -> list[exp.Expr]:
    """The SET lists holding a row assignment, ``(a, b) = (x, y)``."""
    return [
        owner
        for owner in tree.find_all(exp.Update, exp.OnConflict)
        if any(_is_assignment(i) and _expandable(i) for i in owner.expressions)
    ]


def _expandable(node: exp.Expr) -> bool:
    if isinstance(node, exp.Between):
        return bool(node.args.get("symmetric"))
    left, right = node.this, node.expression
    return (
        isinstance(left, exp.Tuple)
        and isinstance(right, exp.Tuple)
        and len(left.expressions) == len(right.expressions) > 0
    )


def _expanded(node: exp.Expr) -> exp.Expr:
    if isinstance(node, exp.Between):
        x, low, high = node.this, node.args["low"], node.args["high"]
        return exp.or_(
            exp.Paren(this=exp.Between(this=x.copy(), low=low.copy(), high=high.copy())),
            exp.Paren(this=exp.Between(this=x.copy(), low=high.copy(), high=low.copy())),
        )
    pairs = list(zip(node.this.expressions, node.expression.expressions, strict=True))
    if isinstance(node, exp.EQ | exp.NEQ):
        joined = exp.and_ if isinstance(node, exp.EQ) else exp.or_
        return joined(*(type(node)(this=a.copy(), expression=b.copy()) for a, b in pairs))
    strict = _ORDERED[type(node)]
    (a, b), earlier = pairs[-1], pairs[:-1]
    out: exp.Expr = type(node)(this=a.copy(), expression=b.copy())
    for a, b in reversed(earlier):
        tie = exp.and_(exp.EQ(this=a.copy(), expression=b.copy()), exp.Paren(this=out))
        out = exp.or_(strict(this=a.copy(), expression=b.copy()), exp.Paren(this=tie))
    return out


__all__ = ["with_expansions"]
