"""PostgreSQL's number arithmetic, reproduced where the client computes it: numeric
division (so client-computed AVGs match the server's), and + - * / % typed as
PostgreSQL types them (:func:`pg_arith`, below).

``AVG`` over integers and numerics is ``numeric_div(sum, count)`` in PostgreSQL, whose
result scale comes from ``select_div_scale`` (numeric.c): at least 16 significant digits,
and no fewer decimals than either input shows.  Rounding is half away from zero.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from decimal import (
    ROUND_HALF_UP,
    Context,
    Decimal,
    DivisionByZero,
    Overflow,
    localcontext,
)
from typing import Any

import numpy as np
from psycopg import errors as pg_errors

from ..values.numeric_encodings import negated, shortest_single, single_bits

NBASE = 10000
DEC_DIGITS = 4
MIN_SIG_DIGITS = 16
MAX_DISPLAY_SCALE = 1000


def _weight_first(v: Decimal) -> tuple[int, int]:
    """Weight and first digit of |v| in PostgreSQL's base-10000 representation."""
    v = abs(v)
    if v == 0:
        return 0, 0
    weight = 0
    while v >= NBASE:
        v /= NBASE
        weight += 1
    while v < 1:
        v *= NBASE
        weight -= 1
    return weight, int(v)


def _dscale(v: Decimal) -> int:
    exp = v.as_tuple().exponent
    return max(0, -exp) if isinstance(exp, int) else 0


def numeric_div(a: Decimal, b: Decimal) -> Decimal:
    if not (a.is_finite() and b.is_finite()):  # (the weights of an infinity: none)
        return _special_quotient("/", a, b)
    with localcontext() as ctx:
        ctx.prec = 2000
        w1, f1 = _weight_first(a)
        w2, f2 = _weight_first(b)
        qweight = w1 - w2
        if f1 <= f2:
            qweight -= 1
        rscale = MIN_SIG_DIGITS - qweight * DEC_DIGITS
        rscale = max(rscale, _dscale(a), _dscale(b), 0)
        rscale = min(rscale, MAX_DISPLAY_SCALE)
        return (a / b).quantize(Decimal(1).scaleb(-rscale), rounding=ROUND_HALF_UP)


def pg_variance(kind: str, total: Any, n: int | None, squares: Any) -> Decimal | None:
    """``kind`` (var_samp, var_pop, stddev_samp, stddev_pop) of integers or numerics
    from their count, sum and sum of squares, as numeric.c's numeric_stddev_internal:
    NULL for no value (or one, for a sample's); (N * sumX2 - sumX^2) / (N * (N - 1))
    -- N * N for a population's -- by numeric division, 0 where roundoff makes it
    negative; a standard deviation its square root at the quotient's scale."""
    if total is None or not n or (kind.endswith("samp") and n <= 1):
        return None
    with localcontext() as ctx:
        ctx.prec = 2000
        count, sum_x = Decimal(n), Decimal(total)
        numerator = count * Decimal(squares) - sum_x * sum_x
        if numerator <= 0:
            return Decimal(0)
        variance = numeric_div(numerator, count * (count - 1 if kind.endswith("samp") else count))
        if kind.startswith("var"):
            return variance
        step = Decimal(1).scaleb(int(variance.as_tuple().exponent))
        return variance.sqrt().quantize(step, rounding=ROUND_HALF_UP)


def pg_avg(total: Any, n: int | None, sql_type: Any) -> Any:
    if total is None or not n:
        return None
    if isinstance(total, float):
        return total / n
    return numeric_div(Decimal(total), Decimal(n))


# -- arithmetic typed as PostgreSQL types it ---------------------------------------------
#
# The client computes some arithmetic per row itself (a select list's ``x * 2`` over a
# decrypted column, ``SET x = x + %s`` read-modified-written).  PostgreSQL computes it in
# the operands' type -- the wider of two integer types, numeric, or double precision --
# and raises where the result leaves that type: these functions do the same, with the
# SQLSTATE and message PostgreSQL gives, and never let a Python error (OverflowError,
# ZeroDivisionError, decimal.InvalidOperation) reach the application.

