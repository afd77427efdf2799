"""The engine's functions behind engine/date_constructors.py: ``pg_make_date`` and
``pg_unix_micros``, PostgreSQL's checks, errors and rounding (date.c make_date,
timestamp.c float8_timestamptz)."""

from __future__ import annotations

import calendar
import math
from typing import Any, Final

import duckdb
from psycopg import errors as pg_errors

# the Julian-day limits of PostgreSQL's dates (datatype/timestamp.h): 4714-11-24 BC and
# the last day before year 5874898
_JULIAN_MIN: Final = (-4713, 11, 24)
_DATE_END_YEAR: Final = 5874898
_SECS_PER_DAY: Final = 86400
_UNIX_EPOCH_JDATE: Final = 2440588
_POSTGRES_EPOCH_JDATE: Final = 2451545
_DATETIME_MIN_JULIAN: Final = 0
_TIMESTAMP_END_JULIAN: Final = 109203528  # (294277-01-01)
_MIN_TIMESTAMP: Final = -211813488000000000  # (4714-11-24 00:00 BC, from 2000-01-01)
_END_TIMESTAMP: Final = 9223371331200000000  # (294277-01-01)


def make_date_text(year: int, month: int, day: int) -> str:
    """make_date's date as the engine's DATE reads it, or PostgreSQL's error: a negative
    year is BC (the message shows the year as PostgreSQL's check has made it)."""
    bc = year < 0
    y = -year if bc else year
    if y <= 0:
        raise _out_of_range("date field value out of range", y, month, day)
    if bc:
        y = -(y - 1)  # (1 BC is year 0 inside PostgreSQL)
    if not 1 <= month <= 12 or not 1 <= day <= 31:
        raise _out_of_range("date field value out of range", y, month, day)
    if day > calendar.monthrange(2000 + y % 400, month)[1]:  # (400 years: one cycle)
        raise _out_of_range("date field value out of range", y, month, day)
    if (y, month, day) < _JULIAN_MIN or y >= _DATE_END_YEAR:
        raise pg_errors.DatetimeFieldOverflow(f"date out of range: {y}-{month:02d}-{day:02d}")
    if y <= 0:
        return f"{1 - y:04d}-{month:02d}-{day:02d} (BC)"
    return f"{y:04d}-{month:02d}-{day:02d}"


def _out_of_range(message: str, y: int, month: int, day: int) -> Exception:
    return pg_errors.DatetimeFieldOverflow(f"{message}: {y}-{month:02d}-{day:02d}")


def unix_seconds_micros(seconds: float) -> int:
    """to_timestamp(seconds): the instant's microseconds since 1970 as PostgreSQL's
    float8_timestamptz rounds them (from 2000-01-01, in double precision, rint); its
    errors where NaN or out of range (the infinities are the engine's CASE's)."""
    if math.isnan(seconds):
        raise pg_errors.DatetimeFieldOverflow("timestamp cannot be NaN")
    low = float(_SECS_PER_DAY * (_DATETIME_MIN_JULIAN - _UNIX_EPOCH_JDATE))
    high = float(_SECS_PER_DAY * (_TIMESTAMP_END_JULIAN - _UNIX_EPOCH_JDATE))
    if seconds < low or seconds >= high:
        raise pg_errors.DatetimeFieldOverflow(f'timestamp out of range: "{_g(seconds)}"')
    shifted = seconds - float((_POSTGRES_EPOCH_JDATE - _UNIX_EPOCH_JDATE) * _SECS_PER_DAY)
    micros = round(shifted * 1_000_000)  # (round() of a float: half to even, as rint)
    if not _MIN_TIMESTAMP <= micros < _END_TIMESTAMP:
        raise pg_errors.DatetimeFieldOverflow(f'timestamp out of range: "{_g(seconds)}"')
    return micros + (_POSTGRES_EPOCH_JDATE - _UNIX_EPOCH_JDATE) * _SECS_PER_DAY * 1_000_000


def _g(value: float) -> str:
    """C's %g."""
    return f"{value:g}"


def register(con: duckdb.DuckDBPyConnection) -> None:
    """Add ``pg_make_date`` and ``pg_unix_micros`` to ``con``."""
    from duckdb.sqltypes import BIGINT, DOUBLE, INTEGER, VARCHAR

    functions: list[tuple[str, Any, list[Any], Any]] = [
        ("pg_make_date", make_date_text, [INTEGER, INTEGER, INTEGER], VARCHAR),
        ("pg_unix_micros", unix_seconds_micros, [DOUBLE], BIGINT),
    ]
    for name, fn, args, result in functions:
        con.create_function(name, fn, args, result)


__all__ = ["make_date_text", "register", "unix_seconds_micros"]
