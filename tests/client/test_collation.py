"""Text order under the database's collation: an ICU ``en-US`` database and a libc
``en_US.UTF-8`` one, each queried plainly with psycopg and through the client, results
and their order compared.  Then the refusals: where the client cannot reproduce the
collation it raises ``CollationUnavailable`` and never answers in another order."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st

import adaptive_client
from adaptive_client.collation import (
    C_COLLATION,
    Collation,
    collation_key,
    database_collation,
    glibc_version,
    icu_collator_version,
    server_version,
)
from adaptive_client.encodings import CollatedTextEncoding, encoding_for
from adaptive_client.errors import CollationUnavailable, UnsupportedQuery
from adaptive_client.metadata import Catalog

LOCALES = {
    "icu": "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'",
    "libc": "LC_COLLATE 'en_US.UTF-8' LC_CTYPE 'en_US.UTF-8'",
}

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


def test_case_mapping_refused_under_another_ctype(pair: Pair) -> None:
    with pytest.raises(UnsupportedQuery):
        pair.enc.execute("SELECT lower(name) FROM people ORDER BY id").fetchall()


def test_other_explicit_collations_are_refused(pair: Pair) -> None:
    with pytest.raises(UnsupportedQuery):
        pair.enc.execute('SELECT name FROM people ORDER BY name COLLATE "en-x-icu"').fetchall()


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

# (string, collation key, Ord onion plaintext): ICU 72's en-US collator (version 153.120)
# and glibc 2.36's en_US.UTF-8
ICU_VECTORS = [
    ("", "010100", 0x0101000000000000),
    ("abc", "2a2c2e0107010700616263", 0x2A2C2E0107010700),
    ("Abc", "2a2c2e010701dc0600416263", 0x2A2C2E010701DC06),
    ("côte", "2e46503201448e0601090063c3b47465", 0x2E46503201448E06),
    ("co-op", "2e46050e46480109010900636f2d6f70", 0x2E46050E46480109),
    ("10", "151301060106003130", 0x1513010601060031),
]
LIBC_VECTORS = [
    ("", "00", 0),
    ("abc", "515e6901020202010202020101e2949201e295ae01e2969200616263", 0x515E690102020201),
    ("Abc", "515e6901020202010702020101e2ab8e01e295ae01e2969200416263", 0x515E690102020201),
    ("10", "48470102020102020101e283a401e2829b003130", 0x4847010202010202),
]


@pytest.mark.skipif(
    icu_collator_version("en-US") != "153.120", reason="known answers of ICU collator 153.120"
)
@pytest.mark.parametrize(("text", "key", "ope"), ICU_VECTORS)
def test_icu_known_answers(text: str, key: str, ope: int) -> None:
    coll = Collation("icu", "en-US", "153.120")
    enc = encoding_for("text", coll)
    assert isinstance(enc, CollatedTextEncoding)
    assert collation_key(coll, text) == bytes.fromhex(key)
    assert enc.order_key(text) == bytes.fromhex(key)
    assert enc.to_ope(text) == ope


@pytest.mark.skipif(glibc_version() != "2.36", reason="known answers of glibc 2.36")
@pytest.mark.parametrize(("text", "key", "ope"), LIBC_VECTORS)
def test_libc_known_answers(text: str, key: str, ope: int) -> None:
    coll = Collation("libc", "en_US.UTF-8", "2.36")
    enc = encoding_for("varchar(10)", coll)
    assert enc.order_key(text) == bytes.fromhex(key)
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
    from adaptive_client.admin import layers_report

    pair.same("SELECT name, code, id FROM people ORDER BY name, code, id")  # Ord onions to OPE
    with psycopg.connect(pair.enc_dsn) as c:
        rows = {(r.column, r.onion): r for r in layers_report(c, master_key)}
    name_ord = rows[("name", "Ord")]
    assert name_ord.layer == "OPE"
    assert "sort key" in name_ord.provider_learns
    assert f"collation {pair.kind}" in name_ord.provider_learns
    code_ord = rows[("code", "Ord")]
    assert code_ord.layer == "OPE" and code_ord.provider_learns == "order of an 8-byte prefix"


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


_ORDERED_TEXT = st.text(
    alphabet=st.sampled_from("aAbBeEéÉèzZ -_.0129ßçÇœ日"), min_size=0, max_size=14
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
@given(a=_ORDERED_TEXT, b=_ORDERED_TEXT)
def test_the_ord_plaintext_is_a_weakly_monotone_prefix_of_the_key(
    coll: Collation, a: str, b: str
) -> None:
    """key(a) < key(b) implies to_ope(a) <= to_ope(b); equal keys only for equal strings."""
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
    from adaptive_client.rewrite.statements import compile_statement

    stmt = pair.enc._parse("SELECT id FROM people WHERE name < 'b' AND id > 3 ORDER BY id")[0]
    plan = compile_statement(pair.enc.catalog, stmt)
    assert plan.residual is not None
    (fetch,) = plan.residual.fetches
    assert "WHERE" in fetch.sql and "<=" in fetch.sql
    negated = pair.enc._parse("SELECT id FROM people WHERE NOT (name < 'b') ORDER BY id")[0]
    (fetch,) = compile_statement(pair.enc.catalog, negated).residual.fetches  # type: ignore[union-attr]
    assert "WHERE" not in fetch.sql  # a negated superset would be a subset: not pushed
