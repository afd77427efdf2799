"""Cursors: the execution of a statement and its result.

:class:`Cursor` is the DB-API / psycopg-3-style client-side cursor: ``execute()`` holds
the session's lock for the whole statement and hands it to the dispatcher
(``dispatch.py``), which finds where it runs; a compiled statement's plan runs here --
its server round trips, the client's part (an UPDATE computed on the client, in
rmw_run.py; a residual finished on the client; an INSERT ... SELECT through the client)
and the decryption of its rows.  :class:`NamedCursor` streams a SELECT the server
answers alone from a server-side cursor.  A cursor reaches its connection only through
:class:`~adaptive_client.dbapi.session_protocol.Session`.
"""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Callable, Iterable, Iterator, Sequence
from decimal import Decimal
from functools import cmp_to_key, partial
from time import perf_counter
from typing import Any

import psycopg
from psycopg.rows import RowFactory, tuple_row
from sqlglot import exp

from ..catalog.precomputed import PrecomputedUnfit
from ..compile.plan import (
    CURRENT_PARAMS,
    Compiled,
    Params,
    ResultOpener,
    SortKey,
    decrypt_columnar,
    decrypt_columns,
    open_rows,
)
from ..description import ResultShape, from_psycopg
from ..errors import AdaptiveError, RowCapExceeded, UnsupportedQuery
from ..stats import STATS, Shipped
from ..syntax.command_tags import command_tag
from ..syntax.names import names_shown
from ..syntax.params import normalize_placeholders
from ..syntax.sqltext import parse as parse_sql
from ..values.handout import application_rows
from . import dispatch, server_errors
from .copy import open_copy
from .libpq import result_functions
from .pooling import check_cursor
from .query_forms import Query, query_text
from .retries import fail_transaction
from .rmw_run import run_rmw
from .session_protocol import RepeatedStatement, Session


def _compare(keys: list[SortKey]) -> Any:
    def cmp(a: tuple[Any, ...], b: tuple[Any, ...]) -> int:
        for i, k in enumerate(keys):
            x, y = a[i], b[i]
            if x == y or (_is_nan(x) and _is_nan(y)):
                continue
            if x is None or y is None:
                first = (x is None) == k.nulls_first
                return -1 if first else 1
            r = -1 if _below(x, y) else 1
            return -r if k.desc else r
        return 0

    return cmp_to_key(cmp)


def _below(x: Any, y: Any) -> bool:
    """``x < y`` as PostgreSQL orders numbers: NaN above every other value, equal to
    itself (a Decimal NaN raises on ``<``; a float NaN compares false)."""
    if _is_nan(x) or _is_nan(y):
        return _is_nan(y)
    return bool(x < y)


def _is_nan(v: Any) -> bool:
    return isinstance(v, Decimal | float) and v != v  # (NaN only: != is quiet for both)


def _opened_in_libpq(plan: Compiled) -> ResultOpener | None:
    """How ``plan``'s rows are opened straight from the server's result (compile/plan.py
    ``ResultOpener``), where the compiled layer opens every output and nothing else reads
    the fetched rows (a client sort, a reduction, a locked row kept); else None.  Decided
    once per plan, when its first direct run has said whether its rows are all
    ciphertexts."""
    known = plan.result_opener
    if known is not None:
        return known if isinstance(known, ResultOpener) else None
    if plan.binary_rows is None:
        return None
    opening = plan.row_opening
    functions = result_functions()
    if (
        plan.kind != "select"
        or not plan.binary_rows
        or plan.reduce is not None
        or plan.client_sort
        or opening is None
        or opening.others
        or plan.lock_key is not None
        or functions is None
    ):
        plan.result_opener = False
        return None
    plan.result_opener = ResultOpener(plan.outputs, opening, functions)
    return plan.result_opener


