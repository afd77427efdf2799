"""The DB-API 2.0 / psycopg-3-style connection: :func:`connect` and :class:`Connection`,
the session.

Each Connection holds two PostgreSQL sessions: the *main* one, running the application's
(rewritten) statements in the application's transactions, and a *control* one
(autocommit) that reads metadata and runs peels in transactions of their own -- never
inside the application's snapshot.  The connection owns the session: the lock, the
transaction state the client keeps in step with the server's, the parse and plan caches,
the catalog and what the statements compile under (collations).  Its cursors
(``cursor.py``) own the execution of statements and reach it through
:class:`~adaptive_client.dbapi.session_protocol.Session`; the adaptations a plan needs run in
``executor.py``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Generator, Iterable, Mapping
from contextvars import ContextVar
from dataclasses import replace
from functools import partial
from typing import Any

import psycopg
from psycopg.rows import RowFactory, tuple_row
from sqlglot import exp

from ..adapt.compaction import Compactor
from ..adapt.executor import Executor
from ..catalog import defaults, recipes
from ..catalog.config import PEEL_MODES, Config, load_config
from ..catalog.install import resolve_peel_mode
from ..catalog.keys import MasterKey, load_master_key
from ..catalog.metadata import Catalog, TableMeta
from ..compile.plan import Compiled, Params
from ..compile.settings import NO_KEPT_ROWS, KeptRows, Settings
from ..compile.statements import compile_statement
from ..errors import AdaptiveError, CollationUnavailable, ConfigError, UnsupportedQuery
from ..stats import Stats
from ..stats import bind as bind_stats
from ..syntax.params import normalize_placeholders
from ..syntax.sqltext import parse as parse_sql
from ..values import wire
from ..values.clock import uses_clock
from ..values.collation import (
    CaseMapping,
    Collation,
    check_available,
    database_case_mapping,
    database_collation,
    named_collation,
    require_collator,
    server_version,
)
from .cursor import Cursor, NamedCursor, Query
from .direct import DirectExecutor, keep_statements_across_rollback
from .notifications import watch
from .pooling import told
from .repeats import Repeat, repeatable
from .replicas import Router, router_for
from .restart import TransactionReads
from .retries import IDLE, INERROR
from .session_protocol import Parsed, RepeatedStatement, cache_key
from .statement_log import StatementLog

# the token of the connection the current thread's context variables serve (bind)
_BOUND: ContextVar[object | None] = ContextVar("adaptive_bound_connection", default=None)
_SNAPSHOT_LEVELS = (psycopg.IsolationLevel.REPEATABLE_READ, psycopg.IsolationLevel.SERIALIZABLE)
_CACHE_LIMIT = 2048


def connect(
    conninfo: str = "",
    *,
    master_key: MasterKey | bytes | str | os.PathLike[str] | None = None,
    config: str | os.PathLike[str] | Mapping[str, Any] | Config | None = None,
    peel: str | None = None,
    autocommit: bool = False,
    statement_log: str | os.PathLike[str] | None = None,
    native: bool = True,
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
    ``adaptive-db advise`` (see :mod:`adaptive_client.dbapi.statement_log`).
    ``native=False`` opens results through the Python path only, as an install without
    the compiled layer does (the same values; for comparisons and diagnosis).
    ``pool_mode`` (``transaction``, ``session``, ``none``; also an option of
    ``conninfo``) says what pooler is in front of the server, detected where not said;
    ``prepare=False`` turns prepared statements off (see
    :mod:`adaptive_client.dbapi.pooling` and docs/poolers.md).
    ``replicas`` (a list of conninfos or ``host[:port]``) names streaming standbys that
    read-only work runs on, waiting for their replay up to ``replica_wait`` seconds
    (see :mod:`adaptive_client.dbapi.replicas`).
    """
    key = load_master_key(master_key)
    cfg = load_config(config if not isinstance(config, os.PathLike) else str(config))  # type: ignore[arg-type]
    mode = peel or cfg.peel
    if mode is not None and mode not in PEEL_MODES:
        raise ConfigError(f"peel mode must be one of {PEEL_MODES}, not {mode!r}")
    if statement_log is not None:
        cfg = replace(cfg, statement_log=os.fspath(statement_log))
    return Connection(conninfo, key, cfg, mode, autocommit=autocommit, native=native, **kwargs)


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
        native: bool = True,
        **kwargs: Any,
    ) -> None:
        self.config = config
        # results opened by the compiled layer where it is installed (compile/plan.py's
        # open_rows), else by the Python path alone
        self.native = native
        # the most rows a client-evaluated statement may fetch (None: no cap)
        self.residual_row_cap: int | None = config.residual_row_cap
        self._statement_log = StatementLog(config.statement_log) if config.statement_log else None
        # psycopg's adapters context (an application's json loads, SQLAlchemy's): the
        # application's session's, whose values the application reads; not the control
        # session's, which reads the client's own metadata
        context = kwargs.pop("context", None)
        # psycopg's row factory of the application's cursors (not of the client's own
        # sessions, which read tuples)
        self.row_factory: RowFactory[Any] = kwargs.pop("row_factory", None) or tuple_row
        conninfo, pool_told = told(conninfo, kwargs)  # (pooling.py: a pooler in front)
        standbys = kwargs.pop("replicas", None), kwargs.pop("replica_wait", None)
        self.control = psycopg.connect(conninfo, autocommit=True, **kwargs)
        try:
            self.pooling = pool_told.settle(self.control)
            if not self.pooling.prepare:
                kwargs["prepare_threshold"] = self.control.prepare_threshold = None
            # tables adaptations rewrote, compacted in the background on a session of its
            # own (analyzed only behind a transaction pooler)
            self.compactor = Compactor(
                partial(psycopg.connect, conninfo, autocommit=True, **kwargs),
                rewrite=not self.pooling.transaction,
            )
            self.catalog = Catalog.open(self.control, master_key)
            require_collator(self.control)  # an ICU database needs PyICU: refused at connect
            self.peel_mode: str = resolve_peel_mode(self.control, peel_mode)
            self._notifications = watch(
                self.control, self.catalog, listen=not self.pooling.transaction
            )
            if context is not None:
                kwargs["context"] = context
            self.pg = psycopg.connect(conninfo, autocommit=autocommit, **kwargs)
            if not config.server_jit and not self.pooling.transaction:
                # The rewritten statements compare and sum ciphertexts: their planner costs
                # grow with the onions' width and pass the JIT thresholds on tables a few
                # GB wide, where compiling costs seconds (2.6 s of TPC-H Q6's 6.1 s at
                # SF 1) and saves little on bytea comparisons.  Not a startup option:
                # connection poolers refuse those.  (Behind a transaction pooler it would
                # stay on a shared server session: ALTER ROLE ... SET jit = off there.)
                self.pg.execute("SET jit = off")
                if not autocommit:
                    self.pg.commit()
            wire.register(self.pg)
            wire.register_ore(self.pg, self.control)
            wire.register_ore(self.control, self.control)  # (adaptations read on it)
            # repeated statements' server SQL, prepared (kept across rollbacks) and run
            # without a cursor
            if self.pooling.prepare:
                keep_statements_across_rollback(self.pg)
            self.direct = DirectExecutor(self.pg)
        except BaseException:
            self.control.close()
            raise
        # compiled plans by text, catalog epoch and whether reads are on one snapshot, each
        # beside the rule of kept rows it was compiled under (a rule learned since holds
        # for it where it keeps the same columns of its table: KeptRows.same_for)
        self._plans: dict[tuple[str, int, bool], tuple[Compiled, KeptRows]] = {}
        # statements whose repeats skip the dispatch (repeats.py), valid while the plan
        # generation (moved whenever the plans are dropped) is the one they were made in
        self.repeats: dict[str, RepeatedStatement] = {}
        self.plan_generation = 0
        self._parsed: dict[str, Parsed] = {}
        # statements seen before that go straight to the compiler (SELECT, INSERT, UPDATE,
        # DELETE, not a client-answered sequence call): their repeats skip the dispatch
        self._compiled_kind: dict[str, Parsed] = {}
        # the peels, join adjustments and builds the statements' plans need
        self.executor = Executor(self)
        self.deferred_builds = self.executor.deferred  # (the same dict, for the cursors)
        # the catalog was changed inside the application's transaction (DDL, a peel
        # inside it): read again if it rolls back
        self.catalog_dirty = False
        # rows this transaction locked with SELECT ... FOR UPDATE by primary key (or read
        # on its snapshot), in the RMW layout with the columns they hold (None: all): a
        # later UPDATE SET x = x + k of the same row needs no SELECT
        self.locked_rows: dict[Any, tuple[frozenset[str] | None, tuple[Any, ...]]] = {}
        # which rows read by key are kept for a read-modify-write (kept_rows), learned
        # from the updates compiled: as plain reads keep them, and as those of a snapshot
        self._kept = NO_KEPT_ROWS
        self._kept_on_snapshot = replace(NO_KEPT_ROWS, snapshot=True)
        self._c_locale_db: bool | None = None
        self.runtime = defaults.Runtime(self.pg)  # sequence blocks, transaction's now()
        # the database's default collation, and the server's collator version of each
        # collation a statement ordered by (read once per connection)
        self._db_collation: Collation | None = None
        self._server_versions: dict[Collation, str | None] = {}
        self._case_mapping: CaseMapping | None = None
        self._named_collations: dict[str, Collation] = {}
        # held for the whole of each statement, commit and rollback (see the class's doc)
        self.lock = threading.RLock()
        self._stats = Stats()
        # which connection the current thread's context variables are bound to (bind):
        # a token of its own, so that a closed connection's identity cannot be reused
        self._token = object()
        # the standbys read-only work runs on (replicas.py), None: all on the primary
        self.replicas: Router | None = router_for(self, conninfo, *standbys, kwargs)
        # whether the open transaction has only read so far: a statement another
        # client's adaptation made stale may then start it again (restart.py)
        self.reads = TransactionReads()

    # -- DB-API ----------------------------------------------------------------------------
    def cursor(
        self,
        name: str = "",
        *,
        withhold: bool = False,
        row_factory: RowFactory[Any] | None = None,
        binary: bool | None = None,
        scrollable: bool | None = None,
    ) -> Cursor:
        """A client-side cursor, or with ``name`` a server-side one that streams a large
        result (``DECLARE``/``FETCH``) and decrypts it a batch at a time.  Its rows are
        made by ``row_factory`` (psycopg's; the connection's ``row_factory`` where not
        given); ``binary`` and ``scrollable`` are psycopg's, taken and left to the
        client (a value loads to the same Python value in either format)."""
        if name:
            return NamedCursor(self, name, withhold=withhold, row_factory=row_factory)
        return Cursor(self, row_factory=row_factory)

    def execute(
        self,
        query: Query,
        params: Params | None = None,
        *,
        prepare: bool | None = None,
        binary: bool = False,
    ) -> Cursor:
        cur = self.cursor()
        cur.execute(query, params)
        return cur

    def commit(self) -> None:
        with self.lock:
            self.bind()
            failed = self.pg.pgconn.transaction_status == INERROR
            self.pg.commit()
            self.after_commit_of(failed)

    def rollback(self) -> None:
        with self.lock:
            self.bind()
            self.pg.rollback()
            self.after_rollback()

    # -- LISTEN / NOTIFY: the application's channels are the application's session's (the
    # client's own catalog notifications arrive on its control session)
    def notifies(
        self, *, timeout: float | None = None, stop_after: int | None = None
    ) -> Generator[psycopg.Notify]:
        """psycopg's ``notifies()``: the notifications of the channels LISTENed to."""
        return self.pg.notifies(timeout=timeout, stop_after=stop_after)

    def add_notify_handler(self, callback: Callable[[psycopg.Notify], None]) -> None:
        self.pg.add_notify_handler(callback)

    def remove_notify_handler(self, callback: Callable[[psycopg.Notify], None]) -> None:
        self.pg.remove_notify_handler(callback)

    def cancel(self) -> None:
        """Cancel what this connection is running, from another thread (as psycopg's
        ``cancel_safe``): the statement's wait for the server ends with
        ``QueryCanceled``, and the transaction it ran in is failed.  A peel or onion
        build the statement was running on the control session is cancelled too (it
        rolls back whole).  Takes no lock: the statement holds the connection's."""
        for conn in (self.pg, self.control):
            (getattr(conn, "cancel_safe", None) or conn.cancel)()  # (psycopg < 3.2)

    def close(self) -> None:
        with self.lock:
            self.compactor.close()
            if self.replicas is not None:
                self.replicas.close()
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
    def read_only(self) -> bool | None:
        """As psycopg's: the application's transactions are READ ONLY (and run on a
        standby where the connection has ``replicas``)."""
        return self.pg.read_only

    @read_only.setter
    def read_only(self, value: bool | None) -> None:
        self.pg.read_only = value

    @property
    def isolation_level(self) -> Any:
        return self.pg.isolation_level

    @isolation_level.setter
    def isolation_level(self, value: Any) -> None:
        self.pg.isolation_level = value

    def transaction(self) -> Any:
        return self.pg.transaction()

    @property
    def info(self) -> Any:
        """The application's session's ``ConnectionInfo`` (server version, reported
        parameters such as TimeZone, transaction status), as psycopg's ``conn.info``."""
        return self.pg.info

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

    # -- the session, for its cursors (session_protocol.Session) and its executor ------
    def bind(self) -> None:
        """Make this connection the one the current thread works for: its statistics,
        sequence blocks and session settings (the TimeZone and DateStyle values are read
        and written under) -- whatever thread, and whatever connection it served before."""
        if _BOUND.get() is self._token:  # (this thread works for it already)
            return
        bind_stats(self._stats)
        defaults.RUNTIME.set(self.runtime)
        recipes.COMPILED.set(self.native)
        _BOUND.set(self._token)

    def in_transaction(self) -> bool:
        """Whether the application's session has a transaction open (or failed)."""
        # (libpq's status as an int: ``pg.info`` builds an object and an enum per call)
        return self.pg.pgconn.transaction_status != IDLE

    def snapshot_isolation(self) -> bool:
        """Whether the application's transactions run on one snapshot (REPEATABLE READ,
        SERIALIZABLE)."""
        return self.pg.isolation_level in _SNAPSHOT_LEVELS

    def kept_rows(self) -> KeptRows:
        """Which rows read by key are kept for a later read-modify-write of the same row
        in the transaction, and which of their columns (compile/settings.py): those of
        the tables this session updates so, also by plain reads under snapshot isolation
        -- unless its transactions are READ ONLY, where no write follows."""
        if self.pg.read_only or not self.snapshot_isolation():
            return self._kept
        return self._kept_on_snapshot

    def refresh_catalog(self) -> None:
        """Between transactions, pick up other clients' peels and DDL (notified)."""
        if self.in_transaction():
            return
        self.locked_rows.clear()
        if self._notifications.arrived():
            self.catalog.refresh(self.control)

    def catch_up_catalog(self) -> bool:
        """Read the catalog again for a relation it does not know, which another client
        may have created and committed before this one was notified; True when something
        changed. As PostgreSQL finds a relation committed before the statement: between
        transactions, and inside a READ COMMITTED one that wrote no metadata itself (its
        next statement's snapshot sees what the control session reads). Under snapshot
        isolation only the relations it does not know are added, each as the
        transaction's snapshot sees it (Catalog.adopt_created): the layers of the others,
        read now, may be newer than the snapshot's rows."""
        if self.in_transaction():
            if self.catalog_dirty or self.catalog.written_generation >= 0:
                return False
            if self.pg.pgconn.transaction_status == INERROR:
                return self.catalog.adopt_created(None, self.control)
            if self._on_one_snapshot():
                return self.catalog.adopt_created(self.pg, self.control)
        return self.catalog.refresh(self.control)

    def _on_one_snapshot(self) -> bool:
        """Whether the open transaction runs on one snapshot: :meth:`snapshot_isolation`,
        or where the connection sets no level, the server's default for it."""
        if self.pg.isolation_level is not None:
            return self.snapshot_isolation()
        row = self.pg.execute("SELECT current_setting('transaction_isolation')").fetchone()
        return row is not None and row[0] in ("repeatable read", "serializable")

    def epoch_moved(self) -> bool:
        """Whether the catalog changed on the server since this client last read it."""
        row = self.control.execute("SELECT value FROM adaptive.epoch WHERE id = 1").fetchone()
        return row is not None and row[0] != self.catalog.epoch

    def after_commit_of(self, failed: bool) -> None:
        """The client's state after a COMMIT: a failed transaction's COMMIT is a rollback."""
        if failed:
            self.after_rollback()
        else:
            self.locked_rows.clear()
            self.after_commit()

    def after_commit(self) -> None:
        """The client's state after the application's transaction committed."""
        self.direct.schema_changed(False)
        self.runtime.transaction_ended()
        self.catalog_dirty = False
        if self.catalog.committed():  # (enum labels added in it are usable now)
            self.forget_plans()
        self.executor.build_deferred()
        self.executor.compact()
        if self.replicas is not None:
            self.replicas.transaction_ended()

    def build_deferred(self) -> None:
        """Outside a transaction: the onions statements ran without, built (executor)."""
        if self.deferred_builds and not self.in_transaction():
            self.executor.build_deferred()

    def retire_precomputed(self, table: str, column: str) -> None:
        """Drop a precomputed column a statement computed a value for that its onions
        cannot hold (adapt/designed.py ``retire``), where a build would run."""
        self.executor.retire_precomputed(table, column)

    def after_rollback(self) -> None:
        """The client's state after the application's transaction rolled back: metadata
        this transaction changed (DDL, a peel inside it) is read again, committed; the
        peels it left pending run now."""
        self.locked_rows.clear()
        self.runtime.transaction_ended(rolled_back=True)
        self.catalog.rolled_back()
        if self.catalog_dirty:
            self.catalog.reload(self.control)
            self.catalog_dirty = False
            self.forget_plans()
        self.executor.run_pending_peels()
        self.executor.compact()
        if self.replicas is not None:
            self.replicas.transaction_ended()

    def after_rollback_to_savepoint(self) -> None:
        """ROLLBACK TO SAVEPOINT may undo this transaction's DDL or peels made after the
        savepoint: the catalog is read again inside the transaction, which sees exactly
        what survived.  Row locks taken after the savepoint are released, so the cache of
        locked rows is dropped."""
        self.locked_rows.clear()
        self.runtime.savepoint_rolled_back()
        if self.catalog_dirty:
            self.catalog.reload(self.pg)
            self.forget_plans()

    def forget(self, plan: Compiled) -> None:
        """A write to a table ends the validity of the locked rows cached for it."""
        for table in plan.tables:
            self.forget_table(table)

    def forget_table(self, table: TableMeta) -> None:
        if self.locked_rows:
            for key in [k for k in self.locked_rows if k[0] == table.anon]:
                del self.locked_rows[key]

    def forget_plans(self) -> None:
        """The catalog changed: no compiled plan holds any more (nor the repeats made of
        them: repeats.py)."""
        self._plans.clear()
        self.repeats.clear()
        self.plan_generation += 1

    def keep_repeat(self, query: str, plan: Compiled, npos: int | None) -> None:
        """``plan`` ran ``query``: its repeats skip the dispatch where the plan is the
        cached one and runs in one round trip (repeats.py)."""
        kept = self.kept_rows()
        if self.cached_plan(query, kept) is not plan:
            return
        if not repeatable(plan):
            return
        existing = self.repeats.get(query)
        if existing is not None and existing.current(self):
            return  # (one made under another epoch or rule of kept rows is replaced)
        if len(self.repeats) > _CACHE_LIMIT:
            self.repeats.clear()
        self.repeats[query] = Repeat(
            plan, npos, self.catalog.epoch, self.plan_generation, kept, self.native
        )

    # -- compilation -------------------------------------------------------------------------
    def parse(self, query: str, with_params: bool = True) -> Parsed:
        """The statement ``query`` is (parsed once per text)."""
        # psycopg reads ``%%`` as ``%`` everywhere (string literals and quoted names too)
        # when parameters are passed, and touches nothing when none are: the same text
        # may then mean two statements, cached apart (see session_protocol.cache_key)
        query_key = cache_key(query, with_params)
        hit = self._parsed.get(query_key)
        if hit is not None:
            return hit
        text, npos, named = normalize_placeholders(query, quoted_percents=with_params)
        stmts = parse_sql(text)
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

    def parsed_before(self, query: str) -> bool:
        """Whether ``query`` was parsed before (with parameters): a statement, then, not
        a script or a command."""
        return query in self._parsed

    def compiled_kind(self, key: str) -> Parsed | None:
        """A statement seen before that goes straight to the compiler (SELECT, INSERT,
        UPDATE, DELETE, not a client-answered sequence call)."""
        return self._compiled_kind.get(key)

    def remember_compiled_kind(self, key: str, parsed: Parsed) -> None:
        self._compiled_kind[key] = parsed

    def prepare(self, query: str, stmt: exp.Expression) -> Compiled:
        """The plan of ``stmt`` once the catalog has what it needs (executor.py)."""
        if self.replicas is not None and self.replicas.pinned is not None:
            return self.replicas.at_home(partial(self.executor.prepare, query, stmt))
        return self.executor.prepare(query, stmt)

    def compile(self, query: str, stmt: exp.Expression) -> Compiled:
        """The plan of ``stmt`` against the catalog as it is (cached per catalog epoch
        while it needs no adaptation)."""
        kept = self.kept_rows()
        plan = self.cached_plan(query, kept)
        if plan is not None:
            return plan
        settings = Settings(
            kept_rows=kept,
            database_collation=self._database_collation,
            case_mapping=self._database_case_mapping,
            named_collation=self._named_collation,
            json_fields=self.config.json_fields,
            design_budget=self.config.budget,
        )
        plan = compile_statement(self.catalog, stmt, settings)
        self._stats.compilations += 1
        self._check_plan(plan, stmt)
        if plan.rmw is not None:
            learned = self._kept.learned(plan.rmw.table.name, plan.rmw.reads)
            if learned is not self._kept:
                # (reads by key of its rows keep them from now on: plans compiled again)
                self._kept = learned
                self._kept_on_snapshot = replace(learned, snapshot=True)
        if plan.without_builds is not None:  # (run inside a transaction instead of a build)
            try:
                self._check_plan(plan.without_builds, stmt)
            except UnsupportedQuery:
                plan.without_builds = None  # (the build it is, then)
        if not plan.needs and not plan.joins and not plan.builds and plan.refusal is None:
            if len(self._plans) > _CACHE_LIMIT:
                self.forget_plans()
            self._plans[(query, self.catalog.epoch, kept.snapshot)] = (plan, kept)
        return plan

    def cached_plan(self, query: str, kept: KeptRows | None = None) -> Compiled | None:
        """The plan compiled for ``query`` on this catalog that holds under the rule of
        kept rows ``kept`` (None: the session's now); None where there is none."""
        if kept is None:
            kept = self.kept_rows()
        entry = self._plans.get((query, self.catalog.epoch, kept.snapshot))
        if entry is None:
            return None
        plan, under = entry
        return plan if under is kept or kept.same_for(under, plan.kept_table) else None

    def _check_plan(self, plan: Compiled, stmt: exp.Expression) -> None:
        """What a compiled plan needs of the session, checked before it runs: the
        server's clock read as it runs, text orders and case mappings the client can
        reproduce on this database."""
        plan.uses_clock = plan.uses_clock or uses_clock(stmt)
        if plan.text_orders:
            self._check_text_orders(plan.text_orders)
        residual = plan.residual or (plan.otherwise.residual if plan.otherwise else None)
        if residual is not None and residual.needs_c_locale and not self._c_locale():
            raise UnsupportedQuery(
                "text order and case mapping on the client are exact only under the C/POSIX "
                "collation; this database's differs",
                "client-evaluated text under a non-C collation",
            )

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


__all__ = ["AdaptiveError", "Connection", "Cursor", "NamedCursor", "connect"]
