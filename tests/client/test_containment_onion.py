"""The Contain onion: containment and membership tokens of jsonb and array columns.

jsonb columns and arrays of a type with equality get a Contain onion: the keyed tokens of
each document's paths and path-values (jsonb) or of each array's elements, under RND
until the first query that needs them.  In split execution's fetches ``@>``, ``<@``,
``?``, ``?|``, ``?&``, ``&&`` and ``x = ANY(col)`` compile to a filter over the tokens
that keeps a superset of the matching rows (the client engine decides exactly).  Checked
here: the features and their superset property against PostgreSQL's own operators
(hypothesis), the filters on a peeled column, the peel and its GIN index (EXPLAIN), what
the onion reveals before and after its first use, and ``adaptive-db layers``.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
import sqlglot
from hypothesis import given, settings
from hypothesis import strategies as st

import adaptive_client
from adaptive_client.admin import cli
from adaptive_client.admin.controls import CONTAIN_AT_RND, layers_report, peel_column
from adaptive_client.catalog import containment, recipes
from adaptive_client.catalog.onions import LEAKAGE, Onion
from adaptive_client.compile.compiler import Compiler
from adaptive_client.compile.scope import OnionNotBuilt
from adaptive_client.compile.select import compile_select
from adaptive_client.compile.split import FETCHING
from adaptive_client.errors import ConfigError, UnsupportedQuery
from adaptive_client.values import wire
from adaptive_client.values.encodings import encoding_for, parse_sql_type

# whether the client engine evaluates jsonb and array operators (the statements through the
# client; the token filters themselves are tested without it)
ENGINE_EVALUATES = importlib.util.find_spec("adaptive_client.engine.row_calls") is not None
needs_engine = pytest.mark.skipif(
    not ENGINE_EVALUATES, reason="the client engine does not evaluate these operators yet"
)

JSONB = encoding_for(parse_sql_type("jsonb"))
TEXTS = encoding_for(parse_sql_type("text[]"))
INTS = encoding_for(parse_sql_type("integer[]"))

DOCS: list[tuple[int, str | None, list[str | None] | None, list[int | None] | None]] = [
    (1, '{"color": "red", "size": 1.0, "dims": {"w": 2, "h": 3}}', ["sale", "new"], [1, 2]),
    (2, '{"color": "blue", "size": 1, "dims": {"w": 2}}', ["new"], [3]),
    (3, '{"color": "red", "tags": ["a", "b"], "n": null}', ["a", None], [1, None, 3]),
    (4, '[1, "color", {"color": "green"}]', [], []),
    (5, '"color"', ["sale"], [[1, 2], [3, 4]]),  # type: ignore[list-item]
    (6, "{}", None, None),
    (7, "[]", ["z"], [7]),
    (8, None, ["Sale"], [8]),
    (9, '{"a": {"b": {"c": [1, [2, {"d": true}]]}}}', ["x", "y", "z"], [9, 9]),
    (10, '{"color": "red", "size": 1.0, "dims": {"w": 2, "h": 3}}', ["sale", "new"], [1, 2]),
    (11, '{"color": "RED", "é": "ü", "": ""}', ["é"], [-1]),
    (12, '{"size": 2, "color": ["red", "blue"]}', ["new", "new"], [2, 2]),
]

# (condition, parameters, whether the filter must drop some rows)
CASES: list[tuple[str, dict[str, Any], bool]] = [
    ("""attrs @> '{"color": "red"}'""", {}, True),
    ("""attrs @> '{"size": 1}'""", {}, True),
    ("""attrs @> '{"dims": {"w": 2}}'""", {}, True),
    ("""attrs @> '{"dims": {}}'""", {}, True),
    ("""attrs @> '{"a": {"b": {"c": [[{"d": true}]]}}}'""", {}, True),
    ("""attrs @> '[{"color": "green"}]'""", {}, True),
    ("""attrs @> '"color"'""", {}, True),
    ("""attrs @> '{}'""", {}, False),
    ("""attrs @> '{"color": "purple"}'""", {}, True),
    ("attrs @> %(doc)s", {"doc": '{"color": "blue"}'}, True),
    ("attrs @> %(doc)s", {"doc": None}, True),
    ("""'{"color": "red"}' <@ attrs""", {}, True),
    ("""attrs <@ '{"color": "red", "size": 1, "dims": {"w": 2, "h": 3}, "x": 1}'""", {}, True),
    ("""'{"color": "blue", "size": 1, "dims": {"w": 2}}' @> attrs""", {}, True),
    ("attrs ? 'color'", {}, True),
    ("attrs ? 'tags'", {}, True),
    ("attrs ? ''", {}, True),
    ("attrs ? %(k)s", {"k": "dims"}, True),
    ("attrs ?| ARRAY['tags', 'n']", {}, True),
    ("attrs ?| %(keys)s", {"keys": ["dims", "nothing"]}, True),
    ("attrs ?& ARRAY['color', 'size']", {}, True),
    ("attrs ?& ARRAY['color', NULL]", {}, True),
    ("attrs ?& %(keys)s", {"keys": ["color", "dims"]}, True),
    ("attrs ?& %(keys)s", {"keys": []}, False),
    ("tags @> ARRAY['sale']", {}, True),
    ("tags @> '{new,sale}'", {}, True),
    ("tags @> %(t)s", {"t": ["new"]}, True),
    ("tags <@ ARRAY['sale', 'new', 'a']", {}, True),
    ("ARRAY['new'] <@ tags", {}, True),
    ("tags && ARRAY['a', 'z']", {}, True),
    ("tags && %(t)s", {"t": ["x", "sale"]}, True),
    ("'new' = ANY(tags)", {}, True),
    ("%(t)s = ANY(tags)", {"t": "é"}, True),
    ("%(t)s = ANY(tags)", {"t": None}, True),
    ("3 = ANY(nums)", {}, True),
    ("nums @> ARRAY[1, 2]", {}, True),
    ("nums <@ ARRAY[1, 2, 3, 4]", {}, True),
    ("nums && ARRAY[9]", {}, True),
    ("""attrs @> '{"color": "red"}' AND id <> 1""", {}, True),
    ("""attrs @> '{"color": "red"}' OR 'x' = ANY(tags)""", {}, True),
]


def _connect(dsn: str, master_key: Any, **kw: Any) -> adaptive_client.Connection:
    return adaptive_client.connect(dsn, master_key=master_key, autocommit=True, **kw)


def _load(conn: Any) -> None:
    conn.execute(
        "CREATE TABLE doc (id integer PRIMARY KEY, attrs jsonb, tags text[], nums integer[])"
    )
    conn.cursor().executemany("INSERT INTO doc VALUES (%s, %s, %s, %s)", DOCS)


@pytest.fixture(scope="module")
def peeled(
    new_database: Any, master_key: Any
) -> Iterator[tuple[psycopg.Connection[Any], adaptive_client.Connection, str]]:
    """A plain database and an encrypted one whose Contain onions are peeled."""
    plain = psycopg.connect(new_database("contplain"), autocommit=True)
    dsn = new_database("contenc")
    enc = _connect(dsn, master_key)
    _load(plain)
    _load(enc)
    for column in ("attrs", "tags", "nums"):
        with psycopg.connect(dsn, autocommit=True) as raw:
            peel_column(raw, master_key, "doc", column, "Contain", "CONTAIN")
    enc.execute("SELECT 1")  # (the catalog reloaded: the peels bumped the epoch)
    yield plain, enc, dsn
    plain.close()
    enc.close()


def _fetch_plan(enc: adaptive_client.Connection, where: str) -> tuple[Any, list[Any]]:
    """The server SELECT split execution fetches the rows of ``doc`` with (candidate
    filters allowed), and what it needs first."""
    query = f"SELECT id FROM doc WHERE {where}"
    compiler = Compiler(enc.catalog, FETCHING)
    plan = compile_select(compiler, enc.parse(query)[0])
    return plan, compiler.needs


def _candidates(
    enc: adaptive_client.Connection, dsn: str, where: str, params: dict[str, Any]
) -> set[int]:
    plan, needs = _fetch_plan(enc, where)
    assert not needs, needs
    meta = enc.catalog.table("doc")
    anon = sqlglot.parse_one(plan.sql, read="postgres").expressions[0].name
    found = meta.onion_column(anon)
    assert found is not None
    col, oc = found
    with psycopg.connect(dsn, autocommit=True) as raw:
        wire.register(raw)
        rows = raw.execute(plan.sql, plan.bind(params)).fetchall()
    return {recipes.decrypt(col, oc, r[0]) for r in rows}


# --- the features ----------------------------------------------------------------------


def _features(text: str) -> set[bytes]:
    return containment.features(JSONB, JSONB.coerce(text))


def test_features_of_a_document() -> None:
    k = containment.key_step
    got = _features('{"a": {"b": [1.50, "x"]}, "c": {}}')
    assert got == {
        b"p" + k("a"),
        b"p" + k("a") + k("b"),
        b"p" + k("a") + k("b") + b"a",
        b"v" + k("a") + k("b") + b"a" + b"n1.5",
        b"v" + k("a") + k("b") + b"a" + b"sx",
        b"p" + k("c"),
    }
    # numbers by value (1.0 = 1), strings bytewise, a raw scalar as a one-element array
    assert _features('{"n": 1.0}') == _features('{"n": 1}') == _features('{"n": 1e0}')
    assert _features('{"s": "A"}') != _features('{"s": "a"}')
    assert _features('"k"') == {b"pa", b"vask"}
    assert _features("[]") == _features("{}") == set()
    # the key "[]" or a key holding a's byte is no array step
    assert _features('{"a": [1]}') != _features('{"a": {"a": 1}}')
    assert containment.key_features("k") == [b"p" + k("k"), b"vask"]


def test_features_of_arrays() -> None:
    assert containment.features(TEXTS, TEXTS.coerce("{{a,b},{NULL,a}}")) == {b"ea", b"eb"}
    assert containment.features(INTS, INTS.coerce([])) == set()
    assert len(containment.features(INTS, INTS.coerce([1, 1, 2]))) == 2


def test_offered_for_jsonb_and_arrays_with_equality() -> None:
    offers = containment.offers
    assert offers(JSONB) and offers(TEXTS) and offers(INTS)
    assert not offers(encoding_for(parse_sql_type("json")))
    assert not offers(encoding_for(parse_sql_type("text")))


# (documents close to each other, so that containment holds often)
_KEYS = st.sampled_from(["a", "b", "c", "é", "", "[]"])
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from([0, 1, 2, -1, 1.5, "x", "y", "a", "", "é"]),
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=10,
)


def _part(data: st.DataObject, v: Any) -> Any:
    """A value contained in ``v`` (most of the time): some of its members, recursively,
    numbers written another way."""
    if isinstance(v, dict):
        keys = data.draw(st.lists(st.sampled_from(sorted(v)), unique=True)) if v else []
        return {k: _part(data, v[k]) for k in keys}
    if isinstance(v, list):
        items = data.draw(st.lists(st.sampled_from(v), max_size=3)) if v else []
        return [_part(data, x) for x in items]
    if type(v) is int and data.draw(st.booleans()):
        return float(v)
    return v


def _text(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False)


@pytest.fixture(scope="module")
def plain_pg(new_database: Any) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(new_database("contprop"), autocommit=True) as conn:
        yield conn


@settings(max_examples=150)
@given(docs=st.lists(_JSON, min_size=1, max_size=4), data=st.data())
def test_jsonb_superset_property(
    plain_pg: psycopg.Connection[Any], docs: list[Any], data: st.DataObject
) -> None:
    """PostgreSQL says A @> B => features(B) <= features(A); A ? k => A has one of k's."""
    values = docs + [_part(data, d) for d in docs]
    texts = [_text(v) for v in values]
    keys = ["a", "b", "é", "", "x", "[]"]
    rows = plain_pg.execute(
        "SELECT a.i, b.i, a.v @> b.v FROM unnest(%(t)s::jsonb[]) WITH ORDINALITY AS a(v, i), "
        "unnest(%(t)s::jsonb[]) WITH ORDINALITY AS b(v, i)",
        {"t": texts},
    ).fetchall()
    feats = [_features(t) for t in texts]
    held = 0
    for i, j, contains in rows:
        if contains:
            held += 1
            assert feats[j - 1] <= feats[i - 1], (texts[i - 1], texts[j - 1])
    exists = plain_pg.execute(
        "SELECT d.i, k, d.v ? k FROM unnest(%(t)s::jsonb[]) WITH ORDINALITY AS d(v, i), "
        "unnest(%(k)s::text[]) AS k",
        {"t": texts, "k": keys},
    ).fetchall()
    for i, key, found in exists:
        if found:
            assert feats[i - 1] & set(containment.key_features(key)), (texts[i - 1], key)
    assert held >= len(texts)  # (each contains itself)


