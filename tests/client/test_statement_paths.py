"""The statement paths give one answer: a statement's first run (the dispatcher) and its
repeats (dbapi/repeats.py), with results opened by the compiled layer and by the Python
path alone (``connect(native=False)``), all equal to PostgreSQL's.

The differential suite's statements (tests/client/queries.py) run twice each on two
connections to one encrypted database -- one opening results natively, one in Python --
and once on the plain database: every run's rows equal, its description's types equal,
and the statistics count the same decryptions either way.  Then the writes
(``dml()``) run through both, repeated with other values, and the tables read back equal
plain PostgreSQL's.  Then the repeats are shown to follow the catalog: a peel made by
another connection, and DDL, are picked up by a statement already repeated.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.errors import AdaptiveError
from adaptive_client.schemes import native

from .queries import Q, client_aggregates, dml, queries
from .schema import CONFIG, DDL, dept_rows, emp_rows
from .test_differential import INSERT_DEPT, INSERT_EMP, _rows

Trio = tuple[psycopg.Connection[Any], adaptive_client.Connection, adaptive_client.Connection]


@pytest.fixture(scope="module")
def trio(new_database: Any, master_key: Any) -> Iterator[Trio]:
    plain = psycopg.connect(new_database("paths_plain"), autocommit=True)
    enc_dsn = new_database("paths_enc")
    fast = adaptive_client.connect(enc_dsn, master_key=master_key, config=CONFIG, autocommit=True)
    slow = adaptive_client.connect(
        enc_dsn, master_key=master_key, config=CONFIG, autocommit=True, native=False
    )
    for stmt in DDL:
        plain.execute(stmt)
        fast.execute(stmt)
    with plain.cursor() as cur:
        cur.executemany(INSERT_DEPT, dept_rows())
        cur.executemany(INSERT_EMP, emp_rows())
    with fast.transaction():
        cur = fast.cursor()
        cur.executemany(INSERT_DEPT, dept_rows())
        cur.executemany(INSERT_EMP, emp_rows())
    try:
        yield plain, fast, slow
    finally:
        plain.close()
        fast.close()
        slow.close()


def _run(conn: Any, q: Q) -> tuple[list[Any], list[int]]:
    cur = conn.execute(q.sql, q.params or None)
    types = [d[1] for d in cur.description or []]
    return _rows(cur.fetchall(), q.ordered), types


def test_the_compiled_layer_is_in_use(trio: Trio) -> None:
    if native.PURE_PYTHON:
        pytest.skip("ADAPTIVE_PURE_PYTHON: the Python path alone")
    pytest.importorskip("adaptive_client.adaptive_rnd_native")
    _, fast, slow = trio
    q = "SELECT name, salary, hired, active FROM emp WHERE id = %s"
    for conn in (fast, slow):
        for i in (1, 2, 3):
            conn.execute(q, (i,)).fetchall()
    assert q in fast.repeats and q in slow.repeats
    assert fast.repeats[q].opener is not None  # type: ignore[attr-defined]
    assert slow.repeats[q].opener is None  # type: ignore[attr-defined]


def test_first_runs_and_repeats_match_plain_both_ways(trio: Trio) -> None:
    plain, fast, slow = trio
    mismatches = []
    for q in queries() + client_aggregates():
        expected, types = _run(plain, q)
        for name, conn in (("native", fast), ("python", slow)):
            for run in range(2):  # (its first run, then a repeat)
                try:
                    got, got_types = _run(conn, q)
                except (AdaptiveError, psycopg.Error) as exc:
                    mismatches.append((q.sql, name, run, f"{type(exc).__name__}: {exc}"))
                    break
                if got != expected:
                    mismatches.append((q.sql, name, run, f"{got[:3]} != {expected[:3]}"))
                elif got_types != types:
                    mismatches.append((q.sql, name, run, f"types {got_types} != {types}"))
    assert not mismatches, "\n".join(map(str, mismatches))


def test_both_ways_count_the_same_decryptions(trio: Trio) -> None:
    _, fast, slow = trio
    q = Q("SELECT name, salary, hired, active, dept FROM emp WHERE id < %s", (400,))
    counts = []
    for conn in (fast, slow):
        _run(conn, q)  # (peels, compiles: not counted)
        conn.stats.reset()
        for _ in range(3):
            _run(conn, q)
        counts.append(dict(conn.stats.decryptions))
    assert counts[0] == counts[1] and counts[0].get("DET", 0) > 0


def test_writes_repeated_match_plain(trio: Trio) -> None:
    plain, fast, slow = trio
    for q in dml():
        plain.execute(q.sql, q.params or None)
        fast.execute(q.sql, q.params or None)
    # the same single-row statements again with other values, half through each
    insert = "INSERT INTO dept (id, dname, budget, region) VALUES (%s, %s, %s, %s)"
    update = "UPDATE dept SET budget = %s WHERE id = %s"
    increment = "UPDATE dept SET budget = budget + %s WHERE id = %s"  # (read, computed, written)
    delete = "DELETE FROM dept WHERE id = %s"
    for i in range(900, 940):
        conn = fast if i % 2 else slow
        row = (i, f"d{i}", i * 10, "north" if i % 3 else None)
        for c in (plain, conn):
            c.execute(insert, row)
            c.execute(update, (i * 7, i))
            c.execute(increment, (i % 4, i))
            if i % 5 == 0:
                c.execute(delete, (i,))
    for table in ("emp", "dept"):
        q = Q(f"SELECT * FROM {table} ORDER BY id", (), True)
        expected, _ = _run(plain, q)
        assert _run(fast, q)[0] == expected
        assert _run(slow, q)[0] == expected


def test_repeats_follow_another_connections_peel_and_ddl(
    new_database: Any, master_key: Any
) -> None:
    dsn = new_database("paths_follow")
    a = adaptive_client.connect(dsn, master_key=master_key, autocommit=True)
    b = adaptive_client.connect(dsn, master_key=master_key, autocommit=True)
    try:
        a.execute("CREATE TABLE t (id integer PRIMARY KEY, v integer, w text)")
        a.cursor().executemany(
            "INSERT INTO t VALUES (%s, %s, %s)", [(i, i % 5, f"w{i}") for i in range(50)]
        )
        q = "SELECT id, v FROM t WHERE id = %s"
        for i in range(5):
            assert a.execute(q, (i,)).fetchall() == [(i, i % 5)]
        assert q in a.repeats
        # another connection's peel (v's Ord onion to OPE) and a new column
        b.execute("SELECT id FROM t WHERE v > %s ORDER BY v, id", (2,)).fetchall()
        b.execute("ALTER TABLE t ADD COLUMN z integer DEFAULT 9")
        for i in range(5):
            assert a.execute(q, (i,)).fetchall() == [(i, i % 5)]
        # ... and made again for the new catalog, not left to the dispatcher from then on
        assert a.repeats[q].current(a)  # type: ignore[attr-defined]
        assert a.execute("SELECT id, z FROM t WHERE id = %s", (3,)).fetchall() == [(3, 9)]
        # DDL on this connection drops the repeats made before it
        a.execute("ALTER TABLE t DROP COLUMN w")
        assert q not in a.repeats
        assert a.execute(q, (4,)).fetchall() == [(4, 4)]
    finally:
        a.close()
        b.close()
