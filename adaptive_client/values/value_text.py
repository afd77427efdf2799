"""A value's text as PostgreSQL prints it (``pg_text``): what COPY ... TO and a text
result show, and what a text column stores when assigned a value of another type."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from . import datetime_output, text_output
from .encoding_base import TEXT_FORMATS
from .interval_encoding import PgInterval, interval_text

# the text output of values of composite types, by Python type, filled by their modules
# (array_encoding: lists)
COMPOSITE_TEXT: dict[type, Callable[[Any], str]] = {}


def pg_text(v: Any) -> str | None:
    """A value's text as PostgreSQL prints it under the session's output settings
    (``text_output.current()``: DateStyle, IntervalStyle, extra_float_digits,
    bytea_output): what COPY ... TO and a text result show.  A float is printed as a
    double precision (``text_output.float4_text`` prints a real).  ``None`` is NULL."""
    if v is None:
        return None
    for kind, out in COMPOSITE_TEXT.items():
        if isinstance(v, kind):
            return out(v)
    if isinstance(v, bool):
        return "t" if v else "f"
    if isinstance(v, dt.datetime):
        return datetime_output.text(v, text_output.current().datestyle)
    if isinstance(v, dt.time):
        clock = f"{v.hour:02d}:{v.minute:02d}:{v.second:02d}" + datetime_output.fraction_text(
            v.microsecond
        )
        return clock + datetime_output.offset_text(v.utcoffset())  # (timetz: with its zone)
    if isinstance(v, dt.timedelta):
        fields = PgInterval(0, v.days, v.seconds * 1_000_000 + v.microseconds)
        return interval_text(fields, text_output.current().intervalstyle)
    if isinstance(v, dt.date):
        return datetime_output.text(v, text_output.current().datestyle)
    if isinstance(v, bytes | bytearray | memoryview):
        return text_output.bytea_text(bytes(v), text_output.current().bytea_output)
    if isinstance(v, Decimal):
        if v.is_nan():
            return "NaN"
        if v.is_infinite():
            return "-Infinity" if v.is_signed() else "Infinity"
        return format(v, "f")
    fmt = TEXT_FORMATS.get(type(v))
    if fmt is not None:
        return fmt(v)
    if isinstance(v, float):
        return text_output.float8_text(v, text_output.current().extra_float_digits)
    return str(v)


__all__ = ["COMPOSITE_TEXT", "pg_text"]
