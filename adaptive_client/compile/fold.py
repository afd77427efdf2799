"""Constant folding with PostgreSQL's semantics, before a statement is split.

Folded: arithmetic of numeric constants (``0.06 - 0.01``, ``1 + 10``: exact, with the
scale PostgreSQL gives ``+ - *`` of numerics), and a date constant plus or minus an
interval of whole days, weeks, months or years (``date '1998-12-01' - interval '90'
day``).  The latter is a timestamp in PostgreSQL, at midnight; where it is compared
with a date, the date is cast to a timestamp at midnight, so the comparison is the
same with the date constant itself -- which the server can compare over an Ord onion
and the client engine as a date.  Folding makes such predicates constants the rewrite
can encrypt, and pushes them to the server.
"""

from __future__ import annotations

import calendar
import datetime as dt
from decimal import Decimal, InvalidOperation, localcontext
from typing import cast

from sqlglot import exp

_UNITS = {
    **dict.fromkeys(("day", "days"), "day"),
    **dict.fromkeys(("week", "weeks"), "week"),
    **dict.fromkeys(("month", "months", "mon", "mons"), "month"),
    **dict.fromkeys(("year", "years"), "year"),
}


def _number(node: exp.Expression) -> int | Decimal | None:
    if isinstance(node, exp.Paren):
        return _number(node.this)
    if isinstance(node, exp.Literal) and not node.is_string:
        text = str(node.this)
        if any(ch in text for ch in "eE"):
            return None
        try:
            return Decimal(text) if "." in text else int(text)
        except (InvalidOperation, ValueError):
            return None
    if isinstance(node, exp.Neg):
        inner = _number(node.this)
        return None if inner is None else -inner
    return None


def _date(node: exp.Expression) -> dt.date | None:
    """The value of ``date 'yyyy-mm-dd'`` (a cast of a string to date)."""
    if (
        isinstance(node, exp.Cast)
        and node.to.is_type(exp.DataType.Type.DATE)
        and isinstance(node.this, exp.Literal)
        and node.this.is_string
    ):
        try:
            return dt.date.fromisoformat(str(node.this.this).strip())
        except ValueError:
            return None
    return None


def _interval(node: exp.Expression) -> tuple[int, str] | None:
    """(quantity, day | week | month | year) of ``interval 'n' unit`` / ``interval 'n unit'``."""
    if not isinstance(node, exp.Interval) or not isinstance(node.this, exp.Literal):
        return None
    words = str(node.this.this).split()
    unit = node.args.get("unit")
    if unit is not None:
        words.append(unit.name)
    if len(words) != 2:
        return None
    try:
        n = int(words[0])
    except ValueError:
        return None
    name = _UNITS.get(words[1].lower())
    return None if name is None else (n, name)


def add_interval(d: dt.date, n: int, unit: str) -> dt.date:
    """``d + n units`` as PostgreSQL adds it (months clamp the day to the month's end)."""
    if unit == "day":
        return d + dt.timedelta(days=n)
    if unit == "week":
        return d + dt.timedelta(days=7 * n)
    months = n * 12 if unit == "year" else n
    total = d.year * 12 + d.month - 1 + months
    year, month = divmod(total, 12)
    month += 1
    if not 1 <= year <= 9999:
        raise OverflowError("date out of range")
    return dt.date(year, month, min(d.day, calendar.monthrange(year, month)[1]))


def _timestamp_literal(d: dt.date) -> exp.Expression:
    node = exp.Cast(
        this=exp.Literal.string(f"{d.isoformat()} 00:00:00"),
        to=exp.DataType.build("TIMESTAMP"),
    )
    node.meta["midnight_of"] = d
    return node


def _date_literal(d: dt.date) -> exp.Expression:
    return exp.Cast(this=exp.Literal.string(d.isoformat()), to=exp.DataType.build("DATE"))


