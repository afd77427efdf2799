"""A benchmark's scratch database: dropped if it exists, created, and (for the client)
given the metadata schema and UDFs."""

from __future__ import annotations

import psycopg

from adaptive_client.catalog.install import install


def scratch(admin: str, name: str, with_schema: bool = True) -> str:
    """The DSN of a fresh database ``name`` on the server of the maintenance DSN ``admin``."""
    with psycopg.connect(admin, autocommit=True) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{name}"')
        c.execute(f'CREATE DATABASE "{name}"')
    dsn = psycopg.conninfo.make_conninfo(admin, dbname=name)
    if with_schema:
        with psycopg.connect(dsn) as c:
            install(c)
    return dsn
