"""Differential fuzzing of writes: each drawn statement runs on plain PostgreSQL and through
the client, inside a savepoint rolled back afterwards; its rows (RETURNING), its error
class and every table's contents must be equal -- or the client refuses, typed, and
changes nothing."""

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
from adaptive_client.errors import UnsupportedQuery, ValueOutOfDomain

from .dmlgen import writes
from .sqlgen import Query, Schema, random_schema

SEED = int(os.environ.get("ADAPTIVE_FUZZ_SEED", "1"))
TYPED_REFUSALS = (UnsupportedQuery, ValueOutOfDomain)
OUTCOMES: Counter[str] = Counter()


class Pair:
    def __init__(self, schema: Schema, plain: psycopg.Connection[Any], enc: Any) -> None:
        self.schema, self.plain, self.enc = schema, plain, enc

    def contents(self, conn: Any) -> list[Any]:
        return [
            _rows(conn.execute(f"SELECT * FROM {t.name}").fetchall(), False)
            for t in self.schema.tables
        ]


@pytest.fixture(scope="module")
def pair(new_database: Callable[..., str]) -> Iterator[Pair]:
    schema = random_schema(SEED + 100)
    plain = psycopg.connect(new_database("fuzzwplain"), autocommit=True)
    enc = adaptive_client.connect(
        new_database("fuzzwenc"),
        master_key=MasterKey.generate(),
        config=schema.config(),
        autocommit=True,
    )
    for t in schema.tables:
        for c in (plain, enc):
            c.execute(t.ddl())
            c.cursor().executemany(t.insert(), t.rows)
    plain.autocommit = enc.autocommit = False
    try:
        yield Pair(schema, plain, enc)
    finally:
        print(f"write fuzz (schema seed {SEED + 100}): {dict(OUTCOMES)}")
        plain.close()
        enc.close()


def _run(conn: Any, q: Query) -> tuple[Any, BaseException | None]:
    try:
        cur = conn.execute(q.sql, q.params or None)
        return (_rows(cur.fetchall(), False) if cur.description else cur.rowcount), None
    except (psycopg.Error, adaptive_client.AdaptiveError) as exc:
        return None, exc


def check(pair: Pair, q: Query) -> None:
    for c in (pair.plain, pair.enc):
        c.execute("SAVEPOINT fuzz")
    try:
        expected, plain_error = _run(pair.plain, q)
        got, enc_error = _run(pair.enc, q)
        if plain_error is not None:
            assert enc_error is not None, (q.sql, q.params, plain_error)
            assert isinstance(enc_error, (type(plain_error), *TYPED_REFUSALS)), (
                q.sql,
                q.params,
                plain_error,
                enc_error,
            )
            OUTCOMES["error for both"] += 1
            return
        if isinstance(enc_error, TYPED_REFUSALS):
            OUTCOMES[f"refused: {getattr(enc_error, 'construct', None)}"] += 1
            return
        assert enc_error is None, (q.sql, q.params, enc_error)
        assert got == expected, (q.sql, q.params)
        assert pair.contents(pair.enc) == pair.contents(pair.plain), (q.sql, q.params)
        OUTCOMES["equal"] += 1
    finally:
        for c in (pair.plain, pair.enc):
            c.execute("ROLLBACK TO SAVEPOINT fuzz")
            c.execute("RELEASE SAVEPOINT fuzz")


@settings(max_examples=int(os.environ.get("ADAPTIVE_FUZZ_SHORT", "150")), database=None)
@given(data=st.data())
def test_random_writes_match_plain(pair: Pair, data: Any) -> None:
    check(pair, data.draw(writes(pair.schema)))


def test_write_outcomes_were_mostly_answers(pair: Pair) -> None:
    """Runs after the fuzz test of this module: most writes were carried out."""
    if not OUTCOMES:
        pytest.skip("run with the fuzz test")
    assert OUTCOMES["equal"] + OUTCOMES["error for both"] >= sum(OUTCOMES.values()) * 2 // 3, dict(
        OUTCOMES
    )
