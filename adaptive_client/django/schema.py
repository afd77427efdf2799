"""The PostgreSQL backend's schema editor; values inlined into DDL are quoted by psycopg
on the plain session (the client parses the DDL and records what it declares).  Foreign
keys are checked at once (the client declares no DEFERRABLE constraint), so the
PostgreSQL backend's ``SET CONSTRAINTS ... IMMEDIATE`` around them is left out.

The client changes a column's type by re-encrypting it, and refuses to while a unique
key, index or check uses the column: ``AlterField`` of such a column (``auth``'s
``username`` growing to 150 characters) drops them, alters the column and makes them
again, as the client's error asks."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db.backends.postgresql import schema as pg_schema
from psycopg import sql

from ..syntax.names import folded


class DatabaseSchemaEditor(pg_schema.DatabaseSchemaEditor):
    sql_create_column_inline_fk = (
        "CONSTRAINT %(name)s REFERENCES %(to_table)s(%(to_column)s)%(deferrable)s"
    )
    sql_delete_fk = "ALTER TABLE %(table)s DROP CONSTRAINT %(name)s"

    def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
        # Django runs the deferred statements (constraints, indexes) before it leaves the
        # migration's atomic block: one the client refuses would leave the block open on
        # a failed transaction.  It is left, rolled back, before the error goes on.
        if exc_type is None and self.deferred_sql:
            try:
                for statement in self.deferred_sql:
                    self.execute(statement, None)
            except Exception as exc:
                super().__exit__(type(exc), exc, exc.__traceback__)
                raise
            self.deferred_sql.clear()
        super().__exit__(exc_type, exc_value, traceback)

    def _create_like_index_sql(self, model: Any, field: Any) -> None:
        # a ``varchar_pattern_ops`` index serves LIKE over plaintext; the server holds
        # ciphertexts (the client's own onions serve LIKE)
        return None

    def _alter_field(
        self,
        model: Any,
        old_field: Any,
        new_field: Any,
        old_type: str,
        new_type: str,
        old_db_params: Any,
        new_db_params: Any,
        strict: bool = False,
    ) -> None:
        args = (old_type, new_type, old_db_params, new_db_params, strict)
        if old_type == new_type or old_field.column != new_field.column:
            super()._alter_field(model, old_field, new_field, *args)
            return
        with self._without_keys_on(model._meta.db_table, old_field.column):
            super()._alter_field(model, old_field, new_field, *args)

    @contextmanager
    def _without_keys_on(self, table: str, column: str) -> Iterator[None]:
        """The unique keys, indexes and checks over ``column`` dropped, made again after."""
        with self.connection.cursor() as cursor:
            found = self.connection.introspection.get_constraints(cursor, table)
        checks = {c.get("name"): c.get("sql") for c in self._table_meta(table).checks}
        again = []
        qn, t = self.quote_name, self.quote_name(table)
        for name, info in found.items():
            if column not in info["columns"] or info["primary_key"] or info["foreign_key"]:
                continue
            cols = ", ".join(qn(c) for c in info["columns"])
            if info["index"]:
                self.execute(f"DROP INDEX {qn(name)}", None)
                unique = "UNIQUE " if info["unique"] else ""
                again.append(f"CREATE {unique}INDEX {qn(name)} ON {t} ({cols})")
            elif info["unique"]:
                self.execute(f"ALTER TABLE {t} DROP CONSTRAINT {qn(name)}", None)
                again.append(f"ALTER TABLE {t} ADD CONSTRAINT {qn(name)} UNIQUE ({cols})")
            elif info["check"] and checks.get(name):
                self.execute(f"ALTER TABLE {t} DROP CONSTRAINT {qn(name)}", None)
                again.append(f"ALTER TABLE {t} ADD CONSTRAINT {qn(name)} CHECK ({checks[name]})")
        yield
        for statement in again:
            self.execute(statement, None)

    def _table_meta(self, table: str) -> Any:
        self.connection.ensure_connection()
        return self.connection.connection.catalog.table(folded(table, True))

    def quote_value(self, value: Any) -> str:
        self.connection.ensure_connection()
        return str(sql.quote(value, self.connection.connection.pg))
