"""Read replicas: which server a compiled statement's plan runs on.

``connect(..., replicas=[...])`` names streaming standbys of the primary the connection
opens.  What runs there, and what does not:

* An autocommit SELECT that reads only (no ``FOR UPDATE``, no write computed on the
  client) runs on a standby, chosen round robin among those that may answer it.
* A ``READ ONLY`` transaction (``conn.read_only = True``, as in psycopg, or SQLAlchemy's
  ``postgresql_readonly``) runs whole on one standby, chosen at its first statement: the
  application's session *is* that standby's session until the transaction ends, so its
  snapshot, isolation level and errors are the standby's, as PostgreSQL gives them.
* Everything else -- writes, DDL, ``SELECT ... FOR UPDATE``, statements in a read-write
  transaction, and every adaptation (peels, onion builds, join adjustments, the
  catalog's writes, which run on the control session before a plan is placed) -- runs
  on the primary.

**Never a column at a layer it has left.**  A plan is compiled against the catalog as
read from the primary; a standby that has not replayed the adaptations that catalog
reflects would hold the columns at their old layers (an equality on a column just
peeled to DET would find nothing on the RND ciphertexts still there).  So every plan
placed on a standby needs the standby to have replayed the primary's WAL up to a
position read on the primary *after* the catalog was loaded (``pg_current_wal_flush_lsn()``,
which covers every commit visible then; read again whenever the catalog's epoch moves,
which every adaptation and DDL moves),
compared with the standby's ``pg_last_wal_replay_lsn()``.  A standby that is behind is
waited for up to ``replica_wait`` seconds (polled), then the statement runs on the
primary.  A standby *ahead* of the catalog (another client's peel, not notified yet)
is what the primary is to a stale client: ciphertexts say their layer, and a renamed
onion column fails the statement, which is compiled again on the catalog read again.

**Read your writes.**  After this connection wrote on the primary (a write statement, a
committed transaction), the position is read again before the next read placed on a
standby: a read sees what the connection committed before it, as on one server.
Another connection's commits are seen once the standby has replayed them.

A standby that cannot be reached, is no longer in recovery (promoted), or fails a read
with a recovery conflict or a read-only refusal makes that autocommit read run on the
primary; a standby that cannot be reached is left alone for ``RETRY_DOWN`` seconds.
A READ ONLY transaction whose standby is lost mid-way fails with the connection error
(the application retries it, as after any lost connection); lost at its first
statement, it runs on the primary instead.

The replay positions are cached per standby: a read-only workload whose catalog holds
still asks no server anything beyond its statements.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Protocol

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from ..catalog import defaults
from ..catalog.metadata import Catalog
from ..compile.plan import Compiled
from ..errors import AdaptiveError, ConfigError, StaleSnapshot
from ..values import wire
from .direct import DirectExecutor, keep_statements_across_rollback
from .retries import IDLE, INTRANS

# seconds a read waits for a standby's replay before it runs on the primary
DEFAULT_WAIT = 0.1
# seconds a standby that could not be reached is left alone before it is tried again
RETRY_DOWN = 5.0
# the first and the longest pause between two polls of a standby's replay position
_POLL_FIRST = 0.0005
_POLL_MAX = 0.01
_CONNECT_TIMEOUT = 5
# The primary's WAL position that covers every commit a snapshot taken before can see: a
# commit waits for its record's flush before it becomes visible, so the flushed position
# covers it -- unless commits do not wait (synchronous_commit = off), where the inserted
# position does (and a standby reaches it only once the WAL writer has flushed it).
_POSITION = (
    "SELECT (CASE WHEN current_setting('synchronous_commit') = 'off' "
    "THEN pg_current_wal_insert_lsn() ELSE pg_current_wal_flush_lsn() END "
    "- '0/0'::pg_lsn)::int8"
)
# psycopg.connect()'s keywords that are not libpq connection parameters
_PSYCOPG_OPTIONS = frozenset({"context", "prepare_threshold", "row_factory", "cursor_factory"})
_SNAPSHOT_LEVELS = (psycopg.IsolationLevel.REPEATABLE_READ, psycopg.IsolationLevel.SERIALIZABLE)

# What makes an autocommit read placed on a standby run on the primary instead: the
# standby lost or shutting down (connection classes), a query cancelled by a recovery
# conflict (40001), refused as a write in a read-only transaction (25006: a SELECT
# calling a function that writes), or a standby that cannot accept connections yet.
_ELSEWHERE_STATES = frozenset({"40001", "25006", "57P01", "57P02", "57P03"})
_ELSEWHERE_CLASSES = ("08",)


class ReplicaSession(Protocol):
    """What the router reads and swaps of a connection's session."""

    pg: psycopg.Connection[Any]
    control: psycopg.Connection[Any]
    direct: DirectExecutor
    runtime: defaults.Runtime
    catalog: Catalog


