"""A statement the client runs as several of its own (an UPDATE's read and writes by
key, an upsert's steps, CREATE TABLE ... AS), made one unit as PostgreSQL's statement is:
inside the application's transaction it is part of it (a failure fails the transaction,
whose savepoint undoes every step); in autocommit mode it is a transaction of its own,
committed with the client's state kept in step, or rolled back whole."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from .session_protocol import Session

T = TypeVar("T")


def as_one_statement(conn: Session, work: Callable[[], T]) -> T:
    """``work()`` as one statement of ``conn``'s session (see the module)."""
    if not conn.pg.autocommit or conn.in_transaction():
        return work()
    try:
        with conn.pg.transaction():
            out = work()
        conn.after_commit()
    except BaseException:
        conn.after_rollback()
        raise
    return out


__all__ = ["as_one_statement"]
