"""What a failed statement leaves of the application's transaction.

PostgreSQL fails the open transaction at any error of a statement; the client detects
some errors itself (a syntax error, an unknown name, a value out of its type's range, a
refused construct), before the statement reaches the server or between its round
trips.  :func:`fail_transaction` fails the transaction on the server for those too, so
that what follows -- the next statement, ``commit()``, a savepoint's rollback -- is what
it would be had the server raised the error.  psycopg's own errors raised before
anything is sent (a wrong number of parameters) leave the transaction as it was, as in
psycopg.
"""

from __future__ import annotations

import contextlib
from typing import Any

import psycopg

from ..errors import AdaptiveError, ParameterMismatch, TwoPhaseCommitRefused

IDLE = psycopg.pq.TransactionStatus.IDLE
INTRANS = psycopg.pq.TransactionStatus.INTRANS
INERROR = psycopg.pq.TransactionStatus.INERROR

# What fails the application's transaction on the server after an error the client
# detected itself.  The message is fixed: the provider learns that a statement failed,
# as it would had the server raised the error, and nothing of the statement or its values.
FAIL_TRANSACTION = (
    b"DO $$BEGIN RAISE EXCEPTION 'adaptive_client: statement failed on the client' "
    b"USING ERRCODE = 'P0001'; END$$"
)


# the attribute marking an error whose transaction is over already (:func:`ended_by`)
_ENDED = "_adaptive_transaction_ended"


def ended_by(exc: BaseException) -> BaseException:
    """``exc``, marked as having ended its transaction (a query string's implicit block,
    rolled back whole at its failing statement): nothing is left to fail."""
    with contextlib.suppress(AttributeError):
        setattr(exc, _ENDED, True)
    return exc


def fails_transaction(exc: BaseException) -> bool:
    """Whether PostgreSQL would have failed the transaction at ``exc``: every error of a
    statement but psycopg's own, raised before anything is sent (a wrong number of
    parameters, a value psycopg cannot adapt: they carry no SQLSTATE), and but one that
    ended its transaction (:func:`ended_by`)."""
    if isinstance(exc, ParameterMismatch | TwoPhaseCommitRefused) or getattr(exc, _ENDED, False):
        return False  # (nothing sent; or the transaction rolled back already)
    if isinstance(exc, psycopg.Error) and not isinstance(exc, AdaptiveError):
        return exc.sqlstate is not None
    return True


def fail_transaction(pg: psycopg.Connection[Any], exc: BaseException) -> None:
    """After a statement raised ``exc`` on the application's session ``pg``: its
    transaction is failed on the server where PostgreSQL would have failed it.  An error
    the server raised has done it already; one the client detected does it here, in one
    round trip (with psycopg's BEGIN first where the statement would have opened the
    transaction)."""
    status = pg.pgconn.transaction_status
    if status == INERROR or not fails_transaction(exc):
        return
    if status == INTRANS or (status == IDLE and not pg.autocommit):
        with contextlib.suppress(psycopg.Error):
            pg.execute(FAIL_TRANSACTION)


__all__ = ["FAIL_TRANSACTION", "ended_by", "fail_transaction", "fails_transaction"]
