"""Scalar functions of PostgreSQL's the client engine computes with the functions of
engine/scalar_udfs.py (and the case mapping's ``pg_initcap``), where DuckDB has none or
computes them otherwise: ``initcap``, ``chr``, ``overlay``, ``quote_literal``,
``quote_nullable``, ``gcd``, ``lcm``, ``num_nulls``, ``num_nonnulls``, ``to_hex``,
``split_part``, ``encode``, ``scale`` and ``min_scale``.  Each rewrite checks its arguments' kinds:
one PostgreSQL has no such function of is its 42883, one the client cannot type is
refused."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from psycopg import errors as pg_errors
from sqlglot import exp

from .function_types import not_text_error, undefined_function
from .kinds import duck_cast, int_width, kind_of, scale_of, udf
from .runtime import refusal as _refuse

_INT: Final = exp.DataType.build("INTEGER", dialect="duckdb")
_TEXT: Final = exp.DataType.build("VARCHAR", dialect="duckdb")


def _typed(node: exp.Expression, to: exp.DataType) -> exp.Expression:
    node.type = to.copy()
    return node


def _text_argument(node: exp.Expression, arg: exp.Expression) -> exp.Expression:
    if kind_of(arg) != "text":
        raise not_text_error(node, arg)
    return arg


def _integer_width(name: str, node: exp.Expression, args: list[exp.Expression]) -> int:
    """The widest of ``args``' integer widths (each an integer of known width), else
    PostgreSQL's 42883 or the refusal."""
    widths = []
    for arg in args:
        if kind_of(arg) != "int":
            if kind_of(arg) in ("text", "date", "timestamp", "timestamptz", "bool"):
                raise undefined_function(name, args)
            raise _refuse(f"{name}() of other than integers", node)
        width = int_width(arg)
        if width is None:
            raise _refuse(f"{name}() of an integer of unknown width", node)
        widths.append(width)
    return max(widths)


def initcap(node: exp.Initcap) -> exp.Expression:
    if node.meta.get("collation") is not None:
        raise _refuse("initcap under an explicit collation", node)
    return _typed(udf("pg_initcap", _text_argument(node, node.this)), _TEXT)


def chr_call(node: exp.Chr) -> exp.Expression:
    args = list(node.expressions)
    if len(args) != 1 or _integer_width("chr", node, args) == 8:
        raise undefined_function("chr", args)
    return _typed(udf("pg_chr", args[0]), _TEXT)


def overlay(node: exp.Overlay) -> exp.Expression:
    text = _text_argument(node, node.this)
    placing = _text_argument(node, node.expression)
    positions = [a for a in (node.args.get("from_"), node.args.get("for_")) if a is not None]
    if _integer_width("overlay", node, positions) == 8:
        raise undefined_function("overlay", [text, placing, *positions])
    return _typed(udf(f"pg_overlay{2 + len(positions)}", text, placing, *positions), _TEXT)


def _quote_literal(node: exp.Anonymous) -> exp.Expression:
    (arg,) = node.expressions
    if kind_of(arg) == "int":  # (of anyelement: its text, which integers print alike in)
        arg = duck_cast(arg, "VARCHAR")
    elif kind_of(arg) != "text":
        raise _refuse("quote_literal() of other than text or integers", node)
    return _typed(udf("pg_quote_literal", arg), _TEXT)


def _nulls_counted(node: exp.Anonymous) -> exp.Expression:
    """num_nulls / num_nonnulls: of any values, counted in an integer."""
    name = node.name.lower()
    if not node.expressions:
        raise undefined_function(name, [])
    counted = [
        exp.If(
            this=exp.Is(this=arg.copy(), expression=exp.Null()),
            true=exp.Literal.number(1 if name == "num_nulls" else 0),
            false=exp.Literal.number(0 if name == "num_nulls" else 1),
        )
        for arg in node.expressions
    ]
    total: exp.Expression = counted[0]
    for term in counted[1:]:
        total = exp.Add(this=total, expression=term)
    return _typed(duck_cast(exp.Paren(this=total), "INTEGER"), _INT)


