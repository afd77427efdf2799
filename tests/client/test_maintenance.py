"""VACUUM and ANALYZE through the client (maintenance.py), judged against PostgreSQL:
the same commands succeed, fail with the same error classes, and leave the server's
statistics on the encrypted tables."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.keys import MasterKey

COMMANDS = [
    "ANALYZE",
    "ANALYZE item",
    "analyse VERBOSE item, note",
    "ANALYZE item (id, name)",
    'ANALYZE public."item"',
    "VACUUM item",
    "VACUUM (ANALYZE, VERBOSE) item (name)",
    "VACUUM FULL ANALYZE note;",
    "VACUUM",
]
FAILING = [
    ("ANALYZE nosuch", psycopg.errors.UndefinedTable),
    ("ANALYZE item (nosuch)", psycopg.errors.UndefinedColumn),
]


@pytest.fixture
def pair(new_database: Any, master_key: MasterKey) -> Any:
    plain = psycopg.connect(new_database("mplain"), autocommit=True)
    enc = adaptive_client.connect(new_database("menc"), master_key=master_key, autocommit=True)
    for conn in (plain, enc):
        conn.execute("CREATE TABLE item (id integer PRIMARY KEY, name text, qty integer)")
        conn.execute("CREATE TABLE note (id integer, body text)")
        conn.cursor().executemany(
            "INSERT INTO item VALUES (%s, %s, %s)", [(i, f"n{i % 5}", i % 7) for i in range(50)]
        )
    yield plain, enc
    plain.close()
    enc.close()


def test_the_commands_run_as_on_postgresql(pair: Any) -> None:
    plain, enc = pair
    for command in COMMANDS:
        plain.execute(command)
        enc.execute(command)
    anon = enc.catalog.table("item").anon
    analyzed = enc.control.execute(
        "SELECT count(*) FROM pg_stats WHERE tablename = %s", (anon,)
    ).fetchone()
    assert analyzed is not None and analyzed[0] >= 3  # every onion column of item


def test_errors_as_on_postgresql(pair: Any) -> None:
    plain, enc = pair
    for command, error in FAILING:
        for conn in (plain, enc):
            with pytest.raises(error):
                conn.execute(command)


def test_vacuum_inside_a_transaction_is_refused_as_by_postgresql(pair: Any) -> None:
    plain, enc = pair
    for conn in (plain, enc):
        conn.autocommit = False
        with pytest.raises(psycopg.errors.ActiveSqlTransaction):
            conn.execute("VACUUM item")
        conn.rollback()
