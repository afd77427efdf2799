"""Partial indexes and ON CONFLICT inference, judged against PostgreSQL.

- A partial UNIQUE index keeps its predicate on the server where the predicate tests
  columns for NULL (the soft-delete pattern): it was taken as a whole index and refused
  rows PostgreSQL stores (23505).  One over other predicates, which compare values the
  server holds only as ciphertexts, is refused (0A000).
- ON CONFLICT infers the partial index by its predicate, and a conflict target no
  unique key matches is 42P10 (it was an error without a SQLSTATE, or a write PostgreSQL
  refuses)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, outcome, plain_and_encrypted, script_differences

SCRIPT = [
    "CREATE TABLE t (k int, f text, gone date)",
    "CREATE UNIQUE INDEX t_live ON t (k) WHERE gone IS NULL",
    "CREATE INDEX t_f ON t (f) WHERE gone IS NOT NULL",
    "INSERT INTO t VALUES (1, 'a', NULL)",
    "INSERT INTO t VALUES (1, 'b', '2024-01-01')",
    "INSERT INTO t VALUES (1, 'c', '2024-01-02')",
    "INSERT INTO t VALUES (1, 'd', NULL)",
    "INSERT INTO t VALUES (1, 'e', NULL) ON CONFLICT (k) WHERE gone IS NULL "
    "DO UPDATE SET f = 'upd'",
    "INSERT INTO t VALUES (2, 'e', NULL) ON CONFLICT (k) WHERE gone IS NULL DO NOTHING",
    "INSERT INTO t VALUES (2, 'e', NULL) ON CONFLICT (k) DO NOTHING",
    "INSERT INTO t VALUES (2, 'e', NULL) ON CONFLICT (k) WHERE f IS NULL DO NOTHING",
    "SELECT k, f, gone FROM t ORDER BY k, f",
    "CREATE TABLE u (k int, f text)",
    "INSERT INTO u VALUES (1, 'a') ON CONFLICT (k) DO NOTHING",
    "INSERT INTO u VALUES (1, 'a') ON CONFLICT (k, f) DO UPDATE SET f = 'b'",
    "CREATE UNIQUE INDEX u_kf ON u (f, k)",
    "INSERT INTO u VALUES (1, 'a') ON CONFLICT (k, f) DO UPDATE SET f = 'b'",
    "SELECT k, f FROM u ORDER BY k, f",
]


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "partial_unique", {}, [], {}) as pair:
        yield pair


def test_partial_unique_indexes_as_in_postgresql(pair: Pair) -> None:
    assert script_differences(pair, SCRIPT) == []


def test_partial_unique_index_over_values_is_refused(pair: Pair) -> None:
    plain, enc = pair
    for conn in pair:
        conn.execute("CREATE TABLE v (k int, f text)")
    sql = "CREATE UNIQUE INDEX v_low ON v (k, f) WHERE k < 5"
    assert outcome(plain, sql) == ("ok", -1)
    assert outcome(enc, sql) == ("error", "0A000")
    # nothing half made: the name is free, the rows it would refuse are stored
    enc.execute("INSERT INTO v VALUES (13, 'x'), (13, 'x')")
    assert outcome(enc, "CREATE INDEX v_low ON v (k)") == ("ok", -1)


def test_the_server_predicate_tests_onions_for_null_only(pair: Pair) -> None:
    """docs/security.md: the server's partial index holds the NULL tests over keyed
    onion columns, and none of the application's names."""
    _, enc = pair
    enc.execute("CREATE TABLE soft (email text, deleted_at date)")
    enc.execute("CREATE UNIQUE INDEX soft_live ON soft (email) WHERE deleted_at IS NULL")
    anon = enc.catalog.table("soft").anon
    defs = [
        r[0]
        for r in enc.control.execute(
            "SELECT indexdef FROM pg_indexes WHERE tablename = %s", (anon,)
        ).fetchall()
    ]
    partial = [d for d in defs if " WHERE " in d]
    assert len(partial) == 1
    predicate = partial[0].split(" WHERE ", 1)[1]
    assert "IS NULL" in predicate
    for name in ("soft", "email", "deleted_at", "live"):
        assert name not in partial[0]
