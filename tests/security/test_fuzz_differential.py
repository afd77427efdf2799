"""Differential fuzzing: hypothesis draws SQL over a random schema and random data; each
statement runs on plain PostgreSQL and through the client.  Every answer must be equal,
or the client must refuse with a typed error that says why (``UnsupportedQuery``, or
``ValueOutOfDomain`` for a constant an encoding cannot represent) -- never a different
answer, never an untyped exception.

``ADAPTIVE_FUZZ_SEED`` picks the schema (default 1); ``ADAPTIVE_FUZZ_EXAMPLES`` the
number of statements of the long run.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from client.test_differential import _rows
from hypothesis import given, settings
from hypothesis import strategies as st

import adaptive_client
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.errors import AdaptiveError, UnsupportedQuery, ValueOutOfDomain

from .sqlgen import Query, Schema, queries, random_schema

SEED = int(os.environ.get("ADAPTIVE_FUZZ_SEED", "1"))
TYPED_REFUSALS = (UnsupportedQuery, ValueOutOfDomain)
OUTCOMES: Counter[str] = Counter()


class Pair:
    def __init__(self, schema: Schema, plain: psycopg.Connection[Any], enc: Any) -> None:
        self.schema, self.plain, self.enc = schema, plain, enc


@pytest.fixture(scope="module")
def pair(new_database: Callable[..., str]) -> Iterator[Pair]:
    schema = random_schema(SEED)
    plain = psycopg.connect(new_database("fuzzplain"), autocommit=True)
    enc = adaptive_client.connect(
        new_database("fuzzenc"),
        master_key=MasterKey.generate(),
        config=schema.config(),
        autocommit=True,
    )
    for t in schema.tables:
        plain.execute(t.ddl())
        enc.execute(t.ddl())
        with plain.cursor() as cur:
            cur.executemany(t.insert(), t.rows)
        enc.cursor().executemany(t.insert(), t.rows)
    try:
        yield Pair(schema, plain, enc)
    finally:
        print(f"differential fuzz (schema seed {SEED}): {dict(OUTCOMES)}")
        plain.close()
        enc.close()


def check(pair: Pair, q: Query) -> None:
    try:
        expected = pair.plain.execute(q.sql, q.params or None).fetchall()
    except psycopg.Error:
        # not valid SQL for PostgreSQL either: the client must refuse it too
        with pytest.raises((AdaptiveError, psycopg.Error)):
            pair.enc.execute(q.sql, q.params or None).fetchall()
        OUTCOMES["invalid for both"] += 1
        return
    try:
        got = pair.enc.execute(q.sql, q.params or None).fetchall()
    except TYPED_REFUSALS as exc:
        OUTCOMES[type(exc).__name__] += 1
        return
    assert _rows(got, q.ordered) == _rows(expected, q.ordered), (q.sql, q.params)
    OUTCOMES["equal"] += 1


@settings(max_examples=int(os.environ.get("ADAPTIVE_FUZZ_SHORT", "150")), database=None)
@given(data=st.data())
def test_random_sql_matches_plain(pair: Pair, data: Any) -> None:
    check(pair, data.draw(queries(pair.schema)))


@pytest.mark.slow
@settings(max_examples=int(os.environ.get("ADAPTIVE_FUZZ_EXAMPLES", "600")), database=None)
@given(data=st.data())
def test_random_sql_matches_plain_long(pair: Pair, data: Any) -> None:
    check(pair, data.draw(queries(pair.schema)))


def test_outcomes_were_mostly_answers(pair: Pair) -> None:
    """Runs after the fuzz tests of this module: most statements were answered."""
    if OUTCOMES["equal"] == 0:
        pytest.skip("run with the fuzz tests")
    assert OUTCOMES["equal"] >= sum(OUTCOMES.values()) // 2, dict(OUTCOMES)


def test_join_of_columns_whose_cheapest_onions_differ(new_database: Callable[..., str]) -> None:
    """Found by the fuzzer: ``a.ref = b.id`` with a.ref's Ord onion at OPE (its Eq at RND)
    and b.id's Eq onion at DET (its Ord at RND) took a different onion on each side and
    was refused; the two columns are joined on one onion kind, peeling what it takes."""
    cfg = {"tables": {t: {c: {"join_group": "g"} for c in ("id", "ref")} for t in ("p", "q")}}
    dsn = new_database("joinmix")
    with adaptive_client.connect(
        dsn, master_key=MasterKey.generate(), config=cfg, autocommit=True
    ) as enc:
        for t in ("p", "q"):
            enc.execute(f"CREATE TABLE {t} (id integer PRIMARY KEY, ref integer)")
            enc.execute(f"INSERT INTO {t} VALUES (1, 2), (2, 3), (3, NULL), (4, 1)")
        enc.execute("SELECT id FROM q WHERE ref > 1").fetchall()  # Ord(q.ref) -> OPE
        got = enc.execute("SELECT a.id, b.id FROM q a JOIN p b ON a.ref = b.id").fetchall()
        assert sorted(got) == [(1, 2), (2, 3), (4, 1)]
        layers = {
            (t, c.name, o.onion.value): o.layer
            for t in ("p", "q")
            for c in enc.catalog.table(t).columns.values()
            for o in c.onions.values()
        }
    assert layers[("q", "ref", "Eq")] == "DET"  # joined on the Eq onions
    assert layers[("p", "id", "Ord")] == "RND"  # no Ord onion peeled for the join
