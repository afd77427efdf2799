"""``CREATE TABLE ... AS query`` and ``SELECT ... INTO table``: a table made from a
query's result, as three statements of the client's own.

1. The query runs (any query the client answers: on the server, split, or in its
   engine), its rows held as the client holds them;
2. ``CREATE TABLE`` with the result's column names (or those the statement lists) and
   types -- each column's declared type where it comes from a column, ``varchar(n)``,
   ``numeric(p,s)`` and the precisions included, as PostgreSQL makes them;
3. the rows inserted (encrypted like any application's rows), unless ``WITH NO DATA``.

One unit, as PostgreSQL's: its own transaction in autocommit mode, else the
application's (a failure fails it).  The row count is the rows written, as psycopg
reports PostgreSQL's ``SELECT n``; ``IF NOT EXISTS`` over an existing table writes
nothing, with PostgreSQL's notice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from sqlglot import exp

from ..errors import DuplicateTable, UnsupportedQuery
from ..syntax.names import folded, show_names, shown
from ..values.sent_types import PG_TYPE_NAMES
from .session_protocol import StatementCursor
from .statement_units import as_one_statement

logger = logging.getLogger("adaptive_client")

Run = Callable[..., None]

_LENGTHS = frozenset({"varchar", "bpchar"})
_PRECISIONS = frozenset({"time", "timetz", "timestamp", "timestamptz", "interval"})


def is_create_as(stmt: exp.Expression) -> bool:
    """``CREATE TABLE ... AS`` or ``SELECT ... INTO``."""
    if isinstance(stmt, exp.Select) and stmt.args.get("into") is not None:
        return True
    return (
        isinstance(stmt, exp.Create)
        and str(stmt.args.get("kind") or "").upper() == "TABLE"
        and isinstance(stmt.expression, exp.Query)
    )


def column_type(desc: Any) -> str:
    """A result column's type as DDL (``desc``: its description entry), or refused."""
    info = psycopg.adapters.types.get(desc[1])
    if info is None:
        raise UnsupportedQuery(
            f'CREATE TABLE ... AS: the type of column "{desc[0]}" (OID {desc[1]})',
            "CREATE TABLE AS",
        )
    array = desc[1] == info.array_oid and desc[1] != info.oid
    name = info.name
    if name in _LENGTHS and desc[2] is not None:
        text = f"{'char' if name == 'bpchar' else name}({desc[2]})"
    elif name == "numeric" and desc[4] is not None:
        text = f"numeric({desc[4]},{desc[5] or 0})"
    elif name in _PRECISIONS and desc[4] is not None:
        text = f"{name}({desc[4]})"
    else:  # (bpchar without a length: unbounded, which "character" is not)
        text = name if name == "bpchar" else PG_TYPE_NAMES.get(name, name)
    return text + "[]" if array else text


def _parts(stmt: exp.Expression) -> tuple[exp.Table, list[str], exp.Expression, bool, bool]:
    """(the new table, the column names listed, the query, with data, IF NOT EXISTS)."""
    if isinstance(stmt, exp.Select):
        into = stmt.args["into"]
        if into.args.get("temporary"):
            raise UnsupportedQuery("SELECT ... INTO TEMPORARY table", "temporary table")
        query = stmt.copy()
        query.set("into", None)
        return into.this, [], query, True, False
    target = stmt.this
    names: list[str] = []
    if isinstance(target, exp.Schema):
        names = [i.name for i in target.expressions]
        target = target.this
    if any(isinstance(p, exp.TemporaryProperty) for p in _properties(stmt)):
        raise UnsupportedQuery("CREATE TEMPORARY TABLE ... AS", "temporary table")
    no_data = any(
        isinstance(p, exp.WithDataProperty) and p.args.get("no") for p in _properties(stmt)
    )
    return target, names, stmt.expression, not no_data, bool(stmt.args.get("exists"))


def _properties(stmt: exp.Expression) -> list[exp.Expression]:
    """A CREATE's properties (UNLOGGED, TEMPORARY, WITH [NO] DATA ...); none for a
    SELECT ... INTO."""
    properties = stmt.args.get("properties")
    return list(properties.expressions) if properties is not None else []


def run_create_as(cur: StatementCursor, stmt: exp.Expression, params: Any, run: Run) -> None:
    """Run ``stmt`` (see the module); its row count on ``cur``."""
    conn = cur.connection
    table, listed, query, with_data, if_not_exists = _parts(stmt)
    if conn.catalog.has_relation(table.name):
        if if_not_exists:
            logger.info('relation "%s" already exists, skipping', shown(table.name))
            cur.set_result([], None, -1)
            return
        # (PostgreSQL's check before the query runs: its errors do not come first)
        raise DuplicateTable(f'relation "{shown(table.name)}" already exists')
    unlogged = any(isinstance(p, exp.UnloggedProperty) for p in _properties(stmt))

    def steps() -> int:
        step = conn.cursor()
        step.internal_values = True  # (the values as the client holds them: 2.50, not 2.5)
        run(step, query.copy().transform(show_names).sql("postgres"), params)
        rows, desc, _ = step.result()
        if len(listed) > len(desc):
            raise pg_errors.SyntaxError("too many column names were specified")
        names = [shown(n) for n in listed] + [d[0] for d in desc[len(listed) :]]
        seen: set[str] = set()
        for name in names:
            if folded(name, True) in seen:
                raise pg_errors.DuplicateColumn(f'column "{name}" specified more than once')
            seen.add(folded(name, True))
        quoted = [exp.column(n, quoted=True).sql("postgres") for n in names]
        name = exp.column(shown(table.name), quoted=True).sql("postgres")
        columns = ", ".join(f"{q} {column_type(d)}" for q, d in zip(quoted, desc, strict=True))
        run(step, f"CREATE {'UNLOGGED ' if unlogged else ''}TABLE {name} ({columns})", None)
        if not with_data:
            return -1  # (PostgreSQL's CREATE TABLE AS without data counts no rows)
        if not rows:
            return 0
        marks = ", ".join(["%s"] * len(names))
        insert = f"INSERT INTO {name} ({', '.join(quoted)}) VALUES ({marks})"
        run(step, insert, None, many=[tuple(r) for r in rows])
        return len(rows)

    cur.set_result([], None, as_one_statement(conn, steps))


__all__ = ["column_type", "is_create_as", "run_create_as"]
