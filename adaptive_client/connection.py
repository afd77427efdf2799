"""The DB-API 2.0 / psycopg-3-style surface: :func:`connect`, Connection, Cursor.

Each Connection holds two PostgreSQL sessions: the *main* one, running the application's
(rewritten) statements in the application's transactions, and a *control* one
(autocommit) that reads metadata and runs peels in transactions of their own -- never
inside the application's snapshot.
"""

from __future__ import annotations

import contextlib
import operator
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from functools import cmp_to_key, partial
from time import perf_counter
from typing import Any

import psycopg
from psycopg import sql
from sqlglot import exp

from . import (
    compaction,
    ddl,
    defaults,
    joins,
    maintenance,
    needs,
    ondemand,
    peel,
    range_indexes,
    search_path,
    sequences,
    server_commands,
    server_errors,
    typeddl,
    wire,
)
from .clock import SERVER_CLOCK, ServerClock, uses_clock
from .collation import (
    CaseMapping,
    Collation,
    check_available,
    database_case_mapping,
    database_collation,
    named_collation,
    require_collator,
    server_version,
)
from .config import PEEL_MODES, Config, load_config
from .description import Column, from_psycopg
from .direct import DirectExecutor, keep_statements_across_rollback
from .errors import (
    AdaptiveError,
    CollationUnavailable,
    ConfigError,
    ParameterMismatch,
    PeelConflict,
    RetryableError,
    RowCapExceeded,
    StaleMetadata,
    StaleSnapshot,
    UndefinedColumn,
    UndefinedTable,
    UnsupportedQuery,
)
from .handout import application_rows
from .keys import MasterKey, load_master_key
from .metadata import Catalog
from .rewrite import update_rows
from .rewrite.compiler import server_sql
from .rewrite.params import normalize_placeholders
from .rewrite.plan import (
    CURRENT_PARAMS,
    Compiled,
    Params,
    SortKey,
    decrypt_columnar,
    decrypt_columns,
)
from .rewrite.settings import Settings
from .rewrite.statements import compile_statement
from .server_functions import answered_by_server
from .sqltext import parse as _parse_sql
from .sqltext import session_command, split_statements
from .statement_log import StatementLog
from .stats import STATS, Shipped, Stats
from .stats import bind as bind_stats

_COMPILED_KINDS = frozenset({exp.Select, exp.Insert, exp.Update, exp.Delete, exp.Union})
_SNAPSHOT_LEVELS = (psycopg.IsolationLevel.REPEATABLE_READ, psycopg.IsolationLevel.SERIALIZABLE)
_CACHE_LIMIT = 2048
_IDLE = psycopg.pq.TransactionStatus.IDLE
_INTRANS = psycopg.pq.TransactionStatus.INTRANS
_INERROR = psycopg.pq.TransactionStatus.INERROR

# What fails the application's transaction on the server after an error the client
# detected itself (see Connection._statement_failed).  The message is fixed: the
# provider learns that a statement failed, as it would had the server raised the error,
# and nothing of the statement or its values.
_FAIL_TRANSACTION = (
    b"DO $$BEGIN RAISE EXCEPTION 'adaptive_client: statement failed on the client' "
    b"USING ERRCODE = 'P0001'; END$$"
)


def _fails_transaction(exc: BaseException) -> bool:
    """Whether PostgreSQL would have failed the transaction at ``exc``: every error of a
    statement but psycopg's own, raised before anything is sent (a wrong number of
    parameters, a value psycopg cannot adapt: they carry no SQLSTATE)."""
    if isinstance(exc, ParameterMismatch):
        return False
    if isinstance(exc, psycopg.Error) and not isinstance(exc, AdaptiveError):
        return exc.sqlstate is not None
    return True


def connect(
    conninfo: str = "",
    *,
    master_key: MasterKey | bytes | str | os.PathLike[str] | None = None,
    config: str | os.PathLike[str] | Mapping[str, Any] | Config | None = None,
    peel: str | None = None,
    autocommit: bool = False,
    statement_log: str | os.PathLike[str] | None = None,
    **kwargs: Any,
) -> Connection:
    """Open a connection through which plain SQL runs over the encrypted database.

    ``master_key`` defaults to ``ADAPTIVE_MASTER_KEY`` (hex); ``config`` is an
    ``onion_config`` TOML path or a dict of the same shape; ``peel`` overrides the
    configuration's peel mode (``server``, ``client`` or ``off``).  Where neither names a
    mode, the database's recorded default applies (``client`` where ``adaptive-db init``
    could not install the PL/Python peel functions, as on hosted PostgreSQL; else
    ``server``).  ``server`` on a database without those functions raises
    :class:`~adaptive_client.errors.PeelModeUnavailable`.  ``statement_log`` (or the
    configuration's) names a client-side file the statements are recorded in, for
    ``adaptive-db advise`` (see :mod:`adaptive_client.statement_log`).
    """
    key = load_master_key(master_key)
    cfg = load_config(config if not isinstance(config, os.PathLike) else str(config))  # type: ignore[arg-type]
    mode = peel or cfg.peel
    if mode is not None and mode not in PEEL_MODES:
        raise ConfigError(f"peel mode must be one of {PEEL_MODES}, not {mode!r}")
    if statement_log is not None:
        cfg = replace(cfg, statement_log=os.fspath(statement_log))
    return Connection(conninfo, key, cfg, mode, autocommit=autocommit, **kwargs)


# How long a peel run beside an open application transaction may wait for a lock.
_PEEL_LOCK_WAIT_MS = 2000
_MAX_BUILDS = 64  # onions one statement may build on first use (one per compile)

# What a peel meets when other clients peel the same table at the same moment: two
# transactions that both hold a lock on the table and both peel inside it deadlock on the
# table's ACCESS EXCLUSIVE lock and the column's layer row (the server breaks the cycle),
# or a bounded wait runs out.  The peel's transaction is rolled back whole either way.
_PEEL_CONFLICTS = (psycopg.errors.DeadlockDetected, psycopg.errors.LockNotAvailable)


def _check_positional_count(npos: int, params: Params | None) -> None:
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


