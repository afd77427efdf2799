"""Several clients, stale caches, transactions: correctness rules 2 and 4 of the design."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.errors import PeelConflict, RetryableError, StaleMetadata, StaleSnapshot


@pytest.fixture()
def two(new_database: Any, master_key: Any) -> Iterator[tuple[Any, Any, str]]:
    dsn = new_database("conc")
    a = adaptive_client.connect(dsn, master_key=master_key, autocommit=True)
    a.execute("CREATE TABLE t (id integer PRIMARY KEY, x integer, y text)")
    a.execute("INSERT INTO t VALUES (1, 10, 'one'), (2, 20, 'two'), (3, 30, 'three')")
    b = adaptive_client.connect(dsn, master_key=master_key, autocommit=True)
    b.control.execute("UNLISTEN *")  # B never hears of A's peels: its cache goes stale
    yield a, b, dsn
    a.close()
    b.close()


def _layer(dsn: str, column_suffix: str) -> list[str]:
    with psycopg.connect(dsn) as c:
        return [
            r[0]
            for r in c.execute(
                "SELECT layer FROM adaptive.layers WHERE anon_column LIKE %s",
                (f"%{column_suffix}",),
            )
        ]


def test_stale_reader_gets_right_answers(two: tuple[Any, Any, str]) -> None:
    a, b, _ = two
    b_x = b.catalog.table("t").column("x").onions
    assert a.execute("SELECT id FROM t WHERE x = 20").fetchall() == [(2,)]  # A peels Eq(x)
    assert next(iter(b_x.values())).layer == "RND"  # B still believes RND
    assert b.execute("SELECT x FROM t ORDER BY id").fetchall() == [(10,), (20,), (30,)]
    assert b.execute("SELECT id FROM t WHERE x = 30").fetchall() == [(3,)]


def test_stale_writer_never_writes_the_old_layer(two: tuple[Any, Any, str]) -> None:
    a, b, dsn = two
    b.execute("SELECT 1 FROM t WHERE id = 1")  # B's catalog is loaded (x at RND)
    a.execute("SELECT id FROM t WHERE x = 20")  # A peels Eq(x) to DET
    before = b.stats.retries
    b.execute("INSERT INTO t VALUES (4, 40, 'four')")  # stale: refused by the layer check, retried
    assert b.stats.retries == before + 1
    assert a.execute("SELECT id FROM t WHERE x = 40").fetchall() == [(4,)]
    with psycopg.connect(dsn) as raw:
        meta = a.catalog.table("t")
        eq = meta.column("x").onions
        anon = next(o.anon for o in eq.values() if o.anon.endswith("_eq"))
        tags = raw.execute(f'SELECT DISTINCT get_byte("{anon}", 0) FROM "{meta.anon}"').fetchall()
    assert tags == [(2,)]


def test_stale_writer_in_a_transaction_gets_a_retryable_error(two: tuple[Any, Any, str]) -> None:
    a, b, _ = two
    b.execute("SELECT 1 FROM t WHERE id = 1")
    a.execute("SELECT id FROM t WHERE x = 20")
    b.autocommit = False
    with pytest.raises(StaleMetadata) as info:
        b.execute("INSERT INTO t VALUES (5, 50, 'five')")
    assert isinstance(info.value, RetryableError) and info.value.sqlstate == "40001"
    b.rollback()
    b.execute("INSERT INTO t VALUES (5, 50, 'five')")  # the retry works
    b.commit()
    assert a.execute("SELECT y FROM t WHERE x = 50").fetchall() == [("five",)]


def test_repeatable_read_snapshot_before_a_peel_is_retryable(two: tuple[Any, Any, str]) -> None:
    a, b, _ = two
    b.autocommit = False
    b.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
    assert b.execute("SELECT COUNT(*) FROM t").fetchone() == (3,)  # snapshot taken
    a.execute("INSERT INTO t VALUES (6, 60, 'six')")
    with pytest.raises((StaleSnapshot, PeelConflict)):
        b.execute("SELECT id FROM t WHERE x > 15")  # needs Ord(x) at OPE: a peel
    b.rollback()
    rows = b.execute("SELECT id FROM t WHERE x > 15 ORDER BY id").fetchall()
    assert rows == [(2,), (3,), (6,)]
    b.commit()


def test_read_committed_transaction_peels_inside_and_rolls_back_cleanly(
    two: tuple[Any, Any, str],
) -> None:
    a, _, dsn = two
    a.autocommit = False
    a.execute("UPDATE t SET y = 'uno' WHERE id = 1")  # holds a lock on t
    assert a.execute("SELECT id FROM t WHERE y = 'uno'").fetchall() == [(1,)]  # peels inside
    a.rollback()  # the peel goes with the transaction
    assert "RND" in _layer(dsn, "_eq")
    assert a.execute("SELECT y FROM t WHERE id = 1").fetchall() == [("one",)]
    assert a.execute("SELECT id FROM t WHERE y = 'one'").fetchall() == [(1,)]
    a.commit()


def test_transactions_keep_their_meaning(two: tuple[Any, Any, str]) -> None:
    a, b, _ = two
    a.autocommit = False
    a.execute("INSERT INTO t VALUES (7, 70, 'seven')")
    a.rollback()
    a.execute("INSERT INTO t VALUES (8, 80, 'eight')")
    a.commit()
    assert b.execute("SELECT id FROM t WHERE id > 6").fetchall() == [(8,)]
    with a:  # commits on success
        a.execute("INSERT INTO t VALUES (9, 90, 'nine')")
    assert b.execute("SELECT COUNT(*) FROM t").fetchone() == (5,)


def test_update_of_a_row_locked_for_update_needs_no_extra_read(two: tuple[Any, Any, str]) -> None:
    a, b, _ = two
    a.autocommit = False
    before = a.stats.locked_reuse
    assert a.execute("SELECT y FROM t WHERE id = %s FOR UPDATE", (2,)).fetchall() == [("two",)]
    a.execute("UPDATE t SET x = x + %s WHERE id = %s", (5, 2))  # served from the locked row
    assert a.stats.locked_reuse == before + 1
    a.execute("UPDATE t SET x = x * 2 WHERE id = %s", (2,))  # the cache was invalidated: reads
    assert a.stats.locked_reuse == before + 1
    a.commit()
    assert b.execute("SELECT x FROM t WHERE id = 2").fetchall() == [(50,)]
    a.execute("SELECT x FROM t WHERE id = 3 FOR UPDATE")
    a.rollback()  # the cache ends with the transaction
    a.execute("UPDATE t SET x = x + 1 WHERE id = 3")
    assert a.stats.locked_reuse == before + 1
    a.commit()
    assert b.execute("SELECT x FROM t WHERE id = 3").fetchall() == [(31,)]
