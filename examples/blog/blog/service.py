"""What the blog does, over an ORM session (the Flask views and the tests call these)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import sqlalchemy as sa
from sqlalchemy import orm

from .models import Post, Tag, User


def add_user(s: orm.Session, name: str, email: str, joined: dt.date) -> User:
    user = User(name=name, email=email, joined=joined)
    s.add(user)
    s.flush()  # the generated id
    return user


def _tags(s: orm.Session, labels: list[str]) -> list[Tag]:
    found = {t.label: t for t in s.scalars(sa.select(Tag).where(Tag.label.in_(labels)))}
    return [found.get(label) or Tag(label=label) for label in dict.fromkeys(labels)]


def add_post(
    s: orm.Session, author_id: int, title: str, body: str, tags: list[str], published: dt.datetime
) -> Post:
    post = Post(author_id=author_id, title=title, body=body, published=published)
    post.tags = _tags(s, tags)
    s.add(post)
    s.flush()
    return post


def post_dict(p: Post) -> dict[str, Any]:
    return {
        "id": p.id,
        "title": p.title,
        "author": p.author.name,
        "score": p.score,
        "published": p.published.isoformat(),
        "tags": [t.label for t in p.tags],
    }


def page_of_posts(s: orm.Session, page: int, per_page: int = 5) -> list[dict[str, Any]]:
    """Newest first, with authors (joined) and tags (selectin) loaded eagerly."""
    q = (
        sa.select(Post)
        .options(orm.joinedload(Post.author), orm.selectinload(Post.tags))
        .order_by(Post.published.desc(), Post.id)
        .limit(per_page)
        .offset((page - 1) * per_page)
    )
    return [post_dict(p) for p in s.scalars(q)]


def posts_tagged(s: orm.Session, label: str) -> list[str]:
    q = sa.select(Post.title).join(Post.tags).where(Tag.label == label).order_by(Post.title)
    return list(s.scalars(q))


def search_titles(s: orm.Session, word: str) -> list[str]:
    """Posts whose title has ``word`` as a whole word."""
    q = sa.select(Post.title).where(Post.title.regexp_match(rf"\m{word}\M")).order_by(Post.id)
    return list(s.scalars(q))


def posts_between(s: orm.Session, start: dt.datetime, end: dt.datetime) -> list[int]:
    q = sa.select(Post.id).where(Post.published.between(start, end)).order_by(Post.id)
    return list(s.scalars(q))


def user_stats(s: orm.Session) -> list[dict[str, Any]]:
    """Per author: posts, total and best score, latest post."""
    q = (
        sa.select(
            User.name,
            sa.func.count(Post.id),
            sa.func.sum(Post.score),
            sa.func.max(Post.score),
            sa.func.max(Post.published),
        )
        .join(User.posts)
        .group_by(User.name)
        .order_by(sa.func.count(Post.id).desc(), User.name)
    )
    return [
        {"name": n, "posts": c, "total": int(t), "best": b, "latest": last.isoformat()}
        for n, c, t, b, last in s.execute(q)
    ]


def vote(s: orm.Session, post_id: int, delta: int) -> int:
    post = s.get_one(Post, post_id)
    post.score += delta
    s.flush()
    return post.score


def retag(s: orm.Session, post_id: int, labels: list[str]) -> list[str]:
    post = s.get_one(Post, post_id)
    post.tags = _tags(s, labels)
    s.flush()
    return [t.label for t in post.tags]


def delete_user(s: orm.Session, user_id: int) -> None:
    s.delete(s.get_one(User, user_id))
    s.flush()
