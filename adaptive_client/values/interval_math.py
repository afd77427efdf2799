"""PostgreSQL's interval arithmetic on its stored fields (``PgInterval``), for what the
client computes itself: ``interval_pl``/``interval_mi``/``interval_um`` (field by
field, 22008 where a field overflows), ``interval_mul`` and ``interval_div`` (a
product's or quotient's fractional months cascaded into days and its fractional days
into time, in double precision and with ``TSROUND``'s rounding to the microsecond, as
PostgreSQL's C computes them; ``sum`` and ``avg`` of intervals use them), the
``justify_*`` functions, and an interval added to a timestamp, a timestamptz (months
and days on the local calendar of the session's zone, the time on the instant) or a
date."""

from __future__ import annotations

import calendar
import datetime as dt

from psycopg import errors as pg_errors

from .datetime_fields import Fields
from .interval_encoding import PgInterval

_INT32 = 2**31
_INT64 = 2**63
_DAYS_PER_MONTH = 30
_SECS_PER_DAY = 86_400
_USECS_PER_SEC = 1_000_000


def _out_of_range() -> pg_errors.DatetimeFieldOverflow:
    return pg_errors.DatetimeFieldOverflow("interval out of range")


def _checked(months: int, days: int, usec: int) -> PgInterval:
    if not (-_INT32 <= months < _INT32 and -_INT32 <= days < _INT32 and -_INT64 <= usec < _INT64):
        raise _out_of_range()
    return PgInterval(months, days, usec)


def interval_sum(values: list[PgInterval]) -> PgInterval:
    """The sum PostgreSQL's ``interval_pl`` accumulates (an overflow is 22008 at once:
    a field past its range part way is past it at the end only if no later value
    brings it back, and PostgreSQL stops at the first)."""
    months = days = usec = 0
    for v in values:
        months, days, usec = months + v.months, days + v.days, usec + v.usec
        _checked(months, days, usec)
    return PgInterval(months, days, usec)


def _tsround(x: float) -> float:
    return round(x * _USECS_PER_SEC) / _USECS_PER_SEC  # (round: half to even, as rint)


def interval_add(a: PgInterval, b: PgInterval) -> PgInterval:
    """``a + b`` (``interval_pl``)."""
    return _checked(a.months + b.months, a.days + b.days, a.usec + b.usec)


def interval_subtract(a: PgInterval, b: PgInterval) -> PgInterval:
    """``a - b`` (``interval_mi``)."""
    return _checked(a.months - b.months, a.days - b.days, a.usec - b.usec)


def interval_negate(a: PgInterval) -> PgInterval:
    """``-a`` (``interval_um``: the most negative field has no negation)."""
    return _checked(-a.months, -a.days, -a.usec)


def interval_div(span: PgInterval, factor: float) -> PgInterval:
    """``span / factor`` as PostgreSQL's ``interval_div`` computes it."""
    if factor == 0.0:
        raise pg_errors.DivisionByZero("division by zero")
    return _cascaded(span, span.months / factor, span.days / factor, span.usec / factor)


def interval_mul(span: PgInterval, factor: float) -> PgInterval:
    """``span * factor`` as PostgreSQL's ``interval_mul`` computes it."""
    return _cascaded(span, span.months * factor, span.days * factor, span.usec * factor)


def _cascaded(span: PgInterval, month_q: float, day_q: float, time_q: float) -> PgInterval:
    """The fields of a scaled interval: the whole months and days of their scaled
    values, their fractions cascaded down (never up: justify_* does that)."""
    if month_q != month_q or not -_INT32 <= month_q < _INT32:
        raise _out_of_range()
    if day_q != day_q or not -_INT32 <= day_q < _INT32:
        raise _out_of_range()
    months = int(month_q)  # (C's cast: toward zero)
    days = int(day_q)
    month_remainder_days = _tsround((month_q - months) * _DAYS_PER_MONTH)
    sec_remainder = _tsround(
        (day_q - days + month_remainder_days - int(month_remainder_days)) * _SECS_PER_DAY
    )
    if abs(sec_remainder) >= _SECS_PER_DAY:
        whole = int(sec_remainder / _SECS_PER_DAY)
        days += whole
        sec_remainder -= whole * _SECS_PER_DAY
    days += int(month_remainder_days)
    time = time_q + sec_remainder * _USECS_PER_SEC
    if time != time or not -_INT64 <= time < _INT64:
        raise _out_of_range()
    return _checked(months, days, round(time))


