"""The session a value is read, encoded or printed for: the connection running the
current statement, as the values see it.

Values read a few things of their session and nothing else: the settings the server
reports by ParameterStatus (DateStyle, IntervalStyle, TimeZone: no round trip), the
loaders and dumpers registered on the connection (json, far dates), and the server's
clock when an input needs it (``now``, ``today``).  ``RUNTIME`` holds the session of the
statement running in this context: whoever runs a statement sets it (a connection sets
its run-time state, ``defaults.Runtime``, which is a :class:`SessionRuntime`); outside a
statement it is None and values take PostgreSQL's defaults (UTC, ``ISO, MDY``).

Contract: :func:`connection` is the running statement's open connection or None;
:func:`time_zone` its TimeZone as a ``tzinfo``; :func:`input_session` what the date/time
input rules read (``datetime_input.Session``).  This module imports only the lowest
value modules (the input rules, the clock), so that every value module may import it.
"""

from __future__ import annotations

import datetime as dt
from contextvars import ContextVar
from functools import lru_cache
from typing import Any, Protocol

import psycopg

from ..errors import EncodingError
from . import datetime_input
from .clock import SERVER_CLOCK

__all__ = [
    "RUNTIME",
    "SessionRuntime",
    "connection",
    "input_session",
    "time_zone",
]


class SessionRuntime(Protocol):
    """What the values read of the session running the current statement."""

    @property
    def conn(self) -> psycopg.Connection[Any]:
        """The session's connection (its reported settings, adapters and clock)."""
        ...


RUNTIME: ContextVar[SessionRuntime | None] = ContextVar("RUNTIME", default=None)


def connection() -> psycopg.Connection[Any] | None:
    """The open connection of the statement running in this context, else None."""
    conn = getattr(RUNTIME.get(), "conn", None)
    return None if conn is None or conn.closed else conn


@lru_cache(maxsize=64)
def _input_settings(datestyle: str, zone: str) -> tuple[str, dt.tzinfo | None]:
    return datetime_input.date_order(datestyle), datetime_input.zone_named(zone)


def input_session() -> datetime_input.Session:
    """The input rules' view of the session running the current statement: its
    DateStyle and TimeZone as the server reports them (ParameterStatus, no round trip),
    its clock read from the server when an input needs it (``now``, ``today``)."""
    conn = connection()
    if conn is None:  # (no statement running: PostgreSQL's defaults)
        return datetime_input.Session()
    status = conn.pgconn.parameter_status
    style = (status(b"DateStyle") or b"ISO, MDY").decode()
    name = (status(b"TimeZone") or b"UTC").decode()
    order, zone = _input_settings(style, name)
    if zone is None:
        raise EncodingError(f"the session's TimeZone {name!r} is not a zone this client knows")

    def clock() -> dt.datetime:
        server = SERVER_CLOCK.get()
        if server is not None:
            return server.value("now")
        # binary: psycopg's text loader reads a timestamptz only in DateStyle ISO
        row = conn.execute("SELECT now()", binary=True).fetchone()
        return row[0]  # type: ignore[index]

    return datetime_input.Session(order=order, zone=zone, clock=clock)


def time_zone() -> dt.tzinfo:
    """The session's TimeZone (read on every timestamptz value: no Session built)."""
    conn = connection()
    if conn is None:
        return dt.UTC
    name = conn.pgconn.parameter_status(b"TimeZone")
    zone = _zone_of(name or b"UTC")
    if zone is None:
        raise EncodingError(f"the session's TimeZone {name!r} is not a zone this client knows")
    return zone


@lru_cache(maxsize=64)
def _zone_of(name: bytes) -> dt.tzinfo | None:
    return datetime_input.zone_named(name.decode())
