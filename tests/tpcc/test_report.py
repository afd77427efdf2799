"""A tiny sweep of the three configurations and its report: every point with what it
committed and its consistency check, the ratios with intervals, the chosen statements'
overheads, and Table I per layer beside the study's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
def test_a_sweep_of_three_configurations_is_reported_point_by_point(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    cli = [sys.executable, "-m", "tpcc.cli"]
    sweep = subprocess.run(
        [
            *cli,
            "sweep",
            "--configs",
            "plain,encrypted,adaptive",
            "--clients",
            "2",
            "--latencies",
            "0",
            "--duration",
            "3",
            "--warmup",
            "2",
            "--rounds",
            "2",
            "--kept-latencies",
            "0",
            "--scale",
            "tiny",
            "--out",
            str(out),
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    assert sweep.returncode == 0, sweep.stderr
    points = {f.name: json.loads(f.read_text()) for f in out.glob("*-c2-l0.json")}
    variants = ("plain", "plain-kept", "encrypted", "adaptive")
    assert set(points) == {f"{c}-c2-l0.json" for c in variants}
    assert all(p["consistency"] == [] for p in points.values())
    # each point two rounds of each configuration, merged: the measured seconds add up
    assert all(len(p["rounds"]) == 2 and p["duration_s"] == 3 for p in points.values())
    assert points["plain-kept-c2-l0.json"]["plain_statements"] == "kept"
    assert points["plain-c2-l0.json"]["plain_statements"] == "psycopg"
    # the adaptive points start from a template primed once: they peel nothing themselves
    meta = json.loads((out / "sweep.json").read_text())
    assert meta["primed"]["peels"] > 0
    # the primed template settled: compact beside plain's
    assert meta["database_mb"]["adaptive primed"] <= 3 * meta["database_mb"]["plain"]
    assert points["adaptive-c2-l0.json"]["peels"] == {"warmup": 0, "measured": 0}
    assert all(len(p["revision"]) >= 7 for p in points.values())  # the code each ran

    report = subprocess.run(
        [*cli, "report", str(out)], cwd=root, env=env, capture_output=True, text=True
    )
    assert report.returncode == 0, report.stderr
    md = (out / "report.md").read_text()
    for config, p in points.items():
        committed = sum(p["committed"].values())
        row = f"| {config.removesuffix('-c2-l0.json')} | 2 | 0 | "
        assert any(line.startswith(row) and f" {committed} |" in line for line in md.splitlines())
    assert md.count("| yes |") == 4
    ratio_rows = [line for line in md.splitlines() if line.startswith("| 2 | 0 | ")]
    assert ratio_rows and " ± " in ratio_rows[0]
    assert "adaptive/plain-kept" in md and "Per round (2 rounds" in md  # both baselines
    assert "The primed adaptive template is " in md and "within the bound of 3×" in md
    # the chosen statements: overhead lines, and Table I per layer beside the study's
    assert "| `no.insert_order_line` | 0 | " in md and " % ± " in md
    table1 = [line for line in md.splitlines() if line.startswith("| `no.insert_order_line` | ")]
    rnd = next(line for line in table1 if line.split("|")[2].strip() == "RND")
    cells = [c.strip() for c in rnd.split("|")[1:-1]]
    assert cells[2] == "7E" and cells[3].endswith("E") and cells[5].endswith("E"), cells
    for fig in ("fig5_throughput.png", "fig6_crypto.png", "fig7_select.png", "fig8_insert.png"):
        assert (out / fig).stat().st_size > 0
