"""Casts of text to ``date`` and ``timestamp`` in the client engine, read as
PostgreSQL's input functions read them (values/datetime_input.py: every form of its
manual, the session's DateStyle field order, ``epoch`` and the infinities) -- DuckDB's
own casts take fewer forms and read others.  Each function gives the value as the
engine's text of it, which the statement casts to its type; errors are PostgreSQL's
(22007, 22008).  A value read from the clock (``today``, ``now``) is refused: the
engine has no transaction time to read it at."""

from __future__ import annotations

import re
from typing import Final

from ..errors import DatetimeOutOfRange
from ..values import datetime_input, far_datetime
from ..values.datetime_fields import Fields, date2j, j2date
from .markers import REFUSAL_MARKER

_CLOCK_WORDS: Final = re.compile(r"\b(now|today|tomorrow|yesterday)\b", re.IGNORECASE)
_DATE_END_JULIAN: Final = 2147483494  # (date_in's last day plus one)


class ClockInput(ValueError):
    """Text the client engine cannot read: a value of the server's clock."""


def _fields(text: str, kind: str, datestyle: str) -> Fields:
    if _CLOCK_WORDS.search(text):
        raise ClockInput(f"{REFUSAL_MARKER}a {kind} read from the clock ({text!r})")
    session = datetime_input.Session(order=datetime_input.date_order(datestyle))
    return datetime_input.parse(text, kind, session)


def _date_text(year: int, month: int, day: int) -> str:
    """The engine's text of a date (astronomical ``year``: 0 is 1 BC)."""
    era = " (BC)" if year <= 0 else ""
    return f"{abs(year - 1) if year <= 0 else year:04d}-{month:02d}-{day:02d}{era}"


def date_in(text: str, datestyle: str) -> str:
    """``text::date``."""
    f = _fields(text, "date", datestyle)
    if f.special == "epoch":
        return "1970-01-01"
    if f.special is not None:
        return f.special
    julian = date2j(f.year, f.month, f.day)
    if not 0 <= julian < _DATE_END_JULIAN:
        raise DatetimeOutOfRange(f'date out of range: "{text}"')
    return _date_text(*j2date(julian))


def timestamp_in(text: str, datestyle: str) -> str:
    """``text::timestamp`` (a zone written in the text is ignored, as PostgreSQL's
    timestamp_in ignores it); years outside 1-9999 are refused."""
    f = _fields(text, "timestamp", datestyle)
    if f.special == "epoch":
        return "1970-01-01 00:00:00"
    if f.special is not None:
        return f.special
    day = date2j(f.year, f.month, f.day) - far_datetime.POSTGRES_EPOCH_JDATE
    clock = ((f.hour * 60 + f.minute) * 60 + f.second) * 1_000_000 + f.micro
    micros = day * far_datetime.US_PER_DAY + clock
    if not far_datetime.MIN_TIMESTAMP <= micros < far_datetime.END_TIMESTAMP:
        raise DatetimeOutOfRange(f'timestamp out of range: "{text}"')
    days, clock = divmod(micros, far_datetime.US_PER_DAY)
    year, month, dom = j2date(days + far_datetime.POSTGRES_EPOCH_JDATE)
    if not 1 <= year <= 9999:
        raise ClockInput(f"{REFUSAL_MARKER}a timestamp outside the years 1-9999 ({text!r})")
    seconds, micro = divmod(clock, 1_000_000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    return f"{year:04d}-{month:02d}-{dom:02d} {hour:02d}:{minute:02d}:{second:02d}.{micro:06d}"


__all__ = ["date_in", "timestamp_in"]
