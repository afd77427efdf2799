"""interval columns, differential: every input of PostgreSQL 15's interval regression
test (good and bad) written as a literal and as a parameter, timedeltas, field
restrictions and precisions; stored, read back (as psycopg loads them), ordered,
grouped and compared as in a plain database, on a C and an ICU database."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import psycopg
import pytest
from type_pairs import Pair, check, outcome

import adaptive_client
from adaptive_client.admin import controls as admin
from adaptive_client.catalog.keys import MasterKey

# the inputs of interval.sql (PostgreSQL 15): the table's rows, the accepted forms and
# the refused ones, the edges of each field
REGRESSION = [
    "01:00", "+02:00", "-08:00", "-1 +02:03", "-1 days +02:03", "1.5 weeks", "1.5 months",
    "10 years -11 month -12 days +13:14", "@ 1 minute", "@ 5 hour", "@ 10 day", "@ 34 year",
    "@ 3 months", "@ 14 seconds ago", "1 day 2 hours 3 minutes 4 seconds", "6 years",
    "5 months", "5 months 12 hours", "badly formatted interval", "@ 30 eons ago",
    "2147483647 days 2147483647 months", "2147483647 days -2147483648 months", "1 year",
    "-2147483648 days 2147483647 months", "-2147483648 days -2147483648 months",
    "2147483648 days", "-2147483649 days", "2147483647 years", "-2147483648 years",
    "41 mon 12 days 360:00", "-41 mon -12 days +360:00", "-12 days", "9 mon -27 days 12:34:56",
    "-3 years 482 days 76:54:32.189", "4 mon", "14 mon", "999 mon 999 days",
    "4 millenniums 5 centuries 4 decades 1 year 4 months 4 days 17 minutes 31 seconds",
    "100000000y 10mon -1000000000d -100000h -10min -10.000001s ago",
    "1 millisecond", "1 microsecond", "500 seconds 99 milliseconds 51 microseconds",
    "3 days 5 milliseconds", "1 second 2 seconds", "10 milliseconds 20 milliseconds",
    "5.5 seconds 3 milliseconds", "1:20:05 5 microseconds", "1 day 1 day", "1-2", "999",
    "123 11", "123 2:03 -2:04", "1 day 01:23:45.6789", "12:34.5678", "1.234", "1 2.345",
    "1 2:03", "1 2:03:04", "1 +2:03", "1 -2:03:04", "0", "+1 -1:00:00", "-1 +1:00:00",
    "+1-2 -3 +4:05:06.789", "-1-2 +3 -4:05:06.789", "-23 hours 45 min 12.34 sec",
    "-1 day 23 hours 45 min 12.34 sec", "-1 year 2 months 1 day 23 hours 45 min 12.34 sec",
    "-1 year 2 months 1 day 23 hours 45 min +12.34 sec", "1 day -1 hours",
    "-1 days +1 hours", "1 years 2 months -3 days 4 hours 5 minutes 6.789 seconds", "",
    "1 2:03:04", "2:03:04.45679", "P0Y", "P1Y2M", "P1W", "P1DT2H3M4S", "P1Y2M3DT4H5M6.7S",
    "P-1Y-2M-3DT-4H-5M-6.7S", "PT-0.1S", "P00021015T103020", "P0002-10-15T10:30:20",
    "P0002", "P0002-10", "P0002-10-15", "P0002T1S", "P0002-10T1S", "P0002-10-15T1S", "PT10",
    "PT10:30", "P1Y0M3DT4H5M6S", "P1.0Y0M3DT4H5M6S", "P1.1Y0M3DT4H5M6S", "P1.Y0M3DT4H5M6S",
    "P.1Y0M3DT4H5M6S", "P10.5e4Y", "P.Y0M3DT4H5M6S", "-10 mons -3 days +03:55:06.70",
    "1 year 2 mons 3 days 04:05:06.699999", "0:0:0.7", "@ 0.70 secs", "0.7 seconds",
    "2562047788.01521550194 hours", "-2562047788.01521550222 hours",
    "153722867280.912930117 minutes", "-153722867280.912930133 minutes",
    "9223372036854.775807 seconds", "-9223372036854.775808 seconds",
    "9223372036854775.807 milliseconds", "-9223372036854775.808 milliseconds",
    "9223372036854775807 microseconds", "-9223372036854775808 microseconds",
    "PT2562047788H54.775807S", "PT-2562047788H-54.775808S", "PT2562047788:00:54.775807",
    "PT2562047788.0152155019444", "PT-2562047788.0152155022222", "2147483648 years",
    "-2147483649 years", "2147483648 months", "-2147483649 months", "2562047789 hours",
    "-2562047789 hours", "153722867281 minutes", "-153722867281 minutes",
    "9223372036855 seconds", "-9223372036855 seconds", "9223372036854777 millisecond",
    "-9223372036854777 millisecond", "9223372036854775808 microsecond",
    "-9223372036854775809 microsecond", "P2147483648", "P-2147483649",
    "P1-2147483647-2147483647", "PT2562047789", "PT-2562047789", "2147483647 weeks",
    "-2147483648 weeks", "2147483647 decades", "-2147483648 decades",
    "2147483647 centuries", "-2147483648 centuries", "2147483647 millennium",
    "-2147483648 millennium", "1 week 2147483647 days", "-1 week -2147483648 days",
    "2147483647 days 1 week", "P1W2147483647D", "P-1W-2147483648D", "P2147483647D1W",
    "1 decade 2147483647 years", "-1 millennium -2147483648 years",
    "2147483647 years 1 century", "0.1 millennium 2147483647 months",
    "-0.1 yrs -2147483648 months", "2147483647 months 0.1 decades", "0.1 months 2147483647 days",
    "-0.1 months -2147483648 days", "2147483647 days 0.5 weeks",
    "0.01 months 9223372036854775807 microseconds", "-0.1 weeks -9223372036854775808 microseconds",
    "9223372036854775807 microseconds 0.1 days", "P0.1Y2147483647M", "P-2147483648M-0.1Y",
    "P0.1M2147483647D", "P2147483647D0.5W", "P0.01MT2562047788H54.775807S",
    "P-0.1DT-2562047788H-54.775808S", "PT2562047788.1H54.775807S",
    "PT-2562047788H-0.1M-54.775808S", "P0.1-2147483647-00", "P00-0.1-2147483647",
    "P00-0.01-00T2562047788:00:54.775807", "P00-00-0.1T2562047788:00:54.775807",
    "PT2562047788.1:00:54.775807", "PT2562047788:01.:54.775807",
    "0.1 2562047788:0:54.775807", "0.1 2562047788:0:54.775808 ago",
    "2562047788.1:0:54.775807", "2562047788:0.1:54.775807",
    "-2147483648 months ago", "-2147483648 days ago", "-9223372036854775808 microseconds ago",
    "-2147483648 months -2147483648 days -9223372036854775808 us", "30 days", "1 month",
    "2 days", "100 y", "-99 y", "1000000000 days", "infinity", "-infinity", "garbage",
    "1 day 24 hours", "24 hours", "86400 seconds", "1 mon", "720 hours",
]  # fmt: skip

# values Python's timedelta holds (psycopg loads the rest with a DataError)
READABLE = [
    "01:00", "-1 +02:03", "1.5 weeks", "1.5 months", "10 years -11 month -12 days +13:14",
    "@ 14 seconds ago", "1 day", "24 hours", "86400 seconds", "1 mon", "30 days",
    "720 hours", "1 year", "360 days", "365 days", "-1 days +1 hours", "P1Y2M3DT4H5M6.7S",
    "PT-0.1S", "0.7 seconds", "1 day -1 hours", "23:00", "0", "-0.000001 s",
    "999 mon 999 days", "-3 years 482 days 76:54:32.189",
]  # fmt: skip

DELTAS = [
    dt.timedelta(0), dt.timedelta(days=1), dt.timedelta(hours=24), dt.timedelta(hours=-1),
    dt.timedelta(days=30), dt.timedelta(days=-2, microseconds=5), dt.timedelta(seconds=59.5),
    dt.timedelta(days=999999999), dt.timedelta(days=-999999999), dt.timedelta(microseconds=-1),
    dt.timedelta.max, dt.timedelta.min,
]  # fmt: skip


def test_regression_inputs(pair: Pair) -> None:
    """Every input of interval.sql is stored or refused alike (same SQLSTATE), literal
    or parameter; the values out of psycopg's reach compared through their ids."""
    check(pair, "interval", REGRESSION, read=False, probes=["1 day", "30 days", "1 year"])
    check(pair, "interval", REGRESSION, as_literals=True, read=False, probes=["@ 1 minute"])