class Standby:
    """One standby: its DSN, its session (opened on first use), its last known replay
    position, and whether it is usable now."""

    def __init__(self, dsn: str, opener: Callable[[str], psycopg.Connection[Any]]) -> None:
        self.dsn = dsn
        self._opener = opener
        self.pg: psycopg.Connection[Any] | None = None
        self.direct: DirectExecutor | None = None
        self.replayed = -1  # (bytes of WAL; -1: not known)
        self.down_until = 0.0
        self.answered = 0  # statements this standby answered

    def usable(self, now: float) -> bool:
        return now >= self.down_until

    def session(self) -> psycopg.Connection[Any] | None:
        """The standby's session, opened if it is not; None where it cannot be reached."""
        pg = self.pg
        if pg is not None and not pg.closed and not pg.broken:
            return pg
        self.close()
        try:
            self.pg = self._opener(self.dsn)
        except psycopg.Error:
            self.mark_down()
            return None
        self.direct = DirectExecutor(self.pg)
        return self.pg

    def poll(self) -> int:
        """The standby's replay position, asked now (-1 where it cannot tell: down, or
        not a standby any more, and then left alone for a while)."""
        pg = self.session()
        if pg is None:
            return -1
        try:
            row = pg.execute(
                "SELECT pg_is_in_recovery(), (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::int8"
            ).fetchone()
        except psycopg.Error:
            self.mark_down()
            return -1
        if row is None or not row[0] or row[1] is None:
            self.mark_down()  # promoted, or never a standby: its data may have diverged
            return -1
        self.replayed = int(row[1])
        return self.replayed

    def mark_down(self) -> None:
        self.down_until = time.monotonic() + RETRY_DOWN
        self.replayed = -1
        self.close()

    def close(self) -> None:
        if self.pg is not None:
            with contextlib.suppress(Exception):
                self.pg.close()
        self.pg = None
        self.direct = None


