"""Transactions of query strings and of DDL under SQL transaction control, judged against
PostgreSQL in both autocommit modes: the outcome of each execute() and the transaction
status after it.

- A string of several statements runs as PostgreSQL runs a query string: outside a
  transaction block in an implicit one, undone whole by a failing statement or a
  ROLLBACK, committed at its COMMIT or end; SAVEPOINT there is 25P01, VACUUM 25001.  A
  string with COMMIT or ROLLBACK ran statement by statement: ``insert; rollback;
  select`` kept the row.
- DDL in a transaction opened by a ``BEGIN`` statement (autocommit mode) is undone from
  the client's catalog by its ``ROLLBACK`` (or ROLLBACK TO SAVEPOINT): the table was
  still known, so creating it again was 42P07 and then reading it 42P01."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted, transaction_differences

SCRIPT = [
    "CREATE TABLE t (a int)",
    "INSERT INTO t VALUES (9); ROLLBACK; SELECT 2",
    "SELECT a FROM t ORDER BY a",
    "INSERT INTO t VALUES (7); COMMIT; INSERT INTO t VALUES (8); SELECT 1/0",
    "SELECT a FROM t ORDER BY a",
    "INSERT INTO t VALUES (1); COMMIT; INSERT INTO t VALUES (2)",
    "SELECT a FROM t ORDER BY a",
    "INSERT INTO t VALUES (3); SELECT 1/0",
    "SELECT a FROM t ORDER BY a",
    "SELECT 1; SAVEPOINT sp",
    "ROLLBACK TO SAVEPOINT sp; SELECT 2",
    "SELECT 1; COMMIT; VACUUM t",
    "BEGIN; INSERT INTO t VALUES (4); COMMIT; INSERT INTO t VALUES (5)",
    "SELECT a FROM t ORDER BY a",
    "INSERT INTO t VALUES (6); BEGIN; INSERT INTO t VALUES (10)",
    "SELECT a FROM t ORDER BY a",
    "ROLLBACK",
    "SELECT a FROM t ORDER BY a",
    "CREATE TABLE s1 (a int); CREATE TABLE s2 (b int); SELECT 1/0",
    "CREATE TABLE s1 (a int)",
    "BEGIN",
    "CREATE TABLE k3 (a int)",
    "ROLLBACK",
    "CREATE TABLE k3 (a int)",
    "SELECT * FROM k3",
    "BEGIN",
    "SAVEPOINT x",
    "CREATE TABLE k4 (a int UNIQUE)",
    "ROLLBACK TO x",
    "CREATE TABLE k4 (a int UNIQUE)",
    "INSERT INTO k4 VALUES (1)",
    "COMMIT",
    "SELECT a FROM k4",
    "CREATE TYPE mood AS ENUM ('sad')",
    "BEGIN",
    "ALTER TYPE mood ADD VALUE 'new'",
    "ROLLBACK",
    "SELECT 'new'::mood",
]


@pytest.fixture(params=[True, False], ids=["autocommit", "transactions"])
def pair(
    request: pytest.FixtureRequest, new_database: Callable[..., str], master_key: MasterKey
) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "script_tx", {}, [], {}) as pair:
        for conn in pair:
            conn.autocommit = request.param
        yield pair


def test_script_and_ddl_transactions_as_in_postgresql(pair: Pair) -> None:
    assert transaction_differences(pair, SCRIPT) == []