class Connection:
    """An adaptive connection: the application's session (``pg``), the control session,
    the catalog and the compiled statements.

    Safe to share between threads (``threadsafety = 2``, as psycopg 3): a statement --
    its compilation, adaptations, server round trips and decryption -- holds the
    connection's :attr:`lock` from start to end, so the statements of threads sharing a
    connection run one after the other, as psycopg serialises them.  The lock is never
    held by a thread that is not running: every wait for the server releases the GIL.

    Transactions behave as PostgreSQL's whoever detects an error: a statement that fails
    inside a transaction -- on the server, or on the client before or after its round
    trips (a syntax error, an unknown name, a value out of its type's range, a refused
    construct) -- leaves the transaction failed: the next statement raises
    ``InFailedSqlTransaction``, ``commit()`` rolls back, ``ROLLBACK TO SAVEPOINT``
    recovers.  psycopg's own errors raised before anything is sent (a wrong number of
    parameters) leave it as it was, as in psycopg."""

    def __init__(
        self,
        conninfo: str,
        master_key: MasterKey,
        config: Config,
        peel_mode: str | None,
        *,
        autocommit: bool = False,
        **kwargs: Any,
    ) -> None:
        self.config = config
        # the most rows a client-evaluated statement may fetch (None: no cap)
        self.residual_row_cap: int | None = config.residual_row_cap
        self._statement_log = StatementLog(config.statement_log) if config.statement_log else None
        # psycopg's adapters context (an application's json loads, SQLAlchemy's): the
        # application's session's, whose values the application reads; not the control
        # session's, which reads the client's own metadata
        context = kwargs.pop("context", None)
        self.control = psycopg.connect(conninfo, autocommit=True, **kwargs)
        try:
            self.catalog = Catalog.open(self.control, master_key)
            require_collator(self.control)  # an ICU database needs PyICU: refused at connect
            from .install import resolve_peel_mode

            self.peel_mode: str = resolve_peel_mode(self.control, peel_mode)
            self._notified = False
            self.control.add_notify_handler(self._on_notify)
            self.control.execute("LISTEN adaptive_epoch")
            if context is not None:
                kwargs["context"] = context
            self.pg = psycopg.connect(conninfo, autocommit=autocommit, **kwargs)
            if not config.server_jit:
                # The rewritten statements compare and sum ciphertexts: their planner costs
                # grow with the onions' width and pass the JIT thresholds on tables a few
                # GB wide, where compiling costs seconds (2.6 s of TPC-H Q6's 6.1 s at
                # SF 1) and saves little on bytea comparisons.  Not a startup option:
                # connection poolers refuse those.
                self.pg.execute("SET jit = off")
                if not autocommit:
                    self.pg.commit()
            wire.register(self.pg)
            # repeated statements' server SQL, prepared (kept across rollbacks) and run
            # without a cursor
            keep_statements_across_rollback(self.pg)
            self._direct = DirectExecutor(self.pg)
        except BaseException:
            self.control.close()
            raise
        self._plans: dict[tuple[str, int, bool], Compiled] = {}
        self._parsed: dict[str, tuple[exp.Expression, int, bool]] = {}
        # statements seen before that go straight to the compiler (SELECT, INSERT, UPDATE,
        # DELETE, not a client-answered sequence call): their repeats skip the dispatch
        self._compiled_kind: dict[str, tuple[exp.Expression, int, bool]] = {}
        self._pending: list[peel.Need] = []
        # tables an adaptation rewrote, compacted once no transaction of the application's
        # is open (compaction.py)
        self._rewritten: set[str] = set()
        self._catalog_dirty = False
        # rows this transaction locked with SELECT ... FOR UPDATE by primary key, in the
        # RMW layout: a later UPDATE SET x = x + k of the same row needs no SELECT
        self._locked: dict[Any, tuple[Any, ...]] = {}
        self._c_locale_db: bool | None = None
        self._runtime = defaults.Runtime(self.pg)  # sequence blocks, transaction's now()
        # the database's default collation, and the server's collator version of each
        # collation a statement ordered by (read once per connection)
        self._db_collation: Collation | None = None
        self._server_versions: dict[Collation, str | None] = {}
        self._case_mapping: CaseMapping | None = None
        self._named_collations: dict[str, Collation] = {}
        # held for the whole of each statement, commit and rollback (see the class's doc)
        self.lock = threading.RLock()
        self._stats = Stats()
        self._writing_rows = False  # (an UPDATE's writes by key: see _update_by_rows)

    # -- DB-API ----------------------------------------------------------------------------
    def cursor(self, name: str = "", *, withhold: bool = False) -> Cursor:
        """A client-side cursor, or with ``name`` a server-side one that streams a large
        result (``DECLARE``/``FETCH``) and decrypts it a batch at a time."""
        if name:
            return NamedCursor(self, name, withhold=withhold)
        return Cursor(self)

    def execute(self, query: str, params: Params | None = None) -> Cursor:
        cur = self.cursor()
        cur.execute(query, params)
        return cur

    def commit(self) -> None:
        with self.lock:
            self._bind()
            failed = self.pg.pgconn.transaction_status == _INERROR
            self.pg.commit()
            self._after_commit_of(failed)

    def _after_commit_of(self, failed: bool) -> None:
        """The client's state after a COMMIT: a failed transaction's COMMIT is a rollback."""
        if failed:
            self._after_rollback()
        else:
            self._locked.clear()
            self._after_commit()

    def _after_commit(self) -> None:
        self._direct.schema_changed(False)
        self._runtime.transaction_ended()
        self._catalog_dirty = False
        if self.catalog.committed():  # (enum labels added in it are usable now)
            self._plans.clear()
        self._compact()

    def _compact(self) -> None:
        """Compact the tables adaptations rewrote, once the application holds no
        transaction open (its locks would make the wait end in nothing).  It only saves
        the server work, so its failure is not the application's: the commit or statement
        succeeded, and the table stays as it is."""
        if self._rewritten and not self._in_transaction():
            tables, self._rewritten = sorted(self._rewritten), set()
            compaction.after_adaptation(self.control, tables)

    def rollback(self) -> None:
        with self.lock:
            self._bind()
            self.pg.rollback()
            self._after_rollback()

    def _bind(self) -> None:
        """Make this connection the one the current thread works for: its statistics,
        sequence blocks and session settings (the TimeZone and DateStyle values are read
        and written under) -- whatever thread, and whatever connection it served before."""
        bind_stats(self._stats)
        defaults.RUNTIME.set(self._runtime)

    def cancel(self) -> None:
        """Cancel what this connection is running, from another thread (as psycopg's
        ``cancel_safe``): the statement's wait for the server ends with
        ``QueryCanceled``, and the transaction it ran in is failed.  A peel or onion
        build the statement was running on the control session is cancelled too (it
        rolls back whole).  Takes no lock: the statement holds the connection's."""
        for conn in (self.pg, self.control):
            (getattr(conn, "cancel_safe", None) or conn.cancel)()  # (psycopg < 3.2)

    def _statement_failed(self, exc: BaseException) -> None:
        """After a statement raised ``exc``: the application's transaction is failed on
        the server where PostgreSQL would have failed it, so that what follows -- the
        next statement, ``commit()``, a savepoint's rollback -- is what it would be.  An
        error the server raised has done it already; one the client detected (before
        the statement reached the server, or between its round trips) does it here, in
        one round trip (with psycopg's BEGIN first where the statement would have
        opened the transaction)."""
        status = self.pg.pgconn.transaction_status
        if status == _INERROR or not _fails_transaction(exc):
            return
        if status == _INTRANS or (status == _IDLE and not self.pg.autocommit):
            with contextlib.suppress(psycopg.Error):
                self.pg.execute(_FAIL_TRANSACTION)

    def _after_rollback(self) -> None:
        """The client's state after the application's transaction rolled back: metadata
        this transaction changed (DDL, a peel inside it) is read again, committed; the
        peels it left pending run now."""
        self._locked.clear()
        self._runtime.transaction_ended(rolled_back=True)
        self.catalog.rolled_back()
        if self._catalog_dirty:
            self.catalog.reload(self.control)
            self._catalog_dirty = False
            self._plans.clear()
        self._run_pending_peels()
        self._compact()

    def _after_rollback_to_savepoint(self) -> None:
        """ROLLBACK TO SAVEPOINT may undo this transaction's DDL or peels made after the
        savepoint: the catalog is read again inside the transaction, which sees exactly
        what survived.  Row locks taken after the savepoint are released, so the cache of
        locked rows is dropped."""
        self._locked.clear()
        self._runtime.savepoint_rolled_back()
        if self._catalog_dirty:
            self.catalog.reload(self.pg)
            self._plans.clear()

    def close(self) -> None:
        with self.lock:
            self.pg.close()
            self.control.close()

    @property
    def closed(self) -> bool:
        return self.pg.closed

    @property
    def autocommit(self) -> bool:
        return self.pg.autocommit

    @autocommit.setter
    def autocommit(self, value: bool) -> None:
        self.pg.autocommit = value

    @property
    def isolation_level(self) -> Any:
        return self.pg.isolation_level

    @isolation_level.setter
    def isolation_level(self, value: Any) -> None:
        self.pg.isolation_level = value

    def transaction(self) -> Any:
        return self.pg.transaction()

    @property
    def stats(self) -> Stats:
        """This connection's counters (encryptions, peels, retries, rows shipped...)."""
        return self._stats

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if not self.pg.closed:
            if exc_type is None:
                self.commit()
            else:
                self.rollback()
        self.close()

    # -- metadata freshness ------------------------------------------------------------------
    def _in_transaction(self) -> bool:
        # (libpq's status as an int: ``pg.info`` builds an object and an enum per call)
        return self.pg.pgconn.transaction_status != _IDLE

    def _on_notify(self, _: psycopg.Notify) -> None:
        self._notified = True

    def _maybe_refresh(self) -> None:
        """Between transactions, pick up other clients' peels and DDL (notified).

        The control connection's socket is read without waiting, through libpq: psycopg's
        ``notifies(timeout=0)`` polls the socket through its wait loop, which was about a
        fifth of what the client adds to a point query.  Notifications that arrive while
        the control connection runs a query reach ``_on_notify`` through psycopg instead."""
        if self._in_transaction():
            return
        self._locked.clear()
        pgconn = self.control.pgconn
        with self.control.lock:
            pgconn.consume_input()  # never blocks: libpq's socket is non-blocking
            while pgconn.notifies() is not None:
                self._notified = True
        if self._notified:
            self._notified = False
            self.catalog.refresh(self.control)

    # -- compilation -------------------------------------------------------------------------
    def _parse(self, query: str, with_params: bool = True) -> tuple[exp.Expression, int, bool]:
        # psycopg reads ``%%`` as ``%`` everywhere (string literals and quoted names too)
        # when parameters are passed, and touches nothing when none are: the same text
        # may then mean two statements, cached apart (see _cache_key)
        query_key = _cache_key(query, with_params)
        hit = self._parsed.get(query_key)
        if hit is not None:
            return hit
        text, npos, named = normalize_placeholders(query, quoted_percents=with_params)
        stmts = _parse_sql(text)
        if len(stmts) != 1:
            raise UnsupportedQuery(
                "multiple statements in one execute(): send one at a time", "multiple statements"
            )
        out = (stmts[0], npos, named)
        if self._statement_log is not None:
            self._statement_log.record(text)
        if len(self._parsed) > _CACHE_LIMIT:
            self._parsed.clear()
            self._compiled_kind.clear()
        self._parsed[query_key] = out
        return out

    def _snapshot_isolation(self) -> bool:
        return self.pg.isolation_level in _SNAPSHOT_LEVELS

    def _compile(self, query: str, stmt: exp.Expression) -> Compiled:
        snapshot = self._snapshot_isolation()
        key = (query, self.catalog.epoch, snapshot)
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        settings = Settings(
            snapshot_rows=snapshot,
            database_collation=self._database_collation,
            case_mapping=self._database_case_mapping,
            named_collation=self._named_collation,
        )
        plan = compile_statement(self.catalog, stmt, settings)
        plan.uses_clock = plan.uses_clock or uses_clock(stmt)
        if plan.text_orders:
            self._check_text_orders(plan.text_orders)
        if plan.residual is not None and plan.residual.needs_c_locale and not self._c_locale():
            raise UnsupportedQuery(
                "text order and case mapping on the client are exact only under the C/POSIX "
                "collation; this database's differs",
                "client-evaluated text under a non-C collation",
            )
        if not plan.needs and not plan.joins and not plan.builds:
            if len(self._plans) > _CACHE_LIMIT:
                self._plans.clear()
            self._plans[key] = plan
        return plan

    def _named_collation(self, name: str) -> Collation:
        """The collation ``COLLATE "name"`` names in a query (read once per name)."""
        if name not in self._named_collations:
            self._named_collations[name] = named_collation(self.control, name)
        return self._named_collations[name]

    def _database_case_mapping(self) -> CaseMapping:
        """How the database maps case (read once)."""
        if self._case_mapping is None:
            self._case_mapping = database_case_mapping(self.control)
        return self._case_mapping

    def _database_collation(self) -> Collation:
        """The database's default collation (read once)."""
        if self._db_collation is None:
            self._db_collation = database_collation(self.control)
        return self._db_collation

    def _check_text_orders(self, collations: Iterable[Collation | None]) -> None:
        """Refuse, before anything runs or is peeled, a statement ordering text whose order
        this client cannot reproduce exactly: under a collation that the client's collator
        or the server's current one does not match, or (no recorded collation) in byte
        order on a database whose order is not C's."""
        for coll in set(collations):
            if coll is None:
                if not self._database_collation().bytewise:
                    raise CollationUnavailable(
                        "a text column created before collations were recorded orders in "
                        f"byte order, this database by {self._database_collation().describe()}: "
                        "ordering it would differ from PostgreSQL's answer (ALTER TABLE ... "
                        "ALTER COLUMN ... TYPE with its own type re-encrypts it under the "
                        "collation, recorded)",
                        "text column without a recorded collation",
                    )
                continue
            if coll.bytewise:
                continue
            check_available(coll)
            if coll not in self._server_versions:
                self._server_versions[coll] = server_version(self.control, coll)
            now = self._server_versions[coll]
            if now != coll.version:
                raise CollationUnavailable(
                    f"collation {coll.describe()}: the server's collator is now version "
                    f"{now or 'unknown'}; the column's order is that of version "
                    f"{coll.version} (PostgreSQL's answer would follow the new version)",
                    "collation version changed on the server",
                )

    def _c_locale(self) -> bool:
        """Does the database order and case-map text as C/POSIX (read once)?"""
        if self._c_locale_db is None:
            row = self.control.execute(
                "SELECT datlocprovider, datcollate, datctype FROM pg_database "
                "WHERE datname = current_database()"
            ).fetchone()
            c = ("C", "POSIX")
            self._c_locale_db = row is not None and row[0] == "c" and row[1] in c and row[2] in c
        return self._c_locale_db

    def _prepare(self, query: str, stmt: exp.Expression) -> Compiled:
        builds = 0
        attempt = 0
        while attempt < 6:
            plan = self._compile(query, stmt)
            if plan.builds:
                # one build per compile (each ends a pending onion for good: a statement
                # ordering by five such columns builds five); bounded against conflicts
                builds += 1
                if builds > _MAX_BUILDS:
                    break
                for need in plan.builds:
                    self._build(need)
                continue
            attempt += 1
            if plan.needs:  # peels first: a join adjustment re-keys an onion's inner layer
                self._peel(plan)
            elif plan.joins:
                self._adjust(plan)
            else:
                if self._rewritten:  # (once, after all of the statement's adaptations)
                    self._compact()
                return plan
        raise StaleMetadata("the layers kept changing while the statement was prepared")

    def _adjust(self, plan: Compiled) -> None:
        """Bring the column pairs a statement compares under one key (joins.py), where it
        is safe to -- the same placement as a peel (see :meth:`_peel`), except that an
        adjustment that cannot run now is not queued for the rollback: the retried
        statement asks for it again."""
        todo = joins.plan_adjustments(plan.joins)
        for need in todo:
            joins.check_allowed(need, self.peel_mode)
        tables = sorted({self.catalog.table(t).anon for n in todo for t in (n.a[0], n.b[0])})
        self._adapt(tables, lambda conn: self._adjust_on(conn, todo), "a join adjustment")

    def _build(self, need: needs.BuildNeed) -> None:
        """Build an onion a statement needs that its column builds on first use
        (ondemand.py), placed like a join adjustment."""
        ondemand.check_allowed(need, self.peel_mode)

        def run(conn: psycopg.Connection[Any]) -> None:
            if ondemand.build(conn, self.catalog, need) >= 0:
                STATS.peels += 1
                self._rewritten.add(self.catalog.table(need.table).anon)

        self._adapt([self.catalog.table(need.table).anon], run, "an onion built on first use")

    def _adapt(
        self, tables: list[str], run: Callable[[psycopg.Connection[Any]], None], what: str
    ) -> None:
        """Run an adaptation that rewrites ``tables`` (anonymized names) on the control
        connection, or inside the application's transaction where it holds their locks;
        one that cannot run now fails the transaction with a retryable error."""
        if not self._in_transaction():
            try:
                run(self.control)
            except (*_PEEL_CONFLICTS, StaleMetadata):
                pass  # planned again from the reloaded catalog
            finally:
                self.catalog.reload(self.control)
            return
        read_committed, held = self._transaction_state(tables)
        if read_committed and (held or self._catalog_dirty):
            self._catalog_dirty = True  # the catalog is reloaded if this rolls back
            try:
                run(self.pg)
            except (*_PEEL_CONFLICTS, StaleMetadata):
                raise self._abort_transaction(
                    PeelConflict(
                        f"{what} this statement needs conflicted with another client's: "
                        "roll back and retry"
                    )
                ) from None
            finally:
                if self.pg.info.transaction_status != psycopg.pq.TransactionStatus.INERROR:
                    self.catalog.reload(self.pg)
            self._plans.clear()
            return
        if held:
            raise self._abort_transaction(
                PeelConflict(
                    f"{what} this statement needs must rewrite a table this transaction "
                    "holds a lock on: roll back and retry"
                )
            )
        try:
            with self.control.transaction():
                self.control.execute(f"SET LOCAL lock_timeout = '{_PEEL_LOCK_WAIT_MS}ms'")
                run(self.control)
        except (*_PEEL_CONFLICTS, StaleMetadata):
            raise self._abort_transaction(
                PeelConflict(
                    f"{what} this statement needs waits on locks while this transaction is "
                    "open: roll back and retry"
                )
            ) from None
        finally:
            self.catalog.reload(self.control)
        if not read_committed:
            raise self._abort_transaction(
                StaleSnapshot(
                    f"{what} this statement needs changed columns after the transaction's "
                    "snapshot: retry it"
                )
            )

    def _transaction_state(self, tables: list[str]) -> tuple[bool, bool]:
        """Whether the open transaction is READ COMMITTED, and whether it holds a lock on
        any of ``tables`` (anonymized names): where a peel or a join adjustment may run."""
        level = self.pg.execute("SHOW transaction_isolation").fetchone()
        held = self.pg.execute(
            "SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
            "WHERE l.pid = pg_backend_pid() AND c.relname = ANY(%s)",
            (tables,),
        ).fetchone()
        return level is not None and level[0] == "read committed", held is not None

    def _adjust_on(self, conn: psycopg.Connection[Any], todo: list[needs.JoinNeed]) -> None:
        for need in todo:
            if joins.adjust(conn, self.catalog, need) >= 0:
                STATS.peels += 1
                self._rewritten.update(self.catalog.table(t).anon for t in (need.a[0], need.b[0]))

    def _peel(self, plan: Compiled) -> None:
        """Run the peels a statement needs, where it is safe to.

        * No transaction open: on the control connection, each peel its own transaction.
        * READ COMMITTED transaction that holds no lock on the table (and made no DDL):
          on the control connection, committed at once -- the next statement's snapshot
          sees it, and the application's transaction, however long, holds none of the
          peel's locks.
        * READ COMMITTED transaction holding a lock on the table: inside the
          application's transaction (its locks would block a peel from elsewhere); the
          peel commits or rolls back with it.
        * REPEATABLE READ / SERIALIZABLE: the snapshot predates any peel, so the statement
          cannot run in this transaction.  Peel on the control connection (or, if this
          transaction holds a lock on the table, when it rolls back) and raise a
          retryable error.
        """
        todo = peel.plan_peels(plan.needs)
        for need in todo:
            peel.check_allowed(need, self.peel_mode)
        if not self._in_transaction():
            # No application transaction is at stake: a peel that lost a lock race is
            # simply tried again by _prepare, from the reloaded catalog.
            try:
                self._peel_on(self.control, todo)
            except _PEEL_CONFLICTS:
                pass
            finally:
                self.catalog.reload(self.control)
            return
        read_committed, held = self._transaction_state([n.table.anon for n in todo])
        if read_committed:
            if held or self._catalog_dirty:
                self._catalog_dirty = True  # the catalog is reloaded if this rolls back
                try:
                    self._peel_on(self.pg, todo)
                except _PEEL_CONFLICTS:
                    # the server aborted this transaction to break the cycle; the peel
                    # runs at rollback, when this client holds no lock on the table
                    self._pending += todo
                    raise PeelConflict(
                        "a peel this statement needs conflicted with another client's peel "
                        "of the same table: roll back and retry (the peel runs at rollback)"
                    ) from None
                self._plans.clear()
                return
            self._peel_beside_transaction(todo)
            return
        if held:
            self._pending += todo
            raise self._abort_transaction(
                PeelConflict(
                    "a layer this statement needs must be peeled, and this transaction holds "
                    "a lock on the table: roll back and retry (the peel runs at rollback)"
                )
            )
        self._peel_beside_transaction(todo)
        raise self._abort_transaction(
            StaleSnapshot(
                "a layer this statement needs changed after the transaction's snapshot: retry it"
            )
        )

    def _peel_beside_transaction(self, todo: list[peel.Need]) -> None:
        """Peel on the control connection while the application's transaction stays open.

        The wait for the peel's locks is bounded: the transaction left open may hold locks
        that the peel's blockers wait for (another client's transaction, blocked behind
        this one, holding the table or peeling the same column), a deadlock through this
        client that the server cannot see.  Past the bound, the transaction is failed
        (retryable) and the peel runs after its rollback, when this client holds nothing.
        Either way the catalog is reloaded from the server.
        """
        try:
            self._peel_with_bounded_wait(todo)
        except _PEEL_CONFLICTS:
            self._pending += todo
            raise self._abort_transaction(
                PeelConflict(
                    "a peel this statement needs waits on locks while this transaction is "
                    "open: roll back and retry (the peel runs at rollback)"
                )
            ) from None
        finally:
            self.catalog.reload(self.control)

    def _peel_with_bounded_wait(self, todo: list[peel.Need]) -> None:
        """Peel on the control connection, in one transaction whose lock waits are bounded."""
        with self.control.transaction():
            self.control.execute(f"SET LOCAL lock_timeout = '{_PEEL_LOCK_WAIT_MS}ms'")
            self._peel_on(self.control, todo)

    def _abort_transaction(self, error: RetryableError) -> RetryableError:
        """Fail the application's transaction on the server, as a serialization failure
        does, before ``error`` is raised: the catalog may now be newer than the
        transaction's snapshot, and a statement run in it before the rollback would read
        the old rows through the new layers (a wrong answer) -- it fails instead."""
        with contextlib.suppress(psycopg.Error):
            self.pg.execute(
                "DO $$BEGIN RAISE EXCEPTION 'adaptive_client: retry the transaction' "
                "USING ERRCODE = '40001'; END$$"
            )
        return error

    def _peel_on(self, conn: psycopg.Connection[Any], todo: list[peel.Need]) -> None:
        for need in todo:
            rows = peel.peel(conn, need.table, need.onion, need.layer, self.peel_mode)
            if rows > 0:
                self._rewritten.add(need.table.anon)
            STATS.peels += 1
            range_indexes.after_peel(conn, self.catalog, need.table, need.onion, rows)

    def _run_pending_peels(self) -> None:
        """The peels a failed transaction left to run after its rollback.  They only spare
        the retry a second conflict, so the rollback never waits long for them: one that
        waits on another client's transaction past the bound, or loses a lock race, is
        dropped (the rollback itself succeeded), and the statement that needs it peels it."""
        todo, self._pending = self._pending, []
        if not todo:
            return
        try:
            for need in todo:
                table = self.catalog.tables.get(need.table.name)
                if table is None:
                    continue
                oc = table.columns[need.column.name].onions[need.onion.onion]
                if oc.stack.index(oc.layer) < oc.stack.index(need.layer):
                    with contextlib.suppress(*_PEEL_CONFLICTS):
                        self._peel_with_bounded_wait([replace(need, table=table, onion=oc)])
        finally:
            self.catalog.reload(self.control)

    # -- the statement dispatcher -------------------------------------------------------------
    def _run(
        self, cur: Cursor, query: str, params: Params | None, many: Sequence[Params] | None = None
    ) -> None:
        self._bind()
        self._maybe_refresh()
        with_params = params is not None or many is not None
        # a repeated SELECT/INSERT/UPDATE/DELETE: what the checks below found the first time
        seen = self._compiled_kind.get(query if with_params else _cache_key(query, False))
        if seen is not None:
            stmt, npos, named = seen
            if not named:
                for p in many if many is not None else (params,):
                    _check_positional_count(npos, p)
            self._run_compiled(cur, _cache_key(query, with_params), stmt, params, many)
            return
        if query not in self._parsed:  # (a statement seen before is one, and not a command)
            parts = split_statements(query)
            if len(parts) > 1:
                self._run_script(cur, parts, params, many)
                return
            kind = session_command(query)
            if kind is not None:
                self._session_command(cur, kind, query, params)
                return
            if maintenance.is_maintenance(query):  # VACUUM, ANALYZE
                cur._raw(maintenance.server_command(query, self.catalog).as_string(self.pg), None)
                return
            action = server_commands.route(query, self.catalog)  # OWNER TO, GRANT, ...
            if action is not None:
                action(self.pg)
                cur._set_result([], None, -1)
                return
        stmt, npos, named = self._parse(query, with_params)
        if answered_by_server(stmt):  # SELECT pg_advisory_lock(%s), set_config(...), ...
            kept = search_path.kept_in_set_config(stmt) if params is None and many is None else None
            if kept is not None:
                query = server_sql(kept)  # (the client's schema kept on the path)
            cur._raw(query, params)
            return
        query = _cache_key(query, with_params)  # the plan cache's key from here on
        answer = sequences.answer(stmt, self.catalog, self._runtime)
        if answer is not None:
            cur._set_result(*answer)
            return
        if type(stmt) in _COMPILED_KINDS:  # SELECT/INSERT/UPDATE/DELETE: skip the checks below
            self._compiled_kind[query] = (stmt, npos, named)
            if not named:  # (other statements go to psycopg, or are parsed again: EXPLAIN)
                for p in many if many is not None else (params,):
                    _check_positional_count(npos, p)
            self._run_compiled(cur, query, stmt, params, many)
            return
        if isinstance(stmt, exp.Command) and stmt.name.upper() == "EXPLAIN":
            self._explain(cur, stmt, params)
            return
        if isinstance(
            stmt, exp.Create | exp.Drop | exp.Alter | exp.TruncateTable
        ) or typeddl.is_type_statement(stmt):
            self._ddl(stmt)
            cur._set_result([], None, -1)
            return
        self._run_compiled(cur, query, stmt, params, many)

    def _run_script(
        self, cur: Cursor, parts: list[str], params: Params | None, many: Sequence[Params] | None
    ) -> None:
        """Several statements in one execute(), as psycopg runs them: only without
        parameters, in order, the cursor left on the last one's result.  PostgreSQL runs
        such a script outside a transaction block as one implicit transaction (a failing
        statement undoes the ones before it); so does the client in autocommit mode."""
        if params or many is not None:
            raise psycopg.errors.SyntaxError(
                "cannot insert multiple commands into a prepared statement"
            )
        for part in parts:  # PostgreSQL parses a whole script before it runs any of it
            self._syntax_checked(part)
        results: list[tuple[Any, ...]] = []

        def run_all() -> None:
            for part in parts:
                self._run(cur, part, None)
                results.append((cur._rows, cur.description, cur.rowcount))
            # as psycopg 3: the cursor holds the first result, nextset() moves on
            cur._set_result(*results[0])
            cur._more_sets = results[1:]

        if (
            not self.pg.autocommit
            or self._in_transaction()
            or any(session_command(p) in ("begin", "commit", "rollback") for p in parts)
        ):
            # inside a transaction, or a script that manages its own transactions:
            # statement by statement
            run_all()
            return
        try:
            with self.pg.transaction():
                run_all()
            self._after_commit()
        except BaseException:
            self._catalog_dirty = True  # DDL earlier in the script was undone with it
            self._after_rollback()
            raise

    def _syntax_checked(self, part: str) -> None:
        """A script's statement parsed before the script runs: its syntax error raised
        (anything else the statement may raise is raised when it runs)."""
        if session_command(part) is not None or maintenance.is_maintenance(part):
            return
        try:
            if server_commands.route(part, self.catalog) is not None:
                return
        except psycopg.Error:
            return  # (refused, or names what the script creates first: decided when run)
        try:
            self._parse(part, False)
        except psycopg.errors.SyntaxError:
            raise
        except psycopg.Error:
            pass

    def _session_command(self, cur: Cursor, kind: str, query: str, params: Params | None) -> None:
        """Transaction control, savepoints, SET/SHOW: run as written (they name no table
        or value), with the client's state kept in step."""
        failed = self.pg.pgconn.transaction_status == _INERROR
        cur._raw(search_path.kept_in_set(query) if kind == "set" else query, params)
        if kind == "commit":
            self._after_commit_of(failed)
        elif kind == "rollback":
            self._after_rollback()
        elif kind == "rollback_to":
            self._after_rollback_to_savepoint()

    def _run_compiled(
        self,
        cur: Cursor,
        query: str,
        stmt: exp.Expression,
        params: Params | None,
        many: Sequence[Params] | None,
    ) -> None:
        for attempt in range(3):
            try:
                plan = self._prepare(query, stmt)
            except UnsupportedQuery as refused:
                # an UPDATE whose values or rows need the client: read, then write by key
                rows = (
                    update_rows.derive(self.catalog, stmt)
                    if isinstance(stmt, exp.Update) and not self._writing_rows
                    else None
                )
                if type(refused) is not UnsupportedQuery or rows is None:
                    raise  # (the writes by key are refused as such: no second fallback)
                total = 0
                for p in many if many is not None else (params,):
                    total += self._update_by_rows(rows, p if p is not None else ())
                cur._set_result([], None, total)
                return
            except (UndefinedTable, UndefinedColumn):
                # another client's DDL, committed, whose notification has not reached
                # this client yet: read the catalog again (between transactions) once
                if attempt or self._in_transaction() or not self.catalog.refresh(self.control):
                    raise
                continue
            kind = plan.statement_type
            # the statement opens the transaction: nothing else is undone if it is retried
            first_in_transaction = not self._in_transaction()
            try:
                # (STATS.statement(kind), inlined: this wraps every statement)
                prev, STATS.current = STATS.current, kind
                STATS.statements[kind] += 1
                # (the server's clock, read when a value of it is first bound)
                clock = SERVER_CLOCK.set(ServerClock(self.pg)) if plan.uses_clock else None
                try:
                    if many is not None:
                        cur._execute_many(plan, many)
                    else:
                        cur._execute_plan(plan, params if params is not None else ())
                finally:
                    STATS.current = prev
                    if clock is not None:
                        SERVER_CLOCK.reset(clock)
                return
            except (psycopg.errors.CheckViolation, psycopg.errors.UndefinedColumn) as exc:
                if isinstance(exc, psycopg.errors.UndefinedColumn):
                    # the statement names an onion column a join adjustment renamed
                    # (joins.py): our cached metadata is stale if the epoch moved
                    if isinstance(exc, AdaptiveError) or not self._epoch_moved():
                        raise
                elif not (exc.diag.constraint_name or "").startswith("k_"):
                    raise
                # a layer changed under us: our cached metadata was stale
                if not self.pg.autocommit and self._in_transaction():
                    if first_in_transaction and attempt < 2:
                        # (another client's peel whose notification had not arrived yet)
                        self.pg.rollback()
                        self._after_rollback()
                        self.catalog.reload(self.control)
                        STATS.retries += 1
                        continue
                    self.catalog.reload(self.control)
                    raise StaleMetadata(
                        "a value was written at a layer the column just left; retry the transaction"
                    ) from None
                self.catalog.reload(self.control)
                STATS.retries += 1
                if attempt == 2:
                    raise StaleMetadata("layers kept changing; retry") from None

    def _update_by_rows(self, rows: update_rows.RowUpdate, params: Params) -> int:
        """Run an UPDATE as its read and its writes by key (rewrite/update_rows.py), in the
        statement's transaction (its own in autocommit mode), the table held against
        other writers from before the read to the end of the transaction; the number of
        rows updated."""
        read = self._prepare("\x01rows of an UPDATE\x00" + rows.select_sql, rows.select)
        table = self.catalog.table(rows.table).anon

        def run() -> None:
            self.pg.execute(
                sql.SQL("LOCK TABLE {} IN SHARE ROW EXCLUSIVE MODE").format(sql.Identifier(table))
            )
            reader = Cursor(self)
            reader._execute_plan(read, params)
            found.extend(reader._rows)
            if found:
                k = rows.keys
                writes = [(*row[k:], *row[:k]) for row in found]
                self._writing_rows = True
                try:
                    self._run(Cursor(self), rows.update_sql, None, many=writes)
                finally:
                    self._writing_rows = False

        found: list[tuple[Any, ...]] = []
        if not self.pg.autocommit or self._in_transaction():
            run()
            return len(found)
        try:
            with self.pg.transaction():
                run()
            self._after_commit()
        except BaseException:
            self._after_rollback()
            raise
        return len(found)

    def _epoch_moved(self) -> bool:
        row = self.control.execute("SELECT value FROM adaptive.epoch WHERE id = 1").fetchone()
        return row is not None and row[0] != self.catalog.epoch

    def _forget(self, plan: Compiled) -> None:
        """A write to a table ends the validity of the locked rows cached for it."""
        for table in plan.tables:
            self._forget_table(table)

    def _forget_table(self, table: Any) -> None:
        if self._locked:
            for key in [k for k in self._locked if k[0] == table.anon]:
                del self._locked[key]

    def _explain(self, cur: Cursor, stmt: exp.Expression, params: Params | None) -> None:
        """EXPLAIN [(options)] <statement>: the server's plan for the rewritten statement
        (anonymized names; what a DBA needs to check that indexes serve the onions)."""
        text = str(stmt.expression.this if stmt.expression is not None else "").strip()
        options = ""
        if text.startswith("("):
            close = text.index(")")
            options, text = text[: close + 1], text[close + 1 :].strip()
            words = set(options.strip("()").replace(",", " ").upper().split())
            if not words <= {
                "ANALYZE",
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
                "TRUE",
                "FALSE",
                "ON",
                "OFF",
            }:
                raise UnsupportedQuery(f"EXPLAIN option {options}", "EXPLAIN options")
        inner = _parse_sql(text)
        if len(inner) != 1:
            raise UnsupportedQuery("EXPLAIN of other than one statement", "EXPLAIN")
        plan = self._prepare(text, inner[0])
        if plan.rmw is not None:
            raise UnsupportedQuery("EXPLAIN of an UPDATE computed on the client", "EXPLAIN")
        with self.pg.cursor() as raw:
            raw.execute(f"EXPLAIN {options} {plan.sql}".encode(), plan.bind(params or ()))
            rows = raw.fetchall()
        cur._set_result(rows, [Column("QUERY PLAN", 25)], len(rows))

    def _ddl(self, stmt: exp.Expression) -> None:
        if not self._in_transaction():
            # decide IF [NOT] EXISTS and name clashes on the committed catalog, not on
            # one another client's DDL notification has not reached yet
            self.catalog.refresh(self.control)
        run = ddl.statement(self.pg, self.catalog, self.config, self._runtime, stmt)
        self._direct.schema_changed()
        if self.pg.autocommit:
            try:
                with self.pg.transaction():
                    run()
                if not self._in_transaction():
                    self.catalog.committed()
            except BaseException:
                self.catalog.reload(self.control)
                raise
        else:
            self._catalog_dirty = True
            run()
        self._plans.clear()


