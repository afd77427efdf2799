"""``UPDATE ... FROM`` and ``DELETE ... USING`` whose values or conditions the client
computes, run as a read joining the other tables and a write by key per row
(compile/update_rows.py), judged against PostgreSQL on an ICU and a libc collation: the
rows written, the counts, the RETURNING rows (the other tables' columns too) and the
table after.  A row joined to several rows of the other tables is written once.  All
were refused (0A000)."""

from __future__ import annotations

from typing import Any

from .pairs import Pair, outcome, script_differences

DDL = [
    "CREATE TABLE acct (id int PRIMARY KEY, owner text, balance numeric(10,2), tier int)",
    "CREATE TABLE moves (id int PRIMARY KEY, acct_id int, amount numeric(10,2), note text)",
    "INSERT INTO acct VALUES (1, 'ann', 100, 1), (2, 'bob', 50, 2), (3, 'cy', 0, 1)",
    "INSERT INTO moves VALUES (10, 1, 25.5, 'a'), (11, 2, -10, 'b'), (12, 3, 7, NULL),"
    " (13, 1, 25.5, 'a')",
]

SCRIPT = [
    "UPDATE acct SET balance = m.amount FROM moves m WHERE m.acct_id = acct.id AND m.id = 10",
    "SELECT * FROM acct ORDER BY id",
    "UPDATE acct SET owner = v.name FROM (VALUES (1, 'Anna'), (3, 'Cyrus')) AS v(id, name)"
    " WHERE acct.id = v.id",
    "UPDATE acct SET balance = acct.balance + s.total FROM (SELECT acct_id, sum(amount)"
    " AS total FROM moves GROUP BY acct_id) s WHERE s.acct_id = acct.id"
    " RETURNING acct.id, acct.balance",
    # acct 1 joins two moves: written once, counted once
    "UPDATE acct SET tier = tier * 10 FROM moves m WHERE m.acct_id = acct.id AND m.note = 'a'",
    "SELECT * FROM acct ORDER BY id",
    "UPDATE acct a SET owner = upper(m.note) FROM moves m WHERE m.acct_id = a.id"
    " AND m.amount < 0 RETURNING m.id, a.owner, length(m.note)",
    "UPDATE acct SET owner = lower(owner) || '!' FROM moves m JOIN acct a2 ON a2.id = m.acct_id"
    " WHERE m.acct_id = acct.id AND a2.tier > 5",
    "SELECT * FROM acct ORDER BY id",
    "DELETE FROM moves m USING acct a WHERE a.id = m.acct_id AND a.owner LIKE '%!'"
    " RETURNING m.id, a.owner",
    "SELECT * FROM moves ORDER BY id",
    "UPDATE acct SET balance = 0 FROM moves m WHERE false",
    "UPDATE acct SET tier = x.t FROM (SELECT 1 AS id, 5 AS t UNION ALL SELECT 1, 5) x"
    " WHERE x.id = acct.id",
    "SELECT * FROM acct ORDER BY id",
]


def _unordered(conn: Any, sql: str) -> tuple[Any, ...]:
    """:func:`outcome` with a RETURNING's rows as a set (PostgreSQL's order is its
    join's)."""
    out = outcome(conn, sql)
    if out[0] == "rows" and "RETURNING" in sql:
        return ("rows", sorted(out[1], key=repr), out[2])
    return out


def test_update_from_and_delete_using_as_in_postgresql(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, SCRIPT, judged=_unordered) == []
