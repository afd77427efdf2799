"""Whether the application's open transaction may be started again by the client.

Another client's adaptation (an onion build, a join adjustment) renames the onion
columns it rewrites, so that a statement compiled from older metadata fails rather
than write a column without its new onion (adapt/ondemand.py, adapt/joins.py).  The
server then fails the whole transaction.  When the statement opened it, the client
rolls back, reads the catalog again and runs it again (dispatch.recover_stale).

It can do the same later in the transaction where everything the transaction ran
before was a plain read, under READ COMMITTED: each statement there reads a snapshot of
its own, and a read leaves nothing in the transaction, so the rolled-back transaction
with the statement run again in a new one is a history PostgreSQL itself could have
produced -- the reads' rows were already handed to the application and stay valid for
the snapshots they were read at.  (The one thing that differs: the table locks the
earlier reads held are released at the rollback, so another session's DDL waiting for
them may commit before the statement runs again; under READ COMMITTED that statement
could see such a commit anyway had the DDL come first.)

Not a plain read, and so ending the possibility for the rest of the transaction:
anything but a SELECT compiled by the client (writes, session commands, server calls,
sequences, DDL, COPY, EXPLAIN), a SELECT that locks rows, reads the server's clock (the
transaction's ``now()`` would change), calls a function the client does not know (it
may have side effects), selects INTO a table or modifies data in a WITH, and a
server-side cursor (it would not survive the rollback).  Snapshot isolation levels,
a session whose isolation was set by SET, and sessions with standbys are never
restarted past their first statement.
"""

from __future__ import annotations

from typing import Any

import psycopg
from sqlglot import exp

from ..compile.plan import Compiled

_READ_COMMITTED = (None, psycopg.IsolationLevel.READ_COMMITTED)
_NOT_A_READ = (exp.Insert, exp.Update, exp.Delete, exp.Lock, exp.Anonymous, exp.Into)


def only_reads(plan: Compiled, stmt: exp.Expression | None) -> bool:
    """Whether ``plan`` (of ``stmt``) is a plain read (the module's doc); remembered on
    the plan, so that its repeats, run without the statement, know it too."""
    known = plan.only_reads
    if known is not None or stmt is None:
        return bool(known)
    plain = (
        plan.kind == "select"
        and not plan.locks_rows
        and plan.lock_key is None
        and not plan.uses_clock
        and plan.insert_select is None
        and plan.rmw is None
        and stmt.find(*_NOT_A_READ) is None
    )
    plan.only_reads = plain
    return plain


class TransactionReads:
    """What the application's open transaction has run, as far as a restart goes: the
    connection's, updated by its cursors around each statement (``Cursor._statement``
    sets the three fields below as the statement starts and ends, on the hot path)."""

    def __init__(self) -> None:
        self.only_reads = False  # the transaction open now has run plain reads only
        self.before = False  # ... before the statement running now
        self.statement: bool | None = None  # the statement running now: plain reads
        # the session's isolation may be other than the server's default (SET)
        self.isolation_set = False
        self._default_read_committed: bool | None = None  # (asked once)

    def ran(self, reads: bool) -> None:
        """A part of the statement running now ran: a plain read or not."""
        self.statement = reads if self.statement is None else self.statement and reads

    def left(self) -> None:
        """Something not a plain read ran outside the statements (COPY)."""
        self.only_reads = False

    def may_restart(self, pg: psycopg.Connection[Any], control: psycopg.Connection[Any]) -> bool:
        """Whether the transaction, failed by the statement running now, may be rolled
        back and the statement run again in a new one."""
        if not (self.before and self.statement is not False):
            return False
        if self.isolation_set or pg.isolation_level not in _READ_COMMITTED:
            return False
        return pg.isolation_level is not None or self._server_default_read_committed(control)

    def _server_default_read_committed(self, control: psycopg.Connection[Any]) -> bool:
        # (the control session has the application's role and database, and so the
        # defaults ALTER ROLE / DATABASE set and the connection string's options)
        if self._default_read_committed is None:
            row = control.execute("SHOW default_transaction_isolation").fetchone()
            self._default_read_committed = row is not None and row[0] == "read committed"
        return self._default_read_committed
