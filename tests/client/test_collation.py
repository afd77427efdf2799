"""Text order under the database's collation: an ICU ``en-US`` database and a libc
``en_US.UTF-8`` one, each queried plainly with psycopg and through the client, results
and their order compared.  Then the refusals: where the client cannot reproduce the
collation it raises ``CollationUnavailable`` and never answers in another order."""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import adaptive_client
from adaptive_client.catalog.metadata import Catalog
from adaptive_client.errors import CollationUnavailable, UnsupportedQuery
from adaptive_client.values.collation import (
    C_COLLATION,
    Collation,
    collation_key,
    database_collation,
    glibc_version,
    icu_collator_version,
    server_version,
)
from adaptive_client.values.encodings import CollatedTextEncoding, encoding_for

from .pairs import LOCALES

# case, accents, punctuation, spaces, digits, ties (repeated values), long shared prefixes
NAMES = [
    "apple", "Apple", "APPLE", "apple", "Äpfel", "äpfel", "apfel", "banana", "Banana",
    "cote", "côte", "coté", "côté", "Côte", "co-op", "coop", "co op", "Co-op", "résumé",
    "resume", "Résumé", "RESUME", "ß", "ss", "SS", "straße", "strasse", "10", "9", "1",
    "100", "1 0", "-1", "_x", "x_", "!bang", "", " ", "  ", "a b", "ab", "a-b", "a.b",
    "zebra", "Zebra", "Ångström", "angstrom", "Œuvre", "oeuvre", "naïve", "naive",
    "prefix_long_shared_aaaa", "prefix_long_shared_aaaB", "prefix_long_shared_aaab",
    "prefix_long_shared_aa", "prefix-long-shared-aaaa", "PREFIX_LONG_SHARED_AAAA",
    "Müller", "Mueller", "muller", "Mull", "émile", "Emile", "emile", "日本", "中文",
    "ábc", "abc", "ÁBC", "abç", "Δ", "δ", "ω", "z", "Z",
]  # fmt: skip
CITIES = ["Zürich", "zurich", "Ørsted", "Oslo", "oslo", "São Paulo", "Sao Paulo", "lima", None]

DDL = (
    "CREATE TABLE people (id integer PRIMARY KEY, name text, city varchar(40), "
    'code text COLLATE "C", grp integer)'
)


def _rows() -> list[tuple[Any, ...]]:
    rows = []
    for i, name in enumerate([*NAMES, None, None], start=1):
        city = CITIES[i % len(CITIES)]
        rows.append((i, name, city, name, i % 4))
    return rows


class Pair:
    def __init__(self, kind: str, plain: Any, enc: Any, enc_dsn: str) -> None:
        self.kind, self.plain, self.enc, self.enc_dsn = kind, plain, enc, enc_dsn

    def same(self, query: str, params: Any = None) -> list[tuple[Any, ...]]:
        want = self.plain.execute(query, params).fetchall()
        got = self.enc.execute(query, params).fetchall()
        assert got == want, query
        return got


@pytest.fixture(scope="module", params=sorted(LOCALES))
def pair(request: Any, new_database: Any, master_key: Any) -> Iterator[Pair]:
    kind = request.param
    plain = psycopg.connect(new_database(f"coll_{kind}_p", locale=LOCALES[kind]), autocommit=True)
    enc_dsn = new_database(f"coll_{kind}_e", locale=LOCALES[kind])
    enc = adaptive_client.connect(enc_dsn, master_key=master_key, autocommit=True)
    for conn in (plain, enc):
        conn.execute(DDL)
        conn.cursor().executemany("INSERT INTO people VALUES (%s, %s, %s, %s, %s)", _rows())
    yield Pair(kind, plain, enc, enc_dsn)
    plain.close()
    enc.close()


