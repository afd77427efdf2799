"""Installing the metadata schema and UDFs: idempotent, atomic, clear errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from adaptive_client import install as install_mod
from adaptive_client.errors import AdaptiveError
from adaptive_client.install import install, install_files

TABLES = {"keyring", "tables", "key_groups", "layers", "epoch", "peel_log"}
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
        with pytest.raises(AdaptiveError, match=r"99_broken\.sql"):
            install(conn)
        assert _catalog(conn) == (set(), set())
        assert conn.execute(
            "SELECT count(*) FROM pg_namespace WHERE nspname = 'adaptive'"
        ).fetchone() == (0,)


def test_missing_sql_dir_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "site" / "adaptive_client" / "install.py"
    fake.parent.mkdir(parents=True)
    monkeypatch.setattr(install_mod, "__file__", str(fake))
    with pytest.raises(AdaptiveError, match=r"sql/ directory .* not found"):
        install_mod.sql_dir()
