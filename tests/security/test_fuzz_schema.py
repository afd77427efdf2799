"""Differential fuzzing of the application-schema statements: serial keys, foreign keys
with cascades, defaults, CHECK and UNIQUE constraints, ON CONFLICT, RETURNING,
UPDATE ... FROM, DELETE ... USING, TRUNCATE and ALTER TABLE.  Each drawn case runs on
plain PostgreSQL and through the client inside a savepoint rolled back afterwards; rows,
error classes and every table's contents must be equal.  No raw server error may come
through where the plain database succeeds."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import psycopg
import pytest
from client.test_differential import _rows
from hypothesis import given, settings
from hypothesis import strategies as st

import adaptive_client
from adaptive_client.catalog.keys import MasterKey

SCHEMA = """
CREATE TABLE parent (
    id serial PRIMARY KEY,
    name varchar(12) NOT NULL UNIQUE,
    n integer NOT NULL DEFAULT 0 CHECK (n >= 0),
    made date NOT NULL DEFAULT CURRENT_DATE
);
CREATE TABLE child (
    id bigserial PRIMARY KEY,
    parent_id integer REFERENCES parent (id) ON DELETE CASCADE,
    other_id integer REFERENCES parent (id) ON DELETE SET NULL,
    v numeric(6,2),
    t text
);
"""
TABLES = ("parent", "child")
OUTCOMES: Counter[str] = Counter()


@pytest.fixture(scope="module")
def pair(new_database: Callable[..., str]) -> Iterator[tuple[Any, Any]]:
    # (no prepared statements on the plain side: a rolled-back ALTER TABLE would change
    # the result type of a statement prepared before it)
    plain = psycopg.connect(new_database("fuzzsplain"), autocommit=True, prepare_threshold=None)
    enc = adaptive_client.connect(
        new_database("fuzzsenc"), master_key=MasterKey.generate(), autocommit=True
    )
    for c in (plain, enc):
        c.execute(SCHEMA)
        c.cursor().executemany(
            "INSERT INTO parent (name, n) VALUES (%s, %s)", [(f"p{i}", i % 5) for i in range(12)]
        )
        c.cursor().executemany(
            "INSERT INTO child (parent_id, other_id, v, t) VALUES (%s, %s, %s, %s)",
            [
                (1 + i % 12, None if i % 4 == 0 else 1 + (i * 7) % 12, Decimal(i) / 4, f"t {i}")
                for i in range(30)
            ],
        )
    plain.autocommit = enc.autocommit = False
    yield plain, enc
    print(f"schema fuzz: {dict(OUTCOMES)}")
    plain.close()
    enc.close()


@st.composite
def cases(draw: Any) -> list[tuple[str, tuple[Any, ...]]]:
    pid = st.integers(0, 15)  # ids 13..15 do not exist: foreign key violations
    name = st.sampled_from([f"p{i}" for i in range(14)] + ["new", "other"])
    n = st.integers(-2, 9)  # negative: a CHECK violation
    ret = draw(st.sampled_from(["", " RETURNING *", " RETURNING id"]))
    kind = draw(
        st.sampled_from(
            [
                "insert-parent",
                "insert-parent-n",
                "insert-child",
                "upsert",
                "upsert-nothing",
                "delete-parent",
                "delete-parent-range",
                "update-child-fk",
                "update-parent-n",
                "update-from",
                "delete-using",
                "truncate",
                "alter-add",
                "alter-rename",
                "alter-drop",
            ]
        )
    )
    if kind == "insert-parent":
        return [(f"INSERT INTO parent (name) VALUES (%s){ret}", (draw(name),))]
    if kind == "insert-parent-n":
        return [(f"INSERT INTO parent (name, n) VALUES (%s, %s){ret}", (draw(name), draw(n)))]
    if kind == "insert-child":
        rows = draw(st.lists(st.tuples(pid, st.one_of(st.none(), pid)), min_size=1, max_size=3))
        values = ", ".join(["(%s, %s, 1.5, 'x')"] * len(rows))
        flat = tuple(x for r in rows for x in r)
        return [(f"INSERT INTO child (parent_id, other_id, v, t) VALUES {values}{ret}", flat)]
    if kind == "upsert":
        return [
            (
                "INSERT INTO parent (name, n) VALUES (%s, %s) ON CONFLICT (name) "
                f"DO UPDATE SET n = EXCLUDED.n{ret}",
                (draw(name), draw(n)),
            )
        ]
    if kind == "upsert-nothing":
        return [
            (f"INSERT INTO parent (name) VALUES (%s) ON CONFLICT DO NOTHING{ret}", (draw(name),))
        ]
    if kind == "delete-parent":
        return [
            (f"DELETE FROM parent WHERE id = %s{ret}", (draw(pid),)),
            ("SELECT count(*), count(other_id), sum(v) FROM child", ()),
        ]
    if kind == "delete-parent-range":
        return [(f"DELETE FROM parent WHERE n > %s{ret}", (draw(n),))]
    if kind == "update-child-fk":
        return [(f"UPDATE child SET other_id = %s WHERE id = %s{ret}", (draw(pid), draw(pid)))]
    if kind == "update-parent-n":
        return [(f"UPDATE parent SET n = n - %s WHERE name = %s{ret}", (draw(n), draw(name)))]
    if kind == "update-from":
        return [
            (
                "UPDATE child SET t = 'of ' || %s FROM parent "
                "WHERE parent.id = child.parent_id AND parent.n = %s",
                (draw(name), draw(n)),
            )
        ]
    if kind == "delete-using":
        return [
            (
                "DELETE FROM child USING parent WHERE parent.id = child.other_id AND parent.n < %s",
                (draw(n),),
            )
        ]
    if kind == "truncate":
        table = draw(st.sampled_from(["child", "parent", "parent CASCADE"]))
        return [(f"TRUNCATE {table}", ())]
    if kind == "alter-add":
        return [
            ("ALTER TABLE child ADD COLUMN w integer NOT NULL DEFAULT 5", ()),
            ("SELECT w, count(*) FROM child GROUP BY w", ()),
        ]
    if kind == "alter-rename":
        return [
            ("ALTER TABLE parent RENAME COLUMN n TO m", ()),
            ("SELECT name FROM parent WHERE m > %s ORDER BY name", (draw(n),)),
        ]
    return [("ALTER TABLE child DROP COLUMN t", ()), ("SELECT * FROM child WHERE v > 2", ())]


def _run(conn: Any, sql: str, params: tuple[Any, ...]) -> tuple[Any, BaseException | None]:
    try:
        cur = conn.execute(sql, params or None)
        return (_rows(cur.fetchall(), False) if cur.description else cur.rowcount), None
    except (psycopg.Error, adaptive_client.AdaptiveError) as exc:
        return None, exc


def _contents(conn: Any) -> list[Any]:
    return [_rows(conn.execute(f"SELECT * FROM {t}").fetchall(), False) for t in TABLES]


@settings(max_examples=int(os.environ.get("ADAPTIVE_FUZZ_SHORT", "150")), database=None)
@given(statements=cases())
def test_schema_statements_match_plain(pair: tuple[Any, Any], statements: Any) -> None:
    plain, enc = pair
    for c in (plain, enc):
        c.execute("SAVEPOINT fuzz")
        # both sequences from the same number: a case's drawn keys are comparable
        c.execute("SELECT setval('parent_id_seq', 500), setval('child_id_seq', 900)")
    try:
        for sql, params in statements:
            expected, plain_error = _run(plain, sql, params)
            got, enc_error = _run(enc, sql, params)
            if plain_error is not None:
                assert enc_error is not None, (sql, params, plain_error)
                assert isinstance(enc_error, type(plain_error)), (
                    sql,
                    params,
                    plain_error,
                    enc_error,
                )
                OUTCOMES["error for both"] += 1
                return
            assert enc_error is None, (sql, params, enc_error)
            assert got == expected, (sql, params)
            assert _contents(enc) == _contents(plain), (sql, params)
            OUTCOMES["equal"] += 1
    finally:
        for c in (plain, enc):
            c.execute("ROLLBACK TO SAVEPOINT fuzz")
            c.execute("RELEASE SAVEPOINT fuzz")
