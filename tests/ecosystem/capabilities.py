"""What the client's DDL accepts, probed once per session on a scratch database, so that
the ORM tests and the example application use foreign keys and generated keys where the
client has them, and say so where it does not."""

from __future__ import annotations

from functools import cache

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

import adaptive_client
from adaptive_client.catalog.install import install
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.syntax import sqltext

_PROBES = {
    "serial": "CREATE TABLE probe_serial (id serial PRIMARY KEY, v integer)",
    "foreign_keys": (
        "CREATE TABLE probe_fk (id integer PRIMARY KEY, "
        "parent integer REFERENCES probe_fk (id) ON DELETE CASCADE)"
    ),
    "now_default": "CREATE TABLE probe_now (id integer PRIMARY KEY, t timestamp DEFAULT now())",
}


@cache
def client_supports(maintenance_dsn: str) -> frozenset[str]:
    """The probes' names whose DDL the client runs."""
    name = "test_probe_capabilities"
    with psycopg.connect(maintenance_dsn, autocommit=True) as c:
        c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        c.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    dsn = make_conninfo(maintenance_dsn, dbname=name)
    try:
        with psycopg.connect(dsn) as c:
            install(c)
        ok = set()
        with adaptive_client.connect(dsn, master_key=MasterKey.generate(), autocommit=True) as conn:
            for feature, ddl in _PROBES.items():
                try:
                    conn.execute(ddl)
                except psycopg.Error:
                    continue
                ok.add(feature)
        return frozenset(ok)
    finally:
        with psycopg.connect(maintenance_dsn, autocommit=True) as c:
            c.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@cache
def parenthesized_joins_parse() -> bool:
    """Whether the client's syntax check takes ``a LEFT JOIN (b JOIN c ON p) ON q`` (a
    parenthesized join) as PostgreSQL does, rather than as a derived table without its
    alias."""
    try:
        sqltext.parse("SELECT 1 FROM a LEFT JOIN (b JOIN c ON b.x = c.x) ON a.x = b.x")
    except psycopg.errors.SyntaxError:
        return False
    return True
