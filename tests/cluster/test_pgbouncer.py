"""The client behind PgBouncer (1.18: no protocol-level prepared statements).

Two PgBouncers of the test's own sit in front of the shared server, one in ``transaction``
pool mode with two server connections per database -- a transaction of another client
in between sends the next transaction of a connection to the other backend (asserted
with ``pg_backend_pid()``) -- and one in ``session`` mode.  Through the transaction
pooler the client detects the pooler, prepares nothing and keeps nothing of a session
across transactions: the differential suite with its peels, onions built on first use,
COPY, savepoints, errors and the transaction state after them, serial values, other
clients' peels and DDL picked up, the conformance suite's checks of a few column types,
a short TPC-C run with three clients (consistent afterwards), and the session state an
application asks for refused (``PoolerUnsupported``).  Through the session pooler, told
``pool_mode=session``, the client behaves as on a direct connection: prepared
statements, ``SET``, ``LISTEN``.  docs/poolers.md says what each mode allows.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import sqlalchemy
from client.queries import Q, client_aggregates, dml, queries
from client.schema import CONFIG, DDL, dept_rows, emp_rows
from client.test_differential import INSERT_DEPT, INSERT_EMP, run_both
from client.test_on_demand import CONFIG as ON_DEMAND
from client.test_on_demand import DDL as ITEM_DDL
from client.test_on_demand import QUERIES as ITEM_QUERIES
from client.test_on_demand import ROWS as ITEM_ROWS
from psycopg.conninfo import conninfo_to_dict

import adaptive_client
from adaptive_client.admin.pgbouncer import PgBouncer, program
from adaptive_client.dbapi.notifications import EpochPoller
from adaptive_client.dbapi.pool import ConnectionPool
from adaptive_client.errors import ConfigError, PoolerUnsupported
from tpcc import driver
from tpcc.check import check
from tpcc.load import TINY, load

pytestmark = pytest.mark.slow

TRANSACTION_PORTS = range(54420, 54430)
SESSION_PORTS = range(54430, 54440)
POOL_SIZE = 2
# a session pooler lends a server connection per client connection for as long as it is
# open: an adaptive connection holds two (the application's and the control session)
SESSION_POOL_SIZE = 6


def _require_pgbouncer() -> None:
    try:
        program()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def transaction_bouncer(pg_cluster: str) -> Iterator[PgBouncer]:
    _require_pgbouncer()
    bouncer = PgBouncer(pg_cluster, TRANSACTION_PORTS, "transaction", POOL_SIZE)
    try:
        yield bouncer
    finally:
        bouncer.stop()


@pytest.fixture(scope="module")
def session_bouncer(pg_cluster: str) -> Iterator[PgBouncer]:
    _require_pgbouncer()
    bouncer = PgBouncer(pg_cluster, SESSION_PORTS, "session", SESSION_POOL_SIZE)
    try:
        yield bouncer
    finally:
        bouncer.stop()


class Holder:
    """Another client of the pooler holding a server connection in an open transaction:
    the connection the next transaction of the client under test would have reused
    (PgBouncer lends the server connection released last) is taken, so it runs on the
    other one."""

    def __init__(self, dsn: str) -> None:
        self.conn = psycopg.connect(dsn, prepare_threshold=None)

    def take(self) -> int:
        row = self.conn.execute("SELECT pg_backend_pid()").fetchone()
        assert row is not None
        return int(row[0])

    def release(self) -> None:
        self.conn.rollback()

    def close(self) -> None:
        self.conn.close()


def _pid(conn: Any) -> int:
    row = conn.execute("SELECT pg_backend_pid()").fetchone()
    return int(row[0])


class Noise:
    """A thread of short transactions through the pooler, so that the statements of the
    client under test keep changing backends; it records the backends it ran on."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.stop = threading.Event()
        self.pids: set[int] = set()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        with psycopg.connect(self.dsn, autocommit=True, prepare_threshold=None) as conn:
            while not self.stop.is_set():
                self.pids.add(_pid(conn))
                time.sleep(0.002)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=30)