INT2, INT4, INT8, NUMERIC, FLOAT4, FLOAT8 = 21, 23, 20, 1700, 700, 701

# an integer type's bounds and its name in PostgreSQL's messages
_INT_BOUNDS: dict[int, tuple[int, int, str]] = {
    INT2: (-(2**15), 2**15 - 1, "smallint"),
    INT4: (-(2**31), 2**31 - 1, "integer"),
    INT8: (-(2**63), 2**63 - 1, "bigint"),
}
_INT_RANK = {INT2: 0, INT4: 1, INT8: 2}
_INT_OIDS = {name: oid for oid, (_, _, name) in _INT_BOUNDS.items()}
_FLOATS = (FLOAT4, FLOAT8)
# the types of PostgreSQL's number operators (integer, numeric, float)
NUMBER_OIDS = frozenset({INT2, INT4, INT8, NUMERIC, FLOAT4, FLOAT8})


def value_oid(value: Any, literal: bool = False) -> int | None:
    """The type PostgreSQL gives ``value``: a constant written in the statement
    (``literal``: integer if it fits, else bigint, else numeric) or a parameter as
    psycopg sends a Python value (the smallest of smallint, integer, bigint, numeric
    that holds an int; numeric for a Decimal; double precision for a float)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        for oid in (INT4, INT8) if literal else (INT2, INT4, INT8):
            low, high, _ = _INT_BOUNDS[oid]
            if low <= value <= high:
                return oid
        return NUMERIC
    if isinstance(value, Decimal):
        return NUMERIC
    if isinstance(value, float):
        return FLOAT8
    return None


def int_range(oid: int | None) -> tuple[int, int] | None:
    """The values an integer type holds (smallint, integer, bigint), None for others."""
    bounds = _INT_BOUNDS.get(oid) if oid is not None else None
    return None if bounds is None else (bounds[0], bounds[1])


def result_oid(left: int, right: int) -> int:
    """The type of ``left op right`` for + - * / % of PostgreSQL's number types: the
    wider integer type of two, numeric beside an integer or numeric, double precision
    beside a float (real only beside real)."""
    if left in _INT_RANK and right in _INT_RANK:
        return left if _INT_RANK[left] >= _INT_RANK[right] else right
    if left in _FLOATS or right in _FLOATS:
        return FLOAT4 if left == right == FLOAT4 else FLOAT8
    return NUMERIC


def _checked_int(value: int, oid: int) -> int:
    low, high, name = _INT_BOUNDS[oid]
    if not low <= value <= high:
        raise pg_errors.NumericValueOutOfRange(f"{name} out of range")
    return value


def numeric_int(
    d: Decimal, name: str, out_of_range: type[Exception] = pg_errors.NumericValueOutOfRange
) -> int:
    """numeric_int2 / int4 / int8 (``name`` the type's): rounded half away from zero;
    NaN and the infinities 0A000, a value past the type ``out_of_range`` (22003)."""
    if d.is_nan():
        raise pg_errors.FeatureNotSupported(f"cannot convert NaN to {name}")
    if d.is_infinite():
        raise pg_errors.FeatureNotSupported(f"cannot convert infinity to {name}")
    whole = int(d.to_integral_value(rounding=ROUND_HALF_UP))
    low, high, _ = _INT_BOUNDS[_INT_OIDS[name]]
    if not low <= whole <= high:
        raise out_of_range(f"{name} out of range")
    return whole


def float8_op(op: str, a: float, b: float) -> float:
    """PostgreSQL's float8 operators (float.h): an infinite result of finite operands is
    an overflow; a zero product or quotient of non-zero finite operands an underflow;
    a zero divisor 22012 unless the dividend is NaN."""
    if op == "%":
        raise pg_errors.UndefinedFunction(
            "operator does not exist: double precision % double precision"
        )
    if op == "/":
        if b == 0.0:
            if math.isnan(a):
                return a
            raise pg_errors.DivisionByZero("division by zero")
        r = a / b
        if math.isinf(r) and not math.isinf(a):
            raise pg_errors.NumericValueOutOfRange("value out of range: overflow")
        if r == 0.0 and a != 0.0 and not math.isinf(b):
            raise pg_errors.NumericValueOutOfRange("value out of range: underflow")
        return r
    r = a + b if op == "+" else a - b if op == "-" else a * b
    if math.isinf(r) and not (math.isinf(a) or math.isinf(b)):
        raise pg_errors.NumericValueOutOfRange("value out of range: overflow")
    if op == "*" and r == 0.0 and not (a == 0.0 or b == 0.0):
        raise pg_errors.NumericValueOutOfRange("value out of range: underflow")
    return r


def _float4(value: float) -> float:
    """A real's value: the double rounded to single precision (exact for + - * /: a
    double holds every such result of two singles before the one rounding), held as
    psycopg loads a real -- the double of its shortest text (994.3, not 994.29998...)."""
    r = float(np.float32(value))
    if math.isinf(r) and not math.isinf(value):
        raise pg_errors.NumericValueOutOfRange("value out of range: overflow")
    if r == 0.0 and value != 0.0:
        raise pg_errors.NumericValueOutOfRange("value out of range: underflow")
    return shortest_single(r)


def _int_op(op: str, a: int, b: int, oid: int) -> int:
    if op in "/%" and b == 0:
        raise pg_errors.DivisionByZero("division by zero")
    if op == "/":
        q = abs(a) // abs(b)  # truncated toward zero, as C's
        return _checked_int(q if (a >= 0) == (b >= 0) else -q, oid)
    if op == "%":
        return a - b * (abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1))
    return _checked_int(a + b if op == "+" else a - b if op == "-" else a * b, oid)


# exact: + - keep the larger scale, * adds the scales (2,000 digits: more than a
# numeric holds before its point, 131,072 digits in PostgreSQL, is beyond what the
# client computes on anyway); a context of its own rather than a local one made per
# operation (a read-modify-write adds to a numeric per row).  An invalid operation is
# NaN, as PostgreSQL's: Infinity + -Infinity, Infinity * 0.
_EXACT = Context(prec=2000, traps=[DivisionByZero, Overflow])
_EXACT_OPS: dict[str, Callable[[Decimal, Decimal], Decimal]] = {
    "+": _EXACT.add,
    "-": _EXACT.subtract,
    "*": _EXACT.multiply,
}


def _numeric_op(op: str, a: Decimal, b: Decimal) -> Decimal:
    if op in "/%" and b == 0:
        raise pg_errors.DivisionByZero("division by zero")
    if op == "%" and not (a.is_finite() and b.is_finite()):
        return _special_quotient(op, a, b)  # (numeric_div gives the quotient's)
    if op == "/":
        return numeric_div(a, b)
    exact = _EXACT_OPS.get(op)
    if exact is not None:
        return pg_scaled(exact(a, b))
    with localcontext() as ctx:
        ctx.prec = 2000
        # (% : the dividend's sign, the larger scale, as C's fmod)
        return pg_scaled(a % b)


def _special_quotient(op: str, a: Decimal, b: Decimal) -> Decimal:
    """``a / b`` or ``a % b`` where either is NaN or infinite, as numeric_div and
    numeric_mod give them (b is not zero): NaN beside NaN, Infinity divided by an
    infinity, and Infinity modulo anything; an infinity divided by a number its sign;
    a number divided by an infinity 0, modulo one itself."""
    if a.is_nan() or b.is_nan() or (a.is_infinite() and (op == "%" or b.is_infinite())):
        return Decimal("NaN")
    if a.is_infinite():
        return a if b > 0 else a.copy_negate()
    return Decimal(0) if op == "/" else a


def pg_scaled(value: Decimal) -> Decimal:
    """``value`` with a display scale PostgreSQL could give it: never a negative one (an
    operand read from ``1e30`` is ``Decimal('1E+30')``; PostgreSQL's has scale 0)."""
    exponent = value.as_tuple().exponent
    if isinstance(exponent, int) and exponent > 0:
        with localcontext() as ctx:
            ctx.prec = 2000
            return value.quantize(Decimal(1))
    return value


# the names PostgreSQL's errors give the operands' types
_OID_NAMES: dict[int, str] = {
    INT2: "smallint", INT4: "integer", INT8: "bigint", NUMERIC: "numeric",
    FLOAT4: "real", FLOAT8: "double precision",
}  # fmt: skip
_VALUE_NAMES: dict[type, str] = {bool: "boolean", str: "unknown", type(None): "unknown"}


def _no_operator(op: str, a: Any, lt: int | None, b: Any, rt: int | None) -> Exception:
    """PostgreSQL's 42883 for ``a op b``, naming the operands' types as it does."""

    def name(v: Any, oid: int | None) -> str:
        return _OID_NAMES.get(oid or 0) or _VALUE_NAMES.get(type(v), type(v).__name__)

    return pg_errors.UndefinedFunction(f"operator does not exist: {name(a, lt)} {op} {name(b, rt)}")


def pg_arith(op: str, a: Any, b: Any, left: int | None = None, right: int | None = None) -> Any:
    """``a op b`` (op one of ``+ - * / %``) as PostgreSQL computes it for operands of
    types ``left`` and ``right`` (oids; None: the value's own, as a parameter's), NULL
    if either is NULL.  Raises PostgreSQL's errors: "integer out of range" and its kin,
    "division by zero", "value out of range: overflow"."""
    lt = left if left in NUMBER_OIDS else value_oid(a)
    rt = right if right in NUMBER_OIDS else value_oid(b)
    if a is None or b is None:
        # (NULL, but the other operand is still typed: PostgreSQL refuses integer +
        # boolean when it plans the statement, whatever a row holds)
        for value, oid in ((a, lt), (b, rt)):
            if value is not None and oid is None and not isinstance(value, str):
                raise _no_operator(op, a, lt, b, rt)
        return None
    # a string constant beside a number is of the number's type, read by its input
    # function ('5' + i: PostgreSQL resolves the unknown literal so)
    if isinstance(a, str) and rt is not None:
        a, lt = text_in(a, rt), rt
    if isinstance(b, str) and lt is not None:
        b, rt = text_in(b, lt), lt
    if lt is None or rt is None:
        raise _no_operator(op, a, lt, b, rt)
    oid = result_oid(lt, rt)
    if oid in _INT_RANK:
        return _int_op(op, int(a), int(b), oid)
    if oid in _FLOATS:  # (a real is its own bits, as PostgreSQL's: 1004.3 is 1004.29998...)
        x = single_bits(float(a)) if lt == FLOAT4 else float(a)
        y = single_bits(float(b)) if rt == FLOAT4 else float(b)
        r = float8_op(op, x, y)
        return _float4(r) if oid == FLOAT4 else r
    return _numeric_op(op, Decimal(a), Decimal(b))


def pg_negate(a: Any, oid: int | None = None) -> Any:
    """``-a`` as PostgreSQL computes it (``-(-2147483648)::integer`` is out of range)."""
    if a is None:
        return None
    t = oid if oid in _INT_RANK else value_oid(a)
    if t in _INT_RANK and isinstance(a, int):
        return _checked_int(-a, t)
    return negated(a) if isinstance(a, Decimal) else -a


# -- input of text as PostgreSQL's number types (int2in, int4in, int8in, float8in) -----------

_INT_TEXT = re.compile(r"[ \t\n\r\v\f]*([+-]?[0-9]+)[ \t\n\r\v\f]*")
_FLOAT_TEXT = re.compile(
    r"[ \t\n\r\v\f]*([+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    r"|inf|infinity|nan))[ \t\n\r\v\f]*",
    re.IGNORECASE,
)
_INT_BY_WIDTH = {2: INT2, 4: INT4, 8: INT8}


