"""Read replicas: read-only work on streaming standbys, never at a layer they have not
replayed (adaptive_client/dbapi/replicas.py), against a primary and two standbys of the
suite's own (conftest.py)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.admin.embedded import free_ports
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.dbapi.replicas import replica_dsns

from .conftest import ReplicaSet

pytestmark = pytest.mark.slow

Factory = Callable[[], tuple[str, list[str]]]


# Tests that say which server answers wait for a standby's replay this long: on a loaded
# machine replay can lag the default wait, and the read would then (rightly) go to the
# primary.  Tests of the wait itself pass their own.
PATIENT = 30.0


def _connect(dsn: str, key: MasterKey, replicas: list[str], **kw: Any) -> Any:
    kw.setdefault("replica_wait", PATIENT)
    return adaptive_client.connect(dsn, master_key=key, replicas=replicas, **kw)


def _load(dsn: str, key: MasterKey, rows: int = 200) -> None:
    with adaptive_client.connect(dsn, master_key=key, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE item (id int PRIMARY KEY, name text, price numeric(8,2), qty int)"
        )
        cur = conn.cursor()
        cur.executemany(
            "INSERT INTO item VALUES (%s, %s, %s, %s)",
            [(i, f"item {i % 17}", f"{i * 1.25:.2f}", i % 23) for i in range(rows)],
        )


def _answers(conn: Any, query: str, params: Any = None) -> tuple[list[Any], str]:
    """The rows and which server answered (the router's side channel)."""
    rows = conn.execute(query, params).fetchall()
    return rows, conn.replicas.last


QUERIES = [
    ("SELECT id, name FROM item WHERE id = %s", (7,)),
    ("SELECT count(*) FROM item WHERE name = %s", ("item 3",)),
    ("SELECT id FROM item WHERE price > %s ORDER BY price DESC LIMIT 5", ("100",)),
    ("SELECT name, sum(qty) FROM item GROUP BY name ORDER BY name", None),
    ("SELECT max(price), min(name) FROM item WHERE qty BETWEEN %s AND %s", (3, 9)),
]


def test_reads_are_routed_round_robin_and_equal_the_primarys(
    replica_db: Factory, master_key: MasterKey
) -> None:
    dsn, standbys = replica_db()
    _load(dsn, master_key)
    with adaptive_client.connect(dsn, master_key=master_key, autocommit=True) as plain:
        expected = [plain.execute(q, p).fetchall() for q, p in QUERIES]
    with _connect(dsn, master_key, standbys, autocommit=True) as conn:
        seen: list[str] = []
        for _ in range(4):
            for (query, params), want in zip(QUERIES, expected, strict=True):
                rows, server = _answers(conn, query, params)
                assert rows == want, query
                seen.append(server)
        # each standby answered, none of the reads went to the primary once replayed
        assert set(seen) <= set(standbys)
        assert all(seen.count(s) >= len(seen) // 2 - 1 for s in standbys)
        # the side channel agrees with the servers themselves
        in_recovery = conn.execute("SELECT pg_is_in_recovery()").fetchone()
        assert in_recovery is not None  # (answered by the server: see below)
        counts = conn.replicas.answered()
        assert counts["primary"] == 0 and sum(counts.values()) == len(seen)


def test_the_side_channel_is_the_server(replica_db: Factory, master_key: MasterKey) -> None:
    """A routed plan's rows come from the standby: a table only the standby's replay
    shows differently is read from where the router says."""
    dsn, standbys = replica_db()
    _load(dsn, master_key, rows=20)
    with _connect(dsn, master_key, standbys, autocommit=True) as conn:
        conn.execute("SELECT count(*) FROM item").fetchall()
        pg = conn.replicas.standbys[0].pg or conn.replicas.standbys[1].pg
        assert pg is not None
        assert pg.execute("SELECT pg_is_in_recovery()").fetchone() == (True,)
        # writes and FOR UPDATE go to the primary
        conn.execute("UPDATE item SET qty = qty + 1 WHERE id = %s", (3,))
        assert conn.replicas.last == "primary"
        conn.execute("SELECT qty FROM item WHERE id = %s FOR UPDATE", (3,)).fetchall()
        assert conn.replicas.last == "primary"
        # and a read after them sees them (read your writes), from a standby
        rows, server = _answers(conn, "SELECT qty FROM item WHERE id = %s", (3,))
        assert rows == [(4,)] and server in standbys
        # COPY too
        with conn.cursor().copy("COPY item (id, name, price, qty) FROM STDIN") as copy:
            for i in range(100, 150):
                copy.write_row((i, "copied", "1.00", 1))
        rows, server = _answers(conn, "SELECT count(*) FROM item WHERE name = %s", ("copied",))
        assert rows == [(50,)] and server in standbys


def test_writes_in_transactions_never_go_to_a_standby(
    replica_db: Factory, master_key: MasterKey
) -> None:
    dsn, standbys = replica_db()
    _load(dsn, master_key, rows=30)
    with _connect(dsn, master_key, standbys) as conn:  # (transactions: autocommit off)
        for i in range(10):
            rows = conn.execute("SELECT qty FROM item WHERE id = %s", (i,)).fetchall()
            assert conn.replicas.last == "primary"
            conn.execute("UPDATE item SET qty = %s WHERE id = %s", (rows[0][0] + 100, i))
            assert conn.replicas.last == "primary"
            conn.execute("INSERT INTO item VALUES (%s, 'new', 1, 1)", (1000 + i,))
            conn.commit()
        assert {k: v for k, v in conn.replicas.answered().items() if k != "primary"} == {
            s: 0 for s in standbys
        }
        # a READ ONLY transaction runs on one standby, whole; a write in it is refused as
        # PostgreSQL refuses it
        conn.execute("SELECT sum(qty) FROM item WHERE id < %s", (10,)).fetchone()  # (peeled)
        conn.commit()
        conn.read_only = True
        a = conn.execute("SELECT count(*) FROM item").fetchone()
        first = conn.replicas.last
        b = conn.execute("SELECT sum(qty) FROM item WHERE id < %s", (10,)).fetchone()
        assert first in standbys and conn.replicas.last == first
        assert a == (40,) and b is not None
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            conn.execute("UPDATE item SET qty = 0 WHERE id = %s", (1,))
        conn.rollback()
        conn.read_only = False
    with psycopg.connect(dsn) as check:
        assert check.execute("SELECT count(*) FROM pg_stat_activity").fetchone() is not None


def test_a_standby_that_is_down_sends_reads_to_the_primary(
    replica_set: ReplicaSet, replica_db: Factory, master_key: MasterKey
) -> None:
    dsn, standbys = replica_db()
    _load(dsn, master_key, rows=50)
    unreachable = "host=127.0.0.1 port=54419 dbname=x user=postgres connect_timeout=2"
    with _connect(dsn, master_key, [unreachable], autocommit=True) as conn:
        rows, server = _answers(conn, "SELECT count(*) FROM item WHERE qty = %s", (4,))
        assert rows == [(2,)] and server == "primary"
    with _connect(dsn, master_key, standbys, autocommit=True) as conn:
        rows, server = _answers(conn, "SELECT count(*) FROM item")
        assert rows == [(50,)] and server in standbys
        replica_set.standbys[0].down()
        replica_set.standbys[1].down()
        try:
            for i in range(6):
                rows, server = _answers(conn, "SELECT count(*) FROM item WHERE qty = %s", (i,))
                assert server == "primary"
                assert rows == [(len([r for r in range(50) if r % 23 == i]),)]
        finally:
            for s in replica_set.standbys:
                s.up()
        replica_set.wait_replayed()
        for standby in conn.replicas.standbys:  # (not waiting out the pause)
            standby.down_until = 0.0
        rows, server = _answers(conn, "SELECT count(*) FROM item")
        assert rows == [(50,)] and server in standbys
    # a READ ONLY transaction whose standby goes away mid-way: the connection error, then
    # the session is the primary's again
    with _connect(dsn, master_key, standbys[:1]) as conn:
        conn.read_only = True
        assert _answers(conn, "SELECT count(*) FROM item") == ([(50,)], standbys[0])
        replica_set.standbys[0].down()
        try:
            with pytest.raises(psycopg.OperationalError):
                conn.execute("SELECT count(*) FROM item WHERE qty = %s", (1,))
            conn.rollback()
            assert _answers(conn, "SELECT count(*) FROM item") == ([(50,)], "primary")
            conn.rollback()
        finally:
            replica_set.standbys[0].up()


def test_replica_shorthand_takes_the_primarys_settings() -> None:
    from psycopg.conninfo import conninfo_to_dict

    primary = "host=db.example.com port=5432 dbname=app user=u password=p sslmode=require"
    one, two = replica_dsns(primary, "replica-1.example.com,replica-2.example.com:6432")
    same = {"dbname": "app", "user": "u", "password": "p", "sslmode": "require"}
    assert conninfo_to_dict(one) == {"host": "replica-1.example.com", **same}
    assert conninfo_to_dict(two) == {"host": "replica-2.example.com", "port": "6432", **same}
    assert replica_dsns(primary, ["host=r port=1 dbname=app"]) == ["host=r port=1 dbname=app"]
    uri = "postgresql://reader@r1:5433/app?sslmode=require"
    assert replica_dsns(primary, uri) == [uri]


def test_a_read_only_transaction_needing_a_peel_is_retryable(
    replica_db: Factory, master_key: MasterKey
) -> None:
    """The peel runs on the primary; the transaction on the standby, which holds the
    table and cannot see it, fails retryably; its retry reads at the new layer."""
    dsn, standbys = replica_db()
    _load(dsn, master_key, rows=30)
    # (a wait that the held table makes run out: the standby cannot replay the peel)
    with _connect(dsn, master_key, standbys, replica_wait=2.0) as conn:
        conn.read_only = True
        assert conn.execute("SELECT count(*) FROM item").fetchone() == (30,)
        assert conn.replicas.last in standbys
        with pytest.raises(adaptive_client.errors.RetryableError):
            conn.execute("SELECT count(*) FROM item WHERE name = %s", ("item 3",))
        conn.rollback()
        for _ in range(50):  # (the standby replays the peel once the lock is gone)
            try:
                rows = conn.execute(
                    "SELECT count(*) FROM item WHERE name = %s", ("item 3",)
                ).fetchall()
                break
            except adaptive_client.errors.RetryableError:
                conn.rollback()
                time.sleep(0.05)
        assert rows == [(2,)]
        conn.rollback()


COLUMNS = 20
ROWS = 40


def _value(row: int, column: int) -> str:
    return f"v{(row * (column + 3)) % 7}"


def _batch(conn: Any, table: str) -> None:
    cols = ", ".join(f"c{k} text" for k in range(COLUMNS))
    conn.execute(f"CREATE TABLE {table} (id int PRIMARY KEY, {cols})")
    marks = ", ".join(["%s"] * (COLUMNS + 1))
    conn.cursor().executemany(
        f"INSERT INTO {table} VALUES ({marks})",
        [(i, *[_value(i, k) for k in range(COLUMNS)]) for i in range(ROWS)],
    )


def test_a_read_racing_a_peel_is_never_wrong(
    replica_set: ReplicaSet, replica_db: Factory, master_key: MasterKey
) -> None:
    """500 reads each needing a layer a peel has just made (the reader's own peel, or
    another client's, racing it), one standby replaying with a random delay, the other
    pausing its replay now and then: every answer is the primary's; the standbys answered,
    some after a wait."""
    dsn, standbys = replica_db()
    rng = random.Random(44)
    other = adaptive_client.connect(dsn, master_key=master_key, autocommit=True)
    reader = _connect(dsn, master_key, standbys, autocommit=True, replica_wait=0.05)
    # READ ONLY transactions: the table read first (the standby then holds it), then the
    # column a peel has just changed
    transactions = _connect(dsn, master_key, standbys, replica_wait=0.05)
    transactions.read_only = True
    retried = 0
    wrong: list[tuple[Any, ...]] = []
    stop = threading.Event()

    def pauses() -> None:  # standby 1: replay paused now and then, a few ms at a time
        pauser = random.Random(4)
        while not stop.wait(pauser.random() * 0.05):
            replica_set.pause_replay(1, True)
            stop.wait(pauser.random() * 0.05)
            replica_set.pause_replay(1, False)

    pauser = threading.Thread(target=pauses)
    pauser.start()
    try:
        for batch in range(500 // COLUMNS):
            replica_set.set_apply_delay(2, rng.choice([0, 10, 30, 80, 200]))
            table = f"race{batch}"
            _batch(other, table)
            for k in range(COLUMNS):
                value = f"v{rng.randrange(7)}"
                want = sorted(i for i in range(ROWS) if _value(i, k) == value)
                query = f"SELECT id FROM {table} WHERE c{k} = %s"
                how = rng.randrange(3)
                if how == 1:  # another client peels while this one reads
                    peeler = threading.Thread(target=other.execute, args=(query, (value,)))
                    peeler.start()
                    time.sleep(rng.random() * 0.01)
                elif how == 2:  # read the column before the peel: a catalog gone stale
                    reader.execute(f"SELECT c{k} FROM {table} WHERE id = %s", (1,)).fetchall()
                    other.execute(query, (value,)).fetchall()
                got = sorted(r[0] for r in reader.execute(query, (value,)).fetchall())
                if how == 1:
                    peeler.join()
                if got != want:
                    wrong.append((table, k, how, reader.replicas.last, got, want))
                rows: list[Any] = []
                for _attempt in range(40 if k % 2 else 0):  # (every other column)
                    try:
                        transactions.execute(f"SELECT count(*) FROM {table}").fetchall()
                        rows = transactions.execute(query, (value,)).fetchall()
                        transactions.commit()
                        break
                    except adaptive_client.errors.RetryableError:
                        transactions.rollback()
                        retried += 1
                if k % 2 and sorted(r[0] for r in rows) != want:
                    wrong.append((table, k, "read only", transactions.replicas.last, rows, want))
    finally:
        stop.set()
        pauser.join()
        replica_set.pause_replay(1, False)
        reader_counts = reader.replicas.answered()
        waits = reader.replicas.waits
        reader.close()
        transactions.close()
        other.close()
        replica_set.set_apply_delay(2, 0)
    print("answered:", reader_counts, "waits:", waits, "read-only retries:", retried)
    assert not wrong, wrong[:5]
    assert waits > 0  # (the primary answers where the wait runs out: rarely, on loopback)
    assert sum(reader_counts[s] for s in standbys) > 0, reader_counts


def test_without_the_replay_check_a_lagging_standby_answers_wrong(
    replica_set: ReplicaSet,
    replica_db: Factory,
    master_key: MasterKey,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What the check above holds: a standby that has not replayed a peel, read at the
    new layer, finds nothing.  (A standby that has replayed the peel's lock but not its
    commit -- an apply delay -- makes the read wait on the lock: replay paused here.)"""
    from adaptive_client.dbapi import replicas

    dsn, standbys = replica_db()
    with adaptive_client.connect(dsn, master_key=master_key, autocommit=True) as other:
        _batch(other, "unchecked")
    replica_set.wait_replayed()
    replica_set.pause_replay(2, True)
    try:
        monkeypatch.setattr(replicas.Router, "required", lambda self: 0)
        with _connect(dsn, master_key, standbys[1:], autocommit=True) as reader:
            got = reader.execute("SELECT id FROM unchecked WHERE c0 = %s", ("v0",)).fetchall()
            assert reader.replicas.last == standbys[1]
        assert got == []  # (rows 0, 7, 14... hold v0: read at RND, none matched)
    finally:
        replica_set.pause_replay(2, False)


def test_sqlalchemy_url_and_pool_take_replicas(replica_db: Factory, master_key: MasterKey) -> None:
    import sqlalchemy as sa
    from psycopg.conninfo import conninfo_to_dict

    from adaptive_client.dbapi.pool import ConnectionPool

    dsn, standbys = replica_db()
    _load(dsn, master_key, rows=10)
    p = conninfo_to_dict(dsn)
    hosts = ",".join(f"127.0.0.1:{conninfo_to_dict(s)['port']}" for s in standbys)
    url = (
        f"postgresql+adaptive://{p['user']}@127.0.0.1:{p['port']}/{p['dbname']}"
        f"?replicas={hosts}&replica_wait={PATIENT}"
    )
    engine = sa.create_engine(url, connect_args={"master_key": master_key})
    try:
        with engine.connect() as c:
            ro = c.execution_options(postgresql_readonly=True)
            assert ro.execute(sa.text("SELECT count(*) FROM item")).scalar() == 10
            raw = c.connection.dbapi_connection
            assert raw is not None
            ports = {conninfo_to_dict(s)["port"] for s in standbys}
            assert conninfo_to_dict(raw.replicas.last)["port"] in ports
            assert raw.replicas.wait == PATIENT
    finally:
        engine.dispose()
    kwargs = {"replicas": standbys, "replica_wait": PATIENT, "autocommit": True}
    pool = ConnectionPool(dsn, master_key=master_key, kwargs=kwargs, min_size=1, max_size=2)
    with pool, pool.connection() as conn:
        assert conn.execute("SELECT count(*) FROM item").fetchone() == (10,)
        assert conn.replicas.last in standbys


def test_adaptive_db_up_with_standbys(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``adaptive-db up --standbys 1`` / ``status`` / ``down`` on an embedded cluster of
    the test's own (port 54405, or 54417)."""
    from adaptive_client.admin import cli
    from adaptive_client.admin.embedded import EmbeddedCluster

    tmp_path.chmod(0o755)
    monkeypatch.setenv("ADAPTIVE_HOME", str(tmp_path))
    port = free_ports((54405, 54417), 2)
    monkeypatch.setenv("ADAPTIVE_DB_PORT", str(port))
    cluster = EmbeddedCluster.default()
    try:
        assert cli.main(["up", "--standbys", "1"]) == 0
        out = capsys.readouterr().out.split("\n")
        assert f"port={port}" in out[0] and f"port={port + 1}" in out[1]
        with psycopg.connect(cluster.standby(1).dsn()) as s:
            assert s.execute("SELECT pg_is_in_recovery()").fetchone() == (True,)
        assert cli.main(["status"]) == 0
        assert f"standby 1: running (port {port + 1}, replayed to" in capsys.readouterr().out
        assert cli.main(["down"]) == 0
        assert not cluster.standby(1).running() and not cluster.running()
    finally:
        cluster.destroy()
