"""``postgresql+adaptive://``: SQLAlchemy's psycopg dialect over adaptive connections.

The SQL SQLAlchemy compiles is the SQL it sends to plain psycopg (same compiler, same
bind casts, RETURNING, "insertmanyvalues" batches, named server-side cursors for
``yield_per`` / ``stream_results``); the client rewrites it like any application's SQL.
What the psycopg dialect would ask ``pg_catalog`` for is answered here instead:

* server facts (version, default schema, isolation level, ping) through the plain
  psycopg session the client runs the application's statements on (``Connection.pg``);
* reflection (``inspect()``, ``MetaData.reflect()``, ``has_table`` before ``create_all``)
  from the sealed catalog, in the application's names and declared types
  (:mod:`adaptive_client.sqlalchemy.reflection`).

URL query options, besides libpq's: ``master_key_file`` (a path), ``master_key`` (hex;
prefer a file or ``ADAPTIVE_MASTER_KEY``), ``config`` (an onion_config TOML path),
``peel`` (server / client / off).  ``connect_args={"master_key": key}`` works too.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import psycopg
from sqlalchemy.dialects import registry
from sqlalchemy.dialects.postgresql.psycopg import PGDialect_psycopg
from sqlalchemy.engine import default, reflection
from sqlalchemy.engine.url import URL
from sqlalchemy.sql.compiler import InsertmanyvaluesSentinelOpts

from ..catalog.metadata import TableMeta
from ..dbapi import connection as _connection
from ..dbapi.pool import ping
from ..syntax.names import reflecting_names_as_written
from . import reflection as refl

logger = logging.getLogger("adaptive_client.sqlalchemy")


class AdaptiveDBAPI:
    """The DB-API module the dialect loads: psycopg's globals (SQLAlchemy reads its
    version, adapters, exception classes and isolation levels), with ``connect`` opening
    an adaptive connection.  The library's errors are psycopg errors, so SQLAlchemy wraps
    them (``IntegrityError``, ``NotSupportedError`` ...) as it wraps psycopg's."""

    def __init__(self) -> None:
        for k, v in psycopg.__dict__.items():
            if (not k.startswith("__") or k == "__version__") and k != "connect":
                self.__dict__[k] = v
        self.paramstyle = "pyformat"
        # SQLAlchemy's LargeBinary wraps values in the DB-API's Binary: psycopg's marks a
        # value for its binary dumper; the client encodes (and encrypts) bytes itself
        self.Binary = bytes

    def connect(self, *args: Any, **kwargs: Any) -> _connection.Connection:
        return _connect(*args, **kwargs)


def _connect(*args: Any, **kwargs: Any) -> _connection.Connection:
    # (psycopg's adapters context -- the engine's json serializer and deserializer -- is
    # the application session's, passed on)
    key = kwargs.pop("master_key", None)
    key_file = kwargs.pop("master_key_file", None)
    if key is None and key_file is not None:
        key = Path(key_file)
    return _connection.connect(
        *args,
        master_key=key,
        config=kwargs.pop("config", None),
        peel=kwargs.pop("peel", None),
        **kwargs,
    )


def _log_notice(diag: psycopg.errors.Diagnostic) -> None:
    logger.info("%s: %s", diag.severity, diag.message_primary)


def _pg(dbapi_conn: Any) -> psycopg.Connection[Any]:
    """The plain psycopg session under an adaptive connection."""
    return refl.sync_connection(dbapi_conn).pg


