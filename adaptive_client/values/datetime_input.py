"""PostgreSQL's date/time input, on the client: the rules of the manual's "Date/Time
Input" appendix (``ParseDateTime`` and ``DecodeDateTime`` of PostgreSQL's datetime.c), so
that a value written into an encrypted ``date``, ``timestamp``, ``timestamptz`` or
``time`` column is read as the server would read it -- without ever sending the text to
the server (``SELECT $1::date`` would show it to the provider).

Contract: :func:`parse` takes the text and a :class:`Session` (the session's DateStyle
field order, TimeZone and clock) and returns a :class:`Fields` -- the date and time of
day as written, the zone offset if one was given, or a special value (``epoch``,
``infinity``, ``-infinity``) -- or raises PostgreSQL's error for the input: 22007
(``invalid input syntax for type date: "..."``), 22008 (``date/time field value out of
range: "..."``), 22009 (a zone displacement out of range), 22023 (an unknown zone name).
Julian days, zones and :class:`Fields` are ``datetime_fields``'s (re-exported here).
The callers (``encodings``) turn fields into values of their type.

Accepted, as PostgreSQL reads them: ISO 8601 (``1999-01-08``, ``19990108``,
``1999-01-08T04:05:06``), month names (``January 8, 1999``, ``1999-Jan-08``,
``08-Jan-1999``), numeric dates in the session's DateStyle order (``1/8/1999`` is
January 8th under MDY, August 1st under DMY), two-digit years, day-of-year
(``1999.008``, ``1999-008``), Julian days (``J2451187``), ``BC``/``AD``, AM/PM, day
names, the special words (``epoch``, ``infinity``, ``-infinity``, ``now``, ``today``,
``tomorrow``, ``yesterday``, ``allballs``), numeric zone offsets (``-8``, ``+05:30``),
the zone abbreviations of PostgreSQL's ``Default`` set (``PST``, ``CET``, ``Z``; those
bound to a zone, ``MSK``, by the zone's offset under that name at the date), full zone
names (``America/New_York``, through :mod:`zoneinfo`) and POSIX zones without daylight
rules (``GMT+8``), run-together times with a zone (``040506-08``).

Not accepted, where PostgreSQL reads them: ISO 8601 field labels (``y1999m01d08``,
22007), and zone names PostgreSQL takes as POSIX zones with daylight rules or other
malformed ones (22023).  The DateStyle and TimeZone are the session's; the abbreviation
set is PostgreSQL's default one (a server configured with another
``timezone_abbreviations`` reads some abbreviations differently).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass

from psycopg import errors as pg_errors

from ..errors import DatetimeOutOfRange, EncodingError, InvalidDatetimeInput
from .datetime_fields import (
    ABBREVIATIONS,
    Fields,
    date2j,
    days_in_month,
    j2date,
    one_offset,
    zone_named,
)


class InvalidZoneDisplacement(EncodingError, pg_errors.InvalidTimeZoneDisplacementValue):
    """A numeric zone offset beyond ±15:59:59 (22009)."""


class UnknownTimeZone(EncodingError, pg_errors.InvalidParameterValue):
    """A zone name zoneinfo does not know (22023)."""


# --- the session ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Session:
    """What the input rules read from the session: DateStyle's field order (``MDY``,
    ``DMY`` or ``YMD``), the TimeZone, and the transaction's ``now()`` (an aware
    datetime, read from the server only when an input needs it)."""

    order: str = "MDY"
    zone: dt.tzinfo = dt.UTC
    clock: Callable[[], dt.datetime] | None = None

    def now(self) -> dt.datetime:
        if self.clock is None:
            raise InvalidDatetimeInput("the server's clock is not available to read this value")
        return self.clock().astimezone(self.zone)


def date_order(datestyle: str) -> str:
    """The field order of a DateStyle setting (``"ISO, MDY"`` -> ``"MDY"``)."""
    for part in datestyle.replace(",", " ").upper().split():
        if part in ("MDY", "DMY", "YMD"):
            return part
        if part in ("EURO", "EUROPEAN"):
            return "DMY"
        if part in ("US", "NONEURO", "NONEUROPEAN"):
            return "MDY"
    return "MDY"


# --- tables ----------------------------------------------------------------------------------

# field kinds of the tokenizer
NUMBER, STRING, DATE, TIME, TZ, SPECIAL = range(6)

# field masks
YEAR, MONTH, DAY, HOUR, MINUTE, SECOND, ZONE, DOY, DOW, AMPM, ADBC, RESERVED = (
    1 << i for i in range(12)
)
DATE_M = YEAR | MONTH | DAY
TIME_M = HOUR | MINUTE | SECOND

# the keywords of PostgreSQL's datetktbl: word -> (kind, value)
_KEYWORDS: dict[str, tuple[str, object]] = {
    "-infinity": ("reserved", "-infinity"),
    "ad": ("adbc", False),
    "allballs": ("reserved", "allballs"),
    "am": ("ampm", "am"),
    "at": ("ignore", None),
    "bc": ("adbc", True),
    "epoch": ("reserved", "epoch"),
    "infinity": ("reserved", "infinity"),
    "j": ("units", "julian"),
    "jd": ("units", "julian"),
    "julian": ("units", "julian"),
    "now": ("reserved", "now"),
    "on": ("ignore", None),
    "pm": ("ampm", "pm"),
    "t": ("isotime", None),
    "today": ("reserved", "today"),
    "tomorrow": ("reserved", "tomorrow"),
    "yesterday": ("reserved", "yesterday"),
}
for _i, _names in enumerate(
    [
        "jan january", "feb february", "mar march", "apr april", "may", "jun june",
        "jul july", "aug august", "sep sept september", "oct october", "nov november",
        "dec december",
    ],
    start=1,
):  # fmt: skip
    for _name in _names.split():
        _KEYWORDS[_name] = ("month", _i)
for _i, _names in enumerate(
    [
        "sun sunday", "mon monday", "tue tues tuesday", "wed weds wednesday",
        "thu thur thurs thursday", "fri friday", "sat saturday",
    ]
):  # fmt: skip
    for _name in _names.split():
        _KEYWORDS[_name] = ("dow", _i)

# --- the tokenizer (ParseDateTime) -----------------------------------------------------------

# the words of PostgreSQL's datetktbl: a letter run followed by a digit or '+' is one
# of these words, not a zone name ('m2' is the word m and 2)
_DATE_WORDS_TEXT = (
    "-infinity ad allballs am apr april at aug august bc d dec december dow doy dst epoch "
    "feb february fri friday h infinity isodow isoyear j jan january jd jul julian july "
    "jun june m mar march may mm mon monday nov november now oct october on pm s sat "
    "saturday sep sept september sun sunday t thu thur thurs thursday today tomorrow tue "
    "tues tuesday wed wednesday weds y yesterday"
)
DATE_WORDS = frozenset(_DATE_WORDS_TEXT.split())


def tokens(text: str) -> list[tuple[str, int]] | None:
    """ParseDateTime: the fields of ``text`` as (text, kind), None where PostgreSQL
    refuses the text."""
    fields: list[tuple[str, int]] = []
    s = text
    n = len(s)
    i = 0
    while i < n:
        c = s[i]
        if c.isascii() and c.isdigit():
            j = i
            while j < n and s[j].isdigit() and s[j].isascii():
                j += 1
            if j < n and s[j] == ":":
                while j < n and (s[j].isdigit() or s[j] in ":."):
                    j += 1
                fields.append((s[i:j], TIME))
            elif j < n and s[j] in "-/.":
                delim = s[j]
                j += 1
                if j < n and s[j].isdigit():
                    kind = NUMBER if delim == "." else DATE
                    while j < n and s[j].isdigit():
                        j += 1
                    if j < n and s[j] == delim:
                        kind = DATE
                        while j < n and (s[j].isdigit() or s[j] == delim):
                            j += 1
                    fields.append((s[i:j], kind))
                else:
                    while j < n and (s[j].isalnum() or s[j] == delim):
                        j += 1
                    fields.append((s[i:j].lower(), DATE))
            else:
                fields.append((s[i:j], NUMBER))
            i = j
        elif c == ".":
            j = i + 1
            while j < n and s[j].isdigit():
                j += 1
            fields.append((s[i:j], NUMBER))
            i = j
        elif c.isalpha():
            j = i
            while j < n and s[j].isalpha():
                j += 1
            word = s[i:j].lower()
            is_date = False
            if j < n and s[j] in "-/.":
                is_date = True
            elif j < n and (s[j] == "+" or s[j].isdigit()):
                # a known word followed by digits is a word ('j2451187', 't04:05')
                is_date = word[:10] not in DATE_WORDS
            if is_date:
                while j < n and (s[j].isalnum() or s[j] in "+-/_.:"):
                    j += 1
                fields.append((s[i:j].lower(), DATE))
            else:
                fields.append((word, STRING))
            i = j
        elif c.isspace():
            i += 1
        elif c in "+-":
            j = i + 1
            while j < n and s[j].isspace():
                j += 1
            if j < n and s[j].isdigit():
                k = j
                while k < n and (s[k].isdigit() or s[k] in ":.-"):
                    k += 1
                fields.append((c + s[j:k], TZ))
            elif j < n and s[j].isalpha():
                k = j
                while k < n and s[k].isalpha():
                    k += 1
                fields.append((c + s[j:k].lower(), SPECIAL))
            else:
                return None
            i = k
        elif c.isascii() and not c.isalnum() and c.isprintable():
            i += 1  # other punctuation: a delimiter
        else:
            return None
    return fields


# --- the decoder (DecodeDateTime) ------------------------------------------------------------


class _Bad(Exception):
    """The input's error: ``kind`` is "format", "overflow", "tz" (displacement) or
    "zone" (an unknown zone name, in ``detail``)."""

    def __init__(self, kind: str, detail: str = "") -> None:
        super().__init__(kind)
        self.kind = kind
        self.detail = detail


_TYPE_NAMES = {
    "date": "date",
    "timestamp": "timestamp",
    "timestamptz": "timestamp with time zone",
    "time": "time without time zone",
    "timetz": "time with time zone",
}


def parse(text: str, kind: str, session: Session) -> Fields:
    """The fields of ``text`` as PostgreSQL's input function for ``kind`` (date,
    timestamp, timestamptz, time, timetz) reads them, or its error."""
    try:
        return _decode(text, kind, session)
    except _Bad as bad:
        raise _error(bad, text, kind) from None


def _error(bad: _Bad, text: str, kind: str) -> EncodingError:
    if bad.kind == "overflow":
        return DatetimeOutOfRange(f'date/time field value out of range: "{text}"')
    if bad.kind == "range":
        what = "date" if kind == "date" else "timestamp"
        return DatetimeOutOfRange(f'{what} out of range: "{text}"')
    if bad.kind == "tz":
        return InvalidZoneDisplacement(f'time zone displacement out of range: "{text}"')
    if bad.kind == "zone":
        return UnknownTimeZone(f'time zone "{bad.detail}" not recognized')
    return InvalidDatetimeInput(f'invalid input syntax for type {_TYPE_NAMES[kind]}: "{text}"')


_FRACTION_RE = re.compile(r"\.[0-9]*")


def _fraction(text: str) -> int:
    """Microseconds of a ``.ddd`` fraction, rounded as PostgreSQL (rint)."""
    if not _FRACTION_RE.fullmatch(text):
        raise _Bad("format")
    return round(float("0" + text) * 1_000_000) if len(text) > 1 else 0


class _State:
    __slots__ = (
        "ampm",
        "bc",
        "f",
        "fmask",
        "julian",
        "order",
        "ptype",
        "text_month",
        "two_digits",
        "yday",
    )

    def __init__(self, order: str) -> None:
        self.f = Fields()
        self.fmask = 0
        self.order = order
        self.text_month = False
        self.two_digits = False
        self.bc = False
        self.julian = False
        self.ampm: str | None = None
        self.ptype: str | None = None
        self.yday = 0


def _int(text: str) -> int:
    if not text.isdigit():
        raise _Bad("format")
    v = int(text)
    if v > 2**31 - 1:
        raise _Bad("overflow")
    return v


def _number(st: _State, text: str) -> int:
    """DecodeNumber: one numeric field of a date, placed by what is known so far;
    returns the mask it sets."""
    f = st.f
    head, dot, tail = text.partition(".")
    flen = len(text)
    if dot:
        if len(head) > 2:
            return _number_field(st, text, st.fmask | DATE_M)
        f.micro = _fraction("." + tail)
    val = _int(head)
    if flen == 3 and st.fmask & DATE_M == YEAR and 1 <= val <= 366:
        st.yday = val
        return DOY | MONTH | DAY
    have = st.fmask & DATE_M
    if have == 0:
        if flen >= 3 or st.order == "YMD":
            f.year, mask = val, YEAR
        elif st.order == "DMY":
            f.day, mask = val, DAY
        else:
            f.month, mask = val, MONTH
    elif have == YEAR:
        f.month, mask = val, MONTH
    elif have == MONTH:
        if st.text_month and (flen >= 3 or st.order == "YMD"):
            f.year, mask = val, YEAR
        else:
            f.day, mask = val, DAY
    elif have == YEAR | MONTH:
        if st.text_month and flen >= 3 and st.two_digits:
            f.day, f.year, mask = f.year, val, DAY
            st.two_digits = False
            return mask
        f.day, mask = val, DAY
    elif have == DAY:
        f.month, mask = val, MONTH
    elif have == MONTH | DAY:
        f.year, mask = val, YEAR
    elif have == DATE_M:
        return _number_field(st, text, st.fmask)
    else:
        raise _Bad("format")
    if mask == YEAR:
        st.two_digits = flen <= 2
    return mask


def _number_field(st: _State, text: str, fmask: int) -> int:
    """DecodeNumberField: a run-together date (``19990108``) or time (``040506``)."""
    f = st.f
    head, dot, tail = text.partition(".")
    if dot:
        f.micro = _fraction("." + tail)
    elif fmask & DATE_M != DATE_M and len(head) >= 6:
        f.day, f.month, f.year = int(head[-2:]), int(head[-4:-2]), int(head[:-4])
        st.two_digits = len(head) - 4 == 2
        return DATE_M
    if not head.isdigit():
        raise _Bad("format")
    if fmask & TIME_M != TIME_M:
        if len(head) == 6:
            f.hour, f.minute, f.second = int(head[:2]), int(head[2:4]), int(head[4:])
            return TIME_M
        if len(head) == 4:
            f.hour, f.minute, f.second = int(head[:2]), int(head[2:]), 0
            return TIME_M
    raise _Bad("format")


_DIGITS = frozenset("0123456789")
_ALNUM = frozenset("0123456789abcdefghijklmnopqrstuvwxyz")


def _date_fields(text: str) -> list[str]:
    """DecodeDate's fields: runs of digits or of letters, each followed by one dropped
    delimiter; separators before a field are skipped, but not at the end."""
    parts: list[str] = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] not in _ALNUM:
            i += 1
        if i >= n:
            raise _Bad("format")
        j = i
        run = _DIGITS if text[i] in _DIGITS else _ALNUM - _DIGITS
        while j < n and text[j] in run:
            j += 1
        parts.append(text[i:j])
        i = j + 1  # (the character after a field is its delimiter)
    return parts


def _date(st: _State, text: str) -> int:
    """DecodeDate: a date written as one field (``1999-01-08``, ``jan-08-1999``)."""
    parts = _date_fields(text)
    mask = 0
    numeric = []
    for p in parts:
        if p[0].isalpha():
            kind, val = _KEYWORDS.get(p, ("", None))
            if kind == "month":
                st.f.month = int(val)  # type: ignore[call-overload]
                st.text_month = True
                bit = MONTH
            else:
                raise _Bad("format")
            if (st.fmask | mask) & bit:
                raise _Bad("format")
            mask |= bit
        else:
            numeric.append(p)
    saved = st.fmask
    st.fmask |= mask
    for p in numeric:
        bit = _number(st, p)
        if st.fmask & bit:
            raise _Bad("format")
        st.fmask |= bit
        mask |= bit
    st.fmask = saved
    # (the fields before count: "04:05 1999-01-08", "Mon 1999-01-08" are refused)
    if (saved | mask) & ~(DOY | ZONE) != DATE_M:
        raise _Bad("format")
    return mask


def _time(st: _State, text: str) -> int:
    """DecodeTime: ``hh:mm[:ss[.fff]]`` (or ``mm:ss.fff``)."""
    f = st.f
    parts = text.split(":")
    if len(parts) == 2 and "." in parts[1]:
        minute, _, frac = parts[1].partition(".")
        f.hour, f.minute, f.second = 0, _int(parts[0]), _int(minute)
        f.micro = _fraction("." + frac)
    elif len(parts) == 2:
        f.hour, f.minute, f.second = _int(parts[0]), _int(parts[1]), 0
    elif len(parts) == 3:
        sec, _, frac = parts[2].partition(".")
        f.hour, f.minute, f.second = _int(parts[0]), _int(parts[1]), _int(sec)
        f.micro = _fraction("." + frac) if "." in parts[2] else 0
    else:
        raise _Bad("format")
    if f.minute > 59 or f.second > 60 or f.micro > 1_000_000:
        raise _Bad("overflow")
    return TIME_M


_DISPLACEMENT_RE = re.compile(r"([0-9]*)(?::([0-9]*)(?::([0-9]*))?)?")


def _displacement(text: str) -> int:
    """DecodeTimezone: ``+hh[:mm[:ss]]`` or ``+hhmm``; seconds east of UTC."""
    sign = -1 if text[0] == "-" else 1
    m = _DISPLACEMENT_RE.match(text, 1)
    assert m is not None  # (every part is optional)
    hr = int(m.group(1) or 0)
    mn, sec = int(m.group(2) or 0), int(m.group(3) or 0)
    if m.group(2) is None and m.end() == len(text) and len(text) > 4:
        hr, mn = divmod(hr, 100)  # +hhmm run together
    # (the range first, as PostgreSQL: "+0100-" is out of range before it is malformed)
    if hr > 15 or mn >= 60 or sec >= 60:
        raise _Bad("tz")
    if m.end() != len(text):
        raise _Bad("format")
    return sign * ((hr * 60 + mn) * 60 + sec)


def _time_with_zone(st: _State, field: str, time_only: bool = False) -> int:
    """``hhmmss-zz``: a run-together time, then a zone displacement."""
    if st.fmask & TIME_M == TIME_M or "-" not in field:
        raise _Bad("format")
    cut = field.index("-")
    st.f.offset = _displacement(field[cut:])
    # (a time of day's input reads six digits as a time, never as a date)
    fmask = st.fmask | (DATE_M if time_only else 0)
    return _number_field(st, field[:cut], fmask) | ZONE


def _decode(text: str, kind: str, session: Session) -> Fields:
    toks = tokens(text)
    if not toks:
        raise _Bad("format")
    st = _State(session.order)
    f = st.f
    time_only = kind in ("time", "timetz")
    for i, (field, ftype) in enumerate(toks):
        mask = 0
        if ftype == DATE:
            if st.ptype == "julian":
                raise _Bad("format")
            if time_only:
                # (DecodeTimeOnly: a date only first, before a time or with a date last)
                first = i == 0 and len(toks) >= 2
                zoned = not (first and (toks[-1][1] == DATE or toks[1][1] == TIME))
            else:
                zoned = st.ptype is not None or st.fmask & (MONTH | DAY) == MONTH | DAY
            if zoned:
                # a month and day known: a zone name ("America/New_York"), or a time run
                # together with a zone ("040506-08", after a "T")
                if field[0].isdigit() or st.ptype is not None:
                    mask = _time_with_zone(st, field, time_only)
                    st.ptype = None
                else:
                    zone = zone_named(field)
                    if zone is None:
                        raise _Bad("zone", field)
                    f.zone, mask = zone, ZONE
            else:
                mask = _date(st, field)
        elif ftype == TIME:
            if st.ptype is not None:
                if st.ptype != "isotime":
                    raise _Bad("format")
                st.ptype = None
            mask = _time(st, field)
        elif ftype == TZ:
            f.offset, mask = _displacement(field), ZONE
        elif ftype == NUMBER:
            if st.ptype == "julian":
                head, _, _ = field.partition(".")
                jd = _int(head)
                f.year, f.month, f.day = j2date(jd)
                st.julian = True
                mask = DATE_M
                st.ptype = None
            elif st.ptype == "isotime":
                mask = _number_field(st, field, st.fmask)
                st.ptype = None
            else:
                flen = len(field)
                dot = field.find(".")
                if dot >= 0 and time_only:
                    # DecodeTimeOnly: a date only as the first of fields ending in one;
                    # else digits run together before a fraction (hhmmss.fff)
                    if i == 0 and len(toks) >= 2 and toks[-1][1] == DATE:
                        mask = _date(st, field)
                    elif dot > 2:
                        mask = _number_field(st, field, st.fmask | DATE_M)
                    else:
                        raise _Bad("format")
                elif dot >= 0 and not st.fmask & DATE_M:
                    mask = _date(st, field)
                elif dot >= 0 and dot > 2:
                    mask = _number_field(st, field, st.fmask)
                elif flen >= 6 and (not st.fmask & DATE_M or not st.fmask & TIME_M):
                    fm = st.fmask | (DATE_M if time_only else 0)
                    mask = _number_field(st, field, fm)
                elif time_only and flen >= 4 and not st.fmask & TIME_M:
                    mask = _number_field(st, field, st.fmask | DATE_M)
                else:
                    mask = _number(st, field)
        else:  # STRING, SPECIAL
            abbrev = ABBREVIATIONS.get(field)
            if abbrev is not None:
                if isinstance(abbrev, int):
                    f.offset = abbrev
                else:
                    f.zone, f.abbrev = zone_named(abbrev), field.upper()
                mask = ZONE
            else:
                kw, val = _KEYWORDS.get(field, ("", None))
                if kw == "reserved":
                    mask = _reserved(st, str(val), session, kind)
                elif kw == "month":
                    mask = MONTH
                    numeric_month = st.fmask & MONTH and not st.text_month
                    if numeric_month and not st.fmask & DAY and 1 <= f.month <= 31:
                        # a number read as the month came first ('8 January'): the day
                        f.day, mask = f.month, DAY
                    f.month = int(val)  # type: ignore[call-overload]
                    st.text_month = True
                elif kw == "dow":
                    mask = DOW
                elif kw == "ampm":
                    st.ampm = str(val)
                    mask = AMPM
                elif kw == "adbc":
                    st.bc = bool(val)
                    mask = ADBC
                elif kw == "ignore":
                    continue
                elif kw == "units" and val == "julian":
                    st.ptype = "julian"
                    continue
                elif kw == "isotime":
                    if st.fmask & DATE_M != DATE_M and not time_only:
                        raise _Bad("format")
                    if i + 1 >= len(toks) or toks[i + 1][1] not in (NUMBER, TIME, DATE):
                        raise _Bad("format")
                    st.ptype = "isotime"
                    continue
                else:
                    zone = zone_named(field) if field.isalpha() else None
                    if zone is None:
                        raise _Bad("format")
                    f.zone, mask = zone, ZONE
        if mask & st.fmask:
            raise _Bad("format")
        st.fmask |= mask
    # (PostgreSQL checks the fields given beside a special value too: "epoch 25:00")
    _validate(st, time_only, whole=f.special is None)
    return f


def _reserved(st: _State, word: str, session: Session, kind: str) -> int:
    f = st.f
    if word in ("epoch", "infinity", "-infinity"):
        f.special = word
        return RESERVED
    if word == "allballs":
        f.hour = f.minute = f.second = f.micro = 0
        f.offset = 0
        return TIME_M | ZONE
    now = session.now()
    if word == "now":
        f.year, f.month, f.day = now.year, now.month, now.day
        f.hour, f.minute, f.second, f.micro = now.hour, now.minute, now.second, now.microsecond
        f.offset = int((now.utcoffset() or dt.timedelta()).total_seconds())
        return DATE_M | TIME_M | ZONE
    day = now.date() + dt.timedelta(days={"today": 0, "tomorrow": 1, "yesterday": -1}[word])
    f.year, f.month, f.day = day.year, day.month, day.day
    return DATE_M


def _clock_checks(st: _State) -> None:
    """AM/PM applied, then the time of day in range (24:00:00 and a leap second 60
    allowed)."""
    f = st.f
    if st.ampm is not None:
        if f.hour > 12:
            raise _Bad("overflow")
        if st.ampm == "am" and f.hour == 12:
            f.hour = 0
        elif st.ampm == "pm" and f.hour != 12:
            f.hour += 12
    if f.hour > 24 or (f.hour == 24 and (f.minute or f.second or f.micro)):
        raise _Bad("overflow")
    if f.second == 60 and f.micro:
        raise _Bad("overflow")


def _validate(st: _State, time_only: bool, whole: bool = True) -> None:
    """ValidateDate and the checks after it: the year's era, day of year, the month's
    days, AM/PM; a date must be whole."""
    f, fmask = st.f, st.fmask
    if fmask & YEAR:
        if st.julian:
            pass
        elif st.bc:
            if f.year <= 0:
                raise _Bad("overflow")
            f.year = -(f.year - 1)
        elif st.two_digits:
            if f.year < 70:
                f.year += 2000
            elif f.year < 100:
                f.year += 1900
        elif f.year <= 0:
            raise _Bad("overflow")
    if fmask & DOY:
        f.year, f.month, f.day = j2date(date2j(f.year, 1, 1) + st.yday - 1)
    if fmask & MONTH and not 1 <= f.month <= 12:
        raise _Bad("overflow")
    if fmask & DAY and not 1 <= f.day <= 31:
        raise _Bad("overflow")
    if fmask & DATE_M == DATE_M and f.day > days_in_month(f.year, f.month):
        raise _Bad("overflow")
    _clock_checks(st)
    if not whole:
        return
    if time_only:
        if fmask & TIME_M == 0:
            raise _Bad("format")
        f.has_date = fmask & DATE_M == DATE_M
        if f.zone is not None and f.abbrev is None and not f.has_date and not one_offset(f.zone):
            raise _Bad("format")  # (a zone whose offset changes needs a date to place it)
        return
    if fmask & DATE_M != DATE_M:
        raise _Bad("format")
    f.has_date = True


__all__ = [
    "ABBREVIATIONS",
    "DATE",
    "DATE_WORDS",
    "NUMBER",
    "SPECIAL",
    "STRING",
    "TIME",
    "TZ",
    "Fields",
    "InvalidZoneDisplacement",
    "Session",
    "UnknownTimeZone",
    "date2j",
    "date_order",
    "days_in_month",
    "j2date",
    "parse",
    "tokens",
    "zone_named",
]
