"""A numeric constant as a column's DEFAULT, judged against PostgreSQL: ``float8 DEFAULT
123.456``, ``numeric DEFAULT 1.50``, ``int DEFAULT 1.5`` (rounded on assignment),
``int DEFAULT 1e10`` (out of range when used), in CREATE TABLE, ADD COLUMN and SET
DEFAULT.  The table was not created (an error without a SQLSTATE: the constant could not
be written into the sealed metadata)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted, script_differences

SCRIPT = [
    "CREATE TABLE df (i int DEFAULT 100, f float8 DEFAULT 123.456, g float8 DEFAULT -1.5e3,"
    " n numeric DEFAULT 1.50, m numeric(8,3) DEFAULT -2.5, r real DEFAULT 0.1, k int DEFAULT -7)",
    "INSERT INTO df DEFAULT VALUES",
    "INSERT INTO df (i) VALUES (1)",
    "SELECT * FROM df ORDER BY i",
    "ALTER TABLE df ADD COLUMN z numeric DEFAULT 9.99",
    "ALTER TABLE df ALTER COLUMN f SET DEFAULT 2.5",
    "INSERT INTO df (i) VALUES (2)",
    "SELECT * FROM df ORDER BY i",
    "CREATE TABLE rounded (i int DEFAULT 1.5)",
    "INSERT INTO rounded DEFAULT VALUES",
    "SELECT * FROM rounded",
    "CREATE TABLE wide (i int DEFAULT 1e10)",
    "INSERT INTO wide DEFAULT VALUES",
]


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "numeric_defaults", {}, [], {}) as pair:
        yield pair


def test_numeric_defaults_as_in_postgresql(pair: Pair) -> None:
    assert script_differences(pair, SCRIPT) == []


def test_numeric_default_survives_a_catalog_reload(pair: Pair) -> None:
    _, enc = pair
    enc.execute("CREATE TABLE kept (id int, n numeric DEFAULT 1.50, f float8 DEFAULT 2.5e-3)")
    enc.catalog.reload(enc.control)
    enc.execute("INSERT INTO kept (id) VALUES (1)")
    assert enc.execute("SELECT n, f FROM kept").fetchall() == [(pytest.approx(1.5), 0.0025)]
    assert str(enc.execute("SELECT n FROM kept").fetchone()[0]) == "1.50"
