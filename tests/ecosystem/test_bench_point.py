"""bench/sqlalchemy_point.py runs end to end: both engines answer every point SELECT, it
reports the ratio on its last line, and it leaves no scratch database behind.  The ratio
itself is a benchmark's figure (README, docs/ecosystem.md), not asserted here: timings on
a shared machine are not a test."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import psycopg

BENCH = Path(__file__).parents[2] / "bench" / "sqlalchemy_point.py"


def _scratch_databases(dsn: str) -> set[str]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute("SELECT datname FROM pg_database WHERE datname LIKE 'bench_sa_%'")
        return {r[0] for r in rows}


def test_point_select_benchmark_runs_and_cleans_up(pg_cluster: str) -> None:
    before = _scratch_databases(pg_cluster)
    done = subprocess.run(
        [sys.executable, str(BENCH), "--dsn", pg_cluster, "--rows", "500", "--queries", "400"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    last = done.stdout.strip().splitlines()[-1]
    ratio = re.fullmatch(r"ratio ([\d.]+) \(median of the rounds' ratios\)", last)
    assert ratio is not None, done.stdout
    assert float(ratio.group(1)) > 0
    assert _scratch_databases(pg_cluster) == before
