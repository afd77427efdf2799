"""The values of a statement's constants and parameters, as the client computes them.

:func:`value_of` gives, for an expression made only of literals, parameters, casts of
them, ``ARRAY[...]`` of them and ``||`` of them, a builder: a function of the bound
parameters giving the value PostgreSQL would compute (None for any other expression).
Also here: the constants of a range comparison read against the column's type
(:func:`range_constant`), casts with PostgreSQL's explicit-cast rules, and the literal
runs of LIKE patterns and plain regular expressions (for trigram candidate filters).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext
from typing import Any

from psycopg import errors as pg_errors
from sqlglot import exp

from ..catalog.domains import cast_type
from ..catalog.metadata import ColumnMeta
from ..engine.numeric import pg_scaled
from ..errors import (
    EncodingError,
    NumericOutOfRange,
    ParameterMismatch,
    UnsupportedQuery,
    ValueOutOfDomain,
)
from ..values.array_encoding import Constructed, construct
from ..values.clock import CLOCK_PREFIX, clock_kind, clock_param, is_clock_cast
from ..values.encodings import SqlType, encoding_for, parse_sql_type
from ..values.interval_input import RANGES
from ..values.numeric_encodings import SingleValue, negated, single_bits
from ..values.text_encodings import BlankPadded
from .plan import ParamBuilder, Params
from .scope import unsupported


def _positional_param(params: Any, idx: int) -> Any:
    """The value of the ``idx``-th ``%s``; too few parameters is refused, typed."""
    if (type(params) is tuple or type(params) is list) and idx < len(params):
        return params[idx]  # (the usual case, without the ABC check below)
    if isinstance(params, Mapping | str | bytes) or idx >= len(params):
        raise ParameterMismatch(
            f"the query has more placeholders than the {len(params)} parameters passed"
        )
    return params[idx]


@dataclass(frozen=True)
class PositionalParam:
    """The builder of the ``index``-th ``%s``: recognizable, so that a multi-row INSERT
    checks the parameter count once and then reads its values by index."""

    index: int

    def __call__(self, params: Any) -> Any:
        return _positional_param(params, self.index)


def _named_param(params: Any, key: str) -> Any:
    """The value of ``%(key)s``; anything but a mapping holding it is refused, typed."""
    if not isinstance(params, Mapping) or key not in params:
        raise ParameterMismatch(f"query parameter missing: {key}")
    return params[key]


def concat_text(a: Any, b: Any) -> str | None:
    """PostgreSQL's ``||`` of two constants (NULL if either is), as text."""
    if a is None or b is None:
        return None
    return _text_of(a) + _text_of(b)


