"""PostgreSQL's interval input on the client: the rules of ``interval_in`` (the
``DecodeInterval`` and ``DecodeISO8601Interval`` routines of PostgreSQL 15's datetime.c),
so that a string written into an encrypted ``interval`` column is read as the server would
read it -- without sending the text to the server.

Contract: :func:`parse` takes the text, the column's field restriction (``range``: a
mask of :data:`YEAR` ... :data:`SECOND`, :data:`FULL_RANGE` for none) and whether the
session's IntervalStyle is ``sql_standard`` (a leading ``-`` then applies to every
field), and returns PostgreSQL's ``(months, days, microseconds)``; :func:`restrict`
applies a column's fields and fractional precision to such a triple (PostgreSQL's
``AdjustIntervalForTypmod``).  Errors are PostgreSQL's: 22007 (``invalid input syntax
for type interval``), 22015 (``interval field value out of range``), 22008 (``interval
out of range``: more months than a 32-bit integer holds).

Accepted, as PostgreSQL reads them: postgres style (``1 day 2 hours``, ``@ 1 minute
ago``, ``1.5 months``, unit abbreviations ``y m w d h min s ms us`` and plurals, ``-1
+02:03``), SQL-standard forms (``1-2``, ``1-2 3 4:05:06``, ``12:34.5``), ISO 8601 with
designators (``P1Y2M3DT4H5M6S``, ``P1W``, ``PT-0.1S``) and the alternative format
(``P0001-02-03T04:05:06``, ``P00010203T040506``).  Fractions spill down as PostgreSQL
spills them (a month is 30 days, a day 24 hours; fractional years become whole months).
The tokenizer is :func:`datetime_input.tokens` (PostgreSQL's ParseDateTime).
"""

from __future__ import annotations

import math
import re

from psycopg import errors as pg_errors

from ..errors import ConfigError, DatetimeOutOfRange, EncodingError, InvalidDatetimeInput
from .datetime_input import DATE, NUMBER, SPECIAL, STRING, TIME, TZ, tokens


class IntervalFieldOverflow(EncodingError, pg_errors.IntervalFieldOverflow):
    """An interval field beyond what PostgreSQL's fields hold (22015)."""


# the field restrictions of an interval column (PostgreSQL's INTERVAL_MASK bits)
MONTH, YEAR, DAY, HOUR, MINUTE, SECOND = (1 << b for b in (1, 2, 3, 10, 11, 12))
FULL_RANGE = 0x7FFF
# each restriction's spelling, as PostgreSQL prints it in a type name
RANGES: dict[str, int] = {
    "year": YEAR,
    "month": MONTH,
    "day": DAY,
    "hour": HOUR,
    "minute": MINUTE,
    "second": SECOND,
    "year to month": YEAR | MONTH,
    "day to hour": DAY | HOUR,
    "day to minute": DAY | HOUR | MINUTE,
    "day to second": DAY | HOUR | MINUTE | SECOND,
    "hour to minute": HOUR | MINUTE,
    "hour to second": HOUR | MINUTE | SECOND,
    "minute to second": MINUTE | SECOND,
}

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
US_PER_SECOND = 1_000_000
US_PER_MINUTE = 60 * US_PER_SECOND
US_PER_HOUR = 60 * US_PER_MINUTE
US_PER_DAY = 24 * US_PER_HOUR

# units (PostgreSQL's DTK_* numbers that the decoder switches on)
_SECOND, _MINUTE, _HOUR, _DAY, _WEEK, _MONTH, _QUARTER, _YEAR = range(18, 26)
_DECADE, _CENTURY, _MILLENNIUM, _MILLISEC, _MICROSEC = range(26, 31)
_TZ, _TZ_HOUR, _TZ_MINUTE = 4, 34, 35
_NONE = 8  # IGNORE_DTF: no unit known yet
_AGO_TYPE = 0  # the unit "ago" leaves (no number may stand before it)

