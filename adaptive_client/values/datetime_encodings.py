"""The encodings of date, timestamp(p), timestamptz(p) and time(p) (see the table in
``encodings``), and the infinities a date or timestamp column holds.

Dates are Julian days, timestamps microseconds since 4714-11-24 BC, over PostgreSQL's
whole range, ``-infinity`` at 0 and ``infinity`` at the top of the Ord onion's domain
(:class:`Infinite`); ``time`` goes to ``24:00:00``.  Values Python's ``datetime``
cannot hold take the forms of ``far_datetime``.  A date or timestamp column made
before the full range (``SqlType.python_years``) keeps the encoding it was made with
(``PythonDateEncoding``, ``PythonTimestampEncoding``).  Strings are read by
PostgreSQL's rules (``datetime_input``) in the session's DateStyle and TimeZone
(``session``); ISO strings and Python values take a fast path.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from ..errors import DatetimeOutOfRange, EncodingError, InvalidDatetimeInput, ValueOutOfDomain
from . import datetime_input, far_datetime, handout
from .clock import SessionTimestamp
from .encoding_base import (
    NATIVE_DATE,
    NATIVE_TIMESTAMP,
    NO_NATIVE_FORM,
    REGISTERED,
    TEXT_FORMATS,
    Encoding,
    NativeForm,
    RoundedEncoding,
    SqlType,
    round_to,
    type_error,
)
from .session import input_session, time_zone

_EPOCH_TS = dt.datetime(1, 1, 1)


class Infinite:
    """``infinity`` or ``-infinity`` of a date or timestamp column: the value PostgreSQL
    stores past every date.  Returned where the column holds it (psycopg's loaders raise
    ``DataError`` on these: Python's dates end at 9999-12-31); ``str`` prints it as
    PostgreSQL does.  Ordered below / above every date and timestamp by ``order_key``."""

    __slots__ = ("sign",)

    def __init__(self, sign: int) -> None:
        self.sign = sign

    def __repr__(self) -> str:
        return "infinity" if self.sign > 0 else "-infinity"

    __str__ = __repr__

    def __reduce__(self) -> str:
        return "INFINITY" if self.sign > 0 else "NEG_INFINITY"


INFINITY = Infinite(1)
NEG_INFINITY = Infinite(-1)
_INFINITE_TYPE_NAMES = {1082: "date", 1114: "timestamp", 1184: "timestamp"}


def _infinite_value(v: Infinite, oid: int) -> Any:
    """What the session's loader gives the application for an infinite date or
    timestamp: by default psycopg's DataError (Python's dates end at years 1 and 9999),
    an application's own loader's value where it registered one."""
    return far_datetime.loaded(oid, lambda: "infinity" if v.sign > 0 else "-infinity")


handout.register_typed(Infinite, _infinite_value, *_INFINITE_TYPE_NAMES)
_INFINITE_BYTES = {INFINITY: b"infinity", NEG_INFINITY: b"-infinity"}
_BYTES_INFINITE = {v: k for k, v in _INFINITE_BYTES.items()}
_EPOCH_DATE = dt.date(1970, 1, 1)
_ISO_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_ISO_TIMESTAMP_RE = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[ T][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,6})?)?)?"
)
_ISO_ZONED_RE = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,6})?)?"
    r"(?:Z|[+-][0-9]{2}(?::?[0-9]{2})?)?"
)
_MAX_DISPLACEMENT = dt.timedelta(hours=15, minutes=59, seconds=59)
_ISO_TIME_RE = re.compile(r"[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,6})?)?")
_ONE_US = dt.timedelta(microseconds=1)
_PG_EPOCH = dt.datetime(2000, 1, 1)
# the first Julian day PostgreSQL's dates hold (4714-11-24 BC) and the day after the last
_JULIAN_MIN = 0
_DATE_END_JULIAN = 2147483494


def _infinite_key(v: Any) -> Any:
    """An order key: -infinity < every date or timestamp < infinity."""
    if type(v) is Infinite:
        return (v.sign, 0)
    return (0, v)


def _out_of_range(what: str, text: str) -> DatetimeOutOfRange:
    return DatetimeOutOfRange(f'{what} out of range: "{text}"')


def _beyond_python(what: str, text: str) -> ValueOutOfDomain:
    return ValueOutOfDomain(
        f"{what} {text!r}: an encrypted {what} column holds 0001-01-01 to 9999-12-31 and "
        "±infinity (the years Python's datetime has)"
    )


def _parsed_fields(text: str, kind: str) -> Any:
    """A date/time string as PostgreSQL's input function for ``kind`` reads it: its
    fields (``epoch`` as 1970-01-01 00:00 UTC), or INFINITY | NEG_INFINITY."""
    f = datetime_input.parse(text, kind, input_session())
    if f.special == "epoch":
        return datetime_input.Fields(1970, 1, 1, offset=0, has_date=True)
    if f.special is not None:
        return INFINITY if f.special == "infinity" else NEG_INFINITY
    return f


def _valid_julian(y: int, m: int) -> bool:
    """PostgreSQL's IS_VALID_JULIAN: from November 4714 BC to May 5874898."""
    return (y > -4713 or (y == -4713 and m >= 11)) and (y < 5874898 or (y == 5874898 and m < 6))


