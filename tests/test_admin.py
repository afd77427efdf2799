"""The DBA's commands: layers report, audit log, explicit peels with floors, key rotation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.admin import cli
from adaptive_client.admin import controls as admin
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.errors import WrongMasterKey


@pytest.fixture()
def db(new_database: Any, tmp_path: Path) -> tuple[str, MasterKey, Path]:
    dsn = new_database("admin")
    key = MasterKey.generate()
    key_file = tmp_path / "master.key"
    key_file.write_text(key.hex())
    cfg = {"tables": {"acct": {"owner": {"floor": {"Eq": "RND"}}}}}
    with adaptive_client.connect(dsn, master_key=key, config=cfg, autocommit=True) as conn:
        conn.execute("CREATE TABLE acct (id integer PRIMARY KEY, owner text, balance integer)")
        conn.execute("INSERT INTO acct VALUES (1, 'ann', 5), (2, 'bob', 7)")
        conn.execute("SELECT id FROM acct WHERE balance > 6")  # peels Ord(balance)
    return dsn, key, key_file


def test_layers_report(db: tuple[str, MasterKey, Path], capsys: Any) -> None:
    dsn, _, key_file = db
    assert cli.main(["layers", "--dsn", dsn, "--master-key-file", str(key_file)]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("acct")]
    assert any(
        "balance" in line and "Ord" in line and "OPE" in line and "order" in line for line in lines
    )
    assert any(
        "owner" in line and "Eq" in line and "RND" in line and "nothing" in line for line in lines
    )
    assert any(line.split()[1] == "id" and "DET" in line for line in lines)  # a key: kept at DET
    assert "peel audit log" in out and "acct.balance" in out
    summary = out.split("per column, from all its onions together:")[1].split("peel audit")[0]
    assert any(
        "acct.balance" in ln and "Ord at OPE" in ln and "order" in ln for ln in summary.splitlines()
    )
    # owner: never searched, so its Search onion is not stored yet: nothing but lengths
    assert any("acct.owner" in ln and "nothing but lengths" in ln for ln in summary.splitlines())
    assert any(
        line.split()[1] == "owner" and "Search" in line and "(on first use)" in line
        for line in lines
    )
    # searched once: its Search onion reveals which rows share a word
    with adaptive_client.connect(dsn, master_key=MasterKey.from_hex(key_file.read_text())) as c:
        c.execute(r"SELECT id FROM acct WHERE owner ~ '\mann\M'").fetchall()
    assert cli.main(["layers", "--dsn", dsn, "--master-key-file", str(key_file)]) == 0
    out = capsys.readouterr().out
    summary = out.split("per column, from all its onions together:")[1].split("peel audit")[0]
    assert any("acct.owner" in ln and "Search at SEARCH" in ln for ln in summary.splitlines())


def test_layers_json_and_audit_log(db: tuple[str, MasterKey, Path], capsys: Any) -> None:
    """Who peeled what, when, from which layer to which; plain names for the DBA."""
    dsn, _, key_file = db
    args = ["--dsn", dsn, "--master-key-file", str(key_file)]
    assert cli.main(["peel", *args, "--mode", "client", "acct", "id", "Ord", "OPE"]) == 0
    capsys.readouterr()
    assert cli.main(["layers", *args, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    onions = {(o["table"], o["column"], o["onion"]): o for o in report["onions"]}
    assert onions[("acct", "balance", "Ord")]["layer"] == "OPE"
    assert onions[("acct", "owner", "Eq")]["floor"] == "RND"
    stored = [o for o in report["onions"] if o["layer"] != "(on first use)"]
    assert stored and all(
        o["stored_as"].startswith("t_") and "acct" not in o["stored_as"] for o in stored
    )
    pending = [o for o in report["onions"] if o["layer"] == "(on first use)"]
    assert all(o["stored_as"] == "-" for o in pending)
    peels = report["peels"]
    assert [
        (p["column"], p["onion"], p["from_layer"], p["to_layer"], p["mode"]) for p in peels
    ] == [
        ("acct.id", "Ord", "RND", "OPE", "client"),  # (the latest first)
        ("acct.id", "Ord", "-", "RND", "build"),  # the DBA's peel: built, then peeled
        ("acct.balance", "Ord", "-", "OPE", "build"),  # built at the layer the range needs
    ]
    assert all(p["by_user"] and p["at"] and p["client_addr"] for p in peels)
    columns = {c["column"]: c for c in report["columns"]}
    assert columns["acct.id"]["most_revealing"] == "Ord at OPE"


def test_join_group_leakage_is_reported(new_database: Any) -> None:
    dsn = new_database("admin_jg")
    key = MasterKey.generate()
    cfg = {"tables": {t: {"k": {"join_group": "kg"}} for t in ("l", "r")}}
    with adaptive_client.connect(dsn, master_key=key, config=cfg, autocommit=True) as conn:
        conn.execute("CREATE TABLE l (k integer PRIMARY KEY)")
        conn.execute("CREATE TABLE r (k integer PRIMARY KEY)")
    with psycopg.connect(dsn, autocommit=True) as raw:
        rows = admin.layers_report(raw, key)
    eq = [r for r in rows if r.onion == "Eq"]
    assert len(eq) == 2 and all("join group kg" in r.provider_learns for r in eq)


def test_peel_command_respects_floors(db: tuple[str, MasterKey, Path], capsys: Any) -> None:
    dsn, _, key_file = db
    args = ["--dsn", dsn, "--master-key-file", str(key_file)]
    assert cli.main(["peel", *args, "acct", "balance", "Eq", "DET"]) == 0
    assert "peeled to DET" in capsys.readouterr().out
    assert cli.main(["peel", *args, "acct", "owner", "Eq", "DET"]) == 1
    assert "floor" in capsys.readouterr().err
    assert cli.main(["peel", *args, "acct", "owner", "Sum", "HOM"]) == 1


def test_rotate_master_key(db: tuple[str, MasterKey, Path], tmp_path: Path, capsys: Any) -> None:
    dsn, old, old_file = db
    new = MasterKey.generate()
    new_file = tmp_path / "new.key"
    new_file.write_text(new.hex())
    running = adaptive_client.connect(dsn, master_key=old, autocommit=True)
    assert (
        cli.main(
            [
                "rotate-master-key",
                "--dsn",
                dsn,
                "--master-key-file",
                str(old_file),
                "--new-key-file",
                str(new_file),
            ]
        )
        == 0
    )
    assert running.execute("SELECT owner FROM acct WHERE id = 2").fetchall() == [("bob",)]
    running.close()
    with pytest.raises(WrongMasterKey):
        adaptive_client.connect(dsn, master_key=old)
    with adaptive_client.connect(dsn, master_key=new) as conn:
        assert conn.execute("SELECT COUNT(*) FROM acct WHERE balance > 0").fetchall() == [(2,)]
