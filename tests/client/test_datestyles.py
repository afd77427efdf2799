"""A session whose DateStyle is not ISO ('Postgres, MDY', 'SQL, DMY'), judged against
PostgreSQL: the client reads the server's clock and evaluates run-time defaults in
binary, so statements that read the clock (now(), a DEFAULT now()) answer; they failed
with an error without a SQLSTATE (psycopg's text loader reads only ISO dates)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted, script_differences

SCRIPT = [
    "SET DateStyle = 'Postgres, MDY'",
    "CREATE TABLE ds (id int, at timestamptz DEFAULT now(), d date DEFAULT current_date,"
    " t timestamp)",
    "INSERT INTO ds (id, t) VALUES (1, '2024-01-02 03:04:05')",
    "SELECT id, at IS NOT NULL, d IS NOT NULL FROM ds",
    "SELECT id FROM ds WHERE at > now() - interval '1 day'",
    "SELECT count(*) FROM ds WHERE t < now()",
    "SELECT d1.t - d2.t FROM ds d1, ds d2",
    "SET DateStyle = 'SQL, DMY'",
    "INSERT INTO ds (id, t) VALUES (2, '03/01/2024 10:00')",
    "SELECT id FROM ds WHERE t > '01/01/2024' ORDER BY id",
    "RESET DateStyle",
    "SELECT id, t FROM ds ORDER BY id",
]


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "datestyles", {}, [], {}) as pair:
        yield pair


def test_non_iso_datestyles_as_in_postgresql(pair: Pair) -> None:
    assert script_differences(pair, SCRIPT) == []
