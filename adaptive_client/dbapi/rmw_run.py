"""An UPDATE computed on the client, run: the read of its rows, their new values, their
writes (cursor.py hands a plan with ``rmw`` here)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import psycopg
from psycopg import sql

from ..compile.plan import CURRENT_PARAMS, Compiled, Params, decrypt_columns
from ..stats import STATS
from .session_protocol import StatementCursor


def run_rmw(cur: StatementCursor, plan: Compiled, params: Params) -> None:
    """An UPDATE computed on the client (compile/update_delete.py ``RmwUpdate``): its
    rows read (locked), or taken from the rows the transaction holds, their new values
    computed and encrypted, each written back by its ``ctid``."""
    conn = cur.connection
    rmw = plan.rmw
    assert rmw is not None
    CURRENT_PARAMS.set(params)
    ctx = conn.pg.transaction() if conn.pg.autocommit else contextlib.nullcontext()
    with ctx:
        key = rmw.lock_key(params) if rmw.lock_key is not None else None
        kept = conn.locked_rows.get(key) if key is not None else None
        if kept is not None and (kept[0] is None or rmw.reads <= kept[0]):
            rows = [kept[1]]  # this transaction holds the row lock: no SELECT needed
            STATS.bound().locked_reuse += 1
        else:
            select = rmw.select
            with STATS.crypto():
                bound_select = select.bind_positional(params)
            rows = cur.run_server(select.positional_sql, bound_select, True)[0]
        updates = []
        with STATS.crypto():
            for row in rows:
                opened = rmw.open_row(row)
                pairs = rmw.seal([fn(opened, params) for _, fn in rmw.assignments])
                updates.append((pairs, row[0]))
        returned: list[tuple[Any, ...]] = []
        if updates and rmw.returning is None:
            write = rmw.write_sql([a for a, _ in updates[0][0]])
            data = [[v for _, v in pairs] + [ctid] for pairs, ctid in updates]
            if len(data) == 1:
                cur.run_server(write, data[0], False)
            else:
                with _checked_at_the_end(conn.pg, rmw.table.statement_checked):
                    psycopg.RawCursor(conn.pg).executemany(write, data)
        elif updates:
            cols = [a for a, _ in updates[0][0]]
            stmt = sql.SQL("UPDATE {} AS {} SET {} WHERE {}.ctid = %s {}").format(
                sql.Identifier(rmw.table.anon),
                sql.Identifier(rmw.alias),
                sql.SQL(", ").join(sql.SQL("{} = %s").format(sql.Identifier(c)) for c in cols),
                sql.Identifier(rmw.alias),
                sql.SQL((rmw.returning or "").replace("%", "%%")),
            )
            with conn.pg.cursor() as server:
                for pairs, ctid in updates:
                    server.execute(stmt, [v for _, v in pairs] + [ctid])
                    returned += server.fetchall()
    conn.forget(plan)
    if rmw.returning is not None:
        with STATS.crypto():
            out = decrypt_columns(plan.outputs, returned)
        cur.set_result(out, plan.description, len(rows))
        return
    cur.set_result([], None, len(rows))


@contextlib.contextmanager
def _checked_at_the_end(pg: psycopg.Connection[Any], keys: list[str]) -> Iterator[None]:
    """The keys PostgreSQL checks at the end of a statement (DEFERRABLE, INITIALLY
    IMMEDIATE) deferred while the client writes the statement's rows one by one, and
    checked when the last is written: ``UPDATE t SET k = k + 1`` passes through the
    values it shifts, as in PostgreSQL."""
    if not keys:
        yield
        return
    names = sql.SQL(", ").join(sql.Identifier(k) for k in keys)
    pg.execute(sql.SQL("SET CONSTRAINTS {} DEFERRED").format(names))
    yield
    pg.execute(sql.SQL("SET CONSTRAINTS {} IMMEDIATE").format(names))


__all__ = ["run_rmw"]
