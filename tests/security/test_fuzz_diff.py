"""Differential fuzzing of the split execution on the differential schema: hypothesis
composes read queries from the constructs the server cannot evaluate over ciphertexts
(diffgen.py: functions, CASE, date arithmetic, subqueries, windows, set operations, CTEs,
DISTINCT ON, outer joins) over ``emp`` and ``dept``; each runs on plain PostgreSQL and
through the client on an encrypted database (every onion at its strongest layer).  The
answer must be equal (numerics with their scale, in order where the statement's own ORDER
BY orders it), or both raise an error of one SQLSTATE class, or the client refuses with
UnsupportedQuery -- never a different answer, never an untyped exception.

``ADAPTIVE_FUZZ_DIFF`` sets the number of statements of the short run (default 80); the
slow run draws ``ADAPTIVE_FUZZ_EXAMPLES`` (default 600)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from client.test_diff_queries import Pair, _pair, ordered
from client.test_read_queries import _rows
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adaptive_client.catalog.keys import MasterKey
from adaptive_client.errors import UnsupportedQuery

from .diffgen import diff_queries

OUTCOMES: Counter[str] = Counter()


@pytest.fixture(scope="module")
def pair(new_database: Any) -> Iterator[Pair]:
    yield from _pair(new_database, MasterKey.generate())
    print(f"differential-schema fuzz: {dict(OUTCOMES)}")


def check(pair: Pair, sql: str) -> None:
    try:
        expected = pair.plain.execute(sql).fetchall()
    except psycopg.Error as exc:
        try:
            pair.enc.execute(sql).fetchall()
        except UnsupportedQuery:
            OUTCOMES["refused"] += 1
            return
        except psycopg.Error as got:
            assert (got.sqlstate or "")[:2] == (exc.sqlstate or "")[:2], (sql, got, exc)
            OUTCOMES["same error"] += 1
            return
        raise AssertionError(f"PostgreSQL raised {exc!r}, the client answered: {sql}") from None
    try:
        got = pair.enc.execute(sql).fetchall()
    except UnsupportedQuery:
        OUTCOMES["refused"] += 1
        return
    in_order = ordered(sql)
    assert _rows(got, in_order) == _rows(expected, in_order), sql
    OUTCOMES["equal"] += 1


_SETTINGS = {"database": None, "deadline": None, "suppress_health_check": [HealthCheck.too_slow]}


@settings(max_examples=int(os.environ.get("ADAPTIVE_FUZZ_DIFF", "80")), **_SETTINGS)
@given(data=st.data())
def test_composed_queries_match_plain(pair: Pair, data: Any) -> None:
    check(pair, data.draw(diff_queries()))


@pytest.mark.slow
@settings(max_examples=int(os.environ.get("ADAPTIVE_FUZZ_EXAMPLES", "600")), **_SETTINGS)
@given(data=st.data())
def test_composed_queries_match_plain_long(pair: Pair, data: Any) -> None:
    check(pair, data.draw(diff_queries()))


def test_most_were_answered(pair: Pair) -> None:
    """Runs after the fuzz tests of this module: most statements were answered."""
    if not OUTCOMES:
        pytest.skip("run with the fuzz tests")
    answered = OUTCOMES["equal"] + OUTCOMES["same error"]
    assert answered >= OUTCOMES["refused"], dict(OUTCOMES)
