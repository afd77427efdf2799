"""bench/statement_profile.py runs end to end on a tiny TPC-C pair (plain and encrypted):
it prints, for the label asked, every category and a positive total for both, and the
summary.  The figures themselves are a benchmark's (docs/performance.md), not asserted:
timings on a shared machine are not a test."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tpcc import driver
from tpcc.load import TINY, load

BENCH = Path(__file__).parents[2] / "bench" / "statement_profile.py"
ROOT = BENCH.parents[1]


@pytest.mark.slow  # (about 30 s: five worker processes, two under the profiler)
def test_statement_profile_splits_a_label_into_its_categories(
    new_database: Any, master_key: Any
) -> None:
    dsns = {}
    for config in ("plain", "encrypted"):
        dsns[config] = str(new_database(f"sprof_{config[0]}"))
        conn = driver.open_connection(config, dsns[config], master_key.hex(), "read committed")
        load(conn, 1, TINY)
        conn.close()
    env = dict(os.environ, ADAPTIVE_MASTER_KEY=master_key.hex())
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH),
            "--labels",
            "no.item",
            "--n",
            "100",
            "--rounds",
            "1",
            "--warmup",
            "5",
            # (py-spy stops the worker for each sample: where a stop costs a fraction of a
            # millisecond, the default 2,000 a second would stop it most of the time)
            "--rate",
            "250",
            "--dsn",
            dsns["encrypted"],
            "--plain-dsn",
            dsns["plain"],
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    table = out.split("summary:")[0]
    assert table.startswith("no.item: ")
    # every category the client spends time in is a row; libpq's is always there
    rows = dict(re.findall(r"^  ([a-z][a-z ]+?)\s{2,}([\d.]+)\s", table, re.M))
    assert "libpq calls and waiting" in rows
    assert set(rows) <= {*_categories(), "total"}
    total = re.search(r"^  total\s+([\d.]+)\s+([\d.]+)", table, re.M)
    assert total is not None and float(total[1]) > 0 and float(total[2]) > 0
    assert sum(float(v) for k, v in rows.items() if k != "total") == pytest.approx(
        float(total[1]), abs=0.1 * len(rows)
    )
    summary = out.split("summary:")[1].splitlines()
    assert "libpq" in summary[1] and "total" in summary[1]
    assert summary[2].split()[0] == "no.item" and float(summary[2].split()[-3]) > 0


def _categories() -> tuple[str, ...]:
    sys.path.insert(0, str(BENCH.parent))
    try:
        import statement_profile
    finally:
        sys.path.remove(str(BENCH.parent))
    return statement_profile.CATEGORIES
