"""ALTER INDEX ... RENAME TO through the client, judged against PostgreSQL: an index,
and the index of a UNIQUE or PRIMARY KEY constraint (which renames the constraint, as
its errors then show), PostgreSQL's errors for a missing index or a name taken, and a
new index made under the old name (its server indexes named apart).  It was refused."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import psycopg
import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted, script_differences

SCRIPT = [
    "CREATE INDEX t_a_idx ON t (a)",
    "ALTER INDEX t_a_idx RENAME TO t_a_renamed",
    "ALTER INDEX t_a_idx RENAME TO t_x",
    "ALTER INDEX IF EXISTS t_a_idx RENAME TO t_x",
    "ALTER INDEX t_a_renamed RENAME TO t_b_key",
    "ALTER INDEX t_a_renamed RENAME TO t",
    "ALTER INDEX t_b_key RENAME TO t_b_unique",
    "ALTER INDEX t_pkey RENAME TO t_primary",
    "CREATE INDEX t_a_idx ON t (a)",
    "INSERT INTO t VALUES (1, 1, 'x')",
    "DROP INDEX t_a_renamed",
    "DROP INDEX t_a_idx",
    "SELECT id FROM t WHERE a = 1",
]


def _error(conn: object, sql: str) -> tuple[str | None, str]:
    try:
        conn.execute(sql)  # type: ignore[attr-defined]
    except psycopg.Error as exc:
        return exc.sqlstate, str(exc).splitlines()[0]
    return None, ""


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(
        new_database,
        master_key,
        "rename_index",
        {},
        ["CREATE TABLE t (id int PRIMARY KEY, a int, b text UNIQUE)"],
        {},
    ) as pair:
        yield pair


def test_rename_index_as_postgresql(pair: Pair) -> None:
    assert script_differences(pair, SCRIPT) == []
    # the keys' renamed constraints, as their violations name them
    for sql in ("INSERT INTO t VALUES (1, 2, 'y')", "INSERT INTO t VALUES (2, 2, 'x')"):
        assert _error(pair[1], sql) == _error(pair[0], sql)
