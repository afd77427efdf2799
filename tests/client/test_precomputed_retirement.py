"""A write whose value a precomputed column cannot hold: PostgreSQL, which has no such
column, writes the row; so does the client, after retiring the column (adapt/designed.py
``retire``: dropped, its expression declined, the statement run again without it).  The
online design's precomputed expressions are typed by their inputs, their Sum onion is
ASHE (96 bits): a product of ``numeric(30,2)`` values near their bound does not fit.
Every answer equal to plain PostgreSQL's, on an ICU database."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.admin.controls import DECLINED, design_report
from adaptive_client.catalog.keys import MasterKey

from .pairs import LOCALES, plain_and_encrypted

DDL = (
    "CREATE TABLE li (id integer PRIMARY KEY, grp text NOT NULL, price numeric(30,2), "
    "disc numeric(4,2), qty bigint)"
)
ROWS = [
    (
        i,
        ["north", "South", "éast"][i % 3],
        Decimal(i) + Decimal("0.25"),
        Decimal(i % 10) / 100,
        i % 7,
    )
    for i in range(1, 61)
]
REVENUE = "SELECT grp, sum(price * (1 - disc)) AS rev, count(*) FROM li GROUP BY grp ORDER BY grp"
EXPRESSION = "price * (1 - disc)"
HUGE = Decimal("9999999999999999999999999999.99")  # (x 100.99: past 2**96 at scale 4)


class Pair:
    def __init__(self, plain: psycopg.Connection[Any], enc: adaptive_client.Connection) -> None:
        self.plain, self.enc = plain, enc

    def same(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        expected = self.plain.execute(sql, params).fetchall()
        assert self.enc.execute(sql, params).fetchall() == expected, sql
        return expected

    def both(self, sql: str, params: Any = None) -> None:
        for conn in (self.plain, self.enc):
            conn.execute(sql, params)

    def precomputed(self) -> list[str]:
        return [c.expression or "" for c in self.enc.catalog.table("li").precomputed.values()]

    def declined(self) -> list[str]:
        return list(self.enc.catalog.table("li").declined)

    def builds(self) -> int:
        row = self.enc.control.execute(
            "SELECT count(*) FROM adaptive.peel_log WHERE mode = 'build'"
        ).fetchone()
        return int(row[0]) if row else 0


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(
        new_database, master_key, "retire", {}, [DDL], {"li": ROWS}, LOCALES["icu"]
    ) as (plain, enc):
        yield Pair(plain, enc)


def _designed(pair: Pair) -> None:
    pair.same(REVENUE)
    assert pair.precomputed() == [EXPRESSION]  # (built by the first run)


def test_an_insert_past_the_onion_is_written(pair: Pair) -> None:
    """The INSERT is PostgreSQL's; the column is gone, declined, and not built again."""
    _designed(pair)
    anon = pair.enc.catalog.table("li").anon
    columns_before = _server_columns(pair.enc, anon)
    pair.both("INSERT INTO li VALUES (100, 'north', %s, -99.99, 1)", (HUGE,))
    assert pair.precomputed() == [] and pair.declined() == [EXPRESSION]
    assert len(_server_columns(pair.enc, anon)) < len(columns_before)
    builds = pair.builds()
    pair.same(REVENUE)
    pair.same(REVENUE)
    assert pair.builds() == builds  # (declined: never proposed again)
    assert all(d.get("what") != EXPRESSION for d in pair.enc.catalog.table("li").designed)
    # the DBA sees it declined beside what was built
    declined = [r for r in design_report(pair.enc.catalog) if r.column == DECLINED]
    assert [(r.table, r.what) for r in declined] == [("li", EXPRESSION)]


def test_an_update_past_the_onion_is_written(pair: Pair) -> None:
    _designed(pair)
    pair.both("UPDATE li SET price = %s WHERE id BETWEEN 3 AND 5", (HUGE,))
    assert pair.precomputed() == []
    pair.same(REVENUE)
    pair.same("SELECT id, price FROM li WHERE id < 7 ORDER BY id")


