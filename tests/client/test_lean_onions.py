"""Columns without an Eq onion (what `adaptive-db advise` proposes where another onion
serves): an exact Ord onion alone serves equality, grouping and DISTINCT (at OPE) and the
client decrypts it; an ASHE Sum onion alone serves sums and the client decrypts it (the
rest of a statement is the client's) -- each statement compared with plain PostgreSQL,
order included."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest

from adaptive_client.catalog.keys import MasterKey
from tpch.harness import printed_rows

from .pairs import Pair, plain_and_encrypted

DDL = (
    "CREATE TABLE ev (id integer PRIMARY KEY, qty numeric(8,2), day date, n integer, "
    "at timestamp, tag text, amount numeric(10,2))"
)
CONFIG: dict[str, Any] = {
    "defaults": {"search": False},
    "tables": {
        "ev": {
            "qty": {"onions": ["Ord", "Sum"]},
            "day": {"onions": ["Ord"]},
            "n": {"onions": ["Ord"]},
            "at": {"onions": ["Ord"]},
            "amount": {"onions": ["Sum"]},
        }
    },
}


def _rows() -> list[tuple[Any, ...]]:
    out = []
    for i in range(1, 81):
        qty = None if i % 9 == 0 else Decimal(i * 7 % 40) / 4 - 3
        day = None if i % 11 == 0 else dt.date(2020, 1 + i % 12, 1 + i % 5)
        n = None if i % 13 == 0 else (i * 5) % 17 - 8
        at = dt.datetime(2021, 3, 1 + i % 3, i % 24, i % 60, i % 7)
        amount = None if i % 7 == 0 else Decimal(i * 31 % 1000) / 8
        out.append((i, qty, day, n, at, "t" + str(i % 4), amount))
    return out


@pytest.fixture(scope="module")
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(
        new_database, master_key, "lean", CONFIG, [DDL], {"ev": _rows()}
    ) as both:
        yield both


def test_only_the_ord_onion_is_stored(pair: Any) -> None:
    _, enc = pair
    col = enc.catalog.table("ev").column("day")
    assert [oc.onion.value for oc in col.onions.values()] == ["Ord"]
    col = enc.catalog.table("ev").column("amount")
    assert [oc.onion.value for oc in col.onions.values()] == ["Sum"]


QUERIES = [
    "SELECT * FROM ev ORDER BY id",
    "SELECT id FROM ev WHERE qty = 2.75 ORDER BY id",
    "SELECT id FROM ev WHERE day = DATE '2020-03-04' ORDER BY id",
    "SELECT id, n FROM ev WHERE n IN (-3, 0, 4) ORDER BY id",
    "SELECT id FROM ev WHERE n NOT IN (1, 2) ORDER BY id",
    "SELECT id FROM ev WHERE n <> 1 ORDER BY id",
    "SELECT day, count(*) FROM ev GROUP BY day ORDER BY day NULLS FIRST",
    "SELECT n, sum(qty), count(qty) FROM ev GROUP BY n ORDER BY n",
    "SELECT DISTINCT n FROM ev ORDER BY n DESC NULLS LAST",
    "SELECT count(DISTINCT day) FROM ev",
    "SELECT id FROM ev WHERE qty BETWEEN -1 AND 2 AND day < DATE '2020-06-01' ORDER BY id",
    "SELECT min(day), max(qty), min(at), max(n) FROM ev",
    "SELECT sum(qty), avg(qty) FROM ev WHERE at >= TIMESTAMP '2021-03-02 00:00:00'",
    "SELECT id, at FROM ev WHERE at = TIMESTAMP '2021-03-02 10:10:03' ORDER BY id",
    "SELECT a.id, b.id FROM ev a JOIN ev b ON a.day = b.day WHERE a.id < 20 AND a.id < b.id "
    "ORDER BY 1, 2",
    "SELECT id FROM ev WHERE qty IS NULL OR day IS NULL ORDER BY id",
    "SELECT tag, max(day) FROM ev GROUP BY tag HAVING count(DISTINCT n) > 3 ORDER BY tag",
    "SELECT tag, sum(amount), avg(amount), count(amount) FROM ev GROUP BY tag ORDER BY tag",
    "SELECT id, amount FROM ev WHERE amount > 50 ORDER BY amount DESC, id LIMIT 7",
    "SELECT id FROM ev WHERE amount = 15.5 OR amount IS NULL ORDER BY id",
    "SELECT amount, count(*) FROM ev GROUP BY amount HAVING count(*) > 1 ORDER BY amount",
    "SELECT sum(amount * qty), max(amount) FROM ev WHERE n > 0",
]


@pytest.mark.parametrize("sql", QUERIES)
def test_equal_to_plain(pair: Any, sql: str) -> None:
    plain, enc = pair
    expected = printed_rows(plain.execute(sql).fetchall())
    got = printed_rows(enc.execute(sql).fetchall())
    assert got == expected


def test_writes(pair: Any) -> None:
    """UPDATE (constant and computed from the row), DELETE and INSERT of Ord-only columns."""
    plain, enc = pair
    for sql in (
        "UPDATE ev SET day = DATE '2024-02-29', n = 99 WHERE id = 5",
        "UPDATE ev SET qty = qty + 1 WHERE n = 4",
        "DELETE FROM ev WHERE day = DATE '2020-03-04'",
        "INSERT INTO ev VALUES (500, 1.25, DATE '2019-12-31', NULL, NULL, 'x', 12.5)",
        "UPDATE ev SET amount = amount * 2 WHERE day > DATE '2020-10-01'",
    ):
        plain.execute(sql)
        enc.execute(sql)
    sql = "SELECT id, qty, day, n, at, amount FROM ev WHERE n >= 4 OR id >= 500 ORDER BY id"
    assert printed_rows(enc.execute(sql).fetchall()) == printed_rows(plain.execute(sql).fetchall())