QUERIES = [
    # ORDER BY, every direction and NULL placement; ties broken by id
    "SELECT name, id FROM people ORDER BY name, id",
    "SELECT name, id FROM people ORDER BY name DESC, id",
    "SELECT name, id FROM people ORDER BY name NULLS FIRST, id DESC",
    "SELECT name, id FROM people ORDER BY name DESC NULLS LAST, id",
    "SELECT name FROM people ORDER BY name",
    "SELECT name FROM people ORDER BY 1 DESC",
    "SELECT name AS n FROM people ORDER BY n",
    "SELECT city, name, id FROM people ORDER BY city, name, id",
    "SELECT grp, name, id FROM people ORDER BY grp DESC, name, id",
    # LIMIT / OFFSET through ties of the prefix and of equal names
    "SELECT name, id FROM people ORDER BY name, id LIMIT 5",
    "SELECT name, id FROM people ORDER BY name, id LIMIT 9 OFFSET 3",
    "SELECT name, id FROM people ORDER BY name DESC, id LIMIT 12 OFFSET 40",
    "SELECT name FROM people ORDER BY name LIMIT 4 OFFSET 1",
    "SELECT id FROM people WHERE grp = 2 ORDER BY name, id LIMIT 6",
    "SELECT DISTINCT name FROM people ORDER BY name",
    "SELECT DISTINCT name FROM people ORDER BY name DESC LIMIT 10",
    "SELECT DISTINCT city FROM people ORDER BY city",
    # min / max
    "SELECT min(name), max(name) FROM people",
    "SELECT min(city), max(city) FROM people",
    "SELECT min(name), max(name) FROM people WHERE grp = 1",
    "SELECT max(name) FROM people WHERE id > 1000",
    "SELECT grp, min(name), max(name) FROM people GROUP BY grp ORDER BY grp",
    # GROUP BY with ORDER BY the text
    "SELECT name, count(*) FROM people GROUP BY name ORDER BY name",
    "SELECT city, count(*) FROM people GROUP BY city ORDER BY city DESC",
    "SELECT city, count(*) AS n FROM people GROUP BY city ORDER BY n DESC, city",
    # ranges
    "SELECT id FROM people WHERE name < 'm' ORDER BY id",
    "SELECT id FROM people WHERE name >= 'B' ORDER BY id",
    "SELECT id FROM people WHERE name > 'apple' AND name <= 'côte' ORDER BY id",
    "SELECT id FROM people WHERE name BETWEEN 'a' AND 'E' ORDER BY id",
    "SELECT id FROM people WHERE name NOT BETWEEN 'b' AND 'x' ORDER BY id",
    "SELECT name, id FROM people WHERE name < 'Zebra' ORDER BY name DESC, id LIMIT 10",
    "SELECT count(*) FROM people WHERE city >= 'oslo'",
    # bounds that tie with stored values on the prefix the server filters by
    "SELECT id FROM people WHERE name < 'prefix_long_shared_aaab' ORDER BY id",
    "SELECT id FROM people WHERE name <= 'prefix_long_shared_aaab' ORDER BY id",
    "SELECT id FROM people WHERE name > 'prefix_long_shared_aa' AND name < 'prefix_x' ORDER BY id",
    "SELECT id FROM people WHERE name BETWEEN 'PREFIX_LONG_SHARED_AAAA' AND 'prefix_long_shared_aaab' ORDER BY id",
    "SELECT id FROM people WHERE NOT (name < 'm') ORDER BY id",
    "SELECT id FROM people WHERE name < 'b' OR grp = 1 ORDER BY id",
    # window functions, set operations, CTEs
    "SELECT id, row_number() OVER (ORDER BY name, id) FROM people ORDER BY id",
    "SELECT id, rank() OVER (PARTITION BY grp ORDER BY name) FROM people ORDER BY id",
    "SELECT name FROM people WHERE grp = 1 UNION SELECT city FROM people ORDER BY 1",
    "SELECT name FROM people UNION ALL SELECT city FROM people ORDER BY name DESC NULLS LAST",
    "WITH t AS (SELECT name, id FROM people WHERE grp < 3) SELECT name FROM t ORDER BY name, id",
    "SELECT p.name, q.name FROM people p JOIN people q ON p.grp = q.grp AND p.name < q.name "
    "WHERE p.id < 12 AND q.id < 12 ORDER BY 1, 2",
    # text ordered through expressions, aliases, positions, subqueries, aggregates
    "SELECT grp, min(name) AS m FROM people GROUP BY grp ORDER BY m, grp",
    "SELECT min(name), grp FROM people GROUP BY grp ORDER BY 1 DESC, 2",
    "SELECT grp FROM people GROUP BY grp HAVING min(name) > 'a' ORDER BY grp",
    "SELECT name || '!' AS x FROM people ORDER BY x NULLS FIRST",
    "SELECT name || '!' FROM people ORDER BY 1",
    "SELECT id FROM people WHERE name > (SELECT min(city) FROM people) ORDER BY id",
    "SELECT name FROM people WHERE grp = 1 UNION SELECT name || 'x' FROM people WHERE grp = 2 "
    "ORDER BY 1 DESC",
    "SELECT id, max(name) OVER (PARTITION BY grp) FROM people ORDER BY id",
    "SELECT name, id FROM people ORDER BY coalesce(name, 'zzz'), id",
    "SELECT name, id FROM people WHERE name LIKE 'co%' ORDER BY name, id",
    "SELECT name FROM people WHERE name IN ('apple', 'Apple', 'côte') ORDER BY name DESC",
    "SELECT count(DISTINCT name), count(name) FROM people",
    # an explicit COLLATE "C" orders bytewise; a column declared COLLATE "C" too
    'SELECT name, id FROM people ORDER BY name COLLATE "C", id',
    "SELECT id FROM people WHERE name COLLATE \"C\" < 'a' ORDER BY id",
    "SELECT code, id FROM people ORDER BY code, id",
    "SELECT min(code), max(code) FROM people",
    "SELECT id FROM people WHERE code < 'a' ORDER BY id",
]


