"""The client engine's dialect (engine/transforms.py and the modules beside it): its tables
of per-node rewrites find a node's entry by the node's class or its nearest base class.
(That the engine imports nothing of the compiler is the layer contract's, checked in
tests/test_architecture.py.)"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from adaptive_client.engine.kinds import by_type, kind_of
from adaptive_client.engine.transforms import TRANSFORMS, rewrite_node


def test_a_node_finds_its_base_class_rewrite() -> None:
    union = sqlglot.parse_one("SELECT 1 UNION SELECT 2", read="postgres")
    assert by_type(TRANSFORMS, union) is TRANSFORMS[exp.SetOperation]
    try_cast = exp.TryCast(this=exp.column("x"), to=exp.DataType.build("INT"))
    assert by_type(TRANSFORMS, try_cast) is TRANSFORMS[exp.Cast]
    assert by_type(TRANSFORMS, exp.column("x")) is None


def test_a_node_without_a_rewrite_is_itself() -> None:
    column = exp.column("x")
    assert rewrite_node(column) is column
    lower = sqlglot.parse_one("SELECT lower(x)", read="postgres").expressions[0]
    assert rewrite_node(lower).sql("duckdb") == "PG_LOWER(x)"


def test_kinds_of_constants() -> None:
    assert kind_of(exp.Literal.number(2)) == "int"
    assert kind_of(exp.Literal.number("2.5")) == "decimal"
    assert kind_of(exp.Literal.number(2**63)) == "decimal"