# -- detection and the connection string ---------------------------------------------------


def test_detected_or_told(
    transaction_bouncer: PgBouncer, new_database: Any, master_key: Any
) -> None:
    dsn = new_database("pgb_told")
    direct = adaptive_client.connect(dsn, master_key=master_key)
    assert (direct.pooling.mode, direct.pooling.prepare) == ("none", True)
    direct.close()
    pooled = adaptive_client.connect(transaction_bouncer.dsn(dsn), master_key=master_key)
    assert (pooled.pooling.mode, pooled.pooling.detected) == ("transaction", True)
    assert not pooled.pooling.prepare
    for conn in (pooled.pg, pooled.control):
        assert conn.prepare_threshold is None
    assert isinstance(pooled._notifications, EpochPoller)
    pooled.close()
    # told in the connection string (key/value and URI forms) or as a keyword
    told = adaptive_client.connect(
        f"{transaction_bouncer.dsn(dsn)} pool_mode=session", master_key=master_key
    )
    assert (told.pooling.mode, told.pooling.detected, told.pooling.prepare) == (
        "session",
        False,
        True,
    )
    told.close()
    info = conninfo_to_dict(dsn)
    uri = (
        f"postgresql://{info['user']}@127.0.0.1:{transaction_bouncer.port}/{info['dbname']}"
        "?pool_mode=transaction&connect_timeout=5"
    )
    with adaptive_client.connect(uri, master_key=master_key, prepare=True) as conn:
        assert (conn.pooling.mode, conn.pooling.prepare) == ("transaction", True)
    with adaptive_client.connect(dsn, master_key=master_key, pool_mode="transaction") as conn:
        assert conn.pooling.transaction and conn.pg.prepare_threshold is None
    with pytest.raises(ConfigError):
        adaptive_client.connect(f"{dsn} pool_mode=statement", master_key=master_key)
    # a SQLAlchemy URL's query options
    url = uri.replace("postgresql://", "postgresql+adaptive://").replace(
        "pool_mode=transaction", "pool_mode=session&prepare=false"
    )
    engine = sqlalchemy.create_engine(url, connect_args={"master_key": master_key})
    with engine.connect() as sa_conn:
        assert sa_conn.execute(sqlalchemy.text("SELECT 1")).scalar() == 1
        pooling = sa_conn.connection.dbapi_connection.pooling  # type: ignore[union-attr]
        assert (pooling.mode, pooling.prepare) == ("session", False)
    engine.dispose()
    # a pool of adaptive connections in front of the pooler, the option in its string
    with (
        ConnectionPool(
            f"{transaction_bouncer.dsn(dsn)} pool_mode=transaction",
            master_key=master_key,
            min_size=1,
            max_size=2,
        ) as pool,
        pool.connection() as pooled_conn,
    ):
        assert pooled_conn.pooling.transaction and not pooled_conn.pooling.detected
        assert pooled_conn.execute("SELECT 1 + %s", (1,)).fetchone() == (2,)


# -- transactions on other backends --------------------------------------------------------