_ELEMENTS = st.one_of(st.none(), st.integers(-2, 4))


@settings(max_examples=100)
@given(arrays=st.lists(st.lists(_ELEMENTS, max_size=5), min_size=1, max_size=5))
def test_array_superset_property(
    plain_pg: psycopg.Connection[Any], arrays: list[list[int | None]]
) -> None:
    """PostgreSQL says A @> B => elements(B) <= elements(A); A && B => a common token;
    x = ANY(A) => A has x's token."""
    texts = ["{" + ",".join("NULL" if x is None else str(x) for x in a) + "}" for a in arrays]
    rows = plain_pg.execute(
        "SELECT a.i, b.i, a.v::int[] @> b.v::int[], a.v::int[] && b.v::int[] "
        "FROM unnest(%(t)s::text[]) WITH ORDINALITY AS a(v, i), "
        "unnest(%(t)s::text[]) WITH ORDINALITY AS b(v, i)",
        {"t": texts},
    ).fetchall()
    feats = [containment.features(INTS, INTS.coerce(t)) for t in texts]
    for i, j, contains, overlaps in rows:
        if contains:
            assert feats[j - 1] <= feats[i - 1]
        if overlaps:
            assert feats[j - 1] & feats[i - 1]
    members = plain_pg.execute(
        "SELECT a.i, x, x = ANY(a.v::int[]) FROM unnest(%(t)s::text[]) WITH ORDINALITY "
        "AS a(v, i), generate_series(-2, 4) AS x",
        {"t": texts},
    ).fetchall()
    for i, x, member in members:
        if member:
            assert containment.features(INTS, INTS.comparand([x])) <= feats[i - 1]


