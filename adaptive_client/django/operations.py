"""The PostgreSQL backend's operations, with the SQL text Django composes itself (schema
statements, ``last_executed_query``) quoted by psycopg on the plain session: a value
inlined into DDL or shown in a log is the application's, as Django's would be."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.backends.postgresql import operations as pg_operations
from psycopg import ClientCursor, errors


class DatabaseOperations(pg_operations.DatabaseOperations):  # type: ignore[misc]
    compiler_module = "adaptive_client.django.compiler"

    def compose_sql(self, sql: str, params: Any) -> str:
        self.connection.ensure_connection()
        return str(ClientCursor(self.connection.connection.pg).mogrify(sql, params))

    def last_executed_query(self, cursor: Any, sql: str, params: Any) -> str | None:
        if params is None:
            return sql
        try:
            return self.compose_sql(sql, params)
        except (errors.DataError, TypeError, ValueError):
            return None

    def deferrable_sql(self) -> str:
        # the client declares foreign keys checked at once (features.py)
        return ""

    def _sequence_of(self, table: str, column: str) -> str | None:
        """The sequence the client draws a serial or identity column's values from."""
        self.connection.ensure_connection()
        catalog = self.connection.connection.catalog
        if not catalog.has_table(table):
            return None
        col = catalog.table(table).columns.get(column.lower())
        return col.sequence if col is not None else None

    def sequence_reset_by_name_sql(self, style: Any, sequences: list[dict[str, Any]]) -> list[str]:
        out = []
        for info in sequences:
            name = info.get("name") or self._sequence_of(info["table"], info["column"] or "id")
            if name:
                out.append(f"{style.SQL_KEYWORD('SELECT')} setval('{name}', 1, false);")
        return out

    def sequence_reset_sql(self, style: Any, model_list: Any) -> list[str]:
        """``setval`` of each model's serial column to its largest value.  PostgreSQL's
        backend writes ``setval(pg_get_serial_sequence(...), max(id)) FROM table``; the
        client answers ``setval`` of constants (it draws the values), so the largest
        value is read here and the statement names it."""
        out = []
        for model in model_list:
            for f in model._meta.local_fields:
                if not isinstance(f, models.AutoField):
                    continue
                table = model._meta.db_table
                name = self._sequence_of(table, f.column)
                if name is None:
                    break
                with self.connection.cursor() as cursor:
                    cursor.execute(
                        f"SELECT max({self.quote_name(f.column)}) FROM {self.quote_name(table)}"
                    )
                    row = cursor.fetchone()
                top = row[0] if row else None
                value, called = (top, "true") if top is not None else (1, "false")
                out.append(f"{style.SQL_KEYWORD('SELECT')} setval('{name}', {value}, {called});")
                break
        return out