def test_consecutive_transactions_run_on_other_backends(
    transaction_bouncer: PgBouncer, new_database: Any, master_key: Any
) -> None:
    dsn = transaction_bouncer.dsn(new_database("pgb_backends"))
    conn = adaptive_client.connect(dsn, master_key=master_key)
    holder = Holder(dsn)
    try:
        cur = conn.cursor()
        cur.execute("CREATE TABLE acct (id serial PRIMARY KEY, owner text, balance integer)")
        conn.commit()
        pids = []
        for i in range(12):
            # one statement run again and again (psycopg would have prepared it by the
            # fifth run: on another backend, the prepared statement would not exist)
            cur.execute(
                "INSERT INTO acct (owner, balance) VALUES (%s, %s) RETURNING id", (f"o{i}", i)
            )
            (new_id,) = cur.fetchone()
            cur.execute("SELECT owner, balance FROM acct WHERE id = %s", (new_id,))
            assert cur.fetchall() == [(f"o{i}", i)]
            pids.append(_pid(conn))
            conn.commit()
            if i % 2 == 0:
                holder.take()  # the backend just released is taken...
            else:
                holder.release()
        # ... so consecutive transactions alternate between the two backends
        assert len(set(pids)) == POOL_SIZE
        assert all(a != b for a, b in zip(pids[1::2], pids[2::2], strict=False)), pids
        holder.release()
        cur.execute("SELECT count(*), sum(balance), max(id) FROM acct WHERE balance >= %s", (0,))
        assert cur.fetchall() == [(12, sum(range(12)), 12)]
        conn.commit()
        # a cancel request reaches the backend the statement runs on (PgBouncer maps its
        # key), and the transaction is failed as on a direct connection
        timer = threading.Timer(0.3, conn.cancel)
        timer.start()
        with pytest.raises(psycopg.errors.QueryCanceled):
            conn.execute("SELECT pg_sleep(10)")
        timer.join()
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            conn.execute("SELECT owner FROM acct WHERE id = %s", (1,))
        conn.rollback()
        assert conn.execute("SELECT owner FROM acct WHERE id = %s", (1,)).fetchall() == [("o0",)]
        conn.commit()
    finally:
        holder.close()
        conn.close()
    # a plain psycopg connection preparing its statements fails on the other backend
    plain = psycopg.connect(dsn, prepare_threshold=0)
    other = Holder(dsn)
    try:
        plain.execute("SELECT %s::int", (1,))
        plain.commit()
        other.take()
        with pytest.raises(psycopg.errors.InvalidSqlStatementName):
            plain.execute("SELECT %s::int", (1,))
    finally:
        other.close()
        plain.close()


# -- what a transaction pooler cannot give -------------------------------------------------

REFUSED = [
    "SET search_path = public",
    "SET statement_timeout = '5s'",
    "SET SESSION lock_timeout = '1s'",
    "RESET ALL",
    "SET ROLE postgres",
    "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY",
    "LISTEN app_events",
    "SELECT pg_advisory_lock(42)",
    "SELECT pg_try_advisory_lock(42)",
    "SELECT set_config('app.user', 'ann', false)",
]
ALLOWED = [
    "SET LOCAL statement_timeout = '5s'",
    "SET LOCAL search_path = ''",  # (the client's schema kept on it: search_path.py)
    "SELECT set_config('search_path', 'pg_catalog', true)",
    "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
    "SET CONSTRAINTS ALL DEFERRED",
    "SELECT pg_advisory_xact_lock(42)",
    "SELECT set_config('app.user', 'ann', true)",
    "NOTIFY app_events",
    "SET application_name = 'pooled app'",
]


