"""A connection shared by threads, and a pool shared by many: per-connection state stays
per connection (sequence blocks above all), statements are serialised as psycopg
serialises them, and nothing hangs under row contention.

Each scenario runs in a child process under a timeout (scenarios.py)."""

from __future__ import annotations

import json
import os

import pytest

from .conftest import Pair
from .test_lock_waits import run

# seconds of the pool's run: a short one in every run, the long one with the slow suites
POOL_SECONDS = int(os.environ.get("ADAPTIVE_POOL_SECONDS", "60"))
SHORT_POOL_SECONDS = 10


def test_a_connection_among_threads_draws_distinct_serials(pair: Pair) -> None:
    plain = run("serial_threads", "plain", pair.plain, pair)
    enc = run("serial_threads", "adaptive", pair.enc, pair)
    assert enc["rows"] == [[10_000, 10_000]] == plain["rows"]
    assert enc["per_thread"] == plain["per_thread"] == [[w, 1250] for w in range(8)]
    # four threads in turn, one row each: the next four numbers, as PostgreSQL's
    assert enc["turns"] == plain["turns"] == [[1, 0], [2, 1], [3, 2], [4, 3]]


@pytest.mark.parametrize(
    "seconds",
    [
        pytest.param(SHORT_POOL_SECONDS, id="short"),
        pytest.param(POOL_SECONDS, id="long", marks=pytest.mark.slow),
    ],
)
def test_a_pool_of_5_for_20_threads_with_row_contention(pair: Pair, seconds: int) -> None:
    """``seconds`` of transactions on 5 hot rows through the client; then the same
    work, round for round, on plain PostgreSQL: the same rows, no update lost, no hang."""
    enc = run("pool_contention", "adaptive", pair.enc, pair, f"{seconds}s", timeout=seconds + 90)
    rounds = enc["rounds"]
    assert min(rounds) > 0, rounds
    plain = run(
        "pool_contention", "plain", pair.plain, pair, json.dumps(rounds), timeout=seconds + 90
    )
    assert plain["rounds"] == rounds
    assert enc["hot"] == plain["hot"]
    assert sum(n for _, n in enc["hot"]) == sum(rounds)
    assert enc["log"] == plain["log"]
    assert enc["ids"] == [[sum(rounds), sum(rounds)]]