def test_read_back(pair: Pair) -> None:
    """Values read back as psycopg loads them; '1 day' = '24 hours', '1 month' = '30
    days' (and '1 year' is 360 days, ordered so, though psycopg counts it 365)."""
    check(pair, "interval", READABLE)
    check(pair, "interval", READABLE, as_literals=True)


def test_timedeltas(pair: Pair) -> None:
    check(pair, "interval", DELTAS, probes=[dt.timedelta(days=1), dt.timedelta(0), "1 day"])


SPANS = ["1 day", "24 hours", "1 mon", "30 days", "1 year", "360 days", "365 days", "-1 day",
         "1 day 1 second", "00:00:00.000001", "-00:00:00.000001", "0", "2 mons -30 days"]  # fmt: skip


def test_equal_spans(pair: Pair) -> None:
    """'1 day' = '24 hours', '1 mon' = '30 days', '1 year' = '360 days': equal under
    ``=``, grouped together, ordered as ties -- yet each reads back as written."""
    check(pair, "interval", SPANS, as_literals=True)
    check(pair, "interval", SPANS, probes=[*SPANS, dt.timedelta(days=1), dt.timedelta(0)])


STATEMENTS = [
    "SELECT id, v FROM spans ORDER BY v, id",
    "SELECT id, v FROM spans ORDER BY v DESC, id",
    "SELECT count(*) FROM spans WHERE v = '1 day'",
    "SELECT id FROM spans WHERE v = interval '24 hours' ORDER BY id",
    "SELECT id FROM spans WHERE v <> '1 mon' ORDER BY id",
    "SELECT id FROM spans WHERE v > '1 day' AND v < '1 year' ORDER BY id",
    "SELECT id FROM spans WHERE v BETWEEN '0' AND '30 days' ORDER BY id",
    "SELECT id FROM spans WHERE v >= '@ 1 month' ORDER BY id",
    "SELECT id FROM spans WHERE v IN ('1 day', '365 days') ORDER BY id",
    "SELECT max(v), min(v) FROM spans WHERE id < 3",
    "SELECT max(v), min(v) FROM spans WHERE id >= 5",
    "SELECT max(v), min(v) FROM spans WHERE id IN (2, 4)",
    "SELECT max(v), min(v) FROM spans WHERE id IN (4, 6, 12)",
    "SELECT id, max(v), min(v) FROM spans WHERE id IN (2, 4, 5, 6) GROUP BY id ORDER BY id",
    "SELECT max(v) FROM spans WHERE id > 1000",
    "SELECT max(v), min(v), count(v) FROM spans WHERE id IN (2, 4, 99)",
    "SELECT count(DISTINCT v) FROM spans",
    "SELECT count(*) FROM spans GROUP BY v ORDER BY 1",
    "SELECT id FROM spans WHERE v IS NULL",
]


