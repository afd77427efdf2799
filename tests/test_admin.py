"""The DBA's commands: layers report, audit log, explicit peels with floors, key rotation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import adaptive_client
from adaptive_client import cli
from adaptive_client.errors import WrongMasterKey
from adaptive_client.keys import MasterKey


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
