"""Values printed into jsonb by the client engine (``to_jsonb``, ``jsonb_agg``,
``jsonb_build_object``), judged against PostgreSQL under the session's settings: a
timestamptz in the session's zone (printed in UTC before: the engine's threads did not
see the session), an interval in the IntervalStyle and as written ('1 mon', not '30
days'), a date outside Python's years in ISO form whatever the DateStyle (printed as the
engine's own text, '0044-03-15 (BC)', before)."""

from __future__ import annotations

from .pairs import Pair, script_differences

DDL = [
    "CREATE TABLE h (id int PRIMARY KEY, dur interval, d date, ts timestamp, tz timestamptz)",
    "INSERT INTO h VALUES"
    " (1, '1 mon 2 days 03:04:05.5', '2024-02-29', '2024-02-29 10:00', '2024-02-29 10:00+00'),"
    " (2, '-1 year', '0044-03-15 BC', '1999-12-31 23:59:59.5', '1900-01-01 00:00+00'),"
    " (3, NULL, NULL, NULL, NULL), (4, '24 hours', '10000-01-01', '2000-01-01', "
    " '2024-10-27 00:30+00')",
]

SCRIPT = [
    "SET IntervalStyle = 'iso_8601'",
    "SET DateStyle = 'SQL, DMY'",
    "SET TIME ZONE 'Asia/Kolkata'",
    "SELECT jsonb_agg(dur ORDER BY id), jsonb_agg(d ORDER BY id), jsonb_agg(tz ORDER BY id)"
    " FROM h",
    "SELECT id, to_jsonb(ts), to_jsonb(tz), jsonb_build_object('tz', tz, 'ts', ts) FROM h"
    " ORDER BY id",
    "SELECT id, to_jsonb(dur), jsonb_build_array(dur, dur * 2) FROM h WHERE id <> 4 ORDER BY id",
    "SET IntervalStyle = 'postgres_verbose'",
    "SET DateStyle = 'German'",
    "SET TIME ZONE 'Europe/London'",
    "SELECT jsonb_agg(d ORDER BY id), jsonb_agg(dur ORDER BY id) FROM h WHERE id <> 4",
    "SELECT id, to_jsonb(tz), to_jsonb(d), jsonb_build_object('d', d) FROM h ORDER BY id",
]


def test_printed_into_jsonb_as_in_postgresql(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, SCRIPT, lambda d: (d.name, d.type_code)) == []
