"""Client CPU per statement: the adaptive client against plain psycopg, in one run.

    python bench/client_overhead.py [--dsn DSN] [--rows 10000] [--n 3000]

Builds the same table in two scratch databases -- plain, and through the client with the
default onion configuration (every column in all the onions its type supports, Sum
excepted, starting at RND; peeled to what the statements need before timing) -- then
runs each statement ``--n`` times, alternating plain and client in chunks so that other
load on the machine affects both alike.  Time
is CPU time of this process (``time.process_time``): the round trip and the server's
work are excluded, what is left is what the client library adds on the client.

Statements: the repeated point SELECT by primary key (the target), a point SELECT of
several columns, an UPDATE by key, and a single-row INSERT.  Then a large result: the
whole table, four columns, read by plain psycopg, by the client decrypting it a column at
a time (batched calls per layer) and by the client decrypting value by value, in
alternating rounds; per row and as ratios.

Placement.  Each statement is a round trip to a server on the same two cores, and the
CPU time a round trip charges to this process depends on where the scheduler put the
backend: one sharing this process's core preempts it and answers before it sleeps
(cheap), one on the other core wakes it from sleep (dear).  Left to the scheduler, the
two connections' backends land apart -- measured on two cores, plain psycopg's backend
shared the bench's core (0.6 voluntary and 0.4 involuntary context switches a
statement) while the client's sat on the other (1.0 and 0.0), and that alone made an
UPDATE read 2.4x where the same statements run back to back read 1.0x.  So, on a local
server with two cores or more, this process is pinned to one core and both backends to
another (``--no-pin``: left to the scheduler): every statement then wakes this process
once, as it does against a server on another machine, and the context switches a
statement, printed per run, show both connections placed alike.

The whole measurement runs ``--runs`` times (5) in one process; each run's ratios are
printed, then their medians against the targets: point SELECT ≤ 1.25×, UPDATE by key
≤ 1.3×, single-row INSERT ≤ 1.5×, large result ≤ 2× per row.
"""

from __future__ import annotations

import argparse
import os
import resource
import secrets
import statistics
import time
from collections.abc import Callable
from typing import Any

import psycopg

import adaptive_client
from adaptive_client.admin.embedded import EmbeddedCluster
from adaptive_client.catalog.install import install
from adaptive_client.compile import plan

CHUNK = 100
clock = time.process_time

DDL = (
    "CREATE TABLE acct (id integer PRIMARY KEY, owner varchar(40), balance numeric(12,2), "
    "opened date, branch integer)"
)
STATEMENTS: dict[str, tuple[str, Callable[[int, int], tuple[Any, ...]]]] = {
    "point SELECT (1 column)": (
        "SELECT balance FROM acct WHERE id = %s",
        lambda i, n: (i % n + 1,),
    ),
    "point SELECT (4 columns)": (
        "SELECT owner, balance, opened, branch FROM acct WHERE id = %s",
        lambda i, n: (i % n + 1,),
    ),
    "UPDATE by key": (
        "UPDATE acct SET branch = %s WHERE id = %s",
        lambda i, n: (i % 7, i % n + 1),
    ),
    "INSERT one row": (
        "INSERT INTO acct (id, owner, balance, opened, branch) VALUES (%s, %s, %s, %s, %s)",
        lambda i, n: (n + 1 + i, f"owner {i}", i / 100, "2024-01-01", i % 7),
    ),
}
# the medians' targets (client/plain CPU)
TARGETS = {
    "point SELECT (1 column)": 1.25,
    "point SELECT (4 columns)": 1.25,
    "UPDATE by key": 1.3,
    "INSERT one row": 1.5,
    "large result, per row": 2.0,
}


def scratch_database(admin_dsn: str, name: str) -> str:
    with psycopg.connect(admin_dsn, autocommit=True) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{name}"')
        c.execute(f'CREATE DATABASE "{name}"')
    return psycopg.conninfo.make_conninfo(admin_dsn, dbname=name)


def fill(conn: Any, rows: int) -> None:
    cur = conn.cursor()
    cur.execute(DDL)
    data = [(i, f"owner {i}", i / 100, "2024-01-01", i % 7) for i in range(1, rows + 1)]
    cur.executemany("INSERT INTO acct VALUES (%s, %s, %s, %s, %s)", data)
    conn.commit()


def pin(connections: list[Any]) -> bool:
    """This process on one core and the backends of ``connections`` on another (see the
    module's docstring); False where the machine has one core or the server is not
    local (its backends are not this machine's processes)."""
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        return False
    pids = [c.pgconn.backend_pid for c in connections]
    try:
        for pid in pids:
            os.sched_setaffinity(pid, {cores[1]})
    except (PermissionError, ProcessLookupError):
        return False
    os.sched_setaffinity(0, {cores[0]})
    return True


