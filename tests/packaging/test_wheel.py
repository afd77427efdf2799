"""The project as a user installs it: a wheel built from the checkout, installed into a
fresh virtualenv outside the checkout (dependencies from the package index), runs
``adaptive-db init`` and the differential smoke -- on a database the superuser owns
(peel mode ``server``) and on one owned by a role that is not a superuser (hosted
PostgreSQL: init records ``client``, and the smoke peels on the client's side).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
import zipfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

from adaptive_client.keys import MasterKey

from . import smoke

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def _run(argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 300) -> str:
    proc = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert proc.returncode == 0, (
        f"{argv[:3]} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    )
    return proc.stdout


def _checkout_copy(dest: Path) -> Path:
    """The checkout's files (tracked, and new ones not ignored) copied to ``dest``: the
    build writes its build/ and egg-info there, not in the working tree."""
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, files):
        src = ROOT / os.fsdecode(name)
        if src.is_file():
            target = dest / os.fsdecode(name)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
    return dest


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    """A fresh virtualenv with the wheel installed; (its bin directory, environment)."""
    base = tmp_path_factory.mktemp("wheel")
    assert ROOT not in base.parents
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    src = _checkout_copy(base / "src")
    dist = base / "dist"
    _run(
        [sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "-q", "-w", str(dist)],
        base,
        env,
    )
    (wheel,) = dist.glob("adaptive_client-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {
        "adaptive_client/sql/metadata_schema.sql",
        "adaptive_client/sql/udf/10_rnd_decrypt.sql",
        "adaptive_client/sql/udf/20_hom_sum.sql",
        "adaptive_client/sql/udf/25_ope_minmax.sql",
        "adaptive_client/sql/udf/30_peel_layer.sql",
        "adaptive_client/py.typed",
    } <= names
    with zipfile.ZipFile(wheel) as zf:
        (info,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        meta = zf.read(info).decode()
    assert "Provides-Extra: native" in meta
    assert "adaptive-ope-native" in meta and "adaptive-rnd-native" in meta
    venv = base / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], base, env)
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)], base, env, 600)
    shutil.copy2(Path(smoke.__file__), base / "smoke.py")
    yield venv / "bin", env


def _database(pg_cluster: str, owner: str | None = None) -> str:
    name = f"test_wheel_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(pg_cluster, autocommit=True) as c:
        c.execute(
            sql.SQL("CREATE DATABASE {}{}").format(
                sql.Identifier(name),
                sql.SQL(" OWNER {}").format(sql.Identifier(owner)) if owner else sql.SQL(""),
            )
        )
    return name


@pytest.fixture
def databases(pg_cluster: str) -> Iterator[list[str]]:
    made: list[str] = []
    yield made
    with psycopg.connect(pg_cluster, autocommit=True) as c:
        for name in made:
            if name.startswith("role:"):
                c.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(name[5:])))
            else:
                c.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
                )


@pytest.mark.parametrize("hosted", [False, True], ids=["superuser", "hosted-role"])
def test_wheel_in_a_fresh_virtualenv(
    installed: tuple[Path, dict[str, str]],
    pg_cluster: str,
    databases: list[str],
    master_key: MasterKey,
    hosted: bool,
) -> None:
    bindir, env = installed
    work = bindir.parent.parent
    env = {**env, "ADAPTIVE_MASTER_KEY": master_key.hex()}
    plain = _database(pg_cluster)
    databases.append(plain)
    if hosted:
        role = f"hosted_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(pg_cluster, autocommit=True) as c:
            c.execute(
                sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE").format(
                    sql.Identifier(role)
                )
            )
        enc = _database(pg_cluster, owner=role)
        databases[:0] = [enc, f"role:{role}"]  # the database is dropped before its role
        enc_dsn = make_conninfo(pg_cluster, dbname=enc, user=role)
    else:
        enc = _database(pg_cluster)
        databases.append(enc)
        enc_dsn = make_conninfo(pg_cluster, dbname=enc)
    mode = "client" if hosted else "server"

    out = _run([str(bindir / "adaptive-db"), "init", "--dsn", enc_dsn], work, env).splitlines()
    assert out[0].startswith("installed: metadata_schema.sql")
    assert len(out) == 2 and out[1].startswith(f"peel mode: {mode}")

    result = json.loads(
        _run(
            [
                str(bindir / "python"),
                str(work / "smoke.py"),
                "--enc-dsn",
                enc_dsn,
                "--plain-dsn",
                make_conninfo(pg_cluster, dbname=plain),
                "--expect-mode",
                mode,
            ],
            work,
            env,
        )
    )
    assert Path(result["module"]).is_relative_to(work / "venv")  # not the checkout's copy
    assert result["peel_mode"] == mode
    peels = {(o, f, t, m) for o, f, t, m in result["peels"]}
    assert {("Eq", "RND", "DET", mode), ("Ord", "RND", "OPE", mode)} <= peels

    layers = _run([str(bindir / "adaptive-db"), "layers", "--dsn", enc_dsn], work, env)
    assert "peel audit log" in layers and " DET " in layers and " OPE " in layers