@pytest.mark.parametrize("query", QUERIES)
def test_ordered_results_equal_plain(pair: Pair, query: str) -> None:
    pair.same(query)


def test_range_with_parameters_and_limit_through_every_cut(pair: Pair) -> None:
    for bound in ("a", "Apple", "côte", "m", "résumé", "zz", ""):
        pair.same("SELECT id FROM people WHERE name > %s ORDER BY id", (bound,))
    query = "SELECT id FROM people ORDER BY name DESC, id LIMIT %s OFFSET %s"
    for limit, offset in [(1, 0), (3, 2), (10, 17), (4, 70), (50, 30)]:
        pair.same(query, (limit, offset))


def test_the_order_is_not_byte_order(pair: Pair) -> None:
    """The databases do order differently from C: the suite would catch a byte order."""
    got = [r[0] for r in pair.same("SELECT name FROM people WHERE name IS NOT NULL ORDER BY name")]
    assert got != sorted(got, key=lambda s: s.encode())


def test_columns_record_their_collation(pair: Pair) -> None:
    meta = pair.enc.catalog.table("people")
    coll = meta.columns["name"].collation
    assert coll is not None and not coll.bytewise
    assert coll.provider == pair.kind
    assert coll == meta.columns["city"].collation
    assert meta.columns["code"].collation == C_COLLATION
    assert meta.columns["id"].collation is None
    with psycopg.connect(pair.enc_dsn) as c:
        assert server_version(c, coll) == coll.version
        assert database_collation(c) == coll


CASE_MAPPING_QUERIES = [
    "SELECT id, lower(name), upper(name) FROM people ORDER BY id",
    "SELECT id FROM people WHERE name ILIKE '%é%' ORDER BY id",
    "SELECT id FROM people WHERE name ILIKE 'STRASSE' OR name ILIKE 'straße' ORDER BY id",
    "SELECT id FROM people WHERE lower(name) = lower('ÄPFEL') ORDER BY id",
    "SELECT upper(city), count(*) FROM people GROUP BY upper(city) ORDER BY 1",
    "SELECT upper('straße'), lower('İSTANBUL'), upper('ǆ')",
]


@pytest.mark.parametrize("query", CASE_MAPPING_QUERIES)
def test_case_mapping_is_the_databases(pair: Pair, query: str) -> None:
    """lower, upper and ILIKE map case as the database does: ICU's full mapping
    (``upper('straße')`` is ``STRASSE``), libc's character by character."""
    pair.same(query)


def test_case_mapping_of_another_collation_is_refused(new_database: Any, master_key: Any) -> None:
    """A column whose collation is not the database's maps case by its own ctype (ASCII
    for COLLATE "C" on an ICU database): not reproduced, refused -- typed, not mapped by
    the database's."""
    enc = adaptive_client.connect(
        new_database("coll_case_e", locale=LOCALES["icu"]), master_key=master_key, autocommit=True
    )
    try:
        enc.execute('CREATE TABLE t (id integer PRIMARY KEY, s text COLLATE "C")')
        with pytest.raises(UnsupportedQuery):
            enc.execute("SELECT lower(s) FROM t").fetchall()
    finally:
        enc.close()


EXPLICIT_COLLATE_QUERIES = [
    'SELECT name, id FROM people ORDER BY name COLLATE "und-x-icu" DESC, id',
    'SELECT name, id FROM people ORDER BY name COLLATE "en-x-icu", id LIMIT 12',
    'SELECT min(name COLLATE "und-x-icu"), max(city COLLATE "en-US-x-icu") FROM people',
    "SELECT id FROM people WHERE name COLLATE \"und-x-icu\" < 'b' ORDER BY id",
    'SELECT code, id FROM people ORDER BY code COLLATE "en-US-x-icu", id',
    'SELECT name COLLATE "POSIX" AS n FROM people ORDER BY n',
]


@pytest.mark.parametrize("query", EXPLICIT_COLLATE_QUERIES)
def test_explicit_collate_in_a_query(pair: Pair, query: str) -> None:
    """``COLLATE "name"`` in a query orders by that collation, whatever the columns'."""
    pair.same(query)


def test_explicit_collate_refusals_are_typed(pair: Pair) -> None:
    with psycopg.connect(pair.enc_dsn, autocommit=True) as c:
        c.execute(
            "CREATE COLLATION IF NOT EXISTS ci (provider = icu, locale = 'und-u-ks-level2', "
            "deterministic = false)"
        )
    with pytest.raises(CollationUnavailable):  # nondeterministic: not the bytes' equality
        pair.enc.execute('SELECT name FROM people ORDER BY name COLLATE "ci"').fetchall()
    with pytest.raises(psycopg.errors.UndefinedObject):  # as PostgreSQL raises it
        pair.enc.execute('SELECT name FROM people ORDER BY name COLLATE "nope"').fetchall()


