"""Install the metadata schema and stored procedures into a database (idempotent)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg

from .embedded import create_extensions
from .errors import AdaptiveError


def sql_dir() -> Path:
    """The project's ``sql/`` directory (metadata schema and ``udf/*.sql``)."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parent / "sql", here / "sql"):
        if (candidate / "metadata_schema.sql").exists():
            return candidate
    raise AdaptiveError("the sql/ directory with metadata_schema.sql was not found")


def install_files() -> list[Path]:
    root = sql_dir()
    return [root / "metadata_schema.sql", *sorted((root / "udf").glob("*.sql"))]


def install(conn: psycopg.Connection[Any]) -> list[str]:
    """Create extensions, the ``adaptive`` schema and every UDF, in one transaction."""
    files = install_files()
    previous = conn.autocommit
    conn.autocommit = True
    try:
        create_extensions(conn)
        conn.autocommit = False
        with conn.transaction():
            # serialize concurrent installs: CREATE OR REPLACE races otherwise
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('adaptive-client install'))")
            for f in files:
                conn.execute(f.read_text().encode())
    finally:
        conn.autocommit = previous
    return [f.name for f in files]
