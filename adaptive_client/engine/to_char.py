"""PostgreSQL's ``to_char(timestamp | date, format)`` for the client engine.

The template patterns an application's report uses -- ``YYYY-MM-DD``, ``HH24:MI:SS``,
``Mon DD, YYYY``, ``FMDay`` -- formatted as PostgreSQL formats them (English names, names
blank-padded to nine characters unless ``FM``, ``FM`` dropping a field's leading zeros),
with quoted text copied (a backslash escapes inside quotes, and a double quote outside).
A format with anything else (``TH`` ordinal suffixes, ``TM`` translations, ``J``,
``CC``, time zones, a letter that is no pattern) is not compiled: :func:`compile_format`
returns None and the statement is refused rather than answered otherwise.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from functools import lru_cache

__all__ = ["compile_format", "to_char"]

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December"]  # fmt: skip
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

Field = Callable[[dt.datetime, bool], str]


def _num(value: Callable[[dt.datetime], int], width: int) -> Field:
    return lambda t, fm: str(value(t)) if fm else str(value(t)).zfill(width)


def _name(names: list[str], index: Callable[[dt.datetime], int], case: str, n: int) -> Field:
    def field(t: dt.datetime, fm: bool) -> str:
        word = names[index(t)][:n] if n else names[index(t)]
        word = word.upper() if case == "upper" else word.lower() if case == "lower" else word
        return word if fm or n else word.ljust(9)

    return field


def _hour12(t: dt.datetime) -> int:
    return t.hour % 12 or 12


def _meridiem(upper: bool, dots: bool) -> Field:
    def field(t: dt.datetime, fm: bool) -> str:
        word = ("A.M." if dots else "AM") if t.hour < 12 else ("P.M." if dots else "PM")
        return word if upper else word.lower()

    return field


def _month(t: dt.datetime) -> int:
    return t.month - 1


def _weekday(t: dt.datetime) -> int:
    return t.weekday()


# longest first where one pattern starts another (PostgreSQL's keyword order)
_PATTERNS: list[tuple[str, Field]] = [
    ("HH24", _num(lambda t: t.hour, 2)),
    ("HH12", _num(_hour12, 2)),
    ("HH", _num(_hour12, 2)),
    ("MI", _num(lambda t: t.minute, 2)),
    ("SS", _num(lambda t: t.second, 2)),
    ("MS", _num(lambda t: t.microsecond // 1000, 3)),
    ("US", _num(lambda t: t.microsecond, 6)),
    ("A.M.", _meridiem(True, True)),
    ("P.M.", _meridiem(True, True)),
    ("a.m.", _meridiem(False, True)),
    ("p.m.", _meridiem(False, True)),
    ("AM", _meridiem(True, False)),
    ("PM", _meridiem(True, False)),
    ("am", _meridiem(False, False)),
    ("pm", _meridiem(False, False)),
    ("IYYY", _num(lambda t: t.isocalendar()[0], 4)),
    ("IW", _num(lambda t: t.isocalendar()[1], 2)),
    ("ID", _num(lambda t: t.isocalendar()[2], 1)),
    ("YYYY", _num(lambda t: t.year, 4)),
    ("YYY", _num(lambda t: t.year % 1000, 3)),
    ("YY", _num(lambda t: t.year % 100, 2)),
    ("Y", _num(lambda t: t.year % 10, 1)),
    ("MONTH", _name(_MONTHS, _month, "upper", 0)),
    ("Month", _name(_MONTHS, _month, "title", 0)),
    ("month", _name(_MONTHS, _month, "lower", 0)),
    ("MON", _name(_MONTHS, _month, "upper", 3)),
    ("Mon", _name(_MONTHS, _month, "title", 3)),
    ("mon", _name(_MONTHS, _month, "lower", 3)),
    ("MM", _num(lambda t: t.month, 2)),
    ("DAY", _name(_DAYS, _weekday, "upper", 0)),
    ("Day", _name(_DAYS, _weekday, "title", 0)),
    ("day", _name(_DAYS, _weekday, "lower", 0)),
    ("DY", _name(_DAYS, _weekday, "upper", 3)),
    ("Dy", _name(_DAYS, _weekday, "title", 3)),
    ("dy", _name(_DAYS, _weekday, "lower", 3)),
    ("DDD", _num(lambda t: t.timetuple().tm_yday, 3)),
    ("DD", _num(lambda t: t.day, 2)),
    ("D", _num(lambda t: t.isoweekday() % 7 + 1, 1)),
    ("WW", _num(lambda t: (t.timetuple().tm_yday - 1) // 7 + 1, 2)),
    ("Q", _num(lambda t: (t.month - 1) // 3 + 1, 1)),
]

Part = str | tuple[Field, bool]

# longer patterns (not reproduced) that the ones above would otherwise split
_LONGER = ("Y,YYY", "SSSS", "IDDD", "HH24TH")


@lru_cache(maxsize=256)
def compile_format(fmt: str) -> tuple[Part, ...] | None:
    """The format as literal text and fields, or None where it holds what is not
    reproduced here."""
    parts: list[Part] = []
    i, n = 0, len(fmt)
    while i < n:
        fm = fmt.startswith("FM", i)
        j = i + 2 if fm else i
        if fmt.startswith(_LONGER, j):
            return None  # patterns that start like one above but mean another
        for name, field in _PATTERNS:
            if fmt.startswith(name, j):
                if fmt.startswith(("TH", "th"), j + len(name)):
                    return None  # ordinal suffixes: not reproduced
                parts.append((field, fm))
                i = j + len(name)
                break
        else:
            if fm:
                return None  # FM before no pattern
            ch = fmt[i]
            if ch == '"':
                end = i + 1
                text = []
                while end < n and fmt[end] != '"':
                    if fmt[end] == "\\" and end + 1 < n:
                        end += 1
                    text.append(fmt[end])
                    end += 1
                if end >= n:
                    return None
                parts.append("".join(text))
                i = end + 1
                continue
            if ch == "\\":
                # outside quotes a backslash is itself, except before a double quote
                quote = fmt.startswith('"', i + 1)
                parts.append('"' if quote else "\\")
                i += 2 if quote else 1
                continue
            if ch.isalpha():
                return None  # a pattern not reproduced here (or a letter PostgreSQL reads)
            parts.append(ch)
            i += 1
    return tuple(parts)


def to_char(value: dt.datetime | None, fmt: str | None) -> str | None:
    """The client engine's ``pg_to_char``: NULL in, NULL out, as PostgreSQL."""
    if value is None or fmt is None or fmt == "":
        return None  # (an empty format gives NULL in PostgreSQL)
    parts = compile_format(fmt)
    if parts is None:
        raise ValueError(f"to_char format not reproduced: {fmt!r}")
    return "".join(p if isinstance(p, str) else p[0](value, p[1]) for p in parts)
