"""The client engine's dialect (engine/transforms.py and the modules beside it) stands
below the compiler: it imports nothing that compiles for the server.  Its tables of
per-node rewrites find a node's entry by the node's class or its nearest base class."""

from __future__ import annotations

import ast
from pathlib import Path

import sqlglot
from sqlglot import exp

from adaptive_client import rewrite
from adaptive_client.engine.kinds import by_type, kind_of
from adaptive_client.engine.transforms import TRANSFORMS, rewrite_node

# the client engine's modules, and the compiler's that they must not import
ENGINE = ["engine", "held", "numeric", "order_bytes", "to_char", "kinds", "sums",
          "transforms", "engine_sql", "engine_types", "text_order"]  # fmt: skip
COMPILE = {"compiler", "statements", "split", "aggregate", "late", "eager", "residual",
           "precomputed", "plan", "allowed", "output_names", "scope", "constants",
           "comparands", "projection", "select", "client_aggregate", "insert",
           "update_delete", "writes", "row_keys", "ordering", "relations",
           "settings"}  # fmt: skip


def _imported(module: str) -> set[str]:
    """The sibling modules ``module`` imports, wherever the import is written."""
    tree = ast.parse((Path(rewrite.__file__).parent / f"{module}.py").read_text())
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            out |= {node.module} if node.module else {a.name for a in node.names}
    return out


def test_the_engine_imports_nothing_of_the_compiler() -> None:
    for module in ENGINE:
        assert not _imported(module) & COMPILE, module


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