def test_executemany_writes_every_row_once(pair: Pair) -> None:
    """The sets before the one that did not fit are not written twice."""
    _designed(pair)
    rows = [(200 + i, "north", HUGE if i == 2 else Decimal(i), Decimal("0.5"), i) for i in range(5)]
    counts = []
    for conn in (pair.plain, pair.enc):
        cur = conn.cursor()
        cur.executemany("INSERT INTO li VALUES (%s, %s, %s, %s, %s)", rows)
        counts.append(cur.rowcount)
    assert counts[0] == counts[1]
    pair.same("SELECT id, price FROM li WHERE id >= 200 ORDER BY id")
    pair.same(REVENUE)


def test_executemany_of_read_modify_writes(pair: Pair) -> None:
    """Each set a read-modify-write, run one by one: the first is not run twice."""
    _designed(pair)
    counts = []
    for conn in (pair.plain, pair.enc):
        cur = conn.cursor()
        cur.executemany(
            "UPDATE li SET price = price * %s WHERE id = %s",
            [(Decimal(2), 2), (Decimal(10) ** 26, 3), (Decimal(3), 4)],
        )
        counts.append(cur.rowcount)
    assert counts[0] == counts[1] == 3
    assert pair.precomputed() == []
    pair.same("SELECT id, price FROM li WHERE id < 6 ORDER BY id")
    pair.same(REVENUE)


@pytest.mark.parametrize("end", ["commit", "rollback"])
def test_inside_a_transaction(pair: Pair, end: str) -> None:
    """In a READ COMMITTED transaction that wrote the table already, the column is
    retired inside it: a rollback brings it back with the rows, a commit keeps neither."""
    _designed(pair)
    for conn in (pair.plain, pair.enc):
        conn.autocommit = False
        conn.execute("INSERT INTO li VALUES (300, 'north', 5.00, 0.10, 1)")
        conn.execute("INSERT INTO li VALUES (301, 'éast', %s, -99.99, 1)", (HUGE,))
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
    pair.same(REVENUE)
    for conn in (pair.plain, pair.enc):
        getattr(conn, end)()
        conn.autocommit = True
    pair.same(REVENUE)
    assert pair.precomputed() == ([] if end == "commit" else [EXPRESSION])


def test_a_table_whose_rows_do_not_fit_declines_the_build(pair: Pair) -> None:
    """Rows already past the onion: the first run answers without it and declines it;
    the second builds nothing."""
    pair.both("INSERT INTO li VALUES (400, 'South', %s, -99.99, 2)", (HUGE,))
    pair.same(REVENUE)
    assert pair.precomputed() == [] and pair.declined() == [EXPRESSION]
    builds = pair.builds()
    pair.same(REVENUE)
    assert pair.builds() == builds


def test_another_clients_stale_plan(pair: Pair, master_key: MasterKey) -> None:
    """A client that compiled its statements over the retired column plans again."""
    _designed(pair)
    other = adaptive_client.connect(pair.enc.info.dsn, master_key=master_key.hex(), autocommit=True)
    try:
        assert other.execute(REVENUE).fetchall() == pair.plain.execute(REVENUE).fetchall()
        pair.both("INSERT INTO li VALUES (500, 'north', %s, -99.99, 1)", (HUGE,))
        assert other.execute(REVENUE).fetchall() == pair.plain.execute(REVENUE).fetchall()
        other.execute("INSERT INTO li VALUES (501, 'north', 2.00, 0.10, 1)")
        pair.plain.execute("INSERT INTO li VALUES (501, 'north', 2.00, 0.10, 1)")
        pair.same(REVENUE)
    finally:
        other.close()


def _server_columns(conn: adaptive_client.Connection, anon: str) -> list[str]:
    rows = conn.control.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 "
        "AND NOT attisdropped",
        (anon,),
    ).fetchall()
    return [r[0] for r in rows]
