"""A row's RND layers sealed together (recipes.RowSealer): a single-row INSERT's onions and
a read-modify-write UPDATE's assigned columns, Single onions at RND included -- the same
stored forms as value by value (each under its own key and nonce), answers equal plain."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog import recipes
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.stats import STATS

DDL = "CREATE TABLE acct (id integer PRIMARY KEY, owner text, balance numeric(10,2), n integer)"
SINGLE = {"onions": ["Single"], "layer": "RND"}
CONFIG = {"tables": {"acct": {"owner": SINGLE, "balance": SINGLE, "n": SINGLE}}}


@pytest.fixture
def conns(new_database: Any, master_key: MasterKey) -> Iterator[tuple[Any, Any, str]]:
    plain = psycopg.connect(new_database("seal_plain"), autocommit=True)
    dsn = new_database("seal_enc")
    enc = adaptive_client.connect(dsn, master_key=master_key, config=CONFIG, autocommit=True)
    for c in (plain, enc):
        c.execute(DDL)
    yield plain, enc, dsn
    plain.close()
    enc.close()


def _stored(dsn: str, enc: Any, column: str) -> list[bytes]:
    meta = enc.catalog.table("acct")
    (oc,) = meta.column(column).onions.values()
    with psycopg.connect(dsn) as raw:
        return [bytes(r[0]) for r in raw.execute(f'SELECT "{oc.anon}" FROM "{meta.anon}"')]


def test_inserted_and_updated_rows_equal_plain(conns: tuple[Any, Any, str]) -> None:
    plain, enc, dsn = conns
    insert = "INSERT INTO acct VALUES (%s, %s, %s, %s)"
    update = "UPDATE acct SET balance = balance + %s, n = n + 1 WHERE id = %s"
    for c in (plain, enc):
        for i in range(1, 6):
            c.execute(insert, (i, f"owner {i}", Decimal(i) * 10, None if i == 3 else i))
        for i in (1, 2, 3, 2):
            c.execute(update, (Decimal("0.5"), i))
    query = "SELECT * FROM acct ORDER BY id"
    assert enc.execute(query).fetchall() == plain.execute(query).fetchall()
    for column in ("owner", "balance"):
        stored = _stored(dsn, enc, column)
        assert all(v[0] == 1 for v in stored)  # RND's tag on every value
        assert len({v[1:13] for v in stored}) == len(stored)  # a nonce of its own each


def test_a_sealed_row_counts_one_rnd_encryption_per_onion(conns: tuple[Any, Any, str]) -> None:
    _, enc, _ = conns
    enc.execute("INSERT INTO acct VALUES (1, 'a', 1.00, 1)")
    before = STATS.encryptions["RND"]
    enc.execute("INSERT INTO acct VALUES (2, 'b', 2.00, 2)")
    with_n = STATS.encryptions["RND"] - before
    before = STATS.encryptions["RND"]
    enc.execute("INSERT INTO acct VALUES (3, 'c', 3.00, NULL)")  # a NULL stays NULL
    assert STATS.encryptions["RND"] - before == with_n - 1 >= 2  # owner, balance (and id's)
    before = STATS.encryptions["RND"]
    enc.execute("UPDATE acct SET balance = balance * 2, n = 5 WHERE id = 2")
    assert STATS.encryptions["RND"] - before == 2


def test_a_single_onion_sealed_in_a_row_decrypts_as_one_sealed_alone(
    conns: tuple[Any, Any, str],
) -> None:
    _, enc, _ = conns
    meta = enc.catalog.table("acct")
    cols = [meta.column(c) for c in ("owner", "balance", "n")]
    slots = [(i, col, oc) for i, col in enumerate(cols) for oc in col.onions.values()]
    values = ["x", Decimal("12.50"), 7]
    row = recipes.RowSealer(slots)(values)
    again = recipes.RowSealer(slots)(values)
    for (_, col, oc), stored, other, v in zip(slots, row, again, values, strict=True):
        assert stored != other  # fresh nonces
        assert recipes.decrypt(col, oc, stored) == v == recipes.decrypt(col, oc, other)
        alone = recipes.encrypt(col, oc, v)
        assert len(alone) == len(stored) and recipes.decrypt(col, oc, alone) == v
