"""Floors (the lowest layer the DBA allows a column's onion to reach) hold on every path:
queries of every kind, in and out of transactions, in each peel mode; DDL; the DBA's
``adaptive-db peel`` command and ``admin.peel_column``.  After each refusal the onion is
still at its layer in the database."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import IsolationLevel

import adaptive_client
from adaptive_client.admin import cli
from adaptive_client.admin import controls as admin
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.catalog.onions import Onion
from adaptive_client.errors import ConfigError, LayerFloorViolation

# secret: no Eq or Ord peel at all; level: Ord may reach OPE, Eq stays RND.  Floors are
# per onion: an Ord onion at OPE reveals equality as well, so forbidding equality on a
# column takes a floor on each onion that offers it (Eq and Ord).
CONFIG: dict[str, Any] = {
    "tables": {
        "vault": {
            "secret": {"floor": {"Eq": "RND", "Ord": "RND"}},
            "level": {"floor": {"Eq": "RND"}},
        },
        "keyed": {"code": {"floor": {"Eq": "RND"}}},
        "keyed2": {"code": {"floor": {"Eq": "RND"}}},
        "keyed3": {"code": {"floor": {"Eq": "RND"}}},
        "badstart": {"x": {"start": {"Eq": "DET"}, "floor": {"Eq": "RND"}}},
    }
}

ISOLATION = {
    "read committed": IsolationLevel.READ_COMMITTED,
    "repeatable read": IsolationLevel.REPEATABLE_READ,
}

FORBIDDEN = [
    "SELECT id FROM vault WHERE secret = 'a'",
    "SELECT id FROM vault WHERE secret = %s",
    "SELECT id FROM vault WHERE secret <> 'a'",
    "SELECT id FROM vault WHERE secret IN ('a', 'b')",
    "SELECT id FROM vault WHERE secret > 'a'",
    "SELECT id FROM vault WHERE secret BETWEEN 'a' AND 'c'",
    "SELECT id FROM vault ORDER BY secret",
    "SELECT secret, count(*) FROM vault GROUP BY secret",
    "SELECT count(DISTINCT secret) FROM vault",
    "SELECT min(secret) FROM vault",
    "SELECT DISTINCT secret FROM vault",
    "SELECT v.id FROM vault v JOIN vault w ON v.secret = w.secret",
    "UPDATE vault SET level = 1 WHERE secret = 'a'",
    "DELETE FROM vault WHERE secret = 'b'",
    "SELECT id FROM vault WHERE secret = 'a' OR level = 3",
]


@pytest.fixture(scope="module")
def vault(new_database: Callable[..., str]) -> Iterator[tuple[str, MasterKey]]:
    dsn = new_database("floors")
    key = MasterKey.generate()
    with adaptive_client.connect(dsn, master_key=key, config=CONFIG, autocommit=True) as conn:
        conn.execute("CREATE TABLE vault (id integer PRIMARY KEY, secret text, level integer)")
        conn.execute("INSERT INTO vault VALUES (1, 'a', 3), (2, 'b', 5), (3, 'c', 3)")
    yield dsn, key


def _layers(dsn: str) -> list[tuple[str, str]]:
    with psycopg.connect(dsn) as c:
        return sorted(
            (r[0], r[1])
            for r in c.execute("SELECT onion, layer FROM adaptive.layers WHERE onion <> 'Search'")
        )


def _at_rnd(dsn: str) -> int:
    return sum(1 for _, layer in _layers(dsn) if layer == "RND")


def _secret_order_unbuilt(dsn: str, key: MasterKey) -> bool:
    """Whether vault.secret's Ord onion is still to be built (never stored)."""
    with adaptive_client.connect(dsn, master_key=key) as conn:
        return Onion.ORD in conn.catalog.table("vault").column("secret").on_demand