def justify_hours(span: PgInterval) -> PgInterval:
    """Whole 24 hours of the time field made days (the remainder keeps the time's
    sign, the days then adjusted so that both signs agree)."""
    days, usec = _carried(span.days, span.usec, _USECS_PER_DAY)
    return _checked(span.months, *_agreeing(days, usec, _USECS_PER_DAY))


def justify_days(span: PgInterval) -> PgInterval:
    """Whole 30 days made months (signs made to agree, as ``justify_hours``)."""
    months, days = _carried(span.months, span.days, _DAYS_PER_MONTH)
    return _checked(*_agreeing(months, days, _DAYS_PER_MONTH), span.usec)


def justify_interval(span: PgInterval) -> PgInterval:
    """Whole days of the time made days, then whole months of the days months, signs
    agreeing across all three fields (``interval_justify_interval``'s order)."""
    days, usec = _carried(span.days, span.usec, _USECS_PER_DAY)
    months, days = _carried(span.months, days, _DAYS_PER_MONTH)
    months, days = _agreeing(months, days, _DAYS_PER_MONTH, usec)
    return _checked(months, *_agreeing(days, usec, _USECS_PER_DAY))


def _carried(whole: int, part: int, per: int) -> tuple[int, int]:
    """The whole units (``per`` parts each) of ``part`` carried into ``whole``, as C's
    truncating division carries them: the part keeps its sign."""
    carried = _trunc_div(part, per)
    return whole + carried, part - carried * per


def _agreeing(whole: int, part: int, per: int, rest: int = 0) -> tuple[int, int]:
    """``whole`` and ``part`` made to share a sign, one unit borrowed (a zero part
    takes the sign of ``rest``, the smaller field below it)."""
    sign = part or rest
    if whole > 0 and sign < 0:
        return whole - 1, part + per
    if whole < 0 and sign > 0:
        return whole + 1, part - per
    return whole, part


_USECS_PER_DAY = _SECS_PER_DAY * _USECS_PER_SEC


def _trunc_div(a: int, b: int) -> int:
    """C's integer division (toward zero)."""
    q = abs(a) // b
    return q if a >= 0 else -q


def timestamp_add(ts: dt.datetime, span: PgInterval) -> dt.datetime:
    """A timestamp (naive) plus ``span`` (``timestamp_pl_interval``): months on the
    calendar (the day of month kept, else the month's last), then days, then time."""
    try:
        if span.months:
            ts = _months_added(ts, span.months)
        if span.days:
            ts = ts + dt.timedelta(days=span.days)
        return ts + dt.timedelta(microseconds=span.usec)
    except OverflowError:
        raise pg_errors.DatetimeFieldOverflow("timestamp out of range") from None


def timestamptz_add(ts: dt.datetime, span: PgInterval, zone: dt.tzinfo) -> dt.datetime:
    """A timestamptz plus ``span`` (``timestamptz_pl_interval``): months, then days, on
    the local calendar of ``zone`` (the session's), each result placed in the zone as
    PostgreSQL places a local time; then the time added to the instant."""
    try:
        if span.months:
            ts = _placed(_months_added(_local(ts, zone), span.months), zone)
        if span.days:
            ts = _placed(_local(ts, zone) + dt.timedelta(days=span.days), zone)
        return (ts + dt.timedelta(microseconds=span.usec)).astimezone(zone)
    except OverflowError:
        raise pg_errors.DatetimeFieldOverflow("timestamp out of range") from None


def _local(ts: dt.datetime, zone: dt.tzinfo) -> dt.datetime:
    return ts.astimezone(zone).replace(tzinfo=None)


def _placed(local: dt.datetime, zone: dt.tzinfo) -> dt.datetime:
    """A local time in ``zone`` as PostgreSQL places it (a skipped time takes the offset
    before the change, a repeated one the later, standard, offset)."""
    f = Fields(local.year, local.month, local.day, local.hour, local.minute, zone=zone)
    return (local - dt.timedelta(seconds=f.offset_at(zone))).replace(tzinfo=dt.UTC)


def _months_added(ts: dt.datetime, months: int) -> dt.datetime:
    index = ts.year * 12 + ts.month - 1 + months
    year, month = divmod(index, 12)
    month += 1
    if not 1 <= year <= 9999:
        raise OverflowError
    last = calendar.monthrange(year, month)[1]
    return ts.replace(year=year, month=month, day=min(ts.day, last))


__all__ = [
    "interval_add",
    "interval_div",
    "interval_mul",
    "interval_negate",
    "interval_subtract",
    "interval_sum",
    "justify_days",
    "justify_hours",
    "justify_interval",
    "timestamp_add",
    "timestamptz_add",
]
