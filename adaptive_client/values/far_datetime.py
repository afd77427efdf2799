"""Dates, timestamps and times PostgreSQL stores and Python's ``datetime`` cannot hold.

PostgreSQL's dates run from 4714-11-24 BC (Julian day 0) to 5874897-12-31, its
timestamps from 4714-11-24 BC 00:00 to 294276-12-31 23:59:59.999999, and a ``time``
goes up to ``24:00:00``; Python's dates end at years 1 and 9999 and its times before
24:00.  Inside the client such a value has a form of its own: :class:`PgDate` (a Julian
day), :class:`PgTimestamp` (microseconds since 2000-01-01 00:00, UTC for a
timestamptz) and :data:`END_OF_DAY` (``24:00:00``).  Every value Python can hold stays a
``date`` / ``datetime`` / ``time``; these forms only ever stand for the others.

Each form orders with the Python values of its type (a BC date before every ``date``),
prints as PostgreSQL prints it under every DateStyle (``0001-01-01 BC``,
``10000-01-01``, ``Sat Jan 01 00:00:00 0001 LMT BC``, ``24:00:00``), and is registered
with ``handout``: the application receives what psycopg's loader (the session
connection's, as for json) gives for PostgreSQL's text of the value -- by default
psycopg's ``DataError`` ("date too small (before year 1): '0001-01-01 BC'").

A timestamptz is shown in the session's TimeZone: before a zone's first transition at
its first offset (local mean time), past year 9999 at the offset the zone's rules give
the same date 400·k years earlier (the Gregorian calendar and the tz rules repeat every
400 years, as PostgreSQL's own zone code reads them).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import psycopg

from . import datetime_output, handout, text_output
from .datetime_fields import Fields, date2j, j2date
from .session import connection, time_zone

US_PER_DAY = 86_400_000_000
POSTGRES_EPOCH_JDATE = 2_451_545  # 2000-01-01
# Python's dates as Julian days (0001-01-01 and 9999-12-31)
PY_FIRST_JULIAN = 1_721_426
PY_LAST_JULIAN = 5_373_484
# PostgreSQL's range: the first Julian day, the day after the last date, the
# microseconds (since 2000-01-01) of the first timestamp and just past the last
DATE_END_JULIAN = 2_147_483_494
MIN_TIMESTAMP = -211_813_488_000_000_000
END_TIMESTAMP = 9_223_371_331_200_000_000
_PY_FIRST_US = (PY_FIRST_JULIAN - POSTGRES_EPOCH_JDATE) * US_PER_DAY
_PY_END_US = (PY_LAST_JULIAN + 1 - POSTGRES_EPOCH_JDATE) * US_PER_DAY
_CYCLE_US = 146_097 * US_PER_DAY  # 400 Gregorian years
# 2400-01-01 and 2800-01-01: years past the zones' last transitions, where their rules
# repeat (an instant past 2800 is read at the same time of a year in between)
_Y2400_US = (2_597_642 - POSTGRES_EPOCH_JDATE) * US_PER_DAY
_Y2800_US = _Y2400_US + _CYCLE_US
_PG_EPOCH = dt.datetime(2000, 1, 1)
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")

DATE_OID, TIME_OID, TIMESTAMP_OID, TIMESTAMPTZ_OID = 1082, 1083, 1114, 1184


class _Ordered:
    """Orders against the values of its type by ``_cmp`` (-1, 0, 1; None: not comparable,
    as Python's ``NotImplemented``)."""

    __slots__ = ()

    def _cmp(self, other: Any) -> int | None:
        raise NotImplementedError

    def __lt__(self, other: Any) -> bool:
        c = self._cmp(other)
        return NotImplemented if c is None else c < 0

    def __le__(self, other: Any) -> bool:
        c = self._cmp(other)
        return NotImplemented if c is None else c <= 0

    def __gt__(self, other: Any) -> bool:
        c = self._cmp(other)
        return NotImplemented if c is None else c > 0

    def __ge__(self, other: Any) -> bool:
        c = self._cmp(other)
        return NotImplemented if c is None else c >= 0


class PgDate(_Ordered):
    """A date outside Python's years: its Julian day (PostgreSQL's date2j)."""

    __slots__ = ("julian",)

    def __init__(self, julian: int) -> None:
        self.julian = julian

    def __repr__(self) -> str:
        return f"PgDate({date_text(self.julian, 'ISO')!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is PgDate and other.julian == self.julian

    def __hash__(self) -> int:
        return hash(("PgDate", self.julian))

    def _cmp(self, other: Any) -> int | None:
        j = julian_of(other)
        return None if j is None else (self.julian > j) - (self.julian < j)


def julian_of(v: Any) -> int | None:
    """The Julian day of a date value (``date`` or :class:`PgDate`), else None."""
    if type(v) is PgDate:
        return v.julian
    if isinstance(v, dt.date) and not isinstance(v, dt.datetime):
        return v.toordinal() + PY_FIRST_JULIAN - 1
    return None


def date_of(julian: int) -> Any:
    """The value of a Julian day: a ``date`` where Python has it, else a PgDate."""
    if PY_FIRST_JULIAN <= julian <= PY_LAST_JULIAN:
        return dt.date.fromordinal(julian - PY_FIRST_JULIAN + 1)
    return PgDate(julian)


class PgTimestamp(_Ordered):
    """A timestamp outside Python's years: microseconds since 2000-01-01 00:00 (a
    timestamptz: UTC, the instant; ``zoned``)."""

    __slots__ = ("micros", "zoned")

    def __init__(self, micros: int, zoned: bool) -> None:
        self.micros = micros
        self.zoned = zoned

    def __repr__(self) -> str:
        return f"PgTimestamp({self.micros}, zoned={self.zoned})"

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is PgTimestamp and other.micros == self.micros and other.zoned == self.zoned
        )

    def __hash__(self) -> int:
        return hash(("PgTimestamp", self.micros, self.zoned))

    def _cmp(self, other: Any) -> int | None:
        m = micros_of(other)
        return None if m is None else (self.micros > m) - (self.micros < m)


