"""``generate_series`` over integers, in a select list and in FROM (alone, beside a
table, lateral over its columns, joined, with ORDINALITY, in ``INSERT ... SELECT``),
finished by the client engine and judged against PostgreSQL: rows, names, types (int4
for integers, int8 where a bounds is bigint), NULL bounds (no rows) and the errors (a
step of zero: 22023).  It was refused wherever it appeared."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, outcome, plain_and_encrypted, script_differences

DDL = ["CREATE TABLE t (id int PRIMARY KEY, v text, n bigint)"]
ROWS = {"t": [(1, "a", 2), (2, "b", None), (3, "c", 5000000000)]}
SCRIPT = [
    "SELECT generate_series(1, 3)",
    "SELECT generate_series(5, 1, -2)",
    "SELECT generate_series(1, 10, 0)",
    "SELECT generate_series(3, 1)",
    "SELECT generate_series(1, NULL)",
    "SELECT generate_series(1::bigint, 3)",
    "SELECT generate_series(4999999999, 5000000001)",
    "SELECT generate_series(2147483640, 2147483647, 5)",
    "SELECT generate_series(1, 2) AS a, generate_series(1, 3) AS b",
    "SELECT i, i * 2 AS d FROM generate_series(1, 5) AS i WHERE i % 2 = 1 ORDER BY i DESC",
    "SELECT s.x FROM generate_series(1, 3) AS s(x)",
    "SELECT * FROM generate_series(1, 3)",
    "SELECT * FROM generate_series(1, 3) g",
    "SELECT * FROM generate_series(1, 4) WITH ORDINALITY AS o(v, n)",
    "SELECT t.v, i FROM t, generate_series(1, t.id) AS i ORDER BY 1, 2",
    "SELECT t.v, i FROM t CROSS JOIN LATERAL generate_series(1, t.id) AS i ORDER BY 1, 2",
    "SELECT t.v, g FROM t, generate_series(1, t.n) g WHERE t.id < 3 ORDER BY 1, 2",
    "SELECT t.id, g FROM t JOIN generate_series(1, 2) g ON g = t.id ORDER BY 1",
    "SELECT t.v, count(i) FROM t LEFT JOIN generate_series(2, 3) i ON i = t.id "
    "GROUP BY t.v ORDER BY 1",
    "SELECT count(*), sum(i), max(i) FROM generate_series(1, 1000) i",
    "SELECT i FROM generate_series(1, 3) i WHERE i IN (SELECT id FROM t) ORDER BY 1",
    "SELECT (SELECT count(*) FROM generate_series(1, t.id)) FROM t ORDER BY id",
    "SELECT v FROM t WHERE id = ANY (SELECT generate_series(1, 2)) ORDER BY 1",
    "SELECT date '2024-01-01' + i FROM generate_series(0, 2) i",
    "INSERT INTO t SELECT i, 'v' || i, i * 10 FROM generate_series(10, 14) i",
    "INSERT INTO t (id, v) SELECT g, NULL FROM generate_series(20, 22) AS g RETURNING id",
    "SELECT * FROM t ORDER BY id",
]


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "series", {}, DDL, ROWS) as pair:
        yield pair


def test_generate_series_as_postgresql(pair: Pair) -> None:
    typed = script_differences(pair, SCRIPT, describe=lambda d: (d.name, d.type_code))
    assert typed == []


@pytest.mark.parametrize(
    ("sql", "params"),
    [
        ("SELECT i FROM generate_series(1, %s) i ORDER BY i", (4,)),
        ("SELECT generate_series(%s, %s, %s)", (10, 1, -3)),
        ("SELECT t.v, i FROM t, generate_series(t.id, %s) i ORDER BY 1, 2", (2,)),
    ],
)
def test_generate_series_with_parameters(pair: Pair, sql: str, params: tuple[int, ...]) -> None:
    plain, enc = pair
    assert outcome(enc, sql, params) == outcome(plain, sql, params)
