"""A string literal compared with a typed column, judged against PostgreSQL: the literal
is read by the column type's input function -- without a ``numeric(p,s)``'s precision,
so ``d = '1e400'`` finds no row where the client raised 22003 -- and a text the type
does not read is PostgreSQL's error, message and all (``invalid input syntax for type
integer: "abc"``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted

QUERIES = [
    "SELECT id FROM lit WHERE d = '1e400'",
    "SELECT id FROM lit WHERE d = '12345.678'",
    "SELECT id FROM lit WHERE d = '1.250'",
    "SELECT id FROM lit WHERE d IN ('1.25', '99999.99', '1e10')",
    "SELECT id FROM lit WHERE id = '1.5'",
    "SELECT id FROM lit WHERE id = 'abc'",
    "SELECT id FROM lit WHERE id = '99999999999'",
    "SELECT id FROM lit WHERE e = 'maybe'",
    "SELECT id FROM lit WHERE e = 'yes'",
    "SELECT id FROM lit WHERE c = 'not a date'",
    "SELECT id FROM lit WHERE f = 'abc'",
]


def _outcome(conn: Any, sql: str) -> tuple[Any, ...]:
    try:
        return ("rows", conn.execute(sql).fetchall())
    except psycopg.Error as exc:
        return ("error", exc.sqlstate, str(exc).splitlines()[0])


@pytest.fixture(scope="module")
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(
        new_database,
        master_key,
        "literal_cmp",
        {},
        [
            "CREATE TABLE lit (id integer PRIMARY KEY, d numeric(6,2), e boolean, c date, "
            "f double precision)"
        ],
        {"lit": [(1, "1.25", True, "2024-01-01", 0.5), (2, "-3", False, None, None)]},
    ) as pair:
        yield pair


@pytest.mark.parametrize("sql", QUERIES)
def test_literal_comparands_as_in_postgresql(pair: Pair, sql: str) -> None:
    plain, enc = pair
    assert _outcome(enc, sql) == _outcome(plain, sql)
