"""The client engine's functions for scalar functions PostgreSQL has and DuckDB computes
otherwise or not at all, each as PostgreSQL's source computes it, errors included
(``quote_literal``, ``chr``, ``overlay``, ``gcd``, ``lcm``, ``to_hex``, ``split_part``,
``encode``, ``min_scale``, a float's cast to ``numeric(p, s)``, and ``mode()`` over a
group's sorted values).  :func:`register` adds them
to an engine; engine/scalar_functions.py rewrites the calls to them."""

from __future__ import annotations

import base64
import math
from decimal import ROUND_HALF_UP, Context, Decimal
from typing import Any

import duckdb
from psycopg import errors as pg_errors

from .markers import REFUSAL_MARKER

# enough digits for any float's value at any scale the engine holds (38 digits)
_WIDE = Context(prec=400)
_INT_MAX = {False: 2**31 - 1, True: 2**63 - 1}
_OUT_OF_RANGE = {False: "integer out of range", True: "bigint out of range"}


def quote_literal(s: str) -> str:
    """quote_literal(text): quotes and backslashes doubled, ``E`` before the quote where
    there is a backslash (quote.c)."""
    body = s.replace("'", "''")
    if "\\" in s:
        return "E'" + body.replace("\\", "\\\\") + "'"
    return "'" + body + "'"


def chr_(code: int) -> str:
    """chr(integer) in a UTF-8 database (oracle_compat.c)."""
    if code < 0:
        raise pg_errors.InvalidParameterValue("character number must be positive")
    if code == 0:
        raise pg_errors.ProgramLimitExceeded("null character not permitted")
    if code > 0x10FFFF:
        raise pg_errors.ProgramLimitExceeded(f"requested character too large for encoding: {code}")
    if 0xD800 <= code <= 0xDFFF:
        raise pg_errors.ProgramLimitExceeded(f"requested character not valid for encoding: {code}")
    return chr(code)


def overlay(s: str, placing: str, start: int, count: int | None) -> str:
    """overlay(s PLACING p FROM start [FOR count]) (varlena.c text_overlay): the text
    before ``start``, ``p``, then the text from ``start + count`` (``count``: p's length
    when not given)."""
    length = len(placing) if count is None else count
    if start <= 0:
        raise pg_errors.SubstringError("negative substring length not allowed")
    after = start + length
    if not -(2**31) <= after < 2**31:
        raise pg_errors.NumericValueOutOfRange("integer out of range")
    return s[: start - 1] + placing + s[max(after, 1) - 1 :]


def _in_range(value: int, wide: bool) -> int:
    if value > _INT_MAX[wide]:
        raise pg_errors.NumericValueOutOfRange(_OUT_OF_RANGE[wide])
    return value


def gcd(a: int, b: int, wide: bool) -> int:
    """gcd of two integers (int.c): never negative; 2^31 (2^63) is out of range."""
    return _in_range(math.gcd(a, b), wide)


