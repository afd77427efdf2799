"""A job queue's claim through the client: ``UPDATE jobs SET ... WHERE id = (SELECT id
FROM jobs WHERE state = 'new' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING
...``, the same with ``IN``, and ``DELETE`` likewise.  The subquery's ORDER BY, LIMIT
and lock run on the server (compile/bounded_subqueries.py): it was refused.  Judged
against PostgreSQL statement by statement, and under concurrency: a worker holding its
claimed row locked makes the next worker skip to the next job, not wait for it nor take
the same one."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import pytest

import adaptive_client
from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted, script_differences

DDL = [
    "CREATE TABLE jobs (id serial PRIMARY KEY, state text NOT NULL DEFAULT 'new', "
    "attempts int NOT NULL DEFAULT 0, payload text)",
]
ROWS = {"jobs": [(i, "new", 0, f"job {i}") for i in range(1, 6)]}

CLAIM = (
    "UPDATE jobs SET state = 'running', attempts = attempts + 1 WHERE id = (SELECT id FROM "
    "jobs WHERE state = 'new' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id, attempts"
)

SCRIPT = [
    # (first: the Ord onion the subquery orders by is built by this statement)
    "SELECT id FROM jobs WHERE id = (SELECT id FROM jobs ORDER BY id LIMIT 1 FOR SHARE NOWAIT)",
    CLAIM,
    "UPDATE jobs SET state = 'running' WHERE id IN (SELECT id FROM jobs WHERE state = 'new' "
    "ORDER BY id DESC LIMIT 2 FOR UPDATE SKIP LOCKED) RETURNING id",
    "SELECT id FROM jobs WHERE id IN (SELECT id FROM jobs WHERE state = 'new' ORDER BY id "
    "LIMIT 1 OFFSET 1 FOR NO KEY UPDATE)",
    "DELETE FROM jobs WHERE id = (SELECT id FROM jobs WHERE state = 'running' ORDER BY id "
    "LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING payload",
    "DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE state = 'done' LIMIT 1) RETURNING id",
    "SELECT id FROM jobs WHERE id = (SELECT id FROM jobs ORDER BY id LIMIT 1 FOR SHARE NOWAIT)",
    "SELECT id FROM jobs WHERE id = (SELECT id FROM jobs ORDER BY id LIMIT 1 FOR UPDATE OF nope)",
    "SELECT id, state, attempts FROM jobs ORDER BY id",
]


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "jobs", {}, DDL, ROWS) as pair:
        yield pair


def test_claims_as_postgresql(pair: Pair) -> None:
    assert script_differences(pair, SCRIPT) == []


def test_a_locked_job_is_skipped(pair: Pair, master_key: MasterKey) -> None:
    """Worker A claims job 1 in a transaction it keeps open; worker B's claim skips it
    and takes job 2 at once; after A's commit, job 3 is next."""
    _, a = pair
    b = adaptive_client.connect(a.info.dsn, master_key=master_key.hex(), autocommit=True)
    try:
        a.execute("BEGIN")
        assert a.execute(CLAIM).fetchall() == [(1, 1)]
        claimed: list[object] = []
        worker = threading.Thread(target=lambda: claimed.extend(b.execute(CLAIM).fetchall()))
        worker.start()
        worker.join(timeout=30)  # (a wait on A's row lock would hang here)
        assert not worker.is_alive(), "the claim waited for the locked job"
        assert claimed == [(2, 1)]
        a.execute("COMMIT")
        assert b.execute(CLAIM).fetchall() == [(3, 1)]
    finally:
        if a.info.transaction_status.name != "IDLE":
            a.execute("ROLLBACK")
        b.close()


def test_a_text_order_does_not_choose_rows(pair: Pair) -> None:
    """What docs/security.md says of these subqueries: the server chooses rows by an
    exact order only -- a text column's Ord onion orders a prefix, so a subquery ordered
    by text and limited is refused (PostgreSQL answers it), nothing written."""
    _, enc = pair
    before = enc.execute("SELECT id, state FROM jobs ORDER BY id").fetchall()
    with pytest.raises(adaptive_client.UnsupportedQuery):
        enc.execute(
            "UPDATE jobs SET state = 'x' WHERE id IN (SELECT id FROM jobs ORDER BY payload "
            "LIMIT 1 FOR UPDATE)"
        )
    assert enc.execute("SELECT id, state FROM jobs ORDER BY id").fetchall() == before
