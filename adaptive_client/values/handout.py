"""Values as the application receives them.

Some types are held inside the client in a form of their own, nearer PostgreSQL's than
the Python value psycopg gives: jsonb as its printed text (equal documents compare
equal), an interval as (months, days, microseconds), a timetz as (time, offset).  Their
modules register here the Python type of that form and the function giving psycopg's
value for it, with the result type codes whose columns may hold one; the cursor passes
every result through :func:`application_rows` when it hands rows out, so that no
internal form reaches the application, whatever path computed the value (decrypted,
evaluated by the client engine, or a constant the client read: ``SELECT %s::interval``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

# the type of an internal form -> the application's value of it, given the value and
# the result column's type code
APPLICATION: dict[type, Callable[[Any, int], Any]] = {}
# result type codes whose columns may hold internal forms
OIDS: set[int] = set()


def register(kind: type, value: Callable[[Any], Any], *oids: int) -> None:
    """``value`` gives the application's value of an internal form of type ``kind``."""
    APPLICATION[kind] = lambda v, oid: value(v)
    OIDS.update(oids)


def register_typed(kind: type, value: Callable[[Any, int], Any], *oids: int) -> None:
    """As :func:`register`, ``value`` also given the column's type code (one internal
    form standing for values of several types)."""
    APPLICATION[kind] = value
    OIDS.update(oids)


def application_rows(
    rows: list[tuple[Any, ...]], description: Sequence[Any] | None
) -> list[tuple[Any, ...]]:
    """``rows`` with their values in the application's form (see the module)."""
    if not description:
        return rows
    at = [(i, d[1]) for i, d in enumerate(description) if d[1] in OIDS]
    if not at:
        return rows
    # the columns that hold an internal form in some row (a set of types per column: a
    # large result of dates holds none, and is handed out as it is)
    at = [
        (i, oid) for i, oid in at if not APPLICATION.keys().isdisjoint({type(r[i]) for r in rows})
    ]
    if not at:
        return rows
    out = []
    for row in rows:
        if any(type(row[i]) in APPLICATION for i, _ in at):
            values = list(row)
            for i, oid in at:
                convert = APPLICATION.get(type(values[i]))
                if convert is not None:
                    values[i] = convert(values[i], oid)
            row = tuple(values)
        out.append(row)
    return out


__all__ = ["APPLICATION", "OIDS", "application_rows", "register", "register_typed"]
