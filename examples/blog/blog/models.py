"""The blog's ORM models: users write posts, posts carry tags."""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa
from sqlalchemy import orm


class Base(orm.DeclarativeBase):
    pass


post_tags = sa.Table(
    "post_tags",
    Base.metadata,
    sa.Column("post_id", sa.ForeignKey("posts.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("tag_id", sa.ForeignKey("tags.id", ondelete="CASCADE"), primary_key=True),
)


class User(Base):
    __tablename__ = "users"

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    name: orm.Mapped[str] = orm.mapped_column(sa.String(60))
    email: orm.Mapped[str] = orm.mapped_column(sa.String(120), unique=True)
    joined: orm.Mapped[dt.date]
    posts: orm.Mapped[list[Post]] = orm.relationship(
        back_populates="author", cascade="all, delete-orphan", order_by="Post.id"
    )


class Post(Base):
    __tablename__ = "posts"

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    author_id: orm.Mapped[int] = orm.mapped_column(
        sa.ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    title: orm.Mapped[str] = orm.mapped_column(sa.String(200))
    body: orm.Mapped[str] = orm.mapped_column(sa.Text)
    score: orm.Mapped[int] = orm.mapped_column(default=0)
    published: orm.Mapped[dt.datetime]
    author: orm.Mapped[User] = orm.relationship(back_populates="posts")
    tags: orm.Mapped[list[Tag]] = orm.relationship(
        secondary=post_tags, back_populates="posts", order_by="Tag.label"
    )


class Tag(Base):
    __tablename__ = "tags"

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    label: orm.Mapped[str] = orm.mapped_column(sa.String(40), unique=True)
    posts: orm.Mapped[list[Post]] = orm.relationship(
        secondary=post_tags, back_populates="tags", order_by="Post.id"
    )