class Router:
    """A connection's standbys and where each plan runs (see the module's doc)."""

    def __init__(
        self,
        session: ReplicaSession,
        dsns: Sequence[str],
        opener: Callable[[str], psycopg.Connection[Any]],
        wait: float,
    ) -> None:
        self.session = session
        self.standbys = [Standby(dsn, opener) for dsn in dsns]
        self.wait = wait
        # the primary's session, its direct executor, and the runtime's connection
        self._home = (session.pg, session.direct)
        self._next = 0  # round robin
        # the primary's WAL position the standbys must have replayed, and the catalog
        # epoch it was read for; moved by this connection's writes too
        self._required = -1
        self._required_epoch: int | None = None
        self.wrote = True  # (read at the first placed read)
        self.pinned: Standby | None = None  # the standby a READ ONLY transaction runs on
        self._pinned_at = -1  # the replay position the pinned transaction started from
        self._placing = False  # (a plan run inside a placed one: where it is)
        self._routed = False  # (the statement running was placed on a standby)
        self.on_primary = 0  # statements the primary answered
        self.waits = 0  # placements that waited for a standby's replay
        self.last: str = "primary"  # which server answered the last statement

    # -- the position the standbys must have replayed -------------------------------------
    def required(self) -> int:
        """The primary's WAL position that covers the catalog and this connection's
        writes, read again when either moved."""
        catalog = self.session.catalog
        if self.wrote or catalog.epoch != self._required_epoch:
            epoch = catalog.epoch
            row = self.session.control.execute(_POSITION).fetchone()
            self._required = int(row[0]) if row is not None else 0
            self._required_epoch = epoch
            self.wrote = False
        return self._required

    def _choose(self, required: int) -> Standby | None:
        """A standby that has replayed ``required``, round robin, waited for up to
        ``wait`` seconds; None: the primary answers."""
        count = len(self.standbys)
        deadline: float | None = None
        pause = _POLL_FIRST
        while True:
            now = time.monotonic()
            alive = False
            for i in range(count):
                standby = self.standbys[(self._next + i) % count]
                if not standby.usable(now):
                    continue
                alive = True
                if standby.replayed >= required or standby.poll() >= required:
                    self._next = (self._next + i + 1) % count
                    return standby
            if not alive or self.wait <= 0:
                return None
            if deadline is None:
                deadline = now + self.wait
                self.waits += 1
            elif now >= deadline:
                return None
            time.sleep(pause)
            pause = min(pause * 2, _POLL_MAX)

    # -- placing a plan -----------------------------------------------------------------
    def run(self, plan: Compiled, run: Callable[[], None]) -> None:
        """``run()`` (the plan's execution on the session's ``pg``) where the plan goes."""
        if self._placing:
            run()
            return
        pinned = self.pinned
        if pinned is not None:
            self._check_pinned()
            try:
                self._counted(run, pinned)
            except psycopg.Error:
                if pinned.pg is None or pinned.pg.broken or pinned.pg.closed:
                    # the transaction is gone with its standby: the session is the
                    # primary's again, where the application's rollback finds nothing
                    pinned.mark_down()
                    self._unpin()
                raise
            return
        home = self._home[0]
        if home.pgconn.transaction_status == IDLE:
            if home.autocommit:
                if reads_only(plan):
                    self._read(run)
                    return
            elif home.read_only:
                self._open_read_only(run)
                return
        self._counted(run, None)

    def statement_done(self) -> None:
        """A statement of the application's ended: one that ran on the primary, by
        whatever path (DDL, COPY, a command the server answers...), may have written."""
        if self._routed:
            self._routed = False
        elif self.pinned is None:
            self.wrote = True

    def _counted(self, run: Callable[[], None], standby: Standby | None) -> None:
        self._routed = standby is not None
        self._placing = True
        try:
            run()
        finally:
            self._placing = False
        if standby is None:
            self.on_primary += 1
            self.last = "primary"
        else:
            standby.answered += 1
            self.last = standby.dsn

    def _read(self, run: Callable[[], None]) -> None:
        """An autocommit read: on a standby that has replayed what it needs, else (or
        where the standby fails it) on the primary."""
        standby = self._choose(self.required())
        if standby is None or self._swap(standby) is None:
            self._counted(run, None)
            return
        try:
            self._counted(run, standby)
            return
        except psycopg.Error as exc:
            if not _elsewhere(exc, standby):
                raise
            if standby.pg is None or standby.pg.broken or standby.pg.closed:
                standby.mark_down()
        finally:
            self._swap_home()
        self._counted(run, None)

    def _open_read_only(self, run: Callable[[], None]) -> None:
        """The first statement of a READ ONLY transaction: the transaction placed on a
        standby that has replayed what it needs (else the primary), kept there until it
        ends (:meth:`transaction_ended`)."""
        standby = self._choose(self.required())
        if standby is None or self._swap(standby) is None:
            self._counted(run, None)
            return
        self.pinned, self._pinned_at = standby, standby.replayed
        try:
            self._counted(run, standby)
            return
        except psycopg.Error as exc:
            pg = standby.pg
            if pg is None or not (pg.broken or pg.closed) or not _elsewhere(exc, standby):
                raise  # (the transaction stays on the standby: its rollback ends it)
            standby.mark_down()
            self._unpin()
        self._counted(run, None)  # lost at the first statement: the primary opens it

    def _check_pinned(self) -> None:
        """A later statement of a READ ONLY transaction on a standby: the catalog it was
        compiled on must be covered by what the standby replays -- waited for under READ
        COMMITTED (each statement a new snapshot), a retryable error where the
        transaction's snapshot is older."""
        standby = self.pinned
        assert standby is not None
        if self.session.pg.pgconn.transaction_status != INTRANS:
            return  # (failed: the statement is refused as it would be anyway)
        required = self.required()
        if standby.replayed >= required:
            if self._pinned_at >= required or not self._snapshot():
                return
        elif not self._snapshot():
            deadline = time.monotonic() + self.wait
            pause = _POLL_FIRST
            while standby.poll() < required:
                if time.monotonic() >= deadline:
                    break
                time.sleep(pause)
                pause = min(pause * 2, _POLL_MAX)
            else:
                return
        with contextlib.suppress(psycopg.Error):
            self.session.pg.execute(
                "DO $$BEGIN RAISE EXCEPTION 'adaptive_client: retry the transaction' "
                "USING ERRCODE = '40001'; END$$"
            )
        raise StaleSnapshot(
            "the layers this statement needs were changed after the read-only transaction "
            "began on a standby that has not replayed them: retry it"
        )

    def at_home(self, prepare: Callable[[], Compiled]) -> Compiled:
        """``prepare()`` (a statement's adaptations) with the primary as the session, in
        a READ ONLY transaction on a standby: the adaptations are the primary's, each
        its own transaction beside the standby's; the statement then waits for their
        replay or fails retryably (:meth:`_check_pinned`)."""
        pinned = self.session.pg, self.session.direct
        self._swap_home()
        try:
            return prepare()
        finally:
            session = self.session
            session.pg, session.direct = pinned
            session.runtime.conn = pinned[0]

    def _snapshot(self) -> bool:
        return self._home[0].isolation_level in _SNAPSHOT_LEVELS

    def _swap(self, standby: Standby) -> psycopg.Connection[Any] | None:
        """Make ``standby``'s session the application's session (None: unreachable)."""
        pg = standby.session()
        if pg is None or standby.direct is None:
            return None
        home = self._home[0]
        if pg.autocommit != home.autocommit:
            pg.autocommit = home.autocommit
        if not home.autocommit:
            if pg.isolation_level != home.isolation_level:
                pg.isolation_level = home.isolation_level
            if pg.read_only != home.read_only:
                pg.read_only = home.read_only
            if pg.deferrable != home.deferrable:
                pg.deferrable = home.deferrable
        session = self.session
        session.pg, session.direct = pg, standby.direct
        session.runtime.conn = pg
        return pg

    def _swap_home(self) -> None:
        session = self.session
        session.pg, session.direct = self._home
        session.runtime.conn = self._home[0]

    def _unpin(self) -> None:
        standby, self.pinned = self.pinned, None
        self._swap_home()
        if standby is not None and standby.pg is not None and not standby.pg.closed:
            with contextlib.suppress(psycopg.Error):
                if standby.pg.pgconn.transaction_status == IDLE:
                    standby.pg.autocommit = True  # (its replay position polled between)

    def transaction_ended(self) -> None:
        """The application's transaction committed or rolled back: a READ ONLY one run on
        a standby hands the session back to the primary; one on the primary may have
        written."""
        if self.pinned is not None:
            self._unpin()
        else:
            self.wrote = True

    def close(self) -> None:
        if self.pinned is not None:
            with contextlib.suppress(psycopg.Error):
                self.session.pg.rollback()
            self._unpin()
        for standby in self.standbys:
            standby.close()

    def answered(self) -> dict[str, int]:
        """Statements each server answered (the standbys by DSN, and ``primary``)."""
        out = {"primary": self.on_primary}
        for standby in self.standbys:
            out[standby.dsn] = standby.answered
        return out


