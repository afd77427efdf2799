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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import psycopg

from ..errors import EncodingError, InvalidDatetimeInput
from . import datetime_input, handout, interval_input, text_output
from .datetime_output import fraction_text, offset_text
from .encoding_base import (
    REGISTERED,
    TEXT_FORMATS,
    Encoding,
    RoundedEncoding,
    SqlType,
    round_to,
    type_error,
)
from .session import connection, input_session

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


def interval_text(v: PgInterval, style: str = "postgres") -> str:
    """The interval as PostgreSQL prints it under IntervalStyle ``style``
    (``postgres``, ``postgres_verbose``, ``sql_standard``, ``iso_8601``): interval_out's
    fields (years and months of the months, the days, hours, minutes, seconds and
    microseconds of the time, each with the sign of what it came from)."""
    years, months = _cdiv(v.months, 12), v.months - 12 * _cdiv(v.months, 12)
    hours = _cdiv(v.usec, 3_600_000_000)
    rest = v.usec - hours * 3_600_000_000
    minutes = _cdiv(rest, 60_000_000)
    rest -= minutes * 60_000_000
    seconds = _cdiv(rest, _US)
    fields = (years, months, v.days, hours, minutes, seconds, rest - seconds * _US)
    return _STYLES.get(style.lower(), _postgres)(*fields)


def _seconds(sec: int, fsec: int, zero_filled: bool) -> str:
    """AppendSeconds: the absolute seconds, the fraction without trailing zeros."""
    whole = f"{abs(sec):02d}" if zero_filled else str(abs(sec))
    return whole + fraction_text(abs(fsec))


def _postgres(year: int, mon: int, mday: int, hour: int, mins: int, sec: int, fsec: int) -> str:
    out: list[str] = []
    before = False
    for value, unit in ((year, "year"), (mon, "mon"), (mday, "day")):
        if value:
            sign = "+" if before and value > 0 else ""
            out.append(f"{sign}{value} {unit}{'' if value == 1 else 's'}")
            before = value < 0  # (each field sets it for the next one only)
    if not out or hour or mins or sec or fsec:
        minus = hour < 0 or mins < 0 or sec < 0 or fsec < 0
        sign = "-" if minus else "+" if before else ""
        out.append(f"{sign}{abs(hour):02d}:{abs(mins):02d}:{_seconds(sec, fsec, True)}")
    return " ".join(out)


def _verbose(year: int, mon: int, mday: int, hour: int, mins: int, sec: int, fsec: int) -> str:
    out = "@"
    zero, before = True, False
    for value, unit in ((year, "year"), (mon, "mon"), (mday, "day"), (hour, "hour"),
                        (mins, "min")):  # fmt: skip
        if not value:
            continue
        if zero:  # (the first field says whether the interval is "ago")
            before, value = value < 0, abs(value)
        elif before:
            value = -value
        out += f" {value} {unit}{'' if value == 1 else 's'}"
        zero = False
    if sec or fsec:
        out += " "
        if sec < 0 or (sec == 0 and fsec < 0):
            if zero:
                before = True
            elif not before:
                out += "-"
        elif before:
            out += "-"
        plural = "s" if abs(sec) != 1 or fsec else ""
        out += f"{_seconds(sec, fsec, False)} sec{plural}"
        zero = False
    if zero:
        out += " 0"
    return out + (" ago" if before else "")


def _sql_standard(year: int, mon: int, mday: int, hour: int, mins: int, sec: int, fsec: int) -> str:
    fields = (year, mon, mday, hour, mins, sec, fsec)
    negative, positive = any(f < 0 for f in fields), any(f > 0 for f in fields)
    year_month, day_time = bool(year or mon), bool(mday or hour or mins or sec or fsec)
    standard = not (negative and positive) and not (year_month and day_time)
    lead = ""
    if negative and standard:  # one sign before the whole interval
        lead = "-"
        year, mon, mday, hour, mins, sec, fsec = (-f for f in fields)
    if not negative and not positive:
        return "0"
    if not standard:  # every part signed, to be read back unambiguously
        ym = "-" if year < 0 or mon < 0 else "+"
        ds = "-" if mday < 0 else "+"
        ts = "-" if hour < 0 or mins < 0 or sec < 0 or fsec < 0 else "+"
        return (
            f"{ym}{abs(year)}-{abs(mon)} {ds}{abs(mday)} {ts}{abs(hour)}:{abs(mins):02d}:"
            + _seconds(sec, fsec, True)
        )
    if year_month:
        return f"{lead}{year}-{mon}"
    clock = f"{hour}:{abs(mins):02d}:{_seconds(sec, fsec, True)}"
    return f"{lead}{mday} {clock}" if mday else lead + clock


