"""psycopg_pool pools of adaptive connections under load, while another client peels the
columns the load reads: every answer equal to a plain database's, no error.

20 threads share a ConnectionPool of 5 connections (200 asyncio tasks an
AsyncConnectionPool of 5); the statements touch every column with equality and range
predicates, so the first uses peel them -- in the pool's connections or in the other
client's -- and each pooled connection must pick the new layers up from the
notifications.  Run for a few seconds by default; for 30 seconds in the slow suite.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import random
import threading
import time
from decimal import Decimal
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.dbapi.pool import AsyncConnectionPool, AsyncPoolConnection, ConnectionPool

DDL = (
    "CREATE TABLE acct (id integer PRIMARY KEY, a integer, b integer, c bigint, "
    "d numeric(10,2), e varchar(20), f varchar(20), g date, h date)"
)
N = 300


def _rows() -> list[tuple[Any, ...]]:
    return [
        (
            i,
            i % 17,
            (i * 7) % 101,
            i * 1000 - 50_000,
            Decimal(i * 37 % 1000) / 10,
            f"e{i % 11}",
            f"f{(i * 3) % 23:02d}",
            dt.date(2024, 1, 1) + dt.timedelta(days=i % 200),
            dt.date(2020, 1, 1) + dt.timedelta(days=(i * 13) % 900),
        )
        for i in range(1, N + 1)
    ]


# (statement, parameters, ordered): every column with equality and range predicates
QUERIES: list[tuple[str, tuple[Any, ...], bool]] = [
    ("SELECT * FROM acct WHERE id = %s", (17,), False),
    ("SELECT id, b FROM acct WHERE a = %s", (5,), False),
    ("SELECT id FROM acct WHERE a > %s AND a <= %s", (10, 12), False),
    ("SELECT id, a FROM acct WHERE b = %s", (49,), False),
    ("SELECT id FROM acct WHERE b < %s ORDER BY b, id", (9,), True),
    ("SELECT id FROM acct WHERE c = %s", (120_000,), False),
    ("SELECT id FROM acct ORDER BY c DESC LIMIT 5", (), True),
    ("SELECT id FROM acct WHERE d = %s", (Decimal("3.7"),), False),
    ("SELECT id, d FROM acct WHERE d BETWEEN %s AND %s", (Decimal(10), Decimal(15)), False),
    ("SELECT id FROM acct WHERE e = %s", ("e3",), False),
    ("SELECT count(*) FROM acct WHERE e = ANY(%s)", (["e1", "e2"],), False),
    ("SELECT id FROM acct WHERE f = %s", ("f07",), False),
    ("SELECT id, f FROM acct WHERE f >= %s ORDER BY f, id LIMIT 10", ("f20",), True),
    ("SELECT id FROM acct WHERE g = %s", (dt.date(2024, 2, 1),), False),
    ("SELECT id FROM acct WHERE g < %s", (dt.date(2024, 1, 10),), False),
    ("SELECT id, h FROM acct WHERE h > %s ORDER BY h, id LIMIT 7", (dt.date(2022, 6, 1),), True),
    ("SELECT a, count(*) FROM acct GROUP BY a ORDER BY a", (), True),
    ("SELECT max(b), min(g) FROM acct", (), False),
]


def _answer(rows: list[tuple[Any, ...]], ordered: bool) -> list[tuple[Any, ...]]:
    return list(rows) if ordered else sorted(rows, key=repr)


@pytest.fixture()
def loaded(dsn_pair: tuple[str, str], master_key: MasterKey) -> tuple[str, list[Any]]:
    """The encrypted database loaded (all onions at their strongest layers) and the
    plain database's answers to QUERIES."""
    plain_dsn, enc_dsn = dsn_pair
    rows = _rows()
    with psycopg.connect(plain_dsn) as plain:
        plain.execute(DDL)
        with plain.cursor() as cur:
            cur.executemany("INSERT INTO acct VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)", rows)
        oracle = [_answer(plain.execute(q, p).fetchall(), o) for q, p, o in QUERIES]
    with adaptive_client.connect(enc_dsn, master_key=master_key) as enc:
        enc.execute(DDL)
        enc.cursor().executemany(
            "INSERT INTO acct VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)", rows
        )
    return enc_dsn, oracle