def _parsed_date(text: str) -> Any:
    """A date string as date_in reads it: a date, a PgDate or an infinity."""
    f = _parsed_fields(text, "date")
    if type(f) is Infinite:
        return f
    julian = datetime_input.date2j(f.year, f.month, f.day)
    if not _JULIAN_MIN <= julian < _DATE_END_JULIAN:
        raise _out_of_range("date", text)
    return far_datetime.date_of(julian)


def _local_micros(f: datetime_input.Fields) -> int:
    """The fields' local time in microseconds since 2000-01-01 00:00."""
    day = datetime_input.date2j(f.year, f.month, f.day) - far_datetime.POSTGRES_EPOCH_JDATE
    clock = ((f.hour * 60 + f.minute) * 60 + f.second) * 1_000_000 + f.micro
    return day * far_datetime.US_PER_DAY + clock


class DateEncoding(Encoding):
    """date: the Julian day plus one (0001-01-01 is 1721427), ``-infinity`` 0 and
    ``infinity`` 2**32 - 1, over PostgreSQL's whole range (4714-11-24 BC to
    5874897-12-31); DET: those 4 bytes.  Values are ``date`` where Python has them, else
    ``far_datetime.PgDate``."""

    ope_bits = 32
    keyed_order = True  # (a PgDate and an infinity among dates: ordered by to_ope)
    _TOP = 2**32 - 1

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        return self._held(self._value_of(value))

    def _value_of(self, value: Any) -> Any:
        if isinstance(value, SessionTimestamp):
            return value.date()  # now() assigned to a date: the session's local date
        if isinstance(value, dt.datetime):
            # assigned to a date, a timestamp is truncated to its date -- a timestamptz
            # first placed in the session's time zone -- as PostgreSQL's casts do
            if value.tzinfo is not None:
                value = value.astimezone(time_zone())
            return value.date()
        if isinstance(value, dt.date):
            return value
        if isinstance(value, str):
            if _ISO_DATE_RE.fullmatch(value):
                try:
                    return dt.date.fromisoformat(value)
                except ValueError:
                    pass  # (the input rules say which error)
            return _parsed_date(value)
        if type(value) is Infinite or type(value) is far_datetime.PgDate:
            return value
        raise type_error(self.sql_type, value)

    def _held(self, v: Any) -> Any:
        """``v`` if the column holds it (every date PostgreSQL has)."""
        return v

    def to_bytes(self, v: Any) -> bytes:
        return self.to_ope(v).to_bytes(4, "big")

    def from_bytes(self, b: bytes) -> Any:
        if len(b) != 4:
            raise self._bad("encoding")
        return self.from_ope(int.from_bytes(b, "big"))

    def native_form(self) -> NativeForm:
        return (NATIVE_DATE, 0, 0, 0)

    def to_ope(self, v: Any) -> int:
        if type(v) is Infinite:
            return 0 if v.sign < 0 else self._TOP
        julian = far_datetime.julian_of(v)
        if julian is None:
            raise EncodingError(f"not a date: {type(v).__name__}")
        return julian + 1

    def from_ope(self, i: int) -> Any:
        if i == 0 or i == self._TOP:
            return NEG_INFINITY if i == 0 else INFINITY
        if not 1 <= i <= _DATE_END_JULIAN:
            raise self._bad("encoding")
        return far_datetime.date_of(i - 1)

    def order_key(self, v: Any) -> Any:
        return self.to_ope(v)


