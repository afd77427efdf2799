"""Integers' bitwise operators (``&``, ``|``, ``#``, ``~``, ``<<``, ``>>``) finished by
the client engine, judged against PostgreSQL: the type of the wider operand (a shift's,
its left operand's), and a shift as PostgreSQL's C computes it -- the count modulo the
bits, the result wrapped, a smallint's truncated to 16 bits, a right shift keeping the
sign (``1 << 40`` is 256 for an integer).  They were refused."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted, script_differences

DDL = ["CREATE TABLE b (id int PRIMARY KEY, s smallint, n int, m bigint)"]
ROWS = {
    "b": [
        (1, 16384, 1073741824, 4611686018427387904),
        (2, -1, -1, -1),
        (3, None, 7, None),
        (4, 3, 3, 3),
    ]
}
SCRIPT = [
    "SELECT 1 << 2, 256 >> 3, 5 & 3, 5 | 3, 5 # 3, ~5, 1 << 40, -8 >> 1",
    "SELECT id, s << 1, s << 17, s >> 1, ~s, s & n, s | m, s # n FROM b ORDER BY id",
    "SELECT id, n << 1, n << 33, n << -1, n >> 40, m << 1, m << 65, m >> 63, ~m FROM b ORDER BY id",
    "SELECT 1::bigint << 63, (-1)::smallint >> 20, 5 # 3 # 1, ~0",
    "SELECT id FROM b WHERE n & 1 = 1 AND n << 1 > 5 ORDER BY id",
    "SELECT sum(n & 3) FROM b",
    "SELECT id, n # NULL, NULL & n, n << NULL, m | NULL FROM b ORDER BY id",
    "UPDATE b SET n = n << 1 WHERE id = 4 RETURNING n",
]


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "bitwise", {}, DDL, ROWS) as pair:
        yield pair


def test_bitwise_as_postgresql(pair: Pair) -> None:
    assert script_differences(pair, SCRIPT) == []


@pytest.mark.parametrize(
    ("sql", "params"),
    [
        ("SELECT id, n & %s, m | %s, n # %s FROM b ORDER BY id", (56, 1, 3)),
        ("SELECT id, n << %s, m >> %s FROM b ORDER BY id", (2, 1)),
        ("UPDATE b SET n = (b.n & %s) WHERE id < 3 RETURNING id, n", (56,)),
    ],
)
def test_bitwise_with_parameters(pair: Pair, sql: str, params: tuple[int, ...]) -> None:
    """A parameter beside an integer takes that integer's type, as PostgreSQL infers
    it (a shift's count: integer)."""
    plain, enc = pair
    assert enc.execute(sql, params).fetchall() == plain.execute(sql, params).fetchall()