@reflecting_names_as_written(("get_", "has_", "_load_"))
class AdaptiveDialect(PGDialect_psycopg):
    """SQLAlchemy's psycopg dialect, connecting through :func:`adaptive_client.connect`."""

    driver = "adaptive"
    supports_statement_cache = True
    # sequences are kept in the sealed catalog (stand-alone ones and those of serial and
    # identity columns), and the client draws their values
    supports_sequences = True
    sequences_optional = True
    use_native_hstore = False
    _has_native_hstore = False
    # An ORM flush of many rows with generated keys needs the RETURNING rows in the order
    # of the parameters.  The psycopg dialect gets it with INSERT ... SELECT FROM (VALUES
    # ...) ORDER BY a counter; here a plain multi-row INSERT ... RETURNING is enough: the
    # client draws a serial/identity column's values for the rows in their order, so
    # SQLAlchemy can sort the returned rows by the generated key.
    insertmanyvalues_implicit_sentinel = InsertmanyvaluesSentinelOpts.ANY_AUTOINCREMENT
    # COMMENT ON would put the application's words in the clear next to the ciphertexts
    supports_comments = False
    supports_constraint_comments = False
    inline_comments = False

    @classmethod
    def import_dbapi(cls) -> Any:
        return AdaptiveDBAPI()

    @classmethod
    def get_async_dialect_cls(cls, url: URL) -> Any:
        # (by name, as SQLAlchemy finds any dialect: the async dialect builds on this one)
        return registry.load("postgresql.adaptive_async")

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("use_native_hstore", False)
        super().__init__(**kwargs)

    # -- server facts, from the plain session ------------------------------------------------
    def _get_server_version_info(self, connection: Any) -> tuple[int, ...]:
        v = _pg(connection.connection.dbapi_connection).info.server_version
        return (v // 10000, v % 10000) if v >= 100000 else (v // 10000, v // 100 % 100, v % 100)

    def _get_default_schema_name(self, connection: Any) -> str:
        return "public"

    def _type_info_fetch(self, connection: Any, name: str) -> Any:
        return None

    def get_isolation_level(self, dbapi_connection: Any) -> Any:
        pg = _pg(dbapi_connection)
        idle = pg.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        row = pg.execute("show transaction isolation level").fetchone()
        if idle and not pg.autocommit:
            pg.rollback()
        return str(row[0] if row else "read committed").upper()

    def set_readonly(self, connection: Any, value: bool) -> None:
        _pg(connection).read_only = value

    def get_readonly(self, connection: Any) -> bool:
        return bool(_pg(connection).read_only)

    def set_deferrable(self, connection: Any, value: bool) -> None:
        _pg(connection).deferrable = value

    def get_deferrable(self, connection: Any) -> bool:
        return bool(_pg(connection).deferrable)

    def on_connect(self) -> Any:
        def setup(conn: Any) -> None:
            _pg(conn).add_notice_handler(_log_notice)
            if self.isolation_level is not None:
                self.set_isolation_level(conn, self.isolation_level)

        return setup

    def do_ping(self, dbapi_connection: Any) -> bool:
        ping(refl.sync_connection(dbapi_connection))
        return True

    def is_disconnect(self, e: Any, connection: Any, cursor: Any) -> bool:
        if isinstance(e, psycopg.Error) and connection is not None:
            try:
                conn = refl.sync_connection(connection)
            except TypeError:
                return False
            return bool(conn.pg.closed or conn.pg.broken or conn.control.broken)
        return False

    def _twophase_idle_check(self, dbapi_conn: Any) -> bool:
        return bool(_pg(dbapi_conn).info.transaction_status == psycopg.pq.TransactionStatus.IDLE)

    # -- reflection, from the sealed catalog ---------------------------------------------------
    def _catalog(self, connection: Any) -> Any:
        return refl.catalog_of(connection.connection.dbapi_connection)

    def _table(self, connection: Any, table_name: str, schema: str | None) -> Any:
        """The table's record, or a view's (its columns only)."""
        from sqlalchemy import exc

        catalog = self._catalog(connection)
        if schema in (None, "public"):
            if catalog.has_table(table_name):
                return catalog.table(table_name)
            view = refl.views(catalog).get(table_name.lower())
            if view is not None:
                return view
        raise exc.NoSuchTableError(table_name)

    def _only_table(self, connection: Any, table_name: str, schema: str | None) -> Any:
        """The table's record; None for a view (no keys, indexes or constraints)."""
        found = self._table(connection, table_name, schema)
        return found if isinstance(found, TableMeta) else None

    def has_schema(self, connection: Any, schema: Any, **kw: Any) -> bool:  # type: ignore[override]
        return bool(schema == "public")

    def get_schema_names(self, connection: Any, **kw: Any) -> list[str]:
        return ["public"]

    @reflection.cache
    def has_table(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> bool:
        self._ensure_has_table_connection(connection)
        if schema not in (None, "public"):
            return False
        catalog = self._catalog(connection)
        return bool(catalog.has_table(table_name) or table_name.lower() in refl.views(catalog))

    def has_multi_table(
        self,
        connection: Any,
        table_names: Sequence[str],
        schema: str | None = None,
        **kw: Any,
    ) -> Iterable[tuple[tuple[str | None, str], bool]]:
        """Which of the tables exist (SQLAlchemy 2.1's ``create_all`` / ``drop_all``
        checkfirst asks for all the metadata's tables at once), from the sealed catalog."""
        return [
            ((schema, name), self.has_table(connection, name, schema=schema, **kw))
            for name in table_names
        ]

    @reflection.cache
    def has_sequence(
        self, connection: Any, sequence_name: str, schema: str | None = None, **kw: Any
    ) -> bool:
        if schema not in (None, "public"):
            return False
        return sequence_name.lower() in refl.sequence_names(self._catalog(connection))

    @reflection.cache
    def has_type(
        self, connection: Any, type_name: str, schema: str | None = None, **kw: Any
    ) -> bool:
        """An enum or domain of the sealed catalog (the server has no such type)."""
        if schema not in (None, "public"):
            return False
        return self._catalog(connection).user_type(type_name) is not None

    def has_index(
        self,
        connection: Any,
        table_name: str,
        index_name: str,
        schema: str | None = None,
        **kw: Any,
    ) -> bool:
        catalog = self._catalog(connection)
        if schema not in (None, "public") or not catalog.has_table(table_name):
            return False
        return any(ix.name == index_name for ix in catalog.table(table_name).indexes)

    @reflection.cache
    def get_table_names(self, connection: Any, schema: str | None = None, **kw: Any) -> list[str]:
        if schema not in (None, "public"):
            return []
        return refl.table_names(self._catalog(connection))

    @reflection.cache
    def get_view_names(self, connection: Any, schema: str | None = None, **kw: Any) -> list[str]:
        if schema not in (None, "public"):
            return []
        return sorted(refl.views(self._catalog(connection)))

    def get_materialized_view_names(
        self, connection: Any, schema: str | None = None, **kw: Any
    ) -> list[str]:
        return []

    def get_temp_table_names(
        self, connection: Any, schema: str | None = None, **kw: Any
    ) -> list[str]:
        return []

    def get_temp_view_names(
        self, connection: Any, schema: str | None = None, **kw: Any
    ) -> list[str]:
        return []

    @reflection.cache
    def get_sequence_names(
        self, connection: Any, schema: str | None = None, **kw: Any
    ) -> list[str]:
        if schema not in (None, "public"):
            return []
        return refl.sequence_names(self._catalog(connection))

    def get_foreign_table_names(
        self, connection: Any, schema: str | None = None, **kw: Any
    ) -> list[str]:
        return []

    @reflection.cache
    def _load_enums(self, connection: Any, schema: str | None = None, **kw: Any) -> list[Any]:
        """(PostgreSQL's inspector asks this for ``get_enums``: from the sealed catalog.)"""
        if schema not in (None, "public", "*"):
            return []
        return refl.enums(self._catalog(connection))

    @reflection.cache
    def _load_domains(self, connection: Any, schema: str | None = None, **kw: Any) -> list[Any]:
        if schema not in (None, "public", "*"):
            return []
        return refl.domains(self._catalog(connection))

    get_enums = _load_enums
    get_domains = _load_domains

    @reflection.cache
    def get_view_definition(
        self, connection: Any, view_name: str, schema: str | None = None, **kw: Any
    ) -> str:
        from sqlalchemy import exc

        view = refl.views(self._catalog(connection)).get(view_name.lower())
        if view is None or schema not in (None, "public"):
            raise exc.NoSuchTableError(view_name)
        return str(view.sql)

    @reflection.cache
    def get_columns(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> Any:
        found = self._table(connection, table_name, schema)
        if not isinstance(found, TableMeta):
            return refl.view_columns(found, self._catalog(connection))
        return refl.columns(found)

    @reflection.cache
    def get_pk_constraint(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> Any:
        table = self._only_table(connection, table_name, schema)
        if table is None:
            return {"constrained_columns": [], "name": None}
        return refl.pk_constraint(table)

    @reflection.cache
    def get_foreign_keys(  # type: ignore[override]
        self,
        connection: Any,
        table_name: str,
        schema: str | None = None,
        **kw: Any,
    ) -> Any:
        table = self._only_table(connection, table_name, schema)
        if table is None:
            return []
        conn = refl.sync_connection(connection.connection.dbapi_connection)
        return refl.by_name(refl.foreign_keys(conn, conn.catalog, table))

    @reflection.cache
    def get_indexes(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> Any:
        table = self._only_table(connection, table_name, schema)
        return [] if table is None else refl.by_name(refl.indexes(table))

    @reflection.cache
    def get_unique_constraints(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> Any:
        table = self._only_table(connection, table_name, schema)
        if table is None:
            return []
        conn = refl.sync_connection(connection.connection.dbapi_connection)
        return refl.by_name(refl.unique_constraints(conn, table))

    @reflection.cache
    def get_check_constraints(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> Any:
        table = self._only_table(connection, table_name, schema)
        return [] if table is None else refl.check_constraints(table)

    @reflection.cache
    def get_table_comment(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> Any:
        self._table(connection, table_name, schema)
        return {"text": None}

    def get_table_options(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> dict[str, Any]:
        raise NotImplementedError("table options (WITH, TABLESPACE) are not reflected")

    def get_table_oid(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> int:
        raise NotImplementedError("tables of an encrypted database are reflected by name")


# SQLAlchemy's PostgreSQL dialect reflects many tables at once with pg_catalog joins; here
# each table comes from the in-memory catalog, one at a time (the default dialect's way).
for _kind in (
    "columns",
    "pk_constraint",
    "foreign_keys",
    "indexes",
    "unique_constraints",
    "check_constraints",
    "table_comment",
    "table_options",
):
    setattr(
        AdaptiveDialect, f"get_multi_{_kind}", getattr(default.DefaultDialect, f"get_multi_{_kind}")
    )

dialect = AdaptiveDialect
