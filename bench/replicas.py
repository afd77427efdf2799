"""Read-only TPC-C on streaming standbys: the adaptive client against plain psycopg.

    python bench/replicas.py [--standbys 0,1,2,3] [--terminals 4] [--seconds 10]
                             [--rounds 3] [--scale small] [--port 54410]

A primary and three streaming standbys of the benchmark's own (the embedded cluster's
code, as ``adaptive-db up --standbys 3`` starts them) under a temporary directory on
``--port`` and the three ports after it (or the next free run), stopped and removed at
the end.  One TPC-C warehouse is loaded twice on the primary: plain, and through the client with the
adaptive configuration (peeled to what the workload needs before timing, the peels
replayed by the standbys).

The workload: OrderStatus and StockLevel, half and half, each a READ ONLY transaction
(REPEATABLE READ), from ``--terminals`` processes, each with one connection.  Through
the client, the connection has ``replicas=`` the first N standbys and ``read_only``
set: each transaction runs on one standby, round robin.  Plain psycopg gets the same
routing: a connection to each of the N standbys, one transaction on each in turn.
N = 0 is the reference: both on the primary, no standbys.
For each N in ``--standbys``, ``--rounds`` rounds alternate plain and client for
``--seconds`` each, so that other load on the machine moves both alike.

Printed: committed transactions per second per round (with the terminals' own CPU time
per transaction, and the statements each server answered for the client), then per N
the medians, the ratio client/plain (the target: at least 0.9 at each N) and each
side's scaling against its own rate on one standby.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import secrets
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from scratch import scratch

import adaptive_client
from adaptive_client.admin.embedded import EmbeddedCluster, free_ports, watchdog
from tpcc.driver import config_file
from tpcc.load import SCALES, Scale, load
from tpcc.rand import TpccRandom
from tpcc.transactions import Terminal

WORKLOAD = ("order_status", "stock_level")
WARMUP = 20  # transactions per terminal before the clock starts (statements prepared)


def _open(variant: str, dsn: str, standbys: list[str], key: str) -> Any:
    """A terminal's connection: the client's with the standbys as replicas, or plain
    psycopg's to each standby."""
    if variant == "client":
        conn = adaptive_client.connect(
            dsn, master_key=key, config=config_file("adaptive"), replicas=standbys or None
        )
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        conn.read_only = True
        return [conn]
    conns = []
    for s in standbys or [dsn]:
        c = psycopg.connect(s)
        c.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        c.read_only = True
        conns.append(c)
    return conns


def _terminal(
    variant: str,
    dsn: str,
    standbys: list[str],
    key: str,
    scale: Scale,
    index: int,
    seconds: float,
    start: Any,
    out: Any,
) -> None:
    conns = _open(variant, dsn, standbys, key)
    term = Terminal(w_id=1, warehouses=1, rand=TpccRandom(1000 + index), scale=scale)
    n = 0

    def one() -> bool:
        nonlocal n
        conn = conns[n % len(conns)]  # (the client's router picks the standby itself)
        kind = WORKLOAD[(n + index) % 2]
        n += 1
        try:
            return bool(getattr(term, kind)(conn))
        except psycopg.errors.SerializationFailure:
            conn.rollback()
            return False

    for _ in range(WARMUP):
        one()
    start.wait()
    done = 0
    cpu = time.process_time()
    stop = time.perf_counter() + seconds
    while time.perf_counter() < stop:
        done += one()
    cpu = time.process_time() - cpu
    router = getattr(conns[0], "replicas", None)
    answered = router.answered() if router is not None else {}
    for c in conns:
        c.close()
    out.put((done, answered, cpu))


