"""The server's clock: ``now()``, ``CURRENT_TIMESTAMP``, ``CURRENT_DATE``, ...

A statement that reads the clock and has to be encrypted or finished on the client
(``INSERT ... VALUES (..., now())``, ``WHERE placed > now() - interval '7 days'``) takes
the clock's values from the server: they are the server's to give (the transaction's
start, the session's time zone), reveal nothing the server does not know, and read once
per execution, in the statement's transaction, they are the values PostgreSQL itself
would use.  Each such function becomes a parameter whose value is read by
:class:`ServerClock` the first time a statement execution binds it.

``now()`` is a ``timestamp with time zone``, which no encrypted column stores: its value
is a :class:`SessionTimestamp`, an aware datetime in the session's time zone, which the
timestamp and date encodings take as PostgreSQL's assignment cast takes it (the local
time, the local date).  The client engine compares and shifts it in the session's time
zone too.
"""

from __future__ import annotations

import datetime as dt
from contextvars import ContextVar
from typing import Any

from sqlglot import exp

from ..errors import UnsupportedQuery

__all__ = [
    "CLOCK_PREFIX",
    "SERVER_CLOCK",
    "ServerClock",
    "SessionTimestamp",
    "clock_kind",
    "clock_name",
    "clock_param",
    "is_clock_cast",
    "session_zone",
    "uses_clock",
]

# the client engine's parameter for a clock value: __clock_<kind>
CLOCK_PREFIX = "__clock_"

# functions written without parentheses that sqlglot parses as nodes of their own, and
# those it leaves anonymous; clock_timestamp() changes within a statement: not here
_NAMED = {"now": "now", "transaction_timestamp": "now", "statement_timestamp": "statement"}

# the kinds' server expressions, read in one query
_READ = {
    "now": "now()",
    "statement": "statement_timestamp()",
    "local": "localtimestamp",
    "date": "current_date",
}


def clock_kind(node: Any) -> str | None:
    """``now`` / ``statement`` (timestamp with time zone), ``local`` (LOCALTIMESTAMP) or
    ``date`` (CURRENT_DATE) where ``node`` reads the server's clock, else None."""
    if isinstance(node, exp.CurrentTimestamp) and not node.this:
        return "now"
    if isinstance(node, exp.CurrentDate) and not node.this:
        return "date"
    if isinstance(node, exp.Localtimestamp) and not node.this:
        return "local"
    if isinstance(node, exp.Anonymous) and not node.expressions:
        return _NAMED.get(node.name.lower())
    return None


# the type OID of each kind's value, as PostgreSQL describes it
OIDS = {"now": 1184, "statement": 1184, "local": 1114, "date": 1082}


def clock_name(node: exp.Expression) -> str:
    """The output column's name PostgreSQL gives a clock function."""
    if node.meta.get("pg_function"):
        return str(node.meta["pg_function"])
    if isinstance(node, exp.Anonymous):
        return node.name.lower()
    names: dict[type, str] = {
        exp.CurrentTimestamp: "current_timestamp",
        exp.CurrentDate: "current_date",
        exp.Localtimestamp: "localtimestamp",
    }
    return names.get(type(node), "?column?")


def uses_clock(stmt: exp.Expression) -> bool:
    """Does ``stmt`` read the clock, or may it need the session's time zone (date_trunc
    of a date is a timestamptz)?  (The clock itself is read only if a value is bound.)"""
    return any(
        clock_kind(node) is not None or isinstance(node, exp.TimestampTrunc) for node in stmt.walk()
    )


def session_zone() -> str:
    """The session's TimeZone setting, read with the clock."""
    return str(clock_param("zone")(()))


class SessionTimestamp(dt.datetime):
    """``now()``'s value: aware, in the session's time zone."""


class ServerClock:
    """The clock's values for one statement execution, read from the server when first
    needed (one query, in the statement's transaction)."""

    __slots__ = ("_conn", "_values")

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        self._values: dict[str, Any] | None = None

    def value(self, kind: str) -> Any:
        if self._values is None:
            kinds = list(_READ)
            # (in binary: the session's DateStyle may be one psycopg's text loaders do not
            # read, 'Postgres' or 'SQL')
            row = self._conn.execute(
                "SELECT " + ", ".join(_READ[k] for k in kinds) + ", current_setting('TimeZone')",
                binary=True,
            ).fetchone()
            zone = str(row[-1])
            values = dict(zip(kinds, row, strict=False))
            for k in ("now", "statement"):
                values[k] = _session(values[k])
            values["zone"] = zone
            self._values = values
        return self._values[kind]


def _session(value: dt.datetime) -> SessionTimestamp:
    # (field by field: datetime.combine drops the fold of an hour a DST change repeats)
    return SessionTimestamp(
        value.year,
        value.month,
        value.day,
        value.hour,
        value.minute,
        value.second,
        value.microsecond,
        tzinfo=value.tzinfo,
        fold=value.fold,
    )


SERVER_CLOCK: ContextVar[ServerClock | None] = ContextVar("SERVER_CLOCK", default=None)


def clock_param(kind: str) -> Any:
    """A parameter builder giving the clock's ``kind`` value of the current execution."""

    def build(_params: Any) -> Any:
        clock = SERVER_CLOCK.get()
        if clock is None:
            raise UnsupportedQuery(
                "the server's clock (now(), CURRENT_DATE, ...) read outside a statement execution",
                "clock",
            )
        return clock.value(kind)

    return build


# the client engine's type of each kind's value
ENGINE_TYPES = {
    "now": "TIMESTAMPTZ",
    "statement": "TIMESTAMPTZ",
    "local": "TIMESTAMP",
    "date": "DATE",
}


def clock_parameters(tree: exp.Expression) -> exp.Expression:
    """The clock functions of a client-evaluated statement as typed parameters of the
    client engine (``CAST(__clock_now AS TIMESTAMPTZ)``)."""

    def swap(node: exp.Expression) -> exp.Expression:
        kind = clock_kind(node)
        if kind is None:
            return node
        param = exp.Placeholder(this=CLOCK_PREFIX + kind)
        param.meta["pg_function"] = clock_name(node)  # the output's name
        return exp.Cast(this=param, to=exp.DataType.build(ENGINE_TYPES[kind], dialect="postgres"))

    return tree.transform(swap)


def is_clock_cast(node: exp.Expression) -> bool:
    """A clock value's typed parameter (:func:`clock_parameters`)."""
    return (
        isinstance(node, exp.Cast)
        and isinstance(node.this, exp.Placeholder)
        and node.this.name.startswith(CLOCK_PREFIX)
    )
