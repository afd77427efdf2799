"""The blog's service for asyncio applications (an ASGI app would call these): the
same queries as service.py, over SQLAlchemy's AsyncSession."""

from __future__ import annotations

import datetime as dt
from typing import Any

import sqlalchemy as sa
from sqlalchemy import orm
from sqlalchemy.ext.asyncio import AsyncSession

from .models import Post, Tag, User
from .service import post_dict


async def add_user(s: AsyncSession, name: str, email: str, joined: dt.date) -> int:
    user = User(name=name, email=email, joined=joined)
    s.add(user)
    await s.flush()
    return user.id


async def add_post(
    s: AsyncSession,
    author_id: int,
    title: str,
    body: str,
    tags: list[str],
    published: dt.datetime,
) -> int:
    found = {t.label: t for t in await s.scalars(sa.select(Tag).where(Tag.label.in_(tags)))}
    post = Post(author_id=author_id, title=title, body=body, published=published)
    post.tags = [found.get(label) or Tag(label=label) for label in dict.fromkeys(tags)]
    s.add(post)
    await s.flush()
    return post.id


async def page_of_posts(s: AsyncSession, page: int, per_page: int = 5) -> list[dict[str, Any]]:
    q = (
        sa.select(Post)
        .options(orm.joinedload(Post.author), orm.selectinload(Post.tags))
        .order_by(Post.published.desc(), Post.id)
        .limit(per_page)
        .offset((page - 1) * per_page)
    )
    return [post_dict(p) for p in await s.scalars(q)]


async def user_stats(s: AsyncSession) -> list[tuple[Any, ...]]:
    q = (
        sa.select(User.name, sa.func.count(Post.id), sa.func.sum(Post.score))
        .join(User.posts)
        .group_by(User.name)
        .order_by(User.name)
    )
    return [tuple(r) for r in await s.execute(q)]


async def vote(s: AsyncSession, post_id: int, delta: int) -> int:
    post = await s.get_one(Post, post_id)
    post.score += delta
    await s.flush()
    return post.score


async def stream_titles(s: AsyncSession) -> list[str]:
    """All titles, streamed from a server-side cursor a few rows at a time."""
    result = await s.stream_scalars(
        sa.select(Post.title).order_by(Post.id).execution_options(yield_per=3)
    )
    return [t async for t in result]