def test_session_state_is_refused_or_holds(
    transaction_bouncer: PgBouncer, new_database: Any, master_key: Any
) -> None:
    dsn = transaction_bouncer.dsn(new_database("pgb_refused"))
    conn = adaptive_client.connect(dsn, master_key=master_key)
    holder = Holder(dsn)
    try:
        conn.execute("CREATE TABLE t (id integer PRIMARY KEY, v text)")
        conn.commit()
        for stmt in REFUSED:
            conn.execute("SELECT v FROM t WHERE id = %s", (1,))
            with pytest.raises(PoolerUnsupported) as refused:
                conn.execute(stmt)
            assert refused.value.sqlstate == "0A000", stmt
            # as any error: the transaction is failed, its rollback recovers
            with pytest.raises(psycopg.errors.InFailedSqlTransaction):
                conn.execute("SELECT v FROM t WHERE id = %s", (1,))
            conn.rollback()
        conn.autocommit = True
        with pytest.raises(PoolerUnsupported):
            conn.execute("SET search_path = public")
        conn.autocommit = False
        for stmt in ALLOWED:
            conn.execute(stmt)
            assert conn.execute("SELECT v FROM t WHERE id = %s", (1,)).fetchall() == []
            conn.commit()
        with pytest.raises(PoolerUnsupported):
            conn.cursor("held", withhold=True)
        # a server-side cursor within its transaction streams as usual
        conn.cursor().executemany(
            "INSERT INTO t VALUES (%s, %s)", [(i, str(i)) for i in range(250)]
        )
        conn.commit()
        named = conn.cursor("stream")
        named.execute("SELECT id, v FROM t WHERE id < %s", (300,))
        assert sorted(named.fetchall()) == [(i, str(i)) for i in range(250)]
        conn.commit()
        # TimeZone is a parameter PgBouncer sets again on whichever backend runs the next
        # transaction: a SET of it holds across backends
        conn.execute("SET TIME ZONE 'Asia/Tokyo'")
        conn.commit()
        # the backend the client just released is held by the other client (the client's
        # background compaction may take it first and release another one later: again)
        for _ in range(50):
            first = _pid(conn)
            conn.commit()
            if holder.take() == first:
                break
            holder.release()
        assert _pid(conn) != first
        assert conn.execute("SHOW TimeZone").fetchone() == ("Asia/Tokyo",)
        conn.commit()
        holder.release()
    finally:
        holder.close()
        conn.close()


# -- the suites ----------------------------------------------------------------------------


def test_differential_suite_through_the_pooler(
    transaction_bouncer: PgBouncer, new_database: Any, master_key: Any
) -> None:
    """The differential suite's reads, aggregates and writes -- with the peels they need,
    run by this client through the pooler -- equal plain PostgreSQL's, while another
    client's transactions keep moving the statements between the two backends."""
    plain = psycopg.connect(new_database("pgb_plain"), autocommit=True)
    server_dsn = new_database("pgb_enc")
    dsn = transaction_bouncer.dsn(server_dsn)
    enc = adaptive_client.connect(
        dsn, master_key=master_key, config=CONFIG, peel="server", autocommit=True
    )
    noise = Noise(dsn)
    try:
        for stmt in DDL:
            plain.execute(stmt)
            enc.execute(stmt)
        with plain.cursor() as cur:
            cur.executemany(INSERT_DEPT, dept_rows())
            cur.executemany(INSERT_EMP, emp_rows())
        with enc.transaction():
            cur = enc.cursor()
            cur.executemany(INSERT_DEPT, dept_rows())
            cur.executemany(INSERT_EMP, emp_rows())
        mine: set[int] = set()
        mismatches = []
        for n, q in enumerate(queries() + client_aggregates()):
            if n % 10 == 0:
                mine.add(_pid(enc))
            try:
                expected, got = run_both(plain, enc, q)
            except psycopg.Error as exc:
                mismatches.append((q.sql, f"{type(exc).__name__}: {exc}"))
                continue
            if expected != got:
                mismatches.append((q.sql, f"expected {expected[:3]}... got {got[:3]}..."))
        assert not mismatches, "\n".join(f"{s}\n    {m}" for s, m in mismatches)
        for q in dml():
            plain.execute(q.sql, q.params or None)
            enc.execute(q.sql, q.params or None)
        for table in ("emp", "dept"):
            expected, got = run_both(plain, enc, Q(f"SELECT * FROM {table} ORDER BY id", (), True))
            assert expected == got, f"{table} differs after DML"
        # (and, whatever the other client's timing, once more with the last backend held)
        holder = Holder(dsn)
        mine.add(_pid(enc))
        holder.take()
        mine.add(_pid(enc))
        holder.close()
        assert len(mine) == POOL_SIZE, mine  # the client's statements ran on both backends
        with psycopg.connect(server_dsn) as c:
            peels = c.execute("SELECT count(*) FROM adaptive.peel_log").fetchone()
            assert peels is not None and peels[0] >= 10
            # nothing of a session left behind: no advisory lock held, no setting changed
            locks = c.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database = "
                "(SELECT oid FROM pg_database WHERE datname = current_database())"
            )
            assert locks.fetchone() == (0,)
    finally:
        noise.close()
        enc.close()
        plain.close()
    _no_session_settings_left(dsn, server_dsn)


