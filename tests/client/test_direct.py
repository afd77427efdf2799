"""Repeated statements run as psycopg's prepared statements without a cursor (direct.py).

The direct path must be invisible: the same rows, row counts and error classes as the
cursor path, in and out of transactions and in autocommit mode; opening a transaction
with psycopg's own BEGIN (isolation level, read-only); never used where psycopg has work
to do (a failed transaction, prepared statements disabled); never run a statement psycopg
has deallocated (DDL, DISCARD ALL).  Prepared statements outlive a rollback unless the
rolled-back transaction changed the schema, and one whose result type another session
changed is prepared again after the error psycopg would give.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.dbapi.direct import DirectExecutor


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
        conn.rollback()
        cur.execute("SELECT name FROM acct WHERE id = %s", (2,))
        assert cur.fetchall() == [("b",)]


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
        for _ in range(3):
            cur.execute("SELECT name FROM acct WHERE id = %s", (1,))
        assert direct_runs[-1]
        with pytest.raises(psycopg.errors.UniqueViolation):
            cur.execute("INSERT INTO acct (id) VALUES (%s)", (1,))
        direct_runs.clear()
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            cur.execute("SELECT name FROM acct WHERE id = %s", (1,))
        assert direct_runs == [False]  # psycopg reports the failed transaction


def test_opens_transactions_as_psycopg_would(
    dsn: str, master_key: Any, direct_runs: list[bool]
) -> None:
    """A transaction's first statement, run directly, sends psycopg's BEGIN: with the
    connection's isolation level and read-only setting."""
    with adaptive_client.connect(dsn, master_key=master_key) as conn:
        conn.pg.prepare_threshold = 1
        conn.isolation_level = psycopg.IsolationLevel.SERIALIZABLE
        conn.pg.read_only = True
        cur = conn.cursor()
        for _ in range(3):
            cur.execute("SELECT name FROM acct WHERE id = %s", (1,))
            conn.commit()
        direct_runs.clear()
        cur.execute("SELECT name FROM acct WHERE id = %s", (1,))
        assert direct_runs == [True] and cur.fetchall() == [("a",)]
        assert conn.pg.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
        got = conn.pg.execute(
            "SELECT current_setting('transaction_isolation'), "
            "current_setting('transaction_read_only')"
        ).fetchone()
        assert got == ("serializable", "on")
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            cur.execute("UPDATE acct SET name = %s WHERE id = %s", ("z", 1))
        conn.rollback()
        conn.pg.read_only = None
        cur.execute("SELECT name FROM acct WHERE id = %s", (1,))
        assert cur.fetchall() == [("a",)]


def test_begin_and_first_statement_share_a_round_trip(
    dsn: str, master_key: Any, direct_runs: list[bool], tmp_path: Any, monkeypatch: Any
) -> None:
    """BEGIN goes with the transaction's first statement before one Sync (one round trip,
    as psycopg's pipeline sends them); a first statement that fails leaves the transaction
    failed, as BEGIN and the statement sent apart would, and the connection usable."""
    with adaptive_client.connect(dsn, master_key=master_key) as conn:
        conn.pg.prepare_threshold = 1
        cur = conn.cursor()
        sql = "SELECT name FROM acct WHERE id = %s"
        for _ in range(3):
            cur.execute(sql, (1,))
            conn.commit()
        trace = tmp_path / "protocol.trace"
        with trace.open("w") as out:
            conn.pg.pgconn.trace(out.fileno())
            conn.pg.pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS)
            direct_runs.clear()
            cur.execute(sql, (2,))
            conn.pg.pgconn.untrace()
        assert direct_runs == [True] and cur.fetchall() == [("b",)]
        sent = [line.split("\t")[2] for line in trace.read_text().splitlines() if line[0] == "F"]
        assert sent.count("Sync") == 1 and sent[-1] == "Sync", sent
        assert sent.count("Execute") == 2, sent  # BEGIN and the statement
        assert not conn.pg.pgconn.pipeline_status
        conn.commit()

        insert = "INSERT INTO acct (id, name, bal) VALUES (%s, %s, %s)"
        for n in range(3):
            cur.execute(insert, (40 + n, "x", 0))
            conn.commit()
        opened: list[bytes] = []
        original = DirectExecutor._begin_and_run

        def spy(self: DirectExecutor, begin: bytes, *args: Any) -> Any:
            opened.append(begin)
            return original(self, begin, *args)

        monkeypatch.setattr(DirectExecutor, "_begin_and_run", spy)
        with pytest.raises(psycopg.errors.UniqueViolation):
            cur.execute(insert, (40, "x", 0))  # the transaction's first statement fails
        assert opened == [b"BEGIN"]
        assert not conn.pg.pgconn.pipeline_status
        status = conn.pg.info.transaction_status
        assert status == psycopg.pq.TransactionStatus.INERROR
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            cur.execute(sql, (1,))
        conn.rollback()
        cur.execute(sql, (1,))
        assert cur.fetchall() == [("a",)]


def _server_statements(conn: Any) -> set[str]:
    rows = conn.pg.execute("SELECT name FROM pg_prepared_statements").fetchall()
    return {r[0] for r in rows}


