"""The executor that meets a compiled statement's needs: the peels, the join
adjustments and the onion builds (the adaptations), and where each runs.

:meth:`Executor.prepare` compiles a statement through its session and, while the plan
asks for an adaptation, runs it and compiles again against the catalog it left, until
the plan needs nothing.  Where an adaptation runs follows the application's transaction:

* No transaction open: on the control session, each adaptation its own transaction.
* READ COMMITTED transaction that holds no lock on the table (and made no DDL): on the
  control session, committed at once -- the next statement's snapshot sees it, and the
  application's transaction, however long, holds none of its locks.
* READ COMMITTED transaction holding a lock on the table: inside the application's
  transaction (its locks would block an adaptation from elsewhere); it commits or rolls
  back with it.
* REPEATABLE READ / SERIALIZABLE: the snapshot predates any adaptation, so the statement
  cannot run in this transaction.  Adapt on the control session (or, for a peel, when
  the transaction rolls back if it holds a lock on the table) and raise a retryable error.

The executor knows its session only through :class:`AdaptationSession`; it keeps the
peels a failed transaction left for its rollback and the tables adaptations rewrote,
compacted once no transaction of the application's is open (compaction.py).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any, Protocol

import psycopg
from sqlglot import exp

from ..catalog.metadata import Catalog
from ..compile import needs
from ..compile.as_if_built import builds_at_layers
from ..compile.plan import Compiled
from ..errors import AdaptiveError, PeelConflict, RetryableError, StaleMetadata, StaleSnapshot
from ..stats import STATS
from . import compaction, designed, field_onions, joins, ondemand, peel, range_indexes

_log = logging.getLogger("adaptive_client.adapt")

# How long an adaptation run beside an open application transaction may wait for a lock.
PEEL_LOCK_WAIT_MS = 2000
# How many statements' builds wait for the end of a transaction at most.  (How long such a
# build waits for its table: the server's deadlock_timeout and a half-second more, as a
# compaction waits -- past it the deadlock check cancels an autovacuum of the table, which
# the adaptations' rewrites call in; see compaction.lock_wait_ms.)
MAX_DEFERRED = 256
MAX_BUILDS = 64  # onions one statement may build on first use (one per compile)

# What a peel meets when other clients peel the same table at the same moment: two
# transactions that both hold a lock on the table and both peel inside it deadlock on the
# table's ACCESS EXCLUSIVE lock and the column's layer row (the server breaks the cycle),
# or a bounded wait runs out.  The peel's transaction is rolled back whole either way.
PEEL_CONFLICTS = (psycopg.errors.DeadlockDetected, psycopg.errors.LockNotAvailable)

_INERROR = psycopg.pq.TransactionStatus.INERROR


class AdaptationSession(Protocol):
    """What the executor reads and changes of a connection's session."""

    pg: psycopg.Connection[Any]  # the application's session
    control: psycopg.Connection[Any]  # the autocommit session adaptations run on
    compactor: compaction.Compactor  # compacts rewritten tables in the background
    catalog: Catalog
    peel_mode: str
    # the catalog was changed inside the application's transaction: read again if it
    # rolls back
    catalog_dirty: bool

    def in_transaction(self) -> bool: ...

    def compile(self, query: str, stmt: exp.Expression) -> Compiled: ...

    def forget_plans(self) -> None: ...


