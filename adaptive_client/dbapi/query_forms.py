"""The forms of a statement psycopg's ``execute()`` takes: a string, bytes, or a
``psycopg.sql`` composition -- the client runs each as the text it stands for."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql

# what execute() takes as a statement, as psycopg does
Query = str | bytes | sql.Composable


def query_text(query: Query, session: psycopg.Connection[Any]) -> str:
    """``query`` as text: a composition quoted for the application's ``session`` (its
    literals adapted as that session adapts them), bytes decoded in its encoding."""
    if isinstance(query, str):
        return query
    if isinstance(query, sql.Composable):
        return query.as_string(session)
    if isinstance(query, bytes | bytearray | memoryview):
        return bytes(query).decode(session.info.encoding)
    raise TypeError(
        f"query must be a string or a psycopg.sql.Composable, not {type(query).__name__}"
    )


__all__ = ["Query", "query_text"]
