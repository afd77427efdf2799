"""The server's clock (now(), CURRENT_TIMESTAMP, CURRENT_DATE, LOCALTIMESTAMP,
transaction_timestamp(), statement_timestamp()) in statements the client encrypts or
finishes: its values are the server's, read once per execution in the statement's
transaction, and used as PostgreSQL uses them (assigned to a timestamp: the session's
local time; compared and shifted in the session's time zone)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.errors import UnsupportedQuery
from adaptive_client.values.clock import clock_param

DDL = "CREATE TABLE ev (id integer PRIMARY KEY, at timestamp, day date, label text)"
ROWS = [
    (1, dt.datetime(2001, 5, 4, 10, 0), dt.date(2001, 5, 4), "old"),
    (2, dt.datetime(2099, 1, 1, 0, 0), dt.date(2099, 1, 1), "future"),
    (3, None, None, "none"),
]


@pytest.fixture(scope="module")
def conns(new_database: Any, master_key: MasterKey) -> Iterator[tuple[Any, Any]]:
    plain = psycopg.connect(new_database("clock_plain"), autocommit=True)
    enc = adaptive_client.connect(new_database("clock_enc"), master_key=master_key, autocommit=True)
    for c in (plain, enc):
        c.execute(DDL)
        c.cursor().executemany("INSERT INTO ev VALUES (%s, %s, %s, %s)", ROWS)
    yield plain, enc
    plain.close()
    enc.close()


@pytest.mark.parametrize(
    "sql",
    [
        # on the server over an Ord onion (the clock's value encrypted), and on the client
        "SELECT id FROM ev WHERE at < now() ORDER BY id",
        "SELECT id FROM ev WHERE at > CURRENT_TIMESTAMP - interval '30 years' ORDER BY id",
        "SELECT id FROM ev WHERE day < CURRENT_DATE ORDER BY id",
        "SELECT id FROM ev WHERE at <= LOCALTIMESTAMP AND at < statement_timestamp() ORDER BY id",
        "SELECT id, at < now(), day > current_date - 365 FROM ev WHERE lower(label) <> 'x' ORDER BY id",
        "SELECT count(*) FILTER (WHERE at > now() - interval '10 years') FROM ev WHERE upper(label) <> ''",
    ],
)
def test_predicates_on_the_clock_equal_plain(conns: tuple[Any, Any], sql: str) -> None:
    plain, enc = conns
    assert enc.execute(sql).fetchall() == plain.execute(sql).fetchall()


@pytest.mark.parametrize("zone", ["UTC", "America/New_York", "Asia/Kolkata"])
def test_now_written_is_the_session_local_time(conns: tuple[Any, Any], zone: str) -> None:
    """INSERT and UPDATE with now() / CURRENT_DATE store what PostgreSQL's assignment
    stores: the session's local time and date at the transaction's start."""
    _, enc = conns
    enc.autocommit = False
    try:
        enc.execute(f"SET LOCAL TimeZone = '{zone}'")
        enc.execute("INSERT INTO ev VALUES (10, now(), CURRENT_DATE, 'new')")
        enc.cursor().executemany(
            "INSERT INTO ev VALUES (%s, CURRENT_TIMESTAMP, current_date, %s)",
            [(11, "a"), (12, "b")],
        )
        enc.execute("UPDATE ev SET at = transaction_timestamp(), day = now() WHERE id = 1")
        got = enc.execute(
            "SELECT id, at = localtimestamp, day = current_date FROM ev "
            "WHERE id IN (1, 10, 11, 12) ORDER BY id"
        ).fetchall()
        assert got == [(1, True, True), (10, True, True), (11, True, True), (12, True, True)]
        local = enc.execute("SELECT localtimestamp").fetchone()[0]
        assert enc.execute("SELECT at FROM ev WHERE id = 10").fetchone()[0] == local
    finally:
        enc.rollback()
        enc.autocommit = True


def test_the_client_engine_reads_now_in_the_session_time_zone(conns: tuple[Any, Any]) -> None:
    """A statement finished on the client gives now() as the server does in the same
    transaction: the same instant, in the session's zone, shifted by calendar months
    across a daylight-saving change as PostgreSQL shifts it."""
    _, enc = conns
    enc.autocommit = False
    try:
        enc.execute("SET LOCAL TimeZone = 'Europe/Paris'")
        cur = enc.execute(
            "SELECT id, now(), now() - interval '6 months', current_date FROM ev "
            "WHERE lower(label) = 'old'"
        )
        row = cur.fetchone()
        assert [d[0] for d in cur.description] == ["id", "now", "?column?", "current_date"]
        server = enc.execute("SELECT now(), now() - interval '6 months', current_date").fetchone()
        assert row[1:] == server
        assert row[1].utcoffset() == server[0].utcoffset()
        assert row[2].utcoffset() != row[1].utcoffset()  # the other side of a DST change
    finally:
        enc.rollback()
        enc.autocommit = True


def test_a_clock_value_outside_an_execution_is_refused() -> None:
    with pytest.raises(UnsupportedQuery, match="clock"):
        clock_param("now")(())


@pytest.mark.parametrize("zone", ["UTC", "America/New_York", "Asia/Kolkata"])
def test_date_trunc_of_a_date_is_a_timestamptz_of_the_session(
    conns: tuple[Any, Any], zone: str
) -> None:
    """date_trunc(unit, date) is PostgreSQL's timestamptz one: the date's local midnight
    in the session's time zone, truncated there."""
    plain, enc = conns
    sql = (
        "SELECT id, date_trunc('month', day), date_trunc('year', day) < now() "
        "FROM ev WHERE lower(label) <> 'x' ORDER BY id"
    )
    for c in (plain, enc):
        c.execute(f"SET TimeZone = '{zone}'")
    try:
        got, expected = enc.execute(sql).fetchall(), plain.execute(sql).fetchall()
        assert got == expected
        assert [r[1].utcoffset() for r in got if r[1]] == [
            r[1].utcoffset() for r in expected if r[1]
        ]
    finally:
        for c in (plain, enc):
            c.execute("SET TimeZone = 'UTC'")


def test_a_clock_default_is_one_value_per_statement(conns: tuple[Any, Any]) -> None:
    """A column defaulting to now(), written by a multi-row INSERT outside a transaction:
    every row takes the statement's one now(), as in PostgreSQL (each row took its own
    server read); two statements take two."""
    _, enc = conns
    enc.execute("CREATE TABLE stamped (id integer, at timestamptz DEFAULT now())")
    enc.execute("INSERT INTO stamped (id) VALUES (1), (2), (3)")
    enc.execute("INSERT INTO stamped (id) VALUES (4)")
    got = enc.execute("SELECT count(DISTINCT at) FROM stamped WHERE id <= 3").fetchone()
    assert got == (1,)
    two = enc.execute("SELECT count(DISTINCT at) FROM stamped").fetchone()
    assert two == (2,)
