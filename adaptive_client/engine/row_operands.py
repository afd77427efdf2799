"""How PostgreSQL reads some operands of the jsonb, array and interval calls of a
client-evaluated statement (engine/row_lowering.py): a number literal's type, a
subscript as written (sqlglot reads one of integer type counting from 0), an interval
constant's text, an operand as the engine function takes it (an aggregate's, as the
list of its group's rows), and a text result compared
with a number, which PostgreSQL has no operator for (42883)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from psycopg import errors as pg_errors
from sqlglot import exp
from sqlglot.expressions.datatypes import DType
from sqlglot.optimizer.annotate_types import annotate_types

from .kinds import kind_of, unparen
from .row_calls import ArgSpec, CallSpec
from .runtime import refusal


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


def interval_constant(node: exp.Expression) -> exp.Literal | None:
    """An interval constant as the string PostgreSQL reads it from (``interval '1'
    day`` is '1 day'), or None where ``node`` is not one."""
    inner = unparen(node)
    if isinstance(inner, exp.Cast) and inner.to.is_type(exp.DataType.Type.INTERVAL):
        literal = unparen(inner.this)
        if isinstance(literal, exp.Literal) and literal.is_string and not inner.to.expressions:
            return exp.Literal.string(literal.name)
        return None
    if not isinstance(inner, exp.Interval) or not isinstance(inner.this, exp.Literal):
        return None
    unit = inner.args.get("unit")
    if unit is None:
        return exp.Literal.string(inner.this.name)
    if isinstance(unit, exp.Var):
        return exp.Literal.string(f"{inner.this.name} {unit.name}")
    raise refusal("an interval constant with a field range", node)


def passed(node: exp.Expression, pg: str, arg: ArgSpec, spec: CallSpec) -> exp.Expression:
    """An operand as the engine function takes it: a numeric as its text (the engine
    prints a decimal with its scale)."""
    if spec.function == "[]" and arg.kind == "plain" and arg.duck == "INTEGER" and pg == "bigint":
        # (a bigint where an integer is taken, a subscript: PostgreSQL's cast, 22003
        # beyond integer's range)
        narrowed = exp.cast(node, exp.DataType.build("INTEGER"))
        narrowed.meta["row_call"] = spec
        return narrowed
    if arg.kind == "plain" and arg.duck == "BIGINT" and pg in ("integer", "smallint"):
        # (an integer where a bigint is taken: generate_series(1::bigint, 3) -- the
        # engine binds a function by its declared types, without widening)
        widened = exp.cast(node, exp.DataType.build("BIGINT"))
        widened.meta["row_call"] = spec
        return widened
    if arg.kind != "numeric":
        return node
    text = exp.Anonymous(this="concat", expressions=[node])
    text.meta["row_call"] = spec
    return text


@dataclass
class AggregateRows:
    """How an aggregate's rows are listed: in its ORDER BY's order, those its FILTER
    keeps."""

    ordered: list[exp.Expression]
    where: exp.Expression | None
    # DISTINCT values: each once, in the type's order (as PostgreSQL sorts them)
    distinct: bool = False

    def listed(self, ops: list[exp.Expression], spec: CallSpec) -> exp.Expression:
        """``array_agg(<the arguments> ORDER BY ...) [FILTER (WHERE ...)]``: the list
        the engine function is called with (a struct per row for several arguments)."""
        marked: list[exp.Expression] = []
        element: exp.Expression
        if len(ops) == 1:
            element = ops[0]
        else:
            fields = [
                exp.PropertyEQ(this=exp.to_identifier(f"a{i}"), expression=op)
                for i, op in enumerate(ops)
            ]
            element = exp.Struct(expressions=fields)
            marked += [element, *fields]
        listed: exp.Expression
        if self.distinct:
            order = exp.Order(
                this=exp.Distinct(expressions=[element]),
                expressions=[exp.Ordered(this=element.copy())],
            )
            listed = exp.ArrayAgg(this=order)
            marked += [order, order.this, listed]
        elif self.ordered:
            order = exp.Order(this=element, expressions=self.ordered)
            listed = exp.ArrayAgg(this=order)
            marked += [order, listed]
        else:
            listed = exp.ArrayAgg(this=element)
            marked.append(listed)
        if self.where is not None:
            listed = exp.Filter(this=listed, expression=exp.Where(this=self.where))
            marked.append(listed)
        for node in marked:
            node.meta["row_call"] = spec
        return listed


__all__ = [
    "AggregateRows",
    "check_text_comparisons",
    "interval_constant",
    "number_type",
    "passed",
    "read_from_zero",
    "slice_bounds",
    "subscript",
]
