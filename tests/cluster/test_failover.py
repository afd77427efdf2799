"""Failover under load: pg_auto_failover's primary lost in the middle of a TPC-C run
through the client, with a peel in flight.

A formation of a monitor, a primary and a synchronous standby (auto_failover.py); the
applications name both nodes in one multi-host DSN with ``target_session_attrs=
read-write``, as on a hosted service's failover pair.  Four TPC-C terminals run through
the client, two on connections of their own (opened again when lost), two on the
client's pool (which drops a broken connection and opens new ones); a fifth connection
asks for two peels the workload never needed: one commits, the other is held just
before its commit (another session holds ``adaptive.epoch``'s row, which a peel updates
last); then the primary's keeper and postmaster are killed (``SIGKILL``: the machine
lost).  The monitor promotes the standby; every terminal reconnects and goes on.

What must hold afterwards:

* **no committed transaction lost**: every NewOrder whose ``commit()`` returned is in the
  new primary's ``orders`` (each identified by its key), and the Payments' ``history``
  rows number the commits seen -- plus, at most, those whose commit was in doubt (sent,
  and the connection lost before the answer: committed or not, as with any database);
* TPC-C's consistency conditions hold (``adaptive-tpcc check``);
* the peel committed before the loss is on the new primary (synchronous replication);
  the peel in flight is absent (its transaction never committed): the onion is at its
  old layer, the sealed metadata and the column agree, every other layer is as it was,
  every column of every table reads back; asked again, the peel runs on the new primary
  and the answer is right;
* what the terminals saw of the failover were the errors applications retry: the
  client's DB-API ``OperationalError`` (psycopg's: "server closed the connection
  unexpectedly", or its subclass ``AdminShutdown`` when the server said it was going)
  for the transaction each had in progress (a terminal on the pool that had no
  connection borrowed sees none: the pool drops the broken one itself), and
  serialization failures (40001,
  ``SerializationFailure`` -- also an ``OperationalError`` in DB-API's terms -- and the
  client's retryable errors, its subclasses) -- nothing else.
"""

from __future__ import annotations

import contextlib
import io
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.admin.controls import layers_report
from adaptive_client.catalog.install import install
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.dbapi.pool import ConnectionPool
from tpcc import cli as tpcc_cli
from tpcc.driver import ISOLATION, config_file
from tpcc.load import TINY, load
from tpcc.rand import TpccRandom
from tpcc.schema import TABLES
from tpcc.transactions import MIX, Terminal, pick

from .auto_failover import Formation
from .own_servers import free_ports

pytestmark = pytest.mark.slow

#: the monitor's and the nodes' ports: the first three free in a row from one of these
#: (the test's ports: 54450-54469)
PORT_RUNS = (54450, 54455, 54460, 54465)
DBNAME = "tpcc"
CLIENTS = 4
WARMUP_S, AFTER_S = 3.0, 5.0
#: peels the TPC-C workload never needs (customer.c_state's and c_city's Eq onions, RND
#: -> DET): the first committed just before the primary is lost, the second in flight
COMMITTED_PEEL = "SELECT count(*) FROM customer WHERE c_state = %s"
PEEL_QUERY = "SELECT count(*) FROM customer WHERE c_city = %s"

RETRYABLE = (
    psycopg.errors.SerializationFailure,  # the client's RetryableError among them
    psycopg.errors.DeadlockDetected,
    psycopg.errors.LockNotAvailable,
)


def connect(dsn: str, key: MasterKey, autocommit: bool = False) -> Any:
    conn = adaptive_client.connect(
        dsn, master_key=key, config=config_file("adaptive"), autocommit=autocommit
    )
    if not autocommit:
        conn.isolation_level = ISOLATION["repeatable read"]
    return conn


def reconnect(dsn: str, key: MasterKey, deadline: float, autocommit: bool = False) -> Any:
    """A new connection to whichever node accepts writes, retried until ``deadline``."""
    while True:
        try:
            return connect(dsn, key, autocommit)
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@dataclass
class Ledger:
    """What one terminal's application saw of its commits: the NewOrders (by key) and
    Payments whose ``commit()`` returned, and those whose ``commit()`` lost the
    connection (in doubt)."""

    orders: set[tuple[int, int, int]] = field(default_factory=set)
    payments: int = 0
    doubtful_orders: set[tuple[int, int, int]] = field(default_factory=set)
    doubtful_payments: int = 0
    commits: Counter[str] = field(default_factory=Counter)
    commits_after_failover: int = 0
    errors: Counter[str] = field(default_factory=Counter)  # error type -> times seen
    unexpected: list[str] = field(default_factory=list)


