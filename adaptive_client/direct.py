"""A compiled statement's server SQL run through libpq directly, once psycopg prepared it.

A repeated point statement spends about as much client CPU in psycopg's cursor machinery
(query object, prepared-statement bookkeeping, the generator-driven wait loop, result
selection) as the client spends on everything else; plain psycopg pays it once per
statement too, so it counts twice in the client's ratio.  The client's server SQL needs
none of it: the text is fixed per compiled statement, its parameters are already in
``$n`` order, and the result is loaded by psycopg's own Transformer (the connection's
adapters: the same Python values as through a cursor).

The prepared statements are psycopg's: a statement runs through a cursor until psycopg
has prepared it (``prepare_threshold`` executions, ``None``: never), then directly under
psycopg's name for it, for as long as psycopg keeps it (psycopg deallocates its
statements after a rollback, DDL, ``DISCARD ALL``; its cache is read on each execution,
so a statement it dropped goes through a cursor again).  Used only where psycopg would
add nothing: inside a transaction psycopg has opened (or in autocommit mode, outside
one), outside pipeline mode.  Errors are psycopg's classes, built from the server's
result as psycopg builds them.  Where psycopg's internals differ from what this module
reads (another version), every statement goes through a cursor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import psycopg
from psycopg import errors as e
from psycopg import pq
from psycopg.adapt import PyFormat, Transformer

_INTRANS = pq.TransactionStatus.INTRANS
_IDLE = pq.TransactionStatus.IDLE
_TUPLES_OK = pq.ExecStatus.TUPLES_OK
_COMMAND_OK = pq.ExecStatus.COMMAND_OK
_BAD = pq.ConnStatus.BAD


class DirectExecutor:
    """The prepared statements of one psycopg connection, run without a cursor."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn
        self._tx = Transformer(conn)
        self._formats: dict[int, list[PyFormat]] = {}
        # psycopg's prepared statements on the connection, (query, types) -> name: a
        # mapping it updates in place
        names = getattr(getattr(conn, "_prepared", None), "_names", None)
        self._names: Mapping[tuple[bytes, tuple[int, ...]], bytes] | None = (
            names if isinstance(names, Mapping) else None
        )

    def run(self, sql: bytes, params: Sequence[Any], rows: bool) -> tuple[list[Any], int] | None:
        """(rows, rowcount) of ``sql`` run with ``params``; None where psycopg must run it."""
        conn = self._conn
        pgconn = conn.pgconn
        status = pgconn.transaction_status
        if status != _INTRANS and not (status == _IDLE and conn.autocommit):
            return None  # psycopg opens the transaction, or reports the failed one
        if pgconn.pipeline_status:
            return None
        names = self._names
        if not names:
            return None
        tx = self._tx
        n = len(params)
        formats = self._formats.get(n)
        if formats is None:
            formats = self._formats[n] = [PyFormat.AUTO] * n
        values: Any = tx.dump_sequence(params, formats)  # (None: a NULL parameter)
        with conn.lock:
            name = names.get((sql, tuple(tx.types or ())))
            if name is None:
                return None  # not prepared (yet, or any more): through a cursor
            res = pgconn.exec_prepared(name, values, param_formats=tx.formats)
        self._check(res)
        if res.status == _TUPLES_OK:
            if not rows:
                return [], res.ntuples
            tx.set_pgresult(res)
            out: list[Any] = tx.load_rows(0, res.ntuples, tuple)
            return out, len(out)
        count = res.command_tuples
        return [], count if count is not None else -1

    def _check(self, res: Any) -> None:
        status = res.status
        if status in (_COMMAND_OK, _TUPLES_OK):
            return
        conn = self._conn
        if conn.pgconn.status == _BAD:
            message = res.error_message.decode(errors="replace").strip()
            raise e.OperationalError(f"consuming input failed: {message}")
        raise e.error_from_result(res, encoding=conn.info.encoding)


__all__ = ["DirectExecutor"]