class PythonDateEncoding(DateEncoding):
    """date, a column made before dates held PostgreSQL's whole range
    (``SqlType.python_years``): the proleptic Gregorian day number
    (``date.toordinal``), ``-infinity`` 0 and ``infinity`` 2**32 - 1; DET: the number's
    4 bytes, the infinities as the words.  It holds 0001-01-01 to 9999-12-31 and the
    infinities (``ValueOutOfDomain`` for a BC date or a year past 9999)."""

    keyed_order = False
    _MAX = dt.date.max.toordinal()

    def _held(self, v: Any) -> Any:
        if type(v) is far_datetime.PgDate:
            raise _beyond_python("date", far_datetime.date_text(v.julian, "ISO"))
        return v

    def to_bytes(self, v: Any) -> bytes:
        if type(v) is Infinite:
            return _INFINITE_BYTES[v]
        return self._held(v).toordinal().to_bytes(4, "big")

    def from_bytes(self, b: bytes) -> Any:
        if len(b) != 4:
            inf = _BYTES_INFINITE.get(bytes(b))
            if inf is None:
                raise self._bad("encoding")
            return inf
        i = int.from_bytes(b, "big")
        if not 1 <= i <= self._MAX:
            raise self._bad("encoding")
        return dt.date.fromordinal(i)

    def native_form(self) -> NativeForm:
        return NO_NATIVE_FORM  # (day numbers, not Julian days)

    def to_ope(self, v: Any) -> int:
        if type(v) is Infinite:
            return 0 if v.sign < 0 else self._TOP
        return self._held(v).toordinal()

    def from_ope(self, i: int) -> Any:
        if i == 0 or i == self._TOP:
            return NEG_INFINITY if i == 0 else INFINITY
        if not 1 <= i <= self._MAX:
            raise self._bad("encoding")
        return dt.date.fromordinal(i)

    def order_key(self, v: Any) -> Any:
        return _infinite_key(v)