def _no_session_settings_left(dsn: str, server_dsn: str) -> None:
    """Each backend of the pool shows the server's settings, not one of the client's."""
    jit = _server_setting(server_dsn, "jit")
    first, second = psycopg.connect(dsn), psycopg.connect(dsn)
    try:
        pids = {_pid(first), _pid(second)}
        assert len(pids) == POOL_SIZE
        for conn in (first, second):
            settings = conn.execute(
                "SELECT current_setting('jit'), current_setting('client_connection_check_interval')"
            ).fetchone()
            assert settings == (jit, "0"), settings
    finally:
        first.close()
        second.close()


def _server_setting(dsn: str, name: str) -> str:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute("SELECT reset_val FROM pg_settings WHERE name = %s", (name,)).fetchone()
    assert row is not None
    return str(row[0])


def test_builds_copy_savepoints_errors_serials(
    transaction_bouncer: PgBouncer, new_database: Any, master_key: Any
) -> None:
    plain = psycopg.connect(new_database("pgb_items_plain"), autocommit=True)
    server_dsn = new_database("pgb_items")
    dsn = transaction_bouncer.dsn(server_dsn)
    enc = adaptive_client.connect(dsn, master_key=master_key, config=ON_DEMAND)
    other = adaptive_client.connect(dsn, master_key=master_key, config=ON_DEMAND)
    holder = Holder(dsn)
    try:
        for conn in (plain, enc):
            conn.execute(ITEM_DDL)
            with conn.cursor().copy("COPY item (id, name, price, added, qty) FROM STDIN") as copy:
                for row in ITEM_ROWS:
                    copy.write_row(row)
            conn.commit()
        # onions built on first use, through the pooler, answers as plain's
        for query, _ in ITEM_QUERIES:
            assert enc.execute(query).fetchall() == plain.execute(query).fetchall(), query
            enc.commit()
        with psycopg.connect(server_dsn) as c:
            builds = c.execute("SELECT count(*) FROM adaptive.peel_log WHERE mode = 'build'")
            assert builds.fetchone()[0] >= 2
        # COPY out, decrypted
        with enc.cursor().copy("COPY (SELECT id, name FROM item ORDER BY id) TO STDOUT") as copy:
            out = list(copy.rows())
        assert [(int(i), n) for i, n in out] == [(r[0], r[1]) for r in ITEM_ROWS]
        enc.commit()
        # savepoints, an error and the transaction's state after it, each transaction on
        # another backend than the last
        enc.execute("CREATE TABLE ledger (id serial PRIMARY KEY, item integer, note text)")
        enc.commit()
        cur = enc.cursor()
        pids = set()
        for attempt in range(4):
            pids.add(_pid(enc))
            cur.execute("INSERT INTO ledger (item, note) VALUES (%s, %s)", (attempt, "kept"))
            cur.execute("SAVEPOINT s")
            cur.execute("INSERT INTO ledger (item, note) VALUES (%s, %s)", (attempt, "undone"))
            with pytest.raises(psycopg.errors.UniqueViolation):
                cur.execute("INSERT INTO item (id) VALUES (%s)", (1,))
            with pytest.raises(psycopg.errors.InFailedSqlTransaction):
                cur.execute("SELECT count(*) FROM ledger")
            cur.execute("ROLLBACK TO SAVEPOINT s")
            cur.execute("SELECT currval('ledger_id_seq')")  # (the client's answer)
            (current,) = cur.fetchone()
            enc.commit()
            (holder.take if attempt % 2 == 0 else holder.release)()
        holder.release()
        assert len(pids) == POOL_SIZE
        rows = enc.execute("SELECT id, item, note FROM ledger ORDER BY id").fetchall()
        enc.commit()
        assert [(r[1], r[2]) for r in rows] == [(i, "kept") for i in range(4)]
        ids = [r[0] for r in rows]
        assert ids == sorted(ids) and len(set(ids)) == 4 and current == max(ids) + 1
        # a failed COMMIT is a rollback
        cur.execute("INSERT INTO ledger (item, note) VALUES (%s, %s)", (9, "lost"))
        with pytest.raises(psycopg.errors.UniqueViolation):
            cur.execute("INSERT INTO item (id) VALUES (%s)", (2,))
        enc.commit()
        assert enc.execute("SELECT count(*) FROM ledger WHERE item = 9").fetchone() == (0,)
        enc.commit()
        # another client's DDL and peels reach this one without LISTEN
        other.execute("ALTER TABLE ledger ADD COLUMN amount integer")
        other.execute("INSERT INTO ledger (item, note, amount) VALUES (%s, %s, %s)", (5, "x", 7))
        other.commit()
        got = enc.execute("SELECT item, amount FROM ledger WHERE amount > %s", (3,)).fetchall()
        assert got == [(5, 7)]
        enc.commit()
        other.execute("SELECT id FROM ledger WHERE note = %s", ("kept",)).fetchall()  # a peel
        other.commit()
        got = enc.execute("SELECT count(*) FROM ledger WHERE note = %s", ("kept",)).fetchall()
        assert got == [(4,)]
        enc.commit()
        assert enc.catalog.epoch == other.catalog.epoch
    finally:
        holder.close()
        other.close()
        enc.close()
        plain.close()