def reads_only(plan: Compiled) -> bool:
    """Whether a plan only reads: a SELECT without row locks or writes of its own."""
    return (
        plan.kind == "select"
        and not plan.locks_rows
        and plan.rmw is None
        and plan.insert_select is None
    )


def _elsewhere(exc: psycopg.Error, standby: Standby) -> bool:
    """Whether a read ``standby`` failed with ``exc`` may run on the primary instead."""
    pg = standby.pg
    if pg is None or pg.broken or pg.closed:
        return True
    if isinstance(exc, AdaptiveError):
        return False  # (the client's own: it would say the same on the primary)
    state = exc.sqlstate or ""
    return state in _ELSEWHERE_STATES or state.startswith(_ELSEWHERE_CLASSES)


def replica_dsns(primary: str, replicas: str | Sequence[str]) -> list[str]:
    """The standbys' conninfos.  Each item a conninfo or URI, or ``host[:port]`` that
    takes the rest (database, user, password, TLS settings) from the primary's; a string
    is one conninfo or URI, or ``host[:port]`` items separated by commas."""
    if isinstance(replicas, str):
        items = (
            [replicas]
            if "=" in replicas or "://" in replicas
            else [r.strip() for r in replicas.split(",") if r.strip()]
        )
    else:
        items = [str(r) for r in replicas]
    base = conninfo_to_dict(primary)
    base.pop("target_session_attrs", None)
    base.pop("hostaddr", None)
    out = []
    for item in items:
        if "=" in item or "://" in item:
            out.append(item)
            continue
        host, _, port = item.rpartition(":") if item.count(":") == 1 else (item, "", "")
        params = dict(base, host=host or item)
        if port:
            if not port.isdigit():
                raise ConfigError(f"replica {item!r}: host[:port] or a conninfo")
            params["port"] = port
        else:
            params.pop("port", None)
        out.append(make_conninfo("", **params))
    return out


