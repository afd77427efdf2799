"""The encodings of ``interval`` and ``timetz`` (``time with time zone``) columns.

interval: PostgreSQL stores ``(months, days, microseconds)`` and compares intervals by
their *span*, a month counted as 30 days and a day as 24 hours (``interval_cmp``): ``'1
day' = '24 hours'``, ``'1 month' = '30 days'``.  The Eq onion's canonical bytes are that
span (16 bytes, signed); the Ord onion's plaintext is the span plus 2**73 (every span of
PostgreSQL's fields lies within ±2**73: 74 bits); an Exact onion keeps the three fields
(``exact_display``), from which a value reads back as written.  Values read back as
psycopg 3 loads PostgreSQL's text for them (a ``timedelta``: a year 365 days, a month
30; ``DataError`` beyond ``timedelta``'s range, as psycopg raises); a span alone (the Eq
or Ord onion: ``DISTINCT``, ``min``/``max`` without an Exact onion) reads back as that
many microseconds.  Strings are read by PostgreSQL's interval input
(``interval_input``), in the column's field restriction (``interval day to hour``
reads ``'1 2'`` as a day and two hours, as a literal is read); a ``timedelta`` is its
days and the rest as microseconds, as PostgreSQL reads psycopg's text for it.

timetz: PostgreSQL stores the local time of day and the zone (seconds west of UTC), and
compares by the UTC time, then by the zone (``timetz_cmp``): ``'12:00+01' <>
'11:00+00'``, and ``'11:00+00' < '12:00+01'`` although both are the same instant.  Eq
and Ord encode ``(utc time, zone)`` as one 55-bit integer in that order (exact and
decryptable).  Values read back as psycopg loads them (a ``time`` with a fixed-offset
zone; ``24:00:00``, which PostgreSQL stores, raises ``DataError`` as in psycopg).  A
string is read as PostgreSQL's timetz input: a zone that observes daylight saving time
needs a date, a zone abbreviation or no zone takes the offset at the current date (the
server's clock) in the session's TimeZone.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import psycopg

from . import datetime_input, handout, interval_input
from .encodings import (
    Encoding,
    RoundedEncoding,
    SqlType,
    _fraction_text,
    _offset_text,
    _round_to,
    _type_error,
    current_session,
)
from .errors import EncodingError, InvalidDatetimeInput

_US = interval_input.US_PER_SECOND
_DAY = interval_input.US_PER_DAY


@dataclass(frozen=True, slots=True)
class PgInterval:
    """An interval as PostgreSQL stores it."""

    months: int
    days: int
    usec: int

    @property
    def span(self) -> int:
        """interval_cmp's linear value: microseconds, a month 30 days, a day 24 hours."""
        return (self.months * 30 + self.days) * _DAY + self.usec


@lru_cache(maxsize=2)
def _loader(oid: int) -> Any:
    return psycopg.adapters.get_loader(oid, psycopg.pq.Format.TEXT)(oid, None)  # type: ignore[misc]


def interval_text(v: PgInterval) -> str:
    """The interval as PostgreSQL prints it under IntervalStyle postgres."""
    years, months = _cdiv(v.months, 12), v.months - 12 * _cdiv(v.months, 12)
    out: list[str] = []
    before = False
    for value, unit in ((years, "year"), (months, "mon"), (v.days, "day")):
        if value:
            sign = "+" if before and value > 0 else ""
            out.append(f"{sign}{value} {unit}{'' if value == 1 else 's'}")
            before = value < 0
    usec = v.usec
    if not out or usec:
        hours, rest = _cdiv(usec, 3_600_000_000), abs(usec) % 3_600_000_000
        minutes, rest = divmod(rest, 60_000_000)
        seconds, micro = divmod(rest, _US)
        sign = "-" if usec < 0 else "+" if before else ""
        clock = f"{sign}{abs(hours):02d}:{minutes:02d}:{seconds:02d}{_fraction_text(micro)}"
        out.append(clock)
    return " ".join(out)


def _cdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def interval_value(v: PgInterval) -> dt.timedelta:
    """The interval as psycopg 3 loads it (its ``DataError`` where it cannot)."""
    return _loader(1186).load(interval_text(v).encode())


def _span_value(span: int) -> dt.timedelta:
    try:
        return dt.timedelta(microseconds=span)
    except OverflowError:
        raise psycopg.DataError(f"can't parse interval: {span} microseconds") from None


def _session_interval_style() -> bool:
    """Whether the session's IntervalStyle is sql_standard (a leading '-' applies to
    every field of an input)."""
    from .defaults import RUNTIME

    conn = getattr(RUNTIME.get(), "conn", None)
    if conn is None or conn.closed:
        return False
    return conn.pgconn.parameter_status(b"IntervalStyle") == b"sql_standard"


