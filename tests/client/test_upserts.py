"""``INSERT ... ON CONFLICT DO UPDATE`` whose values are computed from the rows
(dbapi/upserts.py), judged against PostgreSQL: the counter upsert (``SET n = t.n + 1``),
``EXCLUDED`` in expressions, a DO UPDATE's WHERE, several rows, RETURNING and row counts,
the errors (21000 for one key proposed twice, 22003 for an overflow) with nothing of
the statement left behind, the transaction state after them, concurrent upserts of one
key that lose no increment, and REPEATABLE READ's 40001.  All were refused (0A000)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted

SCHEMA = [
    "CREATE TABLE hits (page text PRIMARY KEY, n integer NOT NULL DEFAULT 0, last text, "
    "score numeric(8,2))"
]
SCRIPT = [
    "INSERT INTO hits VALUES ('a', 1, 'x', 1.5) ON CONFLICT (page) DO UPDATE "
    "SET n = hits.n + 1 RETURNING page, n",
    "INSERT INTO hits VALUES ('a', 1, 'y', 2.5) ON CONFLICT (page) DO UPDATE "
    "SET n = hits.n + 1 RETURNING page, n",
    "INSERT INTO hits AS h VALUES ('a', 5, 'z', 1) ON CONFLICT (page) DO UPDATE "
    "SET n = h.n + EXCLUDED.n, last = EXCLUDED.last || h.last, score = h.score * 2 "
    "RETURNING *",
    "INSERT INTO hits (page, n) VALUES ('b', 1), ('a', 1), ('c', 2) ON CONFLICT (page) "
    "DO UPDATE SET n = hits.n + 10",
    "SELECT * FROM hits ORDER BY page",
    # one key proposed twice: 21000, and neither row stays
    "INSERT INTO hits (page, n) VALUES ('d', 1), ('d', 2) ON CONFLICT (page) "
    "DO UPDATE SET n = hits.n + 1",
    "INSERT INTO hits (page, n) VALUES ('a', 1) ON CONFLICT (page) DO UPDATE "
    "SET n = hits.n + 1 WHERE hits.n > 1000 RETURNING n",
    "INSERT INTO hits (page, n) VALUES ('a', 1) ON CONFLICT (page) DO UPDATE "
    "SET n = hits.n - EXCLUDED.n WHERE hits.last IS NOT NULL RETURNING n",
    "INSERT INTO hits (page, n) VALUES ('a', 1) ON CONFLICT ON CONSTRAINT hits_pkey "
    "DO UPDATE SET n = hits.n * 2 RETURNING n",
    "INSERT INTO hits (page, n) VALUES ('e', 2147483647) ON CONFLICT (page) "
    "DO UPDATE SET n = hits.n + 1",
    # an overflow in the update: 22003, the row as it was
    "INSERT INTO hits (page, n) VALUES ('f', 1), ('e', 1) ON CONFLICT (page) "
    "DO UPDATE SET n = hits.n + 1",
    "INSERT INTO hits (page, n) VALUES ('a', 1) ON CONFLICT (page) DO UPDATE SET n = NULL",
    "SELECT * FROM hits ORDER BY page",
]


def _outcome(conn: Any, sql: str, params: Any = None) -> tuple[Any, ...]:
    cur = conn.cursor()
    try:
        cur.execute(sql, params)
    except psycopg.Error as exc:
        return ("error", exc.sqlstate)
    rows = cur.fetchall() if cur.description is not None else None
    return ("ok", rows, cur.rowcount)


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "upserts", {}, SCHEMA, {}) as pair:
        yield pair


def test_upserts_computed_from_the_rows_as_in_postgresql(pair: Pair) -> None:
    plain, enc = pair
    for sql in SCRIPT:
        assert _outcome(enc, sql) == _outcome(plain, sql), sql


def test_parameters_and_transaction_state(pair: Pair) -> None:
    plain, enc = pair
    upsert = (
        "INSERT INTO hits (page, n) VALUES (%s, %s), (%s, %s) ON CONFLICT (page) "
        "DO UPDATE SET n = hits.n + EXCLUDED.n RETURNING n"
    )
    named = (
        "INSERT INTO hits (page, n) VALUES (%(p)s, %(n)s) ON CONFLICT (page) "
        "DO UPDATE SET n = hits.n + %(n)s RETURNING n"
    )
    for conn in pair:
        conn.autocommit = False
    try:
        for params in [("a", 1, "b", 2), ("a", 3, "c", 4), ("b", 5, "b", 6)]:
            assert _outcome(enc, upsert, params) == _outcome(plain, upsert, params)
            assert enc.pg.pgconn.transaction_status == plain.pgconn.transaction_status
            for conn in pair:
                conn.rollback() if params[0] == params[2] else conn.commit()
        for params in [{"p": "a", "n": 10}, {"p": "z", "n": 1}]:
            assert _outcome(enc, named, params) == _outcome(plain, named, params)
        for conn in pair:
            conn.commit()
        query = "SELECT page, n FROM hits ORDER BY page"
        assert enc.execute(query).fetchall() == plain.execute(query).fetchall()
    finally:
        for conn in pair:
            conn.rollback()
            conn.autocommit = True


def test_concurrent_upserts_of_one_key_lose_no_increment(
    new_database: Callable[..., str], master_key: MasterKey
) -> None:
    dsn = new_database("upsert_race")
    with adaptive_client.connect(dsn, master_key=master_key.hex(), autocommit=True) as conn:
        conn.execute(SCHEMA[0])
    threads, per_thread = 4, 25
    errors: list[BaseException] = []

    def work() -> None:
        try:
            with adaptive_client.connect(dsn, master_key=master_key.hex()) as conn:
                for _ in range(per_thread):
                    conn.execute(
                        "INSERT INTO hits (page, n) VALUES (%s, 1) ON CONFLICT (page) "
                        "DO UPDATE SET n = hits.n + 1",
                        ("k",),
                    )
                    conn.commit()
        except BaseException as exc:  # (reported by the main thread)
            errors.append(exc)

    workers = [threading.Thread(target=work, daemon=True) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(100)
    assert not any(w.is_alive() for w in workers)
    assert errors == []
    with adaptive_client.connect(dsn, master_key=master_key.hex()) as conn:
        row = conn.execute("SELECT n FROM hits WHERE page = %s", ("k",)).fetchone()
    assert row == (threads * per_thread,)


def test_repeatable_read_sees_a_later_row_as_postgresql_does(
    pair: Pair, master_key: MasterKey
) -> None:
    """A conflicting row committed after a REPEATABLE READ transaction's snapshot: 40001,
    as PostgreSQL's ON CONFLICT raises it."""
    plain, enc = pair
    upsert = (
        "INSERT INTO hits (page, n) VALUES ('r', 1) ON CONFLICT (page) DO UPDATE SET n = hits.n + 1"
    )
    for conn in pair:
        conn.autocommit = False
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        conn.execute("SELECT count(*) FROM hits").fetchall()  # (the snapshot taken)
    try:
        with psycopg.connect(plain.info.dsn, autocommit=True) as writer:
            writer.execute("INSERT INTO hits (page, n) VALUES ('r', 1)")
        with adaptive_client.connect(
            enc.pg.info.dsn, master_key=master_key.hex(), autocommit=True
        ) as other:
            other.execute("INSERT INTO hits (page, n) VALUES ('r', 1)")
        assert _outcome(enc, upsert) == _outcome(plain, upsert) == ("error", "40001")
    finally:
        for conn in pair:
            conn.rollback()
            conn.autocommit = True
