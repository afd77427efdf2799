"""Deferrable keys and SET CONSTRAINTS, judged against PostgreSQL (outcome and
transaction status of each statement):

- ``UNIQUE DEFERRABLE`` and ``PRIMARY KEY DEFERRABLE INITIALLY DEFERRED`` are declared so
  on the server (they were immediate: a duplicate was refused at once, and ``UPDATE t SET
  k = k + 1`` over consecutive keys failed where PostgreSQL, checking at the statement's
  end, succeeds -- the client writes such an update row by row, with the table's
  statement-checked keys deferred until its last row);
- ``SET CONSTRAINTS name`` names the application's constraint (it was 42704)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted, transaction_differences

SCRIPT = [
    "CREATE TABLE u1 (i int UNIQUE DEFERRABLE, t text)",
    "INSERT INTO u1 VALUES (0, 'a'), (1, 'b'), (2, 'c')",
    "UPDATE u1 SET i = i + 1",
    "SELECT i, t FROM u1 ORDER BY t",
    "UPDATE u1 SET i = 1",
    "CREATE TABLE u3 (i int UNIQUE DEFERRABLE INITIALLY DEFERRED, t text)",
    "INSERT INTO u3 VALUES (1, 'a')",
    "BEGIN",
    "INSERT INTO u3 VALUES (1, 'b')",
    "COMMIT",
    "SELECT i, t FROM u3 ORDER BY t",
    "CREATE TABLE u4 (i int PRIMARY KEY DEFERRABLE INITIALLY DEFERRED, t text)",
    "BEGIN",
    "INSERT INTO u4 VALUES (1, 'a')",
    "INSERT INTO u4 VALUES (1, 'b')",
    "INSERT INTO u4 VALUES (2, 'c')",
    "ROLLBACK",
    "CREATE TABLE u5 (i int, j int, CONSTRAINT k UNIQUE (i, j) DEFERRABLE)",
    "ALTER TABLE u5 ADD CONSTRAINT k2 UNIQUE (j) DEFERRABLE INITIALLY DEFERRED",
    "BEGIN",
    "INSERT INTO u5 VALUES (1, 1), (2, 1)",
    "COMMIT",
    "SELECT count(*) FROM u5",
    "CREATE TABLE u6 (i int UNIQUE DEFERRABLE, t text)",
    "INSERT INTO u6 VALUES (5, 'x')",
    "SELECT i FROM u6 WHERE t = 'x' AND i = 5",  # (the comparisons' onions ready)
    "BEGIN",
    "SET CONSTRAINTS u6_i_key DEFERRED",
    "INSERT INTO u6 VALUES (1, 'a'), (1, 'b')",
    "DELETE FROM u6 WHERE i = 1 AND t = 'b'",
    "COMMIT",
    "SET CONSTRAINTS nosuch DEFERRED",
    "BEGIN",
    "SET CONSTRAINTS u6_i_key, k IMMEDIATE",
    "SET CONSTRAINTS ALL DEFERRED",
    "COMMIT",
    "SELECT i, t FROM u6 ORDER BY t",
]


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "deferrable", {}, [], {}) as pair:
        yield pair


def test_deferrable_keys_as_in_postgresql(pair: Pair) -> None:
    assert transaction_differences(pair, SCRIPT) == []
