"""Arithmetic over a ``numeric`` column without a precision in client-evaluated
statements (the client engine holds such values by their order keys: engine/held.py),
judged against PostgreSQL: + - * / % and unary minus with integers, numeric(p,s) columns,
constants and parameters, each value's own display scale kept (``12.50 * 3`` is
``37.50``, ``0.1 * 7`` is ``0.7``), in select lists, WHERE, ORDER BY and grouped sum()
and avg(); abs, ceil, floor, sign, round and trunc of it, and its casts to double
precision, text, the integer types and numeric(p,s) -- all refused (0A000) before.  A result shared by values that print
differently is refused at run time, never answered with either."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from functools import partial

import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, outcome, plain_and_encrypted, script_differences

DDL = [
    "CREATE TABLE p (id int PRIMARY KEY, price numeric, qty int, m numeric(10,2), big bigint,"
    " name text)",
    "INSERT INTO p VALUES (1, 12.50, 3, 1.25, 10, 'a'), (2, 0.1, 7, 2.5, 20, 'b'),"
    " (3, 1e20, 1, NULL, 30, 'a'), (4, NULL, 2, 3, 40, 'b'), (5, 'Infinity', 1, 4, 50, 'c'),"
    " (6, -3.333, 0, 0.01, 60, 'c'),"
    " (7, 123456789012345678901234567890123456789012.5, 2, 1, 70, 'e')",
]

SCRIPT = [
    "SELECT id, price * qty, price * m, m * price, price + m, price - big, big - price"
    " FROM p ORDER BY id",
    "SELECT id, price / qty FROM p WHERE qty <> 0 AND id <> 5 ORDER BY id",
    "SELECT id, price / m FROM p WHERE id IN (1, 2, 6, 7) ORDER BY id",
    "SELECT id, price % qty, price % m, 100 % price FROM p WHERE qty <> 0 AND id <> 5 ORDER BY id",
    "SELECT id, price / 2, 2 / price, 2 % price, -price FROM p WHERE id = 5",  # Infinity
    "SELECT id, price % 0 FROM p WHERE id = 1",  # 22012
    "SELECT id, price * 2.50, price + '1.5', -(price * 2), price * qty * qty FROM p ORDER BY id",
    "SELECT name, sum(price), avg(price), count(price) FROM p GROUP BY name ORDER BY name",
    "SELECT name, sum(price * qty), avg(price * qty) FROM p GROUP BY name ORDER BY name",
    "SELECT sum(price), avg(price) FROM p WHERE id IN (1, 2, 6, 7)",
    "SELECT sum(price) FILTER (WHERE qty > 1), avg(price) FILTER (WHERE qty > 1) FROM p",
    "SELECT name, sum(DISTINCT price) FROM p GROUP BY name ORDER BY name",
    "SELECT name, sum(price) FROM p GROUP BY name HAVING sum(price) > 10 ORDER BY name",
    "SELECT id FROM p WHERE price * qty > 30 ORDER BY id",
    "SELECT id FROM p WHERE price + 1 = 13.5",
    "SELECT id FROM p ORDER BY price * qty DESC NULLS LAST, id",
    "SELECT id, price * 1.5::float8 FROM p WHERE id = 1",
    "SELECT id, price / qty FROM p WHERE id = 6",  # 22012
    "SELECT id, price / 0.0 FROM p WHERE id = 1",  # 22012
    "SELECT id, price + 'abc' FROM p WHERE id = 1",  # 22P02
    "SELECT id, price * true FROM p WHERE id = 1",  # 42883
    # functions and casts of it
    "SELECT id, abs(price), ceil(price), ceiling(price), floor(price), sign(price) FROM p"
    " ORDER BY id",
    "SELECT id, round(price), round(price, 1), round(price, -1), trunc(price), trunc(price, 1),"
    " trunc(price, -2) FROM p ORDER BY id",
    "SELECT id, price::float8, price::text, price::varchar, price::numeric FROM p ORDER BY id",
    "SELECT id, price::integer, price::bigint, price::numeric(10,2), price::numeric(3) FROM p"
    " WHERE id IN (1, 2, 6) ORDER BY id",
    "SELECT id, price::integer FROM p WHERE id = 3",  # 22003
    "SELECT id, price::integer FROM p WHERE id = 5",  # 0A000: infinity
    "SELECT id, price::numeric(10,2) FROM p WHERE id = 3",  # 22003
    "SELECT id FROM p WHERE abs(price) > 1 ORDER BY round(price, 0) NULLS FIRST, id",
    "SELECT name, sum(round(price, 1)) FROM p WHERE id < 5 GROUP BY name ORDER BY name",
    "SELECT id, price::text || '!', price::float8 * 2 FROM p WHERE id < 4 ORDER BY id",
    # beside other numbers in a choice: those read as numeric
    "SELECT id, coalesce(price, 0) + 1, coalesce(price, qty) FROM p ORDER BY id",
    # (alone: 0 beside -3.333 * 0, which prints 0.000, would be one key: refused)
    "SELECT id, coalesce(price * qty, 0) FROM p ORDER BY id",
    "SELECT id, greatest(price, 1), least(price * 2, 50) FROM p WHERE id <> 5 ORDER BY id",
    "SELECT id, CASE WHEN price > 10 THEN price * 2 ELSE 0 END FROM p ORDER BY id",
]


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "free_arith", {}, DDL, {}) as pair:
        yield pair


def test_free_numeric_arithmetic_as_in_postgresql(pair: Pair) -> None:
    assert script_differences(pair, SCRIPT) == []


def test_parameters_in_free_numeric_arithmetic(pair: Pair) -> None:
    plain, enc = pair
    for sql, params in (
        ("SELECT id, price * %s FROM p WHERE id < 3 ORDER BY id", (2,)),
        ("SELECT id, price + %s FROM p WHERE id < 3 ORDER BY id", ("0.005",)),
        ("SELECT id FROM p WHERE price * qty >= %s ORDER BY id", (37.5,)),
    ):
        assert outcome(enc, sql, params) == outcome(plain, sql, params), sql


def test_nan_and_values_that_print_differently(pair: Pair) -> None:
    """NaN computed as PostgreSQL computes it (compared by repr: NaN is not equal to
    itself in Python); equal values that print differently (1.0, 1) in one statement
    are answered where the result does not depend on which, else refused."""
    plain, enc = pair
    for conn in pair:
        conn.execute("INSERT INTO p VALUES (8, 'NaN', 2, 1, 80, 'n'), (9, 1.0, 2, 1, 90, 'd'),"
                     " (10, 1, 3, 1, 100, 'd')")  # fmt: skip
    for sql in (
        "SELECT id, price * qty, price / 2 FROM p WHERE id = 8",
        # (a Python function's NaN double would reach the engine as NULL)
        "SELECT id, price::float8, price::text, round(price, 1), abs(price) FROM p WHERE id = 8",
        "SELECT name, sum(price), avg(price) FROM p WHERE id = 8 GROUP BY name",
    ):
        assert repr(outcome(enc, sql)) == repr(outcome(plain, sql)), sql
    for sql in (
        "SELECT id, price * 2 FROM p WHERE id IN (9, 10) ORDER BY id",
        "SELECT name, sum(price) FROM p WHERE id IN (9, 10) GROUP BY name",  # (2.0: 1.0's scale)
    ):
        got = outcome(enc, sql)
        assert got == outcome(plain, sql) or got == ("error", "0A000"), (sql, got)


def test_nan_of_a_numeric_with_a_precision(pair: Pair) -> None:
    """A numeric(p,s) column holding NaN: ordered by an expression of it as PostgreSQL
    orders NaN (above every number; the client's sort raised decimal.InvalidOperation),
    and refused (0A000) where the client engine would compute on it (its DECIMAL has no
    NaN: this was 22P02, an error PostgreSQL does not raise)."""
    plain, enc = pair
    for conn in pair:
        conn.execute("CREATE TABLE z (id int PRIMARY KEY, b numeric(10,2))")
        conn.execute("INSERT INTO z VALUES (1, 'NaN'), (2, 2.5), (3, -1), (4, NULL)")
    for sql in (
        "SELECT id FROM z ORDER BY b * 2, id",
        "SELECT id FROM z ORDER BY b * 2 DESC NULLS LAST, id",
    ):
        assert outcome(enc, sql) == outcome(plain, sql), sql
    got = outcome(enc, "SELECT id, b % 2 FROM z ORDER BY id")
    assert got == ("error", "0A000") or repr(got) == repr(
        outcome(plain, "SELECT id, b % 2 FROM z ORDER BY id")
    ), got


def test_an_average_of_an_infinity_ends(pair: Pair) -> None:
    """avg() over an infinite numeric, computed by the client: Infinity, as PostgreSQL's
    (numeric_div looked for the weight of an infinity and never ended). Run under a
    watchdog: the statement's thread must finish."""
    plain, enc = pair
    for sql in (
        "SELECT avg(price), sum(price) FROM p WHERE id IN (1, 5)",  # (the client's aggregate)
        "SELECT name, avg(price) FROM p WHERE id IN (1, 5, 6) GROUP BY name ORDER BY name",
    ):
        got: list[object] = []
        run = partial(lambda out, q: out.append(outcome(enc, q)), got, sql)
        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        worker.join(60)
        assert not worker.is_alive(), f"still running after 60 s: {sql}"
        assert got == [outcome(plain, sql)], sql
