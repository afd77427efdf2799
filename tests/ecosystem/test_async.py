"""asyncio: adaptive_client.AsyncConnection against psycopg.AsyncConnection on a plain
database, the event loop kept free while the client works, and SQLAlchemy's asyncio
extension through postgresql+adaptive_async://."""

from __future__ import annotations

import asyncio
import gc
import itertools
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import psycopg
import pytest
import sqlalchemy as sa
from sqlalchemy import orm
from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine

import adaptive_client
from adaptive_client.catalog.keys import MasterKey

from .conftest import sa_url
from .test_orm import make_models


def run(coro: Coroutine[Any, Any, Any]) -> Any:
    return asyncio.run(coro)


DDL = "CREATE TABLE acct (id integer PRIMARY KEY, owner varchar(30), balance numeric(12,2), opened date)"


async def _work(conn: Any) -> list[Any]:
    """The same calls on psycopg's AsyncConnection and on the client's."""
    import datetime as dt
    from decimal import Decimal

    out: list[Any] = []
    await conn.execute(DDL)
    cur = conn.cursor()
    await cur.executemany(
        "INSERT INTO acct VALUES (%s, %s, %s, %s)",
        [
            (
                i,
                f"owner {i % 13}",
                Decimal(i * 317 % 10000) / 100,
                dt.date(2020, 1, 1) + dt.timedelta(days=i),
            )
            for i in range(500)
        ],
    )
    await conn.commit()
    cur = await conn.execute(
        "SELECT id, balance FROM acct WHERE owner = %s ORDER BY balance DESC, id", ("owner 7",)
    )
    out.append(await cur.fetchmany(5))
    out.append(await cur.fetchall())
    out.append(cur.description is not None and [d[0] for d in cur.description])
    cur = await conn.execute(
        "SELECT owner, count(*), sum(balance) FROM acct WHERE opened >= %s GROUP BY owner ORDER BY owner",
        (dt.date(2020, 6, 1),),
    )
    out.append([r async for r in cur])
    # a transaction block rolled back by an exception, then one committed
    with pytest.raises(ZeroDivisionError):
        async with conn.transaction():
            await conn.execute("UPDATE acct SET owner = 'nobody' WHERE id < 100")
            raise ZeroDivisionError
    async with conn.transaction():
        await conn.execute("DELETE FROM acct WHERE id >= 400")
    cur = await conn.execute("SELECT count(*), min(owner), max(id) FROM acct")
    out.append(await cur.fetchone())
    # errors keep their class; the connection goes on after a rollback
    with pytest.raises(psycopg.errors.UniqueViolation):
        await conn.execute("INSERT INTO acct (id, owner) VALUES (1, 'dup')")
    await conn.rollback()
    # a server-side cursor, fetched in batches
    async with conn.cursor("big") as named:
        await named.execute("SELECT id, owner FROM acct WHERE id < 300")
        rows = []
        while batch := await named.fetchmany(64):
            rows += batch
        out.append(sorted(rows))
    await conn.commit()
    return out


def test_async_connection_equals_psycopg(dsn_pair: tuple[str, str], master_key: MasterKey) -> None:
    async def main() -> None:
        plain = await psycopg.AsyncConnection.connect(dsn_pair[0])
        enc = await adaptive_client.AsyncConnection.connect(dsn_pair[1], master_key=master_key)
        async with plain, enc:
            a, b = await _work(plain), await _work(enc)
        assert a == b
        assert enc.closed and plain.closed
        assert len(a[-1]) == 300

    run(main())


ROWS = 20_000  # (enough work to span many tick periods on a fast machine)


def test_event_loop_stays_free(dsn_pair: tuple[str, str], master_key: MasterKey) -> None:
    """While the client encrypts a batch and decrypts a large result, other tasks run."""

    async def main() -> None:
        enc = await adaptive_client.AsyncConnection.connect(
            dsn_pair[1], master_key=master_key, autocommit=True
        )
        async with enc:
            await enc.execute(
                "CREATE TABLE big (id integer PRIMARY KEY, a integer, b varchar(40), c numeric(10,2))"
            )
            ticks: list[float] = []
            stop = asyncio.Event()

            async def ticker() -> None:
                while not stop.is_set():
                    ticks.append(time.perf_counter())
                    await asyncio.sleep(0.005)

            task = asyncio.create_task(ticker())
            await asyncio.sleep(0.02)
            # (a full collection of the test process's heap stops every thread for a
            # few hundred ms inside a long run of the suite: not the client's doing)
            gc.collect()
            gc.disable()
            try:
                t0 = time.perf_counter()
                cur = enc.cursor()
                await cur.executemany(
                    "INSERT INTO big VALUES (%s, %s, %s, %s)",
                    [(i, i * 7, f"row {i}", i / 4) for i in range(ROWS)],
                )
                cur = await enc.execute("SELECT id, a, b, c FROM big")
                rows = await cur.fetchall()
                elapsed = time.perf_counter() - t0
            finally:
                gc.enable()
            stop.set()
            await task
        assert len(rows) == ROWS
        during = [t for t in ticks if t0 <= t <= t0 + elapsed]
        gaps = [b - a for a, b in itertools.pairwise(during)]
        # the work took many tick periods and the ticker kept running through it
        assert elapsed > 0.1
        assert len(during) >= elapsed / 0.05
        assert max(gaps) < max(0.25, elapsed / 4)
        print(
            f"{ROWS} rows written and read in {elapsed:.2f} s, longest tick gap {max(gaps):.3f} s"
        )

    run(main())


