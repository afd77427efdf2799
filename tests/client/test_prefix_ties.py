"""Strings that tie on their OPE prefix: the server orders only the prefix, the client
finishes the sort.  With LIMIT/OFFSET the server must keep every row of a tie (FETCH ...
WITH TIES on the keys up to the string), whatever keys follow the string -- otherwise a
later key (``ORDER BY s, id``) breaks the tie on the server, before the rest of the
string is compared, and the LIMIT cuts the wrong rows.  Differential against plain
PostgreSQL."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client

PREFIXES = ("aaaaaaaa", "aaaaaaab", "zzzzzzzzzz", "mm")
DDL = "CREATE TABLE words (id integer PRIMARY KEY, s text, n integer)"


def _rows() -> list[tuple[int, str | None, int]]:
    rng = random.Random(7)
    rows: list[tuple[int, str | None, int]] = []
    for i in range(1, 241):
        if i % 40 == 0:
            s = None
        else:  # long shared prefixes, then a short distinguishing tail (or none)
            tail = "".join(rng.choice("AZaz09 ") for _ in range(rng.randrange(0, 4)))
            s = rng.choice(PREFIXES) + tail
        rows.append((i, s, rng.randrange(4)))
    return rows


@pytest.fixture(scope="module")
def pair(new_database: Any, master_key: Any) -> Iterator[tuple[Any, Any]]:
    plain = psycopg.connect(new_database("ties_plain"), autocommit=True)
    enc = adaptive_client.connect(new_database("ties_enc"), master_key=master_key, autocommit=True)
    rows = _rows()
    for conn in (plain, enc):
        conn.execute(DDL)
        conn.cursor().executemany("INSERT INTO words VALUES (%s, %s, %s)", rows)
    yield plain, enc
    plain.close()
    enc.close()


QUERIES = [
    "SELECT s, id FROM words ORDER BY s, id LIMIT 5",
    "SELECT s, id FROM words ORDER BY s, id DESC LIMIT 7",
    "SELECT s, id FROM words ORDER BY s DESC, id LIMIT 9 OFFSET 3",
    "SELECT s, id FROM words ORDER BY s NULLS FIRST, id LIMIT 8",
    "SELECT id FROM words ORDER BY s, id LIMIT 1",
    "SELECT id, s FROM words ORDER BY s, n, id LIMIT 12 OFFSET 40",
    "SELECT n, s, id FROM words ORDER BY n, s, id LIMIT 10",
    "SELECT n, s, id FROM words ORDER BY n DESC, s DESC, id LIMIT 10 OFFSET 2",
    "SELECT s, id FROM words WHERE n = 2 ORDER BY s, id LIMIT 6",
    "SELECT s, id FROM words ORDER BY s, id OFFSET 230",
    "SELECT s, id FROM words ORDER BY s, id",
    # DISTINCT orders by selected columns only: their Ord ciphertexts ride along, hidden
    "SELECT DISTINCT s FROM words ORDER BY s LIMIT 4",
    "SELECT DISTINCT s, n FROM words ORDER BY s DESC, n LIMIT 6 OFFSET 1",
    "SELECT DISTINCT n FROM words ORDER BY n DESC",
    "SELECT DISTINCT n AS k, s FROM words ORDER BY k, s",
]


@pytest.mark.parametrize("query", QUERIES)
def test_order_by_a_string_then_more_keys_with_limit(pair: tuple[Any, Any], query: str) -> None:
    plain, enc = pair
    assert enc.execute(query).fetchall() == plain.execute(query).fetchall()


def test_a_limit_through_a_tie_is_exact_for_every_cut(pair: tuple[Any, Any]) -> None:
    plain, enc = pair
    query = "SELECT id FROM words ORDER BY s DESC, id LIMIT %s OFFSET %s"
    for limit, offset in [(1, 0), (3, 0), (2, 5), (10, 17), (4, 100), (50, 190)]:
        want = plain.execute(query, (limit, offset)).fetchall()
        assert enc.execute(query, (limit, offset)).fetchall() == want, (limit, offset)


@pytest.mark.parametrize(
    "query",
    ["SELECT DISTINCT s FROM words ORDER BY n", "SELECT DISTINCT s AS t FROM words ORDER BY id"],
)
def test_distinct_ordered_by_a_column_not_selected_is_refused(
    pair: tuple[Any, Any], query: str
) -> None:
    """PostgreSQL refuses it; the client raises the same error, before sending anything."""
    plain, enc = pair
    with pytest.raises(psycopg.errors.InvalidColumnReference) as want:
        plain.execute(query)
    with pytest.raises(psycopg.errors.InvalidColumnReference) as got:
        enc.execute(query)
    assert str(got.value) == str(want.value).splitlines()[0]


@pytest.mark.parametrize(
    "query",
    [
        "SELECT DISTINCT s FROM words ORDER BY s",
        "SELECT DISTINCT s AS t, n FROM words ORDER BY t, 2",
        "SELECT DISTINCT n FROM words ORDER BY n DESC",
    ],
)
def test_distinct_ordered_by_what_it_selects(pair: tuple[Any, Any], query: str) -> None:
    plain, enc = pair
    assert enc.execute(query).fetchall() == plain.execute(query).fetchall()
