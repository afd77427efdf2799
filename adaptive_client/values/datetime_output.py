"""Dates and timestamps printed as PostgreSQL prints them under the session's DateStyle.

``text(value, datestyle)`` for a ``date``, a ``timestamp`` (naive datetime) or a
``timestamptz`` (aware datetime, already in the session's zone): the output style is
the first word of DateStyle (``ISO``, ``SQL``, ``Postgres``, ``German``), the field order
(``DMY`` or not) decides where SQL and Postgres put the day.  A zone is shown as
PostgreSQL shows it: ISO by its offset (``+05:30``), the other styles by the zone's
abbreviation (``EST``, ``IST``; tzdata's numeric ones, ``+0545``, as they are).
Fractional seconds without trailing zeros, as PostgreSQL prints them.
"""

from __future__ import annotations

import datetime as dt
from typing import Final

_DAYS: Final = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS: Final = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct",
                  "Nov", "Dec")  # fmt: skip


MONTHS: Final = _MONTHS


def style_of(datestyle: str) -> tuple[str, bool]:
    """(output style, day before month) of a DateStyle setting (``"SQL, DMY"``)."""
    words = datestyle.replace(",", " ").upper().split()
    style = next((w for w in words if w in ("ISO", "SQL", "POSTGRES", "GERMAN")), "ISO")
    return style, "DMY" in words


def fraction_text(micro: int) -> str:
    """Fractional seconds as PostgreSQL prints them: ``.5``, nothing for none."""
    return f".{micro:06d}".rstrip("0") if micro else ""


def offset_text(offset: dt.timedelta | None) -> str:
    """A UTC offset as PostgreSQL prints it: ``+05:30``, ``-05``, ``+00``."""
    if offset is None:
        return ""
    seconds = int(offset.total_seconds())
    sign = "-" if seconds < 0 else "+"
    h, rest = divmod(abs(seconds), 3600)
    m, s = divmod(rest, 60)
    return f"{sign}{h:02d}" + (f":{m:02d}" if m or s else "") + (f":{s:02d}" if s else "")


def _date(d: dt.date, style: str, dmy: bool) -> str:
    if style == "ISO":
        return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"
    if style == "GERMAN":
        return f"{d.day:02d}.{d.month:02d}.{d.year:04d}"
    first, second = (d.day, d.month) if dmy else (d.month, d.day)
    sep = "/" if style == "SQL" else "-"
    return f"{first:02d}{sep}{second:02d}{sep}{d.year:04d}"


def text(value: dt.date, datestyle: str) -> str:
    """``value`` as PostgreSQL prints it under ``datestyle`` (see the module)."""
    style, dmy = style_of(datestyle)
    if not isinstance(value, dt.datetime):
        return _date(value, style, dmy)
    clock = (
        f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}{fraction_text(value.microsecond)}"
    )
    offset = value.utcoffset()
    if style == "ISO":
        zone = offset_text(offset)
        return f"{_date(value, style, dmy)} {clock}{zone}"
    zone = f" {value.tzname() or ''}" if offset is not None else ""
    if style == "POSTGRES":
        day, month = _DAYS[value.weekday()], _MONTHS[value.month - 1]
        middle = f"{value.day:02d} {month}" if dmy else f"{month} {value.day:02d}"
        return f"{day} {middle} {clock} {value.year:04d}{zone}"
    return f"{_date(value, style, dmy)} {clock}{zone}"


__all__ = ["MONTHS", "fraction_text", "offset_text", "style_of", "text"]