class TimestampEncoding(Encoding):
    """timestamp(p) and timestamptz(p): microseconds since 4714-11-24 BC 00:00 (Julian day
    0; timestamptz: UTC, the instant) plus one, ``-infinity`` 0 and ``infinity``
    2**64 - 1, over PostgreSQL's whole range (to 294276-12-31 23:59:59.999999: below
    2**63.04); DET: those 8 bytes.

    Values: naive datetimes (timestamp), aware ones in the session's TimeZone
    (timestamptz, as psycopg loads them), ``far_datetime.PgTimestamp`` where Python's
    years end; input strings as PostgreSQL reads them (``datetime_input``): into a
    timestamp a zone is ignored, into a timestamptz it places the instant (naive
    input: the session's TimeZone).  ``timestamp(p)`` rounds to ``p`` fractional
    digits."""

    ope_bits = 64
    keyed_order = True  # (a PgTimestamp and an infinity among datetimes: by to_ope)
    _TOP = 2**64 - 1
    _SPAN = far_datetime.END_TIMESTAMP - far_datetime.MIN_TIMESTAMP

    def __init__(self, sql_type: SqlType) -> None:
        super().__init__(sql_type)
        self.zoned = sql_type.name == "timestamptz"
        p = sql_type.precision
        self.precision = 6 if p is None else p
        self._kind = "timestamptz" if self.zoned else "timestamp"

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        return self._checked(self._value_of(value), self.precision)

    def comparand(self, value: Any) -> Any:
        return self._checked(self._value_of(value), 6) if value is not None else None

    def _value_of(self, value: Any) -> Any:
        if isinstance(value, str):
            return self._from_text(value)
        if isinstance(value, dt.datetime):
            return self._from_datetime(value)
        if isinstance(value, dt.date):
            v = dt.datetime(value.year, value.month, value.day)
            return self._localize(v, time_zone()) if self.zoned else v
        if type(value) is Infinite:
            return value
        if type(value) is far_datetime.PgTimestamp:
            return self._from_far(value)
        if type(value) is far_datetime.PgDate:
            local = (value.julian - far_datetime.POSTGRES_EPOCH_JDATE) * far_datetime.US_PER_DAY
            return self._from_far(far_datetime.PgTimestamp(local, False))
        raise type_error(self.sql_type, value)

    def _from_far(self, v: far_datetime.PgTimestamp) -> Any:
        """A PgTimestamp in this column's kind: a timestamp's local time placed in the
        session's TimeZone, or a timestamptz's instant read there."""
        micros = v.micros
        if v.zoned and not self.zoned:
            micros += far_datetime.zone_offset_at(micros, time_zone()) * 1_000_000
        elif self.zoned and not v.zoned:
            f = far_datetime.fields_of(micros)
            micros -= f.offset_at(time_zone()) * 1_000_000
        if not far_datetime.MIN_TIMESTAMP <= micros < far_datetime.END_TIMESTAMP:
            raise DatetimeOutOfRange("timestamp out of range")
        return self._value(micros)

    def _checked(self, v: Any, precision: int) -> Any:
        if type(v) is not Infinite and precision < 6:
            v = self._rounded(v)
        return self._held(v)

    def _held(self, v: Any) -> Any:
        """``v`` if the column holds it (every timestamp PostgreSQL has)."""
        return v

    def _from_datetime(self, value: dt.datetime) -> dt.datetime:
        if isinstance(value, SessionTimestamp):
            if self.zoned:
                return value
            # now() assigned to a timestamp: the session's local time, as PostgreSQL
            return dt.datetime.combine(value.date(), value.time())
        if self.zoned:
            if value.tzinfo is None:
                return self._localize(value, time_zone())
            return value.astimezone(time_zone())
        if value.tzinfo is not None:
            # a timestamptz assigned to a timestamp: the session's local time
            return value.astimezone(time_zone()).replace(tzinfo=None)
        return value

    def _from_text(self, text: str) -> Any:
        if not self.zoned and _ISO_TIMESTAMP_RE.fullmatch(text):
            try:
                return dt.datetime.fromisoformat(text)
            except ValueError:
                pass  # (the input rules say which error)
        elif self.zoned and _ISO_ZONED_RE.fullmatch(text):
            try:
                v = dt.datetime.fromisoformat(text)
            except ValueError:
                v = None  # (the input rules say which error)
            written = v.utcoffset() if v is not None else None
            if v is not None and (written is None or abs(written) <= _MAX_DISPLACEMENT):
                zone = time_zone()
                try:
                    return self._localize(v, zone) if written is None else v.astimezone(zone)
                except OverflowError:
                    pass  # (the instant beyond Python's years: the input rules place it)
        f = _parsed_fields(text, self._kind)
        if type(f) is Infinite:
            return f
        if not _valid_julian(f.year, f.month):
            raise _out_of_range("timestamp", text)
        micros = _local_micros(f)
        if self.zoned:
            micros -= f.offset_at(time_zone()) * 1_000_000
        if not far_datetime.MIN_TIMESTAMP <= micros < far_datetime.END_TIMESTAMP:
            raise _out_of_range("timestamp", text)
        return self._value(micros)

    @staticmethod
    def _localize(v: dt.datetime, zone: dt.tzinfo) -> Any:
        """A naive local time in ``zone`` as PostgreSQL places it (a skipped time takes
        the offset before the change, a repeated one the later offset)."""
        f = datetime_input.Fields(v.year, v.month, v.day, v.hour, v.minute, zone=zone)
        utc = v - dt.timedelta(seconds=f.offset_at(zone))
        try:
            return utc.replace(tzinfo=dt.UTC).astimezone(zone)
        except OverflowError:  # (the local time of the instant is past 9999)
            micros = (utc - _PG_EPOCH) // _ONE_US
            return far_datetime.PgTimestamp(micros, True)

    def _rounded(self, v: Any) -> Any:
        micros = self._micros(v)
        rounded = round_to(micros, self.precision)
        # (PostgreSQL 15 checks no range after rounding: 294276-12-31 23:59:59.999999
        # is stored in a timestamp(2) as 294277-01-01 00:00:00, which the domain holds)
        return v if rounded == micros else self._value(rounded)

    def _micros(self, v: Any) -> int:
        """Microseconds since 2000-01-01 00:00 (timestamptz: UTC)."""
        if type(v) is far_datetime.PgTimestamp:
            if v.zoned != self.zoned:
                raise EncodingError(f"not a {self._kind}: {v!r}")
            return v.micros
        if not isinstance(v, dt.datetime):
            raise EncodingError(f"not a {self._kind}: {type(v).__name__}")
        if v.tzinfo is not None:
            if not self.zoned:
                raise EncodingError("timestamp (without time zone) takes naive datetimes")
            v = v.astimezone(dt.UTC).replace(tzinfo=None)
        elif self.zoned:
            raise EncodingError("timestamptz takes aware datetimes")
        return (v - _PG_EPOCH) // _ONE_US

    def _value(self, micros: int) -> Any:
        return far_datetime.timestamp_of(micros, time_zone() if self.zoned else None)

    def to_bytes(self, v: Any) -> bytes:
        return self.to_ope(v).to_bytes(8, "big")

    def from_bytes(self, b: bytes) -> Any:
        if len(b) != 8:
            raise self._bad("encoding")
        return self.from_ope(int.from_bytes(b, "big"))

    def native_form(self) -> NativeForm:
        # (a timestamptz's value is placed in the session's time zone: the Python path's)
        if self.zoned:
            return NO_NATIVE_FORM
        return (NATIVE_TIMESTAMP, 8, 0, 1 - far_datetime.MIN_TIMESTAMP)

    def to_ope(self, v: Any) -> int:
        if type(v) is Infinite:
            return 0 if v.sign < 0 else self._TOP
        return self._micros(v) - far_datetime.MIN_TIMESTAMP + 1

    def from_ope(self, i: int) -> Any:
        if i == 0 or i == self._TOP:
            return NEG_INFINITY if i == 0 else INFINITY
        if not 1 <= i <= self._SPAN + 1_000_000:  # (a rounded value, just past the end)
            raise self._bad("encoding")
        return self._value(i - 1 + far_datetime.MIN_TIMESTAMP)

    def order_key(self, v: Any) -> Any:
        return self.to_ope(v)


