"""WITH in front of a write (compile/write_ctes.py), judged against PostgreSQL: what the
client runs gives PostgreSQL's rows, and what it cannot run is refused by name (0A000)
with nothing written -- never read as a missing relation (42P01), as it was."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted
from .test_engine_gaps import ICU

RUN = [
    "WITH x AS (SELECT 1 AS a) INSERT INTO w (name) SELECT 'q' || a FROM x",
    "WITH x AS (SELECT 'z' AS a), y AS (SELECT a || a AS b FROM x) "
    "INSERT INTO w (name, qty) SELECT b, 9 FROM y RETURNING name, qty",
    "WITH x AS (SELECT 7 AS a) INSERT INTO w (name, qty) "
    "WITH y AS (SELECT a + 1 AS b FROM x) SELECT 'n', b FROM y",
    "WITH unused AS (SELECT 1) DELETE FROM w WHERE id = 100",
]
REFUSED = [
    "WITH x(k) AS (SELECT 1) UPDATE w SET name = 'y' WHERE id IN (SELECT k FROM x)",
    "WITH x AS (SELECT 3 AS a) UPDATE w SET qty = qty + 10 FROM x WHERE w.id = x.a",
    "WITH x AS (SELECT 1 AS a) DELETE FROM w WHERE id IN (SELECT a FROM x) "
    "OR id IN (SELECT a + 1 FROM x)",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) "
    "DELETE FROM w WHERE id IN (SELECT n FROM r)",
    "WITH ins AS (INSERT INTO w (name) VALUES ('eve') RETURNING id, name) SELECT name FROM ins",
    "WITH d AS (DELETE FROM w RETURNING name) SELECT count(*) FROM d",
]
ROWS = "SELECT id, name, qty FROM w ORDER BY id"


@pytest.fixture(params=["", ICU], ids=["C", "ICU"])
def pair(
    request: pytest.FixtureRequest, new_database: Callable[..., str], master_key: MasterKey
) -> Iterator[Pair]:
    with plain_and_encrypted(
        new_database,
        master_key,
        "write_ctes",
        {},
        ["CREATE TABLE w (id serial PRIMARY KEY, name text, qty integer)"],
        {},
        locale=request.param,
    ) as pair:
        for conn in pair:
            conn.execute("INSERT INTO w (name, qty) VALUES ('a', 1), ('b', 2), ('c', 3)")
        yield pair


def _result(conn: Any, sql: str) -> Any:
    cur = conn.execute(sql)
    return cur.fetchall() if cur.description is not None else cur.rowcount


def test_writes_headed_by_with_run_as_on_postgresql(pair: Pair) -> None:
    plain, enc = pair
    for sql in RUN:
        assert _result(enc, sql) == _result(plain, sql), sql
    assert enc.execute(ROWS).fetchall() == plain.execute(ROWS).fetchall()


def test_what_it_cannot_run_is_refused_by_name_and_writes_nothing(pair: Pair) -> None:
    plain, enc = pair
    before = enc.execute(ROWS).fetchall()
    for sql in REFUSED:
        plain.execute(sql)  # (PostgreSQL runs each)
        with pytest.raises(adaptive_client.NotSupportedError):
            enc.execute(sql)
    assert enc.execute(ROWS).fetchall() == before
    with pytest.raises(psycopg.errors.UndefinedTable):  # (a missing one is still 42P01)
        enc.execute("WITH x AS (SELECT 1 AS a) INSERT INTO w (name) SELECT 'q' FROM nosuch")
