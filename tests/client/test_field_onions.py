"""Field onions: a jsonb field a statement compares, orders or groups by gets onions of its
own on first use (compile/field_onions.py, adapt/field_onions.py), and from then on the
server does the work -- each statement compared with plain PostgreSQL, on a C and an ICU
database, before and after the build, and after writes of every kind."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
import sqlglot
from psycopg.types.json import Jsonb

import adaptive_client
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.compile.statements import compile_statement
from adaptive_client.errors import UnsupportedQuery

from .pairs import plain_and_encrypted

ICU = "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"
DDL = "CREATE TABLE doc (id integer PRIMARY KEY, attrs jsonb)"
NAMES = ["Émile", "eve", "Zoë", "adam", "Bob", "bob", "Ångström", "zed", "Mallory", "ada"]
COLORS = ["red", "blue", "green", "Red", "blue "]


def _doc(i: int) -> Any:
    if i % 17 == 0:
        return None
    if i % 13 == 0:
        return Jsonb([i, {"color": "red"}])  # an array: no field
    doc: dict[str, Any] = {"name": NAMES[i % len(NAMES)], "rank": i % 7, "dims": {"w": i % 5}}
    if i % 3:
        doc["color"] = COLORS[i % len(COLORS)]
    if i % 11 == 0:
        doc["color"] = None  # JSON null: ->> gives SQL NULL
    if i % 19 == 0:
        doc["color"] = {"nested": True}  # an object: ->> gives its text
    return Jsonb(doc)


ROWS = [(i, _doc(i)) for i in range(1, 121)]


class Pair:
    def __init__(self, plain: psycopg.Connection[Any], enc: adaptive_client.Connection) -> None:
        self.plain, self.enc = plain, enc

    def same(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        expected = self.plain.execute(sql, params).fetchall()
        got = self.enc.execute(sql, params).fetchall()
        assert got == expected, sql
        return got

    def both(self, sql: str, params: Any = None) -> None:
        self.plain.execute(sql, params)
        self.enc.execute(sql, params)


@contextmanager
def _opened(
    new_database: Callable[..., str],
    master_key: MasterKey,
    name: str,
    locale: str = "",
    config: dict[str, Any] | None = None,
) -> Iterator[Pair]:
    with plain_and_encrypted(
        new_database, master_key, name, config or {}, [DDL], {"doc": ROWS}, locale
    ) as (plain, enc):
        yield Pair(plain, enc)


@pytest.fixture(scope="module", params=["C", "ICU"])
def pair(
    request: pytest.FixtureRequest, new_database: Callable[..., str], master_key: MasterKey
) -> Iterator[Pair]:
    locale = ICU if request.param == "ICU" else ""
    with _opened(new_database, master_key, f"fld{request.param}", locale) as p:
        yield p


def _fields(conn: adaptive_client.Connection) -> dict[str, str]:
    return {c.expression or "": n for n, c in conn.catalog.table("doc").precomputed.items()}


def _plan(conn: adaptive_client.Connection, sql: str) -> Any:
    return compile_statement(conn.catalog, sqlglot.parse_one(sql, read="postgres"))


QUERIES = [
    "SELECT id FROM doc WHERE attrs ->> 'color' = 'red' ORDER BY id",
    "SELECT id, attrs ->> 'color' FROM doc WHERE attrs ->> 'color' IN ('blue', 'Red') ORDER BY id",
    "SELECT attrs ->> 'color' AS c, count(*) FROM doc GROUP BY attrs ->> 'color' ORDER BY 1",
    "SELECT id, attrs ->> 'name' FROM doc ORDER BY attrs ->> 'name', id",
    "SELECT id FROM doc WHERE attrs ->> 'name' > 'M' ORDER BY attrs ->> 'name' DESC, id",
    "SELECT id FROM doc WHERE attrs ->> 'name' BETWEEN 'a' AND 'C' ORDER BY id",
    "SELECT id FROM doc WHERE attrs -> 'dims' ->> 'w' = '3' ORDER BY id",
    "SELECT id FROM doc WHERE attrs #>> '{dims,w}' <> '3' ORDER BY id",
]
# a join on two fields: their onions are never re-keyed, split execution joins them
JOINS = [
    # (a set-returning function's column, named only where split execution resolves it)
    "SELECT d.id, k FROM doc d, jsonb_object_keys(d.attrs) AS k "
    "WHERE jsonb_typeof(d.attrs) = 'object' ORDER BY 1, 2",
    "SELECT a.id, b.id FROM doc a JOIN doc b ON a.attrs ->> 'color' = b.attrs -> 'dims' ->> 'w' "
    "ORDER BY 1, 2",
    "SELECT a.id, b.id FROM doc a JOIN doc b ON lower(a.attrs ->> 'name') = b.attrs ->> 'color' "
    "ORDER BY 1, 2",
]


def test_fields_built_on_first_use(pair: Pair) -> None:
    """The first statement comparing, ordering or grouping by a field builds its onion
    (audited as a build, listed as a precomputed column); every answer is PostgreSQL's,
    before and after; the statements then compile without the client engine."""
    for sql in QUERIES + JOINS:
        pair.same(sql)
    fields = _fields(pair.enc)
    for expression in ("attrs ->> 'color'", "attrs ->> 'name'", "(attrs -> 'dims') ->> 'w'"):
        assert expression in fields, fields
    assert "attrs #>> '{dims,w}'" in fields
    logged = pair.enc.control.execute(
        "SELECT count(*) FROM adaptive.peel_log WHERE mode = 'build'"
    ).fetchone()
    assert logged is not None and logged[0] >= 4
    meta = pair.enc.catalog.table("doc")
    field_onions = {oc.anon for c in meta.precomputed.values() for oc in c.onions.values()}
    for sql in QUERIES:  # again, from the built onions
        pair.same(sql)
        plan = _plan(pair.enc, sql)
        server = [plan.sql] if plan.residual is None else [f.sql for f in plan.residual.fetches]
        # the server filters, orders or groups by the field's onions (a text range on
        # the client over the rows its Ord prefix passed, as for any text column)
        where = [s.split(" WHERE ", 1)[-1] for s in server if " WHERE " in s or " ORDER BY " in s]
        assert any(a in w for w in where for a in field_onions) or "GROUP BY" in sql, sql
    for sql in JOINS:
        pair.same(sql)
    for sql in QUERIES[:2]:  # equality: all of it on the server
        assert _plan(pair.enc, sql).residual is None, sql


def test_writes_keep_fields(pair: Pair) -> None:
    """INSERT, COPY and UPDATE compute the fields of the rows they write."""
    pair.same(QUERIES[0])  # (built, if this test runs alone)
    pair.both("INSERT INTO doc VALUES (%s, %s)", (1001, Jsonb({"color": "red", "name": "Zed"})))
    pair.both('INSERT INTO doc VALUES (1002, \'{"color": "red", "name": "a"}\'), (1003, NULL)')
    for conn in (pair.plain, pair.enc):
        with conn.cursor().copy("COPY doc FROM STDIN") as copy:
            copy.write_row((1004, Jsonb({"color": "red", "dims": {"w": 3}})))
    pair.both("UPDATE doc SET attrs = %s WHERE id = 2", (Jsonb({"color": "red", "name": "Zz"}),))
    pair.both("UPDATE doc SET attrs = NULL WHERE id = 4")
    pair.both("DELETE FROM doc WHERE id = 5")
    for sql in QUERIES:
        pair.same(sql)


def test_not_built_where_not_wanted(
    new_database: Callable[..., str], master_key: MasterKey
) -> None:
    """``json_fields = 0`` builds none, nor does peel mode ``off``; inside a transaction
    none is built (a want never fails the application's transaction); ``json_fields =
    1`` builds one per column."""
    sql = QUERIES[0]
    configs: list[tuple[dict[str, Any] | None, int]] = [
        ({"defaults": {"json_fields": 0}}, 0),
        ({"defaults": {"peel": "off"}}, 0),
        (None, 0),
    ]
    for config, expected in configs:
        with _opened(new_database, master_key, "fldoff", config=config) as p:
            if config is None:
                with p.enc.transaction():
                    _answered(p, sql)
            else:
                _answered(p, sql)
            assert len(_fields(p.enc)) == expected
    with _opened(new_database, master_key, "fldone", config={"defaults": {"json_fields": 1}}) as p:
        p.same(sql)
        _answered(p, QUERIES[3])
        assert list(_fields(p.enc)) == ["attrs ->> 'color'"]


def _answered(p: Pair, sql: str) -> None:
    """The statement answered as PostgreSQL answers it, or refused (where the client
    engine cannot evaluate it and no field onion was built)."""
    try:
        got = p.enc.execute(sql).fetchall()
    except UnsupportedQuery:
        return
    assert got == p.plain.execute(sql).fetchall()


def test_layers_lists_field_onions(
    new_database: Callable[..., str], tmp_path: Any, capsys: Any
) -> None:
    """``adaptive-db layers`` shows a field onion as a precomputed one: its expression,
    its layer, what it reveals -- nothing before a statement peels it."""
    import json

    from adaptive_client.admin import cli

    dsn, key = new_database("fldlayers"), MasterKey.generate()
    key_file = tmp_path / "master.key"
    key_file.write_text(key.hex())
    args = ["layers", "--dsn", dsn, "--master-key-file", str(key_file), "--json"]
    with adaptive_client.connect(dsn, master_key=key, autocommit=True) as enc:
        enc.execute(DDL)
        enc.cursor().executemany("INSERT INTO doc VALUES (%s, %s)", ROWS[:20])
        assert cli.main(args) == 0
        assert json.loads(capsys.readouterr().out)["precomputed"] == []
        enc.execute("SELECT id FROM doc WHERE attrs ->> 'color' = 'red'").fetchall()
    assert cli.main(args) == 0
    listed = {
        (p["expression"], p["onion"]): p for p in json.loads(capsys.readouterr().out)["precomputed"]
    }
    assert listed[("attrs ->> 'color'", "Eq")]["layer"] == "DET"  # peeled by the equality
    assert listed[("attrs ->> 'color'", "Ord")]["layer"] == "RND"
    assert listed[("attrs ->> 'color'", "Ord")]["provider_learns"].startswith("nothing")
