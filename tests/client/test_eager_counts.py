"""Counts of an outer join's right side aggregated before the join (compile/eager.py):
the pass alone over server queries, and statements of its shape judged by PostgreSQL on
the differential schema (compiled whole and split, on C and ICU databases)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import sqlglot
from sqlglot import exp

from adaptive_client.catalog.keys import MasterKey
from adaptive_client.compile.eager import eager_counts

from .test_diff_queries import ICU, Pair, _pair


def _pass(sql: str) -> str:
    tree = sqlglot.parse_one(sql, read="postgres")
    assert isinstance(tree, exp.Select)
    return eager_counts(tree).sql("postgres")


def test_counts_of_the_right_side_are_grouped_before_the_join() -> None:
    out = _pass(
        "SELECT a0.k, COUNT(a1.x), COUNT(*) FROM l AS a0 LEFT OUTER JOIN r AS a1 "
        "ON a0.k = a1.fk AND a1.flag = $1 GROUP BY a0.k"
    )
    assert out == (
        "SELECT a0.k, CAST(COALESCE(SUM(a1.__n0), 0) AS BIGINT), "
        "CAST(SUM(COALESCE(a1.__n1, 1)) AS BIGINT) FROM l AS a0 LEFT JOIN "
        "(SELECT a1.fk AS __j0, COUNT(a1.x) AS __n0, COUNT(*) AS __n1 FROM r AS a1 "
        "WHERE a1.flag = $1 GROUP BY a1.fk) AS a1 ON a0.k = a1.__j0 GROUP BY a0.k"
    )


def test_two_join_columns_either_way_round_and_an_order() -> None:
    out = _pass(
        "SELECT a0.k, COUNT(a1.x) FROM l AS a0 LEFT JOIN r AS a1 "
        "ON a1.fk = a0.k AND a0.m = a1.fm GROUP BY a0.k, a0.m ORDER BY a0.m, 2 DESC LIMIT 5"
    )
    assert "GROUP BY a1.fk, a1.fm) AS a1 ON a0.k = a1.__j0 AND a0.m = a1.__j1" in out
    assert out.endswith("GROUP BY a0.k, a0.m ORDER BY a0.m, 2 DESC LIMIT 5")


@pytest.mark.parametrize(
    "sql",
    [
        # parents filtered: probing the children of the few left is cheaper
        "SELECT a0.k, COUNT(a1.x) FROM l AS a0 LEFT JOIN r AS a1 ON a0.k = a1.fk "
        "WHERE a0.k = $1 GROUP BY a0.k",
        # an inner join, a sum, a grouping by the right side, a left-side ON conjunct
        "SELECT a0.k, COUNT(a1.x) FROM l AS a0 JOIN r AS a1 ON a0.k = a1.fk GROUP BY a0.k",
        "SELECT a0.k, SUM(a1.x) FROM l AS a0 LEFT JOIN r AS a1 ON a0.k = a1.fk GROUP BY a0.k",
        "SELECT a1.fk, COUNT(a1.x) FROM l AS a0 LEFT JOIN r AS a1 ON a0.k = a1.fk GROUP BY a1.fk",
        "SELECT a0.k, COUNT(a1.x) FROM l AS a0 LEFT JOIN r AS a1 "
        "ON a0.k = a1.fk AND a0.m > 1 GROUP BY a0.k",
        # a count of the left side, DISTINCT, HAVING, no equality, no grouping
        "SELECT a0.k, COUNT(a0.m) FROM l AS a0 LEFT JOIN r AS a1 ON a0.k = a1.fk GROUP BY a0.k",
        "SELECT a0.k, COUNT(DISTINCT a1.x) FROM l AS a0 LEFT JOIN r AS a1 ON a0.k = a1.fk "
        "GROUP BY a0.k",
        "SELECT a0.k, COUNT(a1.x) FROM l AS a0 LEFT JOIN r AS a1 ON a0.k = a1.fk "
        "GROUP BY a0.k HAVING COUNT(a1.x) > 1",
        "SELECT a0.k, COUNT(a1.x) FROM l AS a0 LEFT JOIN r AS a1 ON a0.k < a1.fk GROUP BY a0.k",
        "SELECT COUNT(a1.x) FROM l AS a0 LEFT JOIN r AS a1 ON a0.k = a1.fk",
        # ordered by an expression the rewrite changes
        "SELECT a0.k, COUNT(a1.x) FROM l AS a0 LEFT JOIN r AS a1 ON a0.k = a1.fk "
        "GROUP BY a0.k ORDER BY COUNT(a1.x)",
    ],
)
def test_other_shapes_are_left_as_they_are(sql: str) -> None:
    tree = sqlglot.parse_one(sql, read="postgres")
    assert isinstance(tree, exp.Select)
    assert eager_counts(tree) is tree


# parents grouped several to a group, parents without children, NULL join keys (emp.dept
# is NULL for some rows; emp rows of departments that do not exist), children filtered
QUERIES = [
    "SELECT d.id, count(e.id) FROM dept d LEFT JOIN emp e ON e.dept = d.id "
    "GROUP BY d.id ORDER BY d.id",
    "SELECT d.region, count(*), count(e.id), count(e.bonus) FROM dept d "
    "LEFT JOIN emp e ON e.dept = d.id GROUP BY d.region ORDER BY d.region NULLS FIRST",
    "SELECT d.budget, count(*) FROM dept d LEFT JOIN emp e ON d.id = e.dept "
    "AND e.salary > 100 AND e.active GROUP BY d.budget ORDER BY 1 NULLS FIRST",
    "SELECT e.id, count(d.id) FROM emp e LEFT JOIN dept d ON d.id = e.dept "
    "GROUP BY e.id ORDER BY e.id",
    # Q13's shape: the counts regrouped by the client
    "SELECT n, count(*) AS m FROM (SELECT d.id, count(e.id) AS n FROM dept d "
    "LEFT JOIN emp e ON e.dept = d.id AND e.bonus > 0 GROUP BY d.id) x "
    "GROUP BY n ORDER BY m DESC, n DESC",
    # split (upper() is the client's): the counting SELECT aggregated on the server
    "SELECT upper(d.dname), count(e.id) FROM dept d LEFT JOIN emp e ON e.dept = d.id "
    "GROUP BY d.dname ORDER BY 1, 2",
]


@pytest.fixture(scope="module")
def pair(new_database: Any, master_key: MasterKey) -> Iterator[Pair]:
    yield from _pair(new_database, master_key)


@pytest.fixture(scope="module")
def icu_pair(new_database: Any, master_key: MasterKey) -> Iterator[Pair]:
    yield from _pair(new_database, master_key, locale=ICU)


@pytest.mark.parametrize("sql", QUERIES)
def test_equal_to_plain(pair: Pair, sql: str) -> None:
    pair.check(sql)


@pytest.mark.parametrize("sql", QUERIES)
def test_equal_to_plain_under_icu(icu_pair: Pair, sql: str) -> None:
    icu_pair.check(sql)


def test_the_server_counts_before_it_joins(pair: Pair) -> None:
    from adaptive_client.compile.statements import compile_statement

    sql = QUERIES[0]
    pair.check(sql)  # (peels what the statement needs)
    plan = compile_statement(pair.enc.catalog, sqlglot.parse_one(sql, read="postgres"))
    assert "LEFT JOIN (SELECT" in plan.sql and "COUNT(*)" not in plan.sql, plan.sql