class Executor:
    """Meets the needs of a session's compiled statements (see the module's doc)."""

    def __init__(self, session: AdaptationSession) -> None:
        self.session = session
        # peels a failed transaction left to run after its rollback
        self.pending: list[peel.Need] = []
        # tables an adaptation rewrote, compacted once no transaction is open
        self.rewritten: set[str] = set()
        # field onions this session asked for (each built at most once: compile/field_onions)
        self.tried_fields: set[needs.FieldNeed | needs.DesignNeed] = set()
        # whether the database peels several columns of a table at once (None: not
        # asked yet)
        self.together: bool | None = None
        # statements that ran inside the application's transaction without the onions
        # they needed built (a build there could fail it): built once it has ended
        self.deferred: dict[str, exp.Expression] = {}
        self._deferred_failures = 0  # deferred builds that could not run, in a row
        self._deferred_after = 0.0  # (time.monotonic(): not tried again before)
        # the bound on an adaptation's lock waits outside a transaction (None: none)
        self._lock_wait_ms: int | None = None
        self._bounded_ms: int | None = None  # (the bound of builds left otherwise: asked once)

    def prepare(self, query: str, stmt: exp.Expression) -> Compiled:
        """The plan of ``stmt`` once the catalog has what it needs."""
        builds = 0
        attempt = 0
        # the builds last tried of those the statement can do without (bounded waits)
        tried: list[needs.BuildNeed] | None = None
        while attempt < 6:
            plan = self.session.compile(query, stmt)
            if plan.builds:
                # the statement's pending onions, per table in one pass; bounded against
                # conflicts (each build ends pending onions for good)
                builds += 1
                if builds > MAX_BUILDS:
                    break
                if plan.without_builds is None:
                    self._build_pending(plan)
                    continue
                stuck = plan.builds == tried
                if not (stuck or self.session.in_transaction()):
                    # (a statement that can do without them does not wait long for the
                    # table: other sessions' transactions may hold it)
                    tried = plan.builds
                    self._build_pending(plan, self._bounded_wait())
                    continue
                # A build inside the application's transaction could fail it; one that
                # could not have the table soon is left too: the statement runs with the
                # onions stored now, and they are built once the transaction has ended
                # (build_deferred).
                if stuck:
                    self._deferred_failed()
                if len(self.deferred) < MAX_DEFERRED:
                    self.deferred.setdefault(query, stmt)
                plan = plan.without_builds
            attempt += 1
            if plan.needs:  # peels first: a join adjustment re-keys an onion's inner layer
                self._peel(plan)
            elif plan.joins:
                self._adjust(plan)
            elif self._wanted(plan):
                builds += 1
                self._build_wants(self._wanted(plan))
                if builds > MAX_BUILDS:
                    return plan
            elif plan.refusal is not None:
                raise plan.refusal  # (refused until field onions it cannot build now)
            else:
                if self.rewritten:  # (once, after all of the statement's adaptations)
                    self.compact()
                return plan
        raise StaleMetadata("the layers kept changing while the statement was prepared")

    def build_deferred(self) -> None:
        """Build what the statements of the application's transactions ran without
        (``deferred``), now that the last one has ended: each statement compiled again on
        the catalog as it is (another client may have built it meanwhile), its onions
        built as outside a transaction -- but waiting for the table only as long as a
        compaction does (:meth:`_bounded_wait`; the application's commit waits for the
        build).  A build that cannot
        run now (other sessions hold the table, a conflict) is kept for a later commit,
        tried again after a pause that doubles with each failure (up to a minute), so
        that a table always in use costs the commits little; a refused one is dropped."""
        if not self.deferred or self.session.in_transaction():
            return
        now = time.monotonic()
        if now < self._deferred_after:
            return
        deferred = dict(self.deferred)
        self.deferred.clear()  # (in place: the connection's cursors read it)
        for query, stmt in deferred.items():
            try:
                plan = self.session.compile(query, stmt)
                if plan.builds:
                    self._build_pending(plan, self._bounded_wait())
                    if self.session.compile(query, stmt).builds:
                        self.deferred[query] = stmt  # (not built now: kept)
            except (AdaptiveError, psycopg.Error) as exc:
                _log.info("an onion build after the transaction was dropped: %s", exc)
        if self.deferred:
            self._deferred_failed()
        else:
            self._deferred_failures = 0

    def _bounded_wait(self) -> int:
        """How long a build the statement can do without waits for its table (ms); this
        client's own compaction of a table, if under way, first given as long to end."""
        if self._bounded_ms is None:
            self._bounded_ms = compaction.lock_wait_ms(self.session.control)
        self.session.compactor.idle(self._bounded_ms / 1000)
        return self._bounded_ms

    def _deferred_failed(self) -> None:
        """A build could not have its table: the next try waits a pause that doubles."""
        self._deferred_failures += 1
        pause = min(60.0, 0.25 * 2**self._deferred_failures)
        self._deferred_after = time.monotonic() + pause

    def compact(self) -> None:
        """Have the tables adaptations rewrote compacted in the background (compaction.py),
        once the application holds no transaction open (its locks would make the wait
        end in nothing).  Never on the statement's path: the statement goes on at once."""
        if self.rewritten and not self.session.in_transaction():
            tables, self.rewritten = sorted(self.rewritten), set()
            self.session.compactor.submit(tables)

    # -- join adjustments and builds ----------------------------------------------------------
    def _adjust(self, plan: Compiled) -> None:
        """Bring the column pairs a statement compares under one key (joins.py), where it
        is safe to -- the same placement as a peel (see :meth:`_peel`), except that an
        adjustment that cannot run now is not queued for the rollback: the retried
        statement asks for it again."""
        catalog = self.session.catalog
        todo = joins.plan_adjustments(plan.joins)
        for need in todo:
            joins.check_allowed(need, self.session.peel_mode)
        tables = sorted({catalog.table(t).anon for n in todo for t in (n.a[0], n.b[0])})
        self._adapt(tables, lambda conn: self._adjust_on(conn, todo), "a join adjustment")

    def _adjust_on(self, conn: psycopg.Connection[Any], todo: list[needs.JoinNeed]) -> None:
        catalog = self.session.catalog
        for need in todo:
            if joins.adjust(conn, catalog, need) >= 0:
                STATS.peels += 1
                self.rewritten.update(catalog.table(t).anon for t in (need.a[0], need.b[0]))

    def _wanted(self, plan: Compiled) -> list[needs.FieldNeed | needs.DesignNeed]:
        """The field onions and the online design's onions a plan would use that may be
        built now: outside the application's transactions (a want never fails one:
        inside, the plan runs as compiled), unless the peel mode is off, each tried once
        per session (a build that lost a race leaves the plan to run as compiled)."""
        wants = [*plan.fields, *plan.designs]
        if not wants or self.session.peel_mode == "off" or self.session.in_transaction():
            return []
        return [f for f in wants if f not in self.tried_fields]

    def _build_wants(self, wants: list[needs.FieldNeed | needs.DesignNeed]) -> None:
        """Build what a statement wants: its field onions (field_onions.py), and per
        table in one pass its Sum onions and precomputed expressions (designed.py)."""
        self.tried_fields.update(wants)
        per_table: dict[str, list[needs.DesignNeed]] = {}
        for want in wants:
            if isinstance(want, needs.FieldNeed):
                self._build_on(want.table, partial(field_onions.build, need=want), "a field onion")
            else:
                per_table.setdefault(want.table, []).append(want)
        for table, designs in per_table.items():
            build = partial(designed.build_table, table=table, wants=designs)
            self._build_on(table, build, "an onion the online design builds")

    def _build_pending(self, plan: Compiled, lock_wait_ms: int | None = None) -> None:
        """Build the onions a statement needs that their columns build on first use
        (ondemand.py), with what the online design wants of the same tables: per table
        in one pass (designed.py), each onion at the layer the statement needs it at;
        outside a transaction, waiting at most ``lock_wait_ms`` for a table if given (a
        build that waited longer is left)."""
        self._lock_wait_ms = lock_wait_ms
        try:
            self._build_tables(plan)
        finally:
            self._lock_wait_ms = None

    def _build_tables(self, plan: Compiled) -> None:
        pending = builds_at_layers(plan)
        for need in pending:
            ondemand.check_allowed(need, self.session.peel_mode)
        as_if = plan.as_if
        designs = [
            w
            for w in (self._wanted(replace(as_if, fields=[])) if as_if is not None else [])
            if not isinstance(w, needs.FieldNeed)
        ]
        per_table: dict[str, list[needs.DesignNeed]] = {}
        for want in [*pending, *designs]:
            per_table.setdefault(want.table, []).append(want)
        for table, wants in per_table.items():
            if not any(isinstance(w, needs.BuildNeed) and w in pending for w in wants):
                continue  # (a table the statement needs nothing built on: its wants later)
            self.tried_fields.update(w for w in wants if w not in pending)
            build = partial(designed.build_table, table=table, wants=wants)
            self._build_on(table, build, "an onion built on first use")

    def retire_precomputed(self, table: str, column: str) -> None:
        """Retire ``table``'s precomputed ``column`` (designed.py ``retire``), placed as
        a build is: the statement that computed a value it cannot hold runs again
        without it."""

        def run(conn: psycopg.Connection[Any]) -> None:
            designed.retire(conn, self.session.catalog, table, column)

        anon = self.session.catalog.table(table).anon
        self._adapt([anon], run, "the retirement of a precomputed column")

    def _build_on(self, table: str, build: Callable[..., int], what: str) -> None:
        """Run a build of ``table`` (``build(conn, catalog)``: the rows it wrote, -1 when
        another client built it first), placed like a join adjustment."""

        def run(conn: psycopg.Connection[Any]) -> None:
            catalog = self.session.catalog
            if build(conn, catalog) >= 0:
                STATS.peels += 1
                self.rewritten.add(catalog.table(table).anon)

        self._adapt([self.session.catalog.table(table).anon], run, what)

    def _adapt(
        self, tables: list[str], run: Callable[[psycopg.Connection[Any]], None], what: str
    ) -> None:
        """Run an adaptation that rewrites ``tables`` (anonymized names) on the control
        session, or inside the application's transaction where it holds their locks;
        one that cannot run now fails the transaction with a retryable error."""
        session = self.session
        if not session.in_transaction():
            try:
                if self._lock_wait_ms is None:
                    run(session.control)
                else:
                    self._with_bounded_wait(run, self._lock_wait_ms)
            except (*PEEL_CONFLICTS, StaleMetadata):
                pass  # planned again from the reloaded catalog
            finally:
                session.catalog.reload(session.control)
            return
        read_committed, held = self._transaction_state(tables)
        if read_committed and (held or session.catalog_dirty):
            session.catalog_dirty = True  # the catalog is reloaded if this rolls back
            try:
                run(session.pg)
            except (*PEEL_CONFLICTS, StaleMetadata):
                raise self._conflict(
                    f"{what} this statement needs conflicted with another client's"
                ) from None
            finally:
                if session.pg.info.transaction_status != _INERROR:
                    session.catalog.reload(session.pg)
            session.forget_plans()
            return
        if held:
            raise self._conflict(
                f"{what} this statement needs must rewrite a table this transaction holds a lock on"
            )
        try:
            self._with_bounded_wait(run)
        except (*PEEL_CONFLICTS, StaleMetadata):
            raise self._conflict(
                f"{what} this statement needs waits on locks while this transaction is open"
            ) from None
        finally:
            session.catalog.reload(session.control)
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
        pg = self.session.pg
        level = pg.execute("SHOW transaction_isolation").fetchone()
        held = pg.execute(
            "SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
            "WHERE l.pid = pg_backend_pid() AND c.relname = ANY(%s)",
            (tables,),
        ).fetchone()
        return level is not None and level[0] == "read committed", held is not None

    # -- peels ---------------------------------------------------------------------------------
    def _peel(self, plan: Compiled) -> None:
        """Run the peels a statement needs, where it is safe to (see the module's doc)."""
        session = self.session
        todo = peel.plan_peels(plan.needs)
        for need in todo:
            peel.check_allowed(need, session.peel_mode)
        if not session.in_transaction():
            # No application transaction is at stake: a peel that lost a lock race is
            # simply tried again by prepare(), from the reloaded catalog.
            try:
                self._peel_on(session.control, todo)
            except PEEL_CONFLICTS:
                pass
            finally:
                session.catalog.reload(session.control)
            return
        read_committed, held = self._transaction_state([n.table.anon for n in todo])
        if read_committed:
            if held or session.catalog_dirty:
                session.catalog_dirty = True  # the catalog is reloaded if this rolls back
                try:
                    self._peel_on(session.pg, todo)
                except PEEL_CONFLICTS:
                    # the server aborted this transaction to break the cycle; the peel
                    # runs at rollback, when this client holds no lock on the table
                    self.pending += todo
                    raise PeelConflict(
                        "a peel this statement needs conflicted with another client's peel "
                        "of the same table: roll back and retry (the peel runs at rollback)"
                    ) from None
                session.forget_plans()
                return
            self._peel_beside_transaction(todo)
            return
        if held:
            self.pending += todo
            raise self._conflict(
                "a layer this statement needs must be peeled, and this transaction holds "
                "a lock on the table",
                then=" (the peel runs at rollback)",
            )
        self._peel_beside_transaction(todo)
        raise self._abort_transaction(
            StaleSnapshot(
                "a layer this statement needs changed after the transaction's snapshot: retry it"
            )
        )

    def _peel_beside_transaction(self, todo: list[peel.Need]) -> None:
        """Peel on the control session while the application's transaction stays open.

        The wait for the peel's locks is bounded: the transaction left open may hold locks
        that the peel's blockers wait for (another client's transaction, blocked behind
        this one, holding the table or peeling the same column), a deadlock through this
        client that the server cannot see.  Past the bound, the transaction is failed
        (retryable) and the peel runs after its rollback, when this client holds nothing.
        Either way the catalog is reloaded from the server.
        """
        try:
            self._with_bounded_wait(partial(self._peel_on, todo=todo))
        except PEEL_CONFLICTS:
            self.pending += todo
            raise self._conflict(
                "a peel this statement needs waits on locks while this transaction is open",
                then=" (the peel runs at rollback)",
            ) from None
        finally:
            self.session.catalog.reload(self.session.control)

    def _with_bounded_wait(
        self, run: Callable[[psycopg.Connection[Any]], None], wait_ms: int = PEEL_LOCK_WAIT_MS
    ) -> None:
        """``run`` on the control session, in one transaction whose lock waits are bounded."""
        control = self.session.control
        with control.transaction():
            control.execute(f"SET LOCAL lock_timeout = '{wait_ms}ms'")
            run(control)

    def _peel_on(self, conn: psycopg.Connection[Any], todo: list[peel.Need]) -> None:
        """The peels of ``todo``; those of one table that are each one step from RND, in
        server mode, together: the table rewritten once (peel.peel_together)."""
        session = self.session
        together: dict[str, list[peel.Need]] = {}
        if session.peel_mode == "server" and self._peels_together(conn):
            for need in todo:
                if need.onion.layer == "RND" and need.onion.stack[1] == need.layer:
                    together.setdefault(need.table.anon, []).append(need)
            together = {t: group for t, group in together.items() if len(group) > 1}
        grouped = {id(n) for group in together.values() for n in group}
        for group in together.values():
            table = group[0].table
            pairs = [(n.onion, n.layer) for n in group]
            rows = peel.peel_together(conn, table, pairs)
            if rows > 0:
                self.rewritten.add(table.anon)
            STATS.peels += len(group)
            for need in group:
                range_indexes.after_peel(conn, session.catalog, table, need.onion, rows)
        for need in todo:
            if id(need) in grouped:
                continue
            rows = peel.peel(conn, need.table, need.onion, need.layer, session.peel_mode)
            if rows > 0:
                self.rewritten.add(need.table.anon)
            STATS.peels += 1
            range_indexes.after_peel(conn, session.catalog, need.table, need.onion, rows)

    def _peels_together(self, conn: psycopg.Connection[Any]) -> bool:
        if self.together is None:
            self.together = peel.can_peel_together(conn)
        return self.together

    def run_pending_peels(self) -> None:
        """The peels a failed transaction left to run after its rollback.  They only spare
        the retry a second conflict, so the rollback never waits long for them: one that
        waits on another client's transaction past the bound, or loses a lock race, is
        dropped (the rollback itself succeeded), and the statement that needs it peels it."""
        todo, self.pending = self.pending, []
        if not todo:
            return
        catalog = self.session.catalog
        try:
            for need in todo:
                table = catalog.tables.get(need.table.name)
                if table is None:
                    continue
                oc = table.columns[need.column.name].onions[need.onion.onion]
                if oc.stack.index(oc.layer) < oc.stack.index(need.layer):
                    with contextlib.suppress(*PEEL_CONFLICTS):
                        retried = [replace(need, table=table, onion=oc)]
                        self._with_bounded_wait(partial(self._peel_on, todo=retried))
        finally:
            catalog.reload(self.session.control)

    def _conflict(self, why: str, then: str = "") -> RetryableError:
        """A :class:`PeelConflict` saying ``why`` the application must roll back and retry
        (``then``: what happens at the rollback), its transaction failed first."""
        return self._abort_transaction(PeelConflict(f"{why}: roll back and retry{then}"))

    def _abort_transaction(self, error: RetryableError) -> RetryableError:
        """Fail the application's transaction on the server, as a serialization failure
        does, before ``error`` is raised: the catalog may now be newer than the
        transaction's snapshot, and a statement run in it before the rollback would read
        the old rows through the new layers (a wrong answer) -- it fails instead."""
        with contextlib.suppress(psycopg.Error):
            self.session.pg.execute(
                "DO $$BEGIN RAISE EXCEPTION 'adaptive_client: retry the transaction' "
                "USING ERRCODE = '40001'; END$$"
            )
        return error


__all__ = ["MAX_BUILDS", "PEEL_CONFLICTS", "PEEL_LOCK_WAIT_MS", "AdaptationSession", "Executor"]
