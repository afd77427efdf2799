"""Arithmetic over an interval column, which the server holds only as ciphertexts,
computed by the client engine on the fields PostgreSQL stores (months, days,
microseconds) and judged against PostgreSQL: a timestamptz plus an interval adds months
and days on the session zone's calendar (across a daylight-saving change, a month's
end), a timestamp's and a date's on theirs; ``interval * number`` and ``/`` cascade
fractions as interval_mul and interval_div do; ``justify_*``; a cast to text in the
session's IntervalStyle; the errors PostgreSQL
raises (22008, 22012, 42883).  These were refused before.  An UPDATE storing such a
value stores its fields: '1 mon' * 2 is '2 mons', not the '60 days' psycopg's timedelta
would write (a later ``at + dur`` tells them apart); and an interval printed into
jsonb prints as written (``jsonb_build_object('d', dur)`` of '1 mon' gave "30 days", a
wrong answer).  A value whose span is shared by
others written differently ('1 mon', '30 days') gives a result that depends on which:
refused, never answered with the other's."""

from __future__ import annotations

import datetime as dt

import pytest

from .pairs import Pair, outcome, script_differences, transaction_differences

DDL = [
    "CREATE TABLE ev (id int PRIMARY KEY, at timestamptz, ts timestamp, d date,"
    " dur interval, n int, x numeric(6,2), f float8)",
    "INSERT INTO ev VALUES"
    " (1, '2024-03-30 02:30:00+01', '2024-01-31 10:00', '2024-01-31', '1 day 2 hours', 3,"
    " 1.5, 0.1),"
    " (2, '2024-10-26 02:30:00+02', '2024-02-29 00:00', '2024-02-29', '-3 hours', -2,"
    " -0.25, 2.5),"
    " (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL),"
    " (4, '2025-01-31 00:00:00Z', '2023-12-31 23:59:59.5', '2023-01-31', '1 mon', 7, 0.33,"
    " -1e10),"
    " (5, '2024-03-31 02:00:00+01', '2024-03-31 02:00', '2024-03-31',"
    " '1 year 2 mons 3 days 04:05:06.789', 0, 100, 1e-3),"
    " (6, '2024-01-01 00:00+00', '2024-01-01', '2024-01-01', '-1 mon -1 day +1 hour', 1,"
    " 3.33, 0.3333333333333333),"
    " (7, '2024-02-29 12:00+00', '2024-02-29', '2024-02-29', '1 year 31 days', 1, 1, 1)",
    # (spans all different: each value's fields reach the functions)
    "CREATE TABLE j (id int PRIMARY KEY, dur interval)",
    "INSERT INTO j VALUES (1, '29 days 25 hours'), (2, '-29 days -25 hours'),"
    " (3, '1 mon -1 day'), (4, '1 mon -1 hour'), (5, '-1 mon 1 hour'),"
    " (6, '-1 mon 30 days 1 hour'), (7, '1 mon -30 days -1 hour'), (8, '61 days -1 hour'),"
    " (9, '-61 days 1 hour'), (11, '1 year -400 days 1000 hours'),"
    " (12, '-1 mon 29 days 23:59:59.999999'), (15, '-1 mon 30 days')",
]

