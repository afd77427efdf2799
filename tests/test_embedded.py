"""The embedded PostgreSQL cluster: idempotent start, extensions, clear errors."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import psycopg
import pytest

from adaptive_client.admin import embedded
from adaptive_client.admin.embedded import EmbeddedCluster, EmbeddedDbError

needs_embedded = pytest.mark.skipif(
    bool(os.environ.get("ADAPTIVE_TEST_DSN")),
    reason="the tests run against ADAPTIVE_TEST_DSN, not the embedded cluster",
)


@needs_embedded
def test_up_is_idempotent_and_the_server_answers(pg_cluster: str) -> None:
    cluster = EmbeddedCluster.default()
    first = cluster.up()
    second = cluster.up()
    assert first == second == cluster.dsn()
    assert cluster.running()
    with psycopg.connect(second) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
        assert conn.execute("SELECT current_database()").fetchone() == (cluster.dbname,)


@needs_embedded
def test_embedded_database_has_extensions_and_c_collation(pg_cluster: str) -> None:
    cluster = EmbeddedCluster.default()
    with psycopg.connect(cluster.up()) as conn:
        exts = {r[0] for r in conn.execute("SELECT extname FROM pg_extension")}
        coll = conn.execute(
            "SELECT datcollate, pg_encoding_to_char(encoding) FROM pg_database "
            "WHERE datname = current_database()"
        ).fetchone()
    assert {"plpython3u", "pgcrypto"} <= exts
    assert coll == ("C", "UTF8")


@needs_embedded
def test_ensure_database_is_idempotent(pg_cluster: str) -> None:
    cluster = EmbeddedCluster.default()
    name = "test_ensure_db"
    try:
        cluster.ensure_database(name)
        cluster.ensure_database(name)
        with psycopg.connect(cluster.dsn(name)) as conn:
            exts = {r[0] for r in conn.execute("SELECT extname FROM pg_extension")}
        assert {"plpython3u", "pgcrypto"} <= exts
    finally:
        with psycopg.connect(cluster.dsn("postgres"), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_port_taken_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        other = EmbeddedCluster(tmp_path, port=port)
        # an initialized but stopped cluster whose port another program holds
        monkeypatch.setattr(other, "init", lambda: None)
        monkeypatch.setattr(other, "initialized", lambda: True)
        monkeypatch.setattr(other, "running", lambda: False)
        with pytest.raises(EmbeddedDbError, match=rf"port {port} .* is taken") as info:
            other.up()
    assert "ADAPTIVE_DB_PORT" in str(info.value)


def test_missing_binaries_are_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("ADAPTIVE_PG_BINDIR", str(empty))
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setattr(embedded.glob, "glob", lambda pattern: [])
    with pytest.raises(EmbeddedDbError, match="binaries not found") as info:
        embedded.find_bindir()
    assert "postgresql-15" in str(info.value)
    with pytest.raises(EmbeddedDbError, match="binaries not found"):
        EmbeddedCluster(tmp_path / "cluster").up()
    assert not (tmp_path / "cluster" / ".pgdata").exists()


def test_a_checkout_keeps_its_cluster_at_its_root_from_any_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run from another directory (a script beside the checkout, a test run from its
    folder), the checkout's own cluster and keys are found -- not a new ``.pgdata``
    made in the current directory."""
    root = Path(embedded.__file__).resolve().parents[2]
    assert (root / "pyproject.toml").exists()  # (this test runs from a checkout)
    monkeypatch.delenv("ADAPTIVE_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    assert embedded.project_root() == root
    monkeypatch.setenv("ADAPTIVE_HOME", str(tmp_path))
    assert embedded.project_root() == tmp_path.resolve()