def measure(
    variant: str, dsn: str, standbys: list[str], key: str, scale: Scale, args: Any
) -> tuple[float, dict[str, int], float]:
    """Committed transactions per second of ``--terminals`` processes for ``--seconds``,
    the statements each server answered, and the terminals' CPU ms per transaction."""
    ctx = mp.get_context("fork")
    start = ctx.Barrier(args.terminals)
    out = ctx.Queue()
    procs = [
        ctx.Process(
            target=_terminal,
            args=(variant, dsn, standbys, key, scale, i, args.seconds, start, out),
        )
        for i in range(args.terminals)
    ]
    for p in procs:
        p.start()
    results = [out.get(timeout=args.seconds + 300) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    answered: dict[str, int] = {}
    for _, a, _ in results:
        for k, v in a.items():
            answered[k] = answered.get(k, 0) + v
    done = sum(r[0] for r in results)
    cpu_ms = 1000 * sum(r[2] for r in results) / max(done, 1)
    return done / args.seconds, answered, cpu_ms


def prepare(primary: EmbeddedCluster, key: str, scale: Scale) -> tuple[str, str]:
    """The plain and the adaptive TPC-C databases, the adaptive one peeled."""
    admin = primary.dsn("postgres")
    plain = scratch(admin, "bench_replicas_plain", with_schema=False)
    adaptive = scratch(admin, "bench_replicas_adaptive")
    for dsn in (plain, adaptive):
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("CREATE EXTENSION IF NOT EXISTS plpython3u")
            c.execute("CREATE EXTENSION IF NOT EXISTS pgcrypto")
    t0 = time.perf_counter()
    with psycopg.connect(plain) as conn:
        load(conn, 1, scale)
        conn.commit()
    with adaptive_client.connect(adaptive, master_key=key, config=config_file("adaptive")) as c:
        load(c, 1, scale)
        c.commit()
        term = Terminal(w_id=1, warehouses=1, rand=TpccRandom(7), scale=scale)
        for _ in range(20):  # (every statement's layers peeled, on the primary)
            for kind in WORKLOAD:
                getattr(term, kind)(c)
    print(f"loaded one warehouse twice ({time.perf_counter() - t0:.0f} s)", flush=True)
    for dsn in (plain, adaptive):
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("VACUUM ANALYZE")
    return plain, adaptive


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--standbys", default="1,2,3")
    ap.add_argument("--terminals", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scale", default="small", choices=sorted(SCALES))
    ap.add_argument("--port", type=int, default=54410)
    args = ap.parse_args()
    counts = [int(x) for x in args.standbys.split(",")]
    scale = SCALES[args.scale]
    key = secrets.token_hex(32)
    root = Path(tempfile.mkdtemp(prefix="adaptive-bench-replicas-"))
    root.chmod(0o755)
    guard = watchdog(root)  # (stops the servers if this process is killed)
    # (the first run of free ports from --port, or from 5 after it)
    port = free_ports((args.port, args.port + 5), max(counts) + 1)
    primary = EmbeddedCluster(root, port=port)
    try:
        primary.up()
        plain, adaptive = prepare(primary, key, scale)
        standbys = primary.up_standbys(max(counts)) if max(counts) else []
        time.sleep(1)
        print(
            f"{args.terminals} terminals, {args.seconds:.0f} s per run, {args.rounds} "
            f"rounds, OrderStatus + StockLevel READ ONLY on the standbys",
            flush=True,
        )
        rates: dict[tuple[str, int], list[float]] = {}
        for n in counts:
            plain_sb = [psycopg.conninfo.make_conninfo(s, dbname=_db(plain)) for s in standbys[:n]]
            adaptive_sb = [
                psycopg.conninfo.make_conninfo(s, dbname=_db(adaptive)) for s in standbys[:n]
            ]
            for r in range(args.rounds):
                p, _, p_cpu = measure("plain", plain, plain_sb, key, scale, args)
                c, answered, c_cpu = measure("client", adaptive, adaptive_sb, key, scale, args)
                rates.setdefault(("plain", n), []).append(p)
                rates.setdefault(("client", n), []).append(c)
                served = ", ".join(
                    f"{'primary' if k == 'primary' else 'port ' + _port(k)}: {v}"
                    for k, v in sorted(answered.items())
                )
                print(
                    f"standbys={n} round {r + 1}: plain {p:8.1f} tx/s  client {c:8.1f} tx/s  "
                    f"ratio {c / p:.2f}  terminal CPU/tx plain {p_cpu:.2f} ms client "
                    f"{c_cpu:.2f} ms  ({served or 'the primary'})",
                    flush=True,
                )
        print()
        first = min((n for n in counts if n), default=counts[0])
        base_p = statistics.median(rates[("plain", first)])
        base_c = statistics.median(rates[("client", first)])
        print("standbys  plain tx/s  client tx/s  client/plain  plain scaling  client scaling")
        for n in counts:
            p = statistics.median(rates[("plain", n)])
            c = statistics.median(rates[("client", n)])
            print(
                f"{n:8d}  {p:10.1f}  {c:11.1f}  {c / p:12.2f}  {p / base_p:13.2f}  "
                f"{c / base_c:14.2f}"
            )
    finally:
        primary.destroy()
        shutil.rmtree(root, ignore_errors=True)
        guard.kill()


def _db(dsn: str) -> str:
    return str(psycopg.conninfo.conninfo_to_dict(dsn)["dbname"])


def _port(dsn: str) -> str:
    return str(psycopg.conninfo.conninfo_to_dict(dsn).get("port", "?"))


if __name__ == "__main__":
    main()
