"""PostgreSQL's interval arithmetic on its stored fields (``PgInterval``), for what the
client computes itself: ``interval_pl`` (field by field, 22008 where a field
overflows) and ``interval_div`` (a quotient's fractional months cascaded into days and
its fractional days into time, in double precision and with ``TSROUND``'s rounding to
the microsecond, as PostgreSQL's C computes them), which ``sum`` and ``avg`` of
intervals use."""

from __future__ import annotations

from psycopg import errors as pg_errors

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


def interval_div(span: PgInterval, factor: float) -> PgInterval:
    """``span / factor`` as PostgreSQL's ``interval_div`` computes it."""
    if factor == 0.0:
        raise pg_errors.DivisionByZero("division by zero")
    month_q = span.months / factor
    day_q = span.days / factor
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
    time = round(span.usec / factor + sec_remainder * _USECS_PER_SEC)
    return _checked(months, days, time)


__all__ = ["interval_div", "interval_sum"]
