"""The PostgreSQL backend's operations, with the SQL text Django composes itself (schema
statements, ``last_executed_query``) quoted by psycopg on the plain session: a value
inlined into DDL or shown in a log is the application's, as Django's would be."""

from __future__ import annotations

import datetime
import zoneinfo
from typing import Any

from django.db import models
from django.db.backends.postgresql import operations as pg_operations
from psycopg import ClientCursor, errors

from ..syntax.names import folded, quoted_shown

#: the units Django truncates dates and times to
_UNITS = frozenset({"year", "quarter", "month", "week", "day", "hour", "minute", "second"})


def _unit(lookup_type: str) -> str:
    if lookup_type.lower() not in _UNITS:
        raise ValueError(f"Invalid lookup type: {lookup_type!r}")
    return f"'{lookup_type.lower()}'"


class DatabaseOperations(pg_operations.DatabaseOperations):
    compiler_module = "adaptive_client.django.compiler"

    def quote_name(self, name: str) -> str:
        return str(super().quote_name(name))

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

    # DATE_TRUNC's unit written into the statement (the PostgreSQL backend passes it as
    # a parameter): the client engine truncates by a unit it knows when it compiles
    def date_trunc_sql(
        self, lookup_type: str, sql: str, params: Any, tzname: str | None = None
    ) -> tuple[str, Any]:
        sql, params = self._convert_sql_to_tz(sql, params, tzname)
        return f"DATE_TRUNC({_unit(lookup_type)}, {sql})", tuple(params)

    def datetime_trunc_sql(
        self, lookup_type: str, sql: str, params: Any, tzname: str | None
    ) -> tuple[str, Any]:
        sql, params = self._convert_sql_to_tz(sql, params, tzname)
        return f"DATE_TRUNC({_unit(lookup_type)}, {sql})", tuple(params)

    def time_trunc_sql(
        self, lookup_type: str, sql: str, params: Any, tzname: str | None = None
    ) -> tuple[str, Any]:
        sql, params = self._convert_sql_to_tz(sql, params, tzname)
        return f"DATE_TRUNC({_unit(lookup_type)}, {sql})::time", tuple(params)

    def datetime_extract_sql(
        self, lookup_type: str, sql: str, params: Any, tzname: str | None
    ) -> tuple[str, Any]:
        if lookup_type == "second":
            sql, params = self._convert_sql_to_tz(sql, params, tzname)
            return f"EXTRACT(SECOND FROM DATE_TRUNC('second', {sql}))", tuple(params)
        return super().datetime_extract_sql(lookup_type, sql, params, tzname)

    def time_extract_sql(self, lookup_type: str, sql: str, params: Any) -> tuple[str, Any]:
        if lookup_type == "second":
            return f"EXTRACT(SECOND FROM DATE_TRUNC('second', {sql}))", tuple(params)
        return super().time_extract_sql(lookup_type, sql, params)

    def adapt_datetimefield_value(self, value: Any) -> Any:
        """A naive datetime (``USE_TZ = False``) as the time it is in the connection's
        zone: what PostgreSQL makes of it in a timestamptz column, made explicit for the
        client, which encrypts the instant."""
        value = super().adapt_datetimefield_value(value)
        zone = self.connection.timezone_name
        if isinstance(value, datetime.datetime) and value.tzinfo is None and zone:
            return value.replace(tzinfo=zoneinfo.ZoneInfo(zone))
        return value

    def deferrable_sql(self) -> str:
        # the client declares foreign keys checked at once (features.py)
        return ""

    def _sequence_of(self, table: str, column: str) -> str | None:
        """The sequence the client draws a serial or identity column's values from."""
        self.connection.ensure_connection()
        catalog = self.connection.connection.catalog
        table = folded(table, True)  # (Django's names are quoted: syntax/names.py)
        if not catalog.has_table(table):
            return None
        col = catalog.table(table).columns.get(folded(column, True))
        return quoted_shown(col.sequence) if col is not None and col.sequence else None

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
