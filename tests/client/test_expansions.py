"""BETWEEN SYMMETRIC and row comparisons (compile/expansions.py), and ANY/ALL of an
array literal, judged against PostgreSQL on rows with NULLs: the client dropped
SYMMETRIC (``BETWEEN SYMMETRIC 7 AND 1`` found nothing), its engine compared rows with
NULLs ordered (``(NULL, 2) > (5, 1)`` was true), and ``qty = ANY ('{5,0}')`` was an
error ("needs a list, not a str")."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from decimal import Decimal

import psycopg
import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted
from .test_engine_gaps import ICU

ROWS = [
    (1, "Alpha", 5, Decimal("1.50")),
    (2, "beta", None, Decimal("2.00")),
    (3, "Gamma", 7, None),
    (4, "delta", 5, Decimal("10.25")),
    (5, None, 0, Decimal("0.00")),
    (6, "beta", 5, Decimal("2.00")),
]
QUERIES = [
    "SELECT id FROM w WHERE qty BETWEEN SYMMETRIC 7 AND 1 ORDER BY id",
    "SELECT id FROM w WHERE qty BETWEEN SYMMETRIC 1 AND 7 ORDER BY id",
    "SELECT id FROM w WHERE qty NOT BETWEEN SYMMETRIC 7 AND 1 ORDER BY id",
    "SELECT id FROM w WHERE qty BETWEEN SYMMETRIC NULL AND 1 ORDER BY id",
    "SELECT id FROM w WHERE price BETWEEN SYMMETRIC 10.25 AND 1.5 ORDER BY id",
    "SELECT id FROM w WHERE name BETWEEN SYMMETRIC 'z' AND 'b' ORDER BY id",
    "SELECT id, qty BETWEEN SYMMETRIC 7 AND 1 FROM w ORDER BY id",
    "SELECT id FROM w WHERE (qty, id) > (5, 1) ORDER BY id",
    "SELECT id FROM w WHERE (qty, id) >= (5, 4) ORDER BY id",
    "SELECT id FROM w WHERE (qty, id) < (5, 4) ORDER BY id",
    "SELECT id FROM w WHERE (qty, id) <= (5, 4) ORDER BY id",
    "SELECT id FROM w WHERE (qty, name) = (5, 'beta') ORDER BY id",
    "SELECT id FROM w WHERE (qty, name) <> (5, 'beta') ORDER BY id",
    "SELECT id FROM w WHERE (qty, name, id) > (5, 'beta', 0) ORDER BY id",
    "SELECT id, (qty, id) > (5, 1), (name, qty) = ('beta', 5) FROM w ORDER BY id",
    "SELECT id FROM w WHERE NOT ((qty, id) > (5, 1)) ORDER BY id",
    "SELECT id FROM w WHERE (qty, id) > (%s, %s) ORDER BY id",
    # an array literal's elements (it was "needs a list, not a str")
    "SELECT id FROM w WHERE qty = ANY ('{5,0}') ORDER BY id",
    "SELECT id FROM w WHERE qty <> ALL ('{5,0}') ORDER BY id",
    "SELECT id FROM w WHERE qty > ANY ('{0,5}') ORDER BY id",
    "SELECT id FROM w WHERE qty >= ALL ('{0,5}') ORDER BY id",
    "SELECT id FROM w WHERE name = ANY ('{beta,\"Alpha\",NULL}') ORDER BY id",
    "SELECT id FROM w WHERE price = ANY ('{{2.00},{10.25}}') ORDER BY id",
]


@pytest.fixture(scope="module", params=["", ICU], ids=["C", "ICU"])
def pair(
    request: pytest.FixtureRequest, new_database: Callable[..., str], master_key: MasterKey
) -> Iterator[Pair]:
    with plain_and_encrypted(
        new_database,
        master_key,
        "expansions",
        {},
        ["CREATE TABLE w (id integer PRIMARY KEY, name text, qty integer, price numeric(8,2))"],
        {"w": ROWS},
        locale=request.param,
    ) as pair:
        yield pair


@pytest.mark.parametrize("sql", QUERIES)
def test_expanded_comparisons_answer_as_postgresql(pair: Pair, sql: str) -> None:
    plain, enc = pair
    params = (5, 1) if "%s" in sql else None
    assert enc.execute(sql, params).fetchall() == plain.execute(sql, params).fetchall()


def test_row_assignments_set_each_column(pair: Pair) -> None:
    """``SET (a, b) = (x, y)`` -- in an UPDATE and in ON CONFLICT DO UPDATE -- sets each
    column from the row as it was (it was expanded as a row comparison and refused);
    a count that does not match is PostgreSQL's syntax error."""
    plain, enc = pair
    writes = [
        "UPDATE w SET (qty, price) = (qty + 1, price * 2) WHERE id IN (1, 2) "
        "RETURNING id, qty, price",
        "UPDATE w SET (name, qty) = (%s, %s) WHERE id = 3 RETURNING name, qty",
        "INSERT INTO w (id, name) VALUES (4, 'x') "
        "ON CONFLICT (id) DO UPDATE SET (name, qty) = ('oc', 11) RETURNING id, name, qty",
    ]
    for conn in pair:
        conn.autocommit = False
    try:
        for sql in writes:
            params = ("set", 9) if "%s" in sql else None
            got = sorted(enc.execute(sql, params).fetchall())
            assert got == sorted(plain.execute(sql, params).fetchall()), sql
        every = "SELECT * FROM w ORDER BY id"
        assert enc.execute(every).fetchall() == plain.execute(every).fetchall()
        for conn in pair:
            with pytest.raises(psycopg.errors.SyntaxError):
                conn.execute("UPDATE w SET (qty, price) = (1, 2, 3) WHERE id = 1")
    finally:
        for conn in pair:
            conn.rollback()
            conn.autocommit = True