# -- refusals: metadata that records what the client cannot reproduce --------------------


def _rewrite_collation(pair: Pair, master_key: Any, coll: Collation | None) -> Any:
    """Record ``coll`` as people.name's collation (sealed, as any metadata write), and
    return a fresh client connection that reads it."""
    with psycopg.connect(pair.enc_dsn) as c:
        catalog = Catalog.open(c, master_key)
        meta = catalog.table("people")
        meta.columns["name"].collation = coll
        catalog.write_table(c, meta, new=False)
        c.execute("UPDATE adaptive.epoch SET value = value + 1 WHERE id = 1")
    return adaptive_client.connect(pair.enc_dsn, master_key=master_key, autocommit=True)


@pytest.fixture
def restore(pair: Pair, master_key: Any) -> Iterator[None]:
    coll = pair.enc.catalog.table("people").columns["name"].collation
    yield
    _rewrite_collation(pair, master_key, coll).close()


UNREPRODUCIBLE = {
    "column created before collations were recorded": None,
    "ICU collator version": Collation("icu", "en-US", "1.0"),
    "libc version": Collation("libc", "en_US.UTF-8", "0.1"),
    "locale missing on the client": Collation("libc", "xx_YY.UTF-8", glibc_version()),
    "unknown provider": Collation("unknown:b", "C.UTF-8", "1"),
    # the client has the collator; the server has no collation of that locale (its
    # current version unknown): PostgreSQL's own order cannot be vouched for
    "collator unknown to the server": Collation(
        "icu", "en-US-u-kf-upper", icu_collator_version("en-US-u-kf-upper")
    ),
}


@pytest.mark.parametrize("why", sorted(UNREPRODUCIBLE))
def test_unreproducible_order_is_refused(
    pair: Pair, master_key: Any, restore: None, why: str
) -> None:
    conn = _rewrite_collation(pair, master_key, UNREPRODUCIBLE[why])
    try:
        for query in (
            "SELECT name FROM people ORDER BY name",
            "SELECT min(name) FROM people",
            "SELECT id FROM people WHERE name < 'm'",
            "SELECT id, row_number() OVER (ORDER BY name) FROM people",
            "INSERT INTO people (id, name) SELECT id + 1000, name FROM people "
            "ORDER BY name LIMIT 1",
        ):
            with pytest.raises(CollationUnavailable):
                conn.execute(query).fetchall()
        # what does not order the column still runs
        assert conn.execute(
            "SELECT id FROM people WHERE name = 'apple' ORDER BY id"
        ).fetchall() == [
            (1,),
            (4,),
        ]
        assert conn.execute("SELECT city FROM people ORDER BY city LIMIT 1").fetchall() == (
            pair.plain.execute("SELECT city FROM people ORDER BY city LIMIT 1").fetchall()
        )
    finally:
        conn.close()


def test_a_value_cannot_be_written_without_the_collation(
    pair: Pair, master_key: Any, restore: None
) -> None:
    """The Ord onion of a new value needs its sort key: refused, nothing written."""
    conn = _rewrite_collation(pair, master_key, Collation("icu", "en-US", "1.0"))
    try:
        with pytest.raises(CollationUnavailable):
            conn.execute("INSERT INTO people VALUES (999, 'new', 'x', 'new', 0)")
        assert conn.execute("SELECT count(*) FROM people WHERE id = 999").fetchall() == [(0,)]
    finally:
        conn.close()


def test_nondeterministic_collation_is_refused_at_create(pair: Pair) -> None:
    with psycopg.connect(pair.enc_dsn, autocommit=True) as c:
        c.execute(
            "CREATE COLLATION IF NOT EXISTS ci (provider = icu, locale = 'und-u-ks-level2', "
            "deterministic = false)"
        )
    with pytest.raises(CollationUnavailable):
        pair.enc.execute('CREATE TABLE folded (id integer PRIMARY KEY, s text COLLATE "ci")')
    with pytest.raises(psycopg.errors.UndefinedObject):
        pair.enc.execute('CREATE TABLE nosuch (id integer PRIMARY KEY, s text COLLATE "nope")')
    assert not pair.enc.catalog.has_table("folded")


