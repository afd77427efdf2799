"""Install the metadata schema and stored procedures into a database (idempotent).

``install(conn)`` creates the extensions (``plpython3u``, ``pgcrypto``), runs
``sql/metadata_schema.sql`` and then every ``sql/udf/*.sql`` in name order, all in one
transaction: a failure leaves the database as it was.  Every script uses ``IF NOT EXISTS``
or ``CREATE OR REPLACE``, so installing again (e.g. after an upgrade) is safe.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg

from .embedded import create_extensions
from .errors import AdaptiveError

#: advisory lock serializing concurrent installs (CREATE EXTENSION / CREATE OR REPLACE race)
_LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtext('adaptive-client install'))"


class InstallError(AdaptiveError):
    """The metadata schema or the stored procedures cannot be installed."""


def sql_dir() -> Path:
    """The project's ``sql/`` directory (metadata schema and ``udf/*.sql``).

    It sits next to the ``adaptive_client`` package, in the project root.
    """
    here = Path(__file__).resolve().parent
    candidates = (here.parent / "sql", here / "sql")
    for candidate in candidates:
        if (candidate / "metadata_schema.sql").is_file():
            return candidate
    raise InstallError(
        "the sql/ directory with metadata_schema.sql was not found (looked in "
        + ", ".join(str(c) for c in candidates)
        + "); install adaptive-client from a checkout of the project (pip install -e .)"
    )


def install_files() -> list[Path]:
    """The scripts ``install`` runs, in order."""
    root = sql_dir()
    return [root / "metadata_schema.sql", *sorted((root / "udf").glob("*.sql"))]


def install(conn: psycopg.Connection[Any]) -> list[str]:
    """Create the extensions, the ``adaptive`` schema and every UDF, in one transaction.

    Works on a connection in autocommit mode or not; when the connection is already inside
    a transaction, the installation runs in a savepoint and the caller commits.  Returns the
    names of the scripts run.
    """
    files = install_files()
    scripts = [(f.name, f.read_text(encoding="utf-8")) for f in files]
    step = "the extensions"
    try:
        with conn.transaction():
            conn.execute(_LOCK_SQL)
            create_extensions(conn)
            for name, text in scripts:
                step = name
                conn.execute(text.encode("utf-8"))
    except psycopg.Error as exc:
        raise InstallError(f"installing {step} failed: {str(exc).strip()}") from exc
    return [name for name, _ in scripts]