def router_for(
    session: ReplicaSession,
    primary: str,
    replicas: str | Sequence[str] | None,
    wait: float | str | None,
    kwargs: dict[str, Any],
) -> Router | None:
    """The router of a connection to ``primary`` opened with ``kwargs`` (psycopg's
    connection options, its adapters context among them); None without ``replicas``."""
    if not replicas:
        return None
    # psycopg's own options go to the standbys' sessions as given; the rest are libpq
    # parameters of the primary (SQLAlchemy passes its URL's host, port, user... so),
    # which a replica named by host[:port] takes as the conninfo's
    options = {k: v for k, v in kwargs.items() if k in _PSYCOPG_OPTIONS}
    params = {k: v for k, v in kwargs.items() if k not in _PSYCOPG_OPTIONS}
    primary = make_conninfo(primary, **params) if params else primary
    context = options.pop("context", None)
    jit = bool(getattr(getattr(session, "config", None), "server_jit", False))
    opener = partial(
        open_standby, control=session.control, jit=jit, context=context, kwargs=options
    )
    return Router(
        session,
        replica_dsns(primary, replicas),
        opener,
        DEFAULT_WAIT if wait is None else float(wait),
    )


def open_standby(
    conninfo: str,
    *,
    control: psycopg.Connection[Any],
    jit: bool,
    context: Any,
    kwargs: dict[str, Any],
) -> psycopg.Connection[Any]:
    """A standby's session set up as the primary's application session is (adapters,
    jit, prepared statements kept across rollbacks), autocommit."""
    options = dict(kwargs)
    if "connect_timeout" not in conninfo_to_dict(conninfo):
        options["connect_timeout"] = _CONNECT_TIMEOUT
    if context is not None:
        options["context"] = context
    pg = psycopg.connect(conninfo, autocommit=True, **options)
    try:
        if not jit:
            pg.execute("SET jit = off")
        wire.register(pg)
        wire.register_ore(pg, control)  # (a physical standby: the primary's type oids)
        keep_statements_across_rollback(pg)
    except BaseException:
        pg.close()
        raise
    return pg


__all__ = [
    "DEFAULT_WAIT",
    "RETRY_DOWN",
    "Router",
    "Standby",
    "open_standby",
    "reads_only",
    "replica_dsns",
    "router_for",
]