# deltatktbl: PostgreSQL's interval words (matched on their first 10 characters)
_UNIT_WORDS: dict[str, int] = {}
for _unit, _words in (
    (_CENTURY, "c cent centuries century"),
    (_DAY, "d day days"),
    (_DECADE, "dec decade decades decs"),
    (_HOUR, "h hour hours hr hrs"),
    (_MINUTE, "m min mins minute minutes"),
    (_MICROSEC, "microsecon us usec usecond useconds usecs"),
    (_MILLENNIUM, "mil millennia millennium mils"),
    (_MILLISEC, "millisecon ms msec msecond mseconds msecs"),
    (_MONTH, "mon mons month months"),
    (_QUARTER, "qtr quarter"),
    (_SECOND, "s sec second seconds secs"),
    (_TZ, "timezone"),
    (_TZ_HOUR, "timezone_h"),
    (_TZ_MINUTE, "timezone_m"),
    (_WEEK, "w week weeks"),
    (_YEAR, "y year years yr yrs"),
):
    for _word in _words.split():
        _UNIT_WORDS[_word] = _unit


# the field bits that detect a unit given twice (PostgreSQL's DTK_M masks)
_BIT = {
    u: 1 << i
    for i, u in enumerate(
        (_SECOND, _MINUTE, _HOUR, _DAY, _WEEK, _MONTH, _YEAR, _DECADE, _CENTURY, _MILLENNIUM,
         _MILLISEC, _MICROSEC)
    )
}  # fmt: skip
_ALL_SECS = _BIT[_SECOND] | _BIT[_MILLISEC] | _BIT[_MICROSEC]
_TIME_BITS = _BIT[_HOUR] | _BIT[_MINUTE] | _ALL_SECS
_MAX_FIELDS = 25  # MAXDATEFIELDS
_WORKBUF = 256  # interval_in's buffer for the fields


class _Bad(Exception):
    """``overflow`` (22015) or ``format`` (22007)."""


class _Fields:
    """PostgreSQL's pg_itm_in: the fields as they accumulate, each checked for overflow."""

    __slots__ = ("days", "months", "usec", "years")

    def __init__(self) -> None:
        self.usec = 0
        self.days = 0
        self.months = 0
        self.years = 0


def _fits(v: int, bounds: tuple[int, int]) -> int:
    if not bounds[0] <= v <= bounds[1]:
        raise _Bad("overflow")
    return v


def _trunc(x: float) -> int:
    """C's (int) cast of a double: toward zero."""
    return int(x)


def _add_fract_usec(it: _Fields, frac: float, scale: int) -> None:
    """AdjustFractMicroseconds: ``frac * scale`` microseconds, rounded off."""
    if frac == 0:
        return
    frac *= scale
    usec = _trunc(frac)
    frac -= usec
    if frac > 0.5:
        usec += 1
    elif frac < -0.5:
        usec -= 1
    it.usec = _fits(it.usec + usec, _INT64)


def _add_fract_days(it: _Fields, frac: float, scale: int) -> None:
    """AdjustFractDays: whole days of ``frac * scale`` days, the rest as microseconds."""
    if frac == 0:
        return
    frac *= scale
    extra = _trunc(frac)
    it.days = _fits(it.days + extra, _INT32)
    _add_fract_usec(it, frac - extra, US_PER_DAY)


def _add_fract_years(it: _Fields, frac: float, scale: int) -> None:
    """AdjustFractYears: ``frac * scale`` years as whole months (rounded to even)."""
    extra = round(frac * scale * 12)
    it.months = _fits(it.months + extra, _INT32)


def _add_usec(it: _Fields, val: int, fval: float, scale: int) -> None:
    it.usec = _fits(it.usec + _fits(val * scale, _INT64), _INT64)
    _add_fract_usec(it, fval, scale)


def _add_days(it: _Fields, val: int, scale: int) -> None:
    it.days = _fits(it.days + _fits(_fits(val, _INT32) * scale, _INT32), _INT32)


def _add_months(it: _Fields, val: int) -> None:
    it.months = _fits(it.months + _fits(val, _INT32), _INT32)


def _add_years(it: _Fields, val: int, scale: int) -> None:
    it.years = _fits(it.years + _fits(_fits(val, _INT32) * scale, _INT32), _INT32)


_SPACE = " \t\n\v\f\r"


