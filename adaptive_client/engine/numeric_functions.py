"""Arithmetic over held numerics (``numeric`` without a precision, which the client
engine holds by order keys: engine/held.py), as the client engine calls it (the row
functions of engine/row_functions.py): ``+ - * / %`` and unary minus with an integer or a
numeric, and the aggregates ``sum`` and ``avg`` -- each value a ``Decimal`` with its own
display scale, computed as PostgreSQL computes numeric (engine/numeric.py: exact sums and
products, ``numeric_div``'s scale, NaN and the infinities, 22012).

A numeric shares its key with the values equal to it that print otherwise (``1.0`` and
``1.00``): where a result would differ between them, the call is refused at run time
(engine/row_calls.py), never answered with either.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from ..values.numeric_encodings import exact_sum
from .numeric import NUMERIC, numeric_div, pg_arith, pg_negate


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


def total(enc: Any, values: list[Any]) -> Decimal | None:
    """sum(numeric) over a group's values: NULL over none (or only NULLs)."""
    present = [_number(v) for v in values if v is not None]
    return exact_sum(present) if present else None


def mean(enc: Any, values: list[Any]) -> Decimal | None:
    """avg(numeric): the exact sum divided as numeric_div divides."""
    present = [_number(v) for v in values if v is not None]
    if not present:
        return None
    summed = exact_sum(present)
    if not summed.is_finite():  # (NaN, and an infinity's average is itself)
        return summed
    return numeric_div(summed, Decimal(len(present)))


__all__ = ["divided", "mean", "minus", "modulo", "negated", "plus", "times", "total"]
