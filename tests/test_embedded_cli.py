"""The embedded cluster and the adaptive-db command."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import psycopg
import pytest

from adaptive_client import cli, embedded
from adaptive_client.embedded import EmbeddedCluster, EmbeddedDbError


def test_up_is_idempotent_and_has_extensions(pg_cluster: str) -> None:
    cluster = EmbeddedCluster.default()
    if not cluster.running():
        pytest.skip("tests run against ADAPTIVE_TEST_DSN")
    assert cluster.up() == cluster.up()
    with psycopg.connect(cluster.dsn()) as conn:
        exts = {r[0] for r in conn.execute("SELECT extname FROM pg_extension")}
        coll = conn.execute(
            "SELECT datcollate FROM pg_database WHERE datname = current_database()"
        ).fetchone()
    assert {"plpython3u", "pgcrypto"} <= exts
    assert coll == ("C",)


def test_cli_dsn_and_init(pg_dsn: str, capsys: Any) -> None:
    if EmbeddedCluster.default().initialized():
        assert cli.main(["dsn"]) == 0
        dsn = capsys.readouterr().out.strip()
        with psycopg.connect(dsn) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    assert cli.main(["init", "--dsn", pg_dsn]) == 0
    assert cli.main(["init", "--dsn", pg_dsn]) == 0  # idempotent
    assert "installed" in capsys.readouterr().out


def test_cli_reports_errors_without_traceback(capsys: Any) -> None:
    assert cli.main(["init", "--dsn", "host=127.0.0.1 port=1 dbname=nope connect_timeout=2"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("adaptive-db: cannot connect") and "Traceback" not in err


def test_port_taken(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        other = EmbeddedCluster(tmp_path, port=port)
        other.init = lambda: None  # type: ignore[method-assign]
        other.initialized = lambda: True  # type: ignore[method-assign]
        other.running = lambda: False  # type: ignore[method-assign]
        with pytest.raises(EmbeddedDbError, match=r"port .* is taken"):
            other.up()


def test_missing_binaries(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ADAPTIVE_PG_BINDIR", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(embedded.glob, "glob", lambda pattern: [])
    with pytest.raises(EmbeddedDbError, match="binaries not found"):
        embedded.find_bindir()