# the conformance entries run through the transaction pooler: integers, numbers, text on
# a C and an ICU database, jsonb, and timestamptz under every DateStyle x TimeZone -- two
# parameters PgBouncer sets again on whichever backend runs the next transaction
CONFORMANCE = ("int4", "numeric", "text", "jsonb", "timestamptz")


def test_conformance_through_the_pooler(
    transaction_bouncer: PgBouncer, new_database: Any, master_key: Any
) -> None:
    """The conformance suite's checks (tests/conformance) of a few column types, the
    encrypted database reached through the transaction pooler while another client's
    transactions keep moving its statements between the backends."""
    with _conformance_modules():
        import conformance_runner
        from test_conformance import ENTRIES
        from test_conformance import test_conformance as conformance_check

    class PooledPair(conformance_runner.Pair):
        def both(self, sql: str) -> None:
            # the runner resets IntervalStyle to the server's default before it reads the
            # values back; behind a transaction pooler a session SET of it is refused
            # (PgBouncer does not carry it), and it is that default already
            if sql != "SET IntervalStyle = 'postgres'":
                super().both(sql)

    encrypted: list[str] = []

    def databases(name: str, locale: str = "") -> str:
        dsn = new_database(name, locale=locale)
        if name.endswith("_e"):
            encrypted.append(transaction_bouncer.dsn(dsn))
            return encrypted[-1]
        return dsn

    opened: dict[str, Any] = {}
    closers: list[Iterator[Any]] = []
    noises: list[Noise] = []

    def pairs(locale: str) -> Any:
        if locale not in opened:
            gen = conformance_runner.open_pair(
                databases,
                master_key,
                f"pgb_conf_{locale}",
                "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"
                if locale == "ICU"
                else "",
            )
            pair = next(gen)
            assert pair.enc.pooling.transaction
            pair.__class__ = PooledPair
            opened[locale] = pair
            closers.append(gen)
            noises.append(Noise(encrypted[-1]))  # (PgBouncer pools per database)
        return opened[locale]

    try:
        entries = [e for e in ENTRIES if e.name in CONFORMANCE]
        assert len(entries) == len(CONFORMANCE)
        for entry in entries:
            conformance_check(entry, pairs)
    finally:
        for noise in noises:
            noise.close()
        for gen in closers:
            next(gen, None)
    assert all(len(noise.pids) == POOL_SIZE for noise in noises)


