"""UPDATE ... FROM and DELETE ... USING whose other tables are joined by JOIN ... ON or
USING, judged against PostgreSQL: the join's condition restricts the rows written.  It
was dropped -- every row of the target matching the WHERE against any row of the first
table was updated or deleted.  An outer join there is run by the rows, as any FROM
whose values the client computes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted

SCHEMA = [
    "CREATE TABLE t1 (a integer, b integer)",
    "CREATE TABLE t2 (a integer, b integer)",
    "CREATE TABLE t3 (x integer PRIMARY KEY, y integer)",
]
ROWS = {
    "t1": [(5, 10), (200, 1000), (7, 1)],
    "t2": [(200, 2000), (7, 3)],
    "t3": [(6, 7), (500, 100), (8, 1), (300, 4)],
}
SCRIPT = [
    "UPDATE t3 SET y = 0 FROM t1 JOIN t2 ON t1.a = t2.a WHERE t3.x > t1.a",
    "SELECT * FROM t3 ORDER BY x",
    "UPDATE t3 SET y = 5 FROM t1 AS p JOIN t2 AS q USING (a) WHERE t3.x > p.a AND q.b < 10",
    "SELECT * FROM t3 ORDER BY x",
    "UPDATE t3 SET y = 2 FROM t1 INNER JOIN t2 ON t1.a = t2.a AND t2.b > 1000 "
    "WHERE t3.x > t1.a RETURNING t3.x, t3.y",
    "DELETE FROM t3 USING t1 JOIN t2 USING (a) WHERE t3.x > t1.a AND t3.x < 10",
    "SELECT * FROM t3 ORDER BY x",
    "DELETE FROM t3 USING t1 INNER JOIN t2 ON t1.a = t2.a AND t2.b > 1000 "
    "WHERE t3.x > t1.a RETURNING t3.x",
    "SELECT * FROM t3 ORDER BY x",
]


def _outcome(conn: Any, sql: str) -> tuple[Any, ...]:
    cur = conn.cursor()
    try:
        cur.execute(sql)
    except psycopg.Error as exc:
        return ("error", exc.sqlstate)
    rows = sorted(cur.fetchall()) if cur.description is not None else None
    return ("ok", rows, cur.rowcount)


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "upd_from", {}, SCHEMA, ROWS) as pair:
        yield pair


def test_joined_tables_restrict_the_rows_written(pair: Pair) -> None:
    plain, enc = pair
    for sql in SCRIPT:
        assert _outcome(enc, sql) == _outcome(plain, sql), sql


def test_an_outer_join_is_run_by_the_rows_as_postgresql_runs_it(pair: Pair) -> None:
    """(compile/update_rows.py: the read joins the FROM's tables, outer joins too)"""
    for sql in (
        "UPDATE t3 SET y = 9 FROM t1 LEFT JOIN t2 ON t1.a = t2.a WHERE t3.x = 6",
        "UPDATE t3 SET y = t3.y + coalesce(t2.b, -1) FROM t1 LEFT JOIN t2 ON t1.a = t2.a"
        " WHERE t3.x = t1.a + 1",
        "SELECT * FROM t3 ORDER BY x",
    ):
        assert _outcome(pair[1], sql) == _outcome(pair[0], sql), sql


def test_a_column_assigned_twice_is_42601_whether_or_not_a_row_matches(pair: Pair) -> None:
    plain, enc = pair
    for where in ("x = 99", "x = 6"):
        sql = f"UPDATE t3 SET (y, x) = (1, x + 1), y = 2 WHERE {where}"
        assert _outcome(enc, sql) == _outcome(plain, sql) == ("error", "42601")


def test_ddl_in_a_failed_transaction_is_25p02(pair: Pair) -> None:
    """PostgreSQL's answer to any statement in a failed transaction; the client tried a
    savepoint around the DDL, which failed first (and psycopg logged its rollback)."""
    for conn in pair:
        conn.execute("BEGIN")
        with pytest.raises(psycopg.errors.DivisionByZero):
            conn.execute("SELECT 1 / 0")
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            conn.execute("CREATE TABLE t4 (a integer)")
        conn.execute("ROLLBACK")
