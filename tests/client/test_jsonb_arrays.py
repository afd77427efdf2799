"""jsonb and arrays judged by PostgreSQL: every statement of jsonb_queries.py runs on a plain
database with psycopg and through the client on an encrypted one holding the same rows
(jsonb_schema.py), on a C database and an ICU ``en-US`` one.  Rows must be equal as psycopg
loads them (dicts and lists for jsonb, lists for arrays, Decimals with their scale, the
type of each value and the order of each object's keys), in order where the statement's
outermost ORDER BY makes one (each is total), as a multiset otherwise; where PostgreSQL
raises, the client raises an error of the same SQLSTATE.  The writes run on a fresh copy
of ``docs`` and the copies must then read back equal.

Hypothesis draws documents (jsonb_strategies.py) and containment, key-existence, path and
array membership probes, writes them into one table per database and compares each probe's
answer, as a WHERE clause and as a value: 50 examples per database here (reported
unshrunk), 2,000 in the slow suite.

Every statement is bounded by a ``statement_timeout``, and every test (every example of the
drawn tests) by a watchdog alarm, so a hang fails a test instead of stalling the run."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from psycopg.conninfo import make_conninfo
from psycopg.types.numeric import Int4

import adaptive_client
from adaptive_client.catalog.keys import MasterKey

from .jsonb_queries import FAMILIES, WRITES, Query
from .jsonb_schema import DDL, DOCS_DDL, docs_rows, products_rows, raw_json
from .jsonb_strategies import (
    WORDS,
    SqlNull,
    documents,
    int_arrays,
    path_in,
    sub_document,
    text_arrays,
    to_json,
    top_documents,
    top_keys,
)

ICU = "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"
STATEMENT_TIMEOUT_MS = 20_000
TEST_WATCHDOG_S = 120
EXAMPLE_WATCHDOG_S = 60
FAST_EXAMPLES = int(os.environ.get("ADAPTIVE_JSONB_EXAMPLES", "50"))
SLOW_EXAMPLES = int(os.environ.get("ADAPTIVE_JSONB_SLOW_EXAMPLES", "2000"))


class Hang(Exception):
    """A test or an example outlived its watchdog."""


@contextmanager
def watchdog(seconds: int) -> Iterator[None]:
    """Raises :class:`Hang` in the test's thread after ``seconds`` (a hang in the client's
    own code, which no statement_timeout bounds)."""

    def expire(signum: int, frame: Any) -> None:
        raise Hang(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(autouse=True)
def _bounded(request: pytest.FixtureRequest) -> Iterator[None]:
    if getattr(request.function, "is_hypothesis_test", False):
        yield  # (each example has its own watchdog)
        return
    with watchdog(TEST_WATCHDOG_S):
        yield


def canonical(value: Any) -> Any:
    """A value as compared: its type with it, recursively (an int apart from a float, a
    Decimal with its scale, an object's keys in their order)."""
    if isinstance(value, dict):
        return ("dict", tuple((k, canonical(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return (type(value).__name__, tuple(canonical(v) for v in value))
    if isinstance(value, Decimal):
        return ("Decimal", str(value))
    return (type(value).__name__, repr(value))


def ordered(sql: str) -> bool:
    """The statement's outermost ORDER BY orders its rows (one inside an aggregate's or a
    subquery's parentheses does not)."""
    return "ORDER BY" in sql.rsplit(")", 1)[-1]


Outcome = tuple[Any, ...]


def outcome(conn: Any, sql: str, params: Any, in_order: bool) -> Outcome:
    """``("ok", rows)``, ``("count", rowcount)`` or ``("error", sqlstate)``."""
    try:
        cur = conn.execute(sql, params)
        if cur.description is None:
            return ("count", cur.rowcount)
        rows = [canonical(tuple(r)) for r in cur.fetchall()]
    except psycopg.Error as exc:
        return ("error", exc.sqlstate or type(exc).__name__, f"{type(exc).__name__}: {exc}")
    return ("ok", rows if in_order else sorted(rows, key=repr))


def difference(expected: Outcome, got: Outcome) -> str:
    """Where two outcomes part: the first row that differs (and the row counts), or the
    two outcomes."""
    if expected[0] == got[0] == "ok":
        rows = zip(expected[1], got[1], strict=False)
        at = next((i for i, (e, g) in enumerate(rows) if e != g), None)
        if at is not None:
            return (
                f"  rows: PostgreSQL {len(expected[1])}, client {len(got[1])}; row {at}:\n"
                f"  PostgreSQL: {str(expected[1][at])[:1500]}\n  client:     {str(got[1][at])[:1500]}"
            )
        return f"  rows: PostgreSQL {len(expected[1])}, client {len(got[1])}"
    return f"  PostgreSQL: {str(expected)[:1500]}\n  client:     {str(got)[:1500]}"


class Pair:
    """A plain database and an encrypted one holding the same tables."""

    def __init__(self, plain: psycopg.Connection[Any], enc: adaptive_client.Connection) -> None:
        self.plain, self.enc = plain, enc

    def both(self, sql: str, params: Any = None) -> None:
        for conn in (self.plain, self.enc):
            conn.execute(sql, params)

    def load(self, table: str, rows: list[tuple[Any, ...]]) -> None:
        """``rows`` into ``table`` of both databases, in one INSERT."""
        if not rows:
            return
        marks = ", ".join(["(" + ", ".join(["%s"] * len(rows[0])) + ")"] * len(rows))
        self.both(f"INSERT INTO {table} VALUES {marks}", [v for r in rows for v in r])

    def run(self, sql: str, params: Any = None) -> tuple[Outcome, str]:
        """Runs ``sql`` on both: PostgreSQL's outcome, and how the client's differs
        (empty: alike)."""
        in_order = ordered(sql)
        expected = outcome(self.plain, sql, params, in_order)
        got = outcome(self.enc, sql, params, in_order)
        if got[:2] == expected[:2]:
            return expected, ""
        return expected, f"{sql} {params!r}\n" + difference(expected, got)

    def compare(self, sql: str, params: Any = None) -> Outcome:
        """Runs ``sql`` on both; fails unless they answer alike.  Returns PostgreSQL's."""
        expected, differs = self.run(sql, params)
        assert not differs, differs
        return expected


def _connect_bounded(dsn: str) -> str:
    return make_conninfo(dsn, options=f"-c statement_timeout={STATEMENT_TIMEOUT_MS}")


@pytest.fixture(scope="module", params=["C", "ICU"])
def pair(
    request: pytest.FixtureRequest, new_database: Callable[..., str], master_key: MasterKey
) -> Iterator[Pair]:
    locale = ICU if request.param == "ICU" else ""
    plain = psycopg.connect(
        _connect_bounded(new_database(f"jsonb_{request.param}_p", locale=locale)),
        autocommit=True,
    )
    enc = adaptive_client.connect(
        _connect_bounded(new_database(f"jsonb_{request.param}_e", locale=locale)),
        master_key=master_key.hex(),
        autocommit=True,
    )
    both = Pair(plain, enc)
    try:
        with watchdog(TEST_WATCHDOG_S):
            for statement in DDL:
                both.both(statement)
            both.load("docs", docs_rows())
            both.load("products", products_rows())
            both.both(DOCS_DDL.format(name="drawn"))
        yield both
    finally:
        plain.close()
        enc.close()


def _split(query: Query) -> tuple[str, tuple[Any, ...] | None]:
    return (query, None) if isinstance(query, str) else query


def _params() -> list[Any]:
    return [
        pytest.param(*_split(query), family == "error", id=f"{family}-{i}")
        for family, queries in FAMILIES.items()
        for i, query in enumerate(queries)
    ]


def test_the_corpus_covers_every_construct() -> None:
    every = [_split(q)[0] + repr(_split(q)[1]) for qs in FAMILIES.values() for q in qs]
    assert len(set(every)) == len(every) >= 200
    text = " ".join(every)
    for construct in [
        "@>", "<@", " ? ", "?|", "?&", "->", "->>", "#>", "#>>", "#-", "NULLS FIRST",
        "NULLS LAST", "DESC", "GROUP BY", "DISTINCT", "JOIN products", "= ANY(", "<> ALL(",
        "&&", "tags[1]", "array_length(", "cardinality(", "array_to_string(",
        "array_position(", "array_append(", "jsonb_typeof(", "jsonb_array_length(",
        "jsonb_build_object(", "jsonb_build_array(", "to_jsonb(", "jsonb_set(",
        "jsonb_strip_nulls(", "jsonb_extract_path(", "jsonb_extract_path_text(",
        "jsonb_array_elements(", "jsonb_array_elements_text(", "jsonb_each(",
        "jsonb_each_text(", "jsonb_object_keys(", "unnest(", "CROSS JOIN LATERAL",
        "WITH ORDINALITY", "jsonb_agg(", "jsonb_object_agg(", "array_agg(",
        "FILTER (WHERE attrs ?", "Jsonb(", "IS NULL", "::numeric",
    ]:  # fmt: skip
        assert construct in text, construct
    assert len(WRITES) >= 12


# Statements PostgreSQL answers that the client still refuses (0A000, or an error of
# another class where PostgreSQL's comes from a construct refused first), by id (or
# "ICU:id" for one locale), with the reason: expected to fail, strictly -- one that
# starts passing must leave the list.
GAPS: dict[str, str] = {
    "fn-34": "row_to_json of a whole row is not evaluated by the client engine",
    "fn-35": "jsonpath (jsonb_path_query_first)",
    "fn-36": "jsonpath (@?)",
    "fn-37": "a cast of ARRAY[...] to numeric[] in the client engine",
    "srf-6": "jsonb_each in a select list: a record value, which the client engine does not return",
    "srf-25": "jsonb_to_recordset",
    "agg-2": "jsonb_agg(attrs -> 'price' ORDER BY id): the SQL parser reads the arrow "
    "before ORDER BY as a lambda",
    "agg-16": "array_agg of jsonb: the client has no jsonb[] type",
    "error-3": "jsonb_each in a select list is refused (PostgreSQL's 22023 comes from "
    "evaluating it on a row that is not an object)",
    "error-6": "json values are not evaluated by the client engine (PostgreSQL's 42883 "
    "comes from using json's -> result afterwards)",
    "error-7": "json values are not evaluated by the client engine (PostgreSQL's 42883 "
    "comes from comparing json's -> result)",
    "error-14": "jsonb_object_agg without ORDER BY over repeated keys is refused (its "
    "result depends on the order of aggregation; PostgreSQL's 22023 comes from a NULL "
    "key met while aggregating)",
    "error-21": "array_fill",
    "write-12": "IS DISTINCT FROM in an UPDATE's WHERE, and an array element assigned "
    "(SET tags[1] = ...)",
}


def _known_gap(request: pytest.FixtureRequest) -> None:
    """Mark the running test an expected failure if its statement is a known gap."""
    name = request.node.callspec.id.split("-", 1)[1]  # ("C-key-16": key-16 on C)
    locale = request.node.callspec.params["pair"]
    reason = GAPS.get(f"{locale}:{name}") or GAPS.get(name)
    if reason:
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))


@pytest.mark.parametrize(("sql", "params", "raises"), _params())
def test_query(
    request: pytest.FixtureRequest,
    pair: Pair,
    sql: str,
    params: tuple[Any, ...] | None,
    raises: bool,
) -> None:
    _known_gap(request)
    expected = pair.compare(sql, params)
    # (the corpus itself: an error family statement raises on PostgreSQL, no other does)
    assert (expected[0] == "error") == raises, expected


@pytest.mark.parametrize("n", range(len(WRITES)), ids=[f"write-{n}" for n in range(len(WRITES))])
def test_write(request: pytest.FixtureRequest, pair: Pair, n: int) -> None:
    """The write on a fresh copy of docs: the same count (or SQLSTATE), the same table
    after it."""
    _known_gap(request)
    table = f"docs_w{n}"
    pair.both(DOCS_DDL.format(name=table))
    pair.load(table, docs_rows())
    sql, params = _split(WRITES[n])
    pair.compare(sql.replace("{t}", table), params)
    after = pair.compare(f"SELECT * FROM {table} ORDER BY id")
    assert after[0] == "ok" and len(after[1]) >= 40


# --- drawn documents ----------------------------------------------------------------------

_DRAWN_SETTINGS: dict[str, Any] = {
    "database": None,
    "deadline": None,
    "suppress_health_check": [
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
    ],
}
words = st.lists(st.sampled_from(WORDS), max_size=3)
# The probes as values, one statement per column type.  (Ints are sent as Int4: psycopg
# sends a list of small ints as smallint[], which int[] does not meet.)
JSONB_PROBES = (
    "SELECT id, attrs @> %s, attrs @> %s, attrs <@ %s, attrs <@ %s, attrs ? %s, attrs ?| %s,"
    " attrs ?& %s FROM drawn ORDER BY id"
)
TEXT_PROBES = (
    "SELECT id, tags @> %s, tags <@ %s, tags && %s, %s = ANY(tags), %s <> ALL(tags)"
    " FROM drawn ORDER BY id"
)
PATH_PROBES = (
    "SELECT id, attrs #> %s, attrs #>> %s, attrs -> %s, attrs ->> %s, jsonb_typeof(attrs #> %s)"
    " FROM drawn ORDER BY id"
)
INT_PROBES = "SELECT id, nums @> %s, nums <@ %s, nums && %s, %s = ANY(nums) FROM drawn ORDER BY id"

CONTAINS = "SELECT id FROM drawn WHERE attrs @> %s ORDER BY id"
CONTAINED = "SELECT id FROM drawn WHERE attrs <@ %s ORDER BY id"


def check_drawn(pair: Pair, data: st.DataObject) -> None:
    """Drawn rows into ``drawn`` (one INSERT), then the drawn probes as statements of
    values and as WHERE clauses; every difference reported."""
    rows = data.draw(
        st.lists(st.tuples(top_documents, text_arrays, int_arrays), min_size=1, max_size=6)
    )
    with watchdog(EXAMPLE_WATCHDOG_S):
        pair.both("DELETE FROM drawn")
        pair.load(
            "drawn",
            [
                (i, None if isinstance(doc, SqlNull) else raw_json(to_json(doc)), tags, nums)
                for i, (doc, tags, nums) in enumerate(rows)
            ],
        )
    stored = [doc for doc, _, _ in rows if not isinstance(doc, SqlNull)]
    probe = data.draw(st.sampled_from(stored)) if stored else data.draw(documents)
    sub = raw_json(to_json(sub_document(data, probe)))
    other = raw_json(to_json(data.draw(documents)))
    whole = raw_json(to_json(probe))
    key = data.draw(st.sampled_from(top_keys(probe) or WORDS))
    some_keys = data.draw(st.lists(st.sampled_from([*top_keys(probe), *WORDS]), max_size=3))
    stored_tags = [t for _, tags, _ in rows for t in tags or () if t is not None]
    tag = data.draw(st.sampled_from(stored_tags or WORDS))
    tag_list = [*data.draw(words), tag]
    path = path_in(data, probe)
    step = path[0] if path else key
    int_list = [Int4(n) for n in data.draw(st.lists(st.integers(-3, 3), max_size=3))]
    one = Int4(data.draw(st.integers(-3, 3)))
    statements: list[tuple[str, tuple[Any, ...] | None]] = [
        ("SELECT id, attrs, tags, nums FROM drawn ORDER BY id", None),
        (JSONB_PROBES, (sub, other, whole, other, key, some_keys, some_keys)),
        (TEXT_PROBES, (tag_list, tag_list, tag_list, tag, tag)),
        (INT_PROBES, (int_list, int_list, int_list, one)),
        (PATH_PROBES, (path, path, step, step, path)),
    ]
    statements += [
        (sql, (value,))
        for sql, value in [
            (CONTAINS, sub),
            (CONTAINED, whole),
            ("SELECT id FROM drawn WHERE attrs ? %s ORDER BY id", key),
            ("SELECT id FROM drawn WHERE attrs ?| %s ORDER BY id", some_keys),
            ("SELECT id FROM drawn WHERE attrs ?& %s ORDER BY id", some_keys),
            ("SELECT id FROM drawn WHERE tags @> %s ORDER BY id", tag_list),
            ("SELECT id FROM drawn WHERE tags && %s ORDER BY id", tag_list),
            ("SELECT id FROM drawn WHERE %s = ANY(tags) ORDER BY id", tag),
            ("SELECT id FROM drawn WHERE nums && %s ORDER BY id", int_list),
            ("SELECT id FROM drawn WHERE %s = ANY(nums) ORDER BY id", one),
        ]
    ]
    with watchdog(EXAMPLE_WATCHDOG_S):
        differences = [pair.run(sql, params)[1] for sql, params in statements]
        if stored:
            # (the strategy itself: PostgreSQL finds the row a sub-document came from)
            for sql, value in [(CONTAINS, sub), (CONTAINED, whole)]:
                assert pair.plain.execute(sql, (value,)).fetchall(), (sql, value, probe)
    found = [d for d in differences if d]
    assert not found, f"{len(found)} of {len(statements)} differ:\n" + "\n".join(found)


# (the fast run reports the first difference as drawn: shrinking it costs minutes of
# round trips; the slow run shrinks)
@settings(
    max_examples=FAST_EXAMPLES,
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
    **_DRAWN_SETTINGS,
)
@given(data=st.data())
def test_drawn_documents(pair: Pair, data: st.DataObject) -> None:
    check_drawn(pair, data)


@pytest.mark.slow
@settings(max_examples=SLOW_EXAMPLES, **_DRAWN_SETTINGS)
@given(data=st.data())
def test_drawn_documents_long(pair: Pair, data: st.DataObject) -> None:
    check_drawn(pair, data)