def switches() -> int:
    """Context switches of this process so far (voluntary and involuntary)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_nvcsw + r.ru_nivcsw


def run_chunk(
    conn: Any, sql: str, params: Callable[[int, int], tuple[Any, ...]], start: int, rows: int
) -> float:
    cur = conn.cursor()
    t0 = clock()
    for i in range(start, start + CHUNK):
        cur.execute(sql, params(i, rows))
        if cur.description:
            cur.fetchall()
    conn.commit()
    return clock() - t0


SCAN = "SELECT owner, balance, opened, branch FROM acct"


def time_scan(conn: Any, reps: int, batch_rows: int) -> float:
    plan.BATCH_ROWS = batch_rows  # decrypt_columns reads it on each call
    cur = conn.cursor()
    t0 = clock()
    for _ in range(reps):
        cur.execute(SCAN)
        cur.fetchall()
    conn.commit()
    return clock() - t0


def large_result(
    plain: Any, client: Any, rows: int, rounds: int = 5, reps: int = 4
) -> tuple[float, float]:
    batched = plan.BATCH_ROWS
    time_scan(client, 1, batched)  # peels nothing (decryption only), warms the plan cache
    t = {"plain": 0.0, "batched": 0.0, "per value": 0.0}
    for _ in range(rounds):
        t["plain"] += time_scan(plain, reps, batched)
        t["batched"] += time_scan(client, reps, batched)
        t["per value"] += time_scan(client, reps, 10**12)
    plan.BATCH_ROWS = batched
    per_row = {k: 1e6 * v / (rounds * reps * rows) for k, v in t.items()}
    print(
        f"large result ({rows} rows x 4 columns), us per row: plain {per_row['plain']:.2f}, "
        f"client batched {per_row['batched']:.2f}, client per value {per_row['per value']:.2f}; "
        f"per value / batched {per_row['per value'] / per_row['batched']:.2f}x"
    )
    return per_row["plain"], per_row["batched"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dsn", help="server to use (default: the embedded cluster)")
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--n", type=int, default=3000, help="executions per statement")
    ap.add_argument("--runs", type=int, default=5, help="measurements, their median reported")
    ap.add_argument(
        "--no-pin", action="store_true", help="leave this process and the backends unpinned"
    )
    args = ap.parse_args()
    admin = args.dsn or EmbeddedCluster.default().dsn()
    plain = psycopg.connect(scratch_database(admin, "bench_overhead_plain"))
    key = os.environ.get("ADAPTIVE_MASTER_KEY") or secrets.token_hex(32)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    config = os.path.join(root, "onion_config", "default.toml")
    enc_dsn = scratch_database(admin, "bench_overhead_client")
    with psycopg.connect(enc_dsn, autocommit=True) as c:
        install(c)
    client = adaptive_client.connect(enc_dsn, master_key=key, config=config)
    fill(plain, args.rows)
    fill(client, args.rows)
    local = args.dsn is None
    pinned = local and not args.no_pin and pin([plain, client.pg, client.control])
    print(
        "placement: "
        + (
            "this process on one core, the backends on another"
            if pinned
            else "left to the scheduler"
        )
    )
    ratios: dict[str, list[float]] = {label: [] for label in TARGETS}
    for run in range(args.runs):
        # (each run inserts rows of its own: its INSERTs start past the previous run's)
        offset = run * (args.n + CHUNK)
        results: dict[str, tuple[float, float]] = {}
        for label, (sql, params) in STATEMENTS.items():
            shifted = params if label != "INSERT one row" else _shifted(params, offset)
            if run == 0:
                run_chunk(client, sql, shifted, 0, args.rows)  # peels, warms caches
                run_chunk(plain, sql, shifted, 0, args.rows)
            t_plain = t_client = 0.0
            cs_plain = cs_client = 0
            for start in range(CHUNK, CHUNK + args.n, CHUNK):
                s0 = switches()
                t_plain += run_chunk(plain, sql, shifted, start, args.rows)
                s1 = switches()
                t_client += run_chunk(client, sql, shifted, start, args.rows)
                cs_plain += s1 - s0
                cs_client += switches() - s1
            done = (args.n // CHUNK) * CHUNK
            results[label] = (
                1e6 * t_plain / done,
                1e6 * t_client / done,
                cs_plain / done,
                cs_client / done,
            )
        print(f"run {run + 1} of {args.runs}")
        print(
            f"{'statement':<28}{'plain us':>10}{'client us':>11}{'ratio':>8}"
            f"{'switches/stmt plain':>21}{'client':>8}"
        )
        for label, (p, c, sp, sc) in results.items():
            print(f"{label:<28}{p:>10.1f}{c:>11.1f}{c / p:>8.2f}{sp:>21.2f}{sc:>8.2f}")
            ratios[label].append(c / p)
        p, c = large_result(plain, client, args.rows)
        ratios["large result, per row"].append(c / p)
    print(f"median of {args.runs} runs, client/plain CPU:")
    for label, target in TARGETS.items():
        median = statistics.median(ratios[label])
        verdict = "meets" if median <= target else "misses"
        print(f"  {label:<26}{median:>6.2f}x  ({verdict} the target <= {target}x)")
    plain.close()
    client.close()


def _shifted(
    params: Callable[[int, int], tuple[Any, ...]], offset: int
) -> Callable[[int, int], tuple[Any, ...]]:
    return lambda i, n: params(i + offset, n)


if __name__ == "__main__":
    main()