def test_statements_outlive_a_rollback(dsn: str, master_key: Any, direct_runs: list[bool]) -> None:
    """A serialization failure or an application's rollback keeps the prepared
    statements, on the server and in psycopg's cache (psycopg alone would deallocate them
    all and parse each again); the statements still answer rightly afterwards."""
    with adaptive_client.connect(dsn, master_key=master_key) as conn:
        conn.pg.prepare_threshold = 1
        cur = conn.cursor()
        for n in range(3):
            cur.execute("UPDATE acct SET name = %s WHERE id = %s", (f"u{n}", 2))
            cur.execute("SELECT name FROM acct WHERE id = %s", (2,))
        assert direct_runs[-2:] == [True, True]
        before = _server_statements(conn)
        assert before
        conn.rollback()
        with pytest.raises(psycopg.errors.UniqueViolation):
            cur.execute("INSERT INTO acct (id) VALUES (%s)", (1,))  # a failed transaction
        conn.rollback()
        assert before <= _server_statements(conn)
        direct_runs.clear()
        cur.execute("SELECT name FROM acct WHERE id = %s", (2,))
        assert cur.fetchall() == [("b",)]
        cur.execute("UPDATE acct SET name = %s WHERE id = %s", ("v", 2))
        cur.execute("SELECT name FROM acct WHERE id = %s", (2,))
        assert cur.fetchall() == [("v",)] and cur.rowcount == 1
        assert direct_runs == [True, True, True]
        conn.rollback()


def test_a_rolled_back_schema_change_drops_them(
    dsn: str, master_key: Any, direct_runs: list[bool]
) -> None:
    """A statement prepared in a transaction that altered a table would come back after
    the rollback with the plan of a schema that never was: such a rollback drops them."""
    with adaptive_client.connect(dsn, master_key=master_key) as conn:
        conn.pg.prepare_threshold = 1
        cur = conn.cursor()
        for _ in range(3):
            cur.execute("SELECT * FROM acct WHERE id = %s", (1,))
        assert direct_runs[-1]
        conn.commit()
        cur.execute("ALTER TABLE acct ADD COLUMN extra integer")
        for _ in range(3):
            cur.execute("SELECT * FROM acct WHERE id = %s", (1,))
            assert cur.fetchall() == [(1, "a", Decimal("1.50"), None)]
        conn.rollback()
        assert not _server_statements(conn)
        direct_runs.clear()
        for _ in range(3):
            cur.execute("SELECT * FROM acct WHERE id = %s", (1,))
            assert cur.fetchall() == [(1, "a", Decimal("1.50"))]
        assert direct_runs == [False, False, True]


@contextmanager
def _clear_int_column(dsn: str, master_key: Any) -> Iterator[tuple[Any, Any, str, str]]:
    """A table whose integer ``v`` is stored in the clear, ``SELECT v ... WHERE id = %s``
    prepared and run directly: (connection, cursor, stored column, stored table)."""
    config = {"tables": {"t": {"v": {"onions": ["Single"], "layer": "PLAIN"}}}}
    with adaptive_client.connect(dsn, master_key=master_key, config=config) as conn:
        conn.pg.prepare_threshold = 1
        cur = conn.cursor()
        cur.execute("CREATE TABLE t (id integer PRIMARY KEY, v integer)")
        cur.execute("INSERT INTO t VALUES (1, 7)")
        conn.commit()
        for _ in range(3):
            cur.execute("SELECT v FROM t WHERE id = %s", (1,))
        assert cur.fetchall() == [(7,)]
        conn.commit()
        (column, table), *_ = (  # as the prepared SELECT names them
            (m[1].decode(), m[2].decode())
            for sql, _types in conn.pg._prepared._names
            if (m := re.match(rb'SELECT "a0"\."(\w+)" FROM "(\w+)"', sql))
        )
        yield conn, cur, column, table


def test_a_result_type_changed_elsewhere_is_prepared_again(
    new_database: Any, master_key: Any, direct_runs: list[bool]
) -> None:
    """A DBA changes the type of a stored column a prepared statement returns (one kept
    in the clear): the next execution fails as it would through psycopg ("cached plan
    must not change result type"), and after the rollback the statement is prepared
    again instead of failing on every retry."""
    dsn = new_database("directtype")
    with _clear_int_column(dsn, master_key) as (conn, cur, column, table):
        assert direct_runs[-1]
        with psycopg.connect(dsn, autocommit=True) as dba:
            dba.execute(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE bigint")
        with pytest.raises(psycopg.errors.FeatureNotSupported):
            cur.execute("SELECT v FROM t WHERE id = %s", (1,))
        conn.rollback()
        direct_runs.clear()
        for _ in range(3):
            cur.execute("SELECT v FROM t WHERE id = %s", (1,))
            assert cur.fetchall() == [(7,)]
        assert direct_runs == [False, False, True]


def test_a_savepoint_rolled_back_over_a_schema_change(
    new_database: Any, master_key: Any, direct_runs: list[bool]
) -> None:
    """The application alters a stored column on the client's own session inside a
    savepoint (psycopg drops its statements at the ALTER), a statement is prepared again
    for the new type, ROLLBACK TO SAVEPOINT: the statements go then, as psycopg drops
    them after any ROLLBACK, so the old type's rows read again without an error."""
    with _clear_int_column(new_database("directsavepoint"), master_key) as found:
        conn, cur, column, table = found
        conn.pg.execute("SAVEPOINT s")
        conn.pg.execute(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE bigint")
        for _ in range(3):
            cur.execute("SELECT v FROM t WHERE id = %s", (1,))
            assert cur.fetchall() == [(7,)]
        assert direct_runs[-1]
        conn.pg.execute("ROLLBACK TO SAVEPOINT s")
        for _ in range(3):
            cur.execute("SELECT v FROM t WHERE id = %s", (1,))
            assert cur.fetchall() == [(7,)]
        conn.commit()