def _text_of(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if type(v) is BlankPadded:  # (char(n) to text drops the padding)
        return v.rstrip(" ")
    if isinstance(v, str | int | Decimal):
        return str(v)
    if isinstance(v, _dt.date) and not isinstance(v, _dt.datetime):
        return v.isoformat()
    raise UnsupportedQuery(
        f"|| of a {type(v).__name__} value: give it as text", "concatenation of a non-text value"
    )


def _negated(value: Any) -> Any:
    """``-value`` for a number; PostgreSQL has no unary minus for strings or booleans."""
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        raise EncodingError(f"unary minus of a {type(value).__name__}")
    if isinstance(value, Decimal):
        return negated(value)
    try:
        return -value
    except ArithmeticError:  # a Decimal beyond the context's exponents (found by atheris)
        raise ValueOutOfDomain("a numeric constant overflows numeric") from None


_INT_RANGES = {"smallint": 2**15, "integer": 2**31, "bigint": 2**63}


def _cast_int_range(node: exp.Cast) -> tuple[str, int] | None:
    """(type name, 2**bits-1) of a cast to an integer type, else None."""
    t = cast_target(node.to)
    if t is None or t.name not in _INT_RANGES or t.element is not None:
        return None
    return t.name, _INT_RANGES[t.name]


def _negated_int(value: Any, name: str, bound: int) -> Any:
    negated = _negated(value)
    if isinstance(negated, int) and not -bound <= negated < bound:
        raise NumericOutOfRange(f"{name} out of range")
    return negated


_RANGE_OPS = {exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}


def range_constant(column: ColumnMeta, op: type, v: Any) -> tuple[type, Any] | bool | None:
    """``column op v`` for a number constant ``v`` the column's type cannot hold exactly
    (beyond its range, or with more decimals than its scale): PostgreSQL compares across
    types, so the comparison means ``column <= floor(v)`` (for < and <=) or ``column >=
    ceil(v)`` (for > and >=), floor and ceil the nearest values of the type; where no
    value of the type is there, it is true for every non-NULL value (True) or for none
    (False).  None where ``v`` is held exactly, or the type is not an integer or a
    numeric(p,s) one (the comparison as it is)."""
    name, t = column.type.name, column.type
    if op not in _RANGE_OPS or isinstance(v, bool) or not isinstance(v, int | Decimal):
        return None
    if isinstance(v, Decimal) and not v.is_finite():
        return None
    if name in _INT_RANGES:
        step, lo, hi = Decimal(1), Decimal(-_INT_RANGES[name]), Decimal(_INT_RANGES[name] - 1)
    elif name == "numeric" and t.precision is not None:
        scale = t.scale or 0
        step = Decimal(1).scaleb(-scale)
        hi = Decimal(10) ** (t.precision - scale) - step
        lo = -hi
    else:
        return None
    value = Decimal(v)
    with localcontext() as ctx:
        ctx.prec = 2000
        floor = value.quantize(step, rounding=ROUND_FLOOR)
        ceil = value.quantize(step, rounding=ROUND_CEILING)
    if floor == ceil and lo <= value <= hi:
        return None  # held exactly
    below = _RANGE_OPS[op] in ("<", "<=")
    bound = floor if below else ceil
    if bound > hi:
        return below
    if bound < lo:
        return not below
    kept = int(bound) if name in _INT_RANGES else bound
    return (exp.LTE if below else exp.GTE), kept


def number_constant(node: exp.Expression) -> int | Decimal | None:
    """The value of a number constant written in the statement (``-32769``, ``1.255``),
    None for anything else (a parameter's value comes at run time)."""
    while isinstance(node, exp.Paren):
        node = node.this
    negative = isinstance(node, exp.Neg)
    if negative:
        node = node.this
    if not isinstance(node, exp.Literal) or node.is_string:
        return None
    value = _literal_value(node)
    return -value if negative else value


def range_truth(column: exp.Expression, truth: bool) -> exp.Expression:
    """``column op v`` that :func:`range_constant` found always ``truth`` for a non-NULL
    value: NULL where the column is NULL, as the comparison is."""
    null = exp.Is(this=column, expression=exp.Null())
    if truth:
        return exp.Paren(this=exp.or_(exp.Not(this=null), exp.Null()))
    return exp.Paren(this=exp.and_(null, exp.Null()))


_INT_TYPES = frozenset({"smallint", "integer", "bigint"})


def cast_target(to: exp.DataType) -> SqlType | None:
    """The column type a cast names, parsed once when the statement is compiled (None:
    not a type the client has; cast_value then refuses it when a value comes)."""
    try:
        return parse_sql_type(to.sql("postgres"))
    except Exception:
        return cast_type(to)


def cast_value(
    value: Any, to: exp.DataType, param: bool = False, target: SqlType | None = None
) -> Any:
    """``value::type`` with PostgreSQL's explicit-cast semantics, for a constant or a
    parameter: boolean <-> integer, booleans as text, strings truncated to varchar(n)
    (an explicit cast truncates where an assignment would fail), else the type's input
    rules (those of its encoding).  A parameter has the type psycopg sends it as: a
    Python int goes as smallint, integer or bigint by its size, and only integer casts
    to boolean."""
    if value is None:
        return None
    as_integer = param and isinstance(value, int) and not isinstance(value, bool)
    if as_integer and to.is_type(exp.DataType.Type.BOOLEAN):
        if -(2**15) <= value < 2**15:
            raise pg_errors.CannotCoerce("cannot cast type smallint to boolean")
        if not -(2**31) <= value < 2**31:
            source = "bigint" if -(2**63) <= value < 2**63 else "numeric"
            raise pg_errors.CannotCoerce(f"cannot cast type {source} to boolean")
    t = target if target is not None else cast_target(to)
    if t is None:
        raise UnsupportedQuery(f"cast to {to.sql('postgres')}", "cast")
    if isinstance(value, bool):
        if t.name in _INT_TYPES:
            value = int(value)
        elif t.name in ("text", "varchar", "char"):
            value = "true" if value else "false"
    elif t.name == "boolean" and isinstance(value, int):
        value = value != 0
    elif t.name in ("varchar", "char") and t.precision is not None and isinstance(value, str):
        value = value[: t.precision]
    elif isinstance(value, Constructed):
        value = Constructed(value.items, "cast")  # each element read as the cast's type
    elif type(value) is SingleValue and t.name in _INT_RANGES:
        value = single_bits(value)
    out = encoding_for(t).coerce(value)
    if t.name == "char" and type(out) is str:
        return BlankPadded(out)
    return SingleValue(out) if t.name == "real" and type(out) is float else out


def interval_constant(node: exp.Interval) -> ParamBuilder | None:
    """``interval '1 day'`` or ``interval '1 2' day to hour`` compared with an interval
    column: its value, read as PostgreSQL reads the typed literal."""
    text, unit = node.this, node.args.get("unit")
    if not isinstance(text, exp.Literal) or not text.is_string:
        return None
    written = node.meta.get("written")
    fields = None if written is not None or unit is None else unit.sql("postgres").lower()
    if fields is not None and fields not in RANGES:
        return None  # (a unit PostgreSQL does not take after the string)
    t = SqlType("interval", fields=fields)
    value = encoding_for(t).coerce(written if written is not None else text.name)
    return lambda p: value


def _literal_value(node: exp.Expression) -> Any:
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        text = node.this
        if any(ch in text for ch in ".eE"):
            try:
                return pg_scaled(Decimal(text))  # (1e3 is 1000, of scale 0)
            except ArithmeticError:  # an exponent beyond any numeric, as PostgreSQL says
                raise ValueOutOfDomain("a numeric constant overflows numeric") from None
        return int(text)
    if isinstance(node, exp.Boolean):
        return node.this
    raise unsupported(node)


def null_value(p: Params) -> None:
    """The value of a NULL written in the statement (one function: a row's NULL is known
    as such where its values are sealed, compile/insert.py)."""
    return None


def value_of(
    node: exp.Expression, semi_values: ContextVar[dict[str, list[Any]]] | None = None
) -> ParamBuilder | None:
    """A builder for a constant/parameter node, or None if it is not one.  With
    ``semi_values`` (split execution's fetches), a ``%(semiN)s`` placeholder is the list
    of values its run-time semi-join filter holds when the fetch is bound."""
    if (
        semi_values is not None
        and isinstance(node, exp.Placeholder)
        and node.name.startswith("semi")
    ):
        key = node.name
        return lambda p: semi_values.get()[key]
    if isinstance(node, exp.Paren):
        return value_of(node.this, semi_values)
    if isinstance(node, exp.Placeholder):
        key = node.name
        if node.args.get("jdbc") or not key or key.isdigit():  # ?, $1: not for psycopg
            raise unsupported(node, "placeholder other than %s and %(name)s")
        if key.startswith("u") and key[1:].isdigit():
            return PositionalParam(int(key[1:]))
        if key.startswith(CLOCK_PREFIX):  # the client engine's clock values
            return clock_param(key[len(CLOCK_PREFIX) :])
        return lambda p: _named_param(p, key)
    if isinstance(node, exp.Null):
        return null_value
    kind = clock_kind(node)
    if kind is not None:  # now(), CURRENT_DATE, ...: read from the server when bound
        return clock_param(kind)
    if isinstance(node, exp.Literal | exp.Boolean):
        v = _literal_value(node)
        return lambda p: v
    if isinstance(node, exp.Neg):
        inner = value_of(node.this, semi_values)
        if inner is None:
            return None
        typed = node.this.unnest()
        limit = _cast_int_range(typed) if isinstance(typed, exp.Cast) else None
        if limit is not None:  # -(x::bigint): PostgreSQL's int8um overflows at -2**63
            name, bound = limit
            return lambda p: None if (x := inner(p)) is None else _negated_int(x, name, bound)
        return lambda p: None if (x := inner(p)) is None else _negated(x)
    if isinstance(node, exp.Cast):
        if is_clock_cast(node):
            return value_of(node.this, semi_values)  # (typed for the client engine only)
        operand = value_of(node.this, semi_values)
        if operand is None:
            return None
        to, param = node.to, isinstance(node.this, exp.Placeholder)
        target = cast_target(to)
        return lambda p: cast_value(operand(p), to, param, target)
    if isinstance(node, exp.Array):  # ARRAY[...] of constants
        items = [value_of(x, semi_values) for x in node.expressions]
        if any(b is None for b in items):
            return None
        built = [b for b in items if b is not None]
        return lambda p: construct([b(p) for b in built])
    if isinstance(node, exp.DPipe):  # 'prefix ' || %s: a constant string
        left, right = value_of(node.this, semi_values), value_of(node.expression, semi_values)
        if left is None or right is None:
            return None
        return lambda p: concat_text(left(p), right(p))
    return None


def like_runs(pattern: str, escape: str | None) -> list[tuple[str, bool, bool]]:
    """The literal runs of a LIKE pattern, each with whether it is anchored at the
    text's start and end.  A pattern PostgreSQL would reject (ending in the escape
    character) gives no runs: no filter, and the exact evaluation raises the error."""
    runs: list[tuple[str, bool, bool]] = []
    run, start, i = "", 0, 0
    while i < len(pattern):
        ch = pattern[i]
        if escape is not None and ch == escape:
            if i + 1 == len(pattern):
                return []
            run += pattern[i + 1]
            i += 2
            continue
        if ch in "%_":
            if run:
                runs.append((run, start == 0, False))
            run, start = "", i + 1
        else:
            run += ch
        i += 1
    if run:
        runs.append((run, start == 0, True))
    return runs


_REGEX_META = frozenset("\\.^$*+?()[]{}|")


def regex_runs(pattern: str) -> list[tuple[str, bool, bool]]:
    """The literal run of a regular expression that is a plain string, optionally
    anchored by ``^`` and ``$``; any other expression gives no runs (no filter)."""
    body = pattern
    at_start = body.startswith("^")
    if at_start:
        body = body[1:]
    at_end = body.endswith("$")
    if at_end:
        body = body[:-1]
    if not body or any(ch in _REGEX_META for ch in body):
        return []
    return [(body, at_start, at_end)]
