"""Names as a dump script writes them: tables qualified by ``public``, functions and types
by ``pg_catalog``, ``search_path`` set to ``''`` -- answered as PostgreSQL answers them,
the client's own tables still found on the server."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted

SCHEMA = [
    "CREATE TABLE public.t (id integer PRIMARY KEY, name text, born date)",
    "CREATE TABLE public.u (id integer PRIMARY KEY, t_id integer REFERENCES public.t(id))",
    "INSERT INTO public.t VALUES (1, 'Ann', '1990-01-02'), (2, 'bob', NULL)",
    "INSERT INTO public.u VALUES (10, 1), (11, 2), (12, 1)",
]
QUERIES = [
    "SELECT public.t.name, pg_catalog.lower(name), pg_catalog.length(name) FROM public.t ORDER BY 1",
    "SELECT t.id, count(*) FROM (public.t JOIN public.u ON ((u.t_id = t.id))) GROUP BY t.id ORDER BY 1",
    "SELECT CAST(id AS pg_catalog.int8), born::pg_catalog.text, 2::pg_catalog.numeric(5,2) FROM public.t ORDER BY 1",
    "SELECT id FROM public.t WHERE name = 'Ann'::pg_catalog.text",
    "SELECT * FROM public.v ORDER BY id",
    "SHOW search_path",
]


@pytest.fixture(scope="module")
def pair(new_database: Callable[..., str]) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, MasterKey.generate(), "qual", {}, SCHEMA, {}) as both:
        for conn in both:
            conn.execute(
                "CREATE VIEW public.v AS SELECT u.id, t.name FROM (public.u JOIN public.t "
                "ON ((u.t_id = t.id)))"
            )
            conn.execute("SELECT pg_catalog.set_config('search_path', 'pg_catalog', false)")
        yield both


@pytest.mark.parametrize("sql", QUERIES[:-1])
def test_qualified_names_as_postgresql(pair: Pair, sql: str) -> None:
    plain, enc = pair
    expected = plain.execute(sql).fetchall()
    assert enc.execute(sql).fetchall() == expected
    assert expected


def test_writes_with_qualified_names(pair: Pair) -> None:
    """An INSERT, UPDATE and DELETE naming ``public.t`` while ``public`` is off the path."""
    for conn in pair:
        conn.execute("INSERT INTO public.t VALUES (3, 'Cy', '2001-05-06')")
        conn.execute("UPDATE public.t SET name = 'Cyd' WHERE id = 3")
        conn.execute("DELETE FROM public.u WHERE id = 12")
    plain, enc = pair
    for sql in ("SELECT * FROM public.t ORDER BY id", "SELECT * FROM public.u ORDER BY id"):
        assert enc.execute(sql).fetchall() == plain.execute(sql).fetchall()


def test_search_path_keeps_the_clients_schema(pair: Pair) -> None:
    """The path the application sets is the server's, with ``public`` appended where it
    is missing (the client's tables live there); SET and set_config alike."""
    _, enc = pair
    assert enc.execute("SHOW search_path").fetchone() == ("pg_catalog, public",)
    enc.execute("SET search_path TO ''")
    assert enc.execute("SHOW search_path").fetchone() == ('"", public',)
    enc.execute("SELECT set_config('search_path', 'public, pg_catalog', false)")
    assert enc.execute("SHOW search_path").fetchone() == ("public, pg_catalog",)
    enc.execute("SET search_path = DEFAULT")
    assert enc.execute("SHOW search_path").fetchone() == ('"$user", public',)
    enc.execute("SELECT pg_catalog.set_config('search_path', 'pg_catalog', false)")
