"""PostgreSQL's functions that make a date or an instant of numbers, and ``isfinite``, in
the client engine: ``make_date(year, month, day)`` (a negative year BC),
``to_timestamp(double precision)`` (sqlglot's UnixToTime: seconds since 1970 as a
timestamptz, rounded to the microsecond as float8_timestamptz rounds them) and
``isfinite`` of a date, timestamp or timestamptz -- with PostgreSQL's errors (22008),
which DuckDB's own ``make_date`` and ``to_timestamp`` do not raise alike (the checks and
the rounding: engine/date_udfs.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from sqlglot import exp

from .function_types import undefined_function
from .kinds import duck_cast, int_width, kind_of, numeric_float8, udf
from .runtime import refusal as _refuse

# -- the rewrites ---------------------------------------------------------------------------


def _make_date(node: exp.Anonymous) -> exp.Expression:
    args = list(node.expressions)
    if len(args) != 3:
        raise undefined_function("make_date", args)
    for arg in args:
        if kind_of(arg) != "int":
            if kind_of(arg) in ("decimal", "float", "text", "date", "timestamp", "bool"):
                raise undefined_function("make_date", args)  # (no implicit cast to integer)
            raise _refuse("make_date() of other than integers", node)
        if int_width(arg) == 8:
            raise undefined_function("make_date", args)  # (make_date(integer, ...) only)
    text = udf("pg_make_date", *(duck_cast(a, "INTEGER") for a in args))
    return _typed(duck_cast(text, "DATE"), "DATE")


def to_timestamp(node: exp.UnixToTime) -> exp.Expression:
    """``to_timestamp(seconds)`` (sqlglot's UnixToTime; the one with a format is
    StrToTime, not here)."""
    arg = node.this
    if any(node.args.get(k) is not None for k in ("scale", "zone", "hours", "minutes", "format")):
        raise _refuse("to_timestamp() with a scale or zone", node)
    if kind_of(arg) not in ("int", "decimal", "float"):
        raise _refuse(f"to_timestamp() of a {kind_of(arg)} value", node)
    seconds = numeric_float8(arg) if kind_of(arg) == "decimal" else duck_cast(arg, "DOUBLE")
    micros = udf("pg_unix_micros", seconds)
    instant = udf("timezone", exp.Literal.string("UTC"), udf("make_timestamp", micros))
    infinite = exp.If(
        this=exp.GT(this=seconds.copy(), expression=exp.Literal.number(0)),
        true=duck_cast(exp.Literal.string("infinity"), "TIMESTAMPTZ"),
        false=duck_cast(exp.Literal.string("-infinity"), "TIMESTAMPTZ"),
    )
    chosen = exp.Case(
        ifs=[exp.If(this=udf("isinf", seconds.copy()), true=infinite)], default=instant
    )
    return _typed(chosen, "TIMESTAMPTZ")


def _isfinite(node: exp.Anonymous) -> exp.Expression:
    args = list(node.expressions)
    if len(args) != 1:
        raise undefined_function("isfinite", args)
    if kind_of(args[0]) not in ("date", "timestamp", "timestamptz"):
        if kind_of(args[0]) in ("int", "decimal", "float", "text", "bool"):
            raise undefined_function("isfinite", args)
        raise _refuse(f"isfinite() of a {kind_of(args[0])} value", node)
    return _typed(udf("isfinite", args[0]), "BOOLEAN")


def _typed(node: exp.Expression, duck: str) -> exp.Expression:
    node.type = exp.DataType.build(duck, dialect="duckdb")
    return node


FUNCTIONS: Final[dict[str, Callable[[exp.Anonymous], exp.Expression]]] = {
    "make_date": _make_date,
    "isfinite": _isfinite,
}


__all__ = ["FUNCTIONS", "to_timestamp"]
