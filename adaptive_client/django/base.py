"""``ENGINE = "adaptive_client.django"``: Django's PostgreSQL backend over adaptive
connections.

Django's psycopg 3 backend binds parameters on the client (``ClientCursor``: values
inlined into the SQL text); here the statement and its parameters go to the client
separately, which encrypts each value for the onion it is compared in.  What the
PostgreSQL backend reads from the psycopg connection (server version, the session's
TimeZone, its adapters) is read from the plain session the client runs statements on
(``Connection.pg``).  A cursor hands out psycopg's values; timestamptz values are given
in Django's time zone (naive where ``USE_TZ`` is off), as Django's own loader does.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
from django.db.backends.base.base import NO_DB_ALIAS
from django.db.backends.postgresql import base as pg_base
from django.utils.asyncio import async_unsafe
from django.utils.functional import cached_property

from ..dbapi import connection as _connection
from .creation import DatabaseCreation
from .features import DatabaseFeatures
from .introspection import DatabaseIntrospection
from .operations import DatabaseOperations
from .schema import DatabaseSchemaEditor

#: OPTIONS entries the client takes (the rest are libpq's, passed on)
CLIENT_OPTIONS = ("master_key", "key_file", "config", "peel")

_TIMESTAMPTZ_OID = 1184
_INET_OID = 869
_CIDR_OID = 650


def _text(v: Any) -> str:
    """An inet or cidr value as PostgreSQL prints it."""
    return str(v)


class AdaptiveDatabase:
    """The DB-API module the backend calls ``Database``: psycopg's globals (exception
    classes, isolation levels, which Django wraps as it wraps psycopg's), with
    ``connect`` opening an adaptive connection."""

    def __init__(self) -> None:
        for name, value in psycopg.__dict__.items():
            if not name.startswith("__") or name == "__version__":
                self.__dict__[name] = value
        self.connect = connect
        # BinaryField wraps values in the DB-API's Binary: psycopg's marks a value for its
        # binary dumper; the client encodes (and encrypts) bytes itself
        self.Binary = bytes


def connect(**params: Any) -> _connection.Connection:
    """An adaptive connection from the backend's connection parameters."""
    key = params.pop("master_key", None)
    key_file = params.pop("key_file", None)
    if key is None and key_file is not None:
        key = Path(key_file)
    return _connection.connect(
        master_key=key, config=params.pop("config", None), peel=params.pop("peel", None), **params
    )


Database = AdaptiveDatabase()


class Cursor:
    """The client's cursor as Django's PostgreSQL backend sets psycopg's up: timestamptz
    values in the connection's time zone (``register_tzloader``), inet and cidr values
    as text (Django's adapters context loads them with ``TextLoader``), ``callproc``;
    everything else is the client cursor's."""

    def __init__(self, cursor: Any, timezone: datetime.tzinfo | None) -> None:
        self.cursor = cursor
        self.timezone = timezone

    def __getattr__(self, name: str) -> Any:
        return getattr(self.cursor, name)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        while (row := self.fetchone()) is not None:
            yield row

    def __enter__(self) -> Cursor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.cursor.close()

    def _zoned(self, v: Any) -> Any:
        if not isinstance(v, datetime.datetime) or v.tzinfo is None:
            return v
        if self.timezone is None:
            return v.replace(tzinfo=None)
        return v.astimezone(self.timezone)

    def _converters(self) -> list[tuple[int, Callable[[Any], Any]]]:
        desc = self.cursor.description
        if not desc:
            return []
        table = {_TIMESTAMPTZ_OID: self._zoned, _INET_OID: _text, _CIDR_OID: _text}
        return [(i, table[d[1]]) for i, d in enumerate(desc) if d[1] in table]

    @staticmethod
    def _row(row: tuple[Any, ...] | None, at: Sequence[tuple[int, Callable[[Any], Any]]]) -> Any:
        if row is None or not at:
            return row
        values = list(row)
        for i, convert in at:
            if values[i] is not None:
                values[i] = convert(values[i])
        return tuple(values)

    def fetchone(self) -> Any:
        return self._row(self.cursor.fetchone(), self._converters())

    def fetchmany(self, size: int | None = None) -> list[Any]:
        rows = self.cursor.fetchmany(size) if size is not None else self.cursor.fetchmany()
        at = self._converters()
        return [self._row(r, at) for r in rows] if at else rows

    def fetchall(self) -> list[Any]:
        rows = self.cursor.fetchall()
        at = self._converters()
        return [self._row(r, at) for r in rows] if at else rows

    def callproc(self, name: str, args: Sequence[Any] | None = None) -> Any:
        placeholders = ", ".join(["%s"] * len(args or ()))
        self.cursor.execute(
            f"SELECT * FROM {psycopg.sql.Identifier(name).as_string(None)}({placeholders})",
            list(args or ()),
        )
        return args


class DatabaseWrapper(pg_base.DatabaseWrapper):
    """Django's PostgreSQL backend, connecting through :func:`adaptive_client.connect`."""

    display_name = "PostgreSQL"
    Database = Database
    SchemaEditorClass = DatabaseSchemaEditor
    creation_class = DatabaseCreation
    features_class = DatabaseFeatures
    introspection_class = DatabaseIntrospection
    ops_class = DatabaseOperations

    @property
    def pool(self) -> None:
        # psycopg_pool pools psycopg connections; adaptive connections are opened one by
        # one (CONN_MAX_AGE keeps them)
        return None

    def get_connection_params(self) -> dict[str, Any]:
        params: dict[str, Any] = super().get_connection_params()
        # the client sends statements and parameters apart (server-side binding of
        # ciphertexts) and hands out psycopg's values itself
        params.pop("cursor_factory", None)
        params.pop("server_side_binding", None)
        return params

    def _configure_timezone(self, connection: Any) -> bool:
        current = connection.pg.info.parameter_status("TimeZone")
        name = self.timezone_name
        if name and current != name:
            with connection.cursor() as cursor:
                cursor.execute(self.ops.compose_sql("SET TIME ZONE %s", [name]))
            return True
        return False

    @async_unsafe
    def create_cursor(self, name: str | None = None) -> Cursor:
        if name:
            # a holdable cursor where it outlives the statement's implicit transaction
            raw = self.connection.cursor(name, withhold=self.connection.autocommit)
        else:
            raw = self.connection.cursor()
        return Cursor(raw, self.timezone)

    @cached_property
    def pg_version(self) -> int:
        with self.temporary_connection():
            return int(self.connection.pg.info.server_version)

    def plain_settings(self) -> dict[str, Any]:
        """This database's settings for Django's PostgreSQL backend (no client options):
        for what needs no client -- creating and dropping databases."""
        options = {
            k: v for k, v in self.settings_dict["OPTIONS"].items() if k not in CLIENT_OPTIONS
        }
        return {**self.settings_dict, "OPTIONS": options}

    @contextmanager
    def _nodb_cursor(self) -> Iterator[Any]:
        """A cursor on the maintenance database (CREATE / DROP DATABASE), through
        psycopg: it holds no encrypted data, and the client is not installed in it."""
        plain = pg_base.DatabaseWrapper({**self.plain_settings(), "NAME": None}, alias=NO_DB_ALIAS)
        try:
            with plain.cursor() as cursor:
                yield cursor
        finally:
            plain.close()

    def make_debug_cursor(self, cursor: Any) -> Any:
        return pg_base.CursorDebugWrapper(cursor, self)
