"""psycopg's own surface, used as an application uses psycopg, judged against psycopg
on a plain database: row factories (``dict_row``, ``namedtuple_row``, ``class_row``,
``scalar_row``, a connection's ``row_factory``), ``psycopg.sql`` compositions and bytes
as statements, the ``%t`` / ``%b`` placeholders, ``stream()``, and the ``prepare`` and
``binary`` arguments -- each was a TypeError or an AttributeError through the client."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from psycopg import sql
from psycopg.rows import class_row, dict_row, namedtuple_row, scalar_row, tuple_row

import adaptive_client
from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted


@dataclass
class Item:
    id: int
    v: str | None


@pytest.fixture(scope="module")
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(
        new_database,
        master_key,
        "surface",
        {},
        ["CREATE TABLE k (id integer PRIMARY KEY, v text)"],
        {"k": [(1, "a"), (2, "b"), (3, None)]},
    ) as pair:
        yield pair


USES: list[tuple[str, Callable[[Any], Any]]] = [
    ("dict_row", lambda c: c.cursor(row_factory=dict_row).execute("SELECT * FROM k ORDER BY id").fetchall()),
    ("namedtuple_row", lambda c: c.cursor(row_factory=namedtuple_row).execute("SELECT id, v AS value FROM k ORDER BY id").fetchmany(2)),
    ("class_row", lambda c: c.cursor(row_factory=class_row(Item)).execute("SELECT id, v FROM k WHERE id = %s", (2,)).fetchone()),
    ("scalar_row", lambda c: c.cursor(row_factory=scalar_row).execute("SELECT count(*) FROM k").fetchone()),
    ("iterated", lambda c: list(c.cursor(row_factory=dict_row).execute("SELECT id FROM k ORDER BY id"))),
    ("set on the cursor", lambda c: _set_on_cursor(c)),
    ("named cursor", lambda c: c.cursor("named", row_factory=dict_row, withhold=True).execute("SELECT id FROM k ORDER BY id").fetchall()),
    ("composed", lambda c: c.execute(sql.SQL("SELECT {} FROM {} WHERE id = {}").format(sql.Identifier("v"), sql.Identifier("k"), sql.Literal(1))).fetchall()),
    ("composed with params", lambda c: c.execute(sql.SQL("SELECT id FROM k WHERE v = %s"), ("b",)).fetchall()),
    ("bytes", lambda c: c.execute(b"SELECT id FROM k ORDER BY id").fetchall()),
    ("%t and %b", lambda c: c.execute("SELECT id FROM k WHERE id = %t OR id = %b ORDER BY id", (1, 2)).fetchall()),
    ("named %t", lambda c: c.execute("SELECT id FROM k WHERE v = %(v)t", {"v": "a"}).fetchall()),
    ("stream", lambda c: list(c.cursor().stream("SELECT id FROM k ORDER BY id"))),
    ("prepare and binary", lambda c: c.execute("SELECT v FROM k WHERE id = %s", (1,), prepare=True, binary=True).fetchall()),
    ("binary cursor", lambda c: c.cursor(binary=True).execute("SELECT id, v FROM k ORDER BY id").fetchall()),
]  # fmt: skip


def _set_on_cursor(conn: Any) -> Any:
    cur = conn.cursor()
    cur.execute("SELECT id, v FROM k ORDER BY id")
    cur.row_factory = dict_row
    return cur.fetchone()


@pytest.mark.parametrize("use", [u for _, u in USES], ids=[n for n, _ in USES])
def test_used_as_psycopg_is(pair: Pair, use: Callable[[Any], Any]) -> None:
    plain, enc = pair
    assert use(enc) == use(plain)


def test_a_connections_row_factory(pair: Pair, new_database: Any, master_key: MasterKey) -> None:
    plain, enc = pair
    for conn in (plain, enc):
        conn.row_factory = dict_row
    try:
        assert enc.execute("SELECT id FROM k ORDER BY id").fetchall() == (
            plain.execute("SELECT id FROM k ORDER BY id").fetchall()
        )
    finally:
        for conn in (plain, enc):
            conn.row_factory = tuple_row
    # given at connect, it shapes the application's rows and leaves the client's own
    with adaptive_client.connect(
        enc.pg.info.dsn, master_key=master_key, autocommit=True, row_factory=dict_row
    ) as shaped:
        assert shaped.execute("SELECT v FROM k WHERE id = 1").fetchall() == [{"v": "a"}]


def test_the_asyncio_cursors_take_them_too(pair: Pair, master_key: MasterKey) -> None:
    _, enc = pair

    async def main() -> list[Any]:
        conn = await adaptive_client.AsyncConnection.connect(
            enc.pg.info.dsn, master_key=master_key, autocommit=True
        )
        try:
            cur = conn.cursor(row_factory=dict_row)
            await cur.execute(sql.SQL("SELECT id FROM {} ORDER BY id").format(sql.Identifier("k")))
            rows = await cur.fetchall()
            streamed = [r async for r in conn.cursor().stream("SELECT v FROM k ORDER BY id")]
            return [rows, streamed]
        finally:
            await conn.close()

    assert asyncio.run(main()) == [[{"id": 1}, {"id": 2}, {"id": 3}], [("a",), ("b",), (None,)]]


def test_notifications_of_the_applications_channels(pair: Pair) -> None:
    """LISTEN / NOTIFY through the client, read by psycopg's ``notifies()`` or by a
    notify handler (psycopg says not to mix the two on a connection): the application's
    channels, not the client's own (it was an AttributeError)."""
    got: dict[str, list[str]] = {}
    for name, conn in zip(("plain", "client"), pair, strict=True):
        conn.execute("LISTEN app_channel")
        conn.execute("NOTIFY app_channel, 'hello'")
        got[name] = [n.payload for n in conn.notifies(timeout=2.0, stop_after=1)]
        conn.execute("UNLISTEN app_channel")
        heard: list[str] = []

        def handler(n: Any, heard: list[str] = heard) -> None:
            heard.append(n.payload)

        conn.add_notify_handler(handler)
        conn.execute("LISTEN app_channel")
        conn.execute("NOTIFY app_channel, 'again'")
        conn.execute("SELECT 1")
        conn.remove_notify_handler(handler)
        conn.execute("NOTIFY app_channel, 'unheard'")
        conn.execute("UNLISTEN app_channel")
        got[name] += heard
    assert got["client"] == got["plain"] == ["hello", "again"]
