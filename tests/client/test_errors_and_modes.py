"""Typed errors leave the database unchanged; peel modes; key indexes; wrong keys."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.errors import (
    LayerFloorViolation,
    NotInitialized,
    PeelDisabled,
    UndefinedColumn,
    UndefinedTable,
    UnsupportedQuery,
    WrongMasterKey,
)

CONFIG = {
    "defaults": {"search": True},
    "tables": {"acct": {"owner": {"floor": {"Eq": "RND"}}, "balance": {"floor": {"Ord": "RND"}}}},
}


def _snapshot(dsn: str) -> tuple[Any, ...]:
    """Everything a failed statement must leave untouched."""
    with psycopg.connect(dsn) as c:
        layers = c.execute("SELECT anon_column, layer FROM adaptive.layers ORDER BY 1").fetchall()
        epoch = c.execute("SELECT value FROM adaptive.epoch").fetchone()
        peels = c.execute("SELECT count(*) FROM adaptive.peel_log").fetchone()
        tables = c.execute(
            "SELECT relname, n_live_tup FROM pg_stat_user_tables ORDER BY 1"
        ).fetchall()
    return layers, epoch, peels, tables


@pytest.fixture()
def acct(
    new_database: Any, master_key: MasterKey
) -> Iterator[tuple[adaptive_client.Connection, str]]:
    dsn = new_database("err")
    conn = adaptive_client.connect(dsn, master_key=master_key, config=CONFIG, autocommit=True)
    conn.execute(
        "CREATE TABLE acct (id integer PRIMARY KEY, owner text, balance integer, opened date, "
        "nick text)"
    )
    conn.execute(
        "INSERT INTO acct VALUES (1, 'ann', 10, '2020-01-01', 'a'), "
        "(2, 'bob', 20, '2021-01-01', 'b'), "
        "(3, 'cid', NULL, NULL, NULL)"
    )
    yield conn, dsn
    conn.close()


@pytest.mark.parametrize(
    ("sql", "construct"),
    [
        # (LIKE with wildcards, subqueries, upper(), text ranges are now answered by
        # split execution: tests/client/test_residual.py)
        (
            "SELECT string_agg(nick, ',') FROM acct WHERE id > 1",
            "function string_agg() without ORDER BY (order of aggregation)",
        ),
        ("SELECT to_char(balance, '999') FROM acct", "to_char() of other than a date or timestamp"),
        ("SELECT regexp_matches(owner, 'a') FROM acct", "function regexp_matches()"),
        ("SELECT id FROM acct WHERE balance = opened", "client evaluation"),
        # (its sealed metadata would be every session's, and outlive this one)
        ("CREATE TEMP TABLE scratch (id integer)", "temporary table"),
        ("CREATE TEMPORARY TABLE scratch AS SELECT id FROM acct", "temporary table"),
    ],
)
def test_unsupported_names_construct_and_changes_nothing(
    acct: Any, sql: str, construct: str | None
) -> None:
    conn, dsn = acct
    before = _snapshot(dsn)
    with pytest.raises(UnsupportedQuery) as info:
        conn.execute(sql)
    if construct:
        assert info.value.construct == construct
        assert construct.split()[0].lower() in str(info.value).lower()
    assert _snapshot(dsn) == before


def test_floor_violation_changes_nothing(acct: Any) -> None:
    conn, dsn = acct
    before = _snapshot(dsn)
    with pytest.raises(LayerFloorViolation):
        conn.execute("SELECT id FROM acct WHERE owner = 'ann'")
    with pytest.raises(LayerFloorViolation):
        conn.execute("SELECT id FROM acct ORDER BY balance")
    assert _snapshot(dsn) == before
    # what the floor allows still works
    assert conn.execute("SELECT owner FROM acct WHERE id = 2").fetchall() == [("bob",)]


def test_undefined_names(acct: Any) -> None:
    conn, _ = acct
    with pytest.raises(UndefinedTable):
        conn.execute("SELECT * FROM nope")
    with pytest.raises(UndefinedColumn):
        conn.execute("SELECT nope FROM acct")


def test_peel_off_fails_cleanly(acct: Any, master_key: MasterKey) -> None:
    _, dsn = acct
    before = _snapshot(dsn)
    with adaptive_client.connect(dsn, master_key=master_key, peel="off", autocommit=True) as off:
        with pytest.raises(PeelDisabled) as info:
            off.execute("SELECT id FROM acct WHERE opened > '2020-06-01'")
        assert "opened" in str(info.value)
        # no peel needed: still fine
        assert off.execute("SELECT owner FROM acct WHERE id = 1").fetchall() == [("ann",)]
    assert _snapshot(dsn) == before


def test_wrong_master_key(acct: Any) -> None:
    _, dsn = acct
    before = _snapshot(dsn)
    with pytest.raises(WrongMasterKey):
        adaptive_client.connect(dsn, master_key=MasterKey.generate())
    assert _snapshot(dsn) == before


def test_not_initialized(new_database: Any, master_key: MasterKey, pg_cluster: Any) -> None:
    dsn = new_database("bare")
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("DROP SCHEMA adaptive CASCADE")
    with pytest.raises(NotInitialized):
        adaptive_client.connect(dsn, master_key=master_key)


def test_master_key_from_environment(acct: Any, master_key: MasterKey, monkeypatch: Any) -> None:
    _, dsn = acct
    monkeypatch.setenv("ADAPTIVE_MASTER_KEY", master_key.hex())
    with adaptive_client.connect(dsn) as conn:
        assert conn.execute("SELECT COUNT(*) FROM acct").fetchone() == (3,)


def test_primary_key_is_enforced_and_indexed(new_database: Any, master_key: MasterKey) -> None:
    dsn = new_database("pk")
    cfg = {
        "tables": {"big": {"id": {"onions": ["Eq"]}, "v": {"onions": ["Single"], "layer": "RND"}}}
    }
    with adaptive_client.connect(dsn, master_key=master_key, config=cfg, autocommit=True) as conn:
        conn.execute("CREATE TABLE big (id integer PRIMARY KEY, v integer)")
        with conn.transaction():
            conn.cursor().executemany(
                "INSERT INTO big (id, v) VALUES (%s, %s)", [(i, i * 7) for i in range(100_000)]
            )
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute("INSERT INTO big VALUES (5, 1)")
        assert conn.execute("SELECT v FROM big WHERE id = %s", (4242,)).fetchall() == [(29694,)]
        conn.pg.execute(f'ANALYZE "{conn.catalog.table("big").anon}"')
        plan = "\n".join(
            r[0] for r in conn.execute("EXPLAIN SELECT v FROM big WHERE id = %s", (77,))
        )
        assert "big" not in plan  # the plan names anonymized relations only
    assert "Index Scan" in plan or "Index Only Scan" in plan, plan