def _strtol(s: str, i: int, bounds: tuple[int, int]) -> tuple[int, int]:
    """C's strtol from ``s[i]`` (spaces, a sign, digits): the value and where it ends
    (``i`` itself where there are no digits, the value then 0); beyond ``bounds``: an
    overflow."""
    j, n = i, len(s)
    while j < n and s[j] in _SPACE:
        j += 1
    sign = 1
    if j < n and s[j] in "+-":
        sign = -1 if s[j] == "-" else 1
        j += 1
    k = j
    while k < n and "0" <= s[k] <= "9":
        k += 1
    if k == j:
        return 0, i
    return _fits(sign * int(s[j:k]), bounds), k


_FRACTION_RE = re.compile(r"\.[0-9]*")


def _fraction(text: str) -> float:
    """ParseFraction: ``.ddd`` to the end of the field."""
    if not _FRACTION_RE.fullmatch(text):
        raise _Bad("format")
    return float("0" + text)


def _time(s: str, rng: int) -> int:
    """DecodeTimeForInterval: ``h:mm[:ss[.fff]]`` (or ``mm:ss.fff``) as microseconds."""
    hour, cp = _strtol(s, 0, _INT64)
    if cp >= len(s) or s[cp] != ":":
        raise _Bad("format")
    minute, cp = _strtol(s, cp + 1, _INT32)
    sec = usec = 0
    if cp == len(s):
        if rng == MINUTE | SECOND:  # a MINUTE TO SECOND column reads mm:ss
            sec, minute, hour = minute, _fits(hour, _INT32), 0
    elif s[cp] == ".":
        usec = round(_fraction(s[cp:]) * 1_000_000)
        sec, minute, hour = minute, _fits(hour, _INT32), 0
    elif s[cp] == ":":
        sec, cp = _strtol(s, cp + 1, _INT32)
        if cp < len(s):
            if s[cp] != ".":
                raise _Bad("format")
            usec = round(_fraction(s[cp:]) * 1_000_000)
    else:
        raise _Bad("format")
    if hour < 0 or not 0 <= minute <= 59 or not 0 <= sec <= 60 or not 0 <= usec <= 1_000_000:
        raise _Bad("overflow")
    total = usec
    for v, scale in ((hour, US_PER_HOUR), (minute, US_PER_MINUTE), (sec, US_PER_SECOND)):
        total = _fits(total + _fits(v * scale, _INT64), _INT64)
    return total


# the unit a bare number takes in a column restricted to these fields
_RANGE_UNIT = {
    YEAR: _YEAR,
    MONTH: _MONTH,
    YEAR | MONTH: _MONTH,
    DAY: _DAY,
    HOUR: _HOUR,
    DAY | HOUR: _HOUR,
    MINUTE: _MINUTE,
    HOUR | MINUTE: _MINUTE,
    DAY | HOUR | MINUTE: _MINUTE,
}


def _number(it: _Fields, field: str, unit: int) -> tuple[int, int]:
    """One number of DecodeInterval's loop, in ``unit``: (the unit for the next field to
    the left, the field bit it sets)."""
    val, cp = _strtol(field, 0, _INT64)
    rest = field[cp:]
    fval = 0.0
    if rest.startswith("-"):  # SQL's years-months
        months, end = _strtol(field, cp + 1, _INT32)
        if not 0 <= months < 12:
            raise _Bad("overflow")
        if end != len(field):
            raise _Bad("format")
        unit = _MONTH
        val = _fits(_fits(val * 12, _INT64) + (-months if field[0] == "-" else months), _INT64)
    elif rest.startswith("."):
        fval = _fraction(rest)
        if field[0] == "-":
            fval = -fval
    elif rest:
        raise _Bad("format")
    return _apply(it, unit, val, fval)


def _apply(it: _Fields, unit: int, val: int, fval: float) -> tuple[int, int]:
    if unit == _MICROSEC:
        _add_usec(it, val, fval, 1)
    elif unit == _MILLISEC:
        _add_usec(it, val, fval, 1000)
    elif unit == _SECOND:
        _add_usec(it, val, fval, US_PER_SECOND)
        # subseconds given: milliseconds and microseconds are given too
        return unit, _BIT[_SECOND] if fval == 0 else _ALL_SECS
    elif unit == _MINUTE:
        _add_usec(it, val, fval, US_PER_MINUTE)
    elif unit == _HOUR:
        _add_usec(it, val, fval, US_PER_HOUR)
        return _DAY, _BIT[_HOUR]  # a number left of hours is days ('1 2 hours')
    elif unit == _DAY:
        _add_days(it, val, 1)
        _add_fract_usec(it, fval, US_PER_DAY)
    elif unit == _WEEK:
        _add_days(it, val, 7)
        _add_fract_days(it, fval, 7)
    elif unit == _MONTH:
        _add_months(it, val)
        _add_fract_days(it, fval, 30)
    elif unit in (_YEAR, _DECADE, _CENTURY, _MILLENNIUM):
        scale = {_YEAR: 1, _DECADE: 10, _CENTURY: 100, _MILLENNIUM: 1000}[unit]
        _add_years(it, val, scale)
        _add_fract_years(it, fval, scale)
    else:
        raise _Bad("format")
    return unit, _BIT[unit]


