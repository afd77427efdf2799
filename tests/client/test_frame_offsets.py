"""A RANGE frame's offset over a date or timestamp order (compile/frame_offsets.py),
judged against PostgreSQL on an ICU and a libc collation: an interval or a string read
as one (refused, or a DuckDB binder error, before); a negative offset is 22013 and an
unreadable one 22007, as in PostgreSQL (0A000 before)."""

from __future__ import annotations

from .pairs import Pair, script_differences

DDL = [
    "CREATE TABLE w (k int PRIMARY KEY, b text, d date, ts timestamp, n numeric(6,2))",
    "INSERT INTO w VALUES (1, 'x', '2024-01-03', '2024-01-03 10:00', 1.5),"
    " (2, 'Y', '2024-01-05', '2024-01-05 09:00', 2.5), (3, 'x', '2024-01-05',"
    " '2024-01-05 23:00', NULL), (4, 'z', NULL, NULL, 4), (5, 'b', '2023-12-31',"
    " '2023-12-31 00:00', 0.5), (6, NULL, '2024-02-01', '2024-02-01 12:00', 3),"
    " (7, 'a', '2024-01-10', '2024-01-10 08:30', 2)",
]

SCRIPT = [
    "SELECT k, count(b) OVER (ORDER BY d RANGE BETWEEN '3 days' PRECEDING AND CURRENT ROW)"
    " FROM w ORDER BY k",
    "SELECT k, count(*) OVER (ORDER BY d RANGE BETWEEN interval '1 day' PRECEDING"
    " AND interval '1 week' FOLLOWING) FROM w ORDER BY k",
    "SELECT k, count(*) OVER (ORDER BY ts RANGE BETWEEN '36 hours' PRECEDING AND CURRENT ROW)"
    " FROM w ORDER BY k",
    "SELECT k, count(*) OVER (ORDER BY d DESC RANGE BETWEEN '1 month' PRECEDING"
    " AND CURRENT ROW) FROM w ORDER BY k",
    "SELECT k, count(*) OVER (ORDER BY ts RANGE BETWEEN interval '1 day 2 hours' PRECEDING"
    " AND CURRENT ROW) FROM w ORDER BY k",
    "SELECT k, count(*) OVER (ORDER BY d RANGE BETWEEN '1 mon' PRECEDING AND '2 days'"
    " FOLLOWING) FROM w ORDER BY k",
    "SELECT k, count(*) OVER (ORDER BY ts RANGE '1 day' PRECEDING) FROM w ORDER BY k",
    "SELECT k, sum(n) OVER (ORDER BY n RANGE BETWEEN 1 PRECEDING AND 0.5 FOLLOWING)"
    " FROM w ORDER BY k",
    "SELECT k, count(*) OVER (ORDER BY d RANGE BETWEEN '-1 day' PRECEDING AND CURRENT ROW)"
    " FROM w ORDER BY k",
    "SELECT k, count(*) OVER (ORDER BY d RANGE BETWEEN 'x' PRECEDING AND CURRENT ROW)"
    " FROM w ORDER BY k",
]


def test_range_frame_offsets_as_in_postgresql(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, SCRIPT) == []
