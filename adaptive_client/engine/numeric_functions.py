"""Arithmetic over held numerics (``numeric`` without a precision, which the client
engine holds by order keys: engine/held.py), as the client engine calls it (the row
functions of engine/row_functions.py): ``+ - * / %`` and unary minus with an integer or a
numeric, and the aggregates ``sum`` and ``avg`` -- each value a ``Decimal`` with its own
display scale, computed as PostgreSQL computes numeric (engine/numeric.py: exact sums and
products, ``numeric_div``'s scale, NaN and the infinities, 22012); ``abs``, ``ceil``,
``floor``, ``sign``, ``round`` and ``trunc``, and casts to double precision, text, the
integer types and ``numeric(p,s)``.

A numeric shares its key with the values equal to it that print otherwise (``1.0`` and
``1.00``): where a result would differ between them, the call is refused at run time
(engine/row_calls.py), never answered with either.
"""

from __future__ import annotations

from decimal import ROUND_CEILING, ROUND_DOWN, ROUND_FLOOR, ROUND_HALF_UP, Decimal
from typing import Any

from ..values.encoding_base import EXACT
from ..values.encodings import encoding_for
from ..values.numeric_encodings import exact_sum
from ..values.value_text import pg_text
from .numeric import NUMERIC, numeric_int, pg_arith, pg_avg, pg_negate


def _number(v: Any) -> Any:
    return v if isinstance(v, int | Decimal) else Decimal(v)  # (a constant's text)


def plus(enc: Any, a: Any, b: Any) -> Decimal:
    return pg_arith("+", _number(a), _number(b), NUMERIC, NUMERIC)


def minus(enc: Any, a: Any, b: Any) -> Decimal:
    return pg_arith("-", _number(a), _number(b), NUMERIC, NUMERIC)


def times(enc: Any, a: Any, b: Any) -> Decimal:
    return pg_arith("*", _number(a), _number(b), NUMERIC, NUMERIC)


def divided(enc: Any, a: Any, b: Any) -> Decimal:
    return pg_arith("/", _number(a), _number(b), NUMERIC, NUMERIC)


def modulo(enc: Any, a: Any, b: Any) -> Decimal:
    return pg_arith("%", _number(a), _number(b), NUMERIC, NUMERIC)


def negated(enc: Any, a: Any) -> Decimal:
    return pg_negate(_number(a), NUMERIC)


# -- functions and casts ------------------------------------------------------------------


def _integral(d: Decimal, rounding: str) -> Decimal:
    """``d`` at scale 0, rounded so (an exponent above 0 spelled out; no -0)."""
    if not d.is_finite():
        return d
    q = d.quantize(Decimal(1), rounding=rounding, context=EXACT)
    return q.copy_abs() if q.is_zero() else q


def absolute(enc: Any, a: Any) -> Decimal:
    return _number(a).copy_abs()


def ceiling(enc: Any, a: Any) -> Decimal:
    return _integral(_number(a), ROUND_CEILING)


def floored(enc: Any, a: Any) -> Decimal:
    return _integral(_number(a), ROUND_FLOOR)


def signum(enc: Any, a: Any) -> Decimal:
    d = _number(a)
    return d if d.is_nan() else Decimal(0 if d.is_zero() else (-1 if d < 0 else 1))


def _at_scale(d: Decimal, scale: int, rounding: str) -> Decimal:
    """round / trunc of ``d`` to ``scale`` digits after the point (before it where
    negative), at display scale ``max(scale, 0)`` as numeric_round gives it."""
    if not d.is_finite():
        return d
    q = d.quantize(Decimal(1).scaleb(-scale), rounding=rounding, context=EXACT)
    if scale < 0:
        q = q.quantize(Decimal(1), context=EXACT)
    return q.copy_abs() if q.is_zero() else q


def rounded(enc: Any, a: Any, scale: Any = 0) -> Decimal:
    return _at_scale(_number(a), int(scale), ROUND_HALF_UP)


def truncated(enc: Any, a: Any, scale: Any = 0) -> Decimal:
    return _at_scale(_number(a), int(scale), ROUND_DOWN)


def to_float8(enc: Any, a: Any) -> str:
    """numeric_float8, as the text the engine reads to the double (correctly rounded, as
    float8in reads numeric_out's text; NaN and the infinities as words)."""
    return repr(float(_number(a)))


def to_text(enc: Any, a: Any) -> str | None:
    return pg_text(_number(a))


def _to_int(a: Any, name: str) -> int:
    return numeric_int(_number(a), name)


def to_int2(enc: Any, a: Any) -> int:
    return _to_int(a, "smallint")


def to_int4(enc: Any, a: Any) -> int:
    return _to_int(a, "integer")


def to_int8(enc: Any, a: Any) -> int:
    return _to_int(a, "bigint")


def same(enc: Any, a: Any) -> Decimal:
    """A number as numeric (an integer's value at scale 0)."""
    return Decimal(a) if isinstance(a, int) else _number(a)


def to_typmod(enc: Any, a: Any, precision: Any, scale: Any) -> Decimal:
    """A cast to numeric(p,s): the column type's rounding and its 22003."""
    return encoding_for(f"numeric({int(precision)},{int(scale)})").coerce(_number(a))


# -- aggregates ----------------------------------------------------------------------------


def total(enc: Any, values: list[Any]) -> Decimal | None:
    """sum(numeric) over a group's values: NULL over none (or only NULLs)."""
    present = [_number(v) for v in values if v is not None]
    return exact_sum(present) if present else None


def mean(enc: Any, values: list[Any]) -> Decimal | None:
    """avg(numeric): the exact sum divided as numeric_div divides."""
    return pg_avg(total(enc, values), sum(v is not None for v in values), None)


__all__ = [
    "absolute",
    "ceiling",
    "divided",
    "floored",
    "mean",
    "minus",
    "modulo",
    "negated",
    "plus",
    "rounded",
    "same",
    "signum",
    "times",
    "to_float8",
    "to_int2",
    "to_int4",
    "to_int8",
    "to_text",
    "to_typmod",
    "total",
    "truncated",
]  # fmt: skip
