"""TPC-C throughput under emulated WAN latency: adaptive and encrypted against plain.

    python bench/tpcc_latency.py [--clients 10] [--duration 60] [--latencies 0,60]
                                 [--rounds 3] [--kept-latencies 0]
                                 [--scale small] [--out results/bench-tpcc]
    python bench/tpcc_latency.py --results results/demo   # figures of an earlier sweep

One `adaptive-tpcc sweep` of the three configurations (1 warehouse, the same clients,
duration and latencies for all; each point in ``--rounds`` interleaved rounds, the
configurations in turn, so that a drift of the machine's speed moves them alike), then
the ratios the performance targets name:
adaptive/plain throughput at 60 ms (>= 0.90) and at 0 ms (>= 0.75), encrypted/plain at
60 ms (>= 0.95), and the response-time overhead of the adaptive order-line INSERT over
plain's at 60 ms (<= 10%).  Throughput ratios come with a rough 95% interval (counts
taken as Poisson); the full report is written next to the results.

The last line gives the four figures.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tpcc.cli import KEPT, plain_statements_option
from tpcc.driver import variant

INSERT = "no.insert_order_line"


def _runs(folder: Path) -> dict[tuple[str, float], dict[str, Any]]:
    out = {}
    for f in folder.glob("*-c*-l*.json"):
        r = json.loads(f.read_text())
        out[(variant(r), float(r["latency_ms"]))] = r
    return out


def _ratio(
    runs: dict[tuple[str, float], dict[str, Any]], config: str, lat: float, base: str = "plain"
) -> str:
    a, p = runs.get((config, lat)), runs.get((base, lat))
    if not a or not p or not p["tpm"]:
        return "n/a"
    na, np_ = sum(a["committed"].values()), sum(p["committed"].values())
    ratio = a["tpm"] / p["tpm"]
    err = 1.96 * ratio * (1 / max(na, 1) + 1 / max(np_, 1)) ** 0.5
    return f"{ratio:.2f} ± {err:.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", default="10")
    ap.add_argument("--duration", type=float, default=60)
    ap.add_argument("--latencies", default="0,60")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds per point")
    ap.add_argument(
        "--kept-latencies",
        default="",
        help="latencies at which plain also runs with the kept statement rule (plain-kept)",
    )
    ap.add_argument("--scale", default="small", choices=("tiny", "small", "full"))
    ap.add_argument("--out", default="results/bench-tpcc")
    plain_statements_option(ap)
    ap.add_argument(
        "--results", type=Path, help="read the figures from this sweep's folder, run nothing"
    )
    args = ap.parse_args()
    if args.results is None:
        _sweep(args)
    _figures(args.results or Path(args.out))


def _sweep(args: argparse.Namespace) -> None:
    cli = [sys.executable, "-m", "tpcc.cli"]
    subprocess.run(
        [
            *cli,
            "sweep",
            "--configs",
            "plain,encrypted,adaptive",
            "--latencies",
            args.latencies,
            "--clients",
            args.clients,
            "--duration",
            str(args.duration),
            "--warmup",
            "5",
            "--warehouses",
            "1",
            "--scale",
            args.scale,
            "--out",
            args.out,
            "--reload",  # templates loaded by this code, not by an earlier version
            "--plain-statements",
            args.plain_statements,
            "--rounds",
            str(args.rounds),
            "--kept-latencies",
            args.kept_latencies,
        ],
        check=True,
    )
    subprocess.run([*cli, "report", args.out], check=True)


def _figures(folder: Path) -> None:
    runs = _runs(folder)
    if not runs:
        sys.exit(f"no sweep results in {folder}")
    lats = sorted({lat for _, lat in runs})
    for lat in lats:
        kept = (
            f"; against plain-kept: adaptive {_ratio(runs, 'adaptive', lat, KEPT)}, "
            f"encrypted {_ratio(runs, 'encrypted', lat, KEPT)}"
            if (KEPT, lat) in runs
            else ""
        )
        print(
            f"{lat:>5g} ms: adaptive/plain {_ratio(runs, 'adaptive', lat)}, "
            f"encrypted/plain {_ratio(runs, 'encrypted', lat)}{kept}"
        )
    a, p = runs.get(("adaptive", 60.0)), runs.get(("plain", 60.0))
    overhead = "n/a"
    if a and p and INSERT in a["statements"] and INSERT in p["statements"]:
        mean_a, mean_p = a["statements"][INSERT]["mean_ms"], p["statements"][INSERT]["mean_ms"]
        overhead = f"{100 * (mean_a / mean_p - 1):+.1f}%"
    print(
        f"adaptive/plain tpm: 60 ms {_ratio(runs, 'adaptive', 60.0)} (>= 0.90), "
        f"0 ms {_ratio(runs, 'adaptive', 0.0)} (>= 0.75); encrypted/plain 60 ms "
        f"{_ratio(runs, 'encrypted', 60.0)} (>= 0.95); order-line INSERT overhead at 60 ms "
        f"{overhead} (<= 10%)"
    )


if __name__ == "__main__":
    main()