class Recording:
    """The connection a terminal's transactions run on, recording what each writes of
    interest (a NewOrder's key, a Payment's history row) until its commit settles it."""

    def __init__(self, conn: Any, ledger: Ledger) -> None:
        self.conn, self.ledger = conn, ledger
        self.order: tuple[int, int, int] | None = None
        self.payment = False

    def cursor(self) -> Any:
        return RecordingCursor(self.conn.cursor(), self)

    def commit(self) -> None:
        order, payment = self.order, self.payment
        self.order, self.payment = None, False
        try:
            self.conn.commit()
        except RETRYABLE:  # refused: rolled back
            raise
        except psycopg.OperationalError:  # the connection lost: committed or not, in doubt
            if order:
                self.ledger.doubtful_orders.add(order)
            self.ledger.doubtful_payments += payment
            raise
        if order:
            self.ledger.orders.add(order)
        self.ledger.payments += payment

    def rollback(self) -> None:
        self.order, self.payment = None, False
        self.conn.rollback()

    def __enter__(self) -> Recording:
        return self

    def __exit__(self, exc_type: Any, *_: Any) -> None:
        """A transaction that failed is rolled back (the connection's own exit would
        commit a pooled one's, had it not failed)."""
        if exc_type is not None:
            self.order, self.payment = None, False
            with contextlib.suppress(psycopg.Error):
                self.conn.rollback()


class RecordingCursor:
    def __init__(self, cur: Any, owner: Recording) -> None:
        self.cur, self.owner = cur, owner

    def execute(self, query: str, params: tuple[Any, ...] = ()) -> Any:
        if query.startswith("INSERT INTO orders "):
            o, d, w = params[0], params[1], params[2]
            self.owner.order = (w, d, o)
        elif query.startswith("INSERT INTO history "):
            self.owner.payment = True
        return self.cur.execute(query, params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.cur, name)


class Direct:
    """A terminal's own connection, opened again when it is lost."""

    def __init__(self, dsn: str, key: MasterKey) -> None:
        self.dsn, self.key = dsn, key
        self.conn = connect(dsn, key)

    @contextlib.contextmanager
    def borrow(self) -> Iterator[Any]:
        yield self.conn

    def lost(self) -> None:
        with contextlib.suppress(psycopg.Error):
            self.conn.close()
        self.conn = reconnect(self.dsn, self.key, time.monotonic() + 60)

    def close(self) -> None:
        with contextlib.suppress(psycopg.Error):
            self.conn.close()


