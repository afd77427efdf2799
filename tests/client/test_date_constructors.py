"""make_date, to_timestamp(double precision) and isfinite over encrypted columns, in the
client engine, judged against PostgreSQL (refused before): results, comparisons with
strings, PostgreSQL's 22008 for a day that does not exist, year 0, NaN and instants out
of range, and 42883 where no overload takes the arguments."""

from __future__ import annotations

from .pairs import Pair, outcome, script_differences

DDL = [
    "CREATE TABLE s (id int PRIMARY KEY, y int, m int, d int, sec float8, n numeric(14,3),"
    " b bigint, at timestamp, tz timestamptz, day date)",
    "INSERT INTO s VALUES"
    " (1, 2024, 2, 29, 1.5, 1700000000.123, 5, '2024-02-29 10:30', '2024-02-29 10:30+00',"
    "  '2024-01-01'),"
    " (2, 2023, 2, 29, 0, -1.0005, 6, '2020-01-01', '2020-01-01 00:00+05', 'infinity'),"
    " (3, 1, 1, 1, -0.0000005, 0.0000005, 7, NULL, NULL, '-infinity'),"
    " (4, 5874897, 12, 31, -1e15, 1.0000015, 8, NULL, NULL, NULL),"
    " (5, 2020, 13, 1, 'NaN', NULL, NULL, NULL, NULL, NULL),"
    " (6, 0, 1, 1, 'Infinity', 2, 9, NULL, NULL, NULL),"
    " (7, -4713, 11, 24, '-Infinity', 3, 10, NULL, NULL, NULL),"
    " (8, 2000, 2, 29, 9224318016000, 4, 11, NULL, NULL, NULL)",
]

SCRIPT = [
    "SELECT id, make_date(y, m, d) FROM s WHERE id IN (1, 3, 8) ORDER BY id",
    "SELECT id, make_date(y, m, d)::text FROM s WHERE id = 7",  # 4714 BC
    "SELECT id FROM s WHERE make_date(y, m, d) > '2000-01-01' AND id IN (1, 3, 8) ORDER BY id",
    "SELECT id, make_date(y, 1, 1) - day FROM s WHERE id = 1",
    "SELECT id, make_date(b::int + 2000, 1, 1) FROM s WHERE id = 1",
    "SELECT make_date(y, m, d) FROM s WHERE id = 2",  # 22008: February 29 of 2023
    "SELECT make_date(y, m, d) FROM s WHERE id = 5",  # 22008: month 13
    "SELECT make_date(y, m, d) FROM s WHERE id = 6",  # 22008: year 0
    "SELECT make_date(b, 1, 1) FROM s",  # 42883: no make_date(bigint, ...)
    "SELECT make_date(y, m, 1.5) FROM s",  # 42883
    "SELECT id, to_timestamp(sec) FROM s WHERE id IN (1, 2, 3) ORDER BY id",
    "SELECT id, to_timestamp(n), to_timestamp(b), to_timestamp(y) FROM s WHERE id < 4 ORDER BY id",
    "SELECT id, to_timestamp(sec) = 'infinity' FROM s WHERE id IN (6, 7) ORDER BY id",
    "SELECT id FROM s WHERE to_timestamp(n) < '2000-01-01' ORDER BY id",
    "SELECT to_timestamp(sec) FROM s WHERE id = 4",  # 22008: out of range
    "SELECT to_timestamp(sec) FROM s WHERE id = 5",  # 22008: NaN
    "SELECT to_timestamp(sec) FROM s WHERE id = 8",  # 22008: past 294276
    "SET TimeZone = 'Asia/Kolkata'",
    "SELECT id, to_timestamp(n)::date, to_timestamp(sec) FROM s WHERE id < 4 ORDER BY id",
    "SELECT id, isfinite(day), isfinite(at), isfinite(tz) FROM s WHERE id < 5 ORDER BY id",
    "SELECT id, isfinite(to_timestamp(sec)), isfinite(make_date(y, 1, 1)) FROM s"
    " WHERE id IN (1, 6, 7) ORDER BY id",
    "SELECT count(*) FROM s WHERE NOT isfinite(day)",
    "SELECT isfinite(y) FROM s",  # 42883
]


def test_date_constructors_as_in_postgresql(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, SCRIPT) == []


def test_errors_are_postgresqls_classes(collated_pair: Pair) -> None:
    """The errors above are the server's classes, not refusals (the script compares
    them; here they are shown to be errors at all on the client's side)."""
    _, enc = collated_pair
    assert outcome(enc, "SELECT make_date(y, m, d) FROM s WHERE id = 2")[1] == "22008"
    assert outcome(enc, "SELECT to_timestamp(sec) FROM s WHERE id = 5")[1] == "22008"
