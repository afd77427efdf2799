"""A ``numeric`` column without a precision in a client-evaluated statement, judged
against PostgreSQL: the client engine holds its values by their order keys
(engine/held.py), so comparisons with numbers, strings and parameters, ORDER BY,
DISTINCT, GROUP BY, count, min and max answer as PostgreSQL does.  Every such statement
was refused (0A000), and ``GROUP BY n`` leaked the engine's own error (no SQLSTATE)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, outcome, plain_and_encrypted, script_differences

SCRIPT = [
    "CREATE TABLE l (id int PRIMARY KEY, n numeric, m numeric(10,2))",
    "INSERT INTO l VALUES (1, 12.50, 1.5), (2, -0.001, 2), (3, 1e20, NULL), (4, NULL, 3.25),"
    " (5, 'NaN', 0), (6, 123456789012345678901234567890123456789012.5, 1)",
    "SELECT id FROM l WHERE n > 1 ORDER BY id",
    "SELECT id FROM l WHERE n > -1 ORDER BY n",
    "SELECT id FROM l ORDER BY n DESC",
    "SELECT id FROM l ORDER BY n NULLS FIRST, id",
    "SELECT id FROM l WHERE n BETWEEN 0 AND 100",
    "SELECT id FROM l WHERE n IN (12.5, 1e20) ORDER BY id",
    "SELECT id FROM l WHERE n = '12.5'",
    "SELECT n, count(*) FROM l WHERE id <> 5 GROUP BY n ORDER BY n",
    "SELECT DISTINCT n FROM l WHERE n <> 'NaN' ORDER BY n",
    "SELECT count(DISTINCT n), min(n), max(n) FROM l WHERE id < 5",
    "SELECT id FROM l WHERE n > 1 AND id < 3",
    "SELECT id FROM l WHERE n > 1 ORDER BY m, id",
]


# NaN is a value each side prints alike, but unequal to itself in Python: compared by repr
NAN_SCRIPT = [
    "SELECT id, n FROM l ORDER BY n DESC",
    "SELECT n, count(*) FROM l GROUP BY n ORDER BY n",
    "SELECT count(DISTINCT n), min(n), max(n) FROM l WHERE id > 1",
    "SELECT count(DISTINCT n) FROM l, (VALUES (1), (2)) AS twice (k)",
]


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "free_numeric", {}, [], {}) as pair:
        yield pair


def test_free_numeric_in_the_client_engine_as_in_postgresql(pair: Pair) -> None:
    assert script_differences(pair, SCRIPT) == []


def test_free_numeric_nan_as_in_postgresql(pair: Pair) -> None:
    plain, enc = pair
    script_differences(pair, SCRIPT[:2])
    for sql in NAN_SCRIPT:
        assert repr(outcome(enc, sql)) == repr(outcome(plain, sql)), sql


def test_parameter_compared_with_free_numeric(pair: Pair) -> None:
    plain, enc = pair
    for conn in pair:
        conn.execute("CREATE TABLE p (id int PRIMARY KEY, n numeric)")
        conn.execute("INSERT INTO p VALUES (1, 2.50), (2, 7), (3, NULL)")
    sql = "SELECT id FROM p WHERE n >= %s ORDER BY n"
    for value in (2.5, 3, "2.5"):
        assert outcome(enc, sql, (value,)) == outcome(plain, sql, (value,))