def int_in(text: str, width: int) -> int:
    """``text::smallint`` / ``::integer`` / ``::bigint`` (width 2, 4, 8) as PostgreSQL
    reads it: surrounding white space, an optional sign, decimal digits; anything else
    is 22P02, a value beyond the type 22003."""
    low, high, name = _INT_BOUNDS[_INT_BY_WIDTH[width]]
    match = _INT_TEXT.fullmatch(text)
    if match is None:
        raise pg_errors.InvalidTextRepresentation(f'invalid input syntax for type {name}: "{text}"')
    value = int(match.group(1))
    if not low <= value <= high:
        raise pg_errors.NumericValueOutOfRange(f'value "{text}" is out of range for type {name}')
    return value


def float8_in(text: str) -> float:
    """``text::double precision`` as PostgreSQL reads it: a decimal number, ``Infinity``,
    ``inf`` or ``NaN`` in any case, with white space around; no underscores (Python's
    float() takes them).  Beyond double precision's range, either way: 22003."""
    match = _FLOAT_TEXT.fullmatch(text)
    if match is None:
        raise pg_errors.InvalidTextRepresentation(
            f'invalid input syntax for type double precision: "{text}"'
        )
    body = match.group(1)
    value = float(body)
    digits = body.lstrip("+-").lower()
    if digits[:1].isdigit() or digits[:1] == ".":
        mantissa = digits.split("e")[0]
        nonzero = any(c not in "0." for c in mantissa)
        if math.isinf(value) or (value == 0.0 and nonzero):
            raise pg_errors.NumericValueOutOfRange(
                f'"{text}" is out of range for type double precision'
            )
    return value


