"""The difference of two instants in the client engine, judged against PostgreSQL on an
ICU and a libc collation, in UTC and in a zone with daylight saving time:
``timestamptz - timestamptz`` (a ``timestamp`` beside one read in the session's zone) is
the instants' distance, as in PostgreSQL -- the client engine counted the local clocks'
days and times, an hour off across a DST change (a wrong answer before); such a
difference compared with an interval, ``now() - created > interval '1 day'``, is
answered (refused before)."""

from __future__ import annotations

from .pairs import Pair, script_differences

DDL = [
    "CREATE TABLE u (id int PRIMARY KEY, created timestamp, at timestamptz)",
    "INSERT INTO u VALUES (1, '2024-01-02 10:00', '2024-03-09 12:00+00'),"
    " (2, '2024-03-04 11:30', '2024-03-10 12:00+00'), (3, NULL, NULL),"
    " (4, '2023-11-04 12:00', '2023-11-05 23:00+00'), (5, '2000-06-01 00:00', '1999-12-31 23:59+00')",
]

SCRIPT = [
    "SELECT id, at - created, created - at FROM u ORDER BY id",
    "SELECT id, at - created > interval '60 days 1 hour' FROM u ORDER BY id",
    "SELECT id FROM u WHERE now() - created > interval '1000 days' ORDER BY id",
    "SELECT id, now() - at > interval '100 days' FROM u ORDER BY id",
    "SET TimeZone = 'America/New_York'",
    "SELECT id, at - created, created - at FROM u ORDER BY id",
    "SELECT id, '2024-03-10 12:00'::timestamp - at, at - '2023-11-05 12:00'::timestamp"
    " FROM u ORDER BY id",
    "SELECT id, at - created >= interval '66 days 5 hours' FROM u ORDER BY id",
    "SELECT id FROM u WHERE now() - at > interval '1000 days' ORDER BY id",
    "SET TimeZone = 'UTC'",
]


def test_instants_apart_as_in_postgresql(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, SCRIPT) == []
