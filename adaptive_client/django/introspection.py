"""Introspection from the sealed catalog.

Django's PostgreSQL backend introspects by querying ``pg_catalog``, which on an encrypted
database holds anonymized tables of ciphertext columns.  The same answers come here from
the client's decrypted catalog: table and column names, declared types, nullability,
defaults, identity columns and their sequences, primary keys, unique and foreign-key
constraints, checks and indexes -- what migrations look up by name (``AlterField``,
``RemoveField``, ``AlterUniqueTogether`` ...), what the test runner flushes, what
``inspectdb`` writes."""

from __future__ import annotations

from typing import Any

import sqlglot
from django.db.backends.postgresql import introspection as pg_introspection
from django.db.models import Index
from sqlglot import exp

from ..catalog.defaults import printed_default
from ..catalog.metadata import Catalog, TableMeta
from ..catalog.table_meta import ColumnMeta
from ..dbapi.connection import Connection
from ..syntax.names import reflecting_names_as_written, shown

FieldInfo = pg_introspection.FieldInfo
TableInfo = pg_introspection.TableInfo


def _check_columns(table: TableMeta, check_sql: str) -> list[str]:
    """The table's columns a CHECK names, in the table's order (PostgreSQL's conkey)."""
    try:
        tree = sqlglot.parse_one(check_sql, read="postgres")
    except sqlglot.errors.ParseError:
        return []
    named = {c.name.lower() for c in tree.find_all(exp.Column)}
    return [name for name in table.columns if name.lower() in named]


def _field_info(col: ColumnMeta) -> Any:
    """A column as psycopg describes it and ``pg_catalog`` qualifies it."""
    t = col.type
    sized = t.name in ("varchar", "char", "bpchar") and t.precision is not None
    default = col.default_sql or printed_default(col.default)
    if col.sequence and not col.identity:
        default = f"nextval('{col.sequence}'::regclass)"
    collation = col.collation.name if col.collation is not None else None
    return FieldInfo(
        col.name,
        t.oid,
        t.precision if sized else None,
        t.precision if sized else None,
        t.precision if t.name == "numeric" else None,
        t.scale if t.name == "numeric" else None,
        col.nullable,
        None if col.identity else default,
        collation,
        bool(col.identity),
        None,
    )


@reflecting_names_as_written(("get_",))
class DatabaseIntrospection(pg_introspection.DatabaseIntrospection):
    """Django's introspection from the sealed catalog, in the names Django gives and
    reads (its names are quoted: exact)."""

    def _connection(self) -> Connection:
        self.connection.ensure_connection()
        conn: Connection = self.connection.connection
        return conn

    def _catalog(self) -> Catalog:
        """The catalog, fresh where the connection is between transactions (other
        clients' DDL is notified)."""
        conn = self._connection()
        conn.refresh_catalog()
        if not conn.in_transaction():
            conn.catalog.refresh(conn.control)
        return conn.catalog

    def _table(self, table_name: str) -> TableMeta | None:
        catalog = self._catalog()
        return catalog.table(table_name) if catalog.has_table(table_name) else None

    def get_table_list(self, cursor: Any) -> list[Any]:
        catalog = self._catalog()
        tables = [TableInfo(name, "t", None) for name in sorted(catalog.tables)]
        views = [TableInfo(name, "v", None) for name in sorted(getattr(catalog, "views", {}))]
        return [t for t in tables + views if t.name not in self.ignored_tables]

    def get_table_description(self, cursor: Any, table_name: str) -> list[Any]:
        table = self._table(table_name)
        if table is None:  # a view: what its result describes
            view = self.connection.ops.quote_name(shown(table_name))
            cursor.execute(f"SELECT * FROM {view} LIMIT 1")
            return [FieldInfo(*d[:6], True, None, None, False, None) for d in cursor.description]
        return [_field_info(col) for col in table.columns.values()]

    def get_sequences(
        self, cursor: Any, table_name: str, table_fields: Any = ()
    ) -> list[dict[str, Any]]:
        table = self._table(table_name)
        if table is None:
            return []
        return [
            {"name": col.sequence, "table": table_name, "column": col.name}
            for col in table.columns.values()
            if col.sequence
        ]

    def get_relations(self, cursor: Any, table_name: str) -> dict[str, tuple[str, str]]:
        table = self._table(table_name)
        if table is None:
            return {}
        return {fk.columns[0]: (fk.ref_columns[0], fk.ref_table) for fk in table.foreign_keys}

    def get_primary_key_columns(self, cursor: Any, table_name: str) -> list[str] | None:
        table = self._table(table_name)
        return list(table.primary_key) if table is not None and table.primary_key else None

    def get_constraints(self, cursor: Any, table_name: str) -> dict[str, dict[str, Any]]:
        catalog = self._catalog()
        if not catalog.has_table(table_name):
            return {}
        table = catalog.table(table_name)

        def entry(columns: list[str], **kind: Any) -> dict[str, Any]:
            base = {
                "columns": list(columns),
                "primary_key": False,
                "unique": False,
                "foreign_key": None,
                "check": False,
                "index": False,
                "definition": None,
                "options": None,
            }
            return {**base, **kind}

        out: dict[str, dict[str, Any]] = {}
        if table.primary_key:
            pk_anon = catalog.anon_index(table.name, "__pkey__")
            name = table.constraints.get(pk_anon, f"{table.name}_pkey")
            out[name] = entry(table.primary_key, primary_key=True, unique=True)
        for anon, columns in table.unique_keys.items():
            out[table.constraints.get(anon, anon)] = entry(columns, unique=True)
        for fk in table.foreign_keys:
            out[fk.name] = entry(fk.columns, foreign_key=(fk.ref_table, fk.ref_columns[0]))
        for check in table.checks:
            name = check.get("name") or check.get("anon", "")
            out[name] = entry(_check_columns(table, check.get("sql", "")), check=True)
        for ix in table.indexes:
            if ix.name in out:
                continue
            out[ix.name] = entry(
                ix.columns,
                unique=ix.unique,
                index=True,
                orders=["ASC"] * len(ix.columns),
                type=Index.suffix,
            )
        return out
