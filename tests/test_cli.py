"""The adaptive-db command: DSN, init, status, and errors without tracebacks."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable

import psycopg
import pytest

from adaptive_client import cli
from adaptive_client.embedded import EmbeddedCluster

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
            "import sys; from adaptive_client.cli import main; sys.exit(main())",
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
    for command in ("up", "down", "dsn", "init", "status", "layers", "peel", "rotate-master-key"):
        with pytest.raises(SystemExit) as info:
            parser.parse_args([command, "--help"])
        assert info.value.code == 0
    with pytest.raises(SystemExit) as info:
        cli.main([])
    assert info.value.code == 2
