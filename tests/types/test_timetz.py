"""timetz (time with time zone) columns, differential: the inputs of PostgreSQL 15's
timetz regression test (good and bad) as literals and parameters, time objects with and
without a zone, precisions; stored, read back (as psycopg loads them), ordered, grouped
and compared as in a plain database -- PostgreSQL orders timetz by the UTC time, then
the zone, and calls two values equal only where both agree -- on a C and an ICU
database."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import psycopg
import pytest
from type_pairs import Pair, check, outcome

import adaptive_client
from adaptive_client.admin import controls as admin
from adaptive_client.catalog.keys import MasterKey

# the inputs of timetz.sql (PostgreSQL 15), then the zone forms of the manual
REGRESSION = [
    "00:01 PDT", "01:00 PDT", "02:03 PDT", "07:07 PST", "08:08 EDT", "11:59 PDT", "12:00 PDT",
    "12:01 PDT", "23:59 PDT", "11:59:59.99 PM PDT", "2003-03-07 15:36:39 America/New_York",
    "2003-07-07 15:36:39 America/New_York", "15:36:39 America/New_York", "15:36:39 m2",
    "15:36:39 MSK m2", "23:59:59.999999 PDT", "23:59:59.9999999 PDT", "23:59:60 PDT",
    "24:00:00 PDT", "24:00:00.01 PDT", "23:59:60.01 PDT", "24:01:00 PDT", "25:00:00 PDT",
    "00:00-07", "05:06:07-07", "2020-05-26 13:30:25.575401-04",
    "2020-05-26 13:30:25.575401-04:30", "-10:00", "00:00", "00:01", "epoch",
]  # fmt: skip
MORE = [
    "04:05:06.789-8", "04:05:06-08:00", "04:05-08:00", "040506-08", "040506+0530",
    "04:05:06 PST", "2003-04-12 04:05:06 America/New_York", "04:05:06 UTC", "04:05 Z",
    "12:00+01", "11:00+00", "13:00+02", "12:00+01:00:30", "04:05:06+15:59:59",
    "04:05:06+16", "allballs", "12:00 am -03", "garbage", "", "04:05:06 Asia/Kolkata",
    "2024-06-01 04:05:06 Europe/Paris", "04:05:06 Etc/GMT+5", "04:05:06 CET",
]  # fmt: skip
TIMES = [
    dt.time(4, 5, 6, tzinfo=dt.timezone(dt.timedelta(hours=-8))),
    dt.time(12, 0, tzinfo=dt.timezone(dt.timedelta(hours=1))),
    dt.time(11, 0, tzinfo=dt.UTC),
    dt.time(23, 59, 59, 999999, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30))),
    dt.time(0, 0, tzinfo=dt.timezone(dt.timedelta(hours=-15, minutes=-59))),
]


def test_regression_inputs(pair: Pair) -> None:
    """Every input stored or refused alike (a zone with daylight saving time needs a
    date; 24:00:00 is stored, and read by neither, as psycopg cannot load it)."""
    for zone in ("UTC", "America/Los_Angeles"):
        pair.both(f"SET TimeZone = '{zone}'")
        check(pair, "timetz", REGRESSION + MORE, as_literals=True, read=False)
        check(pair, "timetz", REGRESSION + MORE, read=False, probes=["12:00+01", "11:00+00"])


READABLE = [
    "00:01 PDT", "07:07 PST", "11:59:59.99 PM PDT", "2003-07-07 15:36:39 America/New_York",
    "05:06:07-07", "2020-05-26 13:30:25.575401-04:30", "12:00+01", "11:00+00", "13:00+02",
    "12:00+01:00:30", "04:05:06+15:59:59", "00:00-15:59", "allballs", "23:59:59.999999+00",
    "04:05:06 Etc/GMT+5",
]  # fmt: skip


@pytest.mark.parametrize("sql_type", ["timetz", "timetz(0)", "time(2) with time zone"])
def test_read_and_order(pair: Pair, sql_type: str) -> None:
    """Values read back as psycopg loads them; '12:00+01' and '11:00+00' are the same
    instant, yet unequal, the first ordered after (by zone, the one farther west
    first)."""
    pair.both("SET TimeZone = 'UTC'")
    values = [v for v in READABLE if sql_type == "timetz" or not v.startswith("23:59:59.9")]
    check(pair, sql_type, values, as_literals=True)
    check(pair, sql_type, [*values, *TIMES], probes=[*TIMES[:3], "12:00+01", "11:00:00+00"])


@pytest.mark.parametrize("zone", ["UTC", "America/New_York", "Asia/Kolkata"])
def test_session_zone(pair: Pair, zone: str) -> None:
    """A time without a zone (a string, a naive time object) takes the session's zone at
    the current date, as PostgreSQL gives it."""
    pair.both(f"SET TimeZone = '{zone}'")
    values = ["04:05:06", "12:00", "23:59:59.5", dt.time(4, 5, 6), "04:05 PDT", "04:05 MSK"]
    check(pair, "timetz", values, probes=["04:05:06", dt.time(12, 0)])


STATEMENTS = [
    "SELECT id, v FROM zoned ORDER BY v, id",
    "SELECT id FROM zoned WHERE v = '12:00+01' ORDER BY id",
    "SELECT id FROM zoned WHERE v <> '11:00+00' ORDER BY id",
    "SELECT id FROM zoned WHERE v < '12:00+01' ORDER BY id",
    "SELECT id FROM zoned WHERE v BETWEEN '10:00+00' AND '11:30+00' ORDER BY id",
    "SELECT max(v), min(v) FROM zoned",
    "SELECT count(DISTINCT v) FROM zoned",
    "SELECT v, count(*) FROM zoned GROUP BY v ORDER BY v",
]


def test_statements(pair: Pair) -> None:
    values = ["12:00+01", "11:00+00", "13:00+02", "10:00-01", "11:00+00", "23:00-05", None]
    for conn in (pair.plain, pair.enc):
        conn.execute("DROP TABLE IF EXISTS zoned")
        conn.execute("CREATE TABLE zoned (id int PRIMARY KEY, v timetz)")
        for i, v in enumerate(values):
            conn.execute("INSERT INTO zoned VALUES (%s, %s)", (i, v))
    diffs = []
    for sql in STATEMENTS:
        got = [outcome(conn, sql) for conn in (pair.plain, pair.enc)]
        if got[0] != got[1]:
            diffs.append(f"{sql}: plain {got[0]}, client {got[1]}")
    assert not diffs, "\n".join(diffs)


def test_description_type_code(pair: Pair) -> None:
    pair.both("CREATE TABLE described_tz (v timetz, w time(3) with time zone)")
    codes = [c.execute("SELECT v, w FROM described_tz").description for c in (pair.plain, pair.enc)]
    assert codes[0] is not None and codes[1] is not None
    assert [d.type_code for d in codes[0]] == [d.type_code for d in codes[1]] == [1266, 1266]


def test_layers_show_timetz_columns(
    new_database: Callable[..., str], master_key: MasterKey
) -> None:
    dsn = new_database("ivltz_layers")
    with adaptive_client.connect(dsn, master_key=master_key.hex(), autocommit=True) as conn:
        conn.execute("CREATE TABLE zoned (id int PRIMARY KEY, v timetz, w timetz(2))")
        conn.execute("INSERT INTO zoned VALUES (1, '12:00+01', '11:00+00')")
        conn.execute("SELECT id FROM zoned ORDER BY v").fetchall()
    with psycopg.connect(dsn) as raw:
        rows = admin.layers_report(raw, master_key)
        shown = {(r.column, r.type, r.onion) for r in rows if r.table == "zoned"}
        for column, sql_type in (("v", "timetz"), ("w", "timetz(2)")):
            assert {(column, sql_type, "Eq"), (column, sql_type, "Ord")} <= shown, shown
        learns = {(r.column, r.onion): r.layer for r in rows if r.table == "zoned"}
        assert learns["v", "Ord"] == "OPE"
