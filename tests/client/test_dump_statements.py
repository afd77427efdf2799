"""Statements a schema dump is made of, beyond CREATE TABLE: ownership, privileges on the
schema, extensions, unique indexes added afterwards, views over parenthesized joins --
each ending as it ends on a plain database; server code refused by name."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from adaptive_client.catalog.keys import MasterKey
from adaptive_client.errors import UnsupportedQuery

from .pairs import Pair, plain_and_encrypted

SCHEMA = [
    "CREATE TABLE store (store_id integer PRIMARY KEY, manager integer NOT NULL, note text, "
    "opened timestamptz DEFAULT now())",
    "CREATE TABLE staff (staff_id integer PRIMARY KEY, name text, store_id integer, "
    "hired timestamptz)",
    "CREATE TABLE city (city_id integer PRIMARY KEY, city text)",
    "INSERT INTO store VALUES (1, 10, 'a'), (2, 11, 'b')",
    "INSERT INTO staff VALUES (10, 'Ann', 1, now()), (11, 'Bo', 2, now()), (12, 'Cy', 2, NULL)",
    "INSERT INTO city VALUES (1, 'Oslo'), (2, 'Lima')",
]
STEPS = [
    "ALTER TABLE public.store OWNER TO postgres",
    "ALTER TABLE store OWNER TO no_such_role",
    "ALTER TABLE public.no_such_table OWNER TO postgres",
    "ALTER TABLE other_schema.store OWNER TO postgres",
    "ALTER SCHEMA public OWNER TO postgres",
    "GRANT ALL ON SCHEMA public TO PUBLIC",
    "REVOKE USAGE ON SCHEMA public FROM PUBLIC",
    "CREATE EXTENSION IF NOT EXISTS no_such_extension",
    "COMMENT ON EXTENSION plpgsql IS 'PL/pgSQL procedural language'",
    "CREATE UNIQUE INDEX idx_unq_manager ON public.store USING btree (manager)",
    "INSERT INTO store VALUES (3, 10, 'c')",
    "INSERT INTO store VALUES (3, 12, 'c')",
    "CREATE VIEW public.staff_list AS SELECT s.staff_id AS id, (s.name || ' @ '::text) || "
    "c.city AS label, st.note FROM ((public.staff s JOIN public.store st ON ((s.store_id = "
    "st.store_id))) JOIN public.city c ON ((st.store_id = c.city_id)))",
    "ALTER TABLE public.staff_list OWNER TO postgres",
    "SELECT * FROM staff_list ORDER BY id",
    "SELECT count(*) FROM (staff s LEFT JOIN store st ON s.store_id = st.store_id) "
    "JOIN city c ON c.city_id = st.store_id",
]


def _outcome(conn: Any, sql: str) -> tuple[str, Any]:
    try:
        cur = conn.execute(sql)
        return ("ok", cur.fetchall() if cur.description else None)
    except psycopg.Error as exc:
        return ("error", exc.sqlstate, exc.diag.constraint_name)


@pytest.fixture(scope="module")
def pair(new_database: Callable[..., str]) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, MasterKey.generate(), "dump", {}, SCHEMA, {}) as both:
        yield both


def test_dump_statements_as_postgresql(pair: Pair) -> None:
    plain, enc = pair
    for sql in STEPS:
        expected, got = _outcome(plain, sql), _outcome(enc, sql)
        assert got == expected, f"{sql}: PostgreSQL {expected}, the client {got}"


def test_ownership_reaches_the_servers_table(pair: Pair) -> None:
    _, enc = pair
    enc.pg.execute("CREATE ROLE dump_owner_role")
    try:
        enc.execute("ALTER TABLE store OWNER TO dump_owner_role")
        anon = enc.catalog.table("store").anon
        owner = enc.pg.execute(
            "SELECT pg_get_userbyid(relowner) FROM pg_class WHERE relname = %s", (anon,)
        ).fetchone()
        assert owner == ("dump_owner_role",)
    finally:
        enc.execute("ALTER TABLE store OWNER TO postgres")
        enc.pg.execute("DROP ROLE dump_owner_role")


@pytest.mark.parametrize(
    ("sql", "named"),
    [
        ("CREATE FUNCTION f(integer) RETURNS integer LANGUAGE sql AS $$ SELECT $1 $$", None),
        (
            "CREATE OR REPLACE FUNCTION public.last_day(timestamp with time zone) RETURNS "
            "date LANGUAGE sql IMMUTABLE STRICT AS $_$ SELECT 1 $_$",
            "CREATE FUNCTION",
        ),
        ("CREATE TRIGGER t BEFORE UPDATE ON store FOR EACH ROW EXECUTE FUNCTION f()", None),
        ("CREATE AGGREGATE a(text) (SFUNC = f, STYPE = text)", None),
        ("ALTER FUNCTION f(integer) OWNER TO postgres", None),
        ("COMMENT ON TABLE store IS 'the stores'", "COMMENT ON"),
    ],
)
def test_server_code_refused_by_name(pair: Pair, sql: str, named: str | None) -> None:
    """Refused naming the statement (0A000), and nothing reaches the server."""
    _, enc = pair
    before = enc.pg.execute("SELECT count(*) FROM pg_proc").fetchone()
    with pytest.raises(UnsupportedQuery, match=named or " ".join(sql.split()[:2])):
        enc.execute(sql)
    assert enc.pg.execute("SELECT count(*) FROM pg_proc").fetchone() == before
