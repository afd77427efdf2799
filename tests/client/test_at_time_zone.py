"""``x AT TIME ZONE 'Area/City'`` evaluated by the client's engine (engine/transforms.py),
judged against PostgreSQL across daylight-saving changes: a timestamptz's local time
there (a timestamp), a timestamp read as the local time there (a timestamptz, shown in
the session's zone), nested, under and over date_trunc and in WHERE; an unknown Area/City zone is
22023.  It was refused.  A zone PostgreSQL reads as an abbreviation first (``CET``) is
still refused: the engine's IANA zone of that name keeps summer time."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted, script_differences

SCRIPT = [
    "SET TIME ZONE 'America/New_York'",
    "CREATE TABLE ev (id serial PRIMARY KEY, at timestamptz, t timestamp)",
    "INSERT INTO ev (at, t) VALUES ('2024-03-10 01:30:00-05', '2024-03-10 01:30'), ('2024-03-10 03:30:00-04', '2024-03-10 02:30'), ('2024-11-03 01:30:00-04', '2024-11-03 01:30'), ('2024-11-03 01:30:00-05', '2024-07-01 12:00'), (NULL, NULL)",
    "SELECT id, at AT TIME ZONE 'UTC', at AT TIME ZONE 'Europe/Paris', at AT TIME ZONE 'asia/tokyo' FROM ev ORDER BY id",
    "SELECT id, t AT TIME ZONE 'UTC', t AT TIME ZONE 'America/New_York', t AT TIME ZONE 'Europe/Paris' FROM ev ORDER BY id",
    "SELECT date_trunc('day', at AT TIME ZONE 'Asia/Kolkata') AS day, count(*) FROM ev GROUP BY 1 ORDER BY 1",
    "SELECT id FROM ev WHERE (at AT TIME ZONE 'UTC') > '2024-06-01' ORDER BY id",
    "SELECT id, at AT TIME ZONE 'Nowhere/City' FROM ev ORDER BY id",
    "SELECT id, (t AT TIME ZONE 'UTC') AT TIME ZONE 'Asia/Tokyo' FROM ev ORDER BY id",
    # date_trunc's result is its argument's type (a date's: the timestamptz one)
    "SELECT id, date_trunc('month', t) AT TIME ZONE 'UTC', date_trunc('day', at) AT TIME ZONE 'Europe/Paris' FROM ev ORDER BY id",
    "SELECT id, date_trunc('month', t::date) AT TIME ZONE 'Asia/Tokyo' FROM ev ORDER BY id",
]


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "at_time_zone", {}, [], {}) as pair:
        yield pair


def test_at_time_zone_as_in_postgresql(pair: Pair) -> None:
    assert script_differences(pair, SCRIPT, lambda d: (d.name, d.type_code)) == []
    with pytest.raises(adaptive_client.NotSupportedError):
        pair[1].execute("SELECT at AT TIME ZONE 'CET' FROM ev")


def test_a_zone_passed_as_a_parameter(pair: Pair) -> None:
    """Django's date lookups write ``AT TIME ZONE %s``: the zone is read when bound."""
    enc = pair[1]
    for conn in pair:
        for sql in SCRIPT[:3]:
            conn.execute(sql)
    sql = (
        "SELECT id, (at AT TIME ZONE %s)::date FROM ev "
        "WHERE (at AT TIME ZONE %s)::date = %s ORDER BY id"
    )
    for zone in ["America/Vancouver", "utc", "Asia/Kolkata", "Nowhere/City"]:
        params = (zone, zone, "2024-03-10")
        outcomes = []
        for conn in pair:
            try:
                outcomes.append(("rows", conn.execute(sql, params).fetchall()))
            except psycopg.Error as exc:
                outcomes.append(("error", exc.sqlstate))
        assert outcomes[0] == outcomes[1], zone
    with pytest.raises(adaptive_client.NotSupportedError):
        enc.execute(sql, ("CET", "CET", "2024-03-10"))