def _decode(text: str, rng: int, sql_standard: bool) -> _Fields:
    """DecodeInterval: the fields read right to left, a unit before its number."""
    fields = tokens(text)
    if fields is None or len(fields) > _MAX_FIELDS or sum(len(f) + 1 for f, _ in fields) > _WORKBUF:
        raise _Bad("format")
    it = _Fields()
    negate_all = sql_standard and bool(fields) and fields[0][0].startswith("-")
    if negate_all and any(f.startswith(("-", "+")) for f, _ in fields[1:]):
        negate_all = False
    before = False
    fmask = 0
    unit = _NONE
    for field, kind in reversed(fields):
        tmask = 0
        if kind == TIME or (kind == TZ and ":" in field[1:] and _signed_time(it, field, rng)):
            if kind == TIME:
                it.usec = _time(field, rng)
            if negate_all and it.usec > 0:
                it.usec = -it.usec
            unit, tmask = _DAY, _TIME_BITS
        elif kind in (TZ, DATE, NUMBER):
            if unit == _NONE:
                unit = _RANGE_UNIT.get(rng, _SECOND)
            if negate_all and not field.startswith("-"):
                field = "-" + field.lstrip("+")
            unit, tmask = _number(it, field, unit)
        elif kind in (STRING, SPECIAL):
            found = _UNIT_WORDS.get(field[:10])
            if field == "ago":
                before, unit = True, _AGO_TYPE
            elif found is None:
                raise _Bad("format")
            else:
                unit = found
        else:
            raise _Bad("format")
        if tmask & fmask:
            raise _Bad("format")
        fmask |= tmask
    if fmask == 0:
        raise _Bad("format")
    if before:
        if -(2**63) in (it.usec,) or -(2**31) in (it.days, it.months, it.years):
            raise _Bad("overflow")
        it.usec, it.days, it.months, it.years = -it.usec, -it.days, -it.months, -it.years
    return it


def _signed_time(it: _Fields, field: str, rng: int) -> bool:
    """A signed ``+h:mm[:ss]`` read as a time, if it reads as one (else it is read as a
    signed number, which then fails on its ':')."""
    try:
        usec = _time(field[1:], rng)
    except _Bad:
        return False
    if field[0] == "-":
        if usec == -(2**63):
            raise _Bad("overflow")
        usec = -usec
    it.usec = usec
    return True


# strtod's numbers: decimal, hexadecimal, inf, nan
_STRTOD_RE = re.compile(
    r"[-+]?(?:(0[xX])(?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][-+]?[0-9]+)?"
    r"|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
    r"|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN](?:\([0-9A-Za-z_]*\))?)"
)
_DOUBLE_MIN = 2.2250738585072014e-308


def _iso_number(s: str, i: int) -> tuple[int, float, int]:
    """ParseISO8601Number: a number as strtod reads it, split into its integer part and
    fraction; and where it ends."""
    if i >= len(s) or not ((s[i].isdigit() and s[i].isascii()) or s[i] in "-."):
        raise _Bad("format")
    m = _STRTOD_RE.match(s, i)
    if m is None:
        raise _Bad("format")
    text = m.group(0)
    val = float.fromhex(text) if m.group(1) else float(text)
    if math.isfinite(val) and val != 0 and abs(val) < _DOUBLE_MIN:
        raise _Bad("format")  # (strtod's ERANGE on underflow)
    if math.isinf(val) and "n" not in text.lower():
        raise _Bad("format")  # a finite number beyond a double: ERANGE
    if val == 0 and not m.group(1) and re.search(r"[1-9]", text.split("e")[0].split("E")[0]):
        raise _Bad("format")
    if math.isnan(val) or not -1.0e15 <= val <= 1.0e15:
        raise _Bad("overflow")
    ipart = math.floor(val) if val >= 0 else -math.floor(-val)
    return int(ipart), val - ipart, m.end()


