"""A set operation's columns as PostgreSQL types them, checked before the client engine
computes it (transforms.py takes its rewrite from here): branches of different type
categories are PostgreSQL's 42804, where DuckDB would cast one to the other; integers and
numerics, or numerics of different scales, are refused, PostgreSQL keeping each value's
own scale."""

from __future__ import annotations

from psycopg import errors as pg_errors
from sqlglot import exp

from .kinds import kind_of, scale_of
from .runtime import refusal as _refuse


def branch_selects(node: exp.Expression) -> list[exp.Select]:
    """The SELECTs a set operation's rows come from, left to right (a SELECT: itself)."""
    while isinstance(node, exp.Subquery):
        node = node.this
    if isinstance(node, exp.SetOperation):
        return branch_selects(node.this) + branch_selects(node.expression)
    return [node] if isinstance(node, exp.Select) else []


def _check_set_operation_scales(node: exp.SetOperation) -> None:
    """A set operation's column of integers and numerics, or of numerics of different
    scales: PostgreSQL keeps each value's own scale (``SELECT 5 UNION SELECT 1.50``
    prints ``5`` and ``1.50``), DuckDB gives every row the widest.  Refused rather than
    answered differently, unless only compared (IN, EXISTS, ...)."""
    parent = node.parent
    while parent is not None:
        if isinstance(parent, exp.Predicate):
            return
        parent = parent.parent
    selects = branch_selects(node)
    for column in zip(*(s.expressions for s in selects), strict=False):
        values = [e.unalias() for e in column if not isinstance(e.unalias(), exp.Null)]
        kinds = {kind_of(v) for v in values}
        if "decimal" not in kinds or not kinds <= {"int", "decimal"}:
            continue
        scales = {scale_of(v) for v in values}
        if len(scales) > 1 or None in scales:
            raise _refuse("a set operation's column of numerics of different scales", node)


# type categories of set operation columns (PostgreSQL's: a column's branches must be of
# one, else 42804), with a name of each for its message
_SET_CATEGORIES = {
    "int": ("N", "integer"),
    "decimal": ("N", "numeric"),
    "float": ("N", "double precision"),
    "text": ("S", "text"),
    "date": ("D", "date"),
    "timestamp": ("D", "timestamp without time zone"),
    "timestamptz": ("D", "timestamp with time zone"),
    "bool": ("B", "boolean"),
}


def _check_set_operation_types(node: exp.SetOperation) -> None:
    """A column whose branches are of different type categories (``SELECT text_col
    UNION SELECT bigint_col``): PostgreSQL's 42804, where DuckDB would cast one to the
    other.  An untyped constant or parameter takes the other branches' type there."""
    for column in zip(*(s.expressions for s in branch_selects(node)), strict=False):
        typed = [
            v
            for v in (e.unalias() for e in column)
            if not isinstance(v, exp.Null | exp.Placeholder)
            and not (isinstance(v, exp.Literal) and v.is_string)
        ]
        found = dict(_SET_CATEGORIES[k] for k in map(kind_of, typed) if k in _SET_CATEGORIES)
        if len(found) > 1:  # (one type named per category, as PostgreSQL's message)
            first, second = list(found.values())[:2]
            raise pg_errors.DatatypeMismatch(
                f"{node.key.upper()} types {first} and {second} cannot be matched"
            )


def set_operation(node: exp.SetOperation) -> exp.Expression:
    """The set operation as it is, once its columns are checked."""
    _check_set_operation_types(node)
    _check_set_operation_scales(node)
    return node


__all__ = ["branch_selects", "set_operation"]