_NUMERIC_TEXT = re.compile(
    r"[ \t\n\r\v\f]*([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|nan)"
    r"[ \t\n\r\v\f]*",
    re.IGNORECASE,
)


def text_in(text: str, oid: int) -> Any:
    """``text`` read as a value of the number type ``oid`` by PostgreSQL's input rules."""
    if oid in _INT_BOUNDS:
        return int_in(text, {INT2: 2, INT4: 4, INT8: 8}[oid])
    if oid in _FLOATS:
        return float8_in(text)
    match = _NUMERIC_TEXT.fullmatch(text)
    if match is None:
        raise pg_errors.InvalidTextRepresentation(
            f'invalid input syntax for type numeric: "{text}"'
        )
    return Decimal(match.group(1))


# -- casts to numeric of values the client reads (numeric_in, float8_numeric) --------------

_NUMERIC_IN = re.compile(
    r"[ \t\n\r\v\f]*([+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    r"|nan|inf|infinity))[ \t\n\r\v\f]*",
    re.IGNORECASE,
)
# the significant digits PostgreSQL 15 keeps converting a float to numeric: "%.*g" with
# DBL_DIG / FLT_DIG digits, read back by numeric's input rules
FLOAT_NUMERIC_DIGITS = {FLOAT8: 15, FLOAT4: 6}


