"""A plain database and an encrypted one, and the checks that a column type behaves the
same in both: each value written (as a parameter or as a literal) is stored or refused
alike (same SQLSTATE), reads back equal (same Python type and value), and the rows order,
group and compare (``=``, ``<``, ``>``) alike."""

from __future__ import annotations

import datetime as dt
import itertools
import math
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import psycopg

import adaptive_client
from adaptive_client.catalog.keys import MasterKey

_SEQ = itertools.count()
# CREATE DATABASE options of an ICU database (the suites run on a C and an ICU one)
ICU = "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"


@dataclass
class Pair:
    plain: psycopg.Connection[Any]
    enc: adaptive_client.Connection

    def both(self, sql: str, params: Any = None) -> None:
        """A statement that must succeed on both (a SET, a DDL)."""
        self.plain.execute(sql, params)
        self.enc.execute(sql, params)


def open_pair(
    new_database: Callable[..., str],
    master_key: MasterKey,
    name: str,
    *,
    locale: str = "",
    config: dict[str, Any] | None = None,
) -> Iterator[Pair]:
    plain = psycopg.connect(new_database(f"{name}_p", locale=locale), autocommit=True)
    enc = adaptive_client.connect(
        new_database(f"{name}_e", locale=locale),
        master_key=master_key.hex(),
        config=config,
        autocommit=True,
    )
    try:
        yield Pair(plain, enc)
    finally:
        plain.close()
        enc.close()


def norm(v: Any) -> Any:
    """A value comparable across the two databases: its type and value (NaN equal to
    itself, a Decimal with its scale; a list element by element)."""
    if isinstance(v, list):
        return (type(v).__name__, tuple(norm(x) for x in v))
    if isinstance(v, float):
        return ("float", "nan" if math.isnan(v) else repr(v))
    if isinstance(v, Decimal):
        return ("Decimal", str(v))
    if isinstance(v, dt.datetime):
        return ("datetime", v.isoformat(), str(v.tzinfo) if v.tzinfo else None)
    if isinstance(v, dt.date | dt.time | dt.timedelta | uuid.UUID | bytes):
        return (type(v).__name__, str(v))
    return (type(v).__name__, repr(v))


def outcome(conn: Any, sql: str, params: Any = None) -> tuple[str, Any]:
    """``("ok", rows)`` or ``("error", sqlstate)``."""
    try:
        cur = conn.execute(sql, params)
        rows = cur.fetchall() if cur.description else None
    except psycopg.Error as exc:
        return ("error", exc.sqlstate or type(exc).__name__)
    return ("ok", None if rows is None else [tuple(norm(v) for v in r) for r in rows])


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@dataclass
class Report:
    """What one column's check found different (empty: the same)."""

    diffs: list[str]

    def __bool__(self) -> bool:
        return not self.diffs


def compare_column(
    pair: Pair,
    sql_type: str,
    values: Sequence[Any],
    *,
    as_literals: bool = False,
    ordered: bool = True,
    probes: Sequence[Any] = (),
    read: bool = True,
    ranges: bool = True,
) -> list[str]:
    """Write ``values`` into a fresh ``(id int, v sql_type)`` table of each database and
    compare everything; returns the differences found (an empty list: none).

    ``as_literals``: each value is a string written as a SQL literal, not a parameter.
    ``probes``: comparands of ``=``, ``<``, ``>`` (parameters); by default the values
    stored.  ``read``: read the values back (False where psycopg itself cannot load some,
    e.g. infinite dates: they are then compared through the ids only).  ``ranges``:
    compare with ``<``, ``>``, ``<=`` too (where ``ordered``)."""
    table = f"t{next(_SEQ)}"
    diffs: list[str] = []
    create = f"CREATE TABLE {table} (id integer PRIMARY KEY, v {sql_type})"
    made = [outcome(c, create) for c in (pair.plain, pair.enc)]
    if made[0] != made[1]:
        return [f"CREATE TABLE: plain {made[0]}, client {made[1]}"]
    if made[0][0] == "error":
        return []
    stored: list[Any] = []
    for i, value in enumerate(values):
        if as_literals:
            sql, params = f"INSERT INTO {table} VALUES ({i}, {literal(value)})", None
        else:
            sql, params = f"INSERT INTO {table} VALUES (%s, %s)", (i, value)
        got = [outcome(c, sql, params) for c in (pair.plain, pair.enc)]
        if got[0] != got[1]:
            diffs.append(f"INSERT {value!r}: plain {got[0]}, client {got[1]}")
        elif got[0][0] == "ok":
            stored.append(value)
    queries = [f"SELECT id FROM {table} ORDER BY id"]
    if read:
        queries.append(f"SELECT id, v FROM {table} ORDER BY id")
        queries.append(f"SELECT v, count(*) FROM {table} GROUP BY v")
    if ordered:
        queries.append(f"SELECT id FROM {table} ORDER BY v, id")
        queries.append(f"SELECT id FROM {table} ORDER BY v DESC, id")
    queries.append(f"SELECT count(*) FROM {table} GROUP BY v")
    queries.append(f"SELECT count(DISTINCT v) FROM {table}")
    for sql in queries:
        got = [outcome(c, sql) for c in (pair.plain, pair.enc)]
        if "GROUP BY" in sql:
            got = [(k, sorted(r) if r is not None else r) for k, r in got]
        if got[0] != got[1]:
            diffs.append(f"{sql}: plain {got[0]}, client {got[1]}")
    ops = ["="] + (["<", ">", "<="] if ordered and ranges else [])
    for probe in list(probes) or stored:
        for op in ops:
            if as_literals and not probes:
                sql, params = (
                    f"SELECT id FROM {table} WHERE v {op} {literal(probe)} ORDER BY id",
                    None,
                )
            else:
                sql, params = f"SELECT id FROM {table} WHERE v {op} %s ORDER BY id", (probe,)
            got = [outcome(c, sql, params) for c in (pair.plain, pair.enc)]
            if got[0] != got[1]:
                diffs.append(f"v {op} {probe!r}: plain {got[0]}, client {got[1]}")
    return diffs


def check(pair: Pair, sql_type: str, values: Sequence[Any], **options: Any) -> None:
    """:func:`compare_column`, failing with the differences found."""
    diffs = compare_column(pair, sql_type, values, **options)
    assert not diffs, "\n".join(d[:400] for d in diffs[:12])