def test_per_column_icu_collation_on_a_c_database(new_database: Any, master_key: Any) -> None:
    """COLLATE "und-x-icu" on a column of a C database: that column orders by ICU, the
    others bytewise, as PostgreSQL does."""
    ddl = 'CREATE TABLE t (id integer PRIMARY KEY, s text COLLATE "und-x-icu", b text)'
    rows = [(i, n, n) for i, n in enumerate(NAMES)]
    plain = psycopg.connect(new_database("coll_col_p"), autocommit=True)
    enc = adaptive_client.connect(
        new_database("coll_col_e"), master_key=master_key, autocommit=True
    )
    try:
        for conn in (plain, enc):
            conn.execute(ddl)
            conn.cursor().executemany("INSERT INTO t VALUES (%s, %s, %s)", rows)
        for query in (
            "SELECT s, id FROM t ORDER BY s, id",
            "SELECT b, id FROM t ORDER BY b, id",
            "SELECT min(s), max(s), min(b), max(b) FROM t",
            "SELECT id FROM t WHERE s < 'm' ORDER BY id",
            "SELECT id FROM t WHERE b < 'm' ORDER BY id",
            'SELECT b, id FROM t ORDER BY b COLLATE "en-US-x-icu", id LIMIT 20',
            'SELECT s, id FROM t ORDER BY s COLLATE "C" DESC, id',
        ):
            assert enc.execute(query).fetchall() == plain.execute(query).fetchall(), query
        coll = enc.catalog.table("t").columns["s"].collation
        assert coll is not None and coll.provider == "icu" and coll.locale == "und"
        assert enc.catalog.table("t").columns["b"].collation == C_COLLATION
        # the two collations in one client-evaluated ordering: refused, not guessed
        with pytest.raises(UnsupportedQuery):
            enc.execute("SELECT id FROM t WHERE s < b ORDER BY id").fetchall()
    finally:
        plain.close()
        enc.close()


# -- known answers: the collation keys and the Ord onion's plaintext ------------------------

# (string, collation key, Ord onion plaintext -- the first 8 bytes of the primary
# weights): ICU 72's en-US collator (version 153.120) and glibc 2.36's en_US.UTF-8
ICU_VECTORS = [
    ("", "010100", 0),
    ("abc", "2a2c2e0107010700616263", 0x2A2C2E0000000000),
    ("Abc", "2a2c2e010701dc0600416263", 0x2A2C2E0000000000),
    ("côte", "2e46503201448e0601090063c3b47465", 0x2E46503200000000),
    ("co-op", "2e46050e46480109010900636f2d6f70", 0x2E46050E46480000),
    ("10", "151301060106003130", 0x1513000000000000),
    ("internationalization", None, 0x3A4450324C442A50),
]
LIBC_VECTORS = [
    ("", "00", 0),
    ("abc", "515e6901020202010202020101e2949201e295ae01e2969200616263", 0x515E690000000000),
    ("Abc", "515e6901020202010702020101e2ab8e01e295ae01e2969200416263", 0x515E690000000000),
    ("10", "48470102020102020101e283a401e2829b003130", 0x4847000000000000),
]


@pytest.mark.skipif(
    icu_collator_version("en-US") != "153.120", reason="known answers of ICU collator 153.120"
)
@pytest.mark.parametrize(("text", "key", "ope"), ICU_VECTORS)
def test_icu_known_answers(text: str, key: str | None, ope: int) -> None:
    coll = Collation("icu", "en-US", "153.120")
    enc = encoding_for("text", coll)
    assert isinstance(enc, CollatedTextEncoding)
    if key is not None:
        assert collation_key(coll, text) == bytes.fromhex(key)
        assert enc.order_key(text) == bytes.fromhex(key)
    assert enc.to_ope(text) == ope


@pytest.mark.skipif(glibc_version() != "2.36", reason="known answers of glibc 2.36")
@pytest.mark.parametrize(("text", "key", "ope"), LIBC_VECTORS)
def test_libc_known_answers(text: str, key: str, ope: int) -> None:
    coll = Collation("libc", "en_US.UTF-8", "2.36")
    enc = encoding_for("varchar(10)", coll)
    assert collation_key(coll, text) == bytes.fromhex(key)
    assert enc.to_ope(text) == ope


def test_char_keys_ignore_trailing_spaces() -> None:
    """char(n) compares without its trailing spaces, under a collation too."""
    enc = encoding_for("char(6)", Collation("icu", "en-US", icu_collator_version("en-US")))
    assert (
        enc.order_key("ab    ")
        == enc.order_key("ab")
        == collation_key(Collation("icu", "en-US", icu_collator_version("en-US")), "ab")
    )


def test_c_collation_keeps_byte_order() -> None:
    enc = encoding_for("text", C_COLLATION)
    assert not isinstance(enc, CollatedTextEncoding)
    assert enc is encoding_for("text")
    assert enc.to_ope("abc") == int.from_bytes(b"abc\0\0\0\0\0", "big")
    assert collation_key(C_COLLATION, "é") == "é".encode()


