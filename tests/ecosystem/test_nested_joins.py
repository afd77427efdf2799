"""Parenthesized joins (``a LEFT JOIN (b JOIN c ON ...) ON ...``, what SQLAlchemy's
``joinedload`` of a many-to-many relationship writes) through the client, against the
same statements on plain PostgreSQL: the rows, their order where ordered, NULL
extension, and a filter on the nullable side that must not be applied before the join."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.keys import MasterKey

from .capabilities import parenthesized_joins_parse

SCHEMA = [
    "CREATE TABLE posts (id integer PRIMARY KEY, title varchar(20), score integer)",
    "CREATE TABLE tags (id integer PRIMARY KEY, label varchar(20))",
    "CREATE TABLE post_tags (post_id integer NOT NULL REFERENCES posts (id), "
    "tag_id integer NOT NULL REFERENCES tags (id), PRIMARY KEY (post_id, tag_id))",
    "CREATE TABLE notes (id integer PRIMARY KEY, tag_id integer, body varchar(20))",
]
DATA = [
    "INSERT INTO posts VALUES (1, 'p1', 5), (2, 'p2', 3), (3, 'p3', 5), (4, 'p4', NULL), (5, 'p5', 1)",
    "INSERT INTO tags VALUES (1, 'db'), (2, 'crypto'), (3, 'news'), (4, NULL)",
    "INSERT INTO post_tags VALUES (2, 1), (3, 1), (3, 2), (4, 4), (1, 3)",
    "INSERT INTO notes VALUES (1, 1, 'n1'), (2, 1, 'n2'), (3, 3, 'n3')",
]
_NESTED = "(post_tags AS pt JOIN tags AS t ON t.id = pt.tag_id)"
QUERIES = [
    # SQLAlchemy's joinedload of a many-to-many
    f"SELECT p.id, p.title, t.id AS id_1, t.label FROM posts AS p LEFT OUTER JOIN {_NESTED} "
    "ON p.id = pt.post_id ORDER BY p.id, t.label",
    # a filter on the nullable side: applied after the outer join, not before
    f"SELECT p.id FROM posts AS p LEFT JOIN {_NESTED} ON p.id = pt.post_id "
    "WHERE t.label IS NULL ORDER BY p.id",
    f"SELECT p.id, t.label FROM posts AS p LEFT JOIN {_NESTED} "
    "ON p.id = pt.post_id AND t.label <> 'db' ORDER BY p.id, t.label",
    # the parenthesized join first in FROM, then joined
    f"SELECT p.title, t.label FROM {_NESTED} JOIN posts AS p ON p.id = pt.post_id "
    "ORDER BY p.title, t.label",
    # nested twice, and read by an aggregate
    "SELECT p.id, count(n.id) FROM posts AS p LEFT JOIN (post_tags AS pt JOIN "
    "(tags AS t LEFT JOIN notes AS n ON n.tag_id = t.id) ON t.id = pt.tag_id) "
    "ON p.id = pt.post_id GROUP BY p.id ORDER BY p.id",
    # no column of the parenthesized join read outside it
    f"SELECT count(*) FROM posts AS p LEFT JOIN {_NESTED} ON p.id = pt.post_id",
    # read by a correlated subquery, and a subquery's own table of the same alias
    f"SELECT p.id, t.label, (SELECT count(*) FROM notes AS n WHERE n.tag_id = t.id) "
    f"FROM posts AS p LEFT JOIN {_NESTED} ON p.id = pt.post_id ORDER BY p.id, t.label",
    f"SELECT p.id, t.label FROM posts AS p LEFT JOIN {_NESTED} ON p.id = pt.post_id "
    "WHERE EXISTS (SELECT 1 FROM tags AS t WHERE t.id = 1) ORDER BY p.id, t.label",
    # redundant parentheses; a derived table first inside the parentheses
    f"SELECT p.id, t.label FROM posts AS p LEFT JOIN ({_NESTED}) ON p.id = pt.post_id "
    "ORDER BY p.id, t.label",
    "SELECT p.id, s.n FROM posts AS p LEFT JOIN ((SELECT tag_id, count(*) AS n FROM notes "
    "GROUP BY tag_id) AS s JOIN post_tags AS pt ON pt.tag_id = s.tag_id) ON p.id = pt.post_id "
    "ORDER BY p.id, s.n",
    # a star over it, a right join, inside a correlated EXISTS
    f"SELECT * FROM posts AS p LEFT JOIN {_NESTED} ON p.id = pt.post_id ORDER BY 1, 7",
    f"SELECT t.label, count(p.id) FROM posts AS p RIGHT JOIN {_NESTED} ON p.id = pt.post_id "
    "GROUP BY t.label ORDER BY t.label",
    "SELECT title FROM posts WHERE EXISTS (SELECT 1 FROM tags AS t2 LEFT JOIN (post_tags AS "
    "pt JOIN posts AS p2 ON p2.id = pt.post_id) ON pt.tag_id = t2.id WHERE p2.id = posts.id) "
    "ORDER BY title",
    # posts with one of the tags
    f"SELECT DISTINCT p.title FROM posts AS p JOIN {_NESTED} ON p.id = pt.post_id "
    "WHERE t.label IN ('db', 'crypto') ORDER BY p.title",
]


@pytest.fixture(scope="module")
def databases(
    new_database: Callable[..., str],
) -> tuple[psycopg.Connection[Any], adaptive_client.Connection]:
    plain = psycopg.connect(new_database("nj_plain"), autocommit=True)
    enc = adaptive_client.connect(
        new_database("nj_enc"), master_key=MasterKey.generate(), autocommit=True
    )
    for statement in SCHEMA + DATA:
        plain.execute(statement)
        enc.execute(statement)
    return plain, enc


@pytest.mark.parametrize("query", QUERIES)
def test_parenthesized_join_equals_plain(
    databases: tuple[psycopg.Connection[Any], adaptive_client.Connection], query: str
) -> None:
    if not parenthesized_joins_parse():
        pytest.xfail("the strict-syntax check reads a parenthesized join as a derived table")
    plain, enc = databases
    expected = plain.execute(query).fetchall()
    assert enc.execute(query).fetchall() == expected
