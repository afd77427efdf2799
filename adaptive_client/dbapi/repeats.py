"""A statement's repeats: what its first run decided, kept, so a repeat only binds, runs
and decrypts.

The first run of a SELECT/INSERT/UPDATE/DELETE goes through the dispatcher: the text is
told apart from scripts and commands, parsed, compiled against the catalog, its plan's
needs met (peels, builds), then bound, run and decrypted.  Most of an application's
statements are the same few texts run over and over with other parameters (an ORM's, a
TPC-C client's), and for them the dispatcher's answers do not change while the catalog
does not: the connection keeps a :class:`Repeat` per text whose plan needed nothing,
and runs the text's repeats with it.  A plan that runs in one server round trip, its
rows opened column by column (no split execution, read-modify-write, client-side order
or plan chosen by the parameters), takes the lean path here; the others run as the
dispatcher runs them (``Cursor.execute_plan``), only without the dispatch.

A repeat is run only while its plan is the one the dispatcher would use: the catalog's
epoch and the connection's plan generation (moved by every change that drops the
compiled plans: DDL, a rollback of a transaction that changed the catalog, enum labels
committed) are those it was made under, and the rule of kept rows (isolation,
read-only, the tables updated by read-modify-write: compile/settings.py KeptRows) keeps
the same columns of its table as the rule it was made under (an update of another
table learned since changes nothing of it); otherwise the statement goes through the
dispatcher again, which makes a new one.
What the dispatcher does besides -- the session bound to the current thread, other clients'
peels picked up between transactions, the parameter count checked, the statistics
counted, rows locked ``FOR UPDATE`` remembered, the server's clock read for ``now()``,
errors failing the transaction and translated -- a repeat does the same way, and a stale
layer met on the server goes back to the dispatcher's recovery
(``dispatch.recover_stale``).  A plan that wants field onions built (outside a
transaction) is never repeated: its first runs build them.
"""

from __future__ import annotations

from time import perf_counter

from ..compile.plan import CURRENT_PARAMS, Compiled, Params, open_rows
from ..compile.settings import KeptRows
from ..values.handout import OIDS
from . import dispatch
from .session_protocol import Session, StatementCursor


def repeatable(plan: Compiled) -> bool:
    """Whether ``plan``'s repeats may skip the dispatch: it needs nothing done first
    (no peel, build, join adjustment, wanted field onion, refusal)."""
    return (
        plan.kind in ("select", "insert", "update", "delete")
        and not plan.fields
        and not plan.designs
        and not plan.needs
        and not plan.joins
        and not plan.builds
        and plan.refusal is None
    )


def lean(plan: Compiled) -> bool:
    """Whether ``plan`` runs as one server round trip whose rows are opened column by
    column, the same for any parameters: the lean path of :meth:`Repeat.run`."""
    return (
        plan.rmw is None
        and plan.insert_select is None
        and plan.residual is None
        and plan.reduce is None
        and not plan.client_sort
        and plan.serves is None
        and plan.otherwise is None
        and not plan.uses_clock
    )


class Repeat:
    """One statement text's compiled plan, run again with other parameters."""

    __slots__ = (
        "application_forms",
        "epoch",
        "generation",
        "kept",
        "kind",
        "lean",
        "npos",
        "opener",
        "plan",
        "returns_rows",
        "sql",
    )

    def __init__(
        self,
        plan: Compiled,
        npos: int | None,
        epoch: int,
        generation: int,
        kept: KeptRows,
        native: bool,
    ) -> None:
        self.plan = plan
        self.npos = npos  # (None: named parameters, checked by binding)
        self.epoch = epoch
        self.generation = generation
        self.kept = kept
        self.sql = plan.positional_sql
        self.kind = plan.statement_type
        self.returns_rows = plan.returns_rows
        self.lean = lean(plan)
        self.opener = plan.row_opening if native and plan.returns_rows else None
        # (values held in a form of the client's own may reach the result: handout.py)
        self.application_forms = plan.returns_rows and any(d[1] in OIDS for d in plan.description)

    def current(self, conn: Session) -> bool:
        """Whether the dispatcher would run this plan now."""
        if self.epoch != conn.catalog.epoch or self.generation != conn.plan_generation:
            return False
        kept = conn.kept_rows()
        if self.kept is not kept:
            # (a rule learned since, from another table's updates: the same plan)
            if not kept.same_for(self.kept, self.plan.kept_table):
                return False
            self.kept = kept
        return True

    def run(self, cur: StatementCursor, params: Params) -> None:
        """Run the statement with ``params`` on ``cur`` and hold its result (the caller
        holds the session's lock and has checked :meth:`current`)."""
        if not self.lean:
            dispatch.run_plan(cur, self.plan, params)
            return
        conn = cur.connection
        plan = self.plan
        stats = conn.stats
        prev, stats.current = stats.current, self.kind
        stats.statements[self.kind] += 1
        try:
            CURRENT_PARAMS.set(params)
            t0 = perf_counter()
            bound = plan.bind_positional(params)
            t1 = perf_counter()
            raw, rowcount = cur.run_server(self.sql, bound, self.returns_rows, plan)
            if plan.kind != "select":
                if conn.locked_rows:
                    conn.forget(plan)
            elif plan.lock_key is not None:
                cur.remember_locked(plan, params, raw)
            if not self.returns_rows:
                crypto = t1 - t0
                cur.set_result([], None, rowcount)
            else:
                t2 = perf_counter()
                rows = open_rows(plan.outputs, raw, self.opener)
                crypto = t1 - t0 + perf_counter() - t2
                cur.hold(
                    rows,
                    plan.description,
                    len(rows) if plan.kind == "select" else rowcount,
                    self.application_forms,
                )
            spent = stats.crypto_seconds
            spent[self.kind] = spent.get(self.kind, 0.0) + crypto
        finally:
            stats.current = prev


__all__ = ["Repeat", "repeatable"]