class Cursor:
    """A client-side cursor: each statement's result is held decrypted in memory."""

    arraysize = 1

    def __init__(self, conn: Session, *, row_factory: RowFactory[Any] | None = None) -> None:
        self.connection = conn
        self._rows: list[tuple[Any, ...]] = []
        self._pos = 0
        self.description: Sequence[tuple[Any, ...]] | None = None
        # psycopg's row factories (dict_row, namedtuple_row, class_row, ...): the maker of
        # the held result's rows (None: tuples as they are)
        self._row_factory: RowFactory[Any] = (
            row_factory or getattr(conn, "row_factory", None) or tuple_row
        )
        self._make_row: Callable[[Sequence[Any]], Any] | None = None
        self.rowcount = -1
        self.closed = False
        self._executed = False  # (whether a statement has run: which error a fetch raises)
        self._server: psycopg.RawCursor[Any] | None = None
        # the rest of a script's results: (rows, description, row count, statement)
        self._more_sets: list[tuple[Any, ...]] = []
        self._statement_text: str | None = None  # (what statusmessage is the tag of)
        # json values kept as the client holds them, not loaded (COPY TO prints them)
        self.internal_values = False

    # -- DB-API ----------------------------------------------------------------------------
    def execute(
        self,
        query: Query,
        params: Params | None = None,
        *,
        prepare: bool | None = None,
        binary: bool | None = None,
    ) -> Cursor:
        """Run a statement (psycopg's ``prepare`` and ``binary`` are taken and left to
        the client: it prepares its statements itself, and a value loads to the same
        Python value in either format)."""
        self._statement(query_text(query, self.connection.pg), params, None)
        return self

    def stream(self, query: Query, params: Params | None = None) -> Iterator[Any]:
        """psycopg's ``stream()``: the statement's rows one at a time."""
        self.execute(query, params)
        while (row := self.fetchone()) is not None:
            yield row

    @property
    def row_factory(self) -> RowFactory[Any]:
        return self._row_factory

    @row_factory.setter
    def row_factory(self, factory: RowFactory[Any]) -> None:
        self._row_factory = factory
        self._make_row = self._maker()

    @property
    def pgresult(self) -> ResultShape | None:
        """What psycopg's row factories read of a result (psycopg.rows): its fields'
        names and its status; None without a result."""
        if self.description is None:
            return None
        return ResultShape([d[0] for d in self.description])

    _encoding = "utf-8"  # (the names' encoding, for psycopg's row factories)

    def _maker(self) -> Callable[[Sequence[Any]], Any] | None:
        if self._row_factory is tuple_row or self.description is None:
            return None
        return self._row_factory(self)  # type: ignore[arg-type]

    def _shaped(self, rows: list[Any]) -> list[Any]:
        make = self._make_row
        return rows if make is None else [make(r) for r in rows]

    def executemany(
        self, query: Query, params_seq: Iterable[Params], *, returning: bool = False
    ) -> None:
        """The statement once per parameter set, as psycopg's; ``returning``: each run's
        result kept, the first held and the next ones reached by :meth:`nextset`."""
        text = query_text(query, self.connection.pg)
        if not returning:
            self._statement(text, None, list(params_seq))
            return
        results: list[tuple[Any, ...]] = []
        for params in params_seq:
            self._statement(text, params, None)
            results.append((*self.result(), text))
        if results:
            rows, desc, rowcount, _ = results[0]
            self.set_result(rows, desc, rowcount, more=results[1:])
        else:
            self.set_result([], None, 0)

    def _statement(self, query: str, params: Params | None, many: Sequence[Params] | None) -> None:
        """Run a statement under the connection's lock; an error fails the transaction
        where PostgreSQL would have, and reaches the application in its plain names."""
        if self.closed:
            raise psycopg.InterfaceError("the cursor is closed")
        conn = self.connection
        self._statement_text = query
        with conn.lock:
            # (what the transaction has run, for a restart: restart.py TransactionReads;
            # only_reads stays False until the statement has run, and was a read)
            reads = conn.reads
            reads.before = reads.only_reads or not conn.in_transaction()
            reads.only_reads = False
            reads.statement = None
            try:
                written = 0  # (executemany: the rows of the sets run before a retirement)
                while True:
                    try:
                        self._run_statement(query, params, many)
                        break
                    except PrecomputedUnfit as unfit:
                        # (a value a precomputed column cannot hold, computed before the
                        # set computing it wrote anything: the column retired, the
                        # statement runs again -- executemany from that set)
                        conn.retire_precomputed(unfit.table, unfit.column)
                        if many is not None:
                            many, written = many[unfit.done :], written + unfit.rowcount
                if written:
                    self.rowcount = written + max(self.rowcount, 0)
            except BaseException as exc:
                fail_transaction(conn.pg, exc)
                if isinstance(exc, psycopg.Error):
                    raise self._plain_error(exc) from None
                raise
            finally:
                if conn.replicas is not None:  # (where it ran: replicas.py)
                    conn.replicas.statement_done()

    def _run_statement(
        self, query: str, params: Params | None, many: Sequence[Params] | None
    ) -> None:
        conn = self.connection
        reads = conn.reads
        if many is None and params is not None:
            repeat = conn.repeats.get(query)
            if repeat is not None and self._repeat(repeat, query, params):
                reads.only_reads = reads.before and reads.statement is True
                return
        dispatch.run(self, query, params, many)
        reads.only_reads = reads.before and reads.statement is True
        if conn.deferred_builds:  # (after a statement run in autocommit mode)
            conn.build_deferred()

    def _repeat(self, repeat: RepeatedStatement, query: str, params: Params) -> bool:
        """Run a statement's repeat (repeats.py); False where its plan is not the one the
        dispatcher would use now."""
        conn = self.connection
        conn.bind()
        first_in_transaction = not conn.in_transaction()
        if first_in_transaction:
            conn.refresh_catalog()
        if not repeat.current(conn):
            return False
        if repeat.npos is not None:
            dispatch.check_positional_count(repeat.npos, params)
        try:
            if conn.replicas is None:
                repeat.run(self, params)
            else:  # (on the server the plan goes to: replicas.py)
                conn.replicas.run(repeat.plan, partial(repeat.run, self, params))
            conn.reads.statement = repeat.plan.only_reads is True
        except (psycopg.errors.CheckViolation, psycopg.errors.UndefinedColumn) as exc:
            dispatch.recover_stale(conn, exc, first_in_transaction, 0)
            dispatch.run(self, query, params)  # (compiled again, on the catalog read again)
        return True

    def copy(self, statement: str, params: Params | None = None) -> Any:
        """``COPY t FROM STDIN`` / ``COPY ... TO STDOUT`` as psycopg's ``cursor.copy()``:
        a context manager whose object has ``write_row``/``write`` (values encrypted in
        batches on the way) or ``rows``/``read`` (decrypted); see adaptive_client.dbapi.copy."""
        conn = self.connection
        conn.bind()
        conn.refresh_catalog()
        conn.reads.left()
        if conn.replicas is not None:
            conn.replicas.statement_done()  # (a COPY runs on the primary)
        text, _, _ = normalize_placeholders(statement)
        stmts = parse_sql(text)
        if len(stmts) != 1 or not isinstance(stmts[0], exp.Copy):
            raise UnsupportedQuery("cursor.copy() takes one COPY statement", "COPY")
        return open_copy(self, stmts[0], params)

    def _plain_error(self, exc: psycopg.Error) -> BaseException:
        """A server error in the application's names (see server_errors); the library's
        own errors and errors without a server report go as they are."""
        if isinstance(exc, AdaptiveError) or exc.diag.sqlstate is None:
            return names_shown(exc.with_traceback(exc.__traceback__))
        conn = self.connection
        return names_shown(server_errors.translate(exc, conn.catalog, conn.control))

    def fetchone(self) -> tuple[Any, ...] | None:
        if self.description is None or self.closed:
            self._not_fetchable()
        if self._pos >= len(self._rows):
            return None
        row = self._rows[self._pos]
        self._pos += 1
        return row if self._make_row is None else self._make_row(row)

    def fetchmany(self, size: int | None = None) -> list[tuple[Any, ...]]:
        if self.description is None or self.closed:
            self._not_fetchable()
        n = size or self.arraysize
        out = self._rows[self._pos : self._pos + n]
        self._pos += len(out)
        return self._shaped(out)

    def fetchall(self) -> list[tuple[Any, ...]]:
        if self.description is None or self.closed:
            self._not_fetchable()
        out = self._rows[self._pos :]
        self._pos = len(self._rows)
        return self._shaped(out)

    def _not_fetchable(self) -> None:
        """psycopg's errors for a fetch without rows to fetch: a closed cursor's, one
        that has run nothing's, and one whose statement returned no rows (a command,
        an INSERT without RETURNING) -- a fetch there is a mistake, not an empty result."""
        if self.closed:
            raise psycopg.InterfaceError("the cursor is closed")
        if self.description is None:
            raise psycopg.ProgrammingError(
                "the last operation didn't produce records"
                if self._executed
                else "no result available"
            )

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        while (row := self.fetchone()) is not None:
            yield row

    @property
    def rownumber(self) -> int | None:
        """The index of the next row to fetch in the current result (DB-API extension)."""
        return self._pos if self.description is not None else None

    @property
    def lastrowid(self) -> None:
        """Always None, as in psycopg: PostgreSQL tables have no OIDs; use RETURNING."""
        return None

    def scroll(self, value: int, mode: str = "relative") -> None:
        """Move within the current result, as psycopg's client-side cursor does."""
        if self.description is None or self.closed:
            self._not_fetchable()
        if mode not in ("relative", "absolute"):
            raise psycopg.ProgrammingError(
                f"bad mode: {mode}. It should be 'relative' or 'absolute'"
            )
        pos = self._pos + value if mode == "relative" else value
        if not 0 <= pos <= len(self._rows):
            raise IndexError("position out of bound")
        self._pos = pos

    def nextset(self) -> bool | None:
        """The next statement's result of a script, as in psycopg 3; None at the end."""
        if not self._more_sets:
            return None
        (rows, desc, rowcount, text), *rest = self._more_sets
        self.set_result(rows, desc, rowcount, more=rest)  # (the rest for the next call)
        self._statement_text = text
        return True

    @property
    def statusmessage(self) -> str | None:
        """psycopg's: the command tag of the statement whose result is held (``INSERT 0
        2``, ``UPDATE 1``, ``CREATE TABLE``), PostgreSQL's for the application's
        statement; None before one ran."""
        if not self._executed or self._statement_text is None:
            return None
        return command_tag(self._statement_text, self.rowcount)

    def setinputsizes(self, sizes: Any) -> None:
        """Accepted and ignored, as DB-API allows."""

    def setoutputsize(self, size: Any, column: int | None = None) -> None:
        """Accepted and ignored, as DB-API allows."""

    def close(self) -> None:
        self.closed = True
        if self._server is not None:
            self._server.close()

    def __enter__(self) -> Cursor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- for the dispatcher and COPY (session_protocol.StatementCursor), not the application
    def set_result(
        self,
        rows: list[tuple[Any, ...]],
        desc: Sequence[tuple[Any, ...]] | None,
        rowcount: int,
        more: list[tuple[Any, ...]] | None = None,
    ) -> None:
        """Hold a statement's result (``more``: the next statements' of a script)."""
        self.hold(rows, desc, rowcount, True)
        if more is not None:
            self._more_sets = more

    def hold(
        self,
        rows: list[tuple[Any, ...]],
        desc: Sequence[tuple[Any, ...]] | None,
        rowcount: int,
        application_forms: bool,
    ) -> None:
        """:meth:`set_result` of one statement's rows, ``application_forms``: whether
        any of its columns may hold a value in a form of the client's own."""
        self._more_sets = []
        if application_forms and not self.internal_values:
            rows = application_rows(rows, desc)
        self._rows, self._pos = rows, 0
        # (an empty description is a result of no columns -- SELECT FROM t -- as in
        # psycopg; None, a statement that returned no result)
        self.description = desc
        self.rowcount = rowcount
        self._executed = True
        self._make_row = self._maker()

    def result(self) -> tuple[Any, ...]:
        """The result held: its rows (all of them), description and row count."""
        return self._rows, self.description, self.rowcount

    def run_raw(self, query: str, params: Params | None) -> None:
        """Run ``query`` on the application's session as written (a command naming no
        table or value)."""
        with self.connection.pg.cursor() as cur:
            cur.execute(query.encode(), params)
            if cur.description is None:  # (a command: no result, as psycopg has none)
                self.set_result([], None, cur.rowcount)
            else:
                desc = [from_psycopg(d) for d in cur.description]
                self.set_result(cur.fetchall(), desc, cur.rowcount)

    def execute_plan(self, plan: Compiled, params: Params) -> None:
        """Run a compiled statement's plan with ``params``; hold its result."""
        conn = self.connection
        CURRENT_PARAMS.set(params)
        plan = plan.for_params(params)
        if plan.rmw is not None:
            run_rmw(self, plan, params)
            return
        if plan.insert_select is not None:
            self._insert_select(plan.insert_select, params)
            return
        if plan.residual is not None:
            self._residual(plan, params)
            return
        t0 = perf_counter()  # (STATS.crypto(), inlined)
        try:
            bound = plan.bind_positional(params)
        finally:
            STATS.crypto_time(perf_counter() - t0)
        in_libpq = _opened_in_libpq(plan) if conn.native else None
        raw, rowcount = self.run_server(
            plan.positional_sql, bound, plan.returns_rows, plan, in_libpq
        )
        if in_libpq is not None and conn.direct.opened:
            self.hold(raw, plan.description, len(raw), in_libpq.left)
            return
        if plan.kind != "select":
            conn.forget(plan)
        elif plan.lock_key is not None:
            self.remember_locked(plan, params, raw)
        if not plan.returns_rows:
            self.set_result([], None, rowcount)
            return
        with STATS.crypto():
            if plan.reduce is not None:
                rows = [plan.reduce(raw)]
                self.set_result(rows, plan.description, 1)
                return
            rows = open_rows(plan.outputs, raw, plan.row_opening if conn.native else None)
            if plan.client_sort:
                keyed = [
                    (tuple(k.fn(r) for k in plan.client_sort), row)
                    for r, row in zip(raw, rows, strict=True)
                ]
                keyed.sort(key=lambda kr: _compare(plan.client_sort or [])(kr[0]))
                rows = [row for _, row in keyed]
                if plan.client_limit is not None:
                    lim, off = plan.client_limit
                    start = int(off(params)) if off is not None and off(params) is not None else 0
                    stop = (
                        start + int(lim(params))
                        if lim is not None and lim(params) is not None
                        else None
                    )
                    rows = rows[start:stop]
        self.set_result(rows, plan.description, len(rows) if plan.kind == "select" else rowcount)

    def remember_locked(self, plan: Compiled, params: Params, raw: list[Any]) -> None:
        """A SELECT by primary key whose row the transaction holds (locked ``FOR UPDATE``,
        or read on its snapshot): the row kept for a later UPDATE of it (see
        ``Session.locked_rows``)."""
        conn = self.connection
        if (
            plan.lock_key is not None
            and len(raw) == 1
            and conn.in_transaction()
            and (plan.locks_rows or conn.snapshot_isolation())
        ):
            conn.locked_rows[plan.lock_key(params)] = (plan.lock_columns, plan.locked_row(raw[0]))

    def run_server(
        self,
        query: bytes,
        bound: Sequence[Any],
        rows: bool,
        plan: Compiled | None = None,
        opened: Callable[[Any], list[Any]] | None = None,
    ) -> tuple[list[Any], int]:
        """(rows, rowcount) of ``query`` (``$n`` placeholders): directly once psycopg has
        prepared it, else through this cursor's server cursor.  ``plan``: the plan whose
        SQL it is, which learns on its first direct run whether its rows are all
        ciphertexts, fetched in binary format from then on (``Compiled.binary_rows``).
        ``opened``: see DirectExecutor.run (the direct executor's ``opened`` says whether
        the rows are its)."""
        executor = self.connection.direct
        binary = plan.binary_rows if plan is not None and rows else False
        direct = executor.run(query, bound, rows, binary, opened)
        if direct is not None:
            if binary is None and plan is not None:
                plan.binary_rows = executor.all_bytea
            return direct
        cur = self._server_cursor()
        try:
            cur.execute(query, bound)
        except psycopg.errors.FeatureNotSupported:
            self.connection.direct.schema_changed()  # (see DirectExecutor._check)
            raise
        return (cur.fetchall() if rows and _has_rows(cur) else []), cur.rowcount

    def _server_cursor(self) -> psycopg.RawCursor[Any]:
        # one server-side cursor object per client cursor, as an application reuses its
        # psycopg cursor: creating one per statement is a measurable part of a point query
        if (
            self._server is None
            or self._server.closed
            or self._server.connection is not self.connection.pg
        ):
            self._server = psycopg.RawCursor(self.connection.pg)
        return self._server

    def execute_many(self, plan: Compiled, seq: Sequence[Params]) -> None:
        """Run a compiled statement's plan once per item of ``seq`` (executemany)."""
        if plan.rmw is not None or plan.returns_rows:

            def run_one(p: Params) -> int:
                self.execute_plan(plan, p)
                return max(self.rowcount, 0)

            self.rowcount = dispatch.run_sets(seq, run_one)
            return
        with STATS.crypto():
            bound = [plan.bind_positional(p) for p in seq]
        with psycopg.RawCursor(self.connection.pg) as cur:
            cur.executemany(plan.positional_sql, bound)
            self.set_result([], None, cur.rowcount)

    def _insert_select(self, plans: tuple[Compiled, Compiled], params: Params) -> None:
        """Read the source rows decrypted, insert them through the single-row INSERT, in
        one transaction (its own in autocommit mode, as the one statement would be)."""
        source, target = plans
        conn = self.connection
        ctx = conn.pg.transaction() if conn.pg.autocommit else contextlib.nullcontext()
        with ctx:
            # (the values as the client holds them: a jsonb value as written, 2.50 not
            # the 2.5 of psycopg's loaded float)
            internal, self.internal_values = self.internal_values, True
            try:
                self.execute_plan(source, params)
            finally:
                self.internal_values = internal
            rows = self._rows
            if target.returns_rows:
                returned: list[tuple[Any, ...]] = []
                for row in rows:
                    self.execute_plan(target, row)
                    returned += self._rows
                self.set_result(returned, target.description, len(rows))
                return
            if rows:
                with STATS.crypto():
                    bound = [target.bind_positional(row) for row in rows]
                with psycopg.RawCursor(conn.pg) as cur:
                    cur.executemany(target.positional_sql, bound)
        conn.forget(target)
        self.set_result([], None, len(rows))

    def _residual(self, plan: Compiled, params: Params) -> None:
        """Split execution: each relation's rows fetched decrypted on the main connection
        (the application's transaction and snapshot), then the statement finished on the
        client.  Past the connection's ``residual_row_cap`` the fetch stops (the server
        is asked for one row more than the cap allows) and :class:`RowCapExceeded` names
        the part the server could not run; the rows shipped are in ``stats.residual``."""
        residual = plan.residual
        assert residual is not None
        cap = self.connection.residual_row_cap
        shipped = Shipped(residual.reason)
        total = 0

        def fetch(i: int) -> list[list[Any]]:
            nonlocal total
            assert residual is not None
            part = residual.parts[i] if i < len(residual.parts) else f"fetch {i + 1}"
            plan_i = residual.fetches[i]
            CURRENT_PARAMS.set(params)
            with STATS.crypto():
                bound = plan_i.bind_positional(params)
            query = plan_i.positional_sql
            if cap is not None:
                query += b" LIMIT %d" % (cap - total + 1)
            cur = self._server_cursor()
            # binary results: bytea (ciphertexts, ASHE nonce lists) arrive as raw bytes,
            # not hex text twice their size that both ends encode and decode
            cur.execute(query, bound, binary=True)
            raw = cur.fetchall()
            total += len(raw)
            shipped.fetches.append((part, len(raw), _size(raw, cur.pgresult)))
            if cap is not None and total > cap:
                raise RowCapExceeded(
                    f"the statement would ship more than {cap} rows to the client "
                    f"(residual_row_cap): {part} returns them; the server could not run: "
                    f"{residual.reason or 'the statement'}",
                    cap,
                    residual.reason,
                    part,
                )
            with STATS.crypto():
                return decrypt_columnar(plan_i.outputs, raw)

        try:
            rows = residual.finish(fetch, params)
        finally:
            STATS.shipped(shipped)
        self.set_result(rows, plan.description, len(rows))


