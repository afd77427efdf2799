"""The ORDER BY, LIMIT, OFFSET and FOR UPDATE / FOR SHARE of a subquery the server's
statement holds: ``id IN (SELECT id FROM jobs WHERE state = 'new' ORDER BY id LIMIT 1
FOR UPDATE SKIP LOCKED)`` -- a job queue's claim -- runs whole on the server.

The subquery's rows are chosen by the server, so its order must be the server's exact
one: every ORDER BY key a column whose Ord onion orders exactly (numbers, dates, times;
not text, whose onion orders a prefix under a collation the server does not know), its
LIMIT and OFFSET constants, its locks naming the subquery's own tables by their server
aliases.  Anything else stays refused, as before."""

from __future__ import annotations

from typing import Protocol

from sqlglot import exp

from ..catalog.metadata import OnionColumn
from ..catalog.onions import Cap
from .ordering import keyed
from .plan import ParamBuilder
from .scope import ColumnRef, Scope, server_lock, unsupported


class Compiling(Protocol):
    """What of the compiler (compiler.py, which calls this module) the bounds use."""

    def column_side(self, scope: Scope, node: exp.Expression) -> ColumnRef | None: ...

    def require(self, ref: ColumnRef, cap: Cap) -> OnionColumn: ...

    def col_expr(self, ref: ColumnRef, oc: OnionColumn) -> exp.Expression: ...

    def value_of(self, node: exp.Expression) -> ParamBuilder | None: ...

    def param(self, build: ParamBuilder) -> exp.Expression: ...


#: the clauses of a subquery this module compiles
BOUNDING: tuple[str, ...] = ("order", "limit", "offset", "locks")


def bounded(select: exp.Select) -> bool:
    """Does the subquery choose its rows by an order, a count or a lock?"""
    return any(select.args.get(k) for k in BOUNDING)


def add_bounds(
    c: Compiling, scope: Scope, inner: exp.Select, sub: exp.Select, node: exp.Expression
) -> None:
    """``inner``'s ORDER BY, LIMIT, OFFSET and locks, compiled onto ``sub`` (the server's
    subquery) in ``scope`` (the subquery's)."""
    order = inner.args.get("order")
    keys = []
    for o in order.expressions if order is not None else []:
        ref = c.column_side(scope, o.this)
        if ref is None or keyed(ref.column):
            raise unsupported(node, "a subquery ordered by other than a column of numbers or times")
        oc = c.require(ref, Cap.ORD)
        if not (oc.ope_exact or oc.innermost == "PLAIN"):
            raise unsupported(node, "a subquery ordered by a column the server orders inexactly")
        desc = bool(o.args.get("desc"))
        nulls_first = o.args.get("nulls_first")
        keys.append(
            exp.Ordered(
                this=c.col_expr(ref, oc),
                desc=desc,
                nulls_first=desc if nulls_first is None else bool(nulls_first),
            )
        )
    if keys:
        sub.set("order", exp.Order(expressions=keys))
    for arg, clause in (("limit", exp.Limit), ("offset", exp.Offset)):
        given = inner.args.get(arg)
        if given is None:
            continue
        value = c.value_of(given.expression)
        if value is None:
            raise unsupported(node, f"a subquery's non-constant {arg.upper()}")
        sub.set(arg, clause(expression=c.param(value)))
    if inner.args.get("locks"):
        sub.set("locks", [server_lock(scope, lock) for lock in inner.args["locks"]])


__all__ = ["BOUNDING", "add_bounds", "bounded"]
