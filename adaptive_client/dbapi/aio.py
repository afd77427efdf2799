"""asyncio: :class:`AsyncConnection`, in the style of ``psycopg.AsyncConnection``.

    conn = await adaptive_client.AsyncConnection.connect("dbname=app", master_key=KEY)
    async with conn:
        cur = await conn.execute("SELECT name FROM customer WHERE id = %s", (42,))
        row = await cur.fetchone()

An AsyncConnection drives one synchronous :class:`~adaptive_client.dbapi.connection.Connection`
-- the same parse, compiled-plan cache, rewrite, encryption and decryption, peels and
catalog refresh; there is no second copy of any of it -- from a worker thread of its own.
Each operation (a statement with its encryption, server round trips and decryption, a
commit, a fetch from a server-side cursor) runs there, one at a time in the order the
application awaits them, so the event loop is never blocked by the client's CPU work
(OPE, Paillier, AES over a large result) nor by I/O: it blocks for no longer than the
thread hand-off.  Cancelling an awaiting task cancels the statement on the server
(psycopg's ``cancel_safe``), waits for the worker to finish it, then raises
``CancelledError``, leaving the connection usable (in a failed transaction if one was
open, as with psycopg).

Rows of a client-side cursor are decrypted during ``execute`` (in the worker) and
fetched from memory; a named (server-side) cursor fetches and decrypts each batch in the
worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from types import TracebackType
from typing import Any, TypeVar

import psycopg
from psycopg.rows import RowFactory

from ..catalog.config import Config
from ..catalog.keys import MasterKey
from ..compile.plan import Params
from .connection import Connection, Cursor, NamedCursor, connect
from .query_forms import Query

T = TypeVar("T")

Row = tuple[Any, ...]


class AsyncConnection:
    """An adaptive connection for asyncio; open it with :meth:`connect`."""

    def __init__(self, sync: Connection, executor: ThreadPoolExecutor) -> None:
        self._sync = sync
        self._executor = executor
        self._pool: Any = None  # set by psycopg_pool while the connection is lent out

    @classmethod
    async def connect(
        cls,
        conninfo: str = "",
        *,
        master_key: MasterKey | bytes | str | os.PathLike[str] | None = None,
        config: str | os.PathLike[str] | Mapping[str, Any] | Config | None = None,
        peel: str | None = None,
        autocommit: bool = False,
        **kwargs: Any,
    ) -> AsyncConnection:
        """As :func:`adaptive_client.connect`, awaited (the key check and the catalog's
        decryption run in the connection's worker)."""
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="adaptive-aio")
        loop = asyncio.get_running_loop()
        try:
            sync = await loop.run_in_executor(
                executor,
                partial(
                    connect,
                    conninfo,
                    master_key=master_key,
                    config=config,
                    peel=peel,
                    autocommit=autocommit,
                    **kwargs,
                ),
            )
        except BaseException:
            executor.shutdown(wait=False)
            raise
        return cls(sync, executor)

    # -- the worker ----------------------------------------------------------------------------
    async def run_in_worker(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` in the connection's worker (where whatever touches the
        synchronous connection runs: the pool's checks, the SQLAlchemy dialect's); on
        cancellation, cancel the statement on the server and wait for the worker before
        re-raising."""
        if self._executor is None:
            raise psycopg.OperationalError("the connection is closed")
        fut = asyncio.get_running_loop().run_in_executor(self._executor, partial(fn, *args))
        try:
            return await asyncio.shield(fut)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self._sync.cancel)
            with contextlib.suppress(BaseException):
                await fut
            raise

    @property
    def sync_connection(self) -> Connection:
        """The synchronous connection underneath (for reflection and tests; calling it
        from the event loop while the worker runs is not safe)."""
        return self._sync

    # -- psycopg's AsyncConnection surface ---------------------------------------------------
    def cursor(
        self,
        name: str = "",
        *,
        withhold: bool = False,
        row_factory: RowFactory[Any] | None = None,
        binary: bool | None = None,
        scrollable: bool | None = None,
    ) -> AsyncCursor:
        """A client-side cursor, or with ``name`` a server-side one (streamed, each batch
        decrypted as it is fetched); its rows made by ``row_factory`` (as the
        synchronous connection's cursors)."""
        if name:
            named = NamedCursor(self._sync, name, withhold=withhold, row_factory=row_factory)
            return AsyncNamedCursor(self, named)
        return AsyncCursor(self, Cursor(self._sync, row_factory=row_factory))

    @property
    def row_factory(self) -> RowFactory[Any]:
        return self._sync.row_factory

    @row_factory.setter
    def row_factory(self, factory: RowFactory[Any]) -> None:
        self._sync.row_factory = factory

    async def execute(
        self,
        query: Query,
        params: Params | None = None,
        *,
        prepare: bool | None = None,
        binary: bool = False,
    ) -> AsyncCursor:
        cur = self.cursor()
        await cur.execute(query, params)
        return cur

    def cancel(self) -> None:
        """Cancel the statement the connection's worker is running (blocks briefly)."""
        self._sync.cancel()

    async def cancel_safe(self) -> None:
        """Cancel the statement the connection's worker is running, awaited."""
        await asyncio.to_thread(self._sync.cancel)

    async def commit(self) -> None:
        await self.run_in_worker(self._sync.commit)

    async def rollback(self) -> None:
        await self.run_in_worker(self._sync.rollback)

    async def close(self) -> None:
        if self._executor is None:
            return
        try:
            await self.run_in_worker(self._sync.close)
        finally:
            self._executor.shutdown(wait=False)
            self._executor = None  # type: ignore[assignment]

    @property
    def closed(self) -> bool:
        return self._sync.closed

    @property
    def broken(self) -> bool:
        return bool(self._sync.pg.broken or self._sync.control.broken)

    @property
    def autocommit(self) -> bool:
        return self._sync.autocommit

    async def set_autocommit(self, value: bool) -> None:
        await self.run_in_worker(setattr, self._sync, "autocommit", value)

    @property
    def isolation_level(self) -> psycopg.IsolationLevel | None:
        return self._sync.isolation_level

    async def set_isolation_level(self, value: psycopg.IsolationLevel | None) -> None:
        await self.run_in_worker(setattr, self._sync, "isolation_level", value)

    @property
    def read_only(self) -> bool | None:
        return self._sync.pg.read_only

    async def set_read_only(self, value: bool | None) -> None:
        await self.run_in_worker(setattr, self._sync.pg, "read_only", value)

    @property
    def deferrable(self) -> bool | None:
        return self._sync.pg.deferrable

    async def set_deferrable(self, value: bool | None) -> None:
        await self.run_in_worker(setattr, self._sync.pg, "deferrable", value)

    @property
    def info(self) -> psycopg.ConnectionInfo:
        return self._sync.pg.info

    @property
    def pgconn(self) -> psycopg.pq.abc.PGconn:
        return self._sync.pg.pgconn

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        """A transaction block (a savepoint inside one), as psycopg's: committed at the
        end of the block, rolled back if it raises."""
        tx = self._sync.transaction()
        await self.run_in_worker(tx.__enter__)
        try:
            yield None
        except BaseException as exc:
            await self.run_in_worker(_exit_transaction, self._sync, tx, exc)
            raise
        await self.run_in_worker(_exit_transaction, self._sync, tx, None)

    async def __aenter__(self) -> AsyncConnection:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.closed:
            return
        if exc_type is None:
            await self.commit()
        else:
            with contextlib.suppress(psycopg.Error):
                await self.rollback()
        if self._pool is None:  # a pooled connection goes back to its pool instead
            await self.close()


def _exit_transaction(sync: Connection, tx: Any, exc: BaseException | None) -> None:
    """Leave a transaction block; the client's state follows the outcome (the locked-row
    cache, a catalog changed by DDL in the block, peels left pending)."""
    if exc is None:
        tx.__exit__(None, None, None)
    else:
        tx.__exit__(type(exc), exc, exc.__traceback__)
    if not sync.in_transaction():
        if exc is None:
            sync.after_commit()
        else:
            sync.after_rollback()


class AsyncCursor:
    """psycopg's AsyncCursor surface over a client-side :class:`Cursor`."""

    def __init__(self, conn: AsyncConnection, cursor: Cursor) -> None:
        self.connection = conn
        self._cur = cursor

    @property
    def sync_cursor(self) -> Cursor:
        """The synchronous cursor underneath (its rows are in memory once ``execute``
        was awaited)."""
        return self._cur

    @property
    def description(self) -> Sequence[tuple[Any, ...]] | None:
        return self._cur.description

    @property
    def rowcount(self) -> int:
        return self._cur.rowcount

    @property
    def statusmessage(self) -> str | None:
        return self._cur.statusmessage

    @property
    def rownumber(self) -> int | None:
        return self._cur.rownumber

    @property
    def arraysize(self) -> int:
        return self._cur.arraysize

    @arraysize.setter
    def arraysize(self, value: int) -> None:
        self._cur.arraysize = value

    @property
    def closed(self) -> bool:
        return self._cur.closed

    async def execute(
        self,
        query: Query,
        params: Params | None = None,
        *,
        prepare: bool | None = None,
        binary: bool | None = None,
    ) -> AsyncCursor:
        await self.connection.run_in_worker(self._cur.execute, query, params)
        return self

    async def stream(self, query: Query, params: Params | None = None) -> AsyncIterator[Row]:
        """psycopg's ``stream()``: the statement's rows one at a time."""
        await self.execute(query, params)
        while (row := await self.fetchone()) is not None:
            yield row

    @property
    def row_factory(self) -> RowFactory[Any]:
        return self._cur.row_factory

    @row_factory.setter
    def row_factory(self, factory: RowFactory[Any]) -> None:
        self._cur.row_factory = factory

    async def executemany(
        self, query: Query, params_seq: Iterable[Params], *, returning: bool = False
    ) -> None:
        seq: Sequence[Params] = list(params_seq)
        await self.connection.run_in_worker(
            partial(self._cur.executemany, returning=returning), query, seq
        )

    async def fetchone(self) -> Row | None:
        return self._cur.fetchone()

    async def fetchmany(self, size: int | None = None) -> list[Row]:
        return self._cur.fetchmany(size)

    async def fetchall(self) -> list[Row]:
        return self._cur.fetchall()

    async def scroll(self, value: int, mode: str = "relative") -> None:
        self._cur.scroll(value, mode)

    def nextset(self) -> bool | None:
        return self._cur.nextset()

    async def __aiter__(self) -> AsyncIterator[Row]:
        while (row := await self.fetchone()) is not None:
            yield row

    async def close(self) -> None:
        self._cur.close()

    async def __aenter__(self) -> AsyncCursor:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()


class AsyncNamedCursor(AsyncCursor):
    """A server-side cursor: each fetch runs (and decrypts its batch) in the worker."""

    _cur: NamedCursor

    @property
    def name(self) -> str:
        return self._cur.name

    @property
    def itersize(self) -> int:
        return self._cur.itersize

    @itersize.setter
    def itersize(self, value: int) -> None:
        self._cur.itersize = value

    async def fetchone(self) -> Row | None:
        return await self.connection.run_in_worker(self._cur.fetchone)

    async def fetchmany(self, size: int | None = None) -> list[Row]:
        return await self.connection.run_in_worker(self._cur.fetchmany, size)

    async def fetchall(self) -> list[Row]:
        return await self.connection.run_in_worker(self._cur.fetchall)

    async def __aiter__(self) -> AsyncIterator[Row]:
        while rows := await self.fetchmany(self.itersize):
            for row in rows:
                yield row

    async def close(self) -> None:
        if not self.connection.closed:
            await self.connection.run_in_worker(self._cur.close)


__all__ = ["AsyncConnection", "AsyncCursor", "AsyncNamedCursor"]
