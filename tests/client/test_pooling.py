"""A connection told it is behind a transaction pooler (dbapi/pooling.py), on a direct
connection: the option read out of the connection string, what the client stops doing,
and the session state it refuses.  tests/cluster/test_pgbouncer.py runs the same through
PgBouncer itself."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.dbapi.notifications import EpochListener, EpochPoller
from adaptive_client.dbapi.pooling import Pooling, check_server_call, check_session_command
from adaptive_client.dbapi.pooling import strip_option as strip
from adaptive_client.errors import ConfigError, PoolerUnsupported
from adaptive_client.syntax.sqltext import parse, session_command


@pytest.mark.parametrize(
    ("conninfo", "rest", "mode"),
    [
        (
            "host=a port=6432 pool_mode=transaction dbname=x",
            "host=a port=6432 dbname=x",
            "transaction",
        ),
        ("pool_mode = 'session'", "", "session"),
        (
            "host=a password='p w\\' x' pool_mode=transaction",
            "host=a password='p w\\' x'",
            "transaction",
        ),
        (
            "postgresql://u:p@h:6543/db?sslmode=require&pool_mode=transaction",
            "postgresql://u:p@h:6543/db?sslmode=require",
            "transaction",
        ),
        ("postgres://h/db?pool_mode=none", "postgres://h/db", "none"),
        ("host=a dbname=x", "host=a dbname=x", None),
        ("postgresql://h/db?application_name=x", "postgresql://h/db?application_name=x", None),
        ("", "", None),
    ],
)
def test_the_option_is_taken_out_of_the_string(conninfo: str, rest: str, mode: str | None) -> None:
    assert strip(conninfo) == (rest, mode)


POOLED = Pooling("transaction", detected=False, prepare=False)
SESSION = Pooling("session", detected=False, prepare=True)

REFUSED = [
    "SET search_path = x",
    "set Search_Path to x",
    "SET SESSION statement_timeout = 1",
    "/* why */ SET lock_timeout = '1s'",
    "SET app.user = 'ann'",
    "RESET ALL",
    "RESET statement_timeout",
    "SET ROLE postgres",
    "RESET ROLE",
    "SET SESSION AUTHORIZATION postgres",
    "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY",
    "LISTEN events",
]
ALLOWED = [
    "SET LOCAL search_path = x",
    "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
    "SET CONSTRAINTS ALL DEFERRED",
    "SET TIME ZONE 'UTC'",
    "SET timezone TO 'UTC'",
    "SET SESSION DateStyle = 'ISO, MDY'",
    'SET "DateStyle" = ISO',
    "SET NAMES 'UTF8'",
    "SET client_encoding = 'UTF8'",
    "SET application_name = 'app'",
    "SET standard_conforming_strings = on",
    "RESET TimeZone",
    "NOTIFY events",
    "UNLISTEN *",
    "SHOW search_path",
    "BEGIN",
]


@pytest.mark.parametrize("stmt", REFUSED)
def test_session_commands_refused(stmt: str) -> None:
    kind = session_command(stmt)
    assert kind is not None
    with pytest.raises(PoolerUnsupported):
        check_session_command(POOLED, kind, stmt)
    check_session_command(SESSION, kind, stmt)  # (a session pooler keeps them)


@pytest.mark.parametrize("stmt", ALLOWED)
def test_session_commands_allowed(stmt: str) -> None:
    kind = session_command(stmt)
    assert kind is not None
    check_session_command(POOLED, kind, stmt)


@pytest.mark.parametrize(
    ("stmt", "refused"),
    [
        ("SELECT pg_advisory_lock(1)", True),
        ("SELECT pg_try_advisory_lock_shared(1, 2)", True),
        ("SELECT pg_advisory_unlock_all()", True),
        ("SELECT pg_advisory_xact_lock(1)", False),
        ("SELECT pg_try_advisory_xact_lock(1) AS got", False),
        ("SELECT set_config('app.user', 'ann', false)", True),
        ("SELECT set_config('app.user', 'ann', true)", False),
        ("SELECT set_config('application_name', 'x', false)", False),
        ("SELECT current_setting('app.user')", False),
    ],
)
def test_server_calls(stmt: str, refused: bool) -> None:
    tree = parse(stmt)[0]
    if refused:
        with pytest.raises(PoolerUnsupported):
            check_server_call(POOLED, tree)
    else:
        check_server_call(POOLED, tree)
    check_server_call(SESSION, tree)


def test_told_on_a_direct_connection(pg_dsn: str, master_key: Any) -> None:
    """``pool_mode=transaction`` in the string: nothing prepared, no LISTEN, no session
    setting of the client's own, the application's session state refused; the answers
    as always."""
    direct = adaptive_client.connect(pg_dsn, master_key=master_key)
    assert direct.pooling == Pooling("none", detected=False, prepare=True)
    assert isinstance(direct._notifications, EpochListener)
    assert direct.execute("SHOW jit").fetchone() == ("off",)
    direct.close()
    conn = adaptive_client.connect(f"{pg_dsn} pool_mode=transaction", master_key=master_key)
    try:
        assert conn.pooling == Pooling("transaction", detected=False, prepare=False)
        assert isinstance(conn._notifications, EpochPoller)
        assert conn.pg.prepare_threshold is None and conn.control.prepare_threshold is None
        assert conn.execute("SHOW jit").fetchone() != ("off",) or _server_jit_off(pg_dsn)
        conn.execute("DROP TABLE IF EXISTS pooled_t")
        conn.execute("CREATE TABLE pooled_t (id integer PRIMARY KEY, v text)")
        conn.commit()
        for i in range(10):
            conn.execute("INSERT INTO pooled_t VALUES (%s, %s)", (i, f"v{i}"))
            assert conn.execute("SELECT v FROM pooled_t WHERE id = %s", (i,)).fetchall() == [
                (f"v{i}",)
            ]
            conn.commit()
        assert not conn.pg._prepared._names  # nothing prepared, however often repeated
        with pytest.raises(PoolerUnsupported):
            conn.execute("SET search_path = public")
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            conn.execute("SELECT 1")
        conn.rollback()
        with pytest.raises(PoolerUnsupported):
            conn.cursor("c", withhold=True)
        # another client's DDL is seen at the next transaction, without a notification
        with adaptive_client.connect(pg_dsn, master_key=master_key, autocommit=True) as other:
            other.execute("ALTER TABLE pooled_t ADD COLUMN w integer")
        assert conn.execute("SELECT w FROM pooled_t WHERE id = %s", (1,)).fetchall() == [(None,)]
        conn.commit()
    finally:
        conn.close()


def _server_jit_off(dsn: str) -> bool:
    with psycopg.connect(dsn) as c:
        row = c.execute("SELECT reset_val FROM pg_settings WHERE name = 'jit'").fetchone()
    return row == ("off",)


def test_bad_pool_mode(pg_dsn: str, master_key: Any) -> None:
    with pytest.raises(ConfigError):
        adaptive_client.connect(pg_dsn, master_key=master_key, pool_mode="statement")
    with adaptive_client.connect(pg_dsn, master_key=master_key, pool_mode="SESSION") as conn:
        assert conn.pooling.mode == "session" and conn.pooling.prepare
    with adaptive_client.connect(pg_dsn, master_key=master_key, prepare=False) as conn:
        assert conn.pooling == Pooling("none", detected=False, prepare=False)
        assert conn.pg.prepare_threshold is None