@pytest.mark.parametrize("mode", ["server", "client", "off"])
def test_queries_needing_a_layer_below_the_floor_fail(
    vault: tuple[str, MasterKey], mode: str
) -> None:
    dsn, key = vault
    before = _layers(dsn)
    failures = 0
    with adaptive_client.connect(
        dsn, master_key=key, config=CONFIG, peel=mode, autocommit=True
    ) as conn:
        for q in FORBIDDEN:
            with pytest.raises(LayerFloorViolation, match="floor"):
                conn.execute(q, ("a",) if "%s" in q else None)
            failures += 1
        # what the floors allow still works: Ord(level) may go to OPE, and then serves
        # equality too (floors are per onion: Eq(level) itself stays at RND)
        if mode != "off":
            assert conn.execute("SELECT id FROM vault WHERE level > 4").fetchall() == [(2,)]
            got = conn.execute("SELECT id FROM vault WHERE level = 3").fetchall()
            assert sorted(got) == [(1,), (3,)]
    assert failures == len(FORBIDDEN)
    after = _layers(dsn)
    if mode == "off":
        assert after == before
    # Eq(secret) and Eq(level) never left RND; Ord(secret), built on first use, was never
    # built (a statement needing it below its floor is refused before any build)
    assert _at_rnd(dsn) >= 2 and _secret_order_unbuilt(dsn, key)


@pytest.mark.parametrize("isolation", ["read committed", "repeatable read"])
def test_floors_hold_inside_transactions(vault: tuple[str, MasterKey], isolation: str) -> None:
    dsn, key = vault
    conn = adaptive_client.connect(dsn, master_key=key, config=CONFIG)
    try:
        conn.isolation_level = ISOLATION[isolation]
        conn.execute("SELECT count(*) FROM vault").fetchall()
        with pytest.raises(LayerFloorViolation):
            conn.execute("SELECT id FROM vault WHERE secret = 'c'")
        conn.rollback()
    finally:
        conn.close()
    assert ("Eq", "RND") in _layers(dsn)


def test_dba_peel_respects_floors(vault: tuple[str, MasterKey], tmp_path: Path) -> None:
    dsn, key = vault
    with psycopg.connect(dsn, autocommit=True) as raw:
        for mode in ("server", "client"):
            with pytest.raises(LayerFloorViolation):
                admin.peel_column(raw, key, "vault", "secret", "Eq", "DET", mode)
            with pytest.raises(LayerFloorViolation):
                admin.peel_column(raw, key, "vault", "secret", "ord", "ope", mode)
            with pytest.raises(LayerFloorViolation):
                admin.peel_column(raw, key, "vault", "level", "Eq", "DET", mode)
    key_file = tmp_path / "k"
    key_file.write_text(key.hex())
    args = ["--dsn", dsn, "--master-key-file", str(key_file)]
    assert cli.main(["peel", *args, "vault", "secret", "Eq", "DET"]) == 1
    assert cli.main(["peel", *args, "--mode", "client", "vault", "secret", "Ord", "OPE"]) == 1
    assert _at_rnd(dsn) >= 2 and _secret_order_unbuilt(dsn, key)
    # within the floor, the same command works
    assert cli.main(["peel", *args, "vault", "level", "Ord", "OPE"]) == 0
    assert ("Ord", "OPE") in _layers(dsn)


def test_ddl_respects_floors(new_database: Callable[..., str]) -> None:
    dsn = new_database("floorddl")
    key = MasterKey.generate()
    with adaptive_client.connect(dsn, master_key=key, config=CONFIG, autocommit=True) as conn:
        # a key is enforced on DET ciphertexts: not with an Eq floor of RND
        with pytest.raises(LayerFloorViolation):
            conn.execute("CREATE TABLE keyed (code text PRIMARY KEY)")
        with pytest.raises(LayerFloorViolation):
            conn.execute("CREATE TABLE keyed2 (code text UNIQUE, n integer)")
        conn.execute("CREATE TABLE keyed3 (code text, n integer)")
        with pytest.raises(LayerFloorViolation):
            conn.execute("CREATE UNIQUE INDEX keyed3_code ON keyed3 (code)")
        # a start below the floor is a configuration error
        with pytest.raises(ConfigError, match="floor"):
            conn.execute("CREATE TABLE badstart (x integer)")
        assert not conn.catalog.has_table("keyed") and not conn.catalog.has_table("badstart")
        assert [i.name for i in conn.catalog.table("keyed3").indexes] == []
    with psycopg.connect(dsn) as raw:
        # nothing half-created: only keyed3's stored table, all at RND
        assert raw.execute(
            "SELECT count(*) FROM pg_class WHERE relkind = 'r' AND relnamespace = "
            "'public'::regnamespace"
        ).fetchone() == (1,)
        assert raw.execute(
            "SELECT DISTINCT layer FROM adaptive.layers WHERE onion = 'Eq'"
        ).fetchall() == [("RND",)]
