"""The types of a statement whose jsonb and array calls engine/row_lowering.py has
lowered: each call keeps its result's type, what stands on it is typed again from it,
and the columns read from a FROM function's lateral subquery (which sqlglot's
annotation does not follow) take their select items' types; a string constant beside
jsonb, or a number beside a held numeric, in a choice is read as that type
(:func:`choice_constants`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final, cast

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


def _string_constant(node: exp.Expression) -> bool:
    return isinstance(node, exp.Literal) and node.is_string


def _number(node: exp.Expression) -> bool:
    return kind_of(node) in ("int", "decimal")


# a held type in a choice, the other branches PostgreSQL reads as it, and the row
# function reading one so: jsonb's string constants, numeric's other numbers
_CHOICE_READERS: Final[dict[str, tuple[Callable[[exp.Expression], bool], str]]] = {
    "jsonb": (_string_constant, "jsonb_in"),
    "numeric": (_number, "numeric_in"),
}


def choice_constants(
    node: exp.Expression,
    held: Mapping[str, Encoding],
    read: Callable[[exp.Expression, str], exp.Expression],
) -> None:
    """A CASE, COALESCE, GREATEST or LEAST of a held jsonb or numeric beside values
    PostgreSQL types by it (``coalesce(doc, '{}')``, ``coalesce(price, 0)``): each of
    those made ``read(branch, reader)``, a call of the row function reading it as the
    held type (:data:`_CHOICE_READERS`)."""
    branches = choice_values(node)
    ducks = {held_of(unparen(b), held) for b in branches}
    for name in {held[d].sql_type.name for d in ducks if d is not None} & _CHOICE_READERS.keys():
        taken, reader = _CHOICE_READERS[name]
        for branch in branches:
            inner = unparen(branch)
            if held_of(inner, held) is None and taken(inner):
                inner.replace(read(inner.copy(), reader))


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
    "choice_constants",
    "from_function_laterals",
    "type_produced_columns",
]
