"""Differential fuzzing of the split execution: hypothesis composes statements from the
constructs the server cannot evaluate over ciphertexts (splitgen.py) over the shop of
tests/client/read_queries.py; each runs on plain PostgreSQL and through the client.  The
answer must be equal (numerics with their scale, in order where ordered), or PostgreSQL
and the client both raise an error of one SQLSTATE, or the client refuses with
UnsupportedQuery -- never a different answer, never an untyped exception.

``ADAPTIVE_FUZZ_SPLIT`` sets the number of statements of the short run (default 120);
the slow run draws ``ADAPTIVE_FUZZ_EXAMPLES`` (default 600)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from client.test_read_queries import Pair, _load, _rows
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import adaptive_client
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.errors import UnsupportedQuery

from .splitgen import SplitQuery, split_queries

OUTCOMES: Counter[str] = Counter()


@pytest.fixture(scope="module")
def pair(new_database: Any) -> Iterator[Pair]:
    plain = psycopg.connect(new_database("fzs_plain"), autocommit=True)
    enc = adaptive_client.connect(
        new_database("fzs_enc"), master_key=MasterKey.generate(), autocommit=True
    )
    _load(plain)
    _load(enc)
    try:
        yield Pair(plain, enc)
    finally:
        print(f"split fuzz: {dict(OUTCOMES)}")
        plain.close()
        enc.close()


def check(pair: Pair, q: SplitQuery) -> None:
    try:
        expected = pair.plain.execute(q.sql).fetchall()
    except psycopg.Error as exc:
        try:
            pair.enc.execute(q.sql).fetchall()
        except UnsupportedQuery:
            OUTCOMES["refused"] += 1
            return
        except psycopg.Error as got:
            assert got.sqlstate == exc.sqlstate, (q.sql, got, exc)
            OUTCOMES["same error"] += 1
            return
        raise AssertionError(f"PostgreSQL raised {exc!r}, the client answered: {q.sql}") from None
    try:
        got = pair.enc.execute(q.sql).fetchall()
    except UnsupportedQuery:
        OUTCOMES["refused"] += 1
        return
    assert _rows(got, q.ordered) == _rows(expected, q.ordered), q.sql
    OUTCOMES["equal"] += 1


_SETTINGS = {"database": None, "deadline": None, "suppress_health_check": [HealthCheck.too_slow]}


@settings(max_examples=int(os.environ.get("ADAPTIVE_FUZZ_SPLIT", "120")), **_SETTINGS)
@given(data=st.data())
def test_split_constructs_match_plain(pair: Pair, data: Any) -> None:
    check(pair, data.draw(split_queries()))


@pytest.mark.slow
@settings(max_examples=int(os.environ.get("ADAPTIVE_FUZZ_EXAMPLES", "600")), **_SETTINGS)
@given(data=st.data())
def test_split_constructs_match_plain_long(pair: Pair, data: Any) -> None:
    check(pair, data.draw(split_queries()))


def test_most_were_answered(pair: Pair) -> None:
    """Runs after the fuzz tests of this module: most statements were answered."""
    if not OUTCOMES:
        pytest.skip("run with the fuzz tests")
    answered = OUTCOMES["equal"] + OUTCOMES["same error"]
    assert answered >= 2 * OUTCOMES["refused"], dict(OUTCOMES)


@pytest.mark.parametrize(
    "sql",
    [
        "WITH t AS (SELECT id, id FROM customer) SELECT * FROM t ORDER BY id DESC",
        "SELECT id, lower(name) AS id FROM customer ORDER BY id",
        "SELECT id AS x, upper(name) AS X FROM customer ORDER BY x",
        "SELECT * FROM (SELECT id, lower(name) AS id FROM customer) s ORDER BY id",
    ],
)
def test_ambiguous_order_by_raises_as_postgresql(pair: Pair, sql: str) -> None:
    """Found by this fuzzer: PostgreSQL refuses ``ORDER BY id`` where two different
    output columns are named id (AmbiguousColumn); the client ordered by the first."""
    with pytest.raises(psycopg.errors.AmbiguousColumn):
        pair.plain.execute(sql)
    pair.plain.rollback()
    with pytest.raises(psycopg.errors.AmbiguousColumn):
        pair.enc.execute(sql).fetchall()


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT id, id FROM customer WHERE lower(name) <> 'x' ORDER BY id",
        'SELECT id, lower(name) AS "ID" FROM customer ORDER BY id',
        "WITH t AS (SELECT id, lower(name) AS n FROM customer) SELECT *, n FROM t ORDER BY id",
    ],
)
def test_order_by_a_name_not_ambiguous_is_answered(pair: Pair, sql: str) -> None:
    assert pair.enc.execute(sql).fetchall() == pair.plain.execute(sql).fetchall()


def test_cte_column_choosing_char_or_varchar_is_unpadded(pair: Pair) -> None:
    """Found by this fuzzer: a CTE's column ``CASE ... THEN name ELSE region END``
    (varchar or char(2)) is text in PostgreSQL, printed unpadded; read through ``SELECT *``
    the client takes it for char(2) and pads the empty name."""
    sql = (
        "WITH t AS (SELECT id, CASE WHEN id > 0 THEN name ELSE region END AS c FROM customer) "
        "SELECT * FROM t ORDER BY id"
    )
    assert pair.enc.execute(sql).fetchall() == pair.plain.execute(sql).fetchall()
