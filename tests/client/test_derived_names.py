"""The columns of a derived table, a LATERAL subquery or a CTE named as PostgreSQL names
them (compile/derived_names.py): ``SELECT k.upper FROM (SELECT upper(s) FROM g) k`` was
42703 through the client, and ``SELECT *`` of such a table named its columns ``_col_0``;
a LATERAL subquery's text column is ordered under the collation (it was ordered by its
bytes).  Judged against PostgreSQL on an ICU and a libc collation."""

from __future__ import annotations

from .pairs import Pair, script_differences

DDL = [
    "CREATE TABLE g (k int PRIMARY KEY, n int, b bigint, m smallint, s text, c char(6))",
    "INSERT INTO g VALUES"
    " (1, 12, 9000000000, 4, 'hello wORLD o''neil foo-bar ǆemal ßtraße 1st x2y', 'ab cd'),"
    " (2, -2147483648, -9223372036854775808, -6, 'Foo\\bar it''s', NULL),"
    " (3, NULL, 0, NULL, NULL, 'x'), (4, 0, 6, 9, 'ÉCOLE élève', 'q')",
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
