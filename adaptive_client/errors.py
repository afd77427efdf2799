"""The exceptions raised by adaptive_client.

Every error the library raises on purpose derives from :class:`AdaptiveError`, so an
application can catch one class.  Messages name tables and columns by their *plain*
names (the client knows them) but never contain key material or plaintext values.

They also sit in DB-API 2.0's hierarchy as psycopg builds it: ``AdaptiveError`` is a
``psycopg.Error``, a refusal is a ``NotSupportedError``, a bad value a ``DataError``, a
retryable error a ``psycopg.errors.SerializationFailure`` (SQLSTATE 40001), an unknown
table a ``psycopg.errors.UndefinedTable`` -- so code written for psycopg (``except
psycopg.errors.UndefinedTable``, a retry loop on serialization failures) keeps working.
Errors the server raises (a unique or foreign-key violation) reach the application as
psycopg raised them.
"""

from __future__ import annotations

import psycopg
from psycopg import errors as pg_errors


class AdaptiveError(psycopg.Error):
    """Root of every error raised by adaptive_client."""


# --- configuration and keys -------------------------------------------------------------


class ConfigError(AdaptiveError, psycopg.InterfaceError):
    """An onion configuration, a command-line option or a setting is invalid."""


class KeyError_(AdaptiveError, psycopg.InterfaceError):
    """Base class of key-handling errors (named with a trailing underscore so it does not
    shadow the builtin ``KeyError``)."""


class MasterKeyMissing(KeyError_):
    """No master key was given and ``ADAPTIVE_MASTER_KEY`` is not set."""


class InvalidMasterKey(KeyError_):
    """The master key is not 256 bits of hex / raw bytes."""


class WrongMasterKey(KeyError_):
    """The master key does not match the key-check value stored in the database."""


# --- data ---------------------------------------------------------------------------------


class EncodingError(AdaptiveError, psycopg.DataError):
    """A value cannot be encoded for the column's SQL type."""


class ValueOutOfDomain(EncodingError):
    """A value lies outside the domain an encoding (e.g. OPE's integer range) supports."""


class StringTooLong(ValueOutOfDomain, pg_errors.StringDataRightTruncation):
    """A string longer than its varchar(n)/char(n) column (PostgreSQL's 22001)."""


class NumericOutOfRange(ValueOutOfDomain, pg_errors.NumericValueOutOfRange):
    """A number beyond its column type's range or precision (PostgreSQL's 22003)."""


class DatetimeOutOfRange(ValueOutOfDomain, pg_errors.DatetimeFieldOverflow):
    """A date or timestamp beyond what its type holds (PostgreSQL's 22008)."""


class ValueTypeMismatch(EncodingError, pg_errors.DatatypeMismatch):
    """A value of a type PostgreSQL does not assign to the column's (an integer column
    given a bool, a date column given an int): its 42804, raised before anything is
    sent."""


class OperandTypeMismatch(EncodingError, pg_errors.UndefinedFunction):
    """A parameter of a type PostgreSQL has no operator for against the column's
    (``text_col = %s`` given an int, ``int_col = %s`` given a bool): its 42883, raised
    before anything is sent."""


class InvalidTextInput(EncodingError, pg_errors.InvalidTextRepresentation):
    """A string that is not valid input for the column's type (PostgreSQL's 22P02)."""


class InvalidDatetimeInput(EncodingError, pg_errors.InvalidDatetimeFormat):
    """A string that is not a valid date or timestamp (PostgreSQL's 22007)."""


class CiphertextError(AdaptiveError, psycopg.DatabaseError):
    """A ciphertext is malformed, truncated or fails authentication."""


class MetadataTampered(AdaptiveError, psycopg.DatabaseError):
    """An encrypted metadata row fails authentication, was swapped or replayed."""


class NotInitialized(AdaptiveError, psycopg.ProgrammingError):
    """The database has no adaptive metadata schema: run ``adaptive-db init``."""


class FormatOutdated(AdaptiveError, psycopg.NotSupportedError):
    """The database's ciphertexts are in a previous format: run ``adaptive-db migrate``."""


# --- queries -----------------------------------------------------------------------------


class UnsupportedQuery(AdaptiveError, pg_errors.FeatureNotSupported):
    """The client cannot run this SQL correctly over ciphertexts (SQLSTATE 0A000, as
    PostgreSQL's own refusals of a feature; like them it fails the transaction).

    ``construct`` names the part of the statement that is not supported.
    """

    def __init__(self, message: str, construct: str | None = None) -> None:
        super().__init__(message)
        self.construct = construct


