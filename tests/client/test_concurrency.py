"""Several clients, stale caches, transactions: correctness rules 2 and 4 of the design."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.onions import Onion
from adaptive_client.errors import PeelConflict, RetryableError, StaleMetadata, StaleSnapshot
from adaptive_client.stats import STATS

# every onion stored at CREATE TABLE (none built on first use): what this file examines
STORED = {"defaults": {"on_demand": []}}


@pytest.fixture()
def two(new_database: Any, master_key: Any) -> Iterator[tuple[Any, Any, str]]:
    dsn = new_database("conc")
    a = adaptive_client.connect(dsn, master_key=master_key, autocommit=True, config=STORED)
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


def _layer_checks(dsn: str) -> dict[str, str]:
    with psycopg.connect(dsn) as c:
        return dict(
            c.execute(
                "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint "
                "WHERE contype = 'c' AND conname LIKE 'k\\_%' AND conrelid::regclass::text LIKE 't\\_%'"
            ).fetchall()
        )


def test_layer_checks_exist_only_where_a_peel_made_one(two: tuple[Any, Any, str]) -> None:
    """No client can hold a layer other than a new table's (or a new column's) until a
    peel, so CREATE TABLE adds no layer-tag check -- PostgreSQL prepares every CHECK of a
    table again for each written row -- and each peel adds the one of its onion."""
    a, _, dsn = two
    assert _layer_checks(dsn) == {}
    a.execute("ALTER TABLE t ADD COLUMN z integer")
    assert _layer_checks(dsn) == {}
    a.execute("SELECT id FROM t WHERE x = 20")  # peels Eq(x) to DET
    eq_x = a.catalog.table("t").column("x").onions
    anon = next(oc.anon for o, oc in eq_x.items() if o.value == "Eq")
    assert _layer_checks(dsn) == {f"k_{anon}": f"CHECK ((get_byte({anon}, 0) = 2)) NOT VALID"}


def test_stale_writer_in_a_transaction_gets_a_retryable_error(two: tuple[Any, Any, str]) -> None:
    a, b, _ = two
    b.execute("SELECT 1 FROM t WHERE id = 1")
    a.execute("SELECT id FROM t WHERE x = 20")
    b.autocommit = False
    b.execute("UPDATE t SET y = 'one' WHERE id = 1")  # the transaction has written
    with pytest.raises(StaleMetadata) as info:
        b.execute("INSERT INTO t VALUES (5, 50, 'five')")
    assert isinstance(info.value, RetryableError) and info.value.sqlstate == "40001"
    b.rollback()
    b.execute("INSERT INTO t VALUES (5, 50, 'five')")  # the retry works
    b.commit()
    assert a.execute("SELECT y FROM t WHERE x = 50").fetchall() == [("five",)]


def test_a_stale_write_after_reads_only_is_retried_for_the_application(
    two: tuple[Any, Any, str],
) -> None:
    """A transaction that has only read is started again (dbapi/restart.py): the write
    at the layer the column left is run again at the new one, and committed."""
    a, b, _ = two
    b.execute("SELECT 1 FROM t WHERE id = 1")
    a.execute("SELECT id FROM t WHERE x = 20")
    b.autocommit = False
    assert b.execute("SELECT y FROM t WHERE id = 1").fetchall() == [("one",)]
    retries = b.stats.retries
    b.execute("INSERT INTO t VALUES (5, 50, 'five')")
    b.commit()
    assert b.stats.retries == retries + 1
    assert a.execute("SELECT y FROM t WHERE x = 50").fetchall() == [("five",)]


def test_a_stale_write_that_opens_a_transaction_is_retried_for_the_application(
    two: tuple[Any, Any, str],
) -> None:
    """Nothing else is undone by retrying the statement that opened the transaction: the
    client rolls back, reads the layers again and runs it again."""
    a, b, _ = two
    b.execute("SELECT 1 FROM t WHERE id = 1")
    a.execute("SELECT id FROM t WHERE x = 20")
    b.autocommit = False
    retries = b.stats.retries
    b.execute("INSERT INTO t VALUES (5, 50, 'five')")
    b.commit()
    assert b.stats.retries >= retries
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


# -- stale caches after peels by other clients and by the DBA ------------------------------


def _tags(dsn: str, meta: Any, column: str, onion: str) -> list[int]:
    anon = next(o.anon for o in meta.column(column).onions.values() if o.onion.value == onion)
    with psycopg.connect(dsn) as raw:
        return [
            r[0]
            for r in raw.execute(
                f'SELECT DISTINCT get_byte("{anon}"::bytea, 0) FROM "{meta.anon}" '
                f'WHERE "{anon}" IS NOT NULL'
            )
        ]


def _peel_count(dsn: str) -> int:
    with psycopg.connect(dsn) as raw:
        return int(raw.execute("SELECT count(*) FROM adaptive.peel_log").fetchone()[0])  # type: ignore[index]


def test_stale_client_after_a_dba_peel_writes_and_reads_right(
    two: tuple[Any, Any, str], master_key: Any, tmp_path: Any
) -> None:
    """`adaptive-db peel` (another process) peels Eq and Ord of x; B never hears of it."""
    a, b, dsn = two
    b.execute("SELECT 1 FROM t WHERE id = 1")  # B's cache: x at RND in both onions
    key_file = tmp_path / "master.key"
    key_file.write_text(master_key.hex())
    cli = [
        sys.executable,
        "-m",
        "adaptive_client.admin.cli",
        "peel",
        "--dsn",
        dsn,
        "--master-key-file",
        str(key_file),
    ]
    for onion, layer in (("Eq", "DET"), ("Ord", "OPE")):
        out = subprocess.run(
            [*cli, "t", "x", onion, layer], capture_output=True, text=True, check=True
        )
        assert "peeled to" in out.stdout, out
    assert {o.layer for o in b.catalog.table("t").column("x").onions.values()} == {"RND"}
    b.execute("INSERT INTO t VALUES (4, 40, 'four')")  # refused at RND, retried at DET/OPE
    b.cursor().executemany("INSERT INTO t VALUES (%s, %s, %s)", [(5, 50, "five"), (6, 60, "six")])
    b.execute("UPDATE t SET x = x + 1 WHERE id = %s", (1,))  # computed on the client, rewritten
    b.execute("UPDATE t SET x = %s WHERE id = %s", (21, 2))
    meta = a.catalog.table("t")
    ord_tag = meta.column("x").onions[Onion.ORD].layer_tag("OPE")  # (4 at ORE)
    assert _tags(dsn, meta, "x", "Eq") == [2] and _tags(dsn, meta, "x", "Ord") == [ord_tag]
    peels = _peel_count(dsn)
    assert b.execute("SELECT id FROM t WHERE x > 20 ORDER BY x").fetchall() == [
        (2,),
        (3,),
        (4,),
        (5,),
        (6,),
    ]
    assert b.execute("SELECT id FROM t WHERE x = 11").fetchall() == [(1,)]
    assert _peel_count(dsn) == peels  # B's peel requests found the work done
    rows = a.execute("SELECT id, x FROM t ORDER BY id").fetchall()
    assert rows == [(1, 11), (2, 21), (3, 30), (4, 40), (5, 50), (6, 60)]


def test_stale_client_racing_for_the_same_peel(two: tuple[Any, Any, str]) -> None:
    """Both believe y at RND and both ask for its peel: one peels, the other finds it done."""
    a, b, dsn = two
    b.execute("SELECT 1 FROM t WHERE id = 1")
    peels = _peel_count(dsn)
    errors: list[BaseException] = []
    results: dict[str, Any] = {}

    def ask(name: str, conn: Any) -> None:
        try:
            results[name] = conn.execute("SELECT id FROM t WHERE y = 'two'").fetchall()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=ask, args=(n, c)) for n, c in (("a", a), ("b", b))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors and results == {"a": [(2,)], "b": [(2,)]}
    assert _peel_count(dsn) == peels + 1
    assert _tags(dsn, a.catalog.table("t"), "y", "Eq") == [2]


def test_stale_client_in_a_read_committed_transaction(two: tuple[Any, Any, str]) -> None:
    """B's transaction reads with stale metadata (right answers), then writes at the old
    layer: refused by the server; the transaction, which had only read, is started again
    (dbapi/restart.py) and the write run again at the new layer."""
    a, b, dsn = two
    b.execute("SELECT 1 FROM t WHERE id = 1")
    a.execute("SELECT id FROM t WHERE x < 25")  # A peels Ord(x) to OPE
    b.autocommit = False
    assert b.execute("SELECT x FROM t WHERE id = 3").fetchall() == [(30,)]  # decrypted by tag
    retries = b.stats.retries
    b.execute("UPDATE t SET x = %s WHERE id = %s", (35, 3))
    assert b.stats.retries == retries + 1
    assert b.execute("SELECT id FROM t WHERE x < 25 ORDER BY id").fetchall() == [(1,), (2,)]
    b.commit()
    assert a.execute("SELECT id FROM t WHERE x > 32").fetchall() == [(3,)]
    ord_oc = a.catalog.table("t").column("x").onions[Onion.ORD]
    assert _tags(dsn, a.catalog.table("t"), "x", "Ord") == [ord_oc.layer_tag("OPE")]


def test_repeatable_read_cannot_go_on_after_a_stale_snapshot(two: tuple[Any, Any, str]) -> None:
    """After StaleSnapshot the transaction is aborted on the server, as after a
    serialization failure: an application that ignores the error and goes on gets
    errors, never an answer computed from the new layers over the old snapshot."""
    a, b, _ = two
    a.execute("CREATE TABLE u (id integer PRIMARY KEY)")
    a.execute("INSERT INTO u VALUES (1)")
    b.catalog.reload(b.control)  # B knows u (and x at RND), then hears of nothing more
    b.autocommit = False
    b.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
    assert b.execute("SELECT id FROM u").fetchall() == [(1,)]  # snapshot, no lock on t
    a.execute("SELECT id FROM t WHERE x = 20")  # A peels Eq(x) after B's snapshot
    with pytest.raises(StaleSnapshot) as info:
        b.execute("SELECT id FROM t WHERE x = 20")
    assert info.value.sqlstate == "40001"
    with pytest.raises(psycopg.errors.InFailedSqlTransaction):
        b.execute("SELECT id FROM t WHERE x = 20")  # would be [] over the old snapshot
    b.rollback()
    assert b.execute("SELECT id FROM t WHERE x = 20").fetchall() == [(2,)]
    b.commit()


def test_tpcc_driver_retries_the_clients_retryable_errors() -> None:
    from tpcc.driver import _retryable

    for exc in (StaleSnapshot("s"), PeelConflict("p"), StaleMetadata("m")):
        assert _retryable(exc)
    assert not _retryable(ValueError("not retryable"))


def test_read_committed_peel_outside_the_transactions_locks(two: tuple[Any, Any, str]) -> None:
    """A READ COMMITTED transaction that has not touched the table gets its peel committed
    at once, on the control connection: while the transaction stays open, the peel's
    locks (the table, the epoch row) are not held for it, and other peels and DDL go on."""
    a, b, dsn = two
    a.execute("CREATE TABLE u (id integer PRIMARY KEY, z integer)")
    a.execute("CREATE TABLE v (id integer PRIMARY KEY, y text)")
    a.execute("INSERT INTO v VALUES (1, 'one'), (2, 'two')")
    b.catalog.reload(b.control)
    b.autocommit = False
    b.execute("INSERT INTO u VALUES (1, 5)")  # the transaction holds a lock on u, not on t
    assert b.execute("SELECT id FROM t WHERE x = 30").fetchall() == [(3,)]  # peels Eq(x)
    with psycopg.connect(dsn, autocommit=True) as raw:
        assert _layer(dsn, "_eq").count("DET") >= 2  # committed already (id's Eq is DET too)
        raw.execute("SET lock_timeout = '2s'")
        raw.execute("UPDATE adaptive.epoch SET value = value + 1 WHERE id = 1")  # not blocked
    # another client's peel of another table is not held up (t itself is locked by b's
    # transaction now, ACCESS SHARE from its SELECT, as by any reader's)
    assert a.execute("SELECT id FROM v WHERE y = 'two'").fetchall() == [(2,)]
    b.rollback()  # the peel stays: it was never part of the transaction
    assert b.execute("SELECT id FROM t WHERE x = 10").fetchall() == [(1,)]
    assert b.execute("SELECT COUNT(*) FROM u").fetchone() == (0,)
    b.commit()


def test_peel_beside_a_transaction_cannot_deadlock_through_the_client(
    two: tuple[Any, Any, str],
) -> None:
    """A transaction left open while its client peels on the control connection may hold
    a lock that the peel's own blocker waits for: the server sees no cycle (the open
    transaction waits on its client, not on a lock).  The peel's wait is bounded; the
    transaction gets a retryable PeelConflict, and the peel runs after its rollback."""
    a, _, dsn = two
    a.execute("CREATE TABLE t2 (id integer PRIMARY KEY, x integer)")
    a.execute("INSERT INTO t2 VALUES (1, 5), (2, 6)")
    t_anon, t2_anon = a.catalog.table("t").anon, a.catalog.table("t2").anon
    other = psycopg.connect(dsn)
    other.execute("SET lock_timeout = '20s'")  # without the bound: a 20 s stall, then no error
    other.execute(f'SELECT 1 FROM "{t2_anon}"')  # holds t2 (ACCESS SHARE), transaction open
    a.autocommit = False
    assert a.execute("SELECT COUNT(*) FROM t").fetchone() == (3,)  # holds t

    def lock_t() -> None:  # waits for a's transaction
        with contextlib.suppress(psycopg.Error):
            other.execute(f'LOCK TABLE "{t_anon}" IN ACCESS EXCLUSIVE MODE')
        other.commit()

    waiter = threading.Thread(target=lock_t)
    waiter.start()
    _wait_until_blocked(dsn, "LOCK%")
    with pytest.raises(PeelConflict):
        a.execute("SELECT id FROM t2 WHERE x = 5")  # its peel waits on other, other on a
    a.rollback()  # other gets its lock and commits; the peel then runs
    waiter.join(30)
    assert not waiter.is_alive()
    assert "DET" in _layer(dsn, "_eq")
    assert a.execute("SELECT id FROM t2 WHERE x = 5").fetchall() == [(1,)]
    a.commit()
    other.close()


def _read_until_its_peel_waits(
    conn: Any, query: str, got: dict[str, Any], key: str, dsn: str
) -> threading.Thread:
    """Run ``query`` on ``conn`` in a thread -- its rows, or its exception, land in
    ``got[key]`` -- and return the thread once the peel the query needs waits for a lock."""

    def read() -> None:
        try:
            got[key] = conn.execute(query).fetchall()
        except Exception as exc:  # reported by the test, not lost in the thread
            got[key] = exc

    reader = threading.Thread(target=read)
    reader.start()
    _wait_until_blocked(dsn, "%adaptive.peel_layer%")
    return reader


def _wait_until_blocked(dsn: str, query_like: str) -> None:
    """Return once a backend running a statement LIKE ``query_like`` waits for a lock."""
    with psycopg.connect(dsn, autocommit=True) as watch:
        for _ in range(1000):
            if watch.execute(
                "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE %s",
                (query_like,),
            ).fetchone():
                return
            time.sleep(0.005)
    raise AssertionError(f"no statement like {query_like!r} waited for a lock")


def test_autocommit_peel_losing_a_deadlock_to_a_transactions_peel_is_retried(
    two: tuple[Any, Any, str],
) -> None:
    """A peels from autocommit (its control connection locks the column's layer row, then
    waits for the table, which B's READ COMMITTED transaction holds); B's transaction then
    needs the same peel (inside it, since it holds the table) and waits for the layer row:
    a deadlock the server breaks by aborting one of the two peels.  A's statement has no
    transaction at stake and must simply succeed; B may get a retryable PeelConflict --
    never a raw DeadlockDetected, never a wrong answer."""
    a, b, dsn = two
    b.catalog.reload(b.control)
    b.autocommit = False
    b.execute("INSERT INTO t VALUES (4, 40, 'four')")  # b holds t (ROW EXCLUSIVE)
    got: dict[str, Any] = {}
    reader = _read_until_its_peel_waits(a, "SELECT id FROM t WHERE x = 10", got, "a", dsn)
    try:
        got["b"] = b.execute("SELECT id FROM t WHERE x = 40").fetchall()
    except RetryableError as exc:
        got["b"] = exc
        b.rollback()  # frees t: A's peel goes on
        b.execute("INSERT INTO t VALUES (4, 40, 'four')")
        got["b retried"] = b.execute("SELECT id FROM t WHERE x = 40").fetchall()
    b.commit()
    reader.join(30)
    assert not reader.is_alive()
    assert got["a"] == [(1,)], got
    assert got.get("b retried", got["b"]) == [(4,)], got
    assert sorted(_layer(dsn, "_eq")) == ["DET", "DET", "RND"]  # id, x peeled; y not
    assert sorted(a.execute("SELECT id, x FROM t").fetchall()) == [
        (1, 10),
        (2, 20),
        (3, 30),
        (4, 40),
    ]


def test_two_transactions_peeling_one_table_get_a_retryable_error(
    two: tuple[Any, Any, str], master_key: Any
) -> None:
    """Two READ COMMITTED transactions that both hold the table both need the same peel,
    inside them: only one can ever take the table's ACCESS EXCLUSIVE lock.  The other is
    the server's deadlock victim and gets PeelConflict (retryable, its transaction
    aborted); the peel then runs at its rollback, and its retry answers right."""
    a, b, dsn = two
    c = adaptive_client.connect(dsn, master_key=master_key)  # a third client, current
    b.catalog.reload(b.control)
    b.autocommit = False
    c.execute("INSERT INTO t VALUES (5, 50, 'five')")  # both transactions hold t
    b.execute("INSERT INTO t VALUES (4, 40, 'four')")
    got: dict[str, Any] = {}
    reader = _read_until_its_peel_waits(c, "SELECT id FROM t WHERE x = 50", got, "c", dsn)
    try:
        got["b"] = b.execute("SELECT id FROM t WHERE x = 40").fetchall()
    except Exception as exc:
        got["b"] = exc
    # whichever lost is aborted; let the winner finish before the loser retries
    losers = [k for k in ("b", "c") if isinstance(got.get(k), Exception)]
    if not losers:
        reader.join(30)
        losers = [k for k in ("b", "c") if isinstance(got.get(k), Exception)]
    assert len(losers) == 1, got
    loser = losers[0]
    assert isinstance(got[loser], PeelConflict), got  # retryable, not DeadlockDetected
    conns = {"b": b, "c": c}
    winner = "c" if loser == "b" else "b"
    t0 = time.monotonic()
    conns[loser].rollback()  # its peel waits for the winner's, which is not committed
    assert time.monotonic() - t0 < 10  # the wait is bounded: rollback does not hang
    reader.join(30)
    assert not reader.is_alive()
    assert got[winner] == {"b": [(4,)], "c": [(5,)]}[winner], got
    conns[winner].commit()
    row = {"b": (4, 40, "four"), "c": (5, 50, "five")}[loser]
    for _ in range(3):  # b never hears of peels: its first try may be stale (retryable)
        try:
            conns[loser].execute("INSERT INTO t VALUES (%s, %s, %s)", row)
            found = conns[loser].execute("SELECT id FROM t WHERE x = %s", (row[1],)).fetchall()
            conns[loser].commit()
            break
        except RetryableError:
            conns[loser].rollback()
    assert found == [(row[0],)]
    assert sorted(_layer(dsn, "_eq")) == ["DET", "DET", "RND"]  # id, x peeled; y not
    assert a.execute("SELECT COUNT(*) FROM t").fetchone() == (5,)
    c.close()


def test_a_listening_client_learns_of_peels_and_ddl_before_its_next_statement(
    new_database: Any, master_key: Any
) -> None:
    """C hears A's peel and A's CREATE TABLE through the notification: its next
    statement runs on the refreshed catalog, with no stale write and no retry."""
    dsn = new_database("notify")
    a = adaptive_client.connect(dsn, master_key=master_key, autocommit=True)
    a.execute("CREATE TABLE t (id integer PRIMARY KEY, x integer)")
    a.execute("INSERT INTO t VALUES (1, 10), (2, 20)")
    c = adaptive_client.connect(dsn, master_key=master_key, autocommit=True)
    epoch = c.catalog.epoch
    assert c.catalog.table("t").columns["x"].onions["Eq"].layer == "RND"
    a.execute("SELECT id FROM t WHERE x = 20")  # A peels Eq(x)
    a.execute("CREATE TABLE u (id integer PRIMARY KEY)")
    time.sleep(0.2)  # the notifications cross the socket
    retries = STATS.retries
    c.execute("INSERT INTO t VALUES (3, 30)")  # at DET already: no CHECK violation
    assert STATS.retries == retries
    assert c.catalog.epoch > epoch
    assert c.catalog.table("t").columns["x"].onions["Eq"].layer == "DET"
    assert c.execute("SELECT id FROM t WHERE x = 30").fetchall() == [(3,)]
    c.execute("INSERT INTO u VALUES (1)")  # the new table is known without a reload
    assert c.execute("SELECT COUNT(*) FROM u").fetchone() == (1,)
    a.close()
    c.close()
