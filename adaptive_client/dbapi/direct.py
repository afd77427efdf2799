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
statements after DDL and ``DISCARD ALL``; its cache is read on each execution, so a
statement it dropped goes through a cursor again).  Used only where psycopg would add
nothing but a BEGIN: inside a transaction, or opening one with psycopg's own BEGIN text
(its isolation level, read-only and deferrable settings; sent with the statement, one
round trip where psycopg makes two), or in autocommit mode; never
in a failed transaction or in pipeline mode.  Errors are psycopg's classes, built from
the server's result as psycopg builds them.  Where psycopg's internals differ from what
this module reads (another version), every statement goes through a cursor.

Every wait for the server is psycopg's (``Connection.wait`` over its non-blocking
generators), never a blocking libpq call: the wait releases the GIL, so the application's
other threads -- another connection's holder of the row lock this statement waits for
among them -- keep running, and an interrupt (Ctrl-C) cancels the statement on the server
as psycopg's own cursors do.

psycopg forgets all its prepared statements after every rollback (and has the server
deallocate them).  A prepared statement outlives a rolled-back transaction in
PostgreSQL (only a Parse the failed transaction refused is not made, and psycopg records
none such), so the connection keeps them there (:class:`KeptAcrossRollback`) unless the
transaction changed the schema, where a statement prepared inside it could come back
with another result type.  Under contention that matters: a TPC-C client at 0 ms rolls
back about three attempts per commit, and with psycopg's rule most statements ran
unprepared -- parsed and planned again, the client's long anonymized texts most of all.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import psycopg
from psycopg import errors as e
from psycopg import generators, pq
from psycopg.adapt import PyFormat, Transformer

_INTRANS = pq.TransactionStatus.INTRANS
_IDLE = pq.TransactionStatus.IDLE
_TUPLES_OK = pq.ExecStatus.TUPLES_OK
_COMMAND_OK = pq.ExecStatus.COMMAND_OK
_BAD = pq.ConnStatus.BAD
_SYNC = pq.ExecStatus.PIPELINE_SYNC
_BYTEA = 17

try:  # (psycopg's statement cache: the connection keeps it as it is where it differs)
    from psycopg._preparing import PrepareManager
except ImportError:  # pragma: no cover - another psycopg
    PrepareManager = object  # type: ignore[assignment,misc]

# command tags after which psycopg drops its statements at once (its own rule), and
# those that make a rollback drop them too (a schema change the rollback undoes)
_CLEARS_NOW = re.compile(rb"^(?:DROP|ALTER|DISCARD ALL|DEALLOCATE ALL)\b").match
_SCHEMA_CHANGE = re.compile(rb"^(?:CREATE|DROP|ALTER|TRUNCATE|COMMENT|GRANT|REVOKE)\b").match


def keep_statements_across_rollback(conn: psycopg.Connection[Any]) -> bool:
    """Give ``conn`` a statement cache that survives rollbacks; False where this psycopg's
    internals are not the ones it replaces (the connection keeps psycopg's rule)."""
    old = getattr(conn, "_prepared", None)
    if type(old) is not PrepareManager:
        return False
    if not callable(getattr(old, "_should_discard", None)):
        return False  # pragma: no cover - another psycopg
    new = KeptAcrossRollback(conn)
    new.prepare_threshold = old.prepare_threshold
    new.prepared_max = old.prepared_max
    conn._prepared = new
    return True