# --- the filters -----------------------------------------------------------------------


@pytest.mark.parametrize("case", range(len(CASES)))
def test_filter_keeps_every_matching_row(
    peeled: tuple[psycopg.Connection[Any], adaptive_client.Connection, str], case: int
) -> None:
    plain, enc, dsn = peeled
    where, params, selective = CASES[case]
    expected = {r[0] for r in plain.execute(f"SELECT id FROM doc WHERE {where}", params)}
    got = _candidates(enc, dsn, where, params)
    assert expected <= got, where
    if selective:
        assert len(got) < len(DOCS), where


@needs_engine
def test_exact_results_through_the_client(
    peeled: tuple[psycopg.Connection[Any], adaptive_client.Connection, str],
) -> None:
    """The whole statement, once the client engine evaluates these operators."""
    plain, enc, _ = peeled
    for where, params, _ in CASES:
        query = f"SELECT id FROM doc WHERE {where} ORDER BY id"
        got = enc.execute(query, params).fetchall()
        assert got == plain.execute(query, params).fetchall(), where


@pytest.mark.parametrize(
    "where",
    [
        """NOT (attrs @> '{"color": "red"}')""",
        "NOT ('new' = ANY(tags))",
        "attrs ->> 'color' = 'red'",
        "tags = ARRAY['new']",  # (equality: the Eq onion)
    ],
)
def test_no_token_filter_where_it_would_lose_rows(
    peeled: tuple[psycopg.Connection[Any], adaptive_client.Connection, str], where: str
) -> None:
    _, enc, _ = peeled
    try:
        plan, _ = _fetch_plan(enc, where)
    except UnsupportedQuery:
        return  # left to the client engine: the relation is fetched without it
    meta = enc.catalog.table("doc")
    contain = {
        c.onions[Onion.CONTAIN].anon for c in meta.columns.values() if Onion.CONTAIN in c.onions
    }
    assert not any(anon in plan.sql for anon in contain), plan.sql