def test_statements(pair: Pair) -> None:
    """Comparisons with interval constants, ordering, grouping, max / min."""
    rows = [(i, v) for i, v in enumerate(SPANS)] + [(99, None)]
    for conn in (pair.plain, pair.enc):
        conn.execute("DROP TABLE IF EXISTS spans")
        conn.execute("CREATE TABLE spans (id int PRIMARY KEY, v interval)")
        for i, v in rows:
            conn.execute("INSERT INTO spans VALUES (%s, %s)", (i, v))
    diffs = []
    for sql in STATEMENTS:
        got = [outcome(conn, sql) for conn in (pair.plain, pair.enc)]
        if got[0] != got[1]:
            diffs.append(f"{sql}: plain {got[0]}, client {got[1]}")
    assert not diffs, "\n".join(diffs)


RESTRICTED = [
    "1", "999", "1 2", "1-2", "1 2:03", "1 2:03:04", "1 +2:03", "1 -2:03:04", "123 11",
    "1.234", "1 2.345", "1 2:03.4567", "1 2:03:04.5678", "12:34.5678", "1 2.3456",
    "-1 2:03:04.5678", "1 day 01:23:45.6789", "1 year 5 months 3 days 04:05:06.789",
    "-1 year -5 months -3 days -04:05:06.789", "2562047788:00:54.775807",
    "-2562047788:00:54.775807", "30 days", "1 mon",
]  # fmt: skip
FIELDS = [
    "interval year", "interval month", "interval day", "interval hour", "interval minute",
    "interval second", "interval year to month", "interval day to hour",
    "interval day to minute", "interval day to second", "interval hour to minute",
    "interval hour to second", "interval minute to second", "interval(0)", "interval(2)",
    "interval(6)", "interval(7)", "interval second(2)", "interval day to second(0)",
    "interval hour to second(3)", "interval minute to second(2)",
]  # fmt: skip