class IntervalEncoding(Encoding):
    """interval, interval(p), interval with a field restriction (see the module)."""

    ope_bits = 74
    exact_display = True  # '1 day' = '24 hours', but each prints as written
    _OFFSET = 1 << 73

    def __init__(self, sql_type: SqlType) -> None:
        super().__init__(sql_type)
        fields = sql_type.fields
        self.range = interval_input.RANGES[fields] if fields else interval_input.FULL_RANGE
        self.precision = sql_type.precision

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        v = self._read(value, self.range)
        return PgInterval(
            *interval_input.restrict((v.months, v.days, v.usec), self.range, self.precision)
        )

    def comparand(self, value: Any) -> Any:
        # (a constant compared with the column is an interval of its own: all fields)
        return None if value is None else self._read(value, interval_input.FULL_RANGE)

    def _read(self, value: Any, rng: int) -> PgInterval:
        if isinstance(value, PgInterval):
            return value
        if isinstance(value, dt.timedelta):
            return PgInterval(0, value.days, value.seconds * _US + value.microseconds)
        if isinstance(value, str):
            return PgInterval(*interval_input.parse(value, rng, _session_interval_style()))
        raise _type_error(self.sql_type, value)

    @staticmethod
    def _span(v: Any) -> int:
        if isinstance(v, PgInterval):
            return v.span
        if isinstance(v, dt.timedelta):
            return (v.days * 86_400 + v.seconds) * _US + v.microseconds
        raise EncodingError(f"not an interval: {type(v).__name__}")

    def to_bytes(self, v: Any) -> bytes:
        return self._span(v).to_bytes(16, "big", signed=True)

    def from_bytes(self, b: bytes) -> dt.timedelta:
        if len(b) != 16:
            raise self._bad("encoding")
        return _span_value(int.from_bytes(b, "big", signed=True))

    def to_exact_bytes(self, v: Any) -> bytes:
        if not isinstance(v, PgInterval):
            v = self._read(v, interval_input.FULL_RANGE)
        return (
            v.months.to_bytes(4, "big", signed=True)
            + v.days.to_bytes(4, "big", signed=True)
            + v.usec.to_bytes(8, "big", signed=True)
        )

    def from_exact_bytes(self, b: bytes) -> dt.timedelta:
        if len(b) != 16:
            raise self._bad("encoding")
        months = int.from_bytes(b[:4], "big", signed=True)
        days = int.from_bytes(b[4:8], "big", signed=True)
        usec = int.from_bytes(b[8:], "big", signed=True)
        return interval_value(PgInterval(months, days, usec))

    def to_ope(self, v: Any) -> int:
        return self._span(v) + self._OFFSET

    def from_ope(self, i: int) -> dt.timedelta:
        if not 0 <= i < 2 * self._OFFSET:
            raise self._bad("order encoding")
        return _span_value(i - self._OFFSET)

    def order_key(self, v: Any) -> int:
        return self._span(v)


@dataclass(frozen=True, slots=True)
class PgTimetz:
    """A timetz as PostgreSQL stores it: microseconds since midnight (to 24:00:00) and
    the zone's offset, in seconds east of UTC."""

    usec: int
    east: int

    @property
    def key(self) -> int:
        """timetz_cmp's order: the UTC time, then the zone west of UTC."""
        west = -self.east
        utc = self.usec + west * _US
        return (utc + _MAX_ZONE * _US) * _ZONES + (west + _MAX_ZONE)


_MAX_ZONE = 15 * 3600 + 59 * 60 + 59  # ±15:59:59, PostgreSQL's limit on a displacement
_ZONES = 2 * _MAX_ZONE + 1
_UTC_SPAN = _DAY + 2 * _MAX_ZONE * _US + 1


def timetz_text(v: PgTimetz) -> str:
    """The value as PostgreSQL prints it (``04:05:06.5+05:30``)."""
    s, micro = divmod(v.usec, _US)
    m, s = divmod(s, 60)
    h, m = divmod(m, 60)
    return f"{h:02d}:{m:02d}:{s:02d}{_fraction_text(micro)}" + _offset_text(
        dt.timedelta(seconds=v.east)
    )


