"""What the server sees of an error the client detects (docs/security.md, "Errors the
client detects"): one fixed statement that fails the transaction, nothing of the
failing statement, its values or its error."""

from __future__ import annotations

from collections.abc import Callable

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.dbapi.retries import FAIL_TRANSACTION

SECRET = "Zanzibar-7731"
ERRORS = [
    (f"INSERT INTO vault VALUES (2, '{SECRET}', 1)", psycopg.errors.StringDataRightTruncation),
    ("INSERT INTO vault VALUES (3, 'ok', 98765432101)", psycopg.errors.NumericValueOutOfRange),
    (f"SELECT id FROM vault WHERE label = '{SECRET}' AND", psycopg.errors.SyntaxError),
    (f"SELECT {SECRET.split('-')[0]} FROM vault", psycopg.errors.UndefinedColumn),
]


@pytest.mark.parametrize(("sql", "error"), ERRORS)
def test_the_server_sees_one_fixed_statement(
    new_database: Callable[..., str], sql: str, error: type[Exception]
) -> None:
    dsn = new_database("clierr")
    with adaptive_client.connect(dsn, master_key=MasterKey.generate()) as conn:
        conn.execute("CREATE TABLE vault (id integer PRIMARY KEY, label varchar(8), n integer)")
        conn.commit()
        conn.execute("INSERT INTO vault VALUES (1, 'first', 1)")
        pid = conn.pg.info.backend_pid
        with pytest.raises(error):
            conn.execute(sql)
        with psycopg.connect(dsn) as watcher:
            seen = watcher.execute(
                "SELECT query, state FROM pg_stat_activity WHERE pid = %s", (pid,)
            ).fetchone()
        assert seen is not None
        query, state = seen
        assert query.encode() == FAIL_TRANSACTION
        assert state == "idle in transaction (aborted)"
        assert SECRET not in query and "Zanzibar" not in query
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            conn.execute("SELECT 1")
        conn.rollback()
        assert conn.execute("SELECT count(*) FROM vault").fetchall() == [(0,)]