def test_layers_report_says_what_the_sort_key_reveals(pair: Pair, master_key: Any) -> None:
    from adaptive_client.admin.controls import layers_report

    pair.same("SELECT name, code, id FROM people ORDER BY name, code, id")  # Ord onions to OPE
    with psycopg.connect(pair.enc_dsn) as c:
        rows = {(r.column, r.onion): r for r in layers_report(c, master_key)}
    name_ord = rows[("name", "Ord")]
    layer = name_ord.layer  # (ORE where ADAPTIVE_ORD_LAYER=ORE chose it)
    assert layer in ("OPE", "ORE")
    assert "sort key" in name_ord.provider_learns
    assert f"collation {pair.kind}" in name_ord.provider_learns
    code_ord = rows[("code", "Ord")]
    shown = {"OPE": "and about its first half", "ORE": "and its first differing byte"}[layer]
    assert code_ord.layer == layer and code_ord.provider_learns.startswith(
        f"order of an 8-byte prefix, {shown}"
    )


def test_greatest_of_text_is_refused_under_a_collation(pair: Pair) -> None:
    with pytest.raises(UnsupportedQuery):
        pair.enc.execute("SELECT greatest(name, city) FROM people ORDER BY id").fetchall()


def test_a_column_without_recorded_collation_keeps_byte_order_on_a_c_database(
    new_database: Any, master_key: Any
) -> None:
    """A column created before collations were recorded: on a C database its byte order
    is PostgreSQL's, and it keeps answering."""
    plain = psycopg.connect(new_database("coll_old_p"), autocommit=True)
    enc_dsn = new_database("coll_old_e")
    enc = adaptive_client.connect(enc_dsn, master_key=master_key, autocommit=True)
    rows = [(i, n) for i, n in enumerate(NAMES)]
    try:
        for conn in (plain, enc):
            conn.execute("CREATE TABLE t (id integer PRIMARY KEY, s text)")
            conn.cursor().executemany("INSERT INTO t VALUES (%s, %s)", rows)
        with psycopg.connect(enc_dsn) as c:
            catalog = Catalog.open(c, master_key)
            meta = catalog.table("t")
            meta.columns["s"].collation = None
            catalog.write_table(c, meta, new=False)
        fresh = adaptive_client.connect(enc_dsn, master_key=master_key, autocommit=True)
        try:
            assert fresh.catalog.table("t").columns["s"].collation is None
            for query in (
                "SELECT s, id FROM t ORDER BY s DESC, id LIMIT 20",
                "SELECT min(s), max(s) FROM t",
                "SELECT id FROM t WHERE s < 'm' ORDER BY id",
            ):
                assert fresh.execute(query).fetchall() == plain.execute(query).fetchall()
        finally:
            fresh.close()
    finally:
        plain.close()
        enc.close()


# letters, case, accents precomposed and combining, punctuation, digits, other scripts
_ORDERED_TEXT = st.text(
    alphabet=st.sampled_from("aAbBeEéÉèzZ -_.,'0129ßçÇœ日\u0301\u0308कि"), min_size=0, max_size=14
)


@pytest.mark.parametrize(
    "coll",
    [
        Collation("icu", "en-US", icu_collator_version("en-US")),
        Collation("libc", "en_US.UTF-8", glibc_version()),
        C_COLLATION,
    ],
    ids=["icu", "libc", "c"],
)
@settings(max_examples=2000)
@given(a=_ORDERED_TEXT, b=_ORDERED_TEXT)
def test_the_ord_plaintext_is_a_weakly_monotone_prefix_of_the_key(
    coll: Collation, a: str, b: str
) -> None:
    """key(a) < key(b) implies to_ope(a) <= to_ope(b); equal keys only for equal strings.
    (Under libc the key compares with strcoll, PostgreSQL's comparison, and the prefix
    comes from strxfrm's primary weights: this checks that they agree.)"""
    enc = encoding_for("text", coll)
    ka, kb = enc.order_key(a), enc.order_key(b)
    if ka < kb:
        assert enc.to_ope(a) <= enc.to_ope(b)
    assert (ka == kb) == (a == b)


def test_a_plain_text_column_keeps_its_collate(new_database: Any, master_key: Any) -> None:
    """A Single onion at PLAIN is ordered by the server: its stored column carries the
    column's COLLATE, so a COLLATE "C" column of an ICU database orders bytewise."""
    locale = LOCALES["icu"]
    ddl = 'CREATE TABLE t (id integer PRIMARY KEY, s text COLLATE "C", u text)'
    config = {"tables": {"t": {c: {"onions": ["Single"], "layer": "PLAIN"} for c in "su"}}}
    rows = [(i, n, n) for i, n in enumerate(NAMES)]
    plain = psycopg.connect(new_database("coll_plain_p", locale=locale), autocommit=True)
    enc = adaptive_client.connect(
        new_database("coll_plain_e", locale=locale),
        master_key=master_key,
        config=config,
        autocommit=True,
    )
    try:
        for conn in (plain, enc):
            conn.execute(ddl)
            conn.cursor().executemany("INSERT INTO t VALUES (%s, %s, %s)", rows)
        for query in (
            "SELECT s, id FROM t ORDER BY s, id LIMIT 30",
            "SELECT u, id FROM t ORDER BY u, id LIMIT 30",
            "SELECT min(s), max(s), min(u), max(u) FROM t",
        ):
            assert enc.execute(query).fetchall() == plain.execute(query).fetchall(), query
        assert enc.catalog.table("t").columns["s"].collation.name == "C"
    finally:
        plain.close()
        enc.close()