class PythonTimestampEncoding(TimestampEncoding):
    """timestamp(p) and timestamptz(p), a column made before timestamps held
    PostgreSQL's whole range (``SqlType.python_years``): microseconds since 0001-01-01
    00:00 (timestamptz: UTC).  DET: those 8 bytes (infinities: the words); OPE: the same
    number, plus one for all but ``timestamp`` / ``timestamp(6)`` (columns made before
    the infinities were stored), so that ``-infinity`` is 0; ``infinity`` is 2**64 - 1.
    It holds 0001-01-01 to 9999-12-31 and the infinities (a ``timestamp`` /
    ``timestamp(6)`` column: ``infinity`` only); ``ValueOutOfDomain`` for the rest."""

    keyed_order = False
    _MAX = (dt.datetime.max - _EPOCH_TS) // _ONE_US

    def __init__(self, sql_type: SqlType) -> None:
        super().__init__(sql_type)
        # (timestamp and timestamp(6) keep the order encoding they always had)
        self._shift = 0 if not self.zoned and self.precision == 6 else 1

    def _held(self, v: Any) -> Any:
        if type(v) is Infinite:
            if v.sign < 0 and not self._shift:
                raise ValueOutOfDomain(
                    f"-infinity: an encrypted {self.sql_type.sql()} column made as timestamp "
                    "or timestamp(6) holds 0001-01-01 to 9999-12-31 and infinity; declare "
                    "timestamp(0..5) or timestamptz for -infinity"
                )
            return v
        if type(v) is far_datetime.PgTimestamp:
            zone = time_zone() if self.zoned else None
            raise _beyond_python("timestamp", far_datetime.timestamp_text(v, "ISO", zone))
        return v

    def _old_micros(self, v: dt.datetime) -> int:
        self._held(v)
        return self._micros(v) - self._EPOCH_OFFSET

    _EPOCH_OFFSET = (_EPOCH_TS - _PG_EPOCH) // _ONE_US  # 0001-01-01 since 2000-01-01

    def _old_value(self, micros: int) -> dt.datetime:
        v = _EPOCH_TS + dt.timedelta(microseconds=micros)
        if self.zoned:
            return v.replace(tzinfo=dt.UTC).astimezone(time_zone())
        return v

    def to_bytes(self, v: Any) -> bytes:
        if type(v) is Infinite:
            return _INFINITE_BYTES[v]
        return self._old_micros(v).to_bytes(8, "big")

    def from_bytes(self, b: bytes) -> Any:
        # (b"infinity" is 8 bytes long too: the words first; as a number it lies past
        # 9999-12-31, so no timestamp's bytes are a word)
        inf = _BYTES_INFINITE.get(bytes(b))
        if inf is not None:
            return inf
        if len(b) != 8:
            raise self._bad("encoding")
        i = int.from_bytes(b, "big")
        if not 0 <= i <= self._MAX:
            raise self._bad("encoding")
        return self._old_value(i)

    def to_ope(self, v: Any) -> int:
        if type(v) is Infinite:
            self._held(v)
            return 0 if v.sign < 0 else self._TOP
        return self._old_micros(v) + self._shift

    def from_ope(self, i: int) -> Any:
        if i == self._TOP or (i == 0 and self._shift):
            return INFINITY if i else NEG_INFINITY
        i -= self._shift
        if not 0 <= i <= self._MAX:
            raise self._bad("encoding")
        return self._old_value(i)

    def order_key(self, v: Any) -> Any:
        return _infinite_key(v)