def lcm(a: int, b: int, wide: bool) -> int:
    """lcm of two integers (int.c): 0 where either is, else |a / gcd * b|, in range."""
    if a == 0 or b == 0:
        return 0
    return _in_range(abs(a // math.gcd(a, b) * b), wide)


def mode(values: list[Any]) -> Any:
    """mode() WITHIN GROUP over the group's non-null values, sorted as its ORDER BY
    sorts them (orderedsetaggs.c mode_final): the first value of the longest run of
    equal values; NULL for none."""
    best, best_count, run, count = None, 0, None, 0
    for i, value in enumerate(values):
        if i == 0 or value != run:
            run, count = value, 0
        count += 1
        if count > best_count:
            best, best_count = run, count
    return best


# the element types of the lists mode() is computed over, by the name of its function
MODE_TYPES = {"int": "BIGINT", "text": "VARCHAR", "date": "DATE", "timestamp": "TIMESTAMP",
              "bool": "BOOLEAN"}  # fmt: skip


def float_numeric(value: float, digits: int, precision: int, scale: int) -> str:
    """A float's cast to ``numeric(precision, scale)`` (numeric.c float8_numeric,
    float4_numeric, then the typmod): its ``%.<digits>g`` text (15 digits for a double,
    6 for a real) rounded half away from zero to ``scale``; 22003 where the integer
    part has more than ``precision - scale`` digits, or the float is infinite."""
    if math.isnan(value):
        raise ValueError(f"{REFUSAL_MARKER}NaN cast to a numeric the client engine holds")
    if math.isinf(value):
        raise pg_errors.NumericValueOutOfRange("numeric field overflow")
    exact = Decimal(format(value, f".{digits}g"))
    rounded = exact.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP, context=_WIDE)
    if abs(rounded) >= Decimal(10) ** (precision - scale):
        raise pg_errors.NumericValueOutOfRange("numeric field overflow")
    return format(rounded, "f")


def to_hex(value: int, wide: bool) -> str:
    """to_hex(integer | bigint): the two's complement of a negative value, in 32 or 64
    bits (varlena.c)."""
    return format(value % (2**64 if wide else 2**32), "x")


def split_part(s: str, delimiter: str, n: int) -> str:
    """split_part(text, text, int), a negative n counting from the end (PostgreSQL 14):
    an empty delimiter leaves the whole string its one field; a field past the end is
    empty."""
    fields = s.split(delimiter) if delimiter else [s]
    index = n - 1 if n > 0 else len(fields) + n
    return fields[index] if 0 <= index < len(fields) else ""


_BASE64_LINE = 76  # PostgreSQL's base64 encode breaks its output into lines of 76


def encode(data: bytes, fmt: str) -> str:
    """encode(bytea, 'hex' | 'base64' | 'escape') as PostgreSQL's encode.c writes it:
    base64 in lines of 76 characters; escape with a zero byte and every byte from 0x80
    in octal (``\\ooo``) and a backslash doubled."""
    if fmt == "hex":
        return data.hex()
    if fmt == "base64":
        text = base64.b64encode(data).decode()
        return "\n".join(text[i : i + _BASE64_LINE] for i in range(0, len(text), _BASE64_LINE))
    if fmt == "escape":
        out = []
        for b in data:
            if b == 0 or b >= 0x80:
                out.append(f"\\{b:03o}")
            elif b == 0x5C:
                out.append("\\\\")
            else:
                out.append(chr(b))
        return "".join(out)
    raise pg_errors.InvalidParameterValue(f'unrecognized encoding: "{fmt}"')


def min_scale(text: str) -> int:
    """min_scale(numeric) of the value's text: the digits after the point it needs."""
    _, _, fraction = text.partition(".")
    return len(fraction.rstrip("0"))


def register(con: duckdb.DuckDBPyConnection) -> None:
    """Add the functions to ``con`` (``pg_quote_literal``, ``pg_chr``, ``pg_overlay3``,
    ``pg_overlay4``, ``pg_gcd``, ``pg_lcm``, ``pg_to_hex``, ``pg_split_part``,
    ``pg_encode``, ``pg_min_scale`` ...)."""
    from duckdb.sqltypes import BIGINT, BLOB, BOOLEAN, DOUBLE, INTEGER, VARCHAR

    functions: list[tuple[str, Any, list[Any], Any]] = [
        ("pg_quote_literal", quote_literal, [VARCHAR], VARCHAR),
        ("pg_chr", chr_, [BIGINT], VARCHAR),
        ("pg_overlay3", lambda s, p, f: overlay(s, p, f, None), [VARCHAR, VARCHAR, INTEGER],
         VARCHAR),
        ("pg_overlay4", overlay, [VARCHAR, VARCHAR, INTEGER, INTEGER], VARCHAR),
        ("pg_gcd", gcd, [BIGINT, BIGINT, BOOLEAN], BIGINT),
        ("pg_float_numeric", float_numeric, [DOUBLE, INTEGER, INTEGER, INTEGER], VARCHAR),
        ("pg_lcm", lcm, [BIGINT, BIGINT, BOOLEAN], BIGINT),
        ("pg_to_hex", to_hex, [BIGINT, BOOLEAN], VARCHAR),
        ("pg_split_part", split_part, [VARCHAR, VARCHAR, BIGINT], VARCHAR),
        ("pg_encode", encode, [BLOB, VARCHAR], VARCHAR),
        ("pg_min_scale", min_scale, [VARCHAR], INTEGER),
    ]  # fmt: skip
    for duck in MODE_TYPES.values():
        element = duckdb.sqltype(duck)
        functions.append((f"pg_mode_{duck.lower()}", mode, [duckdb.list_type(element)], element))
    for name, fn, args, result in functions:
        con.create_function(name, fn, args, result)


__all__ = [
    "MODE_TYPES",
    "chr_",
    "encode",
    "float_numeric",
    "gcd",
    "lcm",
    "min_scale",
    "mode",
    "overlay",
    "quote_literal",
    "register",
    "split_part",
    "to_hex",
]
