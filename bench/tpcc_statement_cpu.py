"""Client CPU per TPC-C statement in the mix, under contention: adaptive client vs psycopg.

    python bench/tpcc_statement_cpu.py [--configs encrypted,adaptive] [--clients 10]
                                       [--duration 30] [--rounds 2] [--scale small]
                                       [--warehouses 1] [--plain-statements kept]

For plain and each configuration in turn, ``--rounds`` times interleaved (plain, the
others, plain, ...: a drift of the machine's speed moves them alike), ``--clients``
terminals (processes) run the TPC-C mix for ``--duration`` seconds against the
databases a sweep left (``tpcc_<config>_<scale>_w<n>_run``: run ``adaptive-tpcc sweep``
at those settings first), each run on a fresh copy of its template (the primed one for
adaptive), as the sweep runs (``--no-fresh``: on the database the runs before grew).
Each statement's client CPU (``time.process_time`` around it: the process's own user
and system time; the server's work and the waits are excluded) is summed per statement
label, the attempts rolled back included -- a statement that failed counts
under its label with a ``!`` -- and the rollbacks apart.  Printed per configuration, the
labels that cost the most: executions per committed transaction, µs per execution and
that as a multiple of plain psycopg's, ms per committed transaction.  Plain runs once
more after the last round, and each configuration's round is also given as a multiple
of the mean of plain's rounds on either side of it (a steady drift of the machine's
speed cancels there), with the median and range of those ratios.  With one client
it shows what a statement costs in the mix; with many, what contention adds to it.

The server's CPU over the same measured interval is printed beside the client's, per
committed transaction (the embedded cluster's processes: its backends, those that exited
counted in the postmaster's children's time, and its background workers), so that what
encryption costs each side of the connection can be weighed: at zero latency on shared
cores, throughput follows the sum.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import statistics
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tpcc_client_cpu import _dsn

from tpcc.cli import (
    _cluster_dsn,
    _exists,
    _recreate,
    master_key,
    plain_statements_option,
    template_name,
    without_autovacuum,
)
from tpcc.driver import _retryable, open_connection
from tpcc.load import SCALES
from tpcc.rand import TpccRandom
from tpcc.transactions import Terminal, pick

# seconds of each terminal's run not counted: plans compiled, statements prepared.  Ten
# terminals on two cores compile their statements slowly, and the rare transactions'
# texts come late: at 5 s about a tenth of the client's CPU in the measured interval was
# still compilation (the count each run prints says what is left)
WARMUP = 20.0


def _terminal(args: tuple[str, str, int, str, float, float, str, int, float]) -> dict[str, Any]:
    config, dsn, index, scale, start, duration, rule, warehouses, warmup = args
    conn = open_connection(config, dsn, master_key(), "repeatable read", rule)
    cpu: dict[str, float] = defaultdict(float)
    runs: dict[str, int] = defaultdict(int)
    counting = False

    @contextlib.contextmanager
    def timer(label: str) -> Iterator[None]:
        t0 = time.process_time()
        failed = False
        try:
            yield
        except BaseException:
            failed = True
            raise
        finally:
            if counting:
                key = label + "!" if failed else label
                cpu[key] += time.process_time() - t0
                runs[key] += 1

    term = Terminal(
        w_id=1 + index % warehouses,
        warehouses=warehouses,
        rand=TpccRandom(1000 + index),
        scale=SCALES[scale],
        timer=timer,
    )
    committed = 0
    compiled_before: int | None = None  # (the client's compilations when counting began)
    while time.time() < start:
        time.sleep(0.005)
    end = start + warmup + duration
    while (now := time.time()) < end:
        counting = now >= start + warmup
        if counting and compiled_before is None:
            compiled_before = _compilations(conn)
        name = pick(term.rand)
        state = term.rand.rng.getstate()
        for _attempt in range(50):
            try:
                ok = getattr(term, name)(conn)
            except Exception as exc:
                t0 = time.process_time()
                with contextlib.suppress(Exception):
                    conn.rollback()
                if counting:
                    cpu["rollback"] += time.process_time() - t0
                    runs["rollback"] += 1
                if not _retryable(exc):
                    raise
                term.rand.rng.setstate(state)
                continue
            if counting and ok and time.time() <= end:
                committed += 1
            break
    compiled = _compilations(conn) - (compiled_before or 0)
    conn.close()
    return {"cpu": dict(cpu), "runs": dict(runs), "committed": committed, "compiled": compiled}


def _compilations(conn: Any) -> int:
    """How many statements the client's connection has compiled (0 for psycopg's)."""
    stats = getattr(conn, "stats", None)
    return int(getattr(stats, "compilations", 0))


def _server_cpu() -> float | None:
    """Seconds of CPU the embedded cluster has used so far: the postmaster's own and its
    exited children's (``cutime``/``cstime``), and every live child's; None where the
    cluster is not this machine's embedded one."""
    from adaptive_client.admin.embedded import EmbeddedCluster

    try:
        pid = int((EmbeddedCluster.default().datadir / "postmaster.pid").read_text().split()[0])
        procs = {int(p) for p in os.listdir("/proc") if p.isdigit()}
    except (OSError, ValueError, IndexError):
        return None
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for proc in procs:
        try:
            fields = Path(f"/proc/{proc}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # (exited since the listing)
        # after the command: state, ppid, ..., utime [11], stime, cutime, cstime [14]
        if proc == pid:
            total += sum(int(f) for f in fields[11:15])
        elif int(fields[1]) == pid:
            total += int(fields[11]) + int(fields[12])
    return total / tick


def _fresh_copy(dsn: str, config: str, args: argparse.Namespace) -> None:
    """``dsn``'s database made again as a copy of the template the sweep left (the
    primed one for adaptive), without autovacuum, as the sweep runs it: every run starts
    from the same database, not from the one the runs before it grew."""
    name = template_name(config, args.scale, args.warehouses)
    template = _cluster_dsn(name)
    primed = _cluster_dsn(f"{name}_primed")
    if config == "adaptive" and _exists(primed):
        template = primed
    _recreate(dsn, template=template)
    without_autovacuum(dsn)


def _run(config: str, args: argparse.Namespace) -> dict[str, Any]:
    dsn = _dsn(config, args.scale, args.warehouses)
    if args.fresh:
        _fresh_copy(dsn, config, args)
    start = time.time() + 2.0
    jobs = [
        (
            config,
            dsn,
            i,
            args.scale,
            start,
            args.duration,
            args.plain_statements,
            args.warehouses,
            args.warmup,
        )
        for i in range(args.clients)
    ]
    server: float | None = None
    with multiprocessing.get_context("spawn").Pool(args.clients) as pool:
        pending = pool.map_async(_terminal, jobs)
        # sampled at the terminals' measured interval's ends (their warm-up excluded)
        time.sleep(max(0.0, start + args.warmup - time.time()))
        before = _server_cpu()
        time.sleep(max(0.0, start + args.warmup + args.duration - time.time()))
        after = _server_cpu()
        if before is not None and after is not None:
            server = after - before
        parts = pending.get()
    cpu: dict[str, float] = defaultdict(float)
    runs: dict[str, int] = defaultdict(int)
    for part in parts:
        for k, v in part["cpu"].items():
            cpu[k] += v
        for k, n in part["runs"].items():
            runs[k] += n
    return {
        "cpu": cpu,
        "runs": runs,
        "committed": sum(p["committed"] for p in parts),
        "compiled": sum(p["compiled"] for p in parts),
        "server": server,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", default="encrypted,adaptive")
    ap.add_argument("--clients", type=int, default=10)
    ap.add_argument("--duration", type=float, default=30.0)
    ap.add_argument("--warmup", type=float, default=WARMUP, help="seconds of each run not measured")
    ap.add_argument("--scale", default="small", choices=sorted(SCALES))
    ap.add_argument("--warehouses", type=int, default=1)
    plain_statements_option(ap)
    ap.set_defaults(plain_statements="kept")  # (this bench compares like with like)
    ap.add_argument("--top", type=int, default=8, help="labels shown per configuration")
    ap.add_argument(
        "--rounds",
        type=int,
        default=2,
        help="runs of each configuration, interleaved (plain, the others, plain, ...) so "
        "that a drift of the machine's speed moves every configuration alike; summed",
    )
    ap.add_argument(
        "--no-fresh",
        dest="fresh",
        action="store_false",
        help="run on the databases as the runs before left them (grown, their dead rows "
        "not vacuumed), not on a fresh copy of the template each run",
    )
    args = ap.parse_args()
    configs = ["plain", *args.configs.split(",")]
    results: dict[str, dict[str, Any]] = {}
    per_round: dict[str, list[float]] = defaultdict(list)
    server: dict[str, list[float]] = defaultdict(list)  # seconds, commits: per round
    for _round in range(args.rounds):
        for c in configs:
            part = _run(c, args)
            per_round[c].append(_per_commit(part))
            if part["server"] is not None:
                server[c].append(part["server"] / max(part["committed"], 1))
            total = results.setdefault(
                c,
                {
                    "cpu": defaultdict(float),
                    "runs": defaultdict(int),
                    "committed": 0,
                    "compiled": 0,
                },
            )
            total["compiled"] += part["compiled"]
            for k, v in part["cpu"].items():
                total["cpu"][k] += v
            for k, n in part["runs"].items():
                total["runs"][k] += n
            total["committed"] += part["committed"]
    # plain once more, so that every other configuration's round has plain's on both
    # sides: compared with their mean, a steady drift of the machine cancels
    per_round["plain"].append(_per_commit(_run("plain", args)))
    plain = results["plain"]
    for config in configs:
        r = results[config]
        n = max(r["committed"], 1)
        total = sum(r["cpu"].values())
        rounds = ", ".join(f"{x * 1e3:.2f}" for x in per_round[config])
        ratio = total / n / (sum(plain["cpu"].values()) / max(plain["committed"], 1))
        print(
            f"{config}: {args.clients} clients, {r['committed']} committed, "
            f"client CPU in statements and rollbacks {total / n * 1e3:.2f} ms per commit "
            f"({ratio:.2f}x plain; by round {rounds})"
        )
        if config != "plain":
            print("  " + _bracketed(per_round[config], per_round["plain"]))
            print(f"  statements compiled in the measured intervals: {r['compiled']}")
        if server[config] and server["plain"]:
            mean = sum(server[config]) / len(server[config])
            base = sum(server["plain"]) / len(server["plain"])
            by_round = ", ".join(f"{x * 1e3:.2f}" for x in server[config])
            print(
                f"  server CPU {mean * 1e3:.2f} ms per commit ({mean / base:.2f}x plain; "
                f"by round {by_round})"
            )
        print(f"  {'label':<26} {'per commit':>10} {'us each':>8} {'x plain':>8} {'ms/commit':>10}")
        for label in sorted(r["cpu"], key=lambda k: -r["cpu"][k])[: args.top]:
            each = r["cpu"][label] / r["runs"][label]
            base = plain["cpu"].get(label)
            ratio = f"{each / (base / plain['runs'][label]):.2f}" if base else "-"
            print(
                f"  {label:<26} {r['runs'][label] / n:>10.2f} {each * 1e6:>8.1f} {ratio:>8} "
                f"{r['cpu'][label] / n * 1e3:>10.3f}"
            )


def _per_commit(part: dict[str, Any]) -> float:
    """Client CPU seconds per committed transaction of one run."""
    return sum(part["cpu"].values()) / max(part["committed"], 1)


def _bracketed(rounds: list[float], plain: list[float]) -> str:
    """Each round's CPU per commit over the mean of plain's rounds just before and just
    after it (plain ran first in every round and once after the last): the ratios by
    round, their median and range."""
    ratios = [r / ((plain[i] + plain[i + 1]) / 2) for i, r in enumerate(rounds)]
    shown = ", ".join(f"{x:.2f}" for x in ratios)
    return (
        f"x plain by round, against plain's rounds on either side: {shown} "
        f"(median {statistics.median(ratios):.2f}, range {min(ratios):.2f}-{max(ratios):.2f})"
    )


if __name__ == "__main__":
    main()
