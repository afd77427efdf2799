"""Read-modify-write arithmetic judged by PostgreSQL: ``UPDATE t SET x = x + %s`` over
encrypted columns is computed by the client (the server holds only ciphertexts), and
must store what PostgreSQL stores and raise what it raises -- at each integer type's
edge (the result type widened by a parameter's, the stored type narrower), with NULLs,
with numeric infinities and NaN (``Infinity + -Infinity`` and ``Infinity * 0`` are NaN
in PostgreSQL, not an error).  Each statement runs on a plain database with psycopg and
through the client, in autocommit mode, on databases of the C and of an ICU collation;
the SQLSTATE of an error, or the table read back afterwards, must be equal."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import psycopg
import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted
from .test_engine_gaps import ICU

I_MAX, S_MAX, B_MAX = 2**31 - 1, 2**15 - 1, 2**63 - 1
INF, NAN = Decimal("Infinity"), Decimal("NaN")

DDL = ["CREATE TABLE acc (id integer PRIMARY KEY, n numeric, c integer, s smallint, b bigint)"]
ROWS = {
    "acc": [
        (1, Decimal("1.50"), 1, 1, 1),
        (2, INF, I_MAX, S_MAX, B_MAX),
        (3, -INF, -I_MAX - 1, -S_MAX - 1, -B_MAX - 1),
        (4, NAN, None, 0, None),
        (5, None, 0, None, 0),
    ]
}

SET = "UPDATE acc SET {} WHERE id = %s"
STATEMENTS: list[tuple[str, tuple[Any, ...]]] = [
    # integers: within the type, at its edge, past it (the result's type and the column's)
    (SET.format("c = c + %s"), (5, 1)),
    (SET.format("c = c + %s"), (1, 2)),
    (SET.format("c = c - %s"), (1, 3)),
    (SET.format("c = c + 1, s = s + 1"), (2,)),
    (SET.format("s = s + %s"), (1, 2)),
    (SET.format("s = s - 1"), (3,)),
    (SET.format("c = c + %s"), (2**40, 1)),
    (SET.format("c = c - %s"), (-(2**40), 5)),
    (SET.format("b = b + 1"), (2,)),
    (SET.format("b = b - %s"), (1, 3)),
    (SET.format("b = b + %s"), (-(2**62), 2)),
    (SET.format("c = c + %s"), (None, 1)),
    (SET.format("c = c + %s, b = b - %s"), (7, 7, 4)),
    (SET.format("c = c + %s"), (Decimal("1.5"), 1)),
    (SET.format("c = c + %s"), (2.5, 1)),
    (SET.format("c = c + %s"), (True, 1)),
    # numerics: scales kept, infinities, NaN
    (SET.format("n = n + %s"), (Decimal("0.005"), 1)),
    (SET.format("n = n - %s"), (3, 1)),
    (SET.format("n = n * %s"), (Decimal("2.5"), 1)),
    (SET.format("n = n + %s"), (Decimal("-Infinity"), 2)),
    (SET.format("n = n * 0"), (3,)),
    (SET.format("n = n + %s"), (Decimal("1"), 4)),
    (SET.format("n = n - %s"), (INF, 5)),
    (SET.format("n = n + 1"), (3,)),
]


@pytest.fixture(scope="module", params=["", ICU], ids=["C", "ICU"])
def pair(
    request: pytest.FixtureRequest, new_database: Callable[..., str], master_key: MasterKey
) -> Iterator[Pair]:
    config: dict[str, Any] = {"defaults": {"sum": False, "search": False}}
    with plain_and_encrypted(
        new_database, master_key, "rmwarith", config, DDL, ROWS, locale=request.param
    ) as both:
        yield both


def _outcome(conn: Any, sql: str, params: tuple[Any, ...]) -> Any:
    try:
        conn.execute(sql, params)
    except psycopg.Error as exc:
        return ("error", exc.sqlstate)
    rows = conn.execute("SELECT id, n, c, s, b FROM acc ORDER BY id").fetchall()
    # (numerics as PostgreSQL prints them: NaN equals NaN, the scale shows)
    return ("rows", [(i, None if n is None else str(n), *rest) for i, n, *rest in rows])


def test_read_modify_writes_store_what_postgresql_stores(pair: Pair) -> None:
    plain, enc = pair
    for sql, params in STATEMENTS:
        expected = _outcome(plain, sql, params)
        got = _outcome(enc, sql, params)
        assert got == expected, f"{sql} {params}: PostgreSQL {expected}, the client {got}"
    # (the statements reached the outcomes they are for: stored NaNs among them)
    final = _outcome(plain, "SELECT 1", ())
    assert [r[1] for r in final[1]][1:4] == ["NaN", "NaN", "NaN"]
