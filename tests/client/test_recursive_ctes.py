"""WITH RECURSIVE in client-evaluated queries, judged against PostgreSQL (was refused
whole): series, tree walks down and up, UNION and UNION ALL, integer overflow in the
recursion, a VALUES anchor, a recursive CTE read by another CTE; and refused (0A000)
where the client engine would answer what PostgreSQL rejects -- a recursive column of
another type than the non-recursive term's (42804), a recursive reference in a subquery
or in the non-recursive term (42P19)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, outcome, plain_and_encrypted, script_differences

SETUP = [
    "CREATE TABLE emp (id int PRIMARY KEY, boss int, name text, salary numeric(10,2),"
    " code varchar(10), big bigint)",
    "INSERT INTO emp VALUES (1, NULL, 'ceo', 100, 'a', 1), (2, 1, 'vp', 50, 'b', 2),"
    " (3, 2, 'mgr', 30.5, 'c', 3), (4, 3, 'dev', 20, 'd', 4), (5, 3, 'dev2', 21, 'e', 5),"
    " (6, 1, 'cfo', 60, 'f', 6)",
]
ANSWERED = [
    "WITH RECURSIVE t(n) AS (VALUES (1) UNION ALL SELECT n + 1 FROM t WHERE n < 100) "
    "SELECT sum(n) FROM t",
    "WITH RECURSIVE sub AS (SELECT id, name, 1 AS depth FROM emp WHERE id = 2 UNION ALL "
    "SELECT e.id, e.name, s.depth + 1 FROM emp e JOIN sub s ON e.boss = s.id) "
    "SELECT * FROM sub ORDER BY id",
    "WITH RECURSIVE up(id, boss, path) AS (SELECT id, boss, name FROM emp WHERE id = 4 "
    "UNION ALL SELECT e.id, e.boss, up.path || '>' || e.name FROM emp e, up "
    "WHERE e.id = up.boss) SELECT path FROM up ORDER BY length(path)",
    "WITH RECURSIVE r AS (SELECT id, salary FROM emp WHERE boss IS NULL UNION "
    "SELECT e.id, e.salary FROM emp e JOIN r ON e.boss = r.id) SELECT sum(salary), count(*) FROM r",
    "WITH RECURSIVE t(n) AS (SELECT 1 UNION SELECT n + 1 FROM t WHERE n < 5) "
    "SELECT n FROM t ORDER BY n",
    "WITH RECURSIVE t(n) AS (SELECT 2147483640 UNION ALL SELECT n + 1 FROM t) "
    "SELECT count(*) FROM t",
    "WITH RECURSIVE x(id) AS (SELECT 1 UNION ALL SELECT id + 1 FROM x WHERE id < 5), "
    "y AS (SELECT * FROM x WHERE id > 2) SELECT * FROM y ORDER BY id",
    "WITH RECURSIVE t(x, y) AS (SELECT 1, 'a'::text UNION ALL SELECT x + 1, y || x FROM t "
    "WHERE x < 4) SELECT * FROM t ORDER BY x",
    "WITH RECURSIVE t(c) AS (SELECT code FROM emp WHERE id = 1 UNION ALL "
    "SELECT e.code FROM emp e JOIN t ON e.code > t.c WHERE e.id < 4) SELECT c FROM t ORDER BY c",
]
REFUSED = [  # PostgreSQL's error, the client's refusal
    "WITH RECURSIVE t(x) AS (SELECT code FROM emp UNION ALL SELECT x || 'b' FROM t "
    "WHERE length(x) < 3) SELECT * FROM t",
    "WITH RECURSIVE t(x) AS (SELECT id FROM emp UNION ALL SELECT x + big FROM t, emp "
    "WHERE x < 3) SELECT * FROM t",
    "WITH RECURSIVE t(x) AS (SELECT salary FROM emp UNION ALL SELECT x * 2 FROM t "
    "WHERE x < 10) SELECT * FROM t",
    "WITH RECURSIVE t(x) AS (SELECT 1 UNION ALL SELECT (SELECT max(x) FROM t) + 1) "
    "SELECT * FROM t LIMIT 3",
    "WITH RECURSIVE t(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM t WHERE x < 3 "
    "UNION ALL SELECT x + 10 FROM t WHERE x < 2) SELECT * FROM t",
]


@pytest.fixture(scope="module")
def pair(new_database: Callable[..., str]) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, MasterKey.generate(), "recursive", {}, SETUP, {}) as p:
        yield p


def test_recursive_queries_as_in_postgresql(pair: Pair) -> None:
    assert script_differences(pair, ANSWERED) == []


@pytest.mark.parametrize("sql", REFUSED)
def test_recursive_queries_postgresql_rejects_are_refused(pair: Pair, sql: str) -> None:
    plain, enc = pair
    assert outcome(plain, sql)[0] == "error"
    assert outcome(enc, sql) == ("error", "0A000")