def _plain_async_engine(dsn: str) -> Any:
    return create_async_engine(sa_url(dsn, "psycopg"))


async def _orm_async(engine: Any, serial: bool) -> list[Any]:
    Base, User, Post, Tag, post_tags = make_models(False, serial)
    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)
    trace: list[Any] = []
    make = async_sessionmaker(engine, expire_on_commit=False)
    import datetime as dt

    async with make() as s, s.begin():
        tags = [Tag(id=i + 1, label=label) for i, label in enumerate(("a", "b", "c"))]
        s.add_all(tags)
        for u in range(4):
            user = User(
                id=u + 1, name=f"user {u}", email=f"u{u}@x", karma=u, joined=dt.date(2024, 1, u + 1)
            )
            user.posts = [
                Post(
                    id=10 * u + p,
                    title=f"t{u}.{p}",
                    score=p - u,
                    created=dt.datetime(2024, 2, 1, u, p),
                    tags=tags[: p + 1],
                )
                for p in range(3)
            ]
            s.add(user)
    async with make() as s:
        res = await s.scalars(
            sa.select(User)
            .options(orm.selectinload(User.posts).selectinload(Post.tags))
            .order_by(User.id)
        )
        trace.append(
            [(u.name, [(p.title, [t.label for t in p.tags]) for p in u.posts]) for u in res]
        )
        trace.append(
            (
                await s.execute(
                    sa.select(Post.title).order_by(Post.score.desc(), Post.id).limit(3).offset(2)
                )
            ).all()
        )
        trace.append(
            (
                await s.execute(
                    sa.select(User.name, sa.func.count(Post.id))
                    .join(User.posts)
                    .group_by(User.name)
                    .order_by(User.name)
                )
            ).all()
        )
        stream = await s.stream(
            sa.select(Post.id, Post.title).where(Post.score >= 0).execution_options(yield_per=2)
        )
        trace.append(sorted([tuple(r) async for r in stream]))
    async with make() as s, s.begin():
        await s.execute(sa.update(Post).where(Post.score < 0).values(score=0))
        await s.execute(sa.delete(post_tags).where(post_tags.c.tag_id == 3))
    async with make() as s:
        trace.append((await s.execute(sa.select(Post.id, Post.score).order_by(Post.id))).all())
        trace.append(await s.scalar(sa.select(sa.func.count()).select_from(post_tags)))
    await engine.dispose()
    return trace


def test_async_sqlalchemy_orm_equals_plain(dsn_pair: tuple[str, str], key_file: Path) -> None:
    async def main() -> None:
        plain = await _orm_async(_plain_async_engine(dsn_pair[0]), False)
        enc_engine = create_async_engine(
            sa_url(dsn_pair[1], "adaptive_async", master_key_file=str(key_file))
        )
        enc = await _orm_async(enc_engine, False)
        assert enc == plain
        assert len(plain[0]) == 4

    run(main())


def test_async_engine_reflects_plain_names(dsn_pair: tuple[str, str], key_file: Path) -> None:
    async def main() -> None:
        eng = create_async_engine(
            sa_url(dsn_pair[1], "adaptive_async", master_key_file=str(key_file))
        )
        async with eng.begin() as conn:
            await conn.execute(
                sa.text("CREATE TABLE note (id integer PRIMARY KEY, body text NOT NULL)")
            )
            names: Callable[[Any], Any] = lambda sc: sa.inspect(sc).get_table_names()  # noqa: E731
            assert await conn.run_sync(names) == ["note"]
            md = sa.MetaData()
            await conn.run_sync(md.reflect)
            note = md.tables["note"]
            await conn.execute(note.insert(), [{"id": 1, "body": "x"}, {"id": 2, "body": "y"}])
            got = (await conn.execute(sa.select(note.c.body).where(note.c.id == 2))).scalar_one()
            assert got == "y"
            assert await conn.run_sync(lambda sc: sc.get_isolation_level()) == "READ COMMITTED"
        await eng.dispose()

    run(main())


def test_cancelled_task_leaves_the_connection_usable(
    dsn_pair: tuple[str, str], master_key: MasterKey
) -> None:
    """Cancelling a task awaiting a statement: CancelledError once the worker is done
    with it, the transaction rolled back by the application, the connection usable."""

    async def main() -> None:
        conn = await adaptive_client.AsyncConnection.connect(dsn_pair[1], master_key=master_key)
        async with conn:
            await conn.execute("CREATE TABLE t (id integer PRIMARY KEY, a integer, b varchar(20))")
            await conn.commit()
            cur = conn.cursor()
            task = asyncio.create_task(
                cur.executemany(
                    "INSERT INTO t VALUES (%s, %s, %s)", [(i, i, f"b{i}") for i in range(20_000)]
                )
            )
            await asyncio.sleep(0.05)
            assert not task.done()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await conn.rollback()
            cur = await conn.execute("SELECT count(*) FROM t")
            assert await cur.fetchone() == (0,)

    run(main())