def _cache_key(query: str, with_params: bool) -> str:
    """The parse and plan caches' key: the text, marked where it was run without
    parameters and has a ``%%`` that parameters would have made ``%``."""
    return query if with_params or "%%" not in query else "\x00" + query


def _compare(keys: list[SortKey]) -> Any:
    def cmp(a: tuple[Any, ...], b: tuple[Any, ...]) -> int:
        for i, k in enumerate(keys):
            x, y = a[i], b[i]
            if x == y:
                continue
            if x is None or y is None:
                first = (x is None) == k.nulls_first
                return -1 if first else 1
            r = -1 if x < y else 1
            return -r if k.desc else r
        return 0

    return cmp_to_key(cmp)


class Cursor:
    arraysize = 1

    def __init__(self, conn: Connection) -> None:
        self.connection = conn
        self._rows: list[tuple[Any, ...]] = []
        self._pos = 0
        self.description: Sequence[tuple[Any, ...]] | None = None
        self.rowcount = -1
        self.closed = False
        self._server: psycopg.RawCursor[Any] | None = None
        self._more_sets: list[tuple[Any, ...]] = []  # the rest of a script's results
        # json values kept as the client holds them, not loaded (COPY TO prints them)
        self._internal_values = False

    # -- DB-API ----------------------------------------------------------------------------
    def execute(self, query: str, params: Params | None = None) -> Cursor:
        self._statement(query, params, None)
        return self

    def executemany(self, query: str, params_seq: Iterable[Params]) -> None:
        self._statement(query, None, list(params_seq))

    def _statement(self, query: str, params: Params | None, many: Sequence[Params] | None) -> None:
        """Run a statement under the connection's lock; an error fails the transaction
        where PostgreSQL would have, and reaches the application in its plain names."""
        conn = self.connection
        with conn.lock:
            try:
                conn._run(self, query, params, many)
            except BaseException as exc:
                conn._statement_failed(exc)
                if isinstance(exc, psycopg.Error):
                    raise self._plain_error(exc) from None
                raise

    def copy(self, statement: str, params: Params | None = None) -> Any:
        """``COPY t FROM STDIN`` / ``COPY ... TO STDOUT`` as psycopg's ``cursor.copy()``:
        a context manager whose object has ``write_row``/``write`` (values encrypted in
        batches on the way) or ``rows``/``read`` (decrypted); see adaptive_client.copy."""
        from .copy import open_copy

        conn = self.connection
        conn._bind()
        conn._maybe_refresh()
        text, _, _ = normalize_placeholders(statement)
        stmts = _parse_sql(text)
        if len(stmts) != 1 or not isinstance(stmts[0], exp.Copy):
            raise UnsupportedQuery("cursor.copy() takes one COPY statement", "COPY")
        return open_copy(self, stmts[0], params)

    def _plain_error(self, exc: psycopg.Error) -> BaseException:
        """A server error in the application's names (see server_errors); the library's
        own errors and errors without a server report go as they are."""
        if isinstance(exc, AdaptiveError) or exc.diag.sqlstate is None:
            return exc.with_traceback(exc.__traceback__)
        conn = self.connection
        return server_errors.translate(exc, conn.catalog, conn.control)

    def fetchone(self) -> tuple[Any, ...] | None:
        if self._pos >= len(self._rows):
            return None
        row = self._rows[self._pos]
        self._pos += 1
        return row

    def fetchmany(self, size: int | None = None) -> list[tuple[Any, ...]]:
        n = size or self.arraysize
        out = self._rows[self._pos : self._pos + n]
        self._pos += len(out)
        return out

    def fetchall(self) -> list[tuple[Any, ...]]:
        out = self._rows[self._pos :]
        self._pos = len(self._rows)
        return out

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
        self._set_result(*self._more_sets.pop(0))
        return True

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

    # -- internals -------------------------------------------------------------------------
    def _set_result(
        self, rows: list[tuple[Any, ...]], desc: Sequence[tuple[Any, ...]] | None, rowcount: int
    ) -> None:
        self._more_sets = []
        internal = self._internal_values
        self._rows, self._pos = (rows if internal else application_rows(rows, desc)), 0
        self.description = desc or None
        self.rowcount = rowcount

    def _raw(self, query: str, params: Params | None) -> None:
        with self.connection.pg.cursor() as cur:
            cur.execute(query.encode(), params)
            rows = cur.fetchall() if cur.description else []
            desc = [from_psycopg(d) for d in cur.description or []]
            self._set_result(rows, desc, cur.rowcount)

    def _execute_plan(self, plan: Compiled, params: Params) -> None:
        conn = self.connection
        CURRENT_PARAMS.set(params)
        if plan.rmw is not None:
            self._rmw(plan, params)
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
        raw, rowcount = self._run_server(plan.positional_sql, bound, plan.returns_rows)
        if plan.kind != "select":
            conn._forget(plan)
        elif (
            plan.lock_key is not None
            and len(raw) == 1
            and conn._in_transaction()
            and (plan.locks_rows or conn._snapshot_isolation())
        ):
            conn._locked[plan.lock_key(params)] = tuple(raw[0][i] for i in plan.lock_layout or [])
        if not plan.returns_rows:
            self._set_result([], None, rowcount)
            return
        with STATS.crypto():
            if plan.reduce is not None:
                rows = [plan.reduce(raw)]
                self._set_result(rows, plan.description, 1)
                return
            rows = decrypt_columns(plan.outputs, raw)
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
        self._set_result(rows, plan.description, len(rows) if plan.kind == "select" else rowcount)

    def _run_server(self, query: bytes, bound: Sequence[Any], rows: bool) -> tuple[list[Any], int]:
        """(rows, rowcount) of ``query`` (``$n`` placeholders): directly once psycopg has
        prepared it, else through this cursor's server cursor."""
        direct = self.connection._direct.run(query, bound, rows)
        if direct is not None:
            return direct
        cur = self._server_cursor()
        try:
            cur.execute(query, bound)
        except psycopg.errors.FeatureNotSupported:
            self.connection._direct.schema_changed()  # (see DirectExecutor._check)
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

    def _execute_many(self, plan: Compiled, seq: Sequence[Params]) -> None:
        if plan.rmw is not None or plan.returns_rows:
            total = 0
            for p in seq:
                self._execute_plan(plan, p)
                total += max(self.rowcount, 0)
            self.rowcount = total
            return
        with STATS.crypto():
            bound = [plan.bind_positional(p) for p in seq]
        with psycopg.RawCursor(self.connection.pg) as cur:
            cur.executemany(plan.positional_sql, bound)
            self._set_result([], None, cur.rowcount)

    def _insert_select(self, plans: tuple[Compiled, Compiled], params: Params) -> None:
        """Read the source rows decrypted, insert them through the single-row INSERT, in
        one transaction (its own in autocommit mode, as the one statement would be)."""
        source, target = plans
        conn = self.connection
        ctx = conn.pg.transaction() if conn.pg.autocommit else contextlib.nullcontext()
        with ctx:
            self._execute_plan(source, params)
            rows = self._rows
            if target.returns_rows:
                returned: list[tuple[Any, ...]] = []
                for row in rows:
                    self._execute_plan(target, row)
                    returned += self._rows
                self._set_result(returned, target.description, len(rows))
                return
            if rows:
                with STATS.crypto():
                    bound = [target.bind_positional(row) for row in rows]
                with psycopg.RawCursor(conn.pg) as cur:
                    cur.executemany(target.positional_sql, bound)
        conn._forget(target)
        self._set_result([], None, len(rows))

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
        self._set_result(rows, plan.description, len(rows))

    def _rmw(self, plan: Compiled, params: Params) -> None:
        conn = self.connection
        rmw = plan.rmw
        assert rmw is not None
        CURRENT_PARAMS.set(params)
        ctx = conn.pg.transaction() if conn.pg.autocommit else contextlib.nullcontext()
        with ctx:
            key = rmw.lock_key(params) if rmw.lock_key is not None else None
            cached = conn._locked.get(key) if key is not None else None
            if cached is not None:
                rows = [cached]  # this transaction holds the row lock: no SELECT needed
                STATS.locked_reuse += 1
            else:
                select = rmw.select
                with STATS.crypto():
                    bound_select = select.bind_positional(params)
                rows = self._run_server(select.positional_sql, bound_select, True)[0]
            updates = []
            with STATS.crypto():
                for row in rows:
                    pairs = rmw.seal([fn(row, params) for _, fn in rmw.assignments])
                    updates.append((pairs, row[0]))
            returned: list[tuple[Any, ...]] = []
            if updates and rmw.returning is None:
                write = rmw.write_sql([a for a, _ in updates[0][0]])
                data = [[v for _, v in pairs] + [ctid] for pairs, ctid in updates]
                if len(data) == 1:
                    self._run_server(write, data[0], False)
                else:
                    self._server_cursor().executemany(write, data)
            elif updates:
                cols = [a for a, _ in updates[0][0]]
                stmt = sql.SQL("UPDATE {} AS {} SET {} WHERE {}.ctid = %s {}").format(
                    sql.Identifier(rmw.table.anon),
                    sql.Identifier(rmw.alias),
                    sql.SQL(", ").join(sql.SQL("{} = %s").format(sql.Identifier(c)) for c in cols),
                    sql.Identifier(rmw.alias),
                    sql.SQL((rmw.returning or "").replace("%", "%%")),
                )
                with conn.pg.cursor() as cur:
                    for pairs, ctid in updates:
                        cur.execute(stmt, [v for _, v in pairs] + [ctid])
                        returned += cur.fetchall()
        conn._forget(plan)
        if rmw.returning is not None:
            with STATS.crypto():
                out = decrypt_columns(plan.outputs, returned)
            self._set_result(out, plan.description, len(rows))
            return
        self._set_result([], None, len(rows))


