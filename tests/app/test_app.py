"""The application suite: a blog's schema and statements, on plain PostgreSQL and through
the client (see harness.py for what is compared)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.keys import MasterKey

from .cases import ALL
from .harness import Case, Pair
from .schema import SCHEMA, SEED, TABLES, VIEW


def _load(conn: Any) -> None:
    conn.execute(SCHEMA)
    with contextlib.suppress(adaptive_client.UnsupportedQuery):
        conn.execute(VIEW)  # (if refused, the view's cases report the gap)
    cur = conn.cursor()
    for sql, rows in SEED:
        cur.executemany(sql, rows)


@pytest.fixture(scope="module")
def pair(new_database: Any, master_key: MasterKey) -> Iterator[Pair]:
    plain = psycopg.connect(new_database("app_plain"), autocommit=True)
    enc = adaptive_client.connect(new_database("app_enc"), master_key=master_key, autocommit=True)
    _load(plain)
    _load(enc)
    plain.autocommit = False
    enc.autocommit = False
    p = Pair(plain, enc, TABLES)
    assert p.contents(enc) == p.contents(plain), "the loaded databases differ"
    yield p
    plain.rollback()
    enc.rollback()
    plain.close()
    enc.close()


def _param(case: Case) -> Any:
    marks = [pytest.mark.xfail(strict=True, reason=case.gap)] if case.gap else []
    return pytest.param(case, id=case.id, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in ALL])
def test_case(pair: Pair, case: Case) -> None:
    pair.check(case)