class TwoPhaseCommitRefused(UnsupportedQuery):
    """PREPARE TRANSACTION through the client: refused, its transaction rolled back --
    as PostgreSQL rolls back one whose PREPARE fails (the session is idle after it)."""


class PoolerUnsupported(UnsupportedQuery):
    """Session state a transaction pooler cannot keep (a session ``SET``, ``LISTEN``, a
    session advisory lock, a cursor ``WITH HOLD``), asked for on a connection behind
    one: refused before it is sent, where behind the pooler it would silently apply to
    one server session and be missing on the next (docs/poolers.md)."""


class ParameterMismatch(AdaptiveError, psycopg.ProgrammingError):
    """The parameters passed do not match the statement's placeholders (too few, or not
    a mapping holding a ``%(name)s``'s key) -- a mistake psycopg refuses with a
    ``ProgrammingError`` too.  Raised before anything of the statement is sent, so, as
    with psycopg, the transaction is left as it was."""


class CannotAdapt(ParameterMismatch):
    """A parameter of a Python type psycopg cannot adapt to any PostgreSQL type (an
    ``object()``, a set): psycopg's own ``ProgrammingError``, raised before anything is
    sent, the transaction left as it was."""


class CollationUnavailable(UnsupportedQuery):
    """Text order under a column's collation that this client cannot reproduce exactly:
    a collator version other than the one the column's Ord onion was written with, a
    locale missing on the client, a nondeterministic collation, an unknown provider, or
    a column without a recorded collation on a database whose order is not C's.  Raised
    instead of ordering differently from PostgreSQL."""


class RowCapExceeded(UnsupportedQuery):
    """A client-evaluated statement would ship more rows to the client than the
    connection's ``residual_row_cap``.  ``part`` names what the server could not run
    (the reason the statement is finished on the client), ``relation`` the server
    SELECT whose rows passed the cap.  Raised before any of its rows is decrypted; the
    statement changed nothing.  Like a statement PostgreSQL cancels at its
    ``statement_timeout``, it fails the transaction it ran in."""

    def __init__(self, message: str, cap: int, part: str, relation: str) -> None:
        super().__init__(message, "row cap")
        self.cap, self.part, self.relation = cap, part, relation


class UndefinedTable(AdaptiveError, pg_errors.UndefinedTable):
    """The statement names a table the encrypted schema does not have."""


class UndefinedColumn(AdaptiveError, pg_errors.UndefinedColumn):
    """The statement names a column the table does not have."""


class DuplicateTable(AdaptiveError, pg_errors.DuplicateTable):
    """CREATE TABLE for a table that exists already."""


class LayerFloorViolation(AdaptiveError, psycopg.NotSupportedError):
    """A query needs an onion peeled below the floor the DBA set for the column."""


class PeelDisabled(AdaptiveError, psycopg.NotSupportedError):
    """A query needs a peel but the peel mode is ``off``."""


class JoinAdjustmentDisabled(PeelDisabled):
    """A query compares two columns under different keys, and the peel mode is ``off``:
    bringing them under one key (a join adjustment) is an adaptation like a peel."""


class OnionBuildDisabled(PeelDisabled):
    """A query needs an onion its column builds on first use, and the peel mode is
    ``off``: building it is an adaptation like a peel (see ondemand.py)."""


class JoinForbidden(LayerFloorViolation):
    """A query compares two columns under different keys, and neither side may be
    re-keyed for a join (``joins = false`` in the onion configuration)."""


class PeelModeUnavailable(ConfigError):
    """The peel mode asked for cannot work on this database: ``server`` where the
    PL/Python peel functions are not installed (hosted PostgreSQL; ``adaptive-db init``
    recorded ``client`` as the database's default)."""


# --- concurrency: errors an application should retry, like a serialization failure -------


class RetryableError(AdaptiveError, pg_errors.SerializationFailure):
    """The statement or transaction should be retried from the start.

    Raised where PostgreSQL would raise a serialization failure: the connection's
    transaction (if any) has been rolled back or must be, and a retry will succeed.
    ``sqlstate`` is ``40001`` so generic retry loops that look at it work unchanged.
    """

    sqlstate = "40001"


class StaleMetadata(RetryableError):
    """The client's cached layer metadata was older than the database's; it was refreshed."""


class StaleSnapshot(RetryableError):
    """The transaction's snapshot predates a layer change the next statement needs."""


class PeelConflict(RetryableError):
    """A needed peel could not run now (e.g. this transaction holds a lock on the table)."""
