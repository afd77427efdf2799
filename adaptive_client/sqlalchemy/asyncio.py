"""``postgresql+adaptive_async://``: the dialect for SQLAlchemy's asyncio extension.

``create_async_engine("postgresql+adaptive_async://user@host/db?master_key_file=...")``
runs SQLAlchemy's synchronous core in a greenlet, as it does for psycopg's async
dialect; each DB-API call here awaits an :class:`adaptive_client.AsyncConnection`,
whose worker thread does the client's work (rewrite, crypto, round trips) off the event
loop.  Everything else -- compiled SQL, reflection from the sealed catalog -- is the
synchronous dialect's (:mod:`adaptive_client.sqlalchemy.base`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
from sqlalchemy import pool
from sqlalchemy.engine.interfaces import AdaptedConnection
from sqlalchemy.engine.url import URL
from sqlalchemy.util.concurrency import await_only

from ..dbapi.aio import AsyncConnection, AsyncCursor, AsyncNamedCursor
from .base import AdaptiveDBAPI, AdaptiveDialect

Row = tuple[Any, ...]


class AsyncAdaptCursor:
    """A DB-API cursor over an AsyncCursor: ``execute`` is awaited, its rows (already
    decrypted in the worker) are then read from memory."""

    server_side = False

    def __init__(self, cursor: AsyncCursor) -> None:
        self._cursor = cursor
        self._rows: deque[Row] = deque()

    @property
    def description(self) -> Any:
        return self._cursor.description

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount

    @property
    def arraysize(self) -> int:
        return self._cursor.arraysize

    @arraysize.setter
    def arraysize(self, value: int) -> None:
        self._cursor.arraysize = value

    @property
    def lastrowid(self) -> None:
        return None

    def execute(self, query: str, params: Any = None) -> Any:
        await_only(self._cursor.execute(query, params))
        if self._cursor.description is not None:
            self._rows = deque(await_only(self._cursor.fetchall()))
        return self

    def executemany(self, query: str, params_seq: Any) -> Any:
        return await_only(self._cursor.executemany(query, params_seq))

    def fetchone(self) -> Row | None:
        return self._rows.popleft() if self._rows else None

    def fetchmany(self, size: int | None = None) -> list[Row]:
        n = self._cursor.arraysize if size is None else size
        return [self._rows.popleft() for _ in range(min(n, len(self._rows)))]

    def fetchall(self) -> list[Row]:
        out = list(self._rows)
        self._rows.clear()
        return out

    def __iter__(self) -> Iterator[Row]:
        while self._rows:
            yield self._rows.popleft()

    def setinputsizes(self, *args: Any) -> None:
        pass

    def close(self) -> None:
        self._rows.clear()
        self._cursor.sync_cursor.close()

    async def _async_soft_close(self) -> None:
        return


class AsyncAdaptServerCursor(AsyncAdaptCursor):
    """A named cursor: each fetch awaits the worker (a batch fetched and decrypted)."""

    server_side = True
    _cursor: AsyncNamedCursor

    def execute(self, query: str, params: Any = None) -> Any:
        await_only(self._cursor.execute(query, params))
        return self

    def fetchone(self) -> Row | None:
        return await_only(self._cursor.fetchone())

    def fetchmany(self, size: int | None = None) -> list[Row]:
        return await_only(self._cursor.fetchmany(size or self._cursor.arraysize))

    def fetchall(self) -> list[Row]:
        return await_only(self._cursor.fetchall())

    def __iter__(self) -> Iterator[Row]:
        while rows := self.fetchmany(self._cursor.itersize):
            yield from rows

    def close(self) -> None:
        await_only(self._cursor.close())


class AsyncAdaptConnection(AdaptedConnection):
    """The DB-API connection SQLAlchemy's pool holds: an AsyncConnection, awaited."""

    await_ = staticmethod(await_only)
    _connection: Any  # an AsyncConnection

    def __init__(self, connection: AsyncConnection) -> None:
        self._connection = connection

    def cursor(self, name: str | None = None) -> AsyncAdaptCursor:
        if name:
            return AsyncAdaptServerCursor(self._connection.cursor(name))
        return AsyncAdaptCursor(self._connection.cursor())

    def commit(self) -> None:
        await_only(self._connection.commit())

    def rollback(self) -> None:
        await_only(self._connection.rollback())

    def close(self) -> None:
        await_only(self._connection.close())

    @property
    def closed(self) -> bool:
        return self._connection.closed

    @property
    def broken(self) -> bool:
        return self._connection.broken

    @property
    def autocommit(self) -> bool:
        return self._connection.autocommit

    @autocommit.setter
    def autocommit(self, value: bool) -> None:
        self.set_autocommit(value)

    def set_autocommit(self, value: bool) -> None:
        await_only(self._connection.set_autocommit(value))

    @property
    def isolation_level(self) -> Any:
        return self._connection.isolation_level

    def set_isolation_level(self, value: Any) -> None:
        await_only(self._connection.set_isolation_level(value))

    def set_read_only(self, value: bool | None) -> None:
        await_only(self._connection.set_read_only(value))

    def set_deferrable(self, value: bool | None) -> None:
        await_only(self._connection.set_deferrable(value))

    @property
    def info(self) -> psycopg.ConnectionInfo:
        return self._connection.info


class AdaptiveAsyncDBAPI(AdaptiveDBAPI):
    def connect(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.pop("context", None)
        kwargs.pop("async_fallback", None)
        key = kwargs.pop("master_key", None)
        key_file = kwargs.pop("master_key_file", None)
        if key is None and key_file is not None:
            key = Path(key_file)
        conn = await_only(
            AsyncConnection.connect(
                *args,
                master_key=key,
                config=kwargs.pop("config", None),
                peel=kwargs.pop("peel", None),
                **kwargs,
            )
        )
        return AsyncAdaptConnection(conn)


class AdaptiveAsyncDialect(AdaptiveDialect):
    """The asyncio flavour of :class:`~adaptive_client.sqlalchemy.base.AdaptiveDialect`."""

    driver = "adaptive_async"
    is_async = True
    supports_statement_cache = True

    @classmethod
    def import_dbapi(cls) -> Any:
        return AdaptiveAsyncDBAPI()

    @classmethod
    def get_pool_class(cls, url: URL) -> Any:
        return pool.AsyncAdaptedQueuePool

    def _do_isolation_level(self, connection: Any, autocommit: bool, isolation_level: Any) -> None:
        connection.set_autocommit(autocommit)
        connection.set_isolation_level(isolation_level)

    def _do_autocommit(self, connection: Any, value: bool) -> None:
        connection.set_autocommit(value)

    def set_readonly(self, connection: Any, value: bool) -> None:
        connection.set_read_only(value)

    def set_deferrable(self, connection: Any, value: bool) -> None:
        connection.set_deferrable(value)

    def get_isolation_level(self, dbapi_connection: Any) -> Any:
        conn: AsyncConnection = dbapi_connection._connection
        return await_only(conn.run_in_worker(super().get_isolation_level, conn.sync_connection))

    def do_ping(self, dbapi_connection: Any) -> bool:
        conn: AsyncConnection = dbapi_connection._connection
        return bool(await_only(conn.run_in_worker(super().do_ping, conn.sync_connection)))

    def get_driver_connection(self, connection: Any) -> Any:
        return connection._connection


dialect = AdaptiveAsyncDialect