def test_exact_compile_takes_only_decided_containment(
    peeled: tuple[psycopg.Connection[Any], adaptive_client.Connection, str],
) -> None:
    """The statement the server answers alone holds a token filter only where the tokens
    decide the predicate (tests/client/test_containment_exact.py): a superset -- here a
    document with an empty container -- is refused by the strict compile, and split
    execution takes over."""
    _, enc, _ = peeled
    decided = """SELECT id FROM doc WHERE attrs @> '{"color": "red"}'"""
    compile_select(Compiler(enc.catalog), enc.parse(decided)[0])
    superset = """SELECT id FROM doc WHERE attrs @> '{"color": "red", "tags": []}'"""
    with pytest.raises(UnsupportedQuery):
        compile_select(Compiler(enc.catalog), enc.parse(superset)[0])


# --- first use, before and after -------------------------------------------------------


def _token_rows(dsn: str, enc: adaptive_client.Connection, column: str) -> list[Any]:
    oc = enc.catalog.table("doc").column(column).onions[Onion.CONTAIN]
    anon = enc.catalog.table("doc").anon
    with psycopg.connect(dsn, autocommit=True) as raw:
        return [
            r[0] for r in raw.execute(f'SELECT "{oc.anon}" FROM "{anon}" ORDER BY ctid').fetchall()
        ]