def micros_of(v: Any) -> int | None:
    """Microseconds since 2000-01-01 00:00 of a timestamp value (an aware datetime:
    UTC), else None."""
    if type(v) is PgTimestamp:
        return v.micros
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(dt.UTC).replace(tzinfo=None)
        return (v - _PG_EPOCH) // dt.timedelta(microseconds=1)
    return None


def timestamp_of(micros: int, zone: dt.tzinfo | None) -> Any:
    """The value of ``micros`` since 2000-01-01: a datetime where Python has it (aware,
    in ``zone``, for a timestamptz), else a PgTimestamp."""
    if _PY_FIRST_US <= micros < _PY_END_US:
        v = _PG_EPOCH + dt.timedelta(microseconds=micros)
        if zone is None:
            return v
        try:
            return v.replace(tzinfo=dt.UTC).astimezone(zone)
        except OverflowError:  # (local time past 9999-12-31 or before year 1)
            pass
    return PgTimestamp(micros, zone is not None)


class EndOfDay(_Ordered):
    """``24:00:00``, the last time of day PostgreSQL's ``time`` holds (Python's
    ``time`` ends before it): after every ``time``."""

    __slots__ = ()
    MICROS = US_PER_DAY

    def __repr__(self) -> str:
        return "END_OF_DAY"

    def __reduce__(self) -> str:
        return "END_OF_DAY"

    @staticmethod
    def _cmp(other: Any) -> int | None:
        if isinstance(other, EndOfDay):
            return 0
        return 1 if isinstance(other, dt.time) else None


END_OF_DAY = EndOfDay()


# --- civil fields and text ------------------------------------------------------------------


def _civil(julian: int) -> tuple[int, int, int, int]:
    """(year as written, month, day, weekday Mon=0) of a Julian day; a BC year is
    written positive (``year <= 0`` in astronomical numbering is ``1 - year`` BC)."""
    y, m, d = j2date(julian)
    return y, m, d, (julian % 7)  # (Julian day 0 was a Monday)


def _year_text(year: int) -> tuple[str, str]:
    """The year as PostgreSQL prints it and the era suffix (`` BC`` or nothing)."""
    return (f"{1 - year:04d}", " BC") if year <= 0 else (f"{year:04d}", "")


def _date_part(y: int, m: int, d: int, style: str, dmy: bool) -> str:
    year, _ = _year_text(y)
    if style == "ISO":
        return f"{year}-{m:02d}-{d:02d}"
    if style == "GERMAN":
        return f"{d:02d}.{m:02d}.{year}"
    first, second = (d, m) if dmy else (m, d)
    sep = "/" if style == "SQL" else "-"
    return f"{first:02d}{sep}{second:02d}{sep}{year}"


def date_text(julian: int, datestyle: str) -> str:
    """A Julian day as PostgreSQL's date_out prints it under ``datestyle``."""
    style, dmy = datetime_output.style_of(datestyle)
    y, m, d, _ = _civil(julian)
    return _date_part(y, m, d, style, dmy) + _year_text(y)[1]


def _zone_at(micros: int, zone: dt.tzinfo) -> tuple[int, str]:
    """(offset east in seconds, abbreviation) of ``zone`` at the UTC instant ``micros``
    (since 2000-01-01): before year 1 the zone's first offset, past 9999 that of the
    same time 400·k years earlier."""
    if micros < _PY_FIRST_US + US_PER_DAY:
        at = dt.datetime(1, 1, 2, tzinfo=dt.UTC)
    else:
        if micros >= _Y2800_US:
            micros -= (micros - _Y2400_US) // _CYCLE_US * _CYCLE_US
        at = (_PG_EPOCH + dt.timedelta(microseconds=micros)).replace(tzinfo=dt.UTC)
    local = at.astimezone(zone)
    offset = local.utcoffset() or dt.timedelta()
    return int(offset.total_seconds()), local.tzname() or ""


