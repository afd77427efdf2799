"""A result opened by the compiled layer straight from libpq's ``PGresult``
(``RowOpener.open_result``, dbapi/libpq.py) gives the rows the Python path gives and
plain PostgreSQL gives, opened a range of rows at a time: NULLs, values the compiled opener leaves to the general path
(NaN, the infinities, BC dates and years past 9999, long text under AES-SIV), arrays,
a result of one row and of many.  Where libpq's functions cannot be found, the rows are
loaded by psycopg and opened as before."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.compile import plan
from adaptive_client.dbapi import cursor as cursor_module
from adaptive_client.dbapi import libpq

pytest.importorskip("adaptive_client.adaptive_rnd_native")

DDL = (
    "CREATE TABLE r (id integer PRIMARY KEY, n bigint, t text, v varchar(12), "
    "m numeric(12,3), f double precision, d date, b boolean, a integer[])"
)
SPECIAL = [
    "(1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
    "(2, -9223372036854775808, '', 'x', 'NaN', 'NaN', 'infinity', true, '{1,NULL,3}')",
    "(3, 9223372036854775807, repeat('long text ', 20), 'Zoë', -123456789.125, "
    "'-Infinity', '-infinity', false, '{}')",
    "(4, 0, 'tab\tand\nnewline', 'é', 0.001, 1e300, '0044-03-15 BC', NULL, '{-7}')",
    "(5, 42, 'x', 'y', 1.5, -0.0, '10000-01-01', true, NULL)",
    "(900, 1, 'z', 'z', 'NaN', 1.0, '2020-01-01', true, NULL)",  # (in a later range)
]
# (query, opened in libpq: a double precision or an array column is opened by the Python
# path, and so is then the whole result)
QUERIES = [
    ("SELECT n, t, v, m, b FROM r ORDER BY id", True),
    ("SELECT n, t, v, m, f, b FROM r ORDER BY id", False),
    ("SELECT * FROM r WHERE id = 1 OR id > 5 ORDER BY id", False),
    ("SELECT t FROM r WHERE id = 3", True),
    ("SELECT id, v, m, d FROM r WHERE id > 5 ORDER BY id", True),
    ("SELECT id, v, a FROM r WHERE id > 5 ORDER BY id", False),
]


@pytest.fixture()
def dbs(new_database: Any, master_key: Any) -> Iterator[tuple[Any, Any, Any]]:
    plain = psycopg.connect(new_database("orplain"), autocommit=True)
    dsn = new_database("orenc")
    enc = adaptive_client.connect(dsn, master_key=master_key, autocommit=True)
    python = adaptive_client.connect(dsn, master_key=master_key, autocommit=True, native=False)
    many = ", ".join(
        f"({i}, {i * 7919 - 50000}, 'row {i}', 'v{i % 13}', {i}.{i % 1000:03d}, {i / 7}, "
        f"DATE '2020-01-01' + {i % 400}, {'true' if i % 2 else 'false'}, '{{{i},{i + 1}}}')"
        for i in range(6, 806)
    )
    for conn in (plain, enc):
        conn.execute(DDL)
        conn.execute("INSERT INTO r VALUES " + ", ".join(SPECIAL))
        conn.execute("INSERT INTO r VALUES " + many)
    yield plain, enc, python
    for conn in (plain, enc, python):
        conn.close()


@pytest.fixture(autouse=True)
def small_ranges(monkeypatch: pytest.MonkeyPatch) -> None:
    """A result opened seven rows at a time: the ranges, and the rows left to the general
    path in a later range, are exercised on a small table."""
    monkeypatch.setattr(plan, "OPENED_AT_ONCE", 7)


def _typed(rows: list[Any]) -> list[Any]:
    return [tuple((type(v).__name__, repr(v)) for v in r) for r in rows]


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    original = plan.ResultOpener.__call__

    def counting(self: plan.ResultOpener, result: Any) -> Any:
        calls.append(1)
        return original(self, result)

    monkeypatch.setattr(plan.ResultOpener, "__call__", counting)
    return calls


@pytest.mark.parametrize(("query", "in_libpq"), QUERIES)
def test_rows_opened_in_libpq_equal_the_python_path_and_plain(
    dbs: tuple[Any, Any, Any], query: str, in_libpq: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain, enc, python = dbs
    assert libpq.result_functions() is not None  # (psycopg's binary wheel: its libpq)
    calls = _counted(monkeypatch)
    expected = _typed(plain.execute(query).fetchall())
    # (run directly once psycopg has prepared it, after its prepare_threshold runs)
    for _ in range(12):
        assert _typed(enc.execute(query).fetchall()) == expected
    assert bool(calls) is in_libpq
    assert _typed(python.execute(query).fetchall()) == expected


@pytest.mark.parametrize("query", ["SELECT d FROM r ORDER BY id", "SELECT d FROM r WHERE id = 4"])
def test_dates_python_cannot_hold_raise_as_psycopg_does(
    dbs: tuple[Any, Any, Any], query: str
) -> None:
    """(infinity, BC and year 10000 are left by the compiled opener to the general
    path, which raises psycopg's error for them)"""
    plain, enc, _ = dbs
    with pytest.raises(psycopg.DataError) as expected:
        plain.execute(query).fetchall()
    for _ in range(12):
        with pytest.raises(psycopg.DataError) as got:
            enc.execute(query).fetchall()
        assert type(got.value) is type(expected.value)


def test_without_libpq_functions_rows_are_loaded_by_psycopg(
    dbs: tuple[Any, Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    plain, enc, _ = dbs
    calls = _counted(monkeypatch)
    monkeypatch.setattr(cursor_module, "result_functions", lambda: None)
    query = QUERIES[0][0]
    expected = _typed(plain.execute(query).fetchall())
    for _ in range(12):
        assert _typed(enc.execute(query).fetchall()) == expected
    assert not calls


def test_the_loaded_libpq_is_psycopgs() -> None:
    """The functions are found in the libpq psycopg runs on, not loaded anew."""
    assert libpq._loaded_libpq("python") is None
    path = libpq._loaded_libpq(psycopg.pq.__impl__)
    if psycopg.pq.__impl__ == "binary":
        assert path is not None and "psycopg_binary" in path