class NamedCursor(Cursor):
    """A server-side cursor: a SELECT the server answers alone (no ordering, aggregate or
    finishing left to the client) is declared on the server and fetched ``itersize``
    rows at a time, each batch decrypted as it arrives.  Any other statement runs as on
    a client-side cursor -- the same rows, held in memory."""

    itersize = 100

    def __init__(self, conn: Connection, name: str, *, withhold: bool = False) -> None:
        super().__init__(conn)
        self.name = name
        self.withhold = withhold
        self._declared: psycopg.RawServerCursor[Any] | None = None
        self._outputs: list[Any] = []

    def execute(self, query: str, params: Params | None = None) -> Cursor:
        # the previous result's server cursor goes first: an open cursor on a table
        # would block a peel the next statement needs
        self._close_declared()
        return super().execute(query, params)

    def _execute_plan(self, plan: Compiled, params: Params) -> None:
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
            super()._execute_plan(plan, params)
            return
        CURRENT_PARAMS.set(params)
        self._close_declared()
        with STATS.crypto():
            bound = plan.bind_positional(params)
        cur = psycopg.RawServerCursor(self.connection.pg, self.name, withhold=self.withhold)
        cur.execute(plan.positional_sql, bound)
        self._declared, self._outputs = cur, plan.outputs
        self._rows, self._pos = [], 0
        self.description = plan.description
        self.rowcount = -1

    def _more(self, n: int | None) -> list[tuple[Any, ...]]:
        """Up to ``n`` (None: all) more decrypted rows from the server cursor."""
        assert self._declared is not None
        with self.connection.lock:
            self.connection._bind()
            raw = self._declared.fetchall() if n is None else self._declared.fetchmany(n)
            with STATS.crypto():
                return application_rows(decrypt_columns(self._outputs, raw), self.description)

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


__all__ = ["AdaptiveError", "Connection", "Cursor", "NamedCursor", "connect"]