def _peeler(dsn: str, key: MasterKey, duration: float, stop: threading.Event) -> int:
    """Another client: runs the statements one by one, spread over the run, each peeling
    the layers it needs on first use."""
    peels = 0
    with adaptive_client.connect(dsn, master_key=key, autocommit=True) as conn:
        order = list(range(len(QUERIES)))
        random.Random(7).shuffle(order)
        for i in order:
            if stop.wait(duration / (len(QUERIES) + 2)):
                break
            before = conn.stats.peels
            q, p, _ = QUERIES[i]
            conn.execute(q, p).fetchall()
            peels += conn.stats.peels - before
    return peels


DURATIONS = [4.0, pytest.param(30.0, marks=pytest.mark.slow)]
MINIMUM = 20 * 5  # requests the pool's twenty threads answer between them


@pytest.mark.parametrize("duration", DURATIONS)
def test_thread_pool_under_peels(
    loaded: tuple[str, list[Any]], master_key: MasterKey, duration: float
) -> None:
    dsn, oracle = loaded
    errors: list[BaseException] = []
    wrong: list[Any] = []
    done = [0]
    lock = threading.Lock()
    stop = threading.Event()
    deadline = time.monotonic() + duration
    # (at least MINIMUM requests answered, however slow the machine: past the duration
    # the workers go on until then, a hang stopped by the watchdog's deadline)
    watchdog = deadline + 120

    with ConnectionPool(dsn, master_key=master_key, min_size=5, max_size=5, timeout=60) as pool:

        def worker(seed: int) -> None:
            rnd = random.Random(seed)
            while not errors and time.monotonic() < watchdog:
                if time.monotonic() >= deadline and done[0] > MINIMUM:
                    break
                i = rnd.randrange(len(QUERIES))
                q, p, ordered = QUERIES[i]
                try:
                    with pool.connection() as conn:
                        got = _answer(conn.execute(q, p).fetchall(), ordered)
                except BaseException as exc:
                    errors.append(exc)
                    return
                with lock:
                    done[0] += 1
                    if got != oracle[i]:
                        wrong.append((q, p, got, oracle[i]))

        threads = [threading.Thread(target=worker, args=(s,)) for s in range(20)]
        for t in threads:
            t.start()
        _peeler(dsn, master_key, duration, stop)
        for t in threads:
            t.join()
        stop.set()
        stats = pool.get_stats()
    assert not errors, errors[:3]
    assert not wrong, wrong[:3]
    assert done[0] > MINIMUM
    assert stats["pool_max"] == 5
    # every column was peeled during the run, by the pool's connections or the peeler
    with adaptive_client.connect(dsn, master_key=master_key) as conn:
        layers = {
            (t.name, c.name, o.value): oc.layer
            for t in conn.catalog.tables.values()
            for c in t.columns.values()
            for o, oc in c.onions.items()
        }
    assert layers[("acct", "a", "Eq")] == "DET" and layers[("acct", "h", "Ord")] == "OPE"


@pytest.mark.parametrize("duration", DURATIONS)
def test_async_pool_under_peels(
    loaded: tuple[str, list[Any]], master_key: MasterKey, duration: float
) -> None:
    dsn, oracle = loaded

    async def main() -> tuple[int, list[Any]]:
        wrong: list[Any] = []
        done = 0
        deadline = time.monotonic() + duration
        pool = AsyncConnectionPool(dsn, master_key=master_key, min_size=5, max_size=5, timeout=60)
        async with pool:

            async def task(seed: int) -> None:
                nonlocal done
                rnd = random.Random(seed)
                while time.monotonic() < deadline:
                    i = rnd.randrange(len(QUERIES))
                    q, p, ordered = QUERIES[i]
                    async with pool.connection() as conn:
                        assert isinstance(conn, AsyncPoolConnection)
                        cur = await conn.execute(q, p)
                        got = _answer(await cur.fetchall(), ordered)
                    done += 1
                    if got != oracle[i]:
                        wrong.append((q, p, got, oracle[i]))

            stop = threading.Event()
            peeler = asyncio.to_thread(_peeler, dsn, master_key, duration, stop)
            await asyncio.gather(peeler, *(task(s) for s in range(200)))
            stop.set()
        return done, wrong

    done, wrong = asyncio.run(main())
    assert not wrong, wrong[:3]
    assert done > 200
