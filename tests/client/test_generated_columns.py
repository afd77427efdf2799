"""Stored generated columns (``GENERATED ALWAYS AS (expression) STORED``), judged against
PostgreSQL: computed by the client on every write of the row -- INSERT (one row, many,
DEFAULT VALUES, INSERT ... SELECT), UPDATE of a column they read (from the statement's
values, or from the row as read), COPY -- and PostgreSQL's errors for declaring,
writing and altering them.

Facts from PostgreSQL's regression file ``generated.sql``; the statements are this
project's.  Every CREATE TABLE of a generated column was refused through the client."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from decimal import Decimal

import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted, script_differences

DDL = [
    "CREATE TABLE g (a int PRIMARY KEY, b int GENERATED ALWAYS AS (a * 2) STORED)",
    "CREATE TABLE orders (id serial PRIMARY KEY, price numeric(10,2), qty int, "
    "total numeric(12,2) GENERATED ALWAYS AS (price * qty) STORED, name text, "
    "label text GENERATED ALWAYS AS (lower(name) || '!') STORED)",
    "CREATE TABLE nokey (a int, b int, s int GENERATED ALWAYS AS ((a + b) * 2) STORED)",
    # (columns of types the engine takes as the values' own: uuid, numeric without scale)
    # (the same expression text as g's, over a numeric: computed with its own types)
    "CREATE TABLE g2 (a numeric(5,2), b numeric GENERATED ALWAYS AS (a * 2) STORED)",
    "CREATE TABLE gc (k int PRIMARY KEY, a int, b int GENERATED ALWAYS AS (a * 2) STORED, c int)",
    "CREATE TABLE typed (u uuid, same uuid GENERATED ALWAYS AS (u) STORED, "
    "t text GENERATED ALWAYS AS (u::text) STORED, n numeric, "
    "n2 numeric GENERATED ALWAYS AS (n * 2) STORED)",
]

DECLARING = [
    "CREATE TABLE e1 (a int, b int GENERATED ALWAYS AS (a * 2) STORED "
    "GENERATED ALWAYS AS (a * 3) STORED)",
    "CREATE TABLE e2 (a int, b int GENERATED ALWAYS AS (b * 2) STORED)",
    "CREATE TABLE e3 (a int, b int GENERATED ALWAYS AS (a * 2) STORED, "
    "c int GENERATED ALWAYS AS (b * 3) STORED)",
    "CREATE TABLE e4 (a int, b int GENERATED ALWAYS AS (c * 2) STORED)",
    "CREATE TABLE e5 (a int, b double precision GENERATED ALWAYS AS (random()) STORED)",
    "CREATE TABLE e6 (a int, b int DEFAULT 5 GENERATED ALWAYS AS (a * 2) STORED)",
    "CREATE TABLE e7 (a int, b int GENERATED ALWAYS AS IDENTITY GENERATED ALWAYS AS (a) STORED)",
    "CREATE TABLE e8 (a int, b int GENERATED ALWAYS AS (avg(a)) STORED)",
    "CREATE TABLE e9 (a int, b int GENERATED ALWAYS AS ((SELECT a)) STORED)",
    "CREATE TABLE e10 (a text, b date GENERATED ALWAYS AS (a::date) STORED)",
    "CREATE TABLE e11 (a timestamptz, b date GENERATED ALWAYS AS (a::date) STORED)",
    "CREATE TABLE e12 (a int, b timestamptz GENERATED ALWAYS AS (now()) STORED)",
    "CREATE TABLE e13 (a int, b text GENERATED ALWAYS AS (a || ' sec') STORED)",
    "CREATE TABLE e1 (a int)",
]

WRITING = [
    "INSERT INTO g VALUES (1)",
    "INSERT INTO g VALUES (2, DEFAULT)",
    "INSERT INTO g VALUES (3, 33)",
    "INSERT INTO g VALUES (3, DEFAULT), (4, 44)",
    "INSERT INTO g VALUES (3, DEFAULT), (4, DEFAULT)",
    "INSERT INTO g (a) SELECT a + 10 FROM g WHERE a > 2",
    "INSERT INTO g VALUES (2000000000)",
    "UPDATE g SET b = 11 WHERE a = 1",
    "UPDATE g SET b = DEFAULT WHERE a = 1",
    "UPDATE g SET a = 5 WHERE b = 4",
    "UPDATE g SET a = a + 100 WHERE a = 13",
    "DELETE FROM g WHERE b = 2",
    "SELECT a, b FROM g ORDER BY a",
    "SELECT a, b, b * 2 AS b2 FROM g WHERE b > 6 ORDER BY b DESC",
    "INSERT INTO orders (price, qty, name) VALUES (1.25, 3, 'ABC'), (NULL, 2, NULL), "
    "(2.5, 4, 'Déjà')",
    "INSERT INTO orders (price, qty, name) SELECT price + 1, qty, name FROM orders WHERE qty > 2",
    "UPDATE orders SET qty = qty * 2 WHERE id = 1",
    "UPDATE orders SET price = 10 WHERE id = 2",
    "UPDATE orders SET name = 'XyZ', total = DEFAULT WHERE id = 3",
    "INSERT INTO orders (price, qty, name) VALUES (99999999.99, 100, 'big')",
    "SELECT id, price, qty, total, name, label FROM orders ORDER BY id",
    "SELECT label, count(*), sum(total) FROM orders GROUP BY label ORDER BY 1",
    "INSERT INTO nokey (a, b) VALUES (3, 7), (4, 11), (NULL, 1)",
    "UPDATE nokey SET b = b + 1",
    "UPDATE nokey SET a = 0 WHERE a = 3",
    "SELECT a, b, s FROM nokey ORDER BY a NULLS FIRST",
    "INSERT INTO typed (u, n) VALUES ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 1.25), (NULL, 3)",
    "SELECT u, same, t, n, n2 FROM typed ORDER BY n",
    "INSERT INTO g2 (a) VALUES (1.25), (-0.5)",
    "SELECT a, b FROM g2 ORDER BY a",
    # an upsert's update of a column a generated column reads: computed again
    "INSERT INTO gc (k, a, c) VALUES (1, 1, 1)",
    "INSERT INTO gc (k, a, c) VALUES (1, 5, 5) ON CONFLICT (k) DO UPDATE SET a = excluded.a "
    "RETURNING *",
    "INSERT INTO gc (k, a, c) VALUES (1, 6, 6) ON CONFLICT (k) DO UPDATE SET c = excluded.c "
    "RETURNING *",
    "INSERT INTO gc (k, a, c) VALUES (1, 7, 7) ON CONFLICT (k) DO UPDATE SET a = 9 RETURNING *",
    "INSERT INTO gc (k, a, c) VALUES (1, 7, 7) ON CONFLICT (k) DO UPDATE SET b = 9",
    "SELECT * FROM gc ORDER BY k",
]

ALTERING = [
    "INSERT INTO nokey (a, b) VALUES (1, 2)",
    "ALTER TABLE nokey ALTER COLUMN a TYPE text",
    "ALTER TABLE nokey ALTER COLUMN s TYPE numeric",
    "ALTER TABLE nokey ALTER COLUMN s TYPE bigint USING s + 1",
    "ALTER TABLE nokey ALTER COLUMN s SET DEFAULT 1",
    "ALTER TABLE nokey ALTER COLUMN s DROP DEFAULT",
    "ALTER TABLE nokey RENAME COLUMN a TO first",
    "INSERT INTO nokey (first, b) VALUES (5, 6)",
    "UPDATE nokey SET first = first + 1 WHERE b = 6",
    "SELECT first, b, s FROM nokey ORDER BY first",
    "ALTER TABLE nokey DROP COLUMN b",
    "ALTER TABLE nokey ADD COLUMN t int GENERATED ALWAYS AS (first * 3) STORED",
    "ALTER TABLE nokey ADD COLUMN u int GENERATED ALWAYS AS (s * 3) STORED",
    "ALTER TABLE nokey ADD COLUMN u int GENERATED ALWAYS AS (zz * 3) STORED",
    "SELECT first, s, t FROM nokey ORDER BY first",
    "ALTER TABLE nokey DROP COLUMN first CASCADE",
    "SELECT * FROM nokey ORDER BY b",
]


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "generated", {}, DDL, {}) as pair:
        yield pair


@pytest.mark.parametrize(
    "script", [DECLARING, WRITING, ALTERING], ids=["declare", "write", "alter"]
)
def test_generated_columns_as_postgresql(pair: Pair, script: list[str]) -> None:
    assert script_differences(pair, script) == []


def test_copy_computes_generated_columns(pair: Pair) -> None:
    """COPY FROM without a column list fills every column but the generated ones, which
    the client computes; naming one is PostgreSQL's 42P10."""
    plain, enc = pair
    for conn in (plain, enc):
        with conn.cursor().copy("COPY orders (price, qty, name) FROM STDIN") as copy:
            copy.write_row((Decimal("2.00"), 5, "Copied"))
        with conn.cursor().copy("COPY g FROM STDIN") as copy:
            copy.write_row((7,))
    for query in ("SELECT id, total, label FROM orders ORDER BY 1", "SELECT a, b FROM g"):
        assert enc.execute(query).fetchall() == plain.execute(query).fetchall()
    errors = []
    for conn in (plain, enc):
        try:
            with conn.cursor().copy("COPY g (a, b) FROM STDIN") as copy:
                copy.write_row((8, 16))
        except Exception as exc:  # (the class is what is compared)
            errors.append(getattr(exc, "sqlstate", type(exc).__name__))
    assert errors == ["42P10", "42P10"]


def test_expression_stays_with_the_client(pair: Pair) -> None:
    """What docs/security.md says of generated columns: the server holds ordinary columns
    and no generation expression (it lives in the sealed metadata)."""
    _, enc = pair
    raw = enc.pg  # (the server's own view, as the provider has it)
    generated = raw.execute(
        "SELECT count(*) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
        "JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = 'public' AND a.attgenerated <> ''"
    ).fetchone()
    assert generated == (0,)
    expressions = raw.execute("SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d").fetchall()
    assert not [e for (e,) in expressions if "lower" in e or "* 2" in e or "price" in e]
