"""extract() and date_part() of the week, ISO year, decade, century, millennium,
milliseconds and microseconds in the client engine, judged against PostgreSQL (refused
before); and the years of BC dates, which the engine numbers astronomically (1 BC its
year 0) and PostgreSQL does not (-1): extract(year) of 1 BC was 0, a wrong answer.  A
difference of dates is an integer (it was described as a bigint, and its sum refused)."""

from __future__ import annotations

from .pairs import Pair, script_differences

DDL = [
    "CREATE TABLE t (id int PRIMARY KEY, d date, ts timestamp, tz timestamptz)",
    "INSERT INTO t VALUES"
    " (1, '2024-02-29', '2024-02-29 13:45:12.5', '2024-03-31 01:30:00.123456+00'),"
    " (2, '1999-12-31', '1999-12-31 23:59:59.999999', '2024-10-27 00:30+00'),"
    " (3, NULL, NULL, NULL),"
    " (4, '2021-01-03', '2021-01-01 00:00', '2000-01-01 00:00+14'),"
    " (5, '0001-01-01', '0001-01-01 00:00:00', '2001-01-01 00:00+00'),"
    " (6, '0001-12-31 BC', '2016-01-03 10:00:00.000001', '2100-12-31 12:00+00'),"
    " (7, '0002-01-03 BC', '2001-01-01', '1900-06-30 00:00+00'),"
    " (8, '0100-12-31 BC', '2008-12-29', '2005-01-01 00:00+00'),"
    " (9, '1001-01-01 BC', '2010-01-03 23:59:59', '2010-01-04 04:59:59+00'),"
    " (10, '0011-01-01 BC', '1900-01-01', '1970-01-01 00:00+00')",
]

SCRIPT = [
    "SET TimeZone = 'America/New_York'",
    "SELECT id, extract(year from d), extract(isoyear from d), extract(decade from d),"
    " extract(century from d), extract(millennium from d), extract(week from d) FROM t ORDER BY id",
    "SELECT id, extract(week from ts), extract(isoyear from ts), extract(decade from ts),"
    " extract(century from ts), extract(millennium from ts) FROM t ORDER BY id",
    "SELECT id, extract(week from tz), extract(isoyear from tz), extract(decade from tz),"
    " extract(century from tz), extract(millennium from tz) FROM t ORDER BY id",
    "SELECT id, extract(milliseconds from ts), extract(microseconds from ts),"
    " extract(milliseconds from tz), extract(microseconds from tz) FROM t ORDER BY id",
    "SELECT id, date_part('milliseconds', ts), date_part('microseconds', tz),"
    " date_part('week', d), date_part('isoyear', ts), date_part('year', d),"
    " date_part('decade', d) FROM t ORDER BY id",
    "SELECT extract(isoyear from d) AS y, count(*) FROM t GROUP BY 1 ORDER BY 1",
    "SELECT id FROM t WHERE extract(year from d) < 0 ORDER BY id",
    "SELECT id, extract(milliseconds from d) FROM t",  # 0A000, as PostgreSQL raises it
    # date - date: an integer, summed and averaged as one (bigint, refused before)
    "SELECT id, d - '2000-01-01'::date, (d - date '2000-01-01') * 2 FROM t ORDER BY id",
    "SELECT sum(d - date '2000-01-01'), avg(d - date '2000-01-01'),"
    " max(date '2000-01-01' - d) FROM t",
]


def test_fields_as_in_postgresql(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, SCRIPT, lambda d: (d.name, d.type_code)) == []