def _iso_8601(year: int, mon: int, mday: int, hour: int, mins: int, sec: int, fsec: int) -> str:
    if not (year or mon or mday or hour or mins or sec or fsec):
        return "PT0S"
    out = "P" + "".join(f"{v}{u}" for v, u in ((year, "Y"), (mon, "M"), (mday, "D")) if v)
    if hour or mins or sec or fsec:
        out += "T" + "".join(f"{v}{u}" for v, u in ((hour, "H"), (mins, "M")) if v)
    if sec or fsec:
        out += ("-" if sec < 0 or fsec < 0 else "") + _seconds(sec, fsec, False) + "S"
    return out


_STYLES: dict[str, Callable[..., str]] = {
    "postgres": _postgres,
    "postgres_verbose": _verbose,
    "sql_standard": _sql_standard,
    "iso_8601": _iso_8601,
}


# While set (COPY ... TO prints what the columns hold), an interval's Exact onion reads
# as the fields it was written with, a PgInterval ('1 year 2 mons' stays that, where
# the application's timedelta has 425 days)
AS_WRITTEN: ContextVar[bool] = ContextVar("interval_as_written", default=False)


@contextmanager
def intervals_as_written() -> Iterator[None]:
    """Within it, intervals are read as the fields they were written with
    (:data:`AS_WRITTEN`)."""
    token = AS_WRITTEN.set(True)
    try:
        yield
    finally:
        AS_WRITTEN.reset(token)


TEXT_FORMATS[PgInterval] = lambda v: interval_text(v, text_output.current().intervalstyle)


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
    conn = connection()
    if conn is None:
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
        if isinstance(value, dt.time) and value.tzinfo is None:
            # PostgreSQL's implicit cast of a time: the interval since midnight
            clock = (value.hour * 60 + value.minute) * 60 + value.second
            return PgInterval(0, 0, clock * _US + value.microsecond)
        raise type_error(self.sql_type, value)

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

    def from_exact_bytes(self, b: bytes) -> dt.timedelta | PgInterval:
        if len(b) != 16:
            raise self._bad("encoding")
        months = int.from_bytes(b[:4], "big", signed=True)
        days = int.from_bytes(b[4:8], "big", signed=True)
        usec = int.from_bytes(b[8:], "big", signed=True)
        fields = PgInterval(months, days, usec)
        return fields if AS_WRITTEN.get() else interval_value(fields)

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
    return f"{h:02d}:{m:02d}:{s:02d}{fraction_text(micro)}" + offset_text(
        dt.timedelta(seconds=v.east)
    )


TEXT_FORMATS[PgTimetz] = timetz_text


class TimetzEncoding(RoundedEncoding):
    """timetz(p): see the module."""

    ope_bits = 55  # _UTC_SPAN * _ZONES < 2**55
    keyed_order = True  # (a PgTimetz has no Python order: ordered by order_key)

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
            raise type_error(self.sql_type, value)
        if precision < 6:
            v = PgTimetz(round_to(v.usec, precision), v.east)
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
        session = input_session()
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
        f = datetime_input.parse(text, "timetz", input_session())
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
            east = f.offset_at(f.zone or input_session().zone)
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

    def from_bytes(self, b: bytes) -> PgTimetz:
        if len(b) != 7:
            raise self._bad("encoding")
        return self.from_ope(int.from_bytes(b, "big"))

    def to_ope(self, v: Any) -> int:
        return self._of(v).key

    def from_ope(self, i: int) -> PgTimetz:
        if not 0 <= i < _UTC_SPAN * _ZONES:
            raise self._bad("order encoding")
        utc, west = divmod(i, _ZONES)
        west -= _MAX_ZONE
        usec = utc - _MAX_ZONE * _US - west * _US
        if not 0 <= usec <= _DAY:
            raise self._bad("order encoding")
        return PgTimetz(usec, -west)

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
REGISTERED.update(ENCODINGS)


def timetz_value(v: PgTimetz) -> dt.time:
    """The timetz as psycopg loads it (a time with a fixed-offset zone; psycopg's
    ``DataError`` for 24:00:00, which Python's time cannot hold)."""
    return _loader(1266).load(timetz_text(v).encode())


handout.register(PgInterval, interval_value, 1186)
handout.register(PgTimetz, timetz_value, 1266)
