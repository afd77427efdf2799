"""Repeated statements run as psycopg's prepared statements without a cursor (direct.py).

The direct path must be invisible: the same rows, row counts and error classes as the
cursor path, in and out of transactions and in autocommit mode; never used where psycopg
has work to do (opening a transaction, a failed one, prepared statements disabled); and
never run a statement psycopg has deallocated (after a rollback, DDL, DISCARD ALL).
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.direct import DirectExecutor


@pytest.fixture()
def dsn(new_database: Any, master_key: Any) -> Iterator[str]:
    dsn = new_database("direct")
    with adaptive_client.connect(dsn, master_key=master_key, autocommit=True) as setup:
        setup.execute("CREATE TABLE acct (id integer PRIMARY KEY, name text, bal numeric(12,2))")
        setup.execute("INSERT INTO acct VALUES (1, 'a', 1.50), (2, 'b', 2.50), (3, NULL, NULL)")
        setup.execute("SELECT name FROM acct WHERE id = 1")  # peels Eq(id) before the tests
    yield dsn


@pytest.fixture(autouse=True)
def direct_runs(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Per statement the client sent: did it go the direct way?"""
    runs: list[bool] = []
    original = DirectExecutor.run

    def spy(self: DirectExecutor, *args: Any) -> Any:
        out = original(self, *args)
        runs.append(out is not None)
        return out

    monkeypatch.setattr(DirectExecutor, "run", spy)
    return runs


def test_same_results_as_the_cursor_path(
    dsn: str, master_key: Any, direct_runs: list[bool]
) -> None:
    with adaptive_client.connect(dsn, master_key=master_key) as conn:
        conn.pg.prepare_threshold = 2
        cur = conn.cursor()
        got = []
        for _ in range(4):  # the first runs go through a cursor, the later ones direct
            for i in (1, 2, 3, 4):
                cur.execute("SELECT name, bal FROM acct WHERE id = %s", (i,))
                got.append((i, cur.fetchall(), cur.rowcount, cur.description[0][0]))
        assert any(direct_runs) and not all(direct_runs)
        first = got[:4]
        assert first == [
            (1, [("a", Decimal("1.50"))], 1, "name"),
            (2, [("b", Decimal("2.50"))], 1, "name"),
            (3, [(None, None)], 1, "name"),
            (4, [], 0, "name"),
        ]
        assert got == first * 4
        direct_runs.clear()
        for n in range(4):
            cur.execute("UPDATE acct SET name = %s WHERE id = %s", (f"n{n}", 2))
            assert cur.rowcount == 1
            cur.execute("UPDATE acct SET name = %s WHERE id = %s", (f"n{n}", 99))
            assert cur.rowcount == 0
            cur.execute("INSERT INTO acct (id, name, bal) VALUES (%s, %s, %s)", (10 + n, None, 1))
            assert cur.rowcount == 1
        assert direct_runs[-3:] == [True] * 3
        cur.execute("SELECT count(*) FROM acct WHERE name = %s", ("n3",))
        assert cur.fetchall() == [(1,)]
        conn.rollback()  # psycopg deallocates its statements: through a cursor again
        direct_runs.clear()
        cur.execute("SELECT name FROM acct WHERE id = %s", (2,))
        assert cur.fetchall() == [("b",)] and direct_runs == [False]


def test_errors_are_psycopgs_and_fail_the_transaction(
    dsn: str, master_key: Any, direct_runs: list[bool]
) -> None:
    with adaptive_client.connect(dsn, master_key=master_key) as conn:
        conn.pg.prepare_threshold = 1
        cur = conn.cursor()
        sql = "INSERT INTO acct (id, name, bal) VALUES (%s, %s, %s)"
        for n in range(3):
            cur.execute(sql, (20 + n, "x", 0))
        assert direct_runs[-1]
        with pytest.raises(psycopg.errors.UniqueViolation):
            cur.execute(sql, (20, "x", 0))
        assert direct_runs[-1]
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            cur.execute(sql, (30, "x", 0))
        assert not direct_runs[-1]
        conn.rollback()
        cur.execute(sql, (20, "x", 0))
        cur.execute("SELECT count(*) FROM acct WHERE id = %s", (20,))
        assert cur.fetchall() == [(1,)]


def test_autocommit_and_dropped_statements(
    dsn: str, master_key: Any, direct_runs: list[bool]
) -> None:
    with adaptive_client.connect(dsn, master_key=master_key, autocommit=True) as conn:
        conn.pg.prepare_threshold = 1
        cur = conn.cursor()
        sql = "SELECT bal FROM acct WHERE id = %s"
        for _ in range(3):
            cur.execute(sql, (2,))
        assert direct_runs[-1] and cur.fetchall() == [(Decimal("2.50"),)]
        # dropped by psycopg (DISCARD ALL through it): never run under a stale name
        conn.pg.execute("DISCARD ALL")
        direct_runs.clear()
        for _ in range(3):
            cur.execute(sql, (1,))
            assert cur.fetchall() == [(Decimal("1.50"),)]
        assert direct_runs == [False, False, True]


def test_not_used_where_psycopg_has_work(
    dsn: str, master_key: Any, direct_runs: list[bool]
) -> None:
    with adaptive_client.connect(dsn, master_key=master_key) as conn:
        conn.pg.prepare_threshold = None  # the application disabled prepared statements
        cur = conn.cursor()
        for _ in range(4):
            cur.execute("SELECT name FROM acct WHERE id = %s", (1,))
        assert direct_runs and not any(direct_runs)
        conn.pg.prepare_threshold = 1
        direct_runs.clear()
        for _ in range(4):
            conn.commit()  # each statement opens a transaction: psycopg's BEGIN
            cur.execute("SELECT name FROM acct WHERE id = %s", (1,))
        assert direct_runs and not any(direct_runs)
        cur.execute("SELECT name FROM acct WHERE id = %s", (1,))
        assert direct_runs[-1] and cur.fetchall() == [("a",)]


def test_read_modify_write_updates_run_direct(
    dsn: str, master_key: Any, direct_runs: list[bool]
) -> None:
    """``UPDATE acct SET bal = bal + %s`` is computed on the client: its SELECT ... FOR
    UPDATE and its write by ctid are fixed texts per statement, prepared by the server
    once repeated and then run directly -- with the same balances as the cursor path,
    also when the WHERE matches several rows (one write each) or none."""
    with adaptive_client.connect(dsn, master_key=master_key) as conn:
        conn.pg.prepare_threshold = 2
        cur = conn.cursor()
        for _ in range(5):
            cur.execute("UPDATE acct SET bal = bal + %s WHERE id = %s", (Decimal("0.25"), 1))
            assert cur.rowcount == 1
        assert direct_runs[-2:] == [True, True]  # the SELECT and the write
        cur.execute("UPDATE acct SET bal = bal + 1 WHERE id >= %s", (2,))
        assert cur.rowcount == 2
        cur.execute("UPDATE acct SET bal = bal + 1 WHERE id = %s", (99,))
        assert cur.rowcount == 0
        conn.commit()
        cur.execute("SELECT id, bal FROM acct ORDER BY id")
        assert cur.fetchall() == [(1, Decimal("2.75")), (2, Decimal("3.50")), (3, None)]
