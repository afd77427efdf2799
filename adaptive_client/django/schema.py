"""The PostgreSQL backend's schema editor; values inlined into DDL are quoted by psycopg
on the plain session (the client parses the DDL and records what it declares).  Foreign
keys are checked at once (the client declares no DEFERRABLE constraint), so the
PostgreSQL backend's ``SET CONSTRAINTS ... IMMEDIATE`` around them is left out."""

from __future__ import annotations

from typing import Any

from django.db.backends.postgresql import schema as pg_schema
from psycopg import sql


class DatabaseSchemaEditor(pg_schema.DatabaseSchemaEditor):  # type: ignore[misc]
    sql_create_column_inline_fk = (
        "CONSTRAINT %(name)s REFERENCES %(to_table)s(%(to_column)s)%(deferrable)s"
    )
    sql_delete_fk = "ALTER TABLE %(table)s DROP CONSTRAINT %(name)s"

    def _create_like_index_sql(self, model: Any, field: Any) -> None:
        # a ``varchar_pattern_ops`` index serves LIKE over plaintext; the server holds
        # ciphertexts (the client's own onions serve LIKE)
        return None

    def quote_value(self, value: Any) -> str:
        self.connection.ensure_connection()
        return str(sql.quote(value, self.connection.connection.pg))
