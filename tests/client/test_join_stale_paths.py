"""COPY and server-side cursors from a client whose metadata predates a join adjustment.

A join adjustment renames the column it re-keys (joins.py), so a statement compiled from
older metadata names a column that no longer exists.  ``execute()`` reloads the catalog
and runs the statement again; ``cursor.copy()`` and named cursors do the same: the rows
land under the new key (the join afterwards counts them), the stream reads the re-keyed
column.  Inside a transaction that had already read the old layers, COPY is refused as
stale (retryable), as ``execute()`` is.

The stale client is made so by ignoring the adjustment's notification (as if it had not
arrived yet): its cached metadata still names the old column.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

import adaptive_client
from adaptive_client.catalog.onions import Onion
from adaptive_client.dbapi.cursor import NamedCursor
from adaptive_client.errors import StaleMetadata

ROWS = [(i, i % 5, i % 7, i % 3) for i in range(40)]


def _setup(new_database: Any, master_key: Any) -> tuple[str, adaptive_client.Connection]:
    dsn = new_database("jstalepaths")
    adjuster = adaptive_client.connect(dsn, master_key=master_key, autocommit=True)
    for name in ("a", "b"):
        adjuster.execute(f"CREATE TABLE {name} (id integer, k0 integer, k1 integer, k2 integer)")
        adjuster.cursor().executemany(f"INSERT INTO {name} VALUES (%s, %s, %s, %s)", ROWS)
    adjuster.execute("CREATE TABLE other (id integer)")
    return dsn, adjuster


def _stale(dsn: str, master_key: Any, *, autocommit: bool) -> adaptive_client.Connection:
    conn = adaptive_client.connect(dsn, master_key=master_key, autocommit=autocommit)
    for name in ("a", "b", "other"):
        conn.execute(f"SELECT count(*) FROM {name}").fetchall()  # metadata cached
    if not autocommit:
        conn.commit()
    conn.refresh_catalog = lambda: None  # type: ignore[method-assign]
    return conn


def _adjust(adjuster: adaptive_client.Connection, k: str) -> str:
    """Join a.k = b.k (re-keying one side); the moved side's current Eq column name."""
    adjuster.execute(f"SELECT count(*) FROM a JOIN b ON a.{k} = b.{k}").fetchall()
    moved = [
        t
        for t in ("a", "b")
        if adjuster.catalog.table(t).column(k).onions[Onion.EQ].adjustments[-1]["moved"]
    ]
    assert len(moved) == 1
    return moved[0]


def _join_count(conn: adaptive_client.Connection, k: str) -> int:
    row = conn.execute(f"SELECT count(*) FROM a JOIN b ON a.{k} = b.{k}").fetchone()
    assert row is not None
    return int(row[0])


def _expected(a: Sequence[tuple[int, ...]], b: Sequence[tuple[int, ...]], j: int) -> int:
    return sum(1 for x in a for y in b if x[j] is not None and x[j] == y[j])


@pytest.mark.parametrize("autocommit", [True, False])
def test_copy_from_a_stale_client_retries(
    new_database: Any, master_key: Any, autocommit: bool
) -> None:
    dsn, adjuster = _setup(new_database, master_key)
    stale = _stale(dsn, master_key, autocommit=autocommit)
    try:
        moved = _adjust(adjuster, "k0")
        before = stale.catalog.table(moved).column("k0").onions[Onion.EQ].anon
        extra = [(100 + i, i % 5, 0, 0) for i in range(10)]
        with stale.cursor().copy(f"COPY {moved} FROM STDIN") as copy:
            for r in extra:
                copy.write_row(r)
        if not autocommit:
            stale.commit()
        # the COPY ran against the reloaded metadata: the renamed column
        assert stale.catalog.table(moved).column("k0").onions[Onion.EQ].anon != before
        a = ROWS + (extra if moved == "a" else [])
        b = ROWS + (extra if moved == "b" else [])
        assert _join_count(adjuster, "k0") == _expected(a, b, 1)
        got = adjuster.execute(f"SELECT id, k0 FROM {moved} WHERE id >= 100").fetchall()
        assert sorted(got) == [(r[0], r[1]) for r in extra]
    finally:
        stale.close()
        adjuster.close()


def test_copy_in_a_transaction_that_read_the_old_layers_is_stale(
    new_database: Any, master_key: Any
) -> None:
    dsn, adjuster = _setup(new_database, master_key)
    stale = _stale(dsn, master_key, autocommit=False)
    try:
        # a transaction open, holding no lock on the tables the join re-keys
        stale.execute("SELECT count(*) FROM other").fetchall()
        moved = _adjust(adjuster, "k1")
        row = (500, 1, 1, 1)
        with pytest.raises(StaleMetadata), stale.cursor().copy(f"COPY {moved} FROM STDIN") as cp:
            cp.write_row(row)
        stale.rollback()
        with stale.cursor().copy(f"COPY {moved} FROM STDIN") as copy:
            copy.write_row(row)
        stale.commit()
        a = ROWS + ([row] if moved == "a" else [])
        b = ROWS + ([row] if moved == "b" else [])
        assert _join_count(adjuster, "k1") == _expected(a, b, 2)
    finally:
        stale.close()
        adjuster.close()


def test_named_cursor_of_a_stale_client_retries(new_database: Any, master_key: Any) -> None:
    dsn, adjuster = _setup(new_database, master_key)
    stale = _stale(dsn, master_key, autocommit=False)
    try:
        moved = _adjust(adjuster, "k2")
        cur = stale.cursor("stream")
        assert isinstance(cur, NamedCursor)
        cur.execute(f"SELECT id, k2 FROM {moved} WHERE k2 = %s", (2,))
        assert cur._declared is not None  # streamed from a server-side cursor
        got = sorted(cur.fetchall())
        assert got == [(r[0], r[3]) for r in ROWS if r[3] == 2]
        stale.commit()
    finally:
        stale.close()
        adjuster.close()
