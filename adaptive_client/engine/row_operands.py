"""How PostgreSQL reads some operands of the jsonb and array calls of a client-evaluated
statement (engine/row_lowering.py): a number literal's type, a subscript as written
(sqlglot reads one of integer type counting from 0), and a text result compared with a
number, which PostgreSQL has no operator for (42883)."""

from __future__ import annotations

from typing import Final

from psycopg import errors as pg_errors
from sqlglot import exp
from sqlglot.expressions.datatypes import DType
from sqlglot.optimizer.annotate_types import annotate_types

from .kinds import kind_of, unparen
from .row_calls import CallSpec


def number_type(text: str) -> str:
    """The type PostgreSQL reads a number literal as: integer, bigint beyond integer's
    range, numeric beyond bigint's or with a point or an exponent."""
    if not text.isdigit():
        return "numeric"
    return "integer" if int(text) < 2**31 else "bigint" if int(text) < 2**63 else "numeric"


def _untyped(node: exp.Expression) -> DType:
    """The type sqlglot gives ``node`` with no schema (as it types it when it parses)."""
    copy = node.copy()
    for n in copy.walk():
        if isinstance(n, exp.Expression):
            n.type = None
    annotate_types(copy, dialect="postgres")
    return copy.type.this if copy.type is not None else DType.UNKNOWN


def read_from_zero(bracket: exp.Bracket) -> bool:
    """Whether sqlglot read the subscript of ``bracket`` counting from 0 (less by one
    than written): one subscript of an integer type, of an operand of no type or an
    array, as it reads them (not a column: ``tags[id]`` is as written)."""
    if len(bracket.expressions) != 1 or isinstance(bracket.expressions[0], exp.Slice):
        return False
    if _untyped(bracket.this) not in (DType.UNKNOWN, DType.ARRAY):
        return False
    return _untyped(bracket.expressions[0]) in exp.DataType.INTEGER_TYPES


def subscript(index: exp.Expression, from_zero: bool) -> exp.Expression:
    """A subscript as written, where sqlglot read it counting from 0 (``from_zero``): a
    constant one more, anything else plus one (``x::smallint`` read as ``x + -1``)."""
    if not from_zero:
        return index
    if isinstance(index, exp.Literal) and not index.is_string and str(index.this).isdigit():
        return exp.Literal.number(int(index.this) + 1)
    negated = index.this if isinstance(index, exp.Neg) else None
    if isinstance(negated, exp.Literal) and str(negated.this).isdigit():  # (-3 read as -4)
        return exp.Literal.number(1 - int(negated.this))
    added = exp.Add(this=index, expression=exp.Literal.number(1))
    added.type = index.type or exp.DataType.build("INT")
    return added


# comparisons of a text result with a number, which PostgreSQL has no operator for
_COMPARISONS: Final[dict[type[exp.Expression], str]] = {
    exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">=",
}  # fmt: skip
_NUMBER_NAMES: Final = {"int": "integer", "decimal": "numeric", "float": "double precision"}


def _text_call(node: exp.Expression) -> bool:
    """A call of a row function whose result is text (``->>``, ``#>>``)."""
    node = unparen(node)
    spec = node.meta.get("row_call")
    return isinstance(spec, CallSpec) and spec.row_function.result == "text"


def check_text_comparisons(tree: exp.Expression) -> None:
    """PostgreSQL's 42883 for a text row function's result compared with a number
    (``attrs ->> 'c' = 1``: text = integer), which the engine would cast."""
    for node in tree.find_all(*_COMPARISONS):
        sides = (node.this, node.expression)
        for i, side in enumerate(sides):
            other = sides[1 - i]
            number = _NUMBER_NAMES.get(kind_of(other))
            if _text_call(side) and number is not None:
                types = ("text", number) if i == 0 else (number, "text")
                raise pg_errors.UndefinedFunction(
                    f"operator does not exist: {types[0]} {_COMPARISONS[type(node)]} {types[1]}"
                )


def slice_bounds(index: exp.Expression) -> list[exp.Expression]:
    """A subscript's bounds among slices, flat: ``[l:u]`` (a bound left out marked
    omitted), ``[i]`` as ``[1:i]``."""
    if not isinstance(index, exp.Slice):
        return [exp.Literal.number(1), subscript(index, False)]
    bounds = []
    for bound in (index.this, index.expression):
        if bound is None:
            bound = exp.Null()
            bound.meta["omitted"] = True
        bounds.append(bound)
    return bounds


__all__ = [
    "check_text_comparisons",
    "number_type",
    "read_from_zero",
    "slice_bounds",
    "subscript",
]
