"""The contract between a connection (the session) and its cursors.

A :class:`~adaptive_client.dbapi.connection.Connection` owns the session: the lock a statement
holds from start to end, the application's and the control PostgreSQL sessions, the
transaction state the client keeps in step with the server's, the parse and plan caches
and the catalog.  A cursor owns the execution of a statement (``cursor.py``,
``dispatch.py``, ``copy.py``) and reaches the session only through :class:`Session`:
the connection's public names, meant for its cursors rather than for applications.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, Protocol

import psycopg
from sqlglot import exp

from ..catalog import defaults
from ..catalog.config import Config
from ..catalog.metadata import Catalog, TableMeta
from ..compile.plan import Compiled
from ..compile.settings import KeptRows
from ..stats import Stats
from .direct import DirectExecutor
from .pooling import Pooling
from .replicas import Router
from .restart import TransactionReads

# a parsed statement: its tree, its count of positional placeholders, whether they are
# named ones
Parsed = tuple[exp.Expression, int, bool]


def cache_key(query: str, with_params: bool) -> str:
    """The parse and plan caches' key: the text, marked where it was run without
    parameters and has a ``%%`` that parameters would have made ``%``."""
    return query if with_params or "%%" not in query else "\x00" + query


class RepeatedStatement(Protocol):
    """A statement's repeat, run without the dispatch (repeats.py)."""

    npos: int | None  # its positional parameters (None: named ones)
    plan: Compiled

    def current(self, conn: Session) -> bool: ...

    def run(self, cur: StatementCursor, params: Any) -> None: ...


class Session(Protocol):
    """What a cursor reads and changes of its connection."""

    lock: threading.RLock  # held for the whole of each statement
    pg: psycopg.Connection[Any]  # the application's session
    control: psycopg.Connection[Any]  # the autocommit session for metadata and peels
    catalog: Catalog
    config: Config
    runtime: defaults.Runtime  # sequence blocks, the transaction's stable defaults
    direct: DirectExecutor  # prepared server statements run without a cursor
    pooling: Pooling  # the pooler in front of the server, if any (pooling.py)
    residual_row_cap: int | None
    # the catalog was changed inside the application's transaction: read again if it
    # rolls back
    catalog_dirty: bool
    # rows this transaction locked with SELECT ... FOR UPDATE by primary key (or read on
    # its snapshot), in the RMW layout with the columns it holds (None: all): a later
    # UPDATE SET x = x + k of the same row needs no SELECT
    locked_rows: dict[Any, tuple[frozenset[str] | None, tuple[Any, ...]]]
    # statements whose repeats skip the dispatch, and the generation of the compiled
    # plans (moved whenever they are dropped)
    repeats: dict[str, RepeatedStatement]
    plan_generation: int
    native: bool  # results opened by the compiled layer where it is installed
    replicas: Router | None  # the standbys read-only plans run on (replicas.py)
    # whether the open transaction has only read so far (restart.py)
    reads: TransactionReads
    # statements that ran without onions still to be built (adapt/executor.py)
    deferred_builds: dict[str, Any]

    # (the DB-API surface an application reaches as ``cursor.connection``)
    def cursor(self, name: str = "", *, withhold: bool = False) -> StatementCursor: ...

    def commit(self) -> None: ...

    def rollback(self) -> None: ...

    def close(self) -> None: ...

    # (the session's, for its cursors)

    @property
    def stats(self) -> Stats: ...

    def bind(self) -> None: ...

    def refresh_catalog(self) -> None: ...

    def in_transaction(self) -> bool: ...

    def snapshot_isolation(self) -> bool: ...
    def kept_rows(self) -> KeptRows: ...

    def epoch_moved(self) -> bool: ...

    def catch_up_catalog(self) -> bool: ...

    def parse(self, query: str, with_params: bool = True) -> Parsed: ...

    def parsed_before(self, query: str) -> bool: ...

    def compiled_kind(self, key: str) -> Parsed | None: ...

    def remember_compiled_kind(self, key: str, parsed: Parsed) -> None: ...

    def prepare(self, query: str, stmt: exp.Expression) -> Compiled: ...

    def forget_plans(self) -> None: ...

    def keep_repeat(self, query: str, plan: Compiled, npos: int | None) -> None: ...

    def forget(self, plan: Compiled) -> None: ...

    def forget_table(self, table: TableMeta) -> None: ...

    def after_commit_of(self, failed: bool) -> None: ...

    def after_commit(self) -> None: ...

    def after_rollback(self) -> None: ...

    def after_rollback_to_savepoint(self) -> None: ...

    def build_deferred(self) -> None: ...

    def retire_precomputed(self, table: str, column: str) -> None: ...


class StatementCursor(Protocol):
    """What the statement dispatcher and COPY use of a cursor."""

    @property
    def connection(self) -> Session: ...

    description: Sequence[tuple[Any, ...]] | None
    rowcount: int
    # json values kept as the client holds them, not loaded (COPY TO prints them)
    internal_values: bool

    def execute(self, query: str, params: Any = None) -> Any: ...

    def fetchall(self) -> list[tuple[Any, ...]]: ...

    def set_result(
        self,
        rows: list[tuple[Any, ...]],
        desc: Sequence[tuple[Any, ...]] | None,
        rowcount: int,
        more: list[tuple[Any, ...]] | None = None,
    ) -> None: ...

    def result(self) -> tuple[Any, ...]: ...

    def run_raw(self, query: str, params: Any) -> None: ...

    def execute_plan(self, plan: Compiled, params: Any) -> None: ...

    def run_server(
        self, query: bytes, bound: Sequence[Any], rows: bool, plan: Compiled | None = None
    ) -> tuple[list[Any], int]: ...

    def remember_locked(self, plan: Compiled, params: Any, raw: list[Any]) -> None: ...

    def hold(
        self,
        rows: list[tuple[Any, ...]],
        desc: Sequence[tuple[Any, ...]] | None,
        rowcount: int,
        application_forms: bool,
    ) -> None: ...

    def execute_many(self, plan: Compiled, seq: Sequence[Any]) -> None: ...


__all__ = ["Parsed", "RepeatedStatement", "Session", "StatementCursor", "cache_key"]
