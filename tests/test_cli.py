"""The adaptive-db command: DSN, init, status, and errors without tracebacks."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.admin import cli
from adaptive_client.admin.embedded import EmbeddedCluster
from adaptive_client.catalog.keys import load_master_key

needs_embedded = pytest.mark.skipif(
    bool(os.environ.get("ADAPTIVE_TEST_DSN")),
    reason="the tests run against ADAPTIVE_TEST_DSN, not the embedded cluster",
)

UNREACHABLE = "host=127.0.0.1 port=1 dbname=nope connect_timeout=2"


@needs_embedded
def test_dsn_prints_a_working_conninfo(pg_cluster: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["dsn"]) == 0
    dsn = capsys.readouterr().out.strip()
    assert dsn == EmbeddedCluster.default().dsn()
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)


@needs_embedded
def test_status_reports_running(pg_cluster: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["status"]) == 0
    assert "running" in capsys.readouterr().out


@needs_embedded
def test_up_twice_prints_the_same_dsn(pg_cluster: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["up"]) == 0
    first = capsys.readouterr().out.strip()
    assert cli.main(["up"]) == 0
    assert capsys.readouterr().out.strip() == first == EmbeddedCluster.default().dsn()
    with psycopg.connect(first) as conn:  # `up` installed the metadata schema and UDFs
        tables = {
            r[0]
            for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'adaptive'")
        }
        assert conn.execute("SELECT to_regproc('adaptive.rnd_decrypt') IS NOT NULL").fetchone() == (
            True,
        )
    assert {"keyring", "layers", "epoch"} <= tables


def test_init_twice_succeeds(
    new_database: Callable[..., str], capsys: pytest.CaptureFixture[str]
) -> None:
    dsn = new_database("cli")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP SCHEMA adaptive CASCADE")
    assert cli.main(["init", "--dsn", dsn]) == 0
    assert cli.main(["init", "--dsn", dsn]) == 0
    out = capsys.readouterr().out
    assert "metadata_schema.sql" in out
    assert out.splitlines()[1] == "peel mode: server (the database's default)"
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SELECT value FROM adaptive.epoch").fetchone() == (0,)


def test_unreachable_dsn_is_exit_1_without_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["init", "--dsn", UNREACHABLE + " password=hunter2"]) == 1
    captured = capsys.readouterr()
    assert captured.err.startswith("adaptive-db: cannot connect")
    assert "Traceback" not in captured.err
    assert "hunter2" not in captured.err  # passwords are not echoed


def test_unknown_database_is_exit_1(pg_cluster: str, capsys: pytest.CaptureFixture[str]) -> None:
    dsn = psycopg.conninfo.make_conninfo(pg_cluster, dbname="no_such_database_here")
    assert cli.main(["init", "--dsn", dsn]) == 1
    err = capsys.readouterr().err
    assert err.startswith("adaptive-db: ") and "no_such_database_here" in err


def test_console_script_reports_errors_on_stderr() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from adaptive_client.admin.cli import main; sys.exit(main())",
            "init",
            "--dsn",
            UNREACHABLE,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith("adaptive-db: ") and "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_parser_has_every_command() -> None:
    parser = cli.build_parser()
    for command in (
        "up",
        "down",
        "dsn",
        "init",
        "status",
        "layers",
        "peel",
        "rotate-master-key",
        "keygen",
    ):
        with pytest.raises(SystemExit) as info:
            parser.parse_args([command, "--help"])
        assert info.value.code == 0
    with pytest.raises(SystemExit) as info:
        cli.main([])
    assert info.value.code == 2


def test_keygen_writes_a_private_key_file_once(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "master.key"
    assert cli.main(["keygen", str(path)]) == 0
    assert "cannot be read" in capsys.readouterr().out
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    key = load_master_key(path)  # a key the library reads
    assert len(key.hex()) == 64
    before = path.read_text()
    assert cli.main(["keygen", str(path)]) == 1  # never overwritten
    assert "never overwritten" in capsys.readouterr().err
    assert path.read_text() == before


def test_the_database_from_libpqs_environment(
    new_database: Any,
    master_key: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Without --dsn, the PG* variables name the database, as for psql; --embedded
    picks the embedded cluster's instead."""
    dsn = new_database("clienv")
    params = psycopg.conninfo.conninfo_to_dict(dsn)
    for name, var in (
        ("host", "PGHOST"),
        ("port", "PGPORT"),
        ("user", "PGUSER"),
        ("dbname", "PGDATABASE"),
    ):
        if params.get(name):
            monkeypatch.setenv(var, str(params[name]))
    monkeypatch.setenv("ADAPTIVE_MASTER_KEY", master_key.hex())
    with adaptive_client.connect(dsn, master_key=master_key, autocommit=True) as conn:
        conn.execute("CREATE TABLE envtab (id integer PRIMARY KEY)")
    assert cli.main(["layers", "--log", "0"]) == 0
    assert "envtab" in capsys.readouterr().out
    monkeypatch.setenv("PGDATABASE", "no_such_database_here")
    assert cli.main(["layers"]) == 1
    assert "PG*" in capsys.readouterr().err


def test_a_missing_key_is_explained_in_the_cli_s_terms(
    new_database: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("ADAPTIVE_MASTER_KEY", raising=False)
    monkeypatch.delenv("ADAPTIVE_MASTER_KEY_FILE", raising=False)
    assert cli.main(["layers", "--dsn", new_database("clikey")]) == 1
    err = capsys.readouterr().err
    assert "--master-key-file" in err and "ADAPTIVE_MASTER_KEY" in err
    assert "master_key=" not in err


def test_help_has_no_markup(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["--help"])
    out = capsys.readouterr().out
    assert "``" not in out and "keygen" in out and "PG*" in out