def numeric_in(text: str) -> Decimal:
    """``text::numeric`` as PostgreSQL 15's numeric_in reads it: surrounding spaces, an
    exponent, NaN and ±Infinity (any case, inf too); the value keeps the display scale
    its digits and exponent give (``'1.50'`` is 1.50, ``'1e3'`` 1000); a zero has no
    sign (``'-0.0'`` is 0.0).  Anything else raises 22P02."""
    match = _NUMERIC_IN.fullmatch(text)
    if match is None:
        raise pg_errors.InvalidTextRepresentation(
            f'invalid input syntax for type numeric: "{text}"'
        )
    word = match.group(1).lower().lstrip("+")
    if word in ("inf", "infinity", "-inf", "-infinity"):
        return Decimal("-Infinity" if word.startswith("-") else "Infinity")
    if word == "nan":
        return Decimal("NaN")
    try:
        value = pg_scaled(Decimal(match.group(1)))
    except ArithmeticError:
        raise pg_errors.NumericValueOutOfRange("value overflows numeric format") from None
    return abs(value) if value == 0 else value


def float_numeric(value: float, oid: int = FLOAT8) -> Decimal:
    """``value::numeric`` of a double precision (``oid`` FLOAT8) or a real (FLOAT4) as
    PostgreSQL 15 converts it: its first 15 (real: 6) significant digits."""
    if math.isnan(value):
        return Decimal("NaN")
    if math.isinf(value):
        return Decimal("Infinity" if value > 0 else "-Infinity")
    return numeric_in(f"{value:.{FLOAT_NUMERIC_DIGITS[oid]}g}")


def float4_out(value: float | None) -> float | None:
    """A real as psycopg loads PostgreSQL's: its shortest decimal that reads back as the
    same float4, as a Python float (the client engine gives the float4's bits as a
    double: 0.1 is 0.10000000149011612 there, 0.1 from PostgreSQL)."""
    return None if value is None else float(str(np.float32(value)))
