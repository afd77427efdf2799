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

Each rewrite keeps a statement's meaning exactly; the compiled statement then holds
only comparisons of one column with one value, which every path compiles.
"""

from __future__ import annotations

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
    if not _found(tree):
        return tree
    tree = tree.copy()
    for node in _found(tree):
        node.replace(exp.Paren(this=_expanded(node)))
    return tree


def _found(tree: exp.Expr) -> list[exp.Expr]:
    return [n for n in tree.find_all(exp.Between, exp.EQ, exp.NEQ, *_ORDERED) if _expandable(n)]


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