SCRIPT = [
    "SET TIME ZONE 'Europe/Berlin'",
    "SELECT id, at + dur, dur + at, at - dur FROM ev ORDER BY id",
    "SELECT id, ts + dur, dur + ts, ts - dur FROM ev ORDER BY id",
    "SELECT id, d + dur, dur + d, d - dur FROM ev ORDER BY id",
    "SELECT id, dur * 2, 2 * dur, dur / 2, -dur FROM ev ORDER BY id",
    "SELECT id, dur * n, dur * x, dur / 3.0, dur * 0.5 FROM ev ORDER BY id",
    "SELECT id, dur / f FROM ev WHERE id <> 3 ORDER BY id",
    "SELECT id, dur + dur, dur - dur, dur + interval '1 hour', dur - interval '1 day',"
    " interval '2 mons' + dur, dur + '1 day'::interval, dur + '1 mon' FROM ev ORDER BY id",
    "SELECT id, justify_hours(dur), justify_days(dur), justify_interval(dur) FROM ev ORDER BY id",
    # (printed as written into jsonb: the fields, which a timedelta would not show)
    "SELECT id, to_jsonb(justify_hours(dur)), to_jsonb(justify_days(dur)),"
    " to_jsonb(justify_interval(dur)) FROM j ORDER BY id",
    "SELECT id FROM ev WHERE at + dur > '2024-06-01' ORDER BY id",
    "SELECT id, at + dur FROM ev ORDER BY at + dur NULLS FIRST, id",
    "SELECT id FROM ev WHERE dur * 2 > '1 day' ORDER BY id",
    "SELECT id, at + dur * 2, (dur + dur) * n, at - (dur / 2), -(dur * n),"
    " at + dur + interval '1 hour' FROM ev ORDER BY id",
    "SELECT id, CASE WHEN n > 2 THEN at + dur END, coalesce(at + dur, at) FROM ev ORDER BY id",
    "SELECT max(dur * 2), min(at + dur) FROM ev",
    # printed as written: '1 mon', not the '30 days' of psycopg's timedelta
    "SELECT id, jsonb_build_object('d', dur), to_jsonb(dur), to_jsonb(dur * 2) FROM ev ORDER BY id",
    "SET TIME ZONE 'America/New_York'",
    "SELECT id, at + dur, at - dur FROM ev ORDER BY id",
    # PostgreSQL's errors
    "SELECT id, dur + 1 FROM ev ORDER BY id",  # 42883
    "SELECT id, dur * f FROM ev ORDER BY id",  # 22008: '1 mon' * -1e10
    "SELECT id, dur / 0 FROM ev ORDER BY id",  # 22012
    "SELECT id, dur * 'x' FROM ev ORDER BY id",  # 22P02
    # an UPDATE stores the fields computed; the reads after it tell them apart
    "UPDATE ev SET dur = dur * 2 WHERE id >= 4",
    "UPDATE ev SET at = at + dur WHERE id = 2",
    "UPDATE ev SET dur = -dur WHERE id = 5",
    "UPDATE ev SET dur = dur + interval '1 mon' WHERE id = 1",
    "SELECT id, dur, at, at + dur, ts + dur FROM ev ORDER BY id",
    # an interval's text in the session's IntervalStyle
    "SELECT id, dur::text, (dur * 2)::text, upper(to_char(ts, 'YYYY')) || dur::text FROM ev"
    " ORDER BY id",
    "SET IntervalStyle = 'sql_standard'",
    "SELECT id, dur::text, concat(dur::text, '!') FROM ev ORDER BY id",
    "SET IntervalStyle = 'iso_8601'",
    "SELECT id, dur::text FROM ev WHERE dur::text LIKE 'P%M%' ORDER BY id",
]


def test_interval_arithmetic_as_in_postgresql(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, SCRIPT, lambda d: (d.name, d.type_code)) == []


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT id, at + dur FROM ev WHERE id IN (4, 8) ORDER BY id",
        "SELECT id, dur + interval '1 day' FROM ev WHERE id IN (4, 8) ORDER BY id",
    ],
)
def test_a_span_written_two_ways_is_refused(collated_pair: Pair, statement: str) -> None:
    """'1 mon' and '30 days' share a key in the engine; added to a date they differ:
    refused, never the other's answer."""
    plain, enc = collated_pair
    for conn in (plain, enc):
        conn.execute("INSERT INTO ev (id, at, dur) VALUES (8, '2025-01-31 00:00Z', '30 days')")
    assert outcome(enc, statement) == ("error", "0A000")
    assert outcome(plain, statement)[0] == "rows"


def test_one_application_value_is_answered(collated_pair: Pair) -> None:
    """Where the values of one span print differently but psycopg hands both out as the
    same timedelta, a result of the key itself is answered (as before: the application
    cannot tell them apart)."""
    plain, enc = collated_pair
    for conn in (plain, enc):
        conn.execute("INSERT INTO ev (id, n, dur) VALUES (8, 7, '30 days')")
    statement = "SELECT DISTINCT dur FROM ev WHERE n = 7 AND upper('a') = 'A'"
    assert outcome(enc, statement) == outcome(plain, statement)


def test_parameters(collated_pair: Pair) -> None:
    """A timedelta or a number bound beside an interval column: as PostgreSQL reads it."""
    plain, enc = collated_pair
    for sql, params in (
        ("SELECT id, at + %s, dur + %s FROM ev ORDER BY id", (dt.timedelta(hours=5),) * 2),
        ("SELECT id, dur * %s, dur / %s FROM ev ORDER BY id", (1.5, 4)),
        ("SELECT id FROM ev WHERE at + dur > %s ORDER BY id", ("2024-06-01",)),
    ):
        assert outcome(enc, sql, params) == outcome(plain, sql, params), sql


# an error of the client's arithmetic leaves the transaction failed, as PostgreSQL's
# does, and what the transaction wrote before it is rolled back with it
IN_TRANSACTION = [
    "BEGIN",
    "UPDATE ev SET dur = dur * 3 WHERE id = 1",
    "SELECT id, dur / 0 FROM ev ORDER BY id",  # 22012
    "SELECT id, dur FROM ev WHERE id = 1",  # 25P02: the transaction is failed
    "ROLLBACK",
    "SELECT id, dur, at + dur FROM ev WHERE id = 1",
    "BEGIN",
    "SELECT id, dur * f FROM ev ORDER BY id",  # 22008
    "COMMIT",
    "SELECT id, dur FROM ev ORDER BY id",
]


def test_errors_fail_the_transaction(collated_pair: Pair) -> None:
    assert transaction_differences(collated_pair, IN_TRANSACTION) == []
