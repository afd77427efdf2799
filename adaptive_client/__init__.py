"""adaptive_client: plain SQL over an encrypted PostgreSQL database, with onion layers
peeled inside the database only when a query needs it.

    import adaptive_client
    with adaptive_client.connect("dbname=app", master_key=KEY_HEX) as conn:
        conn.execute("SELECT name FROM customer WHERE id = %s", (42,)).fetchone()
"""

from . import errors
from .connection import Connection, Cursor, connect
from .errors import (
    AdaptiveError,
    LayerFloorViolation,
    MetadataTampered,
    RetryableError,
    UnsupportedQuery,
    WrongMasterKey,
)
from .keys import MasterKey

__all__ = [
    "AdaptiveError",
    "Connection",
    "Cursor",
    "LayerFloorViolation",
    "MasterKey",
    "MetadataTampered",
    "RetryableError",
    "UnsupportedQuery",
    "WrongMasterKey",
    "connect",
    "errors",
]
__version__ = "0.1.0"
