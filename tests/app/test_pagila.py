"""The public pagila sample database's schema (a ``pg_dump`` of it), run through the
client from the file as it is -- statement by statement and as one script -- and into a
plain database with psycopg.  PostgreSQL 15 is the judge: each statement must end as it
ends on the plain database (the same SQLSTATE, or success), except the constructs the
client refuses by name, listed exactly below with their reasons.  Then rows generated for
every table both databases hold are written and read back equal.

The schema file is read where the sample data lives; it is not part of the project.
"""

from __future__ import annotations

import datetime as dt
import os
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.syntax.sqltext import leading_words, split_statements

SCHEMA_FILE = Path(
    os.environ.get(
        "ADAPTIVE_PAGILA_SCHEMA",
        Path(__file__).resolve().parents[3] / "shared" / "data" / "pagila" / "pagila-schema.sql",
    )
)

pytestmark = pytest.mark.skipif(
    not SCHEMA_FILE.exists(), reason=f"the pagila schema is not at {SCHEMA_FILE}"
)

# What the client refuses where PostgreSQL 15 succeeds: (the statement's leading words,
# its first name) -> why.  Exactly these: the test fails on one more or one less.
REFUSED: dict[tuple[str, str], str] = {
    ("CREATE FUNCTION", "_group_concat"): "server code over ciphertexts",
    ("ALTER FUNCTION", "_group_concat"): "server code over ciphertexts",
    ("CREATE FUNCTION", "film_in_stock"): "server code over ciphertexts",
    ("ALTER FUNCTION", "film_in_stock"): "server code over ciphertexts",
    ("CREATE FUNCTION", "film_not_in_stock"): "server code over ciphertexts",
    ("ALTER FUNCTION", "film_not_in_stock"): "server code over ciphertexts",
    ("CREATE FUNCTION", "get_customer_balance"): "server code over ciphertexts",
    ("ALTER FUNCTION", "get_customer_balance"): "server code over ciphertexts",
    ("CREATE FUNCTION", "inventory_held_by_customer"): "server code over ciphertexts",
    ("ALTER FUNCTION", "inventory_held_by_customer"): "server code over ciphertexts",
    ("CREATE FUNCTION", "inventory_in_stock"): "server code over ciphertexts",
    ("ALTER FUNCTION", "inventory_in_stock"): "server code over ciphertexts",
    ("CREATE FUNCTION", "last_day"): "server code over ciphertexts",
    ("ALTER FUNCTION", "last_day"): "server code over ciphertexts",
    ("CREATE FUNCTION", "last_updated"): "server code over ciphertexts",
    ("ALTER FUNCTION", "last_updated"): "server code over ciphertexts",
    ("CREATE AGGREGATE", "group_concat"): "server code over ciphertexts",
    ("ALTER AGGREGATE", "group_concat"): "server code over ciphertexts",
}
# triggers on every table PostgreSQL creates (their function is refused above)
for _table in (
    "actor", "address", "category", "city", "country", "film_actor", "film_category",
    "inventory", "language", "staff", "store",
):  # fmt: skip
    REFUSED[("CREATE TRIGGER", f"last_updated@{_table}")] = "server code over ciphertexts"


def _key(statement: str) -> tuple[str, str]:
    """(leading words, the first name after them) of a statement, for REFUSED."""
    words = leading_words(statement, 12)
    kind = " ".join(words[:2])
    rest = [w for w in words[2:] if w not in ("OR", "REPLACE", "PUBLIC", ".")]
    name = rest[0].lower() if rest else ""
    if kind == "CREATE TRIGGER":
        on = statement.upper().split(" ON ", 1)[1].split()[0] if " ON " in statement.upper() else ""
        name = f"{name}@{on.lower().removeprefix('public.')}"
    return kind, name.strip('"')


def _outcome(conn: Any, statement: str) -> str:
    try:
        conn.execute(statement)
    except psycopg.Error as exc:
        return exc.sqlstate or type(exc).__name__
    return "ok"