def _fold(node: exp.Expression) -> exp.Expression | None:
    """The folded form of ``node`` (its children folded already), or None."""
    if isinstance(node, exp.Add | exp.Sub | exp.Mul):
        a, b = _number(node.this), _number(node.expression)
        if a is not None and b is not None:
            with localcontext() as ctx:  # numeric arithmetic is exact in PostgreSQL
                ctx.prec = 2000
                v = (
                    a + b
                    if isinstance(node, exp.Add)
                    else a - b
                    if isinstance(node, exp.Sub)
                    else a * b
                )
            if isinstance(v, int) and not all(-(2**31) <= x < 2**31 for x in (a, b, v)):
                return None  # integer typing and overflow errors: left to the engine
            text = format(v, "f") if isinstance(v, Decimal) else str(v)
            lit = exp.Literal.number(text.lstrip("-"))
            return exp.Neg(this=lit) if text.startswith("-") else lit
    if isinstance(node, exp.Add | exp.Sub):
        d, iv = _date(node.this), _interval(node.expression)
        if d is None and isinstance(node, exp.Add):  # interval + date
            d, iv = _date(node.expression), _interval(node.this)
        if d is not None and iv is not None:
            n, unit = iv
            try:
                return _timestamp_literal(
                    add_interval(d, -n if isinstance(node, exp.Sub) else n, unit)
                )
            except (OverflowError, ValueError):
                return None
    return None


def _is_date(node: exp.Expression) -> bool:
    return node.type is not None and node.type.is_type(exp.DataType.Type.DATE)


_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)


def fold_constants(tree: exp.Expression) -> exp.Expression:
    """Fold ``tree`` in place (annotated with types: comparisons with dates need them)."""
    for node in list(tree.walk(bfs=False))[::-1]:  # children before parents
        if not isinstance(node, exp.Expression) or (node.parent is None and node is not tree):
            continue  # replaced with an ancestor already
        folded = _fold(node)
        if folded is not None:
            # (a folded 1 + 1 is an expression still: in ORDER BY, GROUP BY or DISTINCT
            # ON not a column's position, as a written 2 is -- engine_sql.constant_keys)
            folded.meta["folded"] = True
            if node is tree:
                return folded
            node.replace(folded)
    for node in list(tree.find_all(*_COMPARISONS, exp.Between)):
        sides = (
            [("low", node.args["low"]), ("high", node.args["high"])]
            if isinstance(node, exp.Between)
            else [("this", node.this), ("expression", node.expression)]
        )
        other = node.this if isinstance(node, exp.Between) else None
        for key, side in sides:
            d = side.meta.get("midnight_of") if isinstance(side, exp.Cast) else None
            if d is None:
                continue
            against = (
                other if other is not None else (node.expression if key == "this" else node.this)
            )
            if _is_date(against):
                node.set(key, _date_literal(d))
    return tree


def _and_chain(node: exp.Expression) -> list[exp.Expression]:
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.And):
        return _and_chain(node.this) + _and_chain(node.expression)
    return [node]


def _or_chain(node: exp.Expression) -> list[exp.Expression]:
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Or):
        return _or_chain(node.this) + _or_chain(node.expression)
    return [node]


def factor_disjunctions(tree: exp.Expression) -> None:
    """``(A AND B) OR (A AND C)`` as ``A AND (B OR C)`` in every WHERE and ON (the same
    in SQL's three-valued logic): a join condition repeated in every branch of an OR
    (TPC-H Q19) becomes a conjunct of its own, which the server can join on."""
    for clause in list(tree.find_all(exp.Where, exp.Join)):
        key = "this" if isinstance(clause, exp.Where) else "on"
        cond = clause.args.get(key)
        if cond is None:
            continue
        parts: list[exp.Expression] = []
        changed = False
        for conj in _and_chain(cond):
            branches = [_and_chain(b) for b in _or_chain(conj)]
            if len(branches) < 2:
                parts.append(conj)
                continue
            texts = [{c.sql() for c in b} for b in branches]
            common = [c for c in branches[0] if all(c.sql() in t for t in texts[1:])]
            if not common:
                parts.append(conj)
                continue
            changed = True
            shared = {c.sql() for c in common}
            rests = [[c for c in b if c.sql() not in shared] for b in branches]
            parts.extend(c.copy() for c in common)
            if all(rests):  # a branch left with nothing is TRUE: the OR is then TRUE
                branches_left = [exp.paren(exp.and_(*[c.copy() for c in r])) for r in rests]
                parts.append(cast(exp.Expression, exp.or_(*branches_left)))
        if changed:
            clause.set(key, exp.and_(*parts))