def _digits_width(s: str, i: int) -> int:
    """ISO8601IntegerWidth: the digits of the number at ``i`` (after a '-')."""
    if i < len(s) and s[i] == "-":
        i += 1
    j = i
    while j < len(s) and "0" <= s[j] <= "9":
        j += 1
    return j - i


def _decode_iso(s: str) -> _Fields:
    """DecodeISO8601Interval: ``P...`` with designators, or the alternative format."""
    it = _Fields()
    if len(s) < 2 or s[0] != "P":
        raise _Bad("format")
    i, n = 1, len(s)
    datepart, havefield = True, False
    while i < n:
        if s[i] == "T":
            datepart, havefield = False, False
            i += 1
            continue
        start = i
        val, fval, i = _iso_number(s, i)
        unit = s[i] if i < n else ""
        i += 1
        if datepart:
            if unit == "Y":
                _add_years(it, val, 1)
                _add_fract_years(it, fval, 1)
            elif unit == "M":
                _add_months(it, val)
                _add_fract_days(it, fval, 30)
            elif unit == "W":
                _add_days(it, val, 7)
                _add_fract_days(it, fval, 7)
            elif unit == "D":
                _add_days(it, val, 1)
                _add_fract_usec(it, fval, US_PER_DAY)
            elif unit in ("T", "", "-"):
                if unit != "-" and _digits_width(s, start) == 8 and not havefield:
                    _add_years(it, _cdiv(val, 10000), 1)
                    _add_months(it, _crem(_cdiv(val, 100), 100))
                    _add_days(it, _crem(val, 100), 1)
                    _add_fract_usec(it, fval, US_PER_DAY)
                    if unit == "":
                        return it
                    datepart, havefield = False, False
                    continue
                done, i = _iso_alternative_date(it, s, i, unit, val, fval, havefield)
                if done:
                    return it
                datepart, havefield = False, False
                continue
            else:
                raise _Bad("format")
        else:
            if unit == "H":
                _add_usec(it, val, fval, US_PER_HOUR)
            elif unit == "M":
                _add_usec(it, val, fval, US_PER_MINUTE)
            elif unit == "S":
                _add_usec(it, val, fval, US_PER_SECOND)
            elif unit in ("", ":"):
                if unit == "" and _digits_width(s, start) == 6 and not havefield:
                    _add_usec(it, _cdiv(val, 10000), 0, US_PER_HOUR)
                    _add_usec(it, _crem(_cdiv(val, 100), 100), 0, US_PER_MINUTE)
                    _add_usec(it, _crem(val, 100), 0, US_PER_SECOND)
                    _add_fract_usec(it, fval, 1)
                    return it
                _iso_alternative_time(it, s, i, unit, val, fval, havefield)
                return it
            else:
                raise _Bad("format")
        havefield = True
    return it


def _iso_alternative_date(
    it: _Fields, s: str, i: int, unit: str, val: int, fval: float, havefield: bool
) -> tuple[bool, int]:
    """``YYYY-MM-DD`` of the alternative format: (the input ended, where it goes on)."""
    if havefield:
        raise _Bad("format")
    _add_years(it, val, 1)
    _add_fract_years(it, fval, 1)
    if unit in ("", "T"):
        return unit == "", i
    val, fval, i = _iso_number(s, i)
    _add_months(it, val)
    _add_fract_days(it, fval, 30)
    if i >= len(s):
        return True, i
    if s[i] == "T":
        return False, i + 1
    if s[i] != "-":
        raise _Bad("format")
    val, fval, i = _iso_number(s, i + 1)
    _add_days(it, val, 1)
    _add_fract_usec(it, fval, US_PER_DAY)
    if i >= len(s):
        return True, i
    if s[i] == "T":
        return False, i + 1
    raise _Bad("format")


