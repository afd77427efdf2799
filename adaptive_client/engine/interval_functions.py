"""Interval arithmetic over held intervals, as the client engine calls it (the row
functions of engine/row_functions.py over an interval): an interval arrives as its
stored fields (``PgInterval``: months, days, microseconds), a timestamptz as an aware
datetime, a timestamp as a naive one, a date as a date.  The functions run in the
statement's session (engine/row_calls.py): a timestamptz's months and days are added on
the calendar of its TimeZone, an interval cast to text prints in its IntervalStyle.  The
arithmetic itself is PostgreSQL's (values/interval_math.py).

An interval read without its fields (a span: '1 mon' and '30 days' alike) cannot be
added to a date: such a value is refused, never answered as 30 days.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from ..values import interval_math as im
from ..values import text_output
from ..values.interval_encoding import PgInterval, interval_text
from ..values.session import time_zone
from .runtime import refusal


def _fields(v: Any) -> PgInterval:
    if isinstance(v, PgInterval):
        return v
    raise refusal("interval arithmetic on an interval read without its fields")


def _float(v: Any) -> float:
    return float(v)  # (an integer or a numeric operand: PostgreSQL's cast to float8)


def plus(enc: Any, a: Any, b: Any) -> PgInterval:
    return im.interval_add(_fields(a), _fields(b))


def minus(enc: Any, a: Any, b: Any) -> PgInterval:
    return im.interval_subtract(_fields(a), _fields(b))


def negated(enc: Any, a: Any) -> PgInterval:
    return im.interval_negate(_fields(a))


def times(enc: Any, a: Any, factor: Any) -> PgInterval:
    return im.interval_mul(_fields(a), _float(factor))


def times_left(enc: Any, factor: Any, a: Any) -> PgInterval:
    return im.interval_mul(_fields(a), _float(factor))


def divided(enc: Any, a: Any, factor: Any) -> PgInterval:
    return im.interval_div(_fields(a), _float(factor))


def justify_hours(enc: Any, a: Any) -> PgInterval:
    return im.justify_hours(_fields(a))


def justify_days(enc: Any, a: Any) -> PgInterval:
    return im.justify_days(_fields(a))


def justify_interval(enc: Any, a: Any) -> PgInterval:
    return im.justify_interval(_fields(a))


def text(enc: Any, a: Any) -> str:
    """``interval::text``: its output in the session's IntervalStyle."""
    return interval_text(_fields(a), text_output.current().intervalstyle)


def _instant(ts: Any, span: PgInterval) -> Any:
    if isinstance(ts, dt.datetime) and ts.tzinfo is not None:
        return im.timestamptz_add(ts, span, time_zone())
    if isinstance(ts, dt.datetime):
        return im.timestamp_add(ts, span)
    if isinstance(ts, dt.date):  # (a date is read as its midnight: a timestamp)
        return im.timestamp_add(dt.datetime(ts.year, ts.month, ts.day), span)
    raise refusal(f"interval arithmetic on a {type(ts).__name__} value")


def moment_plus(enc: Any, ts: Any, span: Any) -> Any:
    """A timestamptz, timestamp or date plus an interval."""
    return _instant(ts, _fields(span))


def plus_moment(enc: Any, span: Any, ts: Any) -> Any:
    return _instant(ts, _fields(span))


def moment_minus(enc: Any, ts: Any, span: Any) -> Any:
    return _instant(ts, im.interval_negate(_fields(span)))


__all__ = [
    "divided",
    "justify_days",
    "justify_hours",
    "justify_interval",
    "minus",
    "moment_minus",
    "moment_plus",
    "negated",
    "plus",
    "plus_moment",
    "text",
    "times",
    "times_left",
]
