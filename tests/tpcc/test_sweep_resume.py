"""A sweep interrupted (SIGINT) and resumed: the finished points are kept and not run
again, the rest run, and the template they all ran on is the same one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SWEEP = [
    sys.executable,
    "-m",
    "tpcc.cli",
    "sweep",
    "--configs",
    "plain",
    "--clients",
    "1",
    "--latencies",
    "0,1,2",
    "--duration",
    "1",
    "--warmup",
    "0",
    "--scale",
    "tiny",
    "--warehouses",
    "1",
]


def _points(out: Path) -> dict[str, float]:
    return {f.name: f.stat().st_mtime for f in out.glob("plain-c1-l*.json")}


@pytest.mark.slow
def test_an_interrupted_sweep_resumes_without_redoing_points(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    # (SIGINT back to its default in the child: a shell's background job starts with it
    # ignored, and Python then installs no KeyboardInterrupt handler)
    first = subprocess.Popen(
        [*SWEEP, "--out", str(out)],
        cwd=root,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 240
    while not _points(out) and time.monotonic() < deadline and first.poll() is None:
        time.sleep(0.2)
    first.send_signal(signal.SIGINT)
    assert first.wait(timeout=120) in (0, 130)
    kept = _points(out)
    assert 1 <= len(kept) < 3, kept
    meta = json.loads((out / "sweep.json").read_text())
    assert meta["templates"]["plain"]["warehouse"] == 1

    # without --resume the folder is not overwritten
    refused = subprocess.run([*SWEEP, "--out", str(out)], cwd=root, env=env, capture_output=True)
    assert refused.returncode != 0 and b"--resume" in refused.stderr

    second = subprocess.run(
        [*SWEEP, "--out", str(out), "--resume"], cwd=root, env=env, capture_output=True, text=True
    )
    assert second.returncode == 0, second.stderr
    assert f"{len(kept)} point(s) done" in second.stderr
    final = _points(out)
    assert set(final) == {"plain-c1-l0.json", "plain-c1-l1.json", "plain-c1-l2.json"}
    assert all(final[name] == mtime for name, mtime in kept.items())  # not run again
    for name in final:  # each point's database checked after its run
        assert json.loads((out / name).read_text())["consistency"] == []


def test_an_interrupted_load_is_never_taken_for_a_template(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import psycopg

    from tpcc import cli

    def load_then_fail(conn: object, *args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    template = cli._cluster_dsn("tpcc_plain_interrupted_w1_template")
    loading = cli._cluster_dsn("tpcc_plain_interrupted_w1_template_loading")
    admin = psycopg.conninfo.make_conninfo(template, dbname="postgres")
    with psycopg.connect(admin, autocommit=True) as c:
        c.execute("DROP DATABASE IF EXISTS tpcc_plain_interrupted_w1_template")
    monkeypatch.setattr(cli, "load", load_then_fail)
    with pytest.raises(KeyboardInterrupt):
        cli._load_into(template, "plain", 1, "tiny")
    assert not cli._exists(template)  # a resumed sweep loads it again
    monkeypatch.undo()
    assert cli._load_into(template, "plain", 1, "tiny") > 0
    assert cli._exists(template) and not cli._exists(loading)
    assert cli.template_fingerprint(template)["warehouse"] == 1
    with psycopg.connect(admin, autocommit=True) as c:
        c.execute("DROP DATABASE tpcc_plain_interrupted_w1_template")