def _iso_alternative_time(
    it: _Fields, s: str, i: int, unit: str, val: int, fval: float, havefield: bool
) -> None:
    """``hh:mm:ss`` of the alternative format, to the end of the input."""
    if havefield:
        raise _Bad("format")
    _add_usec(it, val, fval, US_PER_HOUR)
    if unit == "":
        return
    val, fval, i = _iso_number(s, i)
    _add_usec(it, val, fval, US_PER_MINUTE)
    if i >= len(s):
        return
    if s[i] != ":":
        raise _Bad("format")
    val, fval, i = _iso_number(s, i + 1)
    _add_usec(it, val, fval, US_PER_SECOND)
    if i < len(s):
        raise _Bad("format")


def _cdiv(a: int, b: int) -> int:
    """C's integer division (toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _crem(a: int, b: int) -> int:
    return a - b * _cdiv(a, b)


def parse(text: str, rng: int = FULL_RANGE, sql_standard: bool = False) -> tuple[int, int, int]:
    """``(months, days, microseconds)`` of ``text`` as PostgreSQL's interval input
    reads it for a column restricted to ``rng`` (before the restriction is applied: see
    :func:`restrict`), or its error."""
    try:
        try:
            it = _decode(text, rng, sql_standard)
        except _Bad as bad:
            if str(bad) != "format":
                raise
            it = _decode_iso(text)  # what the postgres rules cannot read, ISO 8601 may
    except _Bad as bad:
        if str(bad) == "overflow":
            raise IntervalFieldOverflow(f'interval field value out of range: "{text}"') from None
        raise InvalidDatetimeInput(f'invalid input syntax for type interval: "{text}"') from None
    months = it.years * 12 + it.months
    if not _INT32[0] <= months <= _INT32[1]:
        raise DatetimeOutOfRange("interval out of range")
    return months, it.days, it.usec


_TRUNCATE = {
    HOUR: US_PER_HOUR,
    DAY | HOUR: US_PER_HOUR,
    MINUTE: US_PER_MINUTE,
    DAY | HOUR | MINUTE: US_PER_MINUTE,
    HOUR | MINUTE: US_PER_MINUTE,
}


def restrict(value: tuple[int, int, int], rng: int, precision: int | None) -> tuple[int, int, int]:
    """AdjustIntervalForTypmod: the fields right of the column's last one dropped
    (toward zero), the seconds rounded to ``precision`` digits (half away from zero)."""
    months, days, usec = value
    if rng == YEAR:
        months, days, usec = _cdiv(months, 12) * 12, 0, 0
    elif rng in (MONTH, YEAR | MONTH):
        days, usec = 0, 0
    elif rng == DAY:
        usec = 0
    elif rng in _TRUNCATE:
        usec = _cdiv(usec, _TRUNCATE[rng]) * _TRUNCATE[rng]
    if precision is not None and precision < 6:
        # (in 64-bit arithmetic, which wraps near the ends of the range as PostgreSQL's)
        scale = 10 ** (6 - precision)
        half = scale // 2
        if usec >= 0:
            usec = _cdiv(_wrap(usec + half), scale) * scale
        else:
            usec = _wrap(-(_cdiv(_wrap(_wrap(-usec) + half), scale) * scale))
    return months, days, usec


def _wrap(v: int) -> int:
    """``v`` as a two's-complement 64-bit integer."""
    return (v + 2**63) % 2**64 - 2**63


_TYPE_RE = re.compile(
    r"interval(?: ?\( ?(\d+) ?\)| (\d+))?"
    r"|interval ((?:year|month|day|hour|minute)(?: to (?:month|hour|minute|second))?|second)"
    r"(?: ?\( ?(\d+) ?\))?"
)


def type_parts(norm: str, text: str) -> tuple[str | None, int | None]:
    """An interval column type's field restriction and fractional precision (None: all
    fields, 6 digits) from its spelling (lowercase, single spaces); ConfigError for one
    PostgreSQL does not have.  A precision above 6 is 6, as PostgreSQL reduces it."""

    m = _TYPE_RE.fullmatch(norm)
    if m is None:
        raise ConfigError(f"unsupported column type {text!r}")
    fields = m.group(3)
    digits = m.group(1) or m.group(2) or m.group(4)
    if fields is not None and fields not in RANGES:
        raise ConfigError(f"unsupported column type {text!r}")
    if m.group(4) is not None and fields is not None and not fields.endswith("second"):
        raise ConfigError(f"unsupported column type {text!r}")
    return fields, None if digits is None else min(int(digits), 6)
