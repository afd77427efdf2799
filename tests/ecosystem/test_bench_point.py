"""bench/sqlalchemy_point.py: a point SELECT through SQLAlchemy Core costs at most 1.5
times as much on the encrypted database (postgresql+adaptive://) as on a plain one
(postgresql+psycopg://).  Timings on a shared machine are noisy: the best of five runs
(each already the median of alternating rounds)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).parents[2] / "bench" / "sqlalchemy_point.py"


@pytest.mark.slow
def test_point_select_within_one_and_a_half_of_plain(pg_cluster: str) -> None:
    ratios = []
    for _ in range(5):
        done = subprocess.run(
            [
                sys.executable,
                str(BENCH),
                "--dsn",
                pg_cluster,
                "--rows",
                "3000",
                "--queries",
                "2000",
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        ratios.append(float(re.findall(r"ratio ([\d.]+)", done.stdout)[-1]))
        if ratios[-1] <= 1.5:
            break
    assert min(ratios) <= 1.5, ratios
