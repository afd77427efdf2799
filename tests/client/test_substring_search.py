r"""Substring and prefix search: LIKE / ILIKE / ``~`` / ``~*`` over the Substr onion.

Text columns get a Substr onion (``substring = true``): keyed trigram tokens under an
RND layer until the column's first substring search.  A pattern compiles to a candidate
filter on the server (the rows whose tokens contain the pattern's trigrams, through the
GIN index) and the client evaluates the pattern exactly on the candidates.  Every case
is compared with plain PostgreSQL: prefix, suffix, infix, ``_``, escapes, case,
non-ASCII, NULLs, parameters, anchored and plain regular expressions.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.onions import Onion

CONFIG = {"defaults": {"substring": True}}

TEXTS = [
    "onion routing",
    "Onion layers",
    "the ONION peel",
    "privacy first",
    "Private key",
    "deprivation",
    "abc",
    "xabcx",
    "ab_c",
    "100% sure",
    "50%",
    "back\\slash",
    "Straße café",
    "straße",
    "CAFÉ crème",
    "naïve onion",
    "",
    " ",
    "a",
    "ab",
    "peel me",
    "unpeeled",
    "line\nbreak",
    "tab\there",
    "ends with onion",
    None,
    None,
]

CASES: list[tuple[str, tuple[Any, ...]]] = [
    ("body LIKE '%onion%'", ()),
    ("body LIKE 'onion%'", ()),
    ("body LIKE '%onion'", ()),
    ("body LIKE 'onion'", ()),
    ("body LIKE 'onion routing'", ()),
    ("body LIKE '%ONION%'", ()),
    ("body ILIKE '%onion%'", ()),
    ("body ILIKE 'priv%'", ()),
    ("body ILIKE 'PRIV%'", ()),
    ("body LIKE 'priv%'", ()),
    ("body LIKE 'Priv%'", ()),
    ("body LIKE '%priv%'", ()),
    ("body LIKE '%privat%'", ()),
    ("body LIKE 'p_ivacy%'", ()),
    ("body LIKE '_bc'", ()),
    ("body LIKE 'a_c'", ()),
    ("body LIKE '%b_c%'", ()),
    ("body LIKE 'ab\\_c'", ()),
    ("body LIKE '%\\_%'", ()),
    ("body LIKE '%\\%%'", ()),
    ("body LIKE '100\\% sure'", ()),
    ("body LIKE '%!%%' ESCAPE '!'", ()),
    ("body LIKE '%!_%' ESCAPE '!'", ()),
    ("body LIKE '%\\\\%'", ()),
    ("body LIKE '%'", ()),
    ("body LIKE '%%'", ()),
    ("body LIKE '_'", ()),
    ("body LIKE ''", ()),
    ("body LIKE '%a%b%'", ()),
    ("body LIKE 'a%b%c'", ()),
    ("body LIKE '%peel%'", ()),
    ("body LIKE 'peel%'", ()),
    ("body LIKE '%peeled'", ()),
    ("body LIKE '%straße%'", ()),
    ("body ILIKE '%STRASSE%'", ()),
    ("body ILIKE '%straße%'", ()),
    ("body LIKE '%café%'", ()),
    ("body ILIKE '%CAFÉ%'", ()),
    ("body ILIKE 'café%'", ()),
    ("body LIKE '%crème'", ()),
    ("body LIKE '%ïve%'", ()),
    ("body LIKE '%\n%'", ()),
    ("body LIKE '%nothing here%'", ()),
    ("body LIKE %s", ("%onion%",)),
    ("body LIKE %s", ("priv%",)),
    ("body ILIKE %s", ("%LAYER%",)),
    ("body LIKE %s", (None,)),
    ("body LIKE %s", ("%",)),
    ("body NOT LIKE '%onion%'", ()),
    ("body NOT ILIKE 'priv%'", ()),
    ("body LIKE '%onion%' AND id > 3", ()),
    ("body LIKE '%onion%' OR body LIKE 'priv%'", ()),
    ("(body LIKE '%on%' OR id = 7) AND body IS NOT NULL", ()),
    ("body ~ 'onion'", ()),
    ("body ~ '^onion'", ()),
    ("body ~ 'onion$'", ()),
    ("body ~ '^abc$'", ()),
    ("body ~* 'ONION'", ()),
    ("body ~* '^priv'", ()),
    ("body ~ 'Priv'", ()),
    ("body ~ '100%'", ()),
    ("body ~ 'b_c'", ()),
    ("title LIKE '%onion%'", ()),
    ("title ILIKE '%key%'", ()),
]


@pytest.fixture(scope="module", params=["server", "client"])
def pair(
    request: Any, new_database: Any, master_key: Any
) -> Iterator[tuple[psycopg.Connection[Any], adaptive_client.Connection]]:
    plain = psycopg.connect(new_database("likeplain"), autocommit=True)
    enc = adaptive_client.connect(
        new_database("likeenc"),
        master_key=master_key,
        config=CONFIG,
        peel=request.param,
        autocommit=True,
    )
    rows = [(i, t, None if t is None else t[::-1]) for i, t in enumerate(TEXTS)]
    for conn in (plain, enc):
        conn.execute("CREATE TABLE doc (id integer PRIMARY KEY, body text, title varchar(30))")
        conn.cursor().executemany("INSERT INTO doc VALUES (%s, %s, %s)", rows)
    yield plain, enc
    plain.close()
    enc.close()


@pytest.mark.parametrize("case", range(len(CASES)))
def test_pattern_equals_plain(
    pair: tuple[psycopg.Connection[Any], adaptive_client.Connection], case: int
) -> None:
    plain, enc = pair
    where, params = CASES[case]
    query = f"SELECT id, body FROM doc WHERE {where} ORDER BY id"
    expected = plain.execute(query, params or None).fetchall()
    assert enc.execute(query, params or None).fetchall() == expected, where
    count = f"SELECT count(*) FROM doc WHERE {where}"
    assert (
        enc.execute(count, params or None).fetchall()
        == plain.execute(count, params or None).fetchall()
    )


def test_candidates_are_filtered_on_the_server(
    pair: tuple[psycopg.Connection[Any], adaptive_client.Connection],
) -> None:
    plain, enc = pair
    query = "SELECT id FROM doc WHERE body LIKE '%onion%' ORDER BY id"
    assert enc.execute(query).fetchall() == plain.execute(query).fetchall()
    plan = enc.compile(query, enc.parse(query)[0])
    assert plan.residual is not None
    (fetch,) = plan.residual.fetches
    assert "@>" in fetch.sql  # the trigram filter reaches the server
    oc = enc.catalog.table("doc").column("body").onions[Onion.SUBSTR]
    assert oc.layer == "TRIGRAM"
    with psycopg.connect(enc.pg.info.dsn, autocommit=True) as raw:
        from adaptive_client.values import wire

        wire.register(raw)
        candidates = raw.execute(fetch.sql, fetch.bind(())).fetchall()
    assert 0 < len(candidates) < len(TEXTS)
    log = enc.control.execute(
        "SELECT from_layer, to_layer FROM adaptive.peel_log WHERE onion = 'Substr'"
    ).fetchall()
    assert ("RND", "TRIGRAM") in log


@pytest.mark.slow
def test_gin_index_serves_an_infix_pattern(new_database: Any, master_key: Any) -> None:
    enc = adaptive_client.connect(
        new_database("likebig"), master_key=master_key, config=CONFIG, autocommit=True
    )
    try:
        enc.execute("CREATE TABLE big (id integer, body text)")
        with enc.cursor().copy("COPY big FROM STDIN") as copy:
            for i in range(100_000):
                copy.write_row((i, f"row {i} word{i % 997} tail{i % 13}"))
        query = "SELECT count(*) FROM big WHERE body LIKE '%word123 %'"
        assert enc.execute(query).fetchone() == (len(range(123, 100_000, 997)),)
        plan = enc.compile(query, enc.parse(query)[0])
        assert plan.residual is not None
        (fetch,) = plan.residual.fetches
        with psycopg.connect(enc.pg.info.dsn, autocommit=True) as raw:
            from adaptive_client.values import wire

            wire.register(raw)
            raw.execute("ANALYZE")
            lines = [r[0] for r in raw.execute("EXPLAIN " + fetch.sql, fetch.bind(()))]
        assert any("Bitmap Index Scan" in line for line in lines), lines
    finally:
        enc.close()
