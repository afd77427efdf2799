"""psycopg_pool pools of adaptive connections.

    from adaptive_client.dbapi.pool import ConnectionPool
    with ConnectionPool("dbname=app", master_key=KEY, max_size=5) as pool:
        with pool.connection() as conn:
            conn.execute("SELECT ...")

:func:`ConnectionPool` and :func:`AsyncConnectionPool` build psycopg_pool's own pools
with the connection classes below and the client's options (``master_key``, ``config``,
``peel``) passed to each new connection; any other keyword goes to the pool
(``min_size``, ``max_size``, ``timeout``, ``max_lifetime``...).  The classes can also be
given to psycopg_pool directly::

    psycopg_pool.ConnectionPool(dsn, connection_class=PoolConnection,
                                kwargs={"master_key": KEY})

Each pooled connection keeps its catalog fresh as any adaptive connection does: before
each statement outside a transaction it reads the notifications of other clients' peels
and DDL; and when it comes back to the pool, those that arrived meanwhile are read (the
pool's ``reset``), so a connection waiting in the pool does not hand an old catalog to
the next borrower's first transaction.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import psycopg

from ..catalog.config import Config
from ..catalog.keys import MasterKey
from ..compile.plan import Params
from .aio import AsyncConnection
from .connection import Connection, Cursor, connect
from .cursor import Query


class PoolConnection(Connection):
    """An adaptive :class:`~adaptive_client.dbapi.connection.Connection` with what psycopg_pool
    asks of its ``connection_class``."""

    _pool: Any = None
    _created_at: float = 0.0
    _expire_at: float = 0.0

    @classmethod
    def connect(cls, conninfo: str = "", **kwargs: Any) -> PoolConnection:
        conn = connect(conninfo, **kwargs)
        conn.__class__ = cls  # same state; the pool's attributes come with the class
        assert isinstance(conn, PoolConnection)
        return conn

    @property
    def pgconn(self) -> psycopg.pq.abc.PGconn:
        return self.pg.pgconn

    @property
    def info(self) -> psycopg.ConnectionInfo:
        return self.pg.info

    @property
    def broken(self) -> bool:
        return bool(self.pg.broken or self.control.broken)

    def execute(
        self,
        query: Query,
        params: Params | None = None,
        *,
        prepare: bool | None = None,
        binary: bool = False,
    ) -> Cursor:
        if isinstance(query, str) and not query.strip():  # the pool's liveness check
            ping(self)
            return self.cursor()
        return super().execute(query, params)

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if self.pg.closed:
            return
        if exc_type is None:
            self.commit()
        else:
            self.rollback()
        if self._pool is None:  # a pooled connection goes back to its pool instead
            self.close()


class AsyncPoolConnection(AsyncConnection):
    """An :class:`~adaptive_client.dbapi.aio.AsyncConnection` for psycopg_pool's async pool."""

    _created_at: float = 0.0
    _expire_at: float = 0.0

    @classmethod
    async def connect(cls, conninfo: str = "", **kwargs: Any) -> AsyncPoolConnection:
        conn = await super().connect(conninfo, **kwargs)
        assert isinstance(conn, AsyncPoolConnection)
        return conn

    async def execute(
        self,
        query: Query,
        params: Params | None = None,
        *,
        prepare: bool | None = None,
        binary: bool = False,
    ) -> Any:
        if isinstance(query, str) and not query.strip():  # the pool's liveness check
            await self.run_in_worker(ping, self.sync_connection)
            return self.cursor()
        return await super().execute(query, params)


def ping(conn: Connection) -> None:
    """Check both of the connection's sessions with an empty statement; the main one,
    when idle, in autocommit, so that the ping opens no transaction."""
    conn.control.execute("")
    pg = conn.pg
    if pg.info.transaction_status != psycopg.pq.TransactionStatus.IDLE or pg.autocommit:
        pg.execute("")
        return
    pg.autocommit = True
    try:
        pg.execute("")
    finally:
        pg.autocommit = False


def _refresh(conn: Connection) -> None:
    """Read the catalog notifications that arrived while the connection was lent out."""
    conn.refresh_catalog()


async def _refresh_async(conn: AsyncConnection) -> None:
    await conn.run_in_worker(_refresh, conn.sync_connection)


def _client_kwargs(
    master_key: Any, config: Any, peel: str | None, kwargs: Mapping[str, Any] | None
) -> dict[str, Any]:
    out = dict(kwargs or {})
    if master_key is not None:
        out["master_key"] = master_key
    if config is not None:
        out["config"] = config
    if peel is not None:
        out["peel"] = peel
    return out


def ConnectionPool(
    conninfo: str = "",
    *,
    master_key: MasterKey | bytes | str | os.PathLike[str] | None = None,
    config: str | os.PathLike[str] | Mapping[str, Any] | Config | None = None,
    peel: str | None = None,
    kwargs: Mapping[str, Any] | None = None,
    **pool_kwargs: Any,
) -> Any:
    """A ``psycopg_pool.ConnectionPool`` of :class:`PoolConnection`."""
    import psycopg_pool

    pool_kwargs.setdefault("reset", _refresh)
    return psycopg_pool.ConnectionPool(
        conninfo,
        connection_class=PoolConnection,
        kwargs=_client_kwargs(master_key, config, peel, kwargs),
        **pool_kwargs,
    )


def AsyncConnectionPool(
    conninfo: str = "",
    *,
    master_key: MasterKey | bytes | str | os.PathLike[str] | None = None,
    config: str | os.PathLike[str] | Mapping[str, Any] | Config | None = None,
    peel: str | None = None,
    kwargs: Mapping[str, Any] | None = None,
    **pool_kwargs: Any,
) -> Any:
    """A ``psycopg_pool.AsyncConnectionPool`` of :class:`AsyncPoolConnection` (open it
    with ``await pool.open()`` or ``async with``, as psycopg_pool asks)."""
    import psycopg_pool

    pool_kwargs.setdefault("reset", _refresh_async)
    pool_kwargs.setdefault("open", False)
    return psycopg_pool.AsyncConnectionPool(
        conninfo,
        connection_class=AsyncPoolConnection,
        kwargs=_client_kwargs(master_key, config, peel, kwargs),
        **pool_kwargs,
    )


__all__ = ["AsyncConnectionPool", "AsyncPoolConnection", "ConnectionPool", "PoolConnection"]