def _divisors(node: exp.Anonymous) -> exp.Expression:
    """gcd / lcm of two integers, in the wider one's type (a smallint's is integer)."""
    name = node.name.lower()
    if len(node.expressions) != 2:
        raise undefined_function(name, list(node.expressions))
    width = _integer_width(name, node, list(node.expressions))
    if width == 2:  # (of two smallints: integer's, bigint's and numeric's alike)
        types = ", ".join(["smallint"] * len(node.expressions))
        raise pg_errors.AmbiguousFunction(f"function {name}({types}) is not unique")
    wide = width == 8
    call = udf(f"pg_{name}", *node.expressions, exp.Boolean(this=wide))
    if wide:
        return _typed(call, exp.DataType.build("BIGINT", dialect="duckdb"))
    return _typed(duck_cast(call, "INTEGER"), _INT)


def _quote_nullable(node: exp.Anonymous) -> exp.Expression:
    """quote_nullable: quote_literal's, and ``NULL`` of a NULL."""
    if len(node.expressions) != 1:
        raise undefined_function("quote_nullable", list(node.expressions))
    quoted = _quote_literal(node)
    return _typed(exp.Coalesce(this=quoted, expressions=[exp.Literal.string("NULL")]), _TEXT)


def to_hex(node: exp.Hex) -> exp.Expression:
    """to_hex(integer | bigint): a smallint's is the integer one."""
    width = _integer_width("to_hex", node, [node.this])
    if width == 2:  # (integer's and bigint's alike)
        raise pg_errors.AmbiguousFunction("function to_hex(smallint) is not unique")
    return _typed(udf("pg_to_hex", node.this, exp.Boolean(this=width == 8)), _TEXT)


def split_part(node: exp.SplitPart) -> exp.Expression:
    """split_part(text, text, constant n), n counting from the end where negative (its
    zero is 22023, raised by the statement's check)."""
    text = _text_argument(node, node.this)
    delimiter = _text_argument(node, node.args["delimiter"])
    return _typed(udf("pg_split_part", text, delimiter, node.args["part_index"]), _TEXT)


def encode(node: exp.Encode) -> exp.Expression:
    """encode(bytea, constant format): PostgreSQL's hex, base64 or escape text."""
    fmt = node.args.get("charset")
    typed = node.this.type
    if typed is None or not typed.is_type(exp.DataType.Type.VARBINARY, exp.DataType.Type.BLOB):
        raise _refuse("encode() of other than a bytea", node)
    if not (isinstance(fmt, exp.Literal) and fmt.is_string):
        raise _refuse("encode() to other than a constant format", node)
    # (another format is PostgreSQL's 22023, raised by the function on a row)
    args = [node.this, exp.Literal.string(fmt.name.lower())]
    return _typed(udf("pg_encode", *args), _TEXT)


def _numeric_scale(node: exp.Anonymous) -> exp.Expression:
    """scale(numeric) of a column of declared scale (every value's), min_scale(numeric)
    of any numeric (the digits its value needs after the point)."""
    name = node.name.lower()
    if len(node.expressions) != 1:
        raise undefined_function(name, list(node.expressions))
    (arg,) = node.expressions
    if kind_of(arg) != "decimal":
        raise _refuse(f"{name}() of other than a numeric", node)
    if name == "min_scale":
        return _typed(udf("pg_min_scale", duck_cast(arg, "VARCHAR")), _INT)
    scale = scale_of(arg)
    if scale is None:
        raise _refuse("scale() of a numeric whose values' scales differ", node)
    null = exp.If(this=exp.Is(this=arg.copy(), expression=exp.Null()), true=exp.Null())
    value = exp.Case(ifs=[null], default=exp.Literal.number(scale))
    return _typed(duck_cast(value, "INTEGER"), _INT)


# the calls sqlglot leaves unparsed (exp.Anonymous), by name
FUNCTIONS: Final[dict[str, Callable[[exp.Anonymous], exp.Expression]]] = {
    "quote_literal": _quote_literal,
    "quote_nullable": _quote_nullable,
    "scale": _numeric_scale,
    "min_scale": _numeric_scale,
    "num_nulls": _nulls_counted,
    "num_nonnulls": _nulls_counted,
    "gcd": _divisors,
    "lcm": _divisors,
}

__all__ = ["FUNCTIONS", "chr_call", "encode", "initcap", "overlay", "split_part", "to_hex"]
