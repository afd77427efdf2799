"""The designer (`adaptive-db advise`) and the statement log it reads."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

import adaptive_client
from adaptive_client.admin import cli
from adaptive_client.admin.advise import advise, read_schema, render
from adaptive_client.catalog.config import load_config
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.dbapi.statement_log import read_statements
from adaptive_client.errors import ConfigError
from tpch.queries import query
from tpch.schema import TABLES

TPCH_SCHEMA = ";\n".join(TABLES.values()) + ";\n"


@pytest.fixture(scope="module")
def tpch_advice() -> dict[str, Any]:
    tables = read_schema(TPCH_SCHEMA)
    statements = [query(n, 0.01) for n in range(1, 23)]
    text = render(tables, advise(tables, statements), len(statements))
    import tomllib

    return {"text": text, "toml": tomllib.loads(text)}


def test_tpch_precomputed_expressions(tpch_advice: dict[str, Any]) -> None:
    pre = tpch_advice["toml"]["precomputed"]
    by_expr = {e["expression"]: e for t in pre.values() for e in t.values()}
    revenue = by_expr["l_extendedprice * (1 - l_discount)"]
    assert revenue["onions"] == ["Sum"] and revenue["type"] == "numeric(31,4)"
    charge = by_expr["(l_extendedprice * (1 - l_discount)) * (1 + l_tax)"]
    assert charge["type"] == "numeric(38,6)"  # 47 digits by its factors, capped at 38
    # predicates the server cannot evaluate over any one column's onion: booleans
    comment = by_expr["o_comment NOT LIKE '%special%requests%'"]
    assert comment == {**comment, "type": "boolean", "onions": ["Eq"]}
    assert "p_name LIKE '%green%'" in by_expr
    assert "ps_supplycost * ps_availqty" in by_expr
    # Q22's country code: filtered by IN and grouped, an Eq onion of text
    code = by_expr["SUBSTRING(c_phone FROM 1 FOR 2)"]
    assert code == {**code, "type": "text", "onions": ["Eq"]}
    assert "pc1_substring_c_phone" in pre["customer"]
    # a prefix is a range over Ord, not a precomputed predicate
    assert not any("forest" in e or "PROMO" in e for e in by_expr)
    assert "Ord" in tpch_advice["toml"]["tables"]["part"]["p_name"]["onions"]


def test_tpch_column_onions(tpch_advice: dict[str, Any]) -> None:
    tables = tpch_advice["toml"]["tables"]
    lineitem = tables["lineitem"]
    # ranges, sum, avg: the exact Ord onion also serves equality and decryption, so no Eq
    assert lineitem["l_quantity"]["onions"] == ["Ord", "Sum"]
    assert lineitem["l_returnflag"]["onions"] == ["Eq"]  # grouped only
    assert tables["orders"]["o_orderdate"]["onions"] == ["Ord"]
    assert lineitem["l_extendedprice"]["onions"] == ["Sum"]  # summed and read: ASHE decrypts
    # text orders by a prefix only (Ord cannot decide equality nor decrypt): Eq stays
    assert tables["part"]["p_name"]["onions"] == ["Eq", "Ord"]
    # a line's three dates are compared with each other: one join group
    groups = {
        lineitem[c].get("join_group") for c in ("l_shipdate", "l_commitdate", "l_receiptdate")
    }
    assert len(groups) == 1 and None not in groups
    # columns no query reads are left to the defaults
    assert "r_comment" not in tables.get("region", {})
    # every entry says which statements asked for it
    assert "# used by #1, #3, #5, #10, #14, #15, #19" in tpch_advice["text"]


def test_eq_kept_for_keys_and_joined_columns() -> None:
    """Ord alone where it serves; Eq kept for keys, for foreign keys and their targets,
    and for a column equated with another one (only Eq onions share a key)."""
    tables = read_schema(
        "CREATE TABLE a (id integer PRIMARY KEY, n integer, d date, m integer);"
        "CREATE TABLE b (id integer PRIMARY KEY, a_id integer REFERENCES a, n integer);"
    )
    statements = [
        "SELECT id, n, d, m FROM a WHERE id > 3 AND n < 5 AND d > DATE '2020-01-01' "
        "AND m > 1 ORDER BY m",
        "SELECT b.n FROM a, b WHERE a.n = b.n AND b.a_id > 2",
    ]
    toml = tomllib.loads(render(tables, advise(tables, statements), len(statements)))
    onions = {(t, c): e["onions"] for t, cols in toml["tables"].items() for c, e in cols.items()}
    assert onions[("a", "id")] == ["Eq", "Ord"]  # a primary key
    assert onions[("b", "a_id")] == ["Eq", "Ord"]  # a foreign key
    assert onions[("a", "n")] == ["Eq", "Ord"]  # joined with b.n
    assert onions[("b", "n")] == ["Eq"]
    assert onions[("a", "d")] == ["Ord"] and onions[("a", "m")] == ["Ord"]


def test_advice_is_a_valid_configuration(tpch_advice: dict[str, Any]) -> None:
    config = load_config(tpch_advice["toml"])
    assert "pc1_o_comment_special_requests" in config.precomputed["orders"]


def test_statement_log_and_cli(new_database: Any, tmp_path: Path, capsys: Any) -> None:
    log = tmp_path / "statements.jsonl"
    schema = tmp_path / "schema.sql"
    schema.write_text("CREATE TABLE t (id integer PRIMARY KEY, a numeric(6,2), b numeric(6,2));")
    with adaptive_client.connect(
        new_database("advise"),
        master_key=MasterKey.generate(),
        statement_log=log,
        autocommit=True,
    ) as conn:
        conn.execute(schema.read_text())
        conn.execute("INSERT INTO t VALUES (%s, %s, %s)", (1, 2.5, 3.25))
        for _ in range(3):  # recorded once per connection
            conn.execute("SELECT sum(a * b) FROM t WHERE id > %s", (0,))
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert {"sql": "SELECT sum(a * b) FROM t WHERE id > %(u0)s"} in lines
    assert sum("sum(a * b)" in x["sql"] for x in lines) == 1
    assert "3.25" not in log.read_text()  # parameters are never recorded
    assert read_statements(log)[-1] == "SELECT sum(a * b) FROM t WHERE id > %(u0)s"
    assert cli.main(["advise", "--schema", str(schema), "--log", str(log)]) == 0
    out = capsys.readouterr().out
    assert '[precomputed.t.pc1_a_b]\nexpression = "a * b"\ntype = "numeric(12,4)"' in out
    assert '[tables.t.id]\nonions = ["Eq", "Ord"]' in out


def test_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no CREATE TABLE"):
        read_schema("SELECT 1")
    with pytest.raises(ConfigError, match="cannot read the statement log"):
        read_statements(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"sql": "SELECT 1"}\n{"nope": 1}\n')
    with pytest.raises(ConfigError, match=r"bad\.jsonl:2"):
        read_statements(bad)
    tables = read_schema("CREATE TABLE t (a integer)")
    out = render(tables, advise(tables, ["SELECT (", "SELECT zz FROM t"]), 2)
    assert out.count("# not read:") == 2
