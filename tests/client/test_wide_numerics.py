"""Numerics of more than 28 significant digits -- ``numeric(38,10)`` near its bound,
``numeric`` without a precision -- judged against PostgreSQL. Python's decimal context
rounds to 28 digits: a negative constant of 38 digits was refused (22003) at INSERT, a
negation and a sum computed by the client were rounded to 28 digits (wrong answers),
and a Sum onion built for a ``numeric(38,10)`` column failed (ASHE holds 96 bits: such a
column's Sum onion is HOM now) -- each compared here with the server's answer."""

from __future__ import annotations

from .pairs import Pair, outcome, script_differences

DDL = [
    "CREATE TABLE w (id int PRIMARY KEY, v numeric(38,10), u numeric, k text)",
    "INSERT INTO w VALUES"
    " (1, 1234567890123456789012345678.1234567890, 123456789012345678901234567890123.25, 'a'),"
    " (2, -9999999999999999999999999999.9999999999, 1, 'b'),"
    " (3, 0.0000000001, -0.000000000000000000000000000000001, 'a'),"
    " (4, NULL, 99999999999999999999999999999999999999999999.5, 'b')",
]

SCRIPT = [
    "SELECT id, -v, -u FROM w ORDER BY id",
    "SELECT sum(v), sum(u), avg(v), avg(u) FROM w",
    "SELECT k, sum(v), count(u) FROM w GROUP BY k ORDER BY k",
    "SELECT sum(v) FILTER (WHERE id < 3), max(v), min(u) FROM w",
    "SELECT id, v + 1, v * 2, u * 2, u + u, u - 0.5 FROM w ORDER BY id",
    "SELECT id FROM w WHERE v = 1234567890123456789012345678.1234567890",
    "SELECT id FROM w WHERE v = -9999999999999999999999999999.9999999999",
    "SELECT id FROM w WHERE v < -9999999999999999999999999999.9999999998 ORDER BY id",
    "SELECT id, v::text FROM w ORDER BY id",
    "INSERT INTO w VALUES (5, -9999999999999999999999999999.9999999999, -1e40, 'c')",
    "UPDATE w SET v = -v, u = -u WHERE id IN (2, 4)",
    "UPDATE w SET v = v + 1 WHERE id = 1",
    "SELECT id, v, u FROM w ORDER BY id",
    "SELECT sum(v), sum(u) FROM w",
    "DELETE FROM w WHERE id = 5",
]


def test_wide_numerics_as_in_postgresql(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, SCRIPT) == []


def test_a_sum_past_an_onions_domain_is_answered_or_refused(collated_pair: Pair) -> None:
    """``sum(v * 2)`` wants a precomputed column whose values pass what its Sum onion
    holds: that build is left out, and the statement answered as PostgreSQL answers it
    or refused (0A000) -- never a data error PostgreSQL does not raise."""
    plain, enc = collated_pair
    got = outcome(enc, "SELECT sum(v * 2) FROM w WHERE id <> 2")
    assert got == outcome(plain, "SELECT sum(v * 2) FROM w WHERE id <> 2") or got == (
        "error",
        "0A000",
    ), got
    assert outcome(enc, "SELECT sum(v) FROM w") == outcome(plain, "SELECT sum(v) FROM w")
