"""The parse/rewrite path as a fuzz target, shared by ``fuzz/fuzz_rewrite.py`` (atheris,
coverage-guided) and the bounded run in the test suite (hypothesis).

The target takes SQL text and parameters, parses it as the client does
(``Connection.parse``), compiles it against a real encrypted schema
(``compile_statement``) and binds the parameters (encrypting them for the server).
Nothing is sent to the server, so a case costs microseconds.  The only exceptions
allowed out are the client's typed errors (:class:`AdaptiveError`); anything else is a
finding.
"""

from __future__ import annotations

from typing import Any

import psycopg
from sqlglot import exp

import adaptive_client
from adaptive_client.compile.statements import compile_statement
from adaptive_client.errors import AdaptiveError

SCHEMA = [
    "CREATE TABLE acct (id integer PRIMARY KEY, owner varchar(20) NOT NULL, "
    "balance numeric(10,2), opened date, seen timestamp, flags boolean, memo text, "
    "score double precision, big bigint)",
    "CREATE TABLE movement (id bigint PRIMARY KEY, acct_id integer, amount numeric(10,2), "
    "at timestamp, note text)",
    "CREATE INDEX movement_acct ON movement (acct_id)",
]
CONFIG: dict[str, Any] = {
    "defaults": {"sum": True, "search": True, "hom_bits": 512},
    "tables": {
        "acct": {"id": {"join_group": "acct"}, "memo": {"onions": ["Single"], "layer": "RND"}},
        "movement": {"acct_id": {"join_group": "acct"}},
    },
}
# statements that start a corpus: the shapes the client handles, to mutate from
SEEDS = [
    "SELECT * FROM acct WHERE id = %s",
    "SELECT owner, balance FROM acct WHERE balance > 10 AND opened BETWEEN %s AND %s",
    "SELECT id FROM acct WHERE owner IN ('a', 'b') OR memo IS NULL ORDER BY owner, id LIMIT 5",
    "SELECT count(*), sum(balance), avg(big), min(opened), max(seen) FROM acct",
    "SELECT owner, count(DISTINCT flags) FROM acct GROUP BY owner HAVING count(*) > 1",
    "SELECT a.owner, m.amount FROM acct a JOIN movement m ON a.id = m.acct_id WHERE m.at < %s",
    "SELECT id, balance * 2 + 1 AS twice FROM acct WHERE NOT flags ORDER BY 2 DESC",
    "INSERT INTO acct (id, owner, balance) VALUES (%s, %s, %s) RETURNING id",
    "INSERT INTO movement VALUES (1, 2, 3.50, '2024-01-01 10:00', 'x'), (2, 2, -1, NULL, 'y')",
    "UPDATE acct SET balance = balance + %s WHERE id = %s",
    "UPDATE acct SET memo = 'z', flags = true WHERE owner = 'q'",
    "DELETE FROM movement WHERE acct_id = 3 AND amount < 0",
    "SELECT id FROM movement WHERE note ~ '\\mword\\M'",
    "SELECT DISTINCT owner FROM acct ORDER BY owner DESC NULLS LAST OFFSET 2",
    "SELECT id FROM acct WHERE score <> -1.5e3 AND big >= 9223372036854775807",
    "SELECT id FROM acct UNION SELECT acct_id FROM movement",
]


def open_schema(dsn: str, master_key: Any) -> adaptive_client.Connection:
    """A client connection to ``dsn`` with the fuzz schema created (the database must be
    initialized and empty, or hold this schema already)."""
    conn = adaptive_client.connect(dsn, master_key=master_key, config=CONFIG, autocommit=True)
    if not conn.catalog.has_table("acct"):
        for stmt in SCHEMA:
            conn.execute(stmt)
    return conn


def run_case(conn: adaptive_client.Connection, sql: str, values: tuple[Any, ...]) -> str:
    """One case; returns how it ended ("compiled", "not compiled" for statements the
    compiler does not handle, or the typed error's name).  Parameters are as many as the
    statement has placeholders, taken from ``values`` in turn, as a correct application
    passes them (a wrong count is refused before the rewrite: see the suite).  Any exception
    other than a typed error propagates: that is a finding."""
    try:
        stmt, npos, named = conn.parse(sql)
        if isinstance(
            stmt,
            exp.Create
            | exp.Drop
            | exp.Transaction
            | exp.Commit
            | exp.Rollback
            | exp.Set
            | exp.Command
            | exp.TruncateTable,
        ):
            return "not compiled"
        plan = compile_statement(conn.catalog, stmt)
        if plan.as_if is not None:  # (onions to build first: the plan it then runs by)
            plan = plan.as_if
        if not named:
            pool = values or (None,)
            plan.bind(tuple(pool[i % len(pool)] for i in range(npos)))
        return "compiled"
    except (AdaptiveError, psycopg.Error) as exc:  # the client's, or PostgreSQL's own class
        return type(exc).__name__