@pytest.fixture(scope="module")
def statements() -> list[str]:
    return split_statements(SCHEMA_FILE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def pair(
    new_database: Callable[..., str], statements: list[str]
) -> Iterator[tuple[psycopg.Connection[Any], adaptive_client.Connection, list[str]]]:
    plain = psycopg.connect(new_database("pagila_p"), autocommit=True)
    enc = adaptive_client.connect(
        new_database("pagila_e"), master_key=MasterKey.generate().hex(), autocommit=True
    )
    differences = []
    refused: dict[tuple[str, str], str] = {}
    for statement in statements:
        expected, got = _outcome(plain, statement), _outcome(enc, statement)
        if got == expected:
            continue
        key = _key(statement)
        if expected == "ok" and got == "0A000" and key in REFUSED:
            refused[key] = got
            continue
        if expected != "ok" and got == "0A000":
            # PostgreSQL fails it too (a table PostgreSQL 15 could not create before):
            # the client refuses the construct by name before it looks the names up
            continue
        differences.append(f"{key}: PostgreSQL {expected}, the client {got}")
    try:
        yield (
            plain,
            enc,
            differences
            + [
                f"{k}: listed as refused, but PostgreSQL and the client agree"
                for k in REFUSED
                if k not in refused
            ],
        )
    finally:
        plain.close()
        enc.close()


def test_schema_statement_by_statement(
    pair: tuple[psycopg.Connection[Any], adaptive_client.Connection, list[str]],
) -> None:
    _, _, differences = pair
    assert not differences, "\n".join(differences)


def _tables(conn: psycopg.Connection[Any]) -> list[str]:
    rows = conn.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY 1"
    ).fetchall()
    return [r[0] for r in rows]


def _columns(conn: psycopg.Connection[Any], table: str) -> list[tuple[str, str, bool]]:
    return [
        (r[0], r[1], r[2])
        for r in conn.execute(
            "SELECT attname, format_type(atttypid, atttypmod), atthasdef FROM pg_attribute "
            "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
            (f"public.{table}",),
        )
    ]


_VALUES: dict[str, Callable[[random.Random, int], Any]] = {
    "integer": lambda r, i: i,
    "smallint": lambda r, i: i,
    "text": lambda r, i: r.choice(["Ann", "bob", "Ärger", "zoë", "O'Hara", "", "x y"]) + str(i),
    "boolean": lambda r, i: bool(i % 2),
    "bytea": lambda r, i: bytes(r.randrange(256) for _ in range(i % 20)),
    "timestamp with time zone": lambda r, i: dt.datetime(
        2022, 1 + i % 12, 1 + i % 28, i % 24, i % 60, tzinfo=dt.UTC
    ),
    "numeric(5,2)": lambda r, i: r.randrange(-9999, 9999) / 100,
}


def test_rows_round_trip(
    pair: tuple[psycopg.Connection[Any], adaptive_client.Connection, list[str]],
) -> None:
    """Rows for every table both hold, in an order their foreign keys accept (keys are
    the row numbers, every reference to row 1..n of its table), read back equal."""
    plain, enc, _ = pair
    tables = _tables(plain)
    assert tables and set(tables) == {t for t in tables if enc.catalog.has_table(t)}
    rng = random.Random(15)
    for conn in (plain, enc):
        # (the foreign keys form a cycle -- store's manager is a staff member, staff work
        # in a store -- and every reference is to a row that exists once all are written)
        conn.execute("SET session_replication_role = replica")
        with conn.transaction():
            for table in tables:
                columns = [c for c in _columns(plain, table) if c[1] in _VALUES]
                names = ", ".join(c[0] for c in columns)
                marks = ", ".join(["%s"] * len(columns))
                rows = [tuple(_VALUES[c[1]](rng, i) for c in columns) for i in range(1, 9)]
                conn.cursor().executemany(
                    f"INSERT INTO public.{table} ({names}) VALUES ({marks})", rows
                )
        conn.execute("SET session_replication_role = DEFAULT")
        rng = random.Random(15)  # (the same rows into the other database)
    for table in tables:
        sql = f"SELECT * FROM public.{table} ORDER BY 1, 2"
        assert enc.execute(sql).fetchall() == plain.execute(sql).fetchall(), table


def test_schema_in_one_execute(new_database: Callable[..., str]) -> None:
    """The whole file in one ``execute()``: PostgreSQL parses the script before it runs
    any of it, and refuses it for the syntax PostgreSQL 15 lacks (a VIRTUAL generated
    column) -- so does the client, and nothing is created on either side."""
    text = SCHEMA_FILE.read_text(encoding="utf-8")
    plain = psycopg.connect(new_database("pagila1_p"), autocommit=True)
    enc = adaptive_client.connect(
        new_database("pagila1_e"), master_key=MasterKey.generate().hex(), autocommit=True
    )
    try:
        outcomes = []
        for conn in (plain, enc):
            with pytest.raises(psycopg.Error) as raised:
                conn.execute(text)
            outcomes.append((raised.value.sqlstate, raised.value.diag.message_primary))
        assert outcomes[0] == outcomes[1] == ("42601", 'syntax error at or near "VIRTUAL"')
        assert _tables(plain) == []
        enc.catalog.reload(enc.control)
        assert enc.catalog.tables == {} and enc.catalog.sequences == {}
        assert _tables(enc.pg) == []
    finally:
        plain.close()
        enc.close()
