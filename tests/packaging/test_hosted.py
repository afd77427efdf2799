"""Hosted PostgreSQL: a database owned by a role that is not a superuser, as on every
managed service, where ``plpython3u`` is refused.

``adaptive-db init`` installs the metadata schema and the plain-SQL UDFs, skips the
PL/Python ones, records ``client`` as the database's default peel mode and says so in one
line; clients then peel on their side, and the results equal plain PostgreSQL's.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

import adaptive_client
from adaptive_client.admin import cli
from adaptive_client.catalog.install import InstallReport, install_database
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.errors import ConfigError, PeelModeUnavailable

from . import smoke

PLPYTHON_FUNCTIONS = {"rnd_decrypt", "peel_layer"}
SQL_FUNCTIONS = {"hom_add", "hom_sum", "bytea_smaller", "bytea_larger", "min", "max"}


@dataclass
class Hosted:
    role: str
    dbname: str
    dsn: str  # as the owner role


@pytest.fixture
def hosted(pg_cluster: str) -> Iterator[Callable[..., Hosted]]:
    """Factory: a NOSUPERUSER role and a database it owns (nothing installed in it)."""
    made: list[Hosted] = []

    def make(with_plpython: bool = False) -> Hosted:
        tag = uuid.uuid4().hex[:10]
        role, dbname = f"hosted_{tag}", f"test_hosted_{tag}"
        with psycopg.connect(pg_cluster, autocommit=True) as c:
            c.execute(
                sql.SQL(
                    "CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD {}"
                ).format(sql.Identifier(role), sql.Literal(tag))
            )
            c.execute(
                sql.SQL("CREATE DATABASE {} OWNER {}").format(
                    sql.Identifier(dbname), sql.Identifier(role)
                )
            )
        h = Hosted(role, dbname, make_conninfo(pg_cluster, dbname=dbname, user=role, password=tag))
        made.append(h)
        if with_plpython:  # the provider created the extension; the role still may not use it
            with psycopg.connect(make_conninfo(pg_cluster, dbname=dbname), autocommit=True) as c:
                c.execute("CREATE EXTENSION plpython3u")
        return h

    yield make
    with psycopg.connect(pg_cluster, autocommit=True) as c:
        for h in made:
            c.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(h.dbname))
            )
            c.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(h.role)))


def _functions(dsn: str) -> set[str]:
    with psycopg.connect(dsn) as c:
        return {
            r[0]
            for r in c.execute(
                "SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
                "WHERE n.nspname = 'adaptive'"
            )
        }


def _setting(dsn: str) -> str | None:
    with psycopg.connect(dsn) as c:
        row = c.execute("SELECT value FROM adaptive.settings WHERE setting = 'peel'").fetchone()
    return row[0] if row else None


def _init(dsn: str, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, list[str], str]:
    status = cli.main(["init", "--dsn", dsn, *extra])
    out = capsys.readouterr()
    return status, out.out.splitlines(), out.err


def test_role_is_not_a_superuser(hosted: Callable[..., Hosted]) -> None:
    h = hosted()
    with psycopg.connect(h.dsn, autocommit=True) as c:
        assert c.execute(
            "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"
        ).fetchone() == (False,)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            c.execute("CREATE EXTENSION plpython3u")


@pytest.mark.parametrize(
    "provider_plpython", [False, True], ids=["no-plpython", "plpython-untrusted"]
)
def test_init_installs_what_the_role_may_and_records_client_mode(
    hosted: Callable[..., Hosted], capsys: pytest.CaptureFixture[str], provider_plpython: bool
) -> None:
    h = hosted(with_plpython=provider_plpython)
    status, lines, err = _init(h.dsn, capsys)
    assert status == 0, err
    assert lines[0] == "installed: metadata_schema.sql, 20_hom_sum.sql, 25_ope_minmax.sql"
    assert len(lines) == 2  # and ONE line about the peel mode
    line = lines[1]
    assert line.startswith("peel mode: client, recorded as the database's default")
    assert "10_rnd_decrypt.sql, 30_peel_layer.sql" in line and "were skipped" in line
    assert "clients strip layers themselves" in line
    assert "permission denied" in line
    assert "Debian" not in line and "apt" not in line and "pgcrypto" not in line
    functions = _functions(h.dsn)
    assert functions >= SQL_FUNCTIONS
    assert not functions & PLPYTHON_FUNCTIONS
    assert _setting(h.dsn) == "client"
    with psycopg.connect(h.dsn) as c:  # pgcrypto is trusted (PostgreSQL 13+): created
        assert c.execute(
            "SELECT count(*) FROM pg_extension WHERE extname = 'pgcrypto'"
        ).fetchone() == (1,)
        tables = {
            r[0] for r in c.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'adaptive'")
        }
    assert {"keyring", "tables", "layers", "epoch", "peel_log", "settings"} <= tables
    # idempotent: a second init keeps the mode and says the same
    status, lines2, _ = _init(h.dsn, capsys)
    assert status == 0 and lines2 == lines


def test_client_mode_smoke_equals_plain_with_peels(
    hosted: Callable[..., Hosted],
    new_database: Callable[..., str],
    master_key: MasterKey,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    h = hosted()
    assert _init(h.dsn, capsys)[0] == 0
    out = smoke.run(h.dsn, new_database("plain"), master_key.hex())  # no peel= argument
    assert out["peel_mode"] == "client"
    peels = out["peels"]
    # (the Ord onion, built on first use, is built at the layer the statement needs)
    assert {(o, f, t) for o, f, t, _ in peels} >= {("Eq", "RND", "DET"), ("Ord", "-", "OPE")}
    assert {m for *_, m in peels} == {"client", "build"}
    # the DBA's view, as the owner role: the peeled onions and the audit log
    monkeypatch.setenv("ADAPTIVE_MASTER_KEY", master_key.hex())
    assert cli.main(["layers", "--dsn", h.dsn, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    layers = {(o["column"], o["onion"]): o["layer"] for o in report["onions"]}
    assert layers[("qty", "Eq")] == "DET"
    assert layers[("price", "Ord")] == "OPE"
    assert layers[("qty", "Sum")] == "ASHE"  # the Sum onion's default layer
    assert {p["mode"] for p in report["peels"]} == {"client", "build"}


def test_explicit_server_mode_is_a_typed_error(
    hosted: Callable[..., Hosted], master_key: MasterKey, capsys: pytest.CaptureFixture[str]
) -> None:
    h = hosted()
    assert _init(h.dsn, capsys)[0] == 0
    with pytest.raises(PeelModeUnavailable, match=r"peel mode server \(asked for explicitly\)"):
        adaptive_client.connect(h.dsn, master_key=master_key, peel="server")
    with pytest.raises(ConfigError, match=r"adaptive\.peel_layer"):  # also from a configuration
        adaptive_client.connect(
            h.dsn, master_key=master_key, config={"defaults": {"peel": "server"}}
        )
    # a configuration naming another mode wins over the database's default
    with adaptive_client.connect(
        h.dsn, master_key=master_key, config={"defaults": {"peel": "off"}}
    ) as c:
        assert c.peel_mode == "off"
    with adaptive_client.connect(h.dsn, master_key=master_key) as c:
        assert c.peel_mode == "client"


def test_init_peel_option(
    hosted: Callable[..., Hosted], capsys: pytest.CaptureFixture[str]
) -> None:
    h = hosted()
    status, lines, err = _init(h.dsn, capsys, "--peel", "server")
    assert status == 1 and lines == []
    assert "peel mode server needs the PL/Python functions" in err and "Traceback" not in err
    with psycopg.connect(h.dsn) as c:  # nothing was installed
        assert c.execute("SELECT to_regnamespace('adaptive')").fetchone() == (None,)
    status, lines, _ = _init(h.dsn, capsys, "--peel", "off")
    assert status == 0 and lines[1].startswith("peel mode: off, recorded")
    assert _setting(h.dsn) == "off"
    assert _init(h.dsn, capsys)[0] == 0  # kept without --peel
    assert _setting(h.dsn) == "off"


def test_dba_peel_uses_the_recorded_mode(
    hosted: Callable[..., Hosted],
    master_key: MasterKey,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    h = hosted()
    assert _init(h.dsn, capsys)[0] == 0
    with adaptive_client.connect(h.dsn, master_key=master_key, autocommit=True) as c:
        c.execute("CREATE TABLE t (id integer PRIMARY KEY, v integer)")
        c.execute("INSERT INTO t VALUES (1, 10), (2, 20)")
    monkeypatch.setenv("ADAPTIVE_MASTER_KEY", master_key.hex())
    assert cli.main(["peel", "--dsn", h.dsn, "t", "v", "Ord", "OPE"]) == 0
    assert "peeled to OPE (2 rows)" in capsys.readouterr().out
    with psycopg.connect(h.dsn) as c:
        # (v's Ord onion, built on first use: built, then peeled by the client)
        modes = c.execute("SELECT mode FROM adaptive.peel_log ORDER BY id").fetchall()
        assert modes == [("build",), ("client",)]
    assert cli.main(["peel", "--dsn", h.dsn, "--mode", "server", "t", "v", "Eq", "DET"]) == 1
    assert "PL/Python function adaptive.peel_layer" in capsys.readouterr().err


def test_summary_when_pgcrypto_is_refused_too() -> None:
    r = InstallReport(
        scripts=["metadata_schema.sql"],
        skipped=["30_peel_layer.sql"],
        peel_default="client",
        plpython='permission denied to create extension "plpython3u"',
        pgcrypto='extension "pgcrypto" is not available',
    )
    line = r.summary()
    assert "\n" not in line
    assert line.endswith('; pgcrypto was refused too (extension "pgcrypto" is not available)')


def test_install_in_process_as_the_owner(hosted: Callable[..., Hosted]) -> None:
    h = hosted()
    with psycopg.connect(h.dsn) as c:
        report = install_database(c)
    assert report.peel_default == "client" and not report.server_peel
    assert report.skipped == ["10_rnd_decrypt.sql", "30_peel_layer.sql"]
    assert report.plpython is not None and report.pgcrypto is None
