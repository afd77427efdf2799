"""The types of a statement whose jsonb and array calls engine/row_lowering.py has
lowered: each call keeps its result's type, what stands on it is typed again from it,
and the columns read from a FROM function's lateral subquery (which sqlglot's
annotation does not follow) take their select items' types; a string constant beside
jsonb in a choice is typed jsonb (:func:`jsonb_constants`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import cast

from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types

from ..values.encodings import Encoding
from .held import held_of
from .kinds import choice_values, kind_of, unparen
from .row_calls import CallSpec
from .row_operands import check_text_comparisons


def from_function_laterals(tree: exp.Expression) -> list[exp.Lateral]:
    """The lateral subqueries of set-returning functions in FROM (set_functions.py)."""
    return [
        lateral
        for lateral in tree.find_all(exp.Lateral)
        if lateral.meta.get("set_function") and isinstance(lateral.this, exp.Subquery)
    ]


def type_produced_columns(tree: exp.Expression) -> dict[int, exp.DataType]:
    """Type the columns read from FROM functions as their lowered select items; {id of
    each column typed: its type}."""
    produced: dict[tuple[str, str], exp.DataType] = {}
    for lateral in from_function_laterals(tree):
        for item in lateral.this.this.expressions:
            typed = item.unalias().type or item.type
            if typed is not None and not typed.is_type(exp.DataType.Type.UNKNOWN):
                produced[(lateral.alias_or_name, item.alias_or_name)] = typed
    out: dict[int, exp.DataType] = {}
    for column in tree.find_all(exp.Column):
        typed = produced.get((column.table, column.name))
        if typed is not None:
            column.type = typed.copy()
            out[id(column)] = column.type
    return out


def jsonb_constants(
    node: exp.Expression,
    held: Mapping[str, Encoding],
    as_jsonb: Callable[[exp.Expression], exp.Expression],
) -> None:
    """A CASE or COALESCE of jsonb values and string constants: the constants read as
    jsonb (PostgreSQL types them by the jsonb branch), each made ``as_jsonb`` of it (a
    call giving a held value)."""
    branches = choice_values(node)
    ducks = {held_of(unparen(b), held) for b in branches}
    if not any(d is not None and held[d].sql_type.name == "jsonb" for d in ducks):
        return
    for branch in branches:
        inner = unparen(branch)
        if isinstance(inner, exp.Literal) and inner.is_string:
            inner.replace(as_jsonb(inner.copy()))


def numeric_branches(
    node: exp.Expression,
    held: Mapping[str, Encoding],
    as_numeric: Callable[[exp.Expression], exp.Expression],
) -> None:
    """A CASE, COALESCE, GREATEST or LEAST of a held numeric beside other numbers
    (``coalesce(price, 0)``): each of those made ``as_numeric`` of it (a held numeric),
    as PostgreSQL resolves the choice's type to numeric."""
    branches = choice_values(node)
    ducks = {held_of(unparen(b), held) for b in branches}
    if not any(d is not None and held[d].sql_type.name == "numeric" for d in ducks):
        return
    for branch in branches:
        inner = unparen(branch)
        if held_of(inner, held) is None and kind_of(inner) in ("int", "decimal"):
            inner.replace(as_numeric(inner.copy()))


def annotate_lowered(tree: exp.Expression, schema: dict[str, dict[str, str]]) -> None:
    """The statement's types again once its calls are lowered: each call keeps the type
    of its result, what stands on it is typed from it; a set-returning function's
    columns in FROM (read through its lateral subquery, which the annotation does not
    follow) are typed as its select items.  A text result compared with a number raises
    PostgreSQL's error (:func:`check_text_comparisons`)."""
    kept = {
        id(d) for n in tree.walk() if isinstance(n.meta.get("row_call"), CallSpec) for d in n.walk()
    }
    _annotate_keeping(tree, schema, kept)
    check_text_comparisons(tree)
    typed = type_produced_columns(tree)
    if not typed:
        return
    kept.update(typed)
    _annotate_keeping(tree, schema, kept)


def _annotate_keeping(
    tree: exp.Expression, schema: dict[str, dict[str, str]], kept: set[int]
) -> None:
    # (sqlglot leaves a column an ORDER BY reads untyped when it keeps types: its type
    # before is its type, a column's does not depend on the calls lowered)
    columns = {id(c): c.type for c in tree.find_all(exp.Column) if c.type is not None}
    for node in tree.walk():
        if id(node) not in kept:
            node.type = None
    annotate_types(
        tree, schema=cast(dict[str, object], schema), dialect="postgres", overwrite_types=False
    )
    for column in tree.find_all(exp.Column):
        before = columns.get(id(column))
        if before is not None and (column.type is None or column.type.is_type("unknown")):
            column.type = before


__all__ = [
    "annotate_lowered",
    "from_function_laterals",
    "jsonb_constants",
    "type_produced_columns",
]
