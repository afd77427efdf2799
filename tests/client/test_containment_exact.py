"""Containment and membership the Contain onion decides: the server answers them alone.

Where the tokens decide a predicate for every row (compile/containment.py
``exact_filter``: arrays' ``@>``, ``&&``, ``x = ANY(col)``; jsonb's ``?``, ``?|``, ``?&``
and ``@>`` of a document whose features decide it), the statement compiles without
split execution; a jsonb ``@>`` with a parameter is planned both ways and runs the
server's plan for documents that decide it, split execution's for the others.  Every
answer compared with PostgreSQL's, on a C and an ICU database."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from psycopg.types.json import Jsonb

import adaptive_client
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.compile.plan import Compiled
from adaptive_client.compile.statements import compile_statement
from adaptive_client.errors import UnsupportedQuery

from .pairs import plain_and_encrypted

ICU = "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"
DDL = "CREATE TABLE d (id integer PRIMARY KEY, attrs jsonb, tags text[], nums integer[])"
DOCS: list[Any] = [
    {"color": "red", "n": 1, "sub": {"x": [1, 2]}, "tags": ["a", "b"]},
    {"color": "blue", "n": 1.0, "discount": None, "sub": {"x": [2, [3]]}},
    [1, {"a": 2}, "color"],
    "color",
    {"color": ["red"], "sub": {}},
    {"color": "Red", "list": [{"a": 1, "b": 2}, {"a": 3}]},
    {"é": "ü", "n": -0.0, "list": [{"a": 1}, {"b": 2}]},
    None,
    {},
    [],
    5,
    {"sub": {"x": 2}},
]
TAGS: list[Any] = [["a", "b"], ["b"], [], None, ["a", None], ["c", "é"], ["B"]]
NUMS: list[Any] = [[1, 2, 3], [4], None, [1, None], [], [[1, 2], [3, 4]]]
ROWS = [
    (i, None if d is None else Jsonb(d), TAGS[i % len(TAGS)], NUMS[i % len(NUMS)])
    for i, d in enumerate(DOCS)
]


class Pair:
    def __init__(self, plain: psycopg.Connection[Any], enc: adaptive_client.Connection) -> None:
        self.plain, self.enc = plain, enc

    def same(self, sql: str, params: Any = None) -> None:
        expected = self.plain.execute(sql, params).fetchall()
        got = self.enc.execute(sql, params).fetchall()
        assert got == expected, (sql, params)

    def plan(self, sql: str, params: Any = ()) -> Compiled:
        """The plan the client runs for ``sql`` bound with ``params``."""
        stmt = self.enc.parse(sql, bool(params))[0]
        plan = compile_statement(self.enc.catalog, stmt)
        assert not plan.needs and not plan.builds, plan  # (peeled by ``same`` first)
        return plan.for_params(params)


@pytest.fixture(scope="module", params=["C", "ICU"])
def pair(
    request: pytest.FixtureRequest, new_database: Callable[..., str], master_key: MasterKey
) -> Iterator[Pair]:
    locale = ICU if request.param == "ICU" else ""
    with plain_and_encrypted(
        new_database, master_key, f"cx{request.param}", {}, [DDL], {"d": ROWS}, locale
    ) as (plain, enc):
        yield Pair(plain, enc)


# (statement, parameters, whether the server answers it alone)
CASES: list[tuple[str, Any, bool]] = [
    ("""SELECT id FROM d WHERE attrs @> '{"color": "red"}' ORDER BY id""", None, True),
    ("""SELECT id FROM d WHERE attrs @> '{"sub": {"x": [2]}}' ORDER BY id""", None, True),
    ("""SELECT id FROM d WHERE attrs @> '{"n": 1}' ORDER BY id""", None, True),
    ("""SELECT id FROM d WHERE attrs @> '"color"' ORDER BY id""", None, True),
    ("""SELECT id FROM d WHERE attrs @> '{"list": [{"a": 1}]}' ORDER BY id""", None, True),
    ("""SELECT id FROM d WHERE '{"color": "blue"}' <@ attrs ORDER BY id""", None, True),
    # documents the tokens do not decide: the client engine finishes them
    ("""SELECT id FROM d WHERE attrs @> '{}' ORDER BY id""", None, False),
    ("""SELECT id FROM d WHERE attrs @> '[1]' ORDER BY id""", None, False),
    ("""SELECT id FROM d WHERE attrs @> '{"sub": {}}' ORDER BY id""", None, False),
    ("""SELECT id FROM d WHERE attrs @> '{"list": [{"a": 1, "b": 2}]}' ORDER BY id""", None, False),
    ("""SELECT id FROM d WHERE attrs <@ '{"color": "blue", "n": 1}' ORDER BY id""", None, False),
    # parameters: the plan chosen by the document bound
    ("SELECT id FROM d WHERE attrs @> %s ORDER BY id", ('{"color": "red"}',), True),
    ("SELECT id FROM d WHERE attrs @> %s ORDER BY id", (Jsonb({"n": 1.0}),), True),
    ("SELECT id FROM d WHERE attrs @> %s ORDER BY id", ('{"list": [{"b": 2}]}',), True),
    ("SELECT id FROM d WHERE attrs @> %s ORDER BY id", (None,), True),
    ("SELECT id FROM d WHERE attrs @> %s ORDER BY id", ("[]",), False),
    ("SELECT id FROM d WHERE attrs @> %s ORDER BY id", (Jsonb({}),), False),
    ("SELECT id FROM d WHERE attrs @> %s ORDER BY id", ('{"list": [{"a": 1, "b": 2}]}',), False),
    # existence
    ("SELECT id FROM d WHERE attrs ? 'color' ORDER BY id", None, True),
    ("SELECT id FROM d WHERE attrs ? %s ORDER BY id", ("é",), True),
    ("SELECT id FROM d WHERE attrs ?| ARRAY['discount', 'zz'] ORDER BY id", None, True),
    ("SELECT id FROM d WHERE attrs ?& ARRAY['n', 'color'] ORDER BY id", None, True),
    ("SELECT id FROM d WHERE attrs ?& %s ORDER BY id", (["n", "sub"],), False),
    ("SELECT id FROM d WHERE attrs ?& %s ORDER BY id", ([],), False),
    # arrays
    ("SELECT id FROM d WHERE tags @> '{b}' ORDER BY id", None, True),
    ("SELECT id FROM d WHERE tags @> ARRAY['a', 'b'] ORDER BY id", None, True),
    ("SELECT id FROM d WHERE tags @> ARRAY['a', NULL] ORDER BY id", None, True),
    ("SELECT id FROM d WHERE tags @> %s ORDER BY id", (["a", None],), True),
    ("SELECT id FROM d WHERE tags @> ARRAY[%s] ORDER BY id", ("a",), True),
    ("SELECT id FROM d WHERE tags @> '{}' ORDER BY id", None, True),
    ("SELECT id FROM d WHERE tags && ARRAY['b', 'é'] ORDER BY id", None, True),
    ("SELECT id FROM d WHERE tags && %s ORDER BY id", (["zz"],), True),
    ("SELECT id FROM d WHERE %s = ANY(tags) ORDER BY id", ("b",), True),
    ("SELECT id FROM d WHERE 'B' = ANY(tags) OR id = 0 ORDER BY id", None, True),
    ("SELECT id FROM d WHERE 3 = ANY(nums) ORDER BY id", None, True),
    ("SELECT id FROM d WHERE nums @> ARRAY[1, 4] ORDER BY id", None, True),
    # NOT, <@ and NULL-sensitive forms: split execution
    ("SELECT id FROM d WHERE NOT ('b' = ANY(tags)) ORDER BY id", None, False),
    ("SELECT id FROM d WHERE tags <@ ARRAY['a', 'b'] ORDER BY id", None, False),
]


@pytest.mark.parametrize(("sql", "params", "server"), CASES)
def test_answers_and_plans(pair: Pair, sql: str, params: Any, server: bool) -> None:
    pair.same(sql, params)
    plan = pair.plan(sql, params or ())
    assert (plan.residual is None) == server, (sql, params)


def test_server_plan_reads_tokens_only(pair: Pair) -> None:
    """The server's statement tests the Contain onion; the document is read only for
    the rows it returns."""
    sql = "SELECT id FROM d WHERE attrs @> %s ORDER BY id"
    pair.same(sql, ('{"color": "red"}',))
    plan = pair.plan(sql, ('{"color": "red"}',))
    contain = pair.enc.catalog.table("d").column("attrs").onions
    tokens = [oc.anon for o, oc in contain.items() if o.value == "Contain"]
    assert tokens and f'"{tokens[0]}" @>' in plan.sql.replace("a0.", "")


def test_writes_by_containment(pair: Pair) -> None:
    """UPDATE and DELETE filtered by a decided containment run on the server; one the
    tokens do not decide is refused where PostgreSQL answers (nothing written)."""
    for conn in (pair.plain, pair.enc):
        conn.execute(DDL.replace("TABLE d", "TABLE w"))
        conn.cursor().executemany("INSERT INTO w VALUES (%s, %s, %s, %s)", ROWS)
        conn.execute("UPDATE w SET nums = ARRAY[9] WHERE attrs @> %s", ('{"color": "red"}',))
        conn.execute("DELETE FROM w WHERE tags @> ARRAY['c']")
    pair.same("SELECT id, nums FROM w ORDER BY id")
    with pytest.raises(UnsupportedQuery):
        pair.enc.execute("UPDATE w SET nums = NULL WHERE attrs @> %s", ("{}",))
    pair.same("SELECT id, nums FROM w ORDER BY id")
