"""Values kept between statements: plaintexts of stored values read before, and the
comparands of parameters given before (a repeated point statement's fast path).

Both are caches of deterministic functions; what could go wrong is an entry used where
it does not apply -- another value that compares equal, a changed row, a value the
application may change -- and the statistics counting differently.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog import recipes
from adaptive_client.errors import CiphertextError
from adaptive_client.stats import STATS

DDL = "CREATE TABLE item (id integer PRIMARY KEY, name text, price numeric(6,2), code text)"
ROWS = [(i, f"item {i}", Decimal(i) + Decimal("0.25"), str(i)) for i in range(1, 21)]


# the database's collation: C, and ICU's (text comparands at OPE follow the collation)
LOCALES = {"c": "", "icu": "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"}


@pytest.fixture(params=sorted(LOCALES))
def pair(new_database: Any, master_key: Any, request: pytest.FixtureRequest) -> Any:
    locale = LOCALES[request.param]
    plain_dsn = new_database("keptp", locale=locale)
    enc_dsn = new_database("kepte", locale=locale)
    with psycopg.connect(plain_dsn, autocommit=True) as plain:
        plain.execute(DDL)
        plain.cursor().executemany("INSERT INTO item VALUES (%s, %s, %s, %s)", ROWS)
        with adaptive_client.connect(enc_dsn, master_key=master_key, autocommit=True) as conn:
            conn.execute(DDL)
            conn.cursor().executemany("INSERT INTO item VALUES (%s, %s, %s, %s)", ROWS)
            yield plain, conn


def test_a_value_read_again_is_the_same_and_counted(pair: Any) -> None:
    _, conn = pair
    col = conn.catalog.table("item").column("name")
    oc = next(iter(col.onions.values()))
    stored = recipes.encrypt(col, oc, "item 7", "RND")
    before = sum(STATS.decryptions.values())
    first = recipes.decrypt(col, oc, stored)
    counted = sum(STATS.decryptions.values()) - before
    assert first == "item 7" and oc.opened[stored] == "item 7"
    assert recipes.decrypt(col, oc, bytearray(stored)) == "item 7"  # (a buffer: same key)
    assert sum(STATS.decryptions.values()) - before == 2 * counted


def test_a_value_that_does_not_decrypt_is_refused_each_time(pair: Any) -> None:
    _, conn = pair
    col = conn.catalog.table("item").column("id")
    oc = next(iter(col.onions.values()))
    assert recipes.decrypt(col, oc, recipes.encrypt(col, oc, 3, "RND")) == 3
    for _ in range(2):
        with pytest.raises(CiphertextError):
            recipes.decrypt(col, oc, b"\x01\x00")  # truncated: refused, never kept
    assert b"\x01\x00" not in oc.opened


def test_kept_values_are_bounded(pair: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _, conn = pair
    monkeypatch.setattr(recipes, "_OPENED_LIMIT", 4)
    col = conn.catalog.table("item").column("name")
    oc = next(iter(col.onions.values()))
    oc.opened.clear()
    for i in range(10):
        assert recipes.decrypt(col, oc, recipes.encrypt(col, oc, f"v{i}", "RND")) == f"v{i}"
        assert len(oc.opened) <= 4


def test_repeated_point_queries_equal_plain(pair: Any) -> None:
    """The same statement with parameters that repeat, change, compare equal across
    types or match nothing; rows updated between the reads."""
    plain, conn = pair
    queries = [
        ("SELECT name, price FROM item WHERE id = %s", [(3,), (3,), (4,), (3,), (99,), (3,)]),
        ("SELECT id, price FROM item WHERE code = %s", [("5",), ("5",), ("6",), ("55",), ("5",)]),
        ("SELECT id FROM item WHERE price = %s", [(Decimal("2.25"),), (Decimal("2.250"),)]),
        ("SELECT id FROM item WHERE id = %s", [(2,), (2.0,), (Decimal(2),), (2,)]),
        # text ranges: the code's Ord onion is built and peeled, its comparands kept
        ("SELECT id FROM item WHERE code > %s ORDER BY code, id", [("3",), ("3",), ("15",)]),
        ("SELECT count(*) FROM item WHERE code BETWEEN %s AND %s", [("1", "2"), ("1", "2")]),
    ]
    for sql, params in queries:
        for p in params:
            want = plain.execute(sql, p).fetchall()
            assert conn.execute(sql, p).fetchall() == want, (sql, p)
    for i in (1, 2, 3):
        plain.execute("UPDATE item SET name = name || '!', price = price + 1 WHERE id = 3")
        conn.execute("UPDATE item SET name = name || '!', price = price + 1 WHERE id = 3")
        sql = "SELECT name, price FROM item WHERE id = %s"
        assert conn.execute(sql, (3,)).fetchall() == plain.execute(sql, (3,)).fetchall(), i


def test_a_repeated_parameter_is_counted_as_encrypted(pair: Any) -> None:
    _, conn = pair
    sql = "SELECT name FROM item WHERE id = %s"
    conn.execute(sql, (4,))
    conn.execute(sql, (4,))  # (the key column's Eq onion is at DET: a kept comparand)
    before = sum(STATS.encryptions.values())
    conn.execute(sql, (4,))
    once = sum(STATS.encryptions.values()) - before
    before = sum(STATS.encryptions.values())
    conn.execute(sql, (5,))
    assert sum(STATS.encryptions.values()) - before == once > 0


def test_bool_and_int_parameters_are_kept_apart(pair: Any) -> None:
    """``True == 1`` in Python, and a kept comparand of 1 must not answer for True: the
    client treats True as it did before anything was kept, every time."""
    _, conn = pair
    sql = "SELECT name FROM item WHERE id = %s"

    def outcome(p: Any) -> Any:
        try:
            return conn.execute(sql, (p,)).fetchall()
        except psycopg.Error as exc:
            return type(exc)

    fresh = outcome(True)
    assert outcome(1) == [("item 1",)]
    assert outcome(True) == fresh and outcome(True) == fresh
    assert outcome(1) == [("item 1",)]