class KeptAcrossRollback(PrepareManager):
    """psycopg's prepared-statement cache, but a rollback forgets nothing unless the
    transaction changed the schema, or ran in pipeline mode (where psycopg records a
    statement before the server has made it)."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        super().__init__()
        self._conn_ref = weakref.ref(conn)
        self.schema_changed = False

    def clear(self) -> bool:  # psycopg calls it after every ROLLBACK
        conn = self._conn_ref()
        if self.schema_changed or conn is None or conn._pipeline is not None:
            self.schema_changed = False
            return super().clear()
        return False

    def _should_discard(self, prep: Any, results: Sequence[Any], *_: Any) -> bool:
        for result in results:
            tag = result.command_status if result.status == _COMMAND_OK else None
            if not tag:
                continue
            if _SCHEMA_CHANGE(tag):
                self.schema_changed = True
            if _CLEARS_NOW(tag) or (self.schema_changed and tag.startswith(b"ROLLBACK")):
                return super().clear()  # (ROLLBACK TO SAVEPOINT after a schema change)
        return False


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
        # whether the last run asked (binary=None) returned only bytea columns
        self.all_bytea = False
        # whether the last run's rows were opened from the server's result (run's opened)
        self.opened = False
        # the BEGIN psycopg sends before a transaction's first statement (its isolation
        # level, read-only and deferrable settings)
        self._tx_start: Callable[[], bytes] | None = getattr(conn, "_get_tx_start_command", None)

    def schema_changed(self, changed: bool = True) -> None:
        """The open transaction changed the schema (or met a statement whose result type
        changed): its rollback drops the prepared statements, as psycopg's rule would.
        ``False``: the transaction committed, a rollback has nothing to undo."""
        manager = getattr(self._conn, "_prepared", None)
        if isinstance(manager, KeptAcrossRollback):
            manager.schema_changed = changed

    def run(
        self,
        sql: bytes,
        params: Sequence[Any],
        rows: bool,
        binary: bool | None = False,
        opened: Callable[[Any], list[Any]] | None = None,
    ) -> tuple[list[Any], int] | None:
        """(rows, rowcount) of ``sql`` run with ``params``; None where psycopg must run it.

        ``binary``: the result in binary format, for a statement whose result columns are
        all ``bytea`` (ciphertexts: loaded as they are, where text format is hex to
        decode); ``None``: not known yet, then :attr:`all_bytea` says it after the run.
        ``opened``: with ``binary``, the rows of the server's result (psycopg's
        ``PGresult``) as the statement hands them back -- then :attr:`opened` is set."""
        self.opened = False
        conn = self._conn
        pgconn = conn.pgconn
        status = pgconn.transaction_status
        begin = None  # (the statement opens the transaction: psycopg's BEGIN first)
        if status != _INTRANS:
            if status != _IDLE:
                return None  # a failed transaction, or none: psycopg reports it
            if not conn.autocommit:
                if self._tx_start is None:
                    return None  # pragma: no cover - another psycopg
                begin = self._tx_start
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
            fmt = 1 if binary else 0
            if begin is not None:
                res = self._begin_and_run(begin(), name, values, tx.formats, fmt)
            else:
                pgconn.send_query_prepared(
                    name, values, param_formats=tx.formats, result_format=fmt
                )
                res = self._last(conn.wait(generators.execute(pgconn)))
        self._check(res)
        if res.status == _TUPLES_OK:
            if binary is None:
                self.all_bytea = all(res.ftype(i) == _BYTEA for i in range(res.nfields))
            if not rows:
                return [], res.ntuples
            out: list[Any]
            if opened is not None and binary:
                out = opened(res)
                self.opened = True
                return out, len(out)
            tx.set_pgresult(res)
            out = tx.load_rows(0, res.ntuples, tuple)
            return out, len(out)
        count = res.command_tuples
        return [], count if count is not None else -1

    def _begin_and_run(
        self, begin: bytes, name: bytes, values: Sequence[Any], formats: Any, fmt: int
    ) -> Any:
        """BEGIN and the transaction's first statement in one round trip: both sent in
        pipeline mode before one Sync, as psycopg's own pipeline sends them.  BEGIN opens
        an explicit transaction, so the Sync ends nothing: a failing statement leaves it
        failed, exactly as after BEGIN and the statement sent one after the other."""
        pgconn = self._conn.pgconn
        # (nonblocking: what the socket did not take at once, sent as psycopg sends it;
        # every wait for the server in psycopg's wait loop, which lets other threads run
        # and cancels the statement on an interrupt)
        wait = self._conn.wait
        synced = False
        pgconn.enter_pipeline_mode()
        try:
            pgconn.send_query_params(begin, None)
            pgconn.send_query_prepared(name, values, param_formats=formats, result_format=fmt)
            pgconn.pipeline_sync()
            wait(generators.send(pgconn))
            opened = _next_result(wait, pgconn)
            res = _next_result(wait, pgconn)
            synced = _through_sync(wait, pgconn)
        finally:
            if pgconn.status != _BAD and pgconn.pipeline_status:
                if not synced:  # (interrupted, cancelled: what is left read up to the Sync)
                    _through_sync(wait, pgconn)
                pgconn.exit_pipeline_mode()
        for result in (opened, res):
            if result is None:  # (the connection broke before answering)
                raise _connection_lost(pgconn.error_message)
        if opened.status != _COMMAND_OK:
            self._check(opened)
        return res

    @staticmethod
    def _last(results: Sequence[Any]) -> Any:
        """The statement's result (libpq's last one: an error ends the list)."""
        if not results:  # (the connection broke before answering)
            raise _connection_lost(b"server closed the connection unexpectedly")
        return results[-1]

    def _check(self, res: Any) -> None:
        status = res.status
        if status in (_COMMAND_OK, _TUPLES_OK):
            return
        conn = self._conn
        if conn.pgconn.status == _BAD:
            raise _connection_lost(res.error_message)
        error = e.error_from_result(res, encoding=conn.info.encoding)
        if isinstance(error, e.FeatureNotSupported):
            # ("cached plan must not change result type": another session changed the
            # type of a column the statement returns; the rollback drops the statements)
            self.schema_changed()
        raise error


def _connection_lost(message: bytes) -> e.OperationalError:
    """psycopg's error for a connection that broke mid-statement, with libpq's message."""
    return e.OperationalError(f"consuming input failed: {message.decode(errors='replace').strip()}")


def _through_sync(wait: Callable[[Any], Any], pgconn: Any) -> bool:
    """Read the pipeline's results up to and including its Sync's (False: the connection
    broke first)."""
    while (last := wait(generators.fetch(pgconn))) is None or last.status != _SYNC:
        if last is None and pgconn.status == _BAD:
            return False
    return True


def _next_result(wait: Callable[[Any], Any], pgconn: Any) -> Any:
    """The next command's result in the pipeline (its trailing None consumed)."""
    res = wait(generators.fetch(pgconn))
    if res is not None:
        wait(generators.fetch(pgconn))
    return res


__all__ = ["DirectExecutor"]