@contextlib.contextmanager
def _conformance_modules() -> Iterator[None]:
    """The conformance suite's modules importable (they import each other by their
    directory's names)."""
    where = str(Path(__file__).parents[1] / "conformance")
    sys.path.insert(0, where)
    try:
        yield
    finally:
        sys.path.remove(where)


def test_tpcc_through_the_pooler(pg_cluster: str, new_database: Any, master_key: Any) -> None:
    """A short TPC-C run of three clients through the transaction pooler (the pooler
    detected: the DSN is a plain one): no error, and consistent afterwards.  The pool
    sized as docs/poolers.md says, above the transactions running at once: with two
    server connections for three clients, a client whose transaction needs its control
    session (an onion built on first use) waits for one held by another's transaction,
    until PgBouncer's query_wait_timeout fails it (08P01)."""
    _require_pgbouncer()
    bouncer = PgBouncer(pg_cluster, TRANSACTION_PORTS, "transaction", 2 * 3)
    try:
        _tpcc_through(bouncer, new_database, master_key)
    finally:
        bouncer.stop()


def _tpcc_through(transaction_bouncer: PgBouncer, new_database: Any, master_key: Any) -> None:
    server_dsn = new_database("pgb_tpcc")
    dsn = transaction_bouncer.dsn(server_dsn)
    conn = driver.open_connection("adaptive", dsn, master_key.hex(), "read committed")
    assert conn.pooling.transaction
    load(conn, 1, TINY)
    conn.close()
    spec = driver.RunSpec(
        config="adaptive",
        dsn=dsn,
        clients=3,
        duration=8,
        warmup=5,
        warehouses=1,
        master_key=master_key.hex(),
        scale=TINY,
    )
    result = driver.run(spec, log=lambda m: None)
    assert result["tpmC"] > 0 and not result["errors"], result["errors"]
    assert result["peels"]["warmup"] > 0
    conn = driver.open_connection("adaptive", dsn, master_key.hex(), "repeatable read")
    assert check(conn) == []
    conn.close()


# -- session mode --------------------------------------------------------------------------


def test_session_pooler_allows_session_state(
    session_bouncer: PgBouncer, new_database: Any, master_key: Any
) -> None:
    """Behind a session pooler (told so) a connection keeps its backend: prepared
    statements (the direct path), session settings and LISTEN are the client's as on a
    direct connection, and the answers are plain PostgreSQL's."""
    plain = psycopg.connect(new_database("pgb_s_plain"), autocommit=True)
    server_dsn = new_database("pgb_s_enc")
    dsn = session_bouncer.dsn(server_dsn)
    enc = adaptive_client.connect(
        f"{dsn} pool_mode=session", master_key=master_key, config=CONFIG, autocommit=True
    )
    holder = Holder(dsn)
    try:
        assert enc.pooling.prepare and not enc.pooling.transaction
        for stmt in DDL:
            plain.execute(stmt)
            enc.execute(stmt)
        with plain.cursor() as cur:
            cur.executemany(INSERT_DEPT, dept_rows())
            cur.executemany(INSERT_EMP, emp_rows())
        with enc.transaction():
            cur = enc.cursor()
            cur.executemany(INSERT_DEPT, dept_rows())
            cur.executemany(INSERT_EMP, emp_rows())
        for q in queries()[:40]:
            expected, got = run_both(plain, enc, q)
            assert expected == got, q.sql
        enc.execute("SET statement_timeout = '20s'")
        enc.execute("LISTEN app_events")
        first = _pid(enc)
        holder.take()
        for _ in range(8):
            enc.execute("SELECT name FROM emp WHERE id = %s", (3,)).fetchall()
        assert _pid(enc) == first
        assert enc.execute("SHOW statement_timeout").fetchone() == ("20s",)
        assert enc.pg._prepared._names, "repeated statements are prepared"
        holder.release()
    finally:
        holder.close()
        enc.close()
        plain.close()