class TimeEncoding(RoundedEncoding):
    """time(p): microseconds since midnight, ``00:00`` to ``24:00:00`` (which PostgreSQL
    holds and Python's ``time`` does not: ``far_datetime.END_OF_DAY``, read back as
    psycopg reads it, a ``DataError``).  Values are ``datetime.time`` and END_OF_DAY.
    (Columns made when 24:00:00 was refused hold the same numbers below it.)"""

    ope_bits = 40  # 86_400_000_000 < 2**37
    keyed_order = True  # (END_OF_DAY among times: ordered by to_ope)

    def comparand(self, value: Any) -> Any:
        if isinstance(value, dt.datetime | dt.timedelta):
            raise type_error(self.sql_type, value)  # (compared: no operator, 42883)
        return super().comparand(value)

    def _checked(self, value: Any, precision: int) -> Any:
        if value is None:
            return None
        if isinstance(value, dt.time):
            if value.tzinfo is not None:
                value = value.replace(tzinfo=None)  # time takes the local time of day
            micros = self._of(value)
        elif isinstance(value, dt.datetime):
            # assigned, a timestamp's time of day (a timestamptz's in the session's zone)
            local = value.astimezone(time_zone()) if value.tzinfo is not None else value
            micros = self._of(local.time())
        elif isinstance(value, dt.timedelta):
            # assigned, an interval's time field (interval_time: its days and months are
            # not the time's), as psycopg sends it: the timedelta's seconds
            micros = value.seconds * 1_000_000 + value.microseconds
        elif isinstance(value, str):
            micros = self._parse(value)
        elif value is far_datetime.END_OF_DAY:
            micros = far_datetime.US_PER_DAY
        else:
            raise type_error(self.sql_type, value)
        if precision < 6:
            micros = round_to(micros, precision)
        return self._time(micros)

    @staticmethod
    def _of(v: Any) -> int:
        if v is far_datetime.END_OF_DAY:
            return far_datetime.US_PER_DAY
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond

    @staticmethod
    def _time(micros: int) -> Any:
        if micros >= far_datetime.US_PER_DAY:
            return far_datetime.END_OF_DAY
        s, us = divmod(micros, 1_000_000)
        m, s = divmod(s, 60)
        h, m = divmod(m, 60)
        return dt.time(h, m, s, us)

    def _parse(self, text: str) -> int:
        if _ISO_TIME_RE.fullmatch(text):
            try:
                return self._of(dt.time.fromisoformat(text))
            except ValueError:
                pass
        f = datetime_input.parse(text, "time", input_session())
        if f.special is not None:
            raise InvalidDatetimeInput(
                f'invalid input syntax for type time without time zone: "{text}"'
            )
        return ((f.hour * 60 + f.minute) * 60 + f.second) * 1_000_000 + f.micro

    def to_bytes(self, v: Any) -> bytes:
        return self._of(v).to_bytes(5, "big")

    def from_bytes(self, b: bytes) -> Any:
        if len(b) != 5:
            raise self._bad("encoding")
        return self.from_ope(int.from_bytes(b, "big"))

    def to_ope(self, v: Any) -> int:
        return self._of(v)

    def from_ope(self, i: int) -> Any:
        if not 0 <= i <= far_datetime.US_PER_DAY:
            raise self._bad("encoding")
        return self._time(i)

    def order_key(self, v: Any) -> Any:
        return self._of(v)


def date_encoding(t: SqlType) -> Encoding:
    """date: over PostgreSQL's whole range, or Python's years (a column made before)."""
    return PythonDateEncoding(t) if t.python_years else DateEncoding(t)


def timestamp_encoding(t: SqlType) -> Encoding:
    """timestamp(p), timestamptz(p): PostgreSQL's whole range, or Python's years."""
    return PythonTimestampEncoding(t) if t.python_years else TimestampEncoding(t)


REGISTERED.update(
    {
        "date": date_encoding,
        "timestamp": timestamp_encoding,
        "timestamptz": timestamp_encoding,
        "time": TimeEncoding,
    }
)
for _far in (far_datetime.PgDate, far_datetime.PgTimestamp, far_datetime.EndOfDay):
    TEXT_FORMATS[_far] = far_datetime.text_of
