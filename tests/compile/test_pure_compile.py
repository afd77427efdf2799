"""Compiling is a pure function of the statement, a catalog snapshot and the settings.

The catalog here is built in memory -- no database, no connection: compiling a
statement that needs a peel returns the peel as a need, and one that needs an onion
built on first use returns the build, without touching anything.
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
import sqlglot
from sqlglot import exp

from adaptive_client.catalog.keys import RootKeys, new_key
from adaptive_client.catalog.metadata import Catalog, ColumnMeta, OnionColumn, TableMeta
from adaptive_client.catalog.onions import STACKS, Cap, Onion
from adaptive_client.compile.plan import Compiled
from adaptive_client.compile.settings import Settings
from adaptive_client.compile.statements import compile_statement
from adaptive_client.values.encodings import parse_sql_type


@pytest.fixture(autouse=True)
def no_database(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to reach a server fails the test."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("compiling reached for a database connection")

    monkeypatch.setattr(psycopg, "connect", refuse)
    monkeypatch.setattr(psycopg.Connection, "connect", refuse)
    monkeypatch.setattr(psycopg.Connection, "execute", refuse)
    monkeypatch.setattr(psycopg.Connection, "cursor", refuse)


def _onion(onion: Onion, anon: str, layer: str = "RND") -> OnionColumn:
    stack = STACKS[onion]
    return OnionColumn(
        onion=onion,
        anon=anon,
        stack=stack,
        layer=layer,
        floor=None,
        keys={name: new_key() for name in stack},
    )


def _column(name: str, type_sql: str, *onions: OnionColumn, **extra: Any) -> ColumnMeta:
    return ColumnMeta(
        name=name,
        type=parse_sql_type(type_sql),
        nullable=True,
        onions={oc.onion: oc for oc in onions},
        **extra,
    )


@pytest.fixture
def catalog() -> Catalog:
    """``t(id, x, y, z)``: every onion at its outermost layer (RND); ``y`` has no Ord
    onion yet (built when a statement first orders by it); ``z`` has one, at RND."""
    catalog = Catalog(RootKeys(new_key()))
    columns = [
        _column("id", "integer", _onion(Onion.EQ, "c1")),
        _column("x", "integer", _onion(Onion.EQ, "c2"), _onion(Onion.ORD, "c3")),
        _column(
            "y",
            "integer",
            _onion(Onion.EQ, "c4"),
            on_demand={Onion.ORD: {"start": "RND", "floor": None}},
        ),
        _column("z", "integer", _onion(Onion.EQ, "c5"), _onion(Onion.ORD, "c6")),
    ]
    table = TableMeta(name="t", anon="tbl1", columns={c.name: c for c in columns})
    catalog.tables = {"t": table}
    catalog.by_anon = {"tbl1": table}
    return catalog


def _compile(catalog: Catalog, sql: str) -> Compiled:
    stmt = sqlglot.parse_one(sql, read="postgres")
    assert isinstance(stmt, exp.Expression)
    return compile_statement(catalog, stmt, Settings())


def _needs(plan: Compiled) -> set[tuple[str, str, str, str, Cap]]:
    return {(n.table.name, n.column.name, n.onion.onion.value, n.layer, n.cap) for n in plan.needs}


def test_an_equality_needs_its_eq_onion_peeled_to_det(catalog: Catalog) -> None:
    plan = _compile(catalog, "SELECT id FROM t WHERE x = %s")
    assert _needs(plan) == {("t", "x", "Eq", "DET", Cap.EQ)}
    assert plan.builds == [] and plan.joins == []
    assert plan.sql  # the statement as it will run once peeled


def test_an_order_needs_its_ord_onion_peeled_to_ope(catalog: Catalog) -> None:
    plan = _compile(catalog, "SELECT id FROM t WHERE x = %s ORDER BY z")
    assert _needs(plan) == {("t", "x", "Eq", "DET", Cap.EQ), ("t", "z", "Ord", "OPE", Cap.ORD)}
    assert plan.builds == []


def test_an_order_by_an_onion_not_built_returns_the_build(catalog: Catalog) -> None:
    plan = _compile(catalog, "SELECT id FROM t WHERE x = %s ORDER BY y")
    assert [(b.table, b.column, b.onion) for b in plan.builds] == [("t", "y", Onion.ORD)]
    assert plan.needs == [] and plan.sql == ""  # nothing else until it is built


def test_the_catalog_is_left_as_it_was(catalog: Catalog) -> None:
    _compile(catalog, "SELECT id FROM t WHERE x = %s ORDER BY y")
    _compile(catalog, "SELECT id FROM t WHERE x = %s ORDER BY z")
    layers = {oc.anon: oc.layer for c in catalog.table("t").columns.values() for oc in c.storage}
    assert set(layers.values()) == {"RND"}
    assert Onion.ORD not in catalog.table("t").column("y").onions
