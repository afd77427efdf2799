"""A VALUES list used as a query (compile/values_lists.py), judged against PostgreSQL:
in FROM with and without column aliases, joined, in a CTE, after IN, as a statement of
its own with ORDER BY, in INSERT ... SELECT, and rows of different lengths (42601).
The client's engine refused VALUES."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, outcome, plain_and_encrypted, script_differences
from .test_engine_gaps import ICU

SCRIPT = [
    "CREATE TABLE m (id serial PRIMARY KEY, a integer, b text)",
    "INSERT INTO m (a, b) VALUES (1, 'x'), (2, 'y'), (3, 'z')",
    "SELECT * FROM (SELECT 1 AS x, 'a' AS y UNION ALL SELECT 2, 'b') AS v JOIN m ON m.a = v.x ORDER BY x",
    "SELECT m.b FROM m JOIN (SELECT 1 AS x UNION ALL SELECT 3) v ON m.a = v.x ORDER BY 1",
    "WITH v(x, y) AS (VALUES (1, 'a'), (2, 'b')) SELECT * FROM v JOIN m ON m.a = v.x ORDER BY x",
    "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS v(x, y) ORDER BY x DESC",
    "SELECT b FROM m WHERE (a, b) IN (VALUES (1, 'x'), (3, 'q')) ORDER BY 1",
    "SELECT b FROM m WHERE a IN (VALUES (1), (3)) ORDER BY 1\n\nVALUES (1, 'a'), (2, 'b') ORDER BY 1 DESC",
    "VALUES (1, 2), (3)",
    "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) AS v(x) ORDER BY 1",
    "SELECT count(*), sum(column1) FROM (VALUES (1), (2), (3)) AS t",
    "SELECT m.b, v.w FROM m JOIN (VALUES (1, 10), (2, 20)) AS v(k, w) ON v.k = m.a WHERE v.w > 10",
    "INSERT INTO m (a, b) SELECT x, y FROM (VALUES (7, 'q'), (8, 'r')) AS v(x, y)",
    "SELECT a, b FROM m WHERE a > 6 ORDER BY a",
    "SELECT * FROM (VALUES ('x'), ('y')) AS v(name) WHERE name IN (SELECT b FROM m) ORDER BY 1",
]


@pytest.fixture(params=["", ICU], ids=["C", "ICU"])
def pair(
    request: pytest.FixtureRequest, new_database: Callable[..., str], master_key: MasterKey
) -> Iterator[Pair]:
    with plain_and_encrypted(
        new_database, master_key, "values_lists", {}, [], {}, locale=request.param
    ) as pair:
        yield pair


def test_values_lists_as_in_postgresql(pair: Pair) -> None:
    assert script_differences(pair, SCRIPT) == []


def test_a_long_values_list(pair: Pair) -> None:
    plain, enc = pair
    rows = ", ".join(f"({i}, 'v{i}')" for i in range(300))
    sql = f"SELECT count(*), max(x), min(y) FROM (VALUES {rows}) AS v(x, y)"
    assert outcome(enc, sql) == outcome(plain, sql)