def zone_offset_at(micros: int, zone: dt.tzinfo) -> int:
    """The offset (seconds east) of ``zone`` at the UTC instant ``micros``."""
    return _zone_at(micros, zone)[0]


def fields_of(micros: int) -> Fields:
    """The date and time of day of ``micros`` since 2000-01-01 00:00 (no zone)."""
    day, clock = divmod(micros, US_PER_DAY)
    y, m, d = j2date(day + POSTGRES_EPOCH_JDATE)
    s, us = divmod(clock, 1_000_000)
    return Fields(y, m, d, s // 3600, s // 60 % 60, s % 60, us, has_date=True)


def timestamp_text(v: PgTimestamp, datestyle: str, zone: dt.tzinfo | None) -> str:
    """A PgTimestamp as PostgreSQL prints it under ``datestyle`` (a timestamptz in
    ``zone``, the session's TimeZone)."""
    style, dmy = datetime_output.style_of(datestyle)
    micros, offset, abbrev = v.micros, None, ""
    if v.zoned:
        east, abbrev = _zone_at(micros, zone or dt.UTC)
        micros += east * 1_000_000
        offset = dt.timedelta(seconds=east)
    day, clock = divmod(micros, US_PER_DAY)
    y, m, d, weekday = _civil(day + POSTGRES_EPOCH_JDATE)
    s, us = divmod(clock, 1_000_000)
    clock_text = f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}"
    clock_text += datetime_output.fraction_text(us)
    year, era = _year_text(y)
    if style == "ISO":
        return f"{_date_part(y, m, d, style, dmy)} {clock_text}" + (
            datetime_output.offset_text(offset) + era
        )
    zone_text = f" {abbrev}" if offset is not None else ""
    if style == "POSTGRES":
        month = datetime_output.MONTHS[m - 1]
        middle = f"{d:02d} {month}" if dmy else f"{month} {d:02d}"
        return f"{_DAYS[weekday]} {middle} {clock_text} {year}{zone_text}{era}"
    return f"{_date_part(y, m, d, style, dmy)} {clock_text}{zone_text}{era}"


def text_of(v: Any) -> str:
    """The value's text under the current output settings (``text_output.current()``)."""
    style = text_output.current().datestyle
    if type(v) is PgDate:
        return date_text(v.julian, style)
    if type(v) is PgTimestamp:
        return timestamp_text(v, style, time_zone() if v.zoned else None)
    return "24:00:00"


# --- what the application receives ---------------------------------------------------------


@lru_cache(maxsize=8)
def _default_loader(oid: int) -> Any:
    return psycopg.adapters.get_loader(oid, psycopg.pq.Format.TEXT)(oid, None)  # type: ignore[misc]


def _oid(v: Any) -> int:
    if type(v) is PgDate:
        return DATE_OID
    if type(v) is PgTimestamp:
        return TIMESTAMPTZ_OID if v.zoned else TIMESTAMP_OID
    return TIME_OID


def application_value(v: Any) -> Any:
    """What psycopg's text loader of the value's type gives for PostgreSQL's text of it
    in the session (see the module): by default it raises ``DataError``."""
    return loaded(_oid(v), lambda: text_of(v))


def loaded(oid: int, text: Callable[[], str]) -> Any:
    """What the session's text loader for ``oid`` (psycopg's default without a session)
    gives for the ``text`` PostgreSQL would send."""
    conn = connection()
    if conn is None:  # (no session: PostgreSQL's default DateStyle, the default loader)
        with text_output.using(text_output.OutputSettings()):
            return _default_loader(oid).load(text().encode())
    loader = conn.adapters.get_loader(oid, psycopg.pq.Format.TEXT)
    return loader(oid, conn).load(text().encode())  # type: ignore[misc]


for _kind in (PgDate, PgTimestamp, EndOfDay):
    handout.register(_kind, application_value, DATE_OID, TIME_OID, TIMESTAMP_OID, TIMESTAMPTZ_OID)


__all__ = [
    "DATE_END_JULIAN",
    "END_OF_DAY",
    "END_TIMESTAMP",
    "MIN_TIMESTAMP",
    "POSTGRES_EPOCH_JDATE",
    "EndOfDay",
    "PgDate",
    "PgTimestamp",
    "application_value",
    "date2j",
    "date_of",
    "date_text",
    "fields_of",
    "julian_of",
    "micros_of",
    "text_of",
    "timestamp_of",
    "timestamp_text",
    "zone_offset_at",
]