@pytest.fixture
def fresh(new_database: Any, master_key: Any) -> Iterator[tuple[adaptive_client.Connection, str]]:
    dsn = new_database("contfresh")
    enc = _connect(dsn, master_key)
    _load(enc)
    with enc.cursor().copy("COPY doc FROM STDIN") as copy:  # the same values, through COPY
        for i, attrs, tags, nums in DOCS:
            copy.write_row((100 + i, attrs, tags, nums))
    yield enc, dsn
    enc.close()


def test_before_use_no_token_repeats(fresh: tuple[adaptive_client.Connection, str]) -> None:
    """At RND each row holds one random-looking value whose length is 13 + 16 bytes per
    distinct feature: equal documents (rows 1 and 10, and each row and its COPY twin)
    share nothing."""
    enc, dsn = fresh
    for column, encoding in (("attrs", JSONB), ("tags", TEXTS), ("nums", INTS)):
        stored = _token_rows(dsn, enc, column)
        blobs = [bytes(v[0]) for v in stored if v is not None]
        assert all(len(v) == 1 for v in stored if v is not None)
        assert len(set(blobs)) == len(blobs), column
        assert len({b[1:13] for b in blobs}) == len(blobs)  # fresh nonces
        at = {"attrs": 1, "tags": 2, "nums": 3}[column]
        values = [DOCS[(i - 1) % 100][at] for i in _stored_ids(enc, dsn)]
        sizes = [
            None if v is None else 13 + 16 * len(containment.features(encoding, encoding.coerce(v)))
            for v in values
        ]
        assert [None if v is None else len(bytes(v[0])) for v in stored] == sizes, column


def _stored_ids(enc: adaptive_client.Connection, dsn: str) -> list[int]:
    meta = enc.catalog.table("doc")
    col = meta.column("id")
    oc = col.onions[Onion.EQ]
    with psycopg.connect(dsn, autocommit=True) as raw:
        rows = raw.execute(f'SELECT "{oc.anon}" FROM "{meta.anon}" ORDER BY ctid').fetchall()
    return [recipes.decrypt(col, oc, r[0]) for r in rows]


