"""Statements the server answers as they are: a SELECT without FROM over the server's own
functions -- its settings, advisory locks, the session's identity, its version.

``SELECT pg_advisory_lock(%s)``, ``SELECT set_config('app.user', %s, true)``,
``SELECT version()``: these read or change the server's state, and their arguments are
meant for the server (a lock's key, a setting's value); there is nothing to encrypt and
nothing the client could compute in their place.  Such a statement is sent unchanged,
its parameters with it, provided that every parameter is an argument of one of these
functions (``SELECT upper(%s)`` stays the client's: a value of the application's is not
sent where no server function asks for it).  docs/security.md argues what this shows.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

__all__ = ["SERVER_FUNCTIONS", "answered_by_server"]

SERVER_FUNCTIONS = frozenset(
    {
        # settings
        "current_setting",
        "set_config",
        # advisory locks
        "pg_advisory_lock",
        "pg_advisory_lock_shared",
        "pg_advisory_unlock",
        "pg_advisory_unlock_shared",
        "pg_advisory_unlock_all",
        "pg_advisory_xact_lock",
        "pg_advisory_xact_lock_shared",
        "pg_try_advisory_lock",
        "pg_try_advisory_lock_shared",
        "pg_try_advisory_xact_lock",
        "pg_try_advisory_xact_lock_shared",
        # the session, the transaction, the server
        "version",
        "current_database",
        "current_schema",
        "current_user",
        "session_user",
        "pg_backend_pid",
        "pg_is_in_recovery",
        "pg_postmaster_start_time",
        "pg_current_xact_id",
        "txid_current",
        "txid_current_if_assigned",
        "pg_sleep",
        "pg_notify",
    }
)

# what may surround the calls: constants, comparisons and boolean logic over them
_AROUND = (
    exp.Alias,
    exp.Paren,
    exp.Literal,
    exp.Null,
    exp.Boolean,
    exp.Identifier,
    exp.Cast,
    exp.DataType,
    exp.DataTypeParam,
    exp.EQ,
    exp.NEQ,
    exp.GT,
    exp.GTE,
    exp.LT,
    exp.LTE,
    exp.Like,
    exp.And,
    exp.Or,
    exp.Not,
    exp.Is,
)


def _function_name(node: Any) -> str | None:
    if isinstance(node, exp.Anonymous):
        return node.name.lower()
    if isinstance(node, exp.Func):
        # sqlglot's own nodes for some of them (CurrentUser, CurrentSchema, ...)
        return node.sql("postgres").split("(")[0].lower()
    return None


def answered_by_server(stmt: exp.Expression) -> bool:
    """Is ``stmt`` a SELECT without FROM that calls a server function and nothing the
    client would have to compute (parameters only as those functions' arguments)?"""
    if not isinstance(stmt, exp.Select):
        return False
    if any(v for k, v in stmt.args.items() if k != "expressions"):
        return False  # FROM, WHERE, ...: the client's
    calls = 0
    for node in stmt.walk():
        if node is stmt:
            continue
        if isinstance(node, exp.Placeholder):
            if _function_name(_unwrapped_parent(node)) not in SERVER_FUNCTIONS:
                return False
            continue
        if isinstance(node, _AROUND):
            continue
        if _function_name(node) not in SERVER_FUNCTIONS:
            return False
        calls += 1
    return calls > 0


def _unwrapped_parent(node: exp.Expression) -> exp.Expression:
    """The node a parameter is an argument of, through casts (``%s::bigint``)."""
    parent: Any = node.parent
    while isinstance(parent, exp.Cast | exp.DataType | exp.Paren):
        parent = parent.parent
    return parent if parent is not None else node