class TimetzEncoding(RoundedEncoding):
    """timetz(p): see the module."""

    ope_bits = 55  # _UTC_SPAN * _ZONES < 2**55

    def _checked(self, value: Any, precision: int) -> Any:
        if value is None:
            return None
        if isinstance(value, PgTimetz):
            v = value
        elif isinstance(value, dt.time):
            v = self._of_time(value)
        elif isinstance(value, str):
            v = self._parse(value)
        else:
            raise _type_error(self.sql_type, value)
        if precision < 6:
            v = PgTimetz(_round_to(v.usec, precision), v.east)
        return v

    @staticmethod
    def _clock(t: dt.time) -> int:
        return ((t.hour * 60 + t.minute) * 60 + t.second) * _US + t.microsecond

    def _of_time(self, t: dt.time) -> PgTimetz:
        offset = t.utcoffset()
        usec = self._clock(t)
        if offset is None:  # a time without zone: the session's zone today
            f = datetime_input.Fields(hour=t.hour, minute=t.minute, second=t.second)
            return PgTimetz(usec, self._offset_today(f, None))
        return PgTimetz(usec, int(offset.total_seconds()))

    @staticmethod
    def _offset_today(f: datetime_input.Fields, zone: dt.tzinfo | None) -> int:
        """The offset of ``zone`` (the session's if None) at the fields' time of day on
        the current date (PostgreSQL's GetCurrentDateTime, in the session's zone)."""
        session = current_session()
        z = zone if zone is not None else session.zone
        fixed = _fixed_offset(z)
        if fixed is not None and f.abbrev is None:
            return fixed
        today = session.now().date()
        g = datetime_input.Fields(
            today.year, today.month, today.day, min(f.hour, 23), f.minute, f.second,
            zone=f.zone, abbrev=f.abbrev,
        )  # fmt: skip
        return g.offset_at(z)

    def _parse(self, text: str) -> PgTimetz:
        f = datetime_input.parse(text, "timetz", current_session())
        if f.special is not None:
            raise InvalidDatetimeInput(
                f'invalid input syntax for type time with time zone: "{text}"'
            )
        usec = ((f.hour * 60 + f.minute) * 60 + f.second) * _US + f.micro
        if f.offset is not None:
            east = f.offset
        elif f.zone is not None and f.abbrev is None:
            fixed = _fixed_offset(f.zone)
            if fixed is not None:
                east = fixed
            elif not f.has_date:  # a zone with daylight saving time needs a date
                raise InvalidDatetimeInput(
                    f'invalid input syntax for type time with time zone: "{text}"'
                )
            else:
                east = f.offset_at(f.zone)
        elif f.has_date:
            east = f.offset_at(f.zone or current_session().zone)
        else:
            east = self._offset_today(f, f.zone)
        return PgTimetz(usec, east)

    def _of(self, v: Any) -> PgTimetz:
        if isinstance(v, PgTimetz):
            return v
        if isinstance(v, dt.time):
            return self._of_time(v)
        raise EncodingError(f"not a timetz: {type(v).__name__}")

    def to_bytes(self, v: Any) -> bytes:
        return self._of(v).key.to_bytes(7, "big")

    def from_bytes(self, b: bytes) -> dt.time:
        if len(b) != 7:
            raise self._bad("encoding")
        return self.from_ope(int.from_bytes(b, "big"))

    def to_ope(self, v: Any) -> int:
        return self._of(v).key

    def from_ope(self, i: int) -> dt.time:
        if not 0 <= i < _UTC_SPAN * _ZONES:
            raise self._bad("order encoding")
        utc, west = divmod(i, _ZONES)
        west -= _MAX_ZONE
        usec = utc - _MAX_ZONE * _US - west * _US
        if not 0 <= usec <= _DAY:
            raise self._bad("order encoding")
        return _loader(1266).load(timetz_text(PgTimetz(usec, -west)).encode())

    def order_key(self, v: Any) -> int:
        return self._of(v).key


def _fixed_offset(zone: dt.tzinfo) -> int | None:
    """The offset of a zone that has only one (UTC, ``Etc/GMT+5``, a numeric zone), else
    None."""
    if isinstance(zone, dt.timezone):
        off = zone.utcoffset(None)
        return int(off.total_seconds())
    key = getattr(zone, "key", None)
    if key is None:
        return None
    return _zone_fixed(key)


@lru_cache(maxsize=64)
def _zone_fixed(key: str) -> int | None:
    """Whether a tz database zone has a single offset through its whole history (a
    zone with daylight saving time, or with an offset change, has several)."""
    import zoneinfo

    zone = zoneinfo.ZoneInfo(key)
    offsets = set()
    for year in range(1800, 2040, 1):
        for month in (1, 7):
            off = dt.datetime(year, month, 1, tzinfo=zone).utcoffset()
            offsets.add(off)
            if len(offsets) > 1:
                return None
    (only,) = offsets
    return int(only.total_seconds()) if only is not None else None


ENCODINGS: dict[str, type[Encoding]] = {"interval": IntervalEncoding, "timetz": TimetzEncoding}


def timetz_value(v: PgTimetz) -> dt.time:
    """The timetz as psycopg loads it (a time with a fixed-offset zone)."""
    return _TIMETZ.from_ope(v.key)


_TIMETZ = TimetzEncoding(SqlType("timetz"))
handout.register(PgInterval, interval_value, 1186)
handout.register(PgTimetz, timetz_value, 1266)