def test_text_ranges_filter_on_the_server(pair: Pair) -> None:
    """A range on text is filtered on the server by the prefix's closed range (a superset:
    the client applies the exact range again), not by fetching the whole table."""
    from adaptive_client.compile.statements import compile_statement

    stmt = pair.enc.parse("SELECT id FROM people WHERE name < 'b' AND id > 3 ORDER BY id")[0]
    plan = compile_statement(pair.enc.catalog, stmt)
    assert plan.residual is not None
    (fetch,) = plan.residual.fetches
    assert "WHERE" in fetch.sql and "<=" in fetch.sql
    negated = pair.enc.parse("SELECT id FROM people WHERE NOT (name < 'b') ORDER BY id")[0]
    (fetch,) = compile_statement(pair.enc.catalog, negated).residual.fetches  # type: ignore[union-attr]
    assert "WHERE" not in fetch.sql  # a negated superset would be a subset: not pushed


# Strings with combining marks (decomposed accents, marks after spaces or punctuation):
# glibc's strxfrm disagrees with strcoll -- PostgreSQL's comparison -- on some of them.
COMBINING = [
    "e\u0301", "\u00e9", "E\u0301", "\u0301e", "\u0301", "a \u0301", " \u0301a", "o\u0308",
    "\u00f6", "O\u0308o", "e\u0300\u0301", "\u00e8\u0308Oo", "\u00cbOo", "\u00c4 E",
    "\u00c1E", "a\u0301 o ", " A o", "O\u00d3\u00eb", "\u00f6 OE ", ",'a\u00d6", "\u00e4 O",
    "\u00f3O", "\u00d6 o", "\u1ecc\u00a0O", "x", "X", "",
]  # fmt: skip


def test_libc_combining_marks_order_by_strcoll(new_database: Any, master_key: Any) -> None:
    """Under a libc collation the client's final order is strcoll's, so ORDER BY, LIMIT
    and min/max equal PostgreSQL's also where strxfrm's keys would not; a client-evaluated
    query ordering such strings is refused rather than ordered by strxfrm."""
    locale = LOCALES["libc"]
    rows = [(i, s) for i, s in enumerate(COMBINING * 3)]
    plain = psycopg.connect(new_database("coll_mark_p", locale=locale), autocommit=True)
    enc = adaptive_client.connect(
        new_database("coll_mark_e", locale=locale), master_key=master_key, autocommit=True
    )
    try:
        for conn in (plain, enc):
            conn.execute("CREATE TABLE t (id integer PRIMARY KEY, s text)")
            conn.cursor().executemany("INSERT INTO t VALUES (%s, %s)", rows)
        for query in (
            "SELECT s, id FROM t ORDER BY s, id",
            "SELECT s, id FROM t ORDER BY s DESC, id LIMIT 11 OFFSET 4",
            "SELECT id FROM t ORDER BY s, id LIMIT 20",
            "SELECT min(s), max(s) FROM t",
        ):
            assert enc.execute(query).fetchall() == plain.execute(query).fetchall(), query
        with pytest.raises(CollationUnavailable):
            enc.execute("SELECT id FROM t WHERE s < 'm' ORDER BY id").fetchall()
    finally:
        plain.close()
        enc.close()


def test_insert_select_of_the_first_rows_in_text_order(pair: Pair) -> None:
    """INSERT ... SELECT ... ORDER BY name LIMIT n inserts PostgreSQL's first rows."""
    for conn in (pair.plain, pair.enc):
        conn.execute("CREATE TABLE firsts (id integer PRIMARY KEY, name text)")
    try:
        for conn in (pair.plain, pair.enc):
            conn.execute(
                "INSERT INTO firsts SELECT id, name FROM people WHERE name IS NOT NULL "
                "ORDER BY name DESC, id LIMIT 9"
            )
        pair.same("SELECT id, name FROM firsts ORDER BY id")
    finally:
        for conn in (pair.plain, pair.enc):
            conn.execute("DROP TABLE firsts")


