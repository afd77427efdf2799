"""The blog as a Flask app: JSON in, JSON out.

BLOG_DATABASE_URL=postgresql+psycopg://app@db/blog flask --app blog.app run
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

import sqlalchemy as sa
from flask import Flask, abort, jsonify, request
from sqlalchemy import orm

from . import service
from .models import Base

DEFAULT_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/blog"


def create_app(url: str | None = None) -> Flask:
    app = Flask(__name__)
    engine = sa.create_engine(url or os.environ.get("BLOG_DATABASE_URL", DEFAULT_URL))
    Base.metadata.create_all(engine)
    sessions = orm.sessionmaker(engine)
    app.extensions["blog.engine"] = engine

    def body() -> dict[str, Any]:
        data = request.get_json(silent=True)
        if not isinstance(data, dict):
            abort(400)
        return data

    @app.post("/users")
    def add_user() -> Any:
        data = body()
        with sessions.begin() as s:
            user = service.add_user(
                s, data["name"], data["email"], dt.date.fromisoformat(data["joined"])
            )
            return jsonify({"id": user.id}), 201

    @app.delete("/users/<int:user_id>")
    def delete_user(user_id: int) -> Any:
        with sessions.begin() as s:
            service.delete_user(s, user_id)
        return "", 204

    @app.post("/posts")
    def add_post() -> Any:
        data = body()
        with sessions.begin() as s:
            post = service.add_post(
                s,
                data["author_id"],
                data["title"],
                data["body"],
                data.get("tags", []),
                dt.datetime.fromisoformat(data["published"]),
            )
            return jsonify({"id": post.id}), 201

    @app.get("/posts")
    def posts() -> Any:
        page = int(request.args.get("page", 1))
        with sessions() as s:
            return jsonify(service.page_of_posts(s, page))

    @app.get("/posts/search")
    def search() -> Any:
        with sessions() as s:
            return jsonify(service.search_titles(s, request.args["q"]))

    @app.get("/tags/<label>")
    def tagged(label: str) -> Any:
        with sessions() as s:
            return jsonify(service.posts_tagged(s, label))

    @app.post("/posts/<int:post_id>/vote")
    def vote(post_id: int) -> Any:
        with sessions.begin() as s:
            return jsonify({"score": service.vote(s, post_id, int(body().get("delta", 1)))})

    @app.put("/posts/<int:post_id>/tags")
    def retag(post_id: int) -> Any:
        with sessions.begin() as s:
            return jsonify(service.retag(s, post_id, body()["tags"]))

    @app.get("/stats")
    def stats() -> Any:
        with sessions() as s:
            return jsonify(service.user_stats(s))

    return app
