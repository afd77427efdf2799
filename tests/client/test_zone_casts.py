"""Casts to timestamptz and to time in the client engine (refused before), judged
against PostgreSQL across daylight-saving changes: a date or timestamp read as a local
time in the session's zone (a time in the spring gap, and one the autumn repeats, as
PostgreSQL reads them), a timestamptz's local time, an ISO constant with or without an
offset, ``date + time``; a cast to time (a timestamptz's local time of day), named
``time`` as PostgreSQL names it, and a string compared with one read by PostgreSQL's time
input ('1:00 AM', 'allballs'); a timestamptz printed into jsonb in the session's zone
(``to_jsonb`` and ``jsonb_agg`` printed it in UTC: a wrong answer); a constant in another form (a zone abbreviation, AM/PM) is
refused, its reading being PostgreSQL's alone."""

from __future__ import annotations

import datetime as dt

from .pairs import Pair, outcome, script_differences

DDL = [
    "CREATE TABLE t (id int PRIMARY KEY, d date, ts timestamp, tz timestamptz)",
    "INSERT INTO t VALUES (1, '2024-03-10', '2024-03-10 02:30', '2024-03-10 01:59:59-05'),"
    " (2, '2024-11-03', '2024-11-03 01:30', '2024-11-03 01:30-04'), (3, NULL, NULL, NULL),"
    " (4, '2024-03-10', '2024-03-10 01:59:59.999999', '2000-02-29 23:59:59.999999+00'),"
    " (5, '1883-11-18', '1883-11-18 12:00', '1999-12-31 00:00+00'),"
    " (6, '2024-11-03', '2024-11-03 02:00', '2024-11-03 01:30-05')",
]

SCRIPT = [
    "SET TimeZone = 'America/New_York'",
    "SELECT id, ts::timestamptz, d::timestamptz, ts::timestamptz::timestamp FROM t ORDER BY id",
    "SELECT id FROM t WHERE ts::timestamptz > '2024-03-10 03:00-04' ORDER BY id",
    "SELECT id, ts::timestamptz - '2024-03-10 00:00-05'::timestamptz,"
    " tz - '2024-01-01'::timestamptz FROM t ORDER BY id",
    "SELECT id, d + time '10:00', d + time '10:00:00.5' FROM t ORDER BY id",
    "SELECT id, ts < '2024-03-10 03:00+00'::timestamptz FROM t ORDER BY id",
    "SELECT id, tz::time, ts::time, '12:30:15.5'::time FROM t ORDER BY id",
    "SELECT max(ts::time), min(tz::time) FROM t",
    "SELECT id FROM t WHERE ts::time > '02:00' ORDER BY id",
    "SELECT id FROM t WHERE tz::time BETWEEN 'allballs' AND '1:59 AM' ORDER BY id",
    "SELECT ts::time AS clock, count(*) FROM t GROUP BY 1 ORDER BY 1",
    "SET TimeZone = 'Europe/Berlin'",
    "SELECT id, ts::timestamptz, tz::timestamp, tz::time FROM t ORDER BY id",
    # printed into jsonb in the session's zone (to_jsonb and jsonb_agg printed UTC)
    "SELECT id, to_jsonb(tz), jsonb_build_array(tz, ts, d) FROM t ORDER BY id",
    "SELECT jsonb_agg(tz ORDER BY id), jsonb_agg(ts::timestamptz ORDER BY id) FROM t",
]


def test_zone_casts_as_in_postgresql(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, SCRIPT, lambda d: (d.name, d.type_code)) == []


def test_other_forms_refused(collated_pair: Pair) -> None:
    _, enc = collated_pair
    for sql in (
        "SELECT id, ts < '2024-03-10 03:00 EST'::timestamptz FROM t",
        "SELECT id, d + time '10:00 PM' FROM t",
        "SELECT id, d + time '24:00' FROM t",
    ):
        assert outcome(enc, sql) == ("error", "0A000"), sql


def test_time_parameter_compared(collated_pair: Pair) -> None:
    """A parameter compared with a time: its text read by PostgreSQL's time input."""
    plain, enc = collated_pair
    sql = "SELECT id FROM t WHERE ts::time >= %s ORDER BY id"
    for value in ("1:30 AM", "02:00:00", dt.time(1, 59, 59, 999999)):
        assert outcome(enc, sql, (value,)) == outcome(plain, sql, (value,))