# Random strings over letters of several scripts, case, accents precomposed and combining,
# punctuation, spaces, digits and symbols, sharing prefixes: PostgreSQL's order of them
# against the client's, through the server's prefix order and the client's finish.
_RANDOM_ALPHABET = "aAbBcCeEéÉèÈêzZoOöÖøØßçÇœŒæÆıİǅ  -_.,'’!?#&/0129\u0301\u0308\u0327αβΩщЖ日本カ한"


def _random_strings(seed: int, n: int, marks: bool) -> list[str]:
    rng = random.Random(seed)
    alphabet = [c for c in _RANDOM_ALPHABET if marks or not unicodedata.combining(c)]
    stems = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 12))) for _ in range(8)]
    out = []
    for _ in range(n):
        stem = rng.choice(stems) if rng.random() < 0.5 else ""
        tail = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 6)))
        out.append(stem + tail)
    return out


def test_random_strings_order_as_postgresql(pair: Pair) -> None:
    strings = _random_strings(11, 300, marks=pair.kind == "icu")
    rows = [(i, s) for i, s in enumerate(strings)]
    for conn in (pair.plain, pair.enc):
        conn.execute("CREATE TABLE rnd (id integer PRIMARY KEY, s text)")
        conn.cursor().executemany("INSERT INTO rnd VALUES (%s, %s)", rows)
    try:
        pair.same("SELECT s, id FROM rnd ORDER BY s, id")
        pair.same("SELECT s, id FROM rnd ORDER BY s DESC, id")
        pair.same("SELECT min(s), max(s) FROM rnd")
        for limit, offset in [(1, 0), (7, 3), (25, 100), (40, 250)]:
            pair.same("SELECT id FROM rnd ORDER BY s, id LIMIT %s OFFSET %s", (limit, offset))
        for bound in _random_strings(12, 6, marks=pair.kind == "icu"):
            pair.same("SELECT id FROM rnd WHERE s <= %s ORDER BY id", (bound,))
            pair.same("SELECT count(*) FROM rnd WHERE s BETWEEN %s AND 'z'", (bound,))
    finally:
        for conn in (pair.plain, pair.enc):
            conn.execute("DROP TABLE rnd")


def test_random_strings_with_combining_marks_under_libc(new_database: Any, master_key: Any) -> None:
    """libc: strings with combining marks, ordered on the client by strcoll."""
    locale = LOCALES["libc"]
    strings = _random_strings(13, 300, marks=True)
    plain = psycopg.connect(new_database("coll_rnd_p", locale=locale), autocommit=True)
    enc = adaptive_client.connect(
        new_database("coll_rnd_e", locale=locale), master_key=master_key, autocommit=True
    )
    try:
        for conn in (plain, enc):
            conn.execute("CREATE TABLE rnd (id integer PRIMARY KEY, s text)")
            conn.cursor().executemany("INSERT INTO rnd VALUES (%s, %s)", list(enumerate(strings)))
        for query in (
            "SELECT s, id FROM rnd ORDER BY s, id",
            "SELECT s, id FROM rnd ORDER BY s DESC, id LIMIT 30 OFFSET 40",
            "SELECT min(s), max(s) FROM rnd",
        ):
            assert enc.execute(query).fetchall() == plain.execute(query).fetchall(), query
    finally:
        plain.close()
        enc.close()


def test_alter_type_records_the_collation_of_an_old_column(
    new_database: Any, master_key: Any
) -> None:
    """A column without recorded collation on an ICU database: ordering it is refused
    until ALTER COLUMN ... TYPE (its own type) re-encrypts it under the collation."""
    locale = LOCALES["icu"]
    rows = [(i, n) for i, n in enumerate(NAMES)]
    plain = psycopg.connect(new_database("coll_alter_p", locale=locale), autocommit=True)
    enc_dsn = new_database("coll_alter_e", locale=locale)
    enc = adaptive_client.connect(enc_dsn, master_key=master_key, autocommit=True)
    try:
        for conn in (plain, enc):
            conn.execute("CREATE TABLE t (id integer PRIMARY KEY, s varchar(40))")
            conn.cursor().executemany("INSERT INTO t VALUES (%s, %s)", rows)
        with psycopg.connect(enc_dsn) as c:
            catalog = Catalog.open(c, master_key)
            meta = catalog.table("t")
            meta.columns["s"].collation = None
            catalog.write_table(c, meta, new=False)
        old = adaptive_client.connect(enc_dsn, master_key=master_key, autocommit=True)
        try:
            query = "SELECT s, id FROM t ORDER BY s, id"
            with pytest.raises(CollationUnavailable, match="ALTER COLUMN"):
                old.execute(query).fetchall()
            for conn in (plain, old):
                conn.execute("ALTER TABLE t ALTER COLUMN s TYPE varchar(40)")
            assert old.catalog.table("t").columns["s"].collation is not None
            assert old.execute(query).fetchall() == plain.execute(query).fetchall()
        finally:
            old.close()
    finally:
        plain.close()
        enc.close()