class Pooled:
    """A connection borrowed from the client's pool for each transaction: a broken one is
    dropped when it comes back, and the pool opens new ones (on the multi-host DSN)."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool

    @contextlib.contextmanager
    def borrow(self) -> Iterator[Any]:
        with self.pool.connection(timeout=60) as conn:
            conn.isolation_level = ISOLATION["repeatable read"]
            yield conn

    def lost(self) -> None:
        pass

    def close(self) -> None:
        pass


def terminal(index: int, source: Direct | Pooled, stop: threading.Event,
             failed_over: threading.Event, ledger: Ledger) -> None:  # fmt: skip
    """One TPC-C terminal: the standard mix back to back; a retryable error retries the
    transaction with the same inputs, a lost connection after a new one."""
    term = Terminal(w_id=1, warehouses=1, rand=TpccRandom(100 + index), scale=TINY)
    try:
        while not stop.is_set():
            name = pick(term.rand)
            state = term.rand.rng.getstate()
            for _attempt in range(200):
                try:
                    with source.borrow() as conn, Recording(conn, ledger) as recording:
                        ok = getattr(term, name)(recording)
                except Exception as exc:
                    ledger.errors[type(exc).__name__] += 1
                    # (class 40 is an OperationalError too, in DB-API's terms: first)
                    if isinstance(exc, RETRYABLE):
                        pass
                    elif isinstance(exc, psycopg.OperationalError):
                        source.lost()
                    else:
                        ledger.unexpected.append(f"{name}: {type(exc).__mro__[:3]}: {exc}")
                        break
                    term.rand.rng.setstate(state)  # the same inputs again
                    continue
                if ok:
                    ledger.commits[name] += 1
                    ledger.commits_after_failover += failed_over.is_set()
                break
    finally:
        source.close()


@dataclass
class Setup:
    formation: Formation
    key: MasterKey
    dsn: str


@pytest.fixture(scope="module")
def tpcc_formation() -> Iterator[Setup]:
    monitor, *nodes = free_ports(PORT_RUNS, 3)
    formation = Formation(monitor, (nodes[0], nodes[1]), DBNAME)
    try:
        formation.start()
        with psycopg.connect(formation.dsn("node1"), autocommit=True) as c:
            for ext in ("plpython3u", "pgcrypto"):
                c.execute(f"CREATE EXTENSION IF NOT EXISTS {ext}")
        with psycopg.connect(formation.dsn("node1")) as c:
            install(c)
        formation.add_standby()
        key = MasterKey.generate()
        dsn = formation.multi_host_dsn()
        conn = connect(dsn, key)
        conn.isolation_level = ISOLATION["read committed"]
        load(conn, 1, TINY)
        # every peel and build the workload needs, before the run (as adaptive-tpcc's
        # priming does)
        term = Terminal(w_id=1, warehouses=1, rand=TpccRandom(7), scale=TINY)
        for name in [n for _ in range(3) for n, _w in MIX]:
            getattr(term, name)(conn)
        conn.close()
        yield Setup(formation, key, dsn)
    finally:
        formation.destroy()


def onion_row(conn: psycopg.Connection[Any], key: MasterKey, table: str, column: str,
              onion: str) -> Any:  # fmt: skip
    (row,) = [
        r
        for r in layers_report(conn, key)
        if (r.table, r.column, r.onion) == (table, column, onion)
    ]
    return row


def wait_for_peel_blocked(dsn: str, timeout: float = 30) -> None:
    """Until a session waits for the epoch row: the peel, its UPDATE done, uncommitted."""
    deadline = time.monotonic() + timeout
    with psycopg.connect(dsn, autocommit=True) as c:
        while True:
            (waiting,) = c.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND query LIKE '%%peel_layer%%'"
            ).fetchone()
            if waiting:
                return
            assert time.monotonic() < deadline, "the peel never reached the epoch"
            time.sleep(0.05)


def test_primary_lost_mid_tpcc(tpcc_formation: Setup, monkeypatch: pytest.MonkeyPatch) -> None:
    formation, key, dsn = tpcc_formation.formation, tpcc_formation.key, tpcc_formation.dsn
    with connect(dsn, key) as c:
        before_orders = set(c.execute("SELECT o_w_id, o_d_id, o_id FROM orders").fetchall())
        (before_history,) = c.execute("SELECT count(*) FROM history").fetchone()
        cities = [r[0] for r in c.execute("SELECT c_city FROM customer").fetchall()]
        states = [r[0] for r in c.execute("SELECT c_state FROM customer").fetchall()]
        c.commit()
    with psycopg.connect(formation.dsn("node1")) as raw:
        layers_before = {(r.table, r.column, r.onion): r.layer for r in layers_report(raw, key)}
        assert onion_row(raw, key, "customer", "c_city", "Eq").layer == "RND"
        assert onion_row(raw, key, "customer", "c_state", "Eq").layer == "RND"
        layers_before[("customer", "c_state", "Eq")] = "DET"  # peeled below

    stop, failed_over = threading.Event(), threading.Event()
    ledgers = [Ledger() for _ in range(CLIENTS)]
    # half the terminals on connections of their own, half on the client's pool
    pool = ConnectionPool(
        dsn, master_key=key, config=config_file("adaptive"), min_size=2, max_size=2, open=True
    )
    sources = [Direct(dsn, key) if i % 2 == 0 else Pooled(pool) for i in range(CLIENTS)]
    threads = [
        threading.Thread(target=terminal, args=(i, sources[i], stop, failed_over, ledgers[i]))
        for i in range(CLIENTS)
    ]
    for t in threads:
        t.start()
    peel_errors: list[BaseException] = []
    try:
        time.sleep(WARMUP_S)
        peeling = connect(dsn, key, autocommit=True)
        # a peel committed (synchronously replicated) just before the primary is lost
        assert peeling.execute(COMMITTED_PEEL, (states[0],)).fetchone() == (
            states.count(states[0]),
        )
        # the peel in flight: held before its last step by a session holding the epoch
        blocker = psycopg.connect(formation.dsn("node1"))
        blocker.execute("SELECT value FROM adaptive.epoch WHERE id = 1 FOR UPDATE")

        def peel() -> None:
            try:
                peeling.execute(PEEL_QUERY, (cities[0],)).fetchall()
            except BaseException as exc:
                peel_errors.append(exc)

        peeler = threading.Thread(target=peel)
        peeler.start()
        wait_for_peel_blocked(formation.dsn("node1"))
        killed_at = time.monotonic()
        formation.kill_node("node1")
        peeler.join(timeout=30)
        with contextlib.suppress(psycopg.Error):
            blocker.close()
        formation.wait_writable("node2", timeout=60)
        failover_s = time.monotonic() - killed_at
        failed_over.set()
        time.sleep(AFTER_S)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=120)
        pool.close()
    assert not any(t.is_alive() for t in threads)

    # the peel's connection saw the connection lost, nothing else
    assert len(peel_errors) == 1 and isinstance(peel_errors[0], psycopg.OperationalError), (
        peel_errors
    )
    unexpected = [u for ledger in ledgers for u in ledger.unexpected]
    assert not unexpected, unexpected
    errors = sum((ledger.errors for ledger in ledgers), Counter())
    # every terminal on a connection of its own lost it once (a pooled one may have had
    # none borrowed when the primary went: the pool drops the broken connection as it
    # resets it, unseen), and every terminal went on on the new primary
    lost = [
        ledger.errors["OperationalError"] + ledger.errors["AdminShutdown"] for ledger in ledgers
    ]
    assert all(n >= 1 for n, src in zip(lost, sources, strict=True) if isinstance(src, Direct)), [
        dict(ledger.errors) for ledger in ledgers
    ]
    assert all(ledger.commits_after_failover > 0 for ledger in ledgers), [
        ledger.commits_after_failover for ledger in ledgers
    ]

    with connect(dsn, key) as c:
        # no committed transaction lost
        after_orders = set(c.execute("SELECT o_w_id, o_d_id, o_id FROM orders").fetchall())
        (after_history,) = c.execute("SELECT count(*) FROM history").fetchone()
        new_orders = after_orders - before_orders
        seen = set().union(*(ledger.orders for ledger in ledgers))
        doubtful = set().union(*(ledger.doubtful_orders for ledger in ledgers))
        # every NewOrder whose commit returned is there; any other was in doubt
        assert seen <= new_orders, sorted(seen - new_orders)
        assert new_orders <= seen | doubtful, sorted(new_orders - seen - doubtful)
        payments = sum(ledger.payments for ledger in ledgers)
        doubtful_payments = sum(ledger.doubtful_payments for ledger in ledgers)
        assert payments <= after_history - before_history <= payments + doubtful_payments
        c.commit()
    # TPC-C's consistency conditions, as `adaptive-tpcc check` reads them
    monkeypatch.setenv("ADAPTIVE_MASTER_KEY", key.hex())
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert tpcc_cli.main(["check", "--config", "adaptive", "--dsn", dsn]) == 0, out.getvalue()
    assert out.getvalue().strip() == "consistent"

    # the peel in flight never committed: absent on the new primary, its column whole
    with psycopg.connect(formation.dsn("node2")) as raw:
        row = onion_row(raw, key, "customer", "c_city", "Eq")
        layers_after = {(r.table, r.column, r.onion): r.layer for r in layers_report(raw, key)}
        table, column = row.stored_as.split(".")
        (not_rnd,) = raw.execute(
            f'SELECT count(*) FROM "{table}" WHERE get_byte("{column}"::bytea, 0) <> 1'
        ).fetchone()
    assert row.layer == "RND" and not_rnd == 0
    # every other layer as before the loss, the peel committed just before it included
    assert layers_after == layers_before
    with connect(dsn, key, autocommit=True) as c:
        for name in TABLES:
            c.execute(f"SELECT * FROM {name}").fetchall()
        # asked again, the peel runs on the new primary
        assert c.execute(PEEL_QUERY, (cities[0],)).fetchone() == (cities.count(cities[0]),)
    with psycopg.connect(formation.dsn("node2")) as raw:
        assert onion_row(raw, key, "customer", "c_city", "Eq").layer == "DET"

    total = sum((ledger.commits for ledger in ledgers), Counter())
    print(
        f"\nfailover in {failover_s:.1f} s; commits seen {dict(total)}, after the failover "
        f"{sum(ledger.commits_after_failover for ledger in ledgers)}; NewOrders seen "
        f"{len(seen)}, in the database {len(new_orders)}, in doubt {len(doubtful)}; "
        f"errors {dict(errors)}, per terminal {[dict(ledger.errors) for ledger in ledgers]}"
    )
