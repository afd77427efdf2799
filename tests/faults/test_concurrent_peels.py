"""Rule 2 under load: 8 clients race peels and each other's writes from an all-RND start.

Each client (a thread with its own connection) owns a disjoint range of rows, writes
only those, and filters every read to them with ``owner = me`` -- while all of them read
and write the same encrypted columns, so that the peels every predicate needs (Eq and
Ord of ``owner``, ``a``, ``b``, ``s``) race each other and race the writers.  Because no
one else writes a client's rows, its in-memory model is an exact oracle for every answer,
whatever the interleaving.  Some operations run in explicit READ COMMITTED or REPEATABLE
READ transactions, committed or rolled back, retried on retryable errors (the model
changes only on commit).  Each round uses a fresh table, so its peels race again.

Afterwards every onion column holds values of one layer only -- the one recorded in
``adaptive.layers`` -- and a fresh client decrypts the tables to the models' contents.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import psycopg
import pytest
from psycopg import sql

import adaptive_client
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.catalog.onions import TAGS
from adaptive_client.errors import RetryableError

CLIENTS = 8
ROUNDS = 3
ROUND_SECONDS = 5.0
WORDS = ("red", "green", "blue", "cyan", "gold")
# Clients write disjoint rows, yet a transaction that holds a lock on the table (from an
# earlier statement) can deadlock with peels queued for its ACCESS EXCLUSIVE lock, as with
# any DDL: PostgreSQL aborts one statement with DeadlockDetected (40P01), retryable.  A
# peel of the client's own never surfaces so (tests/client/test_concurrency.py).
RETRYABLE = (
    RetryableError,
    psycopg.errors.SerializationFailure,
    psycopg.errors.DeadlockDetected,
)

pytestmark = pytest.mark.slow

Row = tuple[int, int, str]  # a, b, s


@dataclass
class Client:
    me: int
    table: str
    conn: adaptive_client.Connection
    rng: random.Random
    rows: dict[int, Row] = field(default_factory=dict)
    next_id: int = 0
    checked: int = 0
    retries: int = 0
    failures: list[str] = field(default_factory=list)

    # -- the oracle ----------------------------------------------------------------------
    def expect(self, what: str, got: Any, want: Any) -> None:
        self.checked += 1
        if got != want:
            self.failures.append(f"client {self.me}: {what}: got {got!r}, expected {want!r}")

    def new_row(self) -> tuple[int, Row]:
        self.next_id += 1
        s = f"{self.rng.choice(WORDS)} {self.rng.choice(WORDS)} {self.rng.randrange(100)}"
        return self.me * 100_000 + self.next_id, (
            self.rng.randrange(20),
            self.rng.randrange(1000),
            s,
        )

    # -- operations: each runs its statements and checks them against ``rows`` -----------
    def q(self, text: str) -> str:
        return text.replace("{T}", self.table)

    def insert(self, rows: dict[int, Row]) -> None:
        i, (a, b, s) = self.new_row()
        self.conn.execute(
            self.q("INSERT INTO {T} VALUES (%s, %s, %s, %s, %s)"), (i, self.me, a, b, s)
        )
        rows[i] = (a, b, s)

    def update_a(self, rows: dict[int, Row]) -> None:
        if not rows:
            return
        i = self.rng.choice(sorted(rows))
        a = self.rng.randrange(20)
        cur = self.conn.execute(self.q("UPDATE {T} SET a = %s WHERE id = %s"), (a, i))
        self.expect("update by key rowcount", cur.rowcount, 1)
        rows[i] = (a, *rows[i][1:])

    def add_b(self, rows: dict[int, Row]) -> None:
        k, below = self.rng.randrange(1, 9), self.rng.randrange(20)
        cur = self.conn.execute(
            self.q("UPDATE {T} SET b = b + %s WHERE owner = %s AND a < %s"), (k, self.me, below)
        )
        hit = [i for i, r in rows.items() if r[0] < below]
        self.expect("b = b + k rowcount", cur.rowcount, len(hit))
        for i in hit:
            a, b, s = rows[i]
            rows[i] = (a, b + k, s)

    def delete(self, rows: dict[int, Row]) -> None:
        if len(rows) < 5:
            return
        i = self.rng.choice(sorted(rows))
        cur = self.conn.execute(self.q("DELETE FROM {T} WHERE id = %s"), (i,))
        self.expect("delete rowcount", cur.rowcount, 1)
        del rows[i]

    def read(self, rows: dict[int, Row]) -> None:
        me, r = self.me, self.rng
        kind = r.randrange(7)
        if kind == 0:
            a = r.randrange(20)
            got = sorted(
                self.conn.execute(
                    self.q("SELECT id FROM {T} WHERE owner = %s AND a = %s"), (me, a)
                ).fetchall()
            )
            self.expect("a = ?", got, sorted((i,) for i, x in rows.items() if x[0] == a))
        elif kind == 1:
            lo = r.randrange(20)
            hi = lo + r.randrange(6)
            got = self.conn.execute(
                self.q(
                    "SELECT id, a FROM {T} WHERE owner = %s AND a BETWEEN %s AND %s ORDER BY a, id"
                ),
                (me, lo, hi),
            ).fetchall()
            self.expect(
                "a BETWEEN",
                got,
                sorted(
                    ((i, x[0]) for i, x in rows.items() if lo <= x[0] <= hi),
                    key=lambda t: (t[1], t[0]),
                ),
            )
        elif kind == 2:
            got = self.conn.execute(
                self.q("SELECT COUNT(*), MIN(b), MAX(b) FROM {T} WHERE owner = %s"), (me,)
            ).fetchone()
            bs = [x[1] for x in rows.values()]
            self.expect(
                "count/min/max", got, (len(bs), min(bs, default=None), max(bs, default=None))
            )
        elif kind == 3:
            s = r.choice([x[2] for x in rows.values()]) if rows else "none"
            got = sorted(
                self.conn.execute(
                    self.q("SELECT id FROM {T} WHERE owner = %s AND s = %s"), (me, s)
                ).fetchall()
            )
            self.expect("s = ?", got, sorted((i,) for i, x in rows.items() if x[2] == s))
        elif kind == 4:
            # (only s is selected: rows with equal s may come in any order)
            got = self.conn.execute(
                self.q("SELECT s FROM {T} WHERE owner = %s ORDER BY s LIMIT 5"), (me,)
            ).fetchall()
            self.expect("ORDER BY s LIMIT", got, sorted((x[2],) for x in rows.values())[:5])
        elif kind == 5:
            w = r.choice(WORDS)
            got = sorted(
                self.conn.execute(
                    self.q("SELECT id FROM {T} WHERE owner = %s AND s ~ %s"), (me, rf"\m{w}\M")
                ).fetchall()
            )
            self.expect(
                "word search", got, sorted((i,) for i, x in rows.items() if w in x[2].split())
            )
        else:
            got = sorted(
                self.conn.execute(
                    self.q("SELECT a, COUNT(*) FROM {T} WHERE owner = %s GROUP BY a"), (me,)
                ).fetchall()
            )
            counts: dict[int, int] = {}
            for x in rows.values():
                counts[x[0]] = counts.get(x[0], 0) + 1
            self.expect("GROUP BY a", got, sorted(counts.items()))

    # -- driving -------------------------------------------------------------------------
    def step(self) -> None:
        ops: list[Callable[[dict[int, Row]], None]] = [
            self.insert,
            self.update_a,
            self.add_b,
            self.delete,
            self.read,
            self.read,
            self.read,
        ]
        if self.rng.random() < 0.2:
            self.transaction([self.rng.choice(ops) for _ in range(self.rng.randrange(2, 5))])
            return
        op = self.rng.choice(ops)
        for _ in range(20):
            work = dict(self.rows)
            try:
                op(work)
            except RETRYABLE:
                self.retries += 1
                continue
            self.rows = work
            return
        self.failures.append(f"client {self.me}: {op.__name__} kept failing")

    def transaction(self, ops: list[Callable[[dict[int, Row]], None]]) -> None:
        level = self.rng.choice(
            [psycopg.IsolationLevel.READ_COMMITTED, psycopg.IsolationLevel.REPEATABLE_READ]
        )
        commit = self.rng.random() < 0.8
        saved_id = self.next_id
        self.conn.autocommit = False
        self.conn.isolation_level = level
        try:
            for _ in range(20):
                work = dict(self.rows)
                self.next_id = saved_id if not commit else self.next_id
                try:
                    for op in ops:
                        op(work)
                    if commit:
                        self.conn.commit()
                        self.rows = work
                    else:
                        self.conn.rollback()
                    return
                except RETRYABLE:
                    self.retries += 1
                    self.conn.rollback()
            self.failures.append(f"client {self.me}: a transaction kept failing")
        finally:
            self.conn.autocommit = True


def _layers_are_whole(dsn: str) -> int:
    """Every Eq/Ord onion column holds values of its recorded layer only; return how
    many onion columns were checked."""
    checked = 0
    with psycopg.connect(dsn) as c:
        for table, column, layer in c.execute(
            "SELECT anon_table, anon_column, layer FROM adaptive.layers WHERE onion IN ('Eq', 'Ord')"
        ).fetchall():
            tags = c.execute(
                sql.SQL("SELECT DISTINCT get_byte({c}, 0) FROM {t} WHERE {c} IS NOT NULL").format(
                    c=sql.Identifier(column), t=sql.Identifier(table)
                )
            ).fetchall()
            assert tags in ([], [(TAGS[layer],)]), (column, layer, tags)
            checked += 1
    return checked


def test_eight_clients_race_peels_and_writers(new_database: Any, master_key: MasterKey) -> None:
    dsn = new_database("race")
    setup = adaptive_client.connect(dsn, master_key=master_key, autocommit=True)
    peel_calls = inner_retries = 0  # (each connection counts its own)
    checked = client_retries = 0
    failures: list[str] = []
    models: dict[str, dict[int, tuple[int, int, int, str]]] = {}
    for rnd in range(ROUNDS):
        table = f"shared{rnd}"
        setup.execute(
            f"CREATE TABLE {table} (id integer PRIMARY KEY, owner integer, a integer, b integer, s text)"
        )
        clients = [
            Client(
                k,
                table,
                adaptive_client.connect(dsn, master_key=master_key, autocommit=True),
                random.Random(rnd * 100 + k),
            )
            for k in range(1, CLIENTS + 1)
        ]
        for cl in clients:  # a few rows each, written without any peel (INSERT needs none)
            for _ in range(10):
                i, row = cl.new_row()
                setup.execute(f"INSERT INTO {table} VALUES (%s, %s, %s, %s, %s)", (i, cl.me, *row))
                cl.rows[i] = row
        start = threading.Barrier(CLIENTS)
        end = time.monotonic() + ROUND_SECONDS + 1.0

        def drive(cl: Client, start: threading.Barrier = start, end: float = end) -> None:
            start.wait()
            try:
                while time.monotonic() < end:
                    cl.step()
            except Exception as exc:  # reported with the others, not lost in the thread
                cl.failures.append(f"client {cl.me}: {type(exc).__name__}: {exc}")

        threads = [threading.Thread(target=drive, args=(cl,)) for cl in clients]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
            assert not t.is_alive()
        for cl in clients:
            checked += cl.checked
            client_retries += cl.retries
            peel_calls += cl.conn.stats.peels
            inner_retries += cl.conn.stats.retries
            failures += cl.failures
            models[table] = {
                **models.get(table, {}),
                **{i: (cl.me, *row) for i, row in cl.rows.items()},
            }
            cl.conn.close()
    assert not failures, "\n".join(failures[:10])
    onion_columns = _layers_are_whole(dsn)
    with adaptive_client.connect(dsn, master_key=master_key) as fresh:
        for table, model in models.items():
            rows = fresh.execute(f"SELECT id, owner, a, b, s FROM {table}").fetchall()
            assert {r[0]: tuple(r[1:]) for r in rows} == model
    with psycopg.connect(dsn) as c:
        peels = c.execute("SELECT count(*) FROM adaptive.peel_log").fetchone()[0]  # type: ignore[index]
    setup.close()
    assert peels >= ROUNDS * 6  # Eq and Ord of owner, a, s and Ord of b, every round
    assert peel_calls > peels  # clients raced for the same peels
    print(
        f"operations checked: {checked}; peels: {peels} done, {peel_calls} attempted "
        f"({peel_calls - peels} lost a race); retries: {client_retries} by clients, "
        f"{inner_retries} inside the client; onion columns whole: {onion_columns}"
    )
