"""Client CPU per TPC-C transaction: the adaptive client against plain psycopg, in one run.

    python bench/tpcc_client_cpu.py [--configs encrypted,adaptive] [--transactions 2000]
                                    [--scale small] [--warehouses 1]

One terminal per configuration runs the TPC-C mix (the driver's transactions, the same
random stream for every configuration) against the databases a sweep left
(``tpcc_<config>_<scale>_w<n>_run``: run ``adaptive-tpcc sweep`` at those settings
first), in alternating chunks so that other load on the machine affects all alike.  Time
is the CPU time of this process (``time.process_time``, user and system): the server's
work and the waits are excluded, what is left is what each client spends per transaction
-- at 0 ms latency, with the server on the same processors, it bounds throughput.  Last
line: the ratios configuration/plain.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import psycopg

from tpcc.cli import master_key
from tpcc.driver import ISOLATION, open_connection
from tpcc.load import SCALES
from tpcc.rand import TpccRandom
from tpcc.transactions import Terminal, pick

CHUNK = 50


def _dsn(config: str, scale: str, warehouses: int) -> str:
    """The run database a sweep at these settings left (named after its template)."""
    from adaptive_client.admin.embedded import EmbeddedCluster

    return str(EmbeddedCluster.default().dsn(f"tpcc_{config}_{scale}_w{warehouses}_run"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", default="encrypted,adaptive")
    ap.add_argument("--transactions", type=int, default=2000)
    ap.add_argument("--scale", default="small", choices=sorted(SCALES))
    ap.add_argument("--warehouses", type=int, default=1)
    ap.add_argument("--isolation", default="repeatable read", choices=sorted(ISOLATION))
    ap.add_argument(
        "--dsn-template", default=None, help="DSN with {config} in it (default: embedded cluster)"
    )
    args = ap.parse_args()
    configs = ["plain", *args.configs.split(",")]
    key = master_key()
    state: dict[str, dict[str, Any]] = {}
    for config in configs:
        dsn = (
            args.dsn_template.format(config=config)
            if args.dsn_template
            else _dsn(config, args.scale, args.warehouses)
        )
        conn = open_connection(config, dsn, key, args.isolation)
        term = Terminal(
            w_id=1, warehouses=args.warehouses, rand=TpccRandom(7), scale=SCALES[args.scale]
        )
        state[config] = {"conn": conn, "term": term, "cpu": [], "done": 0, "retries": 0}
    for config in configs:  # warm-up: plans compiled, statements prepared
        _chunk(state[config], 100)
        state[config]["cpu"].clear()
    done = 0
    while done < args.transactions:
        for config in configs:
            _chunk(state[config], CHUNK)
        done += CHUNK
    plain = statistics.median(state["plain"]["cpu"])
    print(f"{'configuration':<12} {'CPU ms/txn (median of chunks)':>30} {'retries':>8}")
    for config in configs:
        s = state[config]
        print(f"{config:<12} {statistics.median(s['cpu']) * 1000:>30.3f} {s['retries']:>8}")
    print(
        "client CPU per transaction vs plain: "
        + ", ".join(f"{c} {statistics.median(state[c]['cpu']) / plain:.2f}x" for c in configs[1:])
    )


def _chunk(s: dict[str, Any], n: int) -> None:
    conn, term = s["conn"], s["term"]
    t0 = time.process_time()
    for _ in range(n):
        name = pick(term.rand)
        st = term.rand.rng.getstate()
        for _attempt in range(20):
            try:
                getattr(term, name)(conn)
                break
            except psycopg.errors.SerializationFailure:
                conn.rollback()
                term.rand.rng.setstate(st)
                s["retries"] += 1
    s["cpu"].append((time.process_time() - t0) / n)


if __name__ == "__main__":
    main()
