"""sum() and avg() of an interval column computed by the client (the server holds only
ciphertexts), judged against PostgreSQL: on the fields PostgreSQL stores, so that '6
mons' + '6 mons' is '1 year' (365 days to psycopg, where a sum of timedeltas gives 360),
avg's quotient cascaded as interval_div cascades it, typed interval (they raised a
Python TypeError before: a client bug reaching the application).  An overflowing sum is
22008; DISTINCT over intervals of one span written differently is refused."""

from __future__ import annotations

import pytest

from .pairs import Pair, outcome, script_differences

DDL = [
    "CREATE TABLE t (id int PRIMARY KEY, iv interval, g int)",
    "INSERT INTO t VALUES (1, '1 mon 2 days 03:00', 1), (2, '-1 day 00:00:01', 1),"
    " (3, NULL, 2), (4, '6 mons', 2), (5, '6 mons', 2), (6, '1 mon', 1),"
    " (7, '29 days 23:59:59.999999', 1), (8, '7 mons 13 days 00:00:00.000007', 2),"
    " (9, '1 year 1 mon', 3), (10, '5 mons 3 days', 3), (11, '-2 mons 1 day', 3)",
    "CREATE TABLE big (id int PRIMARY KEY, iv interval)",
    "INSERT INTO big VALUES (1, '178000000 years'), (2, '178000000 years')",
]

SCRIPT = [
    "SELECT sum(iv), avg(iv), min(iv), max(iv), count(iv) FROM t",
    "SELECT sum(iv), avg(iv) FROM t WHERE g = 2",
    "SELECT sum(iv), avg(iv) FROM t WHERE g = 3",
    "SELECT avg(iv) FROM t WHERE g = 1",
    "SELECT sum(DISTINCT iv), avg(DISTINCT iv) FROM t WHERE g = 2",
    "SELECT sum(iv), avg(iv) FROM t WHERE id > 100",
    "SELECT sum(iv) FROM big",  # 22008
]


def test_interval_sums_as_in_postgresql(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, SCRIPT, lambda d: (d.name, d.type_code)) == []


@pytest.mark.parametrize("aggregate", ["sum", "avg"])
def test_distinct_spans_written_differently_are_refused(
    collated_pair: Pair, aggregate: str
) -> None:
    _, enc = collated_pair
    enc.execute("INSERT INTO t VALUES (12, '30 days', 4), (13, '1 mon', 4)")
    statement = f"SELECT {aggregate}(DISTINCT iv) FROM t WHERE g = 4"
    assert outcome(enc, statement) == ("error", "0A000")
