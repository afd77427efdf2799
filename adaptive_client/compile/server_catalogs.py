"""Reads of the server's own catalogs that describe the server, not the application's
tables: its extensions, settings, databases, roles, collations, time zones.

``SELECT 1 FROM pg_extension WHERE extname = %s`` (Django's ``CreateExtension``),
``SELECT setting FROM pg_settings WHERE name = %s``, ``SELECT collname FROM pg_collation``:
the answer is the server's, about the server, and the same whether the application's
tables are encrypted or not; nothing in it could be computed by the client. Such a
SELECT is sent as it is, parameters with it, when every relation it reads is one of
``SERVER_CATALOGS`` (or a CTE of its own) -- a relation of the application's anywhere
in it, or a catalog that lists relations (``pg_class``, ``pg_attribute``, ...; they
describe the stored, anonymized tables), keeps it on the client, which refuses it.
docs/security.md argues what this shows.
"""

from __future__ import annotations

from sqlglot import exp

__all__ = ["SERVER_CATALOGS", "reads_server_catalogs"]

SERVER_CATALOGS = frozenset(
    {
        "pg_extension",
        "pg_available_extensions",
        "pg_available_extension_versions",
        "pg_settings",
        "pg_database",
        "pg_roles",
        "pg_user",
        "pg_collation",
        "pg_timezone_names",
        "pg_timezone_abbrevs",
        "pg_language",
        "pg_tablespace",
        "pg_am",
    }
)

# (a relation of one of these schemas, or of none: the search path finds pg_catalog first)
_CATALOG_SCHEMAS = frozenset({"", "pg_catalog"})

_QUERIES = (exp.Select, exp.Union, exp.Intersect, exp.Except)


def reads_server_catalogs(stmt: exp.Expression) -> bool:
    """Is ``stmt`` a query whose every relation is a server catalog of
    ``SERVER_CATALOGS`` (or a CTE it defines), reading at least one?"""
    if not isinstance(stmt, _QUERIES) or stmt.args.get("into") is not None:
        return False
    ctes = {cte.alias_or_name.lower() for cte in stmt.find_all(exp.CTE)}
    read = 0
    for table in stmt.find_all(exp.Table):
        name = table.name.lower()
        if not table.args.get("catalog") and not table.db and name in ctes:
            continue
        if table.args.get("catalog") or table.db.lower() not in _CATALOG_SCHEMAS:
            return False
        if name not in SERVER_CATALOGS or not isinstance(table.this, exp.Identifier):
            return False  # (a function in FROM: generate_series(...) is the client's)
        read += 1
    return read > 0
