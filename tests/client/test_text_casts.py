"""Casts of a text column to ``date`` and ``timestamp`` in the client engine
(engine/text_casts.py), judged against PostgreSQL on an ICU and a libc collation: the
forms PostgreSQL's input functions read (ISO, month names, ``YYYYMMDD``, Julian days,
``epoch``, a zone a timestamp ignores, a fraction rounded to microseconds, 24:00:00), the
session's DateStyle field order, and their errors (22007, 22008); refused before.  A
value of the clock (``today``) is refused.  ``date_trunc`` of a date cast to a date."""

from __future__ import annotations

from .pairs import Pair, outcome, script_differences

DDL = [
    "CREATE TABLE c (k int PRIMARY KEY, s text)",
    "INSERT INTO c VALUES (1, '2024-01-02'), (2, 'Jan 3 2024'), (3, NULL), (4, '20240105'),"
    " (5, '01/02/2024'), (6, 'epoch'), (7, '2024-01-02 10:11:12.5+05'),"
    " (8, '  2023-12-31  '), (9, '1999-12-31 23:59:59.9999995'), (10, 'J2451545'),"
    " (11, '2020-02-29 24:00:00')",
    "CREATE TABLE o (k int PRIMARY KEY, amount numeric(10,2), placed date)",
    "INSERT INTO o VALUES (1, 10.50, '2024-01-02'), (2, 3.25, '2024-01-15'),"
    " (3, 99.99, '2024-02-01'), (4, NULL, NULL)",
]

# date_trunc of a date is a timestamptz (of the date's midnight in the session's zone):
# its casts answered as PostgreSQL's (refused before)
TRUNCATED = [
    "SELECT date_trunc('month', placed)::date AS m, sum(amount) FROM o GROUP BY 1 ORDER BY 1",
    "SELECT k, date_trunc('year', placed)::date, date_trunc('week', placed)::timestamp"
    " FROM o ORDER BY k",
    "SET TimeZone = 'America/New_York'",
    "SELECT k, date_trunc('month', placed), date_trunc('month', placed)::date FROM o ORDER BY k",
    "SET TimeZone = 'UTC'",
]

SCRIPT = [
    "SELECT k, s::date FROM c ORDER BY k",
    "SELECT k, s::timestamp, CAST(s AS timestamp) + interval '1 day' FROM c ORDER BY k",
    "SELECT k, s::date < '2024-01-03', CAST(s AS date) + 1 FROM c ORDER BY k",
    "SELECT k FROM c WHERE s::date = '2024-01-02' ORDER BY k",
    "SELECT s::date AS d, count(*) FROM c GROUP BY 1 ORDER BY 1",
    "SET DateStyle = 'ISO, DMY'",
    "SELECT k, s::date FROM c WHERE k = 5",
    "SET DateStyle = 'ISO, MDY'",
    "SELECT s::date FROM (VALUES ('2024-02-30')) v(s)",  # 22008
    "SELECT s::date FROM (VALUES ('garbage')) v(s)",  # 22007
    "SELECT s::timestamp FROM (VALUES ('2024-01-01 25:00')) v(s)",  # 22008
    "SELECT s::date FROM (VALUES ('5874898-01-01')) v(s)",  # 22008
]


def test_text_read_as_dates_and_timestamps_as_in_postgresql(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, SCRIPT) == []


def test_date_trunc_of_a_date_cast_as_in_postgresql(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, TRUNCATED) == []


def test_a_value_of_the_clock_is_refused(collated_pair: Pair) -> None:
    _, enc = collated_pair
    assert outcome(enc, "SELECT s::date FROM (VALUES ('today')) v(s)") == ("error", "0A000")
