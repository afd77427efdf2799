"""Multi-row INSERT: every parameter encrypted in batches, the same rows as one at a time.

The batched path (one call per onion and layer) must store what the per-value path
stores: each value decrypts to the plain database's, deterministic layers give the same
ciphertexts, NULLs stay NULL, DEFAULT and omitted columns take the column default, and
the encryption counts are the same.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog import recipes
from adaptive_client.stats import STATS

# every onion stored at CREATE TABLE (none built on first use): what this file examines
STORED = {"defaults": {"on_demand": []}}


DDL = (
    "CREATE TABLE bulk (id integer PRIMARY KEY, n integer, s text, amt numeric(10,2), "
    "d date, tag text DEFAULT 'none')"
)
ROWS: list[tuple[Any, ...]] = [
    (1, 10, "alpha beta", Decimal("1.50"), dt.date(2020, 1, 2)),
    (2, None, "beta", Decimal("-3.25"), None),
    (3, 10, None, None, dt.date(1999, 12, 31)),
    (4, -7, "alpha", Decimal("0.00"), dt.date(2020, 1, 2)),
    (5, 2**31 - 1, "alpha beta", Decimal("99999999.99"), dt.date(2000, 2, 29)),
]
INSERT = "INSERT INTO bulk (id, n, s, amt, d) VALUES " + ", ".join(["(%s, %s, %s, %s, %s)"] * 5)
QUERIES = [
    "SELECT * FROM bulk ORDER BY id",
    "SELECT id FROM bulk WHERE n = 10 ORDER BY id",
    "SELECT id FROM bulk WHERE d = '2020-01-02' ORDER BY id",
    "SELECT id, amt FROM bulk WHERE amt > 0 ORDER BY amt",
    "SELECT SUM(amt), COUNT(n), MIN(d), MAX(n) FROM bulk",
    "SELECT id FROM bulk WHERE s ~ '\\malpha\\M' ORDER BY id",
    "SELECT tag, COUNT(*) FROM bulk GROUP BY tag ORDER BY tag",
]


@pytest.fixture()
def pair(new_database: Any, master_key: Any) -> Any:
    plain_dsn, enc_dsn = new_database("bulkp"), new_database("bulke")
    with psycopg.connect(plain_dsn, autocommit=True) as plain:
        plain.execute(DDL)
        plain.execute(INSERT, [v for r in ROWS for v in r])
        plain.execute(
            "INSERT INTO bulk VALUES (6, 1, 'x', 1, NULL, DEFAULT), (7, 2, 'y', 2, NULL, 'z')"
        )
        with adaptive_client.connect(
            enc_dsn, master_key=master_key, autocommit=True, config=STORED
        ) as conn:
            conn.execute(DDL)
            STATS.reset()
            conn.execute(INSERT, [v for r in ROWS for v in r])
            counts = dict(STATS.encryptions)
            conn.execute(
                "INSERT INTO bulk VALUES (6, 1, 'x', 1, NULL, DEFAULT), (7, 2, 'y', 2, NULL, 'z')"
            )
            yield plain, conn, counts


def test_bulk_insert_matches_plain(pair: Any) -> None:
    plain, conn, _ = pair
    for q in QUERIES:
        assert conn.execute(q).fetchall() == plain.execute(q).fetchall(), q


def test_bulk_insert_counts_and_ciphertexts_match_one_at_a_time(
    pair: Any, new_database: Any, master_key: Any
) -> None:
    _, _, bulk_counts = pair
    dsn = new_database("bulk1")
    with adaptive_client.connect(dsn, master_key=master_key, autocommit=True, config=STORED) as one:
        one.execute(DDL)
        STATS.reset()
        for r in ROWS:
            one.execute("INSERT INTO bulk (id, n, s, amt, d) VALUES (%s, %s, %s, %s, %s)", r)
        assert dict(STATS.encryptions) == bulk_counts
        assert bulk_counts["OPE"] > 0 and bulk_counts["RND"] > 0
    # deterministic layers: the batched path stored what the per-value path computes
    _, conn, _ = pair
    table = conn.catalog.table("bulk")
    col = table.columns["id"]
    oc = col.onions["Eq"]  # at DET from the start (primary key)
    oc.memo.clear()
    expected = sorted(recipes.encrypt(col, oc, r[0]) for r in ROWS)
    stored = conn.pg.execute(
        f'SELECT "{oc.anon}" FROM "{table.anon}" WHERE "{oc.anon}" = ANY(%s)', (expected,)
    ).fetchall()
    assert sorted(bytes(r[0]) for r in stored) == expected


def test_bulk_insert_with_returning(pair: Any) -> None:
    """A batched multi-row INSERT with RETURNING (its constant is evaluated by the client)."""
    plain, conn, _ = pair
    sql = (
        "INSERT INTO bulk (id, n, s) VALUES (%s, %s, %s), (%s, %s, %s) RETURNING id, n, s, tag, %s"
    )
    args = (20, 3, "gamma", 21, None, "delta gamma", 7)
    assert conn.execute(sql, args).fetchall() == plain.execute(sql, args).fetchall()
    q = "SELECT * FROM bulk WHERE id >= 20 ORDER BY id"
    assert conn.execute(q).fetchall() == plain.execute(q).fetchall()


@pytest.mark.parametrize(
    "args",
    [
        (30, 1, "a", 31),  # one parameter short
        {"id": 30},  # a mapping for %s placeholders
    ],
)
def test_bulk_insert_with_wrong_parameters_is_refused(pair: Any, args: Any) -> None:
    """The by-index fast path checks the parameters first: a typed error, nothing written."""
    _, conn, _ = pair
    with pytest.raises(adaptive_client.errors.ParameterMismatch, match="placeholder"):
        conn.execute("INSERT INTO bulk (id, n, s) VALUES (%s, %s, %s), (%s, %s, %s)", args)
    assert conn.execute("SELECT COUNT(*) FROM bulk WHERE id >= 30").fetchall() == [(0,)]
