"""A bounded run of the parse/rewrite fuzz target (fuzz/rewrite_target.py): mutated
statements, token soup and arbitrary text, each parsed, compiled and bound against a
real encrypted schema.  Only the client's typed errors may come out.  The long,
coverage-guided run is ``fuzz/fuzz_rewrite.py`` (docs/security.md)."""

from __future__ import annotations

import importlib
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import adaptive_client
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.errors import ParameterMismatch

FUZZ = Path(__file__).resolve().parents[2] / "fuzz"
sys.path.insert(0, str(FUZZ))
target = importlib.import_module("rewrite_target")
strategies = importlib.import_module("sql_strategies")
harness = importlib.import_module("fuzz_rewrite")
ENDINGS: Counter[str] = Counter()


@pytest.fixture(scope="module")
def conn(new_database: Callable[..., str]) -> Iterator[adaptive_client.Connection]:
    c = target.open_schema(new_database("fuzzrw"), MasterKey.generate())
    yield c
    print(f"rewrite fuzz: {sum(ENDINGS.values())} cases, {dict(ENDINGS)}")
    c.close()


@settings(max_examples=int(os.environ.get("ADAPTIVE_FUZZ_REWRITE", "1500")), database=None)
@given(
    sql=strategies.statements(), values=st.lists(st.sampled_from(harness.PARAM_KINDS), max_size=4)
)
def test_only_typed_errors(conn: adaptive_client.Connection, sql: str, values: list[Any]) -> None:
    ENDINGS[target.run_case(conn, sql, tuple(values))] += 1


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM acct WHERE id = %s LIMIT '",  # sqlglot TokenError
        "DELETE movement WHERE acct_id = 3",  # no FROM: sqlglot leaves a flag
        "SELECT * FROM acct WHERE id = ?",  # not a psycopg placeholder
        "SELECT count(DISTINCT) FROM acct",
        "SELECT id FROM acct ORDER BY owner, id LIMIT 'a'",
        "SELECT owner FROM acct GROUP BY 1.5",
        "SELECT id FROM acct WHERE big >= 1e3089223372036854775807",
        "INSERT INTO acct (id, owner, balance) VALUES (%S, %s, %s)",  # not a placeholder
        "SELECT " + "(" * 3000 + "1" + ")" * 3000 + " FROM acct",  # RecursionError in sqlglot
        "SELECT id FROM acct WHERE " + " AND ".join(["id = 1"] * 3000),  # ... in the rewrite
        "SELECT owownINT INTO aer, ba\udcff\udcffcFDATE?aT +,",  # ValueError in sqlglot (atheris)
        "SELECT id m FROM acct WHERE score <> -1.5e3854775807",  # decimal.Overflow (atheris)
    ],
)
def test_fuzzer_findings_are_typed(conn: adaptive_client.Connection, sql: str) -> None:
    """What the fuzzers found raising untyped exceptions, now typed refusals."""
    assert target.run_case(conn, sql, (1,)) not in ("compiled", "not compiled")


def test_the_target_compiles_the_seeds(conn: adaptive_client.Connection) -> None:
    """The seeds are statements the client runs (the dates take date parameters; UNION of
    encrypted columns is refused): the target reaches the whole rewrite path."""
    ends = [target.run_case(conn, s, (1, "a", None)) for s in target.SEEDS]
    assert ends.count("compiled") >= len(ends) - 3, list(zip(target.SEEDS, ends, strict=True))


def test_too_few_parameters_is_a_typed_error(conn: adaptive_client.Connection) -> None:
    """psycopg raises ProgrammingError here; so does the client (ParameterMismatch)."""
    with pytest.raises(ParameterMismatch, match="placeholders"):
        conn.execute("SELECT owner FROM acct WHERE id = %s AND big = %s", (1,))
    with pytest.raises(ParameterMismatch, match="parameter missing: k"):
        conn.execute("SELECT owner FROM acct WHERE id = %(k)s", (1,))


def test_too_many_parameters_is_a_typed_error(conn: adaptive_client.Connection) -> None:
    """More parameters than placeholders is a mistake (psycopg refuses it too): typed
    error, nothing written; the right count then works."""
    before = conn.execute("SELECT COUNT(*) FROM acct").fetchone()
    with pytest.raises(ParameterMismatch, match="1 placeholders but 2"):
        conn.execute("SELECT owner FROM acct WHERE id = %s", (1, 2))
    with pytest.raises(ParameterMismatch, match="placeholders"):
        conn.execute("DELETE FROM acct WHERE id = 1", (1,))
    with pytest.raises(ParameterMismatch, match="placeholders"):
        conn.cursor().executemany("DELETE FROM acct WHERE id = %s", [(1,), (2, 3)])
    assert conn.execute("SELECT COUNT(*) FROM acct").fetchone() == before
    conn.execute("SELECT owner FROM acct WHERE id = %s", (1,))
    assert conn.execute("EXPLAIN SELECT owner FROM acct WHERE id = %s", (1,)).fetchall()
