"""Installing the metadata schema and UDFs: idempotent, atomic, clear errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog import install as install_mod
from adaptive_client.catalog.install import install, install_files
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.errors import AdaptiveError, ConfigError, PeelModeUnavailable

TABLES = {"keyring", "tables", "key_groups", "layers", "epoch", "peel_log", "settings"}
FUNCTIONS = {
    "rnd_decrypt",
    "hom_add",
    "hom_sum",
    "bytea_smaller",
    "bytea_larger",
    "min",
    "max",
    "peel_layer",
}


def _catalog(conn: psycopg.Connection) -> tuple[set[str], set[str]]:
    tables = {
        r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'adaptive'")
    }
    functions = {
        r[0]
        for r in conn.execute(
            "SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
            "WHERE n.nspname = 'adaptive'"
        )
    }
    return tables, functions


def test_install_files_in_order() -> None:
    names = [f.name for f in install_files()]
    assert names[0] == "metadata_schema.sql"
    assert names[1:] == sorted(names[1:])
    assert "10_rnd_decrypt.sql" in names and "20_hom_sum.sql" in names


def test_metadata_tables_and_functions_exist(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn) as conn:
        tables, functions = _catalog(conn)
        assert conn.execute("SELECT count(*) FROM adaptive.epoch").fetchone() == (1,)
    assert tables >= TABLES
    assert functions >= FUNCTIONS


def test_install_twice_is_idempotent_and_keeps_data(
    new_database: Callable[..., str],
) -> None:
    dsn = new_database("inst")
    with psycopg.connect(dsn, autocommit=True) as conn:
        before = _catalog(conn)
        conn.execute("UPDATE adaptive.epoch SET value = 7 WHERE id = 1")
        assert install(conn) == [f.name for f in install_files()]
        install(conn)
        assert _catalog(conn) == before
        assert conn.execute("SELECT id, value FROM adaptive.epoch").fetchall() == [(1, 7)]
        assert conn.execute("SELECT setting, value FROM adaptive.settings").fetchall() == [
            ("peel", "server")
        ]
        assert conn.autocommit  # the connection's mode is left as it was
    with psycopg.connect(dsn) as conn:  # not autocommit, idle: install commits
        install(conn)
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE


def test_install_inside_a_transaction_uses_a_savepoint(
    new_database: Callable[..., str],
) -> None:
    dsn = new_database("inst")
    with psycopg.connect(dsn) as conn:
        conn.execute("DROP SCHEMA adaptive CASCADE")
        conn.commit()
        conn.execute("SELECT 1")  # the caller's transaction is open
        install(conn)
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
        conn.rollback()
        assert _catalog(conn) == (set(), set())
        install(conn)
        conn.commit()
        assert _catalog(conn)[0] >= TABLES


def test_failed_install_changes_nothing(
    new_database: Callable[..., str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dsn = new_database("inst")
    bad = tmp_path / "99_broken.sql"
    bad.write_text("CREATE FUNCTION adaptive.broken() RETURNS int LANGUAGE sql AS $$ nope $$;")
    good = install_files()
    monkeypatch.setattr(install_mod, "install_files", lambda: [*good, bad])
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP SCHEMA adaptive CASCADE")
        conn.execute("DROP EXTENSION plpython3u")
        with pytest.raises(AdaptiveError, match=r"99_broken\.sql"):
            install(conn)
        assert _catalog(conn) == (set(), set())
        assert conn.execute(
            "SELECT count(*) FROM pg_namespace WHERE nspname = 'adaptive'"
        ).fetchone() == (0,)
        assert conn.execute(  # the extension created by the failed install is gone too
            "SELECT count(*) FROM pg_extension WHERE extname = 'plpython3u'"
        ).fetchone() == (0,)


def test_scripts_are_the_repository_sql() -> None:
    """A checkout reads the scripts from the repository's top-level sql/ (the database's side
    of the project, not inside the package); a wheel carries a copy in the package
    (packaging/test_wheel.py)."""
    root = Path(__file__).resolve().parents[1] / "sql"
    files = install_files()
    assert [f.name for f in files] == [
        "metadata_schema.sql",
        *sorted(f.name for f in (root / "udf").iterdir() if f.name.endswith(".sql")),
    ]
    assert Path(str(files[0])).resolve() == (root / "metadata_schema.sql").resolve()
    assert not (Path(install_mod.__file__).resolve().parents[1] / "sql").exists()


def test_missing_scripts_are_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.resources

    monkeypatch.setattr(importlib.resources, "files", lambda package: tmp_path)
    monkeypatch.setattr(install_mod, "CHECKOUT_SQL", tmp_path / "none")
    with pytest.raises(AdaptiveError, match=r"SQL scripts .* are missing"):
        install_mod.sql_dir()


def test_superuser_install_records_server_mode(
    new_database: Callable[..., str], master_key: MasterKey
) -> None:
    dsn = new_database("inst")
    with psycopg.connect(dsn, autocommit=True) as conn:
        report = install_mod.install_database(conn)
        assert report.peel_default == "server" and report.server_peel
        assert report.skipped == [] and report.plpython is None
        assert report.summary() == "peel mode: server (the database's default)"
        assert conn.execute(
            "SELECT value FROM adaptive.settings WHERE setting = 'peel'"
        ).fetchone() == ("server",)
    with adaptive_client.connect(dsn, master_key=master_key) as c:
        assert c.peel_mode == "server"
    with psycopg.connect(dsn, autocommit=True) as conn:  # a recorded choice is kept
        install_mod.install_database(conn, peel="client")
        assert install_mod.install_database(conn).peel_default == "client"
    with adaptive_client.connect(dsn, master_key=master_key) as c:
        assert c.peel_mode == "client"
    with adaptive_client.connect(dsn, master_key=master_key, peel="server") as c:
        assert c.peel_mode == "server"  # the functions are there: an explicit choice works


def test_database_installed_before_the_setting_defaults_to_server(
    new_database: Callable[..., str], master_key: MasterKey
) -> None:
    dsn = new_database("inst")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE adaptive.settings")
    with adaptive_client.connect(dsn, master_key=master_key) as c:
        assert c.peel_mode == "server"
    with psycopg.connect(dsn, autocommit=True) as conn:  # ... and without its UDFs: refused
        conn.execute("DROP FUNCTION adaptive.peel_layer")
    with pytest.raises(PeelModeUnavailable, match=r"peel mode server \(the default\)"):
        adaptive_client.connect(dsn, master_key=master_key)


def test_a_bad_recorded_mode_is_a_clear_error(
    new_database: Callable[..., str], master_key: MasterKey
) -> None:
    dsn = new_database("inst")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("UPDATE adaptive.settings SET value = 'sideways' WHERE setting = 'peel'")
    with pytest.raises(ConfigError, match="recorded peel mode 'sideways'"):
        adaptive_client.connect(dsn, master_key=master_key)
    with psycopg.connect(dsn) as conn, pytest.raises(ConfigError, match="must be one of"):
        install_mod.install_database(conn, peel="sideways")
