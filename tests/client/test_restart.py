"""A transaction that has only read, started again under a statement another client's
adaptation made stale (dbapi/restart.py).

Another client builds an onion of ``item.qty`` (its readable onion is renamed); this
client's metadata predates the build, its transaction is open.  Where the transaction
has run plain reads only, under READ COMMITTED, the client rolls it back and runs the
stale statement again in a new one: the application sees its statement succeed, the
answers equal plain PostgreSQL's, and what it writes next is committed.  Everywhere else
the statement fails with a retryable error and the transaction is left failed, as
PostgreSQL leaves a transaction after an error.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.errors import RetryableError, StaleMetadata
from adaptive_client.stats import STATS

from .test_on_demand import CONFIG, Pair, _builds, _make, _norm

BUILD = "SELECT id FROM item WHERE qty > 2 ORDER BY id"  # builds qty's Ord onion
STALE_READ = "SELECT id, qty FROM item WHERE id < 6 ORDER BY id"


@pytest.fixture()
def pair(new_database: Any, master_key: Any) -> Iterator[tuple[Pair, Any]]:
    """The pair of test_on_demand.py, and a second client of the encrypted database whose
    metadata is read (before any build)."""
    p = _make(new_database, master_key)
    stale = adaptive_client.connect(p.dsn, master_key=master_key, peel="server", config=CONFIG)
    stale.execute("SELECT count(*) FROM item").fetchall()
    stale.rollback()
    yield p, stale
    stale.close()
    p.close()


def _expected(p: Pair, query: str) -> list[tuple[str, ...]]:
    return _norm(p.plain.execute(query).fetchall())


def test_a_stale_read_after_reads_is_run_again(pair: tuple[Pair, Any]) -> None:
    p, stale = pair
    # (reads of another table: the build waits for the transactions holding this one)
    assert stale.execute("SELECT count(*) FROM note").fetchall() == [(0,)]
    assert stale.execute("SELECT id FROM note WHERE id > 3").fetchall() == []
    p.check(BUILD)
    assert {b[0] for b in _builds(p)} == {"Ord"}  # (qty's and id's)
    retries = STATS.retries
    assert _norm(stale.execute(STALE_READ).fetchall()) == _expected(p, STALE_READ)
    assert STATS.retries == retries + 1
    # the transaction goes on (a new one): what it writes is kept
    stale.execute("INSERT INTO note VALUES (7)")
    stale.commit()
    assert p.enc.execute("SELECT id FROM note").fetchall() == [(7,)]


def test_a_stale_write_after_reads_is_run_again_with_the_new_onion(
    pair: tuple[Pair, Any],
) -> None:
    p, stale = pair
    stale.execute("SELECT count(*) FROM note").fetchall()
    p.check(BUILD)
    stale.execute("UPDATE item SET qty = 40 WHERE id = 2")
    stale.execute("INSERT INTO item VALUES (300, 'stale', 1, NULL, -40)")
    stale.commit()
    p.plain.execute("UPDATE item SET qty = 40 WHERE id = 2")
    p.plain.execute("INSERT INTO item VALUES (300, 'stale', 1, NULL, -40)")
    # (over the built Ord onion: the rows the restarted transaction wrote carry it)
    p.check("SELECT id, qty FROM item WHERE qty > 30 OR qty < -30 ORDER BY qty, id")
    p.check("SELECT min(qty), max(qty) FROM item")


def _fails_and_stays_failed(stale: Any) -> None:
    with pytest.raises(StaleMetadata, match="another client changed the onions") as info:
        stale.execute(STALE_READ)
    assert isinstance(info.value, RetryableError) and info.value.sqlstate == "40001"
    with pytest.raises(psycopg.errors.InFailedSqlTransaction):
        stale.execute("SELECT count(*) FROM note")
    stale.rollback()


@pytest.mark.parametrize(
    "before",
    [
        "INSERT INTO note VALUES (1)",  # a write
        "SELECT id FROM note FOR UPDATE",  # rows locked
        "SELECT count(*) FROM note WHERE now() > '2000-01-01'",  # the transaction's clock
        "SELECT pg_advisory_xact_lock(42)",  # a server call
        "SET LOCAL statement_timeout = '1min'",  # a session command
    ],
)
def test_not_run_again_after_what_is_not_a_plain_read(pair: tuple[Pair, Any], before: str) -> None:
    p, stale = pair
    stale.execute("SELECT count(*) FROM note").fetchall()
    stale.execute(before)
    p.check(BUILD)
    _fails_and_stays_failed(stale)
    assert p.enc.execute("SELECT count(*) FROM note").fetchall() == [(0,)]
    assert _norm(stale.execute(STALE_READ).fetchall()) == _expected(p, STALE_READ)


def test_not_run_again_under_snapshot_isolation(pair: tuple[Pair, Any]) -> None:
    p, stale = pair
    stale.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
    stale.execute("SELECT count(*) FROM note").fetchall()
    p.check(BUILD)
    _fails_and_stays_failed(stale)


def test_not_run_again_where_the_server_default_is_not_read_committed(
    new_database: Any, master_key: Any
) -> None:
    p = _make(new_database, master_key)
    dbname = p.enc.control.info.dbname
    p.plain.execute(f'ALTER DATABASE "{dbname}" SET default_transaction_isolation = serializable')
    stale = adaptive_client.connect(p.dsn, master_key=master_key, peel="server", config=CONFIG)
    try:
        stale.execute("SELECT count(*) FROM item").fetchall()
        stale.rollback()
        stale.execute("SELECT count(*) FROM note").fetchall()
        p.check(BUILD)
        _fails_and_stays_failed(stale)
    finally:
        stale.close()
        p.close()


def test_not_run_again_with_a_server_side_cursor_open(pair: tuple[Pair, Any]) -> None:
    p, stale = pair
    streamed = stale.cursor("streamed")
    streamed.execute("SELECT id FROM note")
    p.check(BUILD)
    _fails_and_stays_failed(stale)