class NamedCursor(Cursor):
    """A server-side cursor: a SELECT the server answers alone (no ordering, aggregate or
    finishing left to the client) is declared on the server and fetched ``itersize``
    rows at a time, each batch decrypted as it arrives.  Any other statement runs as on
    a client-side cursor -- the same rows, held in memory."""

    itersize = 100

    def __init__(
        self,
        conn: Session,
        name: str,
        *,
        withhold: bool = False,
        row_factory: RowFactory[Any] | None = None,
    ) -> None:
        check_cursor(conn.pooling, withhold)  # (kept past its transaction: pooling.py)
        super().__init__(conn, row_factory=row_factory)
        self.name = name
        self.withhold = withhold
        self._declared: psycopg.RawServerCursor[Any] | None = None
        self._outputs: list[Any] = []

    def execute(
        self,
        query: Query,
        params: Params | None = None,
        *,
        prepare: bool | None = None,
        binary: bool | None = None,
    ) -> Cursor:
        # the previous result's server cursor goes first: an open cursor on a table
        # would block a peel the next statement needs
        self._close_declared()
        return super().execute(query, params)

    def execute_plan(self, plan: Compiled, params: Params) -> None:
        plan = plan.for_params(params)
        streamable = (
            plan.kind == "select"
            and plan.returns_rows
            and plan.rmw is None
            and plan.reduce is None
            and not plan.client_sort
            and plan.insert_select is None
            and not getattr(plan, "residual", None)
        )
        if not streamable:
            self._close_declared()
            super().execute_plan(plan, params)
            return
        CURRENT_PARAMS.set(params)
        self._close_declared()
        self.connection.reads.ran(False)  # (the server's cursor would not survive a restart)
        with STATS.crypto():
            bound = plan.bind_positional(params)
        cur = psycopg.RawServerCursor(self.connection.pg, self.name, withhold=self.withhold)
        cur.execute(plan.positional_sql, bound)
        self._declared, self._outputs = cur, plan.outputs
        self._rows, self._pos = [], 0
        self.description = plan.description
        self.rowcount = -1
        self._make_row = self._maker()

    def _more(self, n: int | None) -> list[tuple[Any, ...]]:
        """Up to ``n`` (None: all) more decrypted rows from the server cursor."""
        assert self._declared is not None
        with self.connection.lock:
            self.connection.bind()
            raw = self._declared.fetchall() if n is None else self._declared.fetchmany(n)
            with STATS.crypto():
                rows = application_rows(decrypt_columns(self._outputs, raw), self.description)
        return self._shaped(rows)

    def fetchone(self) -> tuple[Any, ...] | None:
        if self._declared is None:
            return super().fetchone()
        rows = self._more(1)
        return rows[0] if rows else None

    def fetchmany(self, size: int | None = None) -> list[tuple[Any, ...]]:
        if self._declared is None:
            return super().fetchmany(size)
        return self._more(size or self.arraysize)

    def fetchall(self) -> list[tuple[Any, ...]]:
        if self._declared is None:
            return super().fetchall()
        return self._more(None)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        if self._declared is None:
            yield from super().__iter__()
            return
        while rows := self._more(self.itersize):
            yield from rows

    def _close_declared(self) -> None:
        if self._declared is not None:
            with contextlib.suppress(psycopg.Error):
                self._declared.close()
            self._declared = None

    def close(self) -> None:
        self._close_declared()
        super().close()


def _size(raw: list[Any], result: psycopg.pq.abc.PGresult | None) -> int:
    """Bytes of the values of a binary server result as received: a fixed-width type's
    width per non-NULL value (counts, plain sums), a ciphertext's length."""
    n = 0
    for i in range(len(raw[0]) if raw else 0):  # a column at a time: its values of one type
        width = result.fsize(i) if result is not None else -1
        if width > 0:  # int8, float8, ...: no Python call per value
            n += width * (len(raw) - list(map(operator.itemgetter(i), raw)).count(None))
            continue
        values = list(filter(_not_none, map(operator.itemgetter(i), raw)))
        try:  # ciphertexts: summed without a Python loop per value
            n += sum(map(len, values))
        except TypeError:  # a variable-width plain value (numeric): as its text
            n += sum(map(len, map(str, values)))
    return n


_not_none = partial(operator.is_not, None)


def _has_rows(cur: psycopg.RawCursor[Any]) -> bool:
    res = cur.pgresult
    return res is not None and res.status == psycopg.pq.ExecStatus.TUPLES_OK


__all__ = ["Cursor", "NamedCursor"]
