"""adaptive_client: plain SQL over an encrypted PostgreSQL database, with onion layers
peeled inside the database only when a query needs it.

    import adaptive_client
    with adaptive_client.connect("dbname=app") as conn:  # key from ADAPTIVE_MASTER_KEY
        conn.execute("SELECT name FROM customer WHERE id = %s", (42,)).fetchone()
"""

from psycopg import (
    DatabaseError,
    DataError,
    Error,
    IntegrityError,
    InterfaceError,
    InternalError,
    NotSupportedError,
    OperationalError,
    ProgrammingError,
    Warning,
)
from psycopg.dbapi20 import (
    BINARY,
    DATETIME,
    NUMBER,
    ROWID,
    STRING,
    Binary,
    Date,
    DateFromTicks,
    Time,
    TimeFromTicks,
    Timestamp,
    TimestampFromTicks,
)

from . import errors
from .catalog.keys import MasterKey
from .dbapi.aio import AsyncConnection, AsyncCursor
from .dbapi.connection import Connection, Cursor, connect
from .errors import (
    AdaptiveError,
    LayerFloorViolation,
    MetadataTampered,
    RetryableError,
    UnsupportedQuery,
    WrongMasterKey,
)
from .values import array_encoding  # noqa: F401  (registers the array encoding)

# DB-API 2.0 module globals.  Threads may share the module and connections, as with
# psycopg 3: a connection runs one statement at a time, whatever thread sends it.
apilevel = "2.0"
threadsafety = 2
paramstyle = "pyformat"

__all__ = [
    "BINARY",
    "DATETIME",
    "NUMBER",
    "ROWID",
    "STRING",
    "AdaptiveError",
    "AsyncConnection",
    "AsyncCursor",
    "Binary",
    "Connection",
    "Cursor",
    "DataError",
    "DatabaseError",
    "Date",
    "DateFromTicks",
    "Error",
    "IntegrityError",
    "InterfaceError",
    "InternalError",
    "LayerFloorViolation",
    "MasterKey",
    "MetadataTampered",
    "NotSupportedError",
    "OperationalError",
    "ProgrammingError",
    "RetryableError",
    "Time",
    "TimeFromTicks",
    "Timestamp",
    "TimestampFromTicks",
    "UnsupportedQuery",
    "Warning",
    "WrongMasterKey",
    "apilevel",
    "connect",
    "errors",
    "paramstyle",
    "threadsafety",
]
__version__ = "0.1.0"
