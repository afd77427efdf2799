"""The columns of a derived table, a LATERAL subquery or a CTE named as PostgreSQL names
them (compile/derived_names.py): ``SELECT k.upper FROM (SELECT upper(s) FROM g) k`` was
42703 through the client, and ``SELECT *`` of such a table named its columns ``_col_0``;
a LATERAL subquery's text column is ordered under the collation (it was ordered by its
bytes).  Judged against PostgreSQL on an ICU and a libc collation."""

from __future__ import annotations

from .pairs import Pair, script_differences

DDL = [
    "CREATE TABLE g (k int PRIMARY KEY, n int, s text)",
    "INSERT INTO g VALUES (1, 12, 'Zoë'), (2, -3, 'école'), (3, NULL, NULL), (4, 0, 'Eve'),"
    " (5, 7, 'ecole')",
]

# a derived table's or CTE's columns named as PostgreSQL names them (FigureColname)
DERIVED = [
    "SELECT k.upper FROM (SELECT upper(s) FROM g) k ORDER BY 1",
    "SELECT x.count, x.sum FROM (SELECT count(*), sum(n) FROM g) x",
    "SELECT * FROM (SELECT upper(s), lower(s), n + 1 FROM g) k ORDER BY 1",
    "WITH w AS (SELECT initcap(s), n * 2 FROM g) SELECT * FROM w ORDER BY 1",
    "WITH w(a) AS (SELECT upper(s) FROM g) SELECT * FROM w ORDER BY a",
    "SELECT * FROM (SELECT upper(s) FROM g UNION SELECT 'x') k ORDER BY 1",
    "SELECT l.upper FROM g, LATERAL (SELECT upper(g.s)) l ORDER BY 1",
    # (a LATERAL subquery's text column ordered under the collation)
    "SELECT l.u FROM g, LATERAL (SELECT g.s || 'x' AS u) l ORDER BY 1",
    "SELECT k.chr FROM (SELECT chr(n + 53) FROM g WHERE k = 1) k",
]


def test_derived_columns_named_as_in_postgresql(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, DERIVED) == []
