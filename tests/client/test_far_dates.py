"""Dates and timestamps outside Python's years computed by the client's engine, judged
against PostgreSQL and psycopg: ``d - 1`` of 0001-01-01 is a date psycopg cannot load,
and raises its DataError ("date too small"); through the client it was handed out as
the engine's text, ``'0001-12-31 (BC)'``.  Either way the transaction goes on."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterator

import psycopg
import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted

ROWS = [
    (1, datetime.date(1, 1, 1), datetime.datetime(1, 1, 1)),
    (2, datetime.date(9999, 12, 31), datetime.datetime(9999, 12, 31, 23)),
    (3, datetime.date(2020, 2, 29), datetime.datetime(2020, 2, 29, 12)),
]
RAISING = [
    "SELECT id, d - 1 FROM v WHERE id = 1",
    "SELECT d + 1 FROM v ORDER BY id",
    "SELECT id, t - interval '1 day' FROM v WHERE id = 1",
    "SELECT id, t + interval '2 hours' FROM v WHERE id = 2",
    "SELECT d - 400 FROM v WHERE id = 1",
]
ANSWERED = [
    "SELECT id, d - 1 FROM v WHERE id = 3",
    "SELECT (d - 1)::text FROM v WHERE id = 1",
    "SELECT count(*) FROM v WHERE d - 1 < '0001-01-01'",
]


@pytest.fixture(scope="module")
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(
        new_database,
        master_key,
        "far_dates",
        {},
        ["CREATE TABLE v (id integer PRIMARY KEY, d date, t timestamp)"],
        {"v": ROWS},
    ) as pair:
        yield pair


@pytest.mark.parametrize("sql", RAISING)
def test_values_python_cannot_hold_raise_psycopgs_error(pair: Pair, sql: str) -> None:
    plain, enc = pair
    for conn in (plain, enc):
        conn.autocommit = False
    try:
        with pytest.raises(psycopg.DataError) as expected:
            plain.execute(sql).fetchall()
        with pytest.raises(psycopg.DataError) as got:
            enc.execute(sql).fetchall()
        assert str(got.value) == str(expected.value)
        # (a loader's error, not the server's: the transaction goes on)
        for conn in (plain, enc):
            assert conn.execute("SELECT count(*) FROM v").fetchall() == [(3,)]
    finally:
        for conn in (plain, enc):
            conn.rollback()
            conn.autocommit = True


@pytest.mark.parametrize("sql", ANSWERED)
def test_values_within_reach_are_answered(pair: Pair, sql: str) -> None:
    plain, enc = pair
    assert enc.execute(sql).fetchall() == plain.execute(sql).fetchall()
