"""lag/lead with a default, judged against PostgreSQL: a default of the value's own type
answers; one of another type, to which PostgreSQL gives the common type (each value
with its own display scale), is refused -- the client engine cast it to the value's
type (``lag(i, 1, 0.7)`` gave 1)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, outcome, plain_and_encrypted, script_differences

SETUP = [
    "CREATE TABLE t (ten int, four int, p numeric(6,2))",
    "INSERT INTO t VALUES (0, 0, 1.50), (5, 1, 2), (9, 1, NULL)",
]
ANSWERED = [
    "SELECT lag(ten, 1, 0) OVER (PARTITION BY four ORDER BY ten), ten FROM t ORDER BY four, ten",
    "SELECT lead(ten, 1, -1) OVER (ORDER BY ten), ten FROM t ORDER BY ten",
    "SELECT lag(p, 1, p) OVER (ORDER BY ten), ten FROM t ORDER BY ten",
]
REFUSED = [
    "SELECT lag(ten, 1, 0.7) OVER (PARTITION BY four ORDER BY ten) FROM t",
    "SELECT lead(ten * 2, 1, -1.4) OVER (ORDER BY ten) FROM t",
    "SELECT lag(p, 1, 0) OVER (ORDER BY ten) FROM t",
]


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "lag_defaults", {}, SETUP, {}) as pair:
        yield pair


def test_defaults_of_the_value_type_answer(pair: Pair) -> None:
    assert script_differences(pair, ANSWERED) == []


@pytest.mark.parametrize("sql", REFUSED)
def test_defaults_of_another_type_are_refused(pair: Pair, sql: str) -> None:
    plain, enc = pair
    assert outcome(plain, sql)[0] == "rows"
    assert outcome(enc, sql) == ("error", "0A000")