@pytest.mark.parametrize("mode", ["server", "client"])
def test_first_use_peels_and_shares_tokens(
    fresh: tuple[adaptive_client.Connection, str], master_key: Any, mode: str
) -> None:
    """The first query peels RND -> CONTAIN (the compile asks for it; in the database or
    by the client); then rows with a
    common path-value pair share its token, each row holds one token per distinct
    feature, equal documents hold equal token sets (INSERT and COPY alike), and the
    GIN index exists."""
    enc, dsn = fresh
    _, needs = _fetch_plan(enc, """attrs @> '{"color": "red"}'""")
    assert [(n.column.name, n.onion.onion, n.layer) for n in needs] == [
        ("attrs", Onion.CONTAIN, "CONTAIN")
    ]
    with psycopg.connect(dsn, autocommit=True) as raw:
        assert peel_column(raw, master_key, "doc", "attrs", "Contain", "CONTAIN", mode) > 0
        log = raw.execute(
            "SELECT from_layer, to_layer FROM adaptive.peel_log WHERE onion = 'Contain'"
        ).fetchall()
        meta = enc.catalog.table("doc")
        oc = meta.column("attrs").onions[Onion.CONTAIN]
        indexes = raw.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = %s", ("g_" + oc.anon,)
        ).fetchall()
    assert ("RND", "CONTAIN") in log
    assert indexes and "gin" in indexes[0][0].lower()
    enc.execute("SELECT 1")
    ids = _stored_ids(enc, dsn)
    stored = dict(zip(ids, _token_rows(dsn, enc, "attrs"), strict=True))
    tokens = {i: None if v is None else {bytes(t) for t in v} for i, v in stored.items()}
    docs = {i: d[1] for i, d in enumerate(DOCS, 1)}
    for i, doc in docs.items():
        if doc is None:
            assert tokens[i] is None
            continue
        assert tokens[i] is not None and len(tokens[i]) == len(_features(doc))  # type: ignore[arg-type]
        assert tokens[i] == tokens[100 + i]  # INSERT and COPY
    assert tokens[1] == tokens[10]
    red = (
        enc.catalog.table("doc")
        .column("attrs")
        .onions[Onion.CONTAIN]
        .contain.token(b"v" + containment.key_step("color") + b"sred")
    )
    assert {i for i, t in tokens.items() if t and red in t} == {1, 3, 10, 101, 103, 110}
    # written after the peel: at the CONTAIN layer from the start
    enc.execute("""INSERT INTO doc VALUES (50, '{"color": "red"}', NULL, NULL)""")
    enc.execute("""UPDATE doc SET attrs = '{"color": "red", "x": 1}' WHERE id = 2""")
    after = dict(zip(_stored_ids(enc, dsn), _token_rows(dsn, enc, "attrs"), strict=True))
    assert red in {bytes(t) for t in after[50]} and red in {bytes(t) for t in after[2]}
    assert len(after[2]) == 4  # (paths color and x, and their values)


