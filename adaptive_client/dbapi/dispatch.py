"""Where one statement of ``cursor.execute()`` runs: the dispatcher.

A statement is, in the order they are told apart: a script of several statements; a
session command (transaction control, savepoints, SET/SHOW) run as written with the
client's state kept in step; a maintenance or server command (VACUUM, GRANT...); a
call the server answers alone (``pg_advisory_lock``); a sequence call the client
answers; a SELECT/INSERT/UPDATE/DELETE compiled and run by the cursor (with its retries
when another client changed the layers under it); EXPLAIN; or DDL.  Each runs on the
cursor it came from, holding the session's lock (taken by the cursor).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, cast

import psycopg
from psycopg import sql
from sqlglot import exp

from ..catalog import sequences
from ..catalog.precomputed import PrecomputedUnfit
from ..compile import update_rows
from ..compile.compiler import server_sql
from ..compile.plan import Compiled, Params
from ..compile.server_catalogs import reads_server_catalogs
from ..compile.server_functions import answered_by_server
from ..description import Column
from ..errors import (
    AdaptiveError,
    ParameterMismatch,
    StaleMetadata,
    TwoPhaseCommitRefused,
    UndefinedColumn,
    UndefinedTable,
    UnsupportedQuery,
)
from ..schema import ddl, maintenance, sequence_objects, server_commands, typeddl
from ..schema.context import DdlContext
from ..stats import STATS
from ..syntax.params import normalize_placeholders
from ..syntax.sqltext import parse as parse_sql
from ..syntax.sqltext import prepares_transaction, session_command, split_statements
from ..values.clock import SERVER_CLOCK, ServerClock
from . import create_as, pooling, search_path, set_constraints, upserts
from .restart import only_reads
from .retries import INERROR, ended_by
from .session_protocol import Session, StatementCursor, cache_key
from .statement_units import as_one_statement

_NONSTANDARD_STRINGS = re.compile(
    r"standard_conforming_strings'?\s*(?:=|\bTO\b|,)\s*'?(?:off|false|no|0|of)'?",
    re.IGNORECASE,
)
_COMPILED_KINDS = frozenset({exp.Select, exp.Insert, exp.Update, exp.Delete, exp.Union})
_EXPLAIN_OPTIONS = frozenset(
    {
        "ANALYZE",
        "ANALYSE",
        "VERBOSE",
        "COSTS",
        "BUFFERS",
        "TIMING",
        "SUMMARY",
        "SETTINGS",
        "WAL",
        "FORMAT",
        "TEXT",
        "JSON",
        "XML",
        "YAML",
        "TRUE",
        "FALSE",
        "ON",
        "OFF",
    }
)


def check_positional_count(npos: int, params: Params | None) -> None:
    """More parameters than ``%s`` placeholders is a mistake psycopg refuses; so do we
    (too few is refused where a missing one is looked up, in the rewrite)."""
    if params is None:
        return
    kind = type(params)  # (a tuple or a list, the usual ones, told apart cheaply)
    if kind is not tuple and kind is not list and isinstance(params, Mapping | str | bytes):
        return
    if len(params) > npos:
        raise ParameterMismatch(
            f"the query has {npos} placeholders but {len(params)} parameters were passed"
        )


def run(
    cur: StatementCursor,
    query: str,
    params: Params | None,
    many: Sequence[Params] | None = None,
    *,
    writing_rows: bool = False,
) -> None:
    """Run ``query`` on ``cur`` (with ``params``, or once per item of ``many``); the
    caller holds the session's lock.  ``writing_rows``: the writes by key of an UPDATE
    computed on the client (see :func:`_update_by_rows`), refused as such if refused."""
    conn = cur.connection
    conn.bind()
    if conn.pg.pgconn.transaction_status == INERROR and session_command(query) is None:
        # PostgreSQL's answer to any statement there, before the client answers it or
        # finds an error in it (an unknown name, lastval()); the session's commands
        # are the server's to judge (ROLLBACK ends it)
        raise psycopg.errors.InFailedSqlTransaction(
            "current transaction is aborted, commands ignored until end of transaction block"
        )
    conn.refresh_catalog()
    with_params = params is not None or many is not None
    # a repeated SELECT/INSERT/UPDATE/DELETE: what the checks below found the first time
    seen = conn.compiled_kind(query if with_params else cache_key(query, False))
    if seen is not None:
        stmt, npos, named = seen
        if not named:
            for p in many if many is not None else (params,):
                check_positional_count(npos, p)
        _run_compiled(
            cur,
            cache_key(query, with_params),
            stmt,
            params,
            many,
            writing_rows,
            None if writing_rows else -1 if named else npos,
        )
        return
    if not conn.parsed_before(query):  # (a statement seen before is one, and not a command)
        parts = split_statements(query)
        if len(parts) > 1:
            _run_script(cur, parts, params, many)
            return
        kind = session_command(query)
        if kind is not None:
            _session_command(cur, kind, query, params)
            return
        if prepares_transaction(query):
            _prepare_transaction(conn)
        if maintenance.is_maintenance(query):  # VACUUM, ANALYZE, CLUSTER, REINDEX
            for command in maintenance.server_commands(query, conn.catalog, conn.pg):
                cur.run_raw(command.as_string(conn.pg), None)
            return
        if sequence_objects.is_alter(query):
            _run_ddl(
                conn,
                lambda: partial(sequence_objects.alter, conn.pg, conn.catalog, query, conn.runtime),
            )
            cur.set_result([], None, -1)
            return
        action = server_commands.route(query, conn.catalog)  # OWNER TO, GRANT, ...
        if action is not None:
            action(conn.pg)
            cur.set_result([], None, -1)
            return
    stmt, npos, named = conn.parse(query, with_params)
    if answered_by_server(stmt):  # SELECT pg_advisory_lock(%s), set_config(...), ...
        pooling.check_server_call(conn.pooling, stmt)
        _refuse_nonstandard_strings(query)  # (set_config of it, as its SET)
        kept = search_path.kept_in_set_config(stmt) if params is None and many is None else None
        if kept is not None:
            query = server_sql(kept)  # (the client's schema kept on the path)
        cur.run_raw(query, params)
        return
    if many is None and reads_server_catalogs(stmt):  # pg_extension, pg_settings, ...
        cur.run_raw(query, params)
        return
    query = cache_key(query, with_params)  # the plan cache's key from here on
    try:
        answer = sequences.answer(stmt, conn.catalog, conn.runtime)
    except psycopg.errors.UndefinedTable:
        # (another client's CREATE SEQUENCE, whose notification has not arrived: the
        # catalog read again, once, as for the statements below)
        if not conn.catch_up_catalog():
            raise
        answer = sequences.answer(stmt, conn.catalog, conn.runtime)
    if answer is not None:
        cur.set_result(*answer)
        return
    if create_as.is_create_as(stmt):  # CREATE TABLE ... AS, SELECT ... INTO
        if many is not None:
            raise psycopg.ProgrammingError("executemany() of CREATE TABLE ... AS")
        create_as.run_create_as(cur, stmt, params, run)
        return
    if type(stmt) in _COMPILED_KINDS:  # SELECT/INSERT/UPDATE/DELETE: skip the checks below
        conn.remember_compiled_kind(query, (stmt, npos, named))
        if not named:  # (other statements go to psycopg, or are parsed again: EXPLAIN)
            for p in many if many is not None else (params,):
                check_positional_count(npos, p)
        _run_compiled(
            cur,
            query,
            stmt,
            params,
            many,
            writing_rows,
            None if writing_rows else -1 if named else npos,
        )
        return
    if isinstance(stmt, exp.Copy):
        # (psycopg's error, before anything is sent: its copy() runs COPY)
        raise psycopg.ProgrammingError("COPY cannot be used with this method; use copy() instead")
    if isinstance(stmt, exp.Command) and stmt.name.upper() == "EXPLAIN":
        _explain(cur, stmt, params)
        return
    if isinstance(
        stmt, exp.Create | exp.Drop | exp.Alter | exp.TruncateTable
    ) or typeddl.is_type_statement(stmt):
        _ddl(conn, stmt)
        cur.set_result([], None, -1)
        return
    _run_compiled(cur, query, stmt, params, many, writing_rows)


def _run_script(
    cur: StatementCursor, parts: list[str], params: Params | None, many: Sequence[Params] | None
) -> None:
    """Several statements in one execute(), as psycopg runs them: only without
    parameters, in order, the cursor left on the first one's result (``nextset()``
    moves on).  Their transactions are PostgreSQL's for a query string
    (:class:`_ScriptBlocks`)."""
    if params or many is not None:
        raise psycopg.errors.SyntaxError(
            "cannot insert multiple commands into a prepared statement"
        )
    conn = cur.connection
    for part in parts:  # PostgreSQL parses a whole script before it runs any of it
        _syntax_checked(conn, part)
    results: list[tuple[Any, ...]] = []
    blocks = _ScriptBlocks(cur)
    try:
        for part in parts:
            blocks.before(session_command(part))
            run(cur, part, None)
            results.append((*cur.result(), part))
    except BaseException as exc:
        if blocks.failed():
            raise ended_by(exc) from None
        raise
    blocks.ended()
    rows, desc, rowcount, _ = results[0]
    cur.set_result(rows, desc, rowcount, more=results[1:])


class _ScriptBlocks:
    """The transactions of a query string, as PostgreSQL runs one: statements outside a
    transaction block run in an *implicit* one -- committed at the string's end or at
    its COMMIT, undone whole by a failing statement or a ROLLBACK, turned into an
    explicit block by a BEGIN (which the string's end leaves open) -- in which SAVEPOINT
    and its kin are 25P01 and VACUUM is 25001.  A string run inside the application's
    transaction (or psycopg's, opened before it) runs in that block until a COMMIT or
    ROLLBACK of the string ends it."""

    def __init__(self, cur: StatementCursor) -> None:
        self._cur = cur
        conn = cur.connection
        self._state = "explicit" if conn.in_transaction() or not conn.pg.autocommit else None

    def before(self, kind: str | None) -> None:
        """Before a statement of this ``session_command`` kind runs."""
        if kind == "begin":
            self._state = "explicit"
        elif kind in ("commit", "rollback"):
            self._state = None  # (what the string runs next is in an implicit block)
        elif kind in _SAVEPOINT_COMMANDS and self._state != "explicit":
            raise psycopg.errors.NoActiveSqlTransaction(
                f"{_SAVEPOINT_COMMANDS[kind]} can only be used in transaction blocks"
            )
        elif self._state is None:
            self._cur.run_raw("BEGIN", None)
            self._state = "implicit"

    def failed(self) -> bool:
        """A statement failed: an implicit block is undone (True), an explicit one left
        failed, as PostgreSQL leaves it."""
        if self._state != "implicit":
            return False
        conn = self._cur.connection
        conn.pg.rollback()
        conn.catalog_dirty = True  # (DDL earlier in the block was undone with it)
        conn.after_rollback()
        return True

    def ended(self) -> None:
        if self._state == "implicit":
            conn = self._cur.connection
            conn.pg.commit()
            conn.after_commit_of(False)


# the savepoint commands PostgreSQL refuses outside a transaction block, as it names them
_SAVEPOINT_COMMANDS = {
    "savepoint": "SAVEPOINT",
    "rollback_to": "ROLLBACK TO SAVEPOINT",
    "release": "RELEASE SAVEPOINT",
}


def _syntax_checked(conn: Session, part: str) -> None:
    """A script's statement parsed before the script runs: its syntax error raised
    (anything else the statement may raise is raised when it runs)."""
    if session_command(part) is not None or maintenance.is_maintenance(part):
        return
    try:
        if server_commands.route(part, conn.catalog) is not None:
            return
    except psycopg.Error:
        return  # (refused, or names what the script creates first: decided when run)
    try:
        conn.parse(part, False)
    except psycopg.errors.SyntaxError:
        raise
    except psycopg.Error:
        pass


def _refuse_nonstandard_strings(query: str) -> None:
    """``standard_conforming_strings`` set off (SET, or set_config): refused, as the
    client reads a string literal's backslashes as the SQL standard does."""
    if _NONSTANDARD_STRINGS.search(query):
        raise UnsupportedQuery(
            "standard_conforming_strings = off: string literals with backslash escapes "
            "(write E'...' literals instead)",
            "standard_conforming_strings",
        )


def _prepare_transaction(conn: Session) -> None:
    """PREPARE TRANSACTION: refused, and, as PostgreSQL ends the transaction whose
    PREPARE fails (a server without prepared transactions, the default, refuses it so),
    the transaction rolled back.  (A prepared transaction outlives the session whose
    client state -- sequence blocks, kept rows, pending adaptations -- it carries.)"""
    conn.pg.rollback()
    conn.after_rollback()
    raise TwoPhaseCommitRefused(
        "PREPARE TRANSACTION (two-phase commit) through the client: the transaction is "
        "rolled back, as PostgreSQL rolls back one whose PREPARE fails",
        "two-phase commit",
    )


def _session_command(cur: StatementCursor, kind: str, query: str, params: Params | None) -> None:
    """Transaction control, savepoints, SET/SHOW: run as written (they name no table or
    value), with the client's state kept in step."""
    conn = cur.connection
    pooling.check_session_command(conn.pooling, kind, query)
    if kind == "set":
        _refuse_nonstandard_strings(query)
    failed = conn.pg.pgconn.transaction_status == INERROR
    if kind == "set":
        sent = set_constraints.server_form(search_path.kept_in_set(query), conn.catalog)
        query = sent if isinstance(sent, str) else sent.as_string(conn.pg)
    cur.run_raw(query, params)
    if kind == "set" and "isolation" in query.lower():  # (SET SESSION CHARACTERISTICS)
        conn.reads.isolation_set = True
    if kind == "commit":
        conn.after_commit_of(failed)
    elif kind == "rollback":
        conn.after_rollback()
    elif kind == "rollback_to":
        conn.after_rollback_to_savepoint()


def _run_compiled(
    cur: StatementCursor,
    query: str,
    stmt: exp.Expression,
    params: Params | None,
    many: Sequence[Params] | None,
    writing_rows: bool,
    repeat_npos: int | None = None,
) -> None:
    """Prepare the statement's plan and run it on the cursor; retried where another
    client's peel, join adjustment or DDL (not notified yet) made the plan stale.
    ``repeat_npos``: the statement's count of positional parameters (-1: named ones)
    where its repeats may skip the dispatch (repeats.py), None where they may not."""
    conn = cur.connection
    for attempt in range(3):
        try:
            plan = conn.prepare(query, stmt)
        except UnsupportedQuery as refused:
            if type(refused) is UnsupportedQuery and upserts.applies(stmt) and not writing_rows:
                # an ON CONFLICT DO UPDATE computed from the rows: by its steps
                upserted = partial(_upserted, cur, cast(exp.Insert, stmt), refused, run)
                run_sets(many if many is not None else (params,), upserted)
                return
            # an UPDATE whose values or rows need the client: read, then write by key
            rows = (
                update_rows.derive(conn.catalog, stmt)
                if isinstance(stmt, exp.Update | exp.Delete) and not writing_rows
                else None
            )
            if type(refused) is not UnsupportedQuery or rows is None:
                raise  # (the writes by key are refused as such: no second fallback)
            results: list[tuple[list[tuple[Any, ...]], Any]] = []
            updated = partial(_updated, conn, rows, results)
            total = run_sets(many if many is not None else (params,), updated)
            returned = [row for out, _ in results for row in out]
            cur.set_result(returned, results[-1][1] if results else None, total)
            return
        except (UndefinedTable, UndefinedColumn):
            # another client's DDL, committed, whose notification has not reached
            # this client yet: read the catalog again, once
            if attempt or not conn.catch_up_catalog():
                raise
            continue
        # the statement opens the transaction: nothing else is undone if it is retried
        first_in_transaction = not conn.in_transaction()
        try:
            run_plan(cur, plan, params if params is not None else (), many)
            conn.reads.ran(many is None and only_reads(plan, stmt))
            if repeat_npos is not None and params is not None and many is None:
                conn.keep_repeat(query, plan, None if repeat_npos < 0 else repeat_npos)
            return
        except (psycopg.errors.CheckViolation, psycopg.errors.UndefinedColumn) as exc:
            recover_stale(conn, exc, first_in_transaction, attempt)
            continue


def run_plan(
    cur: StatementCursor, plan: Compiled, params: Params, many: Sequence[Params] | None = None
) -> None:
    """Run a prepared plan on ``cur`` (once per item of ``many`` if given), counted as its
    statement kind, the server's clock read when a value of it is first bound -- on the
    server the plan goes to where the connection has standbys (replicas.py)."""
    router = cur.connection.replicas
    if router is not None:
        router.run(plan, partial(_run_plan, cur, plan, params, many))
    else:
        _run_plan(cur, plan, params, many)


def _run_plan(
    cur: StatementCursor, plan: Compiled, params: Params, many: Sequence[Params] | None
) -> None:
    # (STATS.statement(kind), inlined: this wraps every statement)
    stats = STATS.bound()
    kind = plan.statement_type
    prev, stats.current = stats.current, kind
    stats.statements[kind] += 1
    clock = SERVER_CLOCK.set(ServerClock(cur.connection.pg)) if plan.uses_clock else None
    try:
        if many is not None:
            cur.execute_many(plan, many)
        else:
            cur.execute_plan(plan, params)
    finally:
        stats.current = prev
        if clock is not None:
            SERVER_CLOCK.reset(clock)


def recover_stale(
    conn: Session, exc: psycopg.Error, first_in_transaction: bool, attempt: int
) -> None:
    """After ``exc`` from the server: return where it says our cached metadata was stale
    (another client's peel, join adjustment or onion build, not notified yet) and the
    statement may run again -- its transaction rolled back first where it opened it or
    had only read before it (restart.py), the catalog read again --; raise otherwise
    (the error itself, or :class:`StaleMetadata` where the transaction cannot be
    retried here)."""
    if isinstance(exc, psycopg.errors.UndefinedColumn):
        # the statement names an onion column a join adjustment renamed (joins.py): our
        # cached metadata is stale if the epoch moved
        if isinstance(exc, AdaptiveError) or not conn.epoch_moved():
            raise exc
    elif not (exc.diag.constraint_name or "").startswith("k_"):
        raise exc
    # a layer changed under us: our cached metadata was stale
    if not conn.pg.autocommit and conn.in_transaction():
        if attempt < 2 and (
            first_in_transaction
            or (conn.replicas is None and conn.reads.may_restart(conn.pg, conn.control))
        ):
            # (another client's adaptation whose notification had not arrived yet)
            conn.pg.rollback()
            conn.after_rollback()
            conn.catalog.reload(conn.control)
            STATS.retries += 1
            return
        conn.catalog.reload(conn.control)
        raise StaleMetadata(
            "a value was written at a layer the column just left; retry the transaction"
            if isinstance(exc, psycopg.errors.CheckViolation)
            else "another client changed the onions of a column this statement names "
            "while the transaction was open; retry the transaction"
        ) from None
    conn.catalog.reload(conn.control)
    STATS.retries += 1
    if attempt == 2:
        raise StaleMetadata("layers kept changing; retry") from None


def run_sets(sets: Sequence[Any], run_one: Callable[[Any], int]) -> int:
    """``run_one`` on each parameter set of a statement (an executemany's, one by one),
    in order: the sum of the rows each counted.  Where a set computes a value a
    precomputed column cannot hold, the error carries the sets run before it and their
    rows, so that the statement resumes from it once the column is retired (cursor.py)."""
    total = 0
    for done, p in enumerate(sets):
        try:
            total += run_one(p)
        except PrecomputedUnfit as unfit:
            unfit.done, unfit.rowcount = done, total
            raise
    return total


def _upserted(
    cur: StatementCursor, stmt: exp.Insert, refused: UnsupportedQuery, run: upserts.Run, p: Params
) -> int:
    upserts.run_upsert(cur, stmt, p, refused, run)
    return max(cur.rowcount, 0)


def _updated(
    conn: Session,
    rows: update_rows.RowUpdate,
    results: list[tuple[list[tuple[Any, ...]], Any]],
    p: Params | None,
) -> int:
    count, out, described = _update_by_rows(conn, rows, p if p is not None else ())
    results.append((out, described))
    return count


def _update_by_rows(
    conn: Session, rows: update_rows.RowUpdate, params: Params
) -> tuple[int, list[tuple[Any, ...]], Any]:
    """Run an UPDATE as its read and its writes by key (compile/update_rows.py), in the
    statement's transaction (its own in autocommit mode), the table held against other
    writers from before the read to the end of the transaction: the number of rows
    updated, and with RETURNING the rows returned and their description (else None)."""
    select, write_sql, from_read = rows.select, rows.update_sql, False
    if rows.returning and rows.read_returning is not None:
        from_read = rows.reads_returning  # (items of the FROM's tables: the read's only)
        if not from_read:
            try:
                _returning_description(conn, rows)
            except UnsupportedQuery:  # (its items need the client: evaluated by the read)
                from_read = True
        if from_read:
            select, write_sql = rows.read_returning, rows.bare_update_sql
    read = conn.prepare("\x01rows of an UPDATE\x00" + select.sql("postgres"), select)
    table = conn.catalog.table(rows.table).anon
    width = rows.keys + rows.values

    def write() -> None:
        conn.pg.execute(
            sql.SQL("LOCK TABLE {} IN SHARE ROW EXCLUSIVE MODE").format(sql.Identifier(table))
        )
        reader = conn.cursor()
        # (the values as the client holds them: a jsonb value as written, 2.50 not the
        # 2.5 of psycopg's loaded float)
        reader.internal_values = True
        # (with the server's clock where it reads it: now(), the session's zone)
        _run_plan(reader, read, params, None)
        found.extend(_first_per_key(reader.result()[0], rows.keys))
        if from_read:
            returned.extend(row[width:] for row in found)
            described[:] = [list(reader.description or ())[width:]]
        if found:
            k = rows.keys
            writes = [(*row[k:width], *row[:k]) for row in found]
            if not rows.returning or from_read:
                run(conn.cursor(), write_sql, None, many=writes, writing_rows=True)
                return
            for values in writes:  # (each write's RETURNING row, in the order read)
                writer = conn.cursor()
                run(writer, write_sql, values, writing_rows=True)
                out, desc, _ = writer.result()
                returned.extend(out)
                described[:] = [desc]

    found: list[tuple[Any, ...]] = []
    returned: list[tuple[Any, ...]] = []
    described: list[Any] = []
    as_one_statement(conn, write)
    if rows.returning and not described:  # (no row: the description of none)
        described = [_returning_description(conn, rows)]
    return len(found), returned, described[0] if rows.returning else None


def _first_per_key(read: list[tuple[Any, ...]], keys: int) -> list[tuple[Any, ...]]:
    """The rows read, the first of each key only: an UPDATE ... FROM (a DELETE ...
    USING) whose row joins several of the other tables' rows writes it once."""
    seen: set[str] = set()
    out = []
    for row in read:
        key = repr(row[:keys])
        if key not in seen:
            seen.add(key)
            out.append(row)
    return out


def _returning_description(conn: Session, rows: update_rows.RowUpdate) -> Any:
    """The description of an UPDATE's RETURNING items when no row was updated."""
    stmt, _, _ = conn.parse(rows.update_sql)
    return conn.prepare(rows.update_sql, stmt).description


def _legacy_explain_options(text: str) -> tuple[str, str]:
    """The options of ``EXPLAIN [ANALYZE | ANALYSE] [VERBOSE] statement`` (PostgreSQL's
    grammar: in that order, each at most once), and the statement after them."""
    options = []
    for allowed in (("ANALYZE", "ANALYSE"), ("VERBOSE",)):
        words = text.split(None, 1)
        if len(words) == 2 and words[0].upper() in allowed:
            options.append(words[0].upper())
            text = words[1]
    return " ".join(options), text


def _explain(cur: StatementCursor, stmt: exp.Expression, params: Params | None) -> None:
    """EXPLAIN [(options)] <statement>: the server's plan for the rewritten statement
    (anonymized names; what a DBA needs to check that indexes serve the onions)."""
    conn = cur.connection
    text = str(stmt.expression.this if stmt.expression is not None else "").strip()
    options = ""
    if text.startswith("("):
        close = text.index(")")
        options, text = text[: close + 1], text[close + 1 :].strip()
        words = set(options.strip("()").replace(",", " ").upper().split())
        if not words <= _EXPLAIN_OPTIONS:
            raise UnsupportedQuery(f"EXPLAIN option {options}", "EXPLAIN options")
    else:
        # the older form, without parentheses: EXPLAIN [ANALYZE | ANALYSE] [VERBOSE] stmt
        options, text = _legacy_explain_options(text)
    # (the tokenizer reads EXPLAIN's statement as one command word: its placeholders are
    # told apart here, as conn.parse tells them apart in a statement of its own)
    text, npos, named = normalize_placeholders(text, quoted_percents=params is not None)
    inner = parse_sql(text)
    if len(inner) != 1:
        raise UnsupportedQuery("EXPLAIN of other than one statement", "EXPLAIN")
    if not named:
        check_positional_count(npos, params)
    plan = conn.prepare(cache_key(text, params is not None), inner[0])
    if plan.rmw is not None:
        raise UnsupportedQuery("EXPLAIN of an UPDATE computed on the client", "EXPLAIN")
    if plan.residual is not None or plan.insert_select is not None or not plan.sql:
        # (its server statements, one per relation, may take parameters from the one
        # before: there is no one plan to show)
        raise UnsupportedQuery(
            "EXPLAIN of a statement finished on the client (split execution"
            + (f": the server cannot run {plan.residual.reason}" if plan.residual else "")
            + ")",
            "EXPLAIN",
        )
    with conn.pg.cursor() as raw:
        raw.execute(f"EXPLAIN {options} {plan.sql}".encode(), plan.bind(params or ()))
        rows = raw.fetchall()
    cur.set_result(rows, [Column("QUERY PLAN", 25)], len(rows))


def _ddl(conn: Session, stmt: exp.Expression) -> None:
    """CREATE, ALTER, DROP, TRUNCATE and type statements (ddl.py), in the application's
    transaction (their own in autocommit mode), the catalog kept in step."""
    _run_ddl(
        conn,
        lambda: ddl.statement(DdlContext(conn.pg, conn.catalog, conn.config, conn.runtime), stmt),
    )


def _run_ddl(conn: Session, prepare: Callable[[], Callable[[], None]]) -> None:
    """A DDL statement, its work made by ``prepare`` on the committed catalog (between
    transactions) and run in the application's transaction (its own in autocommit
    mode), the catalog kept in step."""
    if not conn.in_transaction():
        # decide IF [NOT] EXISTS and name clashes on the committed catalog, not on one
        # another client's DDL notification has not reached yet
        conn.catalog.refresh(conn.control)
    work = prepare()
    conn.direct.schema_changed()
    if conn.pg.autocommit:
        try:
            with conn.pg.transaction():
                work()
            if conn.in_transaction():
                # (in a transaction an explicit BEGIN opened: its ROLLBACK undoes it)
                conn.catalog_dirty = True
            else:
                conn.catalog.committed()
                conn.runtime.transaction_ended()  # (its sequences' changes committed)
        except BaseException:
            conn.catalog.reload(conn.control)
            raise
    else:
        conn.catalog_dirty = True
        work()
    conn.forget_plans()


__all__ = ["run"]
