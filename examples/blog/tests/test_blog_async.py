"""The blog's service on asyncio."""

from __future__ import annotations

import asyncio
import datetime as dt

from blog import aservice
from blog.models import Base
from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine


def test_async_service(url: str) -> None:
    async def main() -> None:
        engine = create_async_engine(url)
        async with engine.begin() as conn:
            await conn.run_sync(Base.metadata.create_all)
        sessions = async_sessionmaker(engine, expire_on_commit=False)
        async with sessions.begin() as s:
            ann = await aservice.add_user(s, "ann", "ann@example.org", dt.date(2024, 1, 2))
            bob = await aservice.add_user(s, "bob", "bob@example.org", dt.date(2024, 2, 3))
            first = await aservice.add_post(
                s, ann, "first", "one", ["a", "b"], dt.datetime(2024, 3, 1)
            )
            for i in range(6):
                await aservice.add_post(
                    s, bob, f"bob {i}", "text", ["b"], dt.datetime(2024, 3, 2 + i)
                )
        async with sessions.begin() as s:
            assert await aservice.vote(s, first, 4) == 4

        # many concurrent sessions, as an ASGI server's requests
        async def page(n: int) -> list[str]:
            async with sessions() as s:
                return [p["title"] for p in await aservice.page_of_posts(s, n, per_page=3)]

        pages = await asyncio.gather(*(page(n) for n in (1, 2, 3, 1, 2, 3)))
        assert pages[:3] == [["bob 5", "bob 4", "bob 3"], ["bob 2", "bob 1", "bob 0"], ["first"]]
        assert pages[3:] == pages[:3]
        async with sessions() as s:
            assert await aservice.user_stats(s) == [("ann", 1, 4), ("bob", 6, 0)]
            assert await aservice.stream_titles(s) == ["first"] + [f"bob {i}" for i in range(6)]
        await engine.dispose()

    asyncio.run(main())