def test_layers_report_lists_the_onion(
    fresh: tuple[adaptive_client.Connection, str],
    master_key: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, dsn = fresh
    with psycopg.connect(dsn, autocommit=True) as raw:
        rows = [r for r in layers_report(raw, master_key) if r.onion == "Contain"]
        assert {(r.column, r.layer) for r in rows} == {
            ("attrs", "RND"),
            ("tags", "RND"),
            ("nums", "RND"),
        }
        assert all(r.provider_learns == CONTAIN_AT_RND for r in rows)
        peel_column(raw, master_key, "doc", "tags", "Contain", "CONTAIN")
        rows = [r for r in layers_report(raw, master_key) if r.onion == "Contain"]
    tags = next(r for r in rows if r.column == "tags")
    assert tags.layer == "CONTAIN" and tags.provider_learns == LEAKAGE["CONTAIN"]

    # the command prints the same rows
    monkeypatch.setenv("ADAPTIVE_MASTER_KEY", master_key.hex())
    assert cli.main(["layers", "--dsn", dsn, "--log", "0"]) == 0
    out = capsys.readouterr().out
    contain = [line for line in out.splitlines() if "_contain " in line]
    assert len(contain) == 3, out
    assert any(" tags " in line and " CONTAIN " in line for line in contain), out
    assert "doc.tags   Contain at CONTAIN" in out  # (the column's most revealing onion)


def test_switched_off(new_database: Any, master_key: Any) -> None:
    """``containment = false`` (and tables made before the onion existed): no Contain
    onion, no token filter -- the client engine reads every row."""
    dsn = new_database("contoff")
    with _connect(dsn, master_key, config={"defaults": {"containment": False}}) as enc:
        _load(enc)
        meta = enc.catalog.table("doc")
        assert all(Onion.CONTAIN not in c.onions for c in meta.columns.values())
        with pytest.raises(UnsupportedQuery):
            _fetch_plan(enc, """attrs @> '{"color": "red"}'""")


def test_built_on_first_use(new_database: Any, master_key: Any) -> None:
    """``on_demand = ["Contain"]``: nothing stored at CREATE TABLE; the first query that
    needs it builds the onion (then peels it)."""
    config = {"defaults": {"on_demand": ["Contain"]}}
    with _connect(new_database("contlazy"), master_key, config=config) as enc:
        _load(enc)
        col = enc.catalog.table("doc").column("attrs")
        assert Onion.CONTAIN not in col.onions and Onion.CONTAIN in col.on_demand
        with pytest.raises(OnionNotBuilt) as built:
            _fetch_plan(enc, """attrs @> '{"color": "red"}'""")
        assert (built.value.need.column, built.value.need.onion) == ("attrs", Onion.CONTAIN)
        query = """SELECT id FROM doc WHERE attrs @> '{"color": "red"}' ORDER BY id"""
        if not ENGINE_EVALUATES:
            pytest.skip("the client engine does not evaluate these operators yet")
        got = enc.execute(query).fetchall()
        assert got == [(1,), (3,), (10,)]
        oc = enc.catalog.table("doc").column("attrs").onions[Onion.CONTAIN]
        assert oc.layer == "CONTAIN"


def test_configured_explicitly(new_database: Any, master_key: Any) -> None:
    config = {
        "tables": {
            "t": {"j": {"onions": ["Eq", "Contain"]}, "a": {"onions": ["Contain"]}},
            "u": {"x": {"onions": ["Eq", "Contain"]}},
        }
    }
    with _connect(new_database("contcfg"), master_key, config=config) as enc:
        enc.execute("CREATE TABLE t (j jsonb, a text[])")
        meta = enc.catalog.table("t")
        assert set(meta.column("j").onions) == {Onion.EQ, Onion.CONTAIN}
        assert set(meta.column("a").onions) == {Onion.CONTAIN}
        with pytest.raises(ConfigError, match="no Contain onion"):
            enc.execute("CREATE TABLE u (x text)")


@pytest.mark.slow
def test_gin_index_serves_a_selective_containment(new_database: Any, master_key: Any) -> None:
    """EXPLAIN of the fetch's SQL for a selective ``@>`` and ``= ANY`` on 100,000 rows:
    a Bitmap Index Scan on the Contain onion's GIN index."""
    dsn = new_database("contbig")
    with _connect(dsn, master_key) as enc:
        enc.execute("CREATE TABLE doc (id integer, attrs jsonb, tags text[])")
        with enc.cursor().copy("COPY doc FROM STDIN") as copy:
            for i in range(100_000):
                attrs = {"color": f"c{i % 500}", "n": i % 7, "sku": f"s{i}"}
                copy.write_row((i, json.dumps(attrs), [f"t{i % 300}", "common"]))
        with psycopg.connect(dsn, autocommit=True) as raw:
            for column in ("attrs", "tags"):
                peel_column(raw, master_key, "doc", column, "Contain", "CONTAIN")
        enc.execute("SELECT 1")
        for where in ("""attrs @> '{"color": "c123"}'""", "'t17' = ANY(tags)"):
            plan, needs = _fetch_plan(enc, where)
            assert not needs
            with psycopg.connect(dsn, autocommit=True) as raw:
                wire.register(raw)
                raw.execute("ANALYZE")
                count = len(raw.execute(plan.sql, plan.bind({})).fetchall())
                lines = [r[0] for r in raw.execute("EXPLAIN " + plan.sql, plan.bind({}))]
            assert count == (200 if "attrs" in where else 334), where
            assert any("Bitmap Index Scan" in line for line in lines), lines


@pytest.mark.parametrize(
    ("where", "column"),
    [
        ("""attrs @> '{"color": "red"}'""", "attrs"),
        ("attrs ? 'tags'", "attrs"),
        ("'new' = ANY(tags)", "tags"),
        ("nums && ARRAY[9]", "nums"),
    ],
)
@needs_engine
def test_candidates_are_filtered_on_the_server(
    peeled: tuple[psycopg.Connection[Any], adaptive_client.Connection, str],
    where: str,
    column: str,
) -> None:
    """Through the client: the server's statement carries the token filter -- the
    statement itself where the tokens decide the predicate, else split execution's
    fetch (a CASE around it keeps it from the server's statement here)."""
    plain, enc, _ = peeled
    oc = enc.catalog.table("doc").column(column).onions[Onion.CONTAIN]
    query = f"SELECT id FROM doc WHERE {where} ORDER BY id"
    got = enc.execute(query).fetchall()
    assert got == plain.execute(query).fetchall()
    plan = enc.compile(query, enc.parse(query)[0])
    assert plan.residual is None and oc.anon in plan.sql, plan.sql
    query = f"SELECT id, CASE WHEN id > 2 THEN 'x' END FROM doc WHERE {where} ORDER BY id"
    got = enc.execute(query).fetchall()
    assert got == plain.execute(query).fetchall()
    plan = enc.compile(query, enc.parse(query)[0])
    assert plan.residual is not None
    (fetch,) = plan.residual.fetches
    assert oc.anon in fetch.sql, fetch.sql