@pytest.mark.parametrize("sql_type", FIELDS)
def test_field_restrictions(pair: Pair, sql_type: str) -> None:
    """A column's fields drop what lies right of its last field, its precision rounds
    the seconds; a literal's bare numbers are read in the column's fields ('1 2' into
    ``day to hour`` is a day and two hours).  Comparands are read with every field."""
    check(pair, sql_type, RESTRICTED, as_literals=True, probes=["1 day", "1 year", "0"])
    deltas = [dt.timedelta(days=1, seconds=3723, microseconds=456789), dt.timedelta(-1)]
    check(pair, sql_type, deltas, probes=[dt.timedelta(days=1)])


def test_description_type_code(pair: Pair) -> None:
    pair.both("CREATE TABLE described_ivl (v interval, w interval day to second(2))")
    codes = [
        c.execute("SELECT v, w FROM described_ivl").description for c in (pair.plain, pair.enc)
    ]
    assert codes[0] is not None and codes[1] is not None
    assert [d.type_code for d in codes[0]] == [d.type_code for d in codes[1]] == [1186, 1186]


def test_layers_show_interval_columns(
    new_database: Callable[..., str], master_key: MasterKey
) -> None:
    """``adaptive-db layers`` shows an interval column's Eq, Ord and Exact onions; its
    Eq onion's DET ciphertexts have one length (16 bytes of span), and equal spans
    written differently share one."""
    dsn = new_database("ivl_layers")
    with adaptive_client.connect(dsn, master_key=master_key.hex(), autocommit=True) as conn:
        conn.execute("CREATE TABLE spans (id int PRIMARY KEY, v interval, w interval year)")
        for i, v in enumerate(["1 day", "24 hours", "1 year 2 mons 3 days 04:05:06.789"]):
            conn.execute("INSERT INTO spans VALUES (%s, %s, %s)", (i, v, v))
        conn.execute("SELECT id FROM spans WHERE v = '1 day'").fetchall()
        conn.execute("SELECT id FROM spans ORDER BY v").fetchall()
    with psycopg.connect(dsn) as raw:
        rows = admin.layers_report(raw, master_key)
        shown = {(r.column, r.type, r.onion) for r in rows if r.table == "spans"}
        for column, sql_type in (("v", "interval"), ("w", "interval year")):
            assert {(column, sql_type, o) for o in ("Eq", "Ord", "Exact")} <= shown, shown
        learns = {(r.column, r.onion): r.layer for r in rows if r.table == "spans"}
        assert learns["v", "Eq"] == "DET" and learns["v", "Ord"] == "OPE"
        eq = next(r.stored_as for r in rows if r.column == "v" and r.onion == "Eq")
        table, column = eq.split(".")
        stored = raw.execute(f'SELECT "{column}" FROM "{table}"').fetchall()
        assert len({len(bytes(s)) for (s,) in stored}) == 1
        assert len(stored) == 3 and len(set(stored)) == 2  # '1 day', '24 hours': one span
