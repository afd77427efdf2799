"""Master key rotation while other clients work.

``adaptive-db rotate-master-key`` re-wraps the root key (through which every other key
is reached).  Clients connected with the old key keep working on their cached root key;
a client connecting with the old key afterwards gets ``WrongMasterKey`` and reconnects
with the new one.  Stored data and sealed metadata are byte-for-byte untouched.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.admin import cli
from adaptive_client.admin.controls import rotate_master_key
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.errors import AdaptiveError, ConfigError, WrongMasterKey

ROWS = 300


def _raw_state(dsn: str, anon: str) -> tuple[Any, ...]:
    with psycopg.connect(dsn) as raw:
        data = raw.execute(f'SELECT * FROM "{anon}" ORDER BY 1').fetchall()
        tables = raw.execute("SELECT * FROM adaptive.tables ORDER BY 1").fetchall()
        keyring = raw.execute("SELECT kcv, wrapped_root FROM adaptive.keyring").fetchall()
    return data, tables, keyring


def test_rotation_under_load(new_database: Callable[..., str], tmp_path: Path) -> None:
    dsn = new_database("rotate")
    old, new = MasterKey.generate(), MasterKey.generate()
    (tmp_path / "old.key").write_text(old.hex())
    (tmp_path / "new.key").write_text(new.hex())
    with adaptive_client.connect(dsn, master_key=old, autocommit=True) as conn:
        conn.execute("CREATE TABLE acct (id integer PRIMARY KEY, owner text, balance integer)")
        conn.execute("CREATE TABLE journal (id integer, note text)")
        conn.cursor().executemany(
            "INSERT INTO acct VALUES (%s, %s, %s)",
            [(i, f"owner {i}", i * 7 % 101) for i in range(ROWS)],
        )
        conn.execute("SELECT count(*) FROM acct WHERE balance > 50")  # peel Ord(balance)
        before = conn.execute("SELECT * FROM acct ORDER BY id").fetchall()
        anon = conn.catalog.table("acct").anon
    raw_before = _raw_state(dsn, anon)

    stop = threading.Event()
    rotated = threading.Event()
    errors: list[str] = []
    counts = {"steady": 0, "steady_after": 0, "refused": 0, "reconnected": 0, "journal": 0}

    def steady() -> None:
        """A client connected before the rotation: reads and writes throughout."""
        try:
            with adaptive_client.connect(dsn, master_key=old, autocommit=True) as conn:
                n = 0
                while not stop.is_set():
                    row = conn.execute(
                        "SELECT owner, balance FROM acct WHERE id = %s", (n % ROWS,)
                    ).fetchone()
                    assert row == (f"owner {n % ROWS}", (n % ROWS) * 7 % 101), row
                    conn.execute("INSERT INTO journal VALUES (%s, %s)", (n, f"entry {n}"))
                    counts["steady"] += 1
                    counts["journal"] += 1
                    if rotated.is_set():
                        counts["steady_after"] += 1
                    n += 1
        except Exception as exc:  # collected and asserted on below
            errors.append(f"steady: {type(exc).__name__}: {exc}")

    def reconnecting() -> None:
        """A client that connects afresh each time, with the key it believes current."""
        key = old
        try:
            while not stop.is_set():
                try:
                    conn = adaptive_client.connect(dsn, master_key=key, autocommit=True)
                except WrongMasterKey:
                    assert key is old and rotated.is_set()
                    counts["refused"] += 1
                    key = new  # the operator hands out the new key
                    continue
                with conn:
                    assert conn.execute("SELECT count(*) FROM acct").fetchall() == [(ROWS,)]
                if key is new:
                    counts["reconnected"] += 1
                time.sleep(0.01)
        except AdaptiveError as exc:
            errors.append(f"reconnecting: {type(exc).__name__}: {exc}")
        except Exception as exc:
            errors.append(f"reconnecting: unexpected {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=steady), threading.Thread(target=reconnecting)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 20
    while counts["steady"] < 20 and time.monotonic() < deadline:
        time.sleep(0.05)
    args = ["--dsn", dsn, "--master-key-file", str(tmp_path / "old.key")]
    assert cli.main(["rotate-master-key", *args, "--new-key-file", str(tmp_path / "new.key")]) == 0
    rotated.set()
    while (counts["steady_after"] < 20 or counts["reconnected"] < 3) and time.monotonic() < (
        deadline + 20
    ):
        time.sleep(0.05)
    stop.set()
    for t in threads:
        t.join(30)
    assert not errors, errors
    assert counts["steady_after"] >= 20 and counts["refused"] == 1 and counts["reconnected"] >= 3

    # afterwards: the old key is refused everywhere, the new one reads the same data
    with pytest.raises(WrongMasterKey):
        adaptive_client.connect(dsn, master_key=old)
    assert cli.main(["layers", *args]) == 1
    with psycopg.connect(dsn, autocommit=True) as raw, pytest.raises(WrongMasterKey):
        rotate_master_key(raw, old, MasterKey.generate())  # the old key cannot rotate either
    with psycopg.connect(dsn, autocommit=True) as raw, pytest.raises(ConfigError):
        rotate_master_key(raw, new, new)  # "rotating" to the same key is a mistake
    with adaptive_client.connect(dsn, master_key=new) as conn:
        assert conn.execute("SELECT * FROM acct ORDER BY id").fetchall() == before
        assert conn.execute("SELECT count(*) FROM journal").fetchall() == [(counts["journal"],)]
    data, tables, keyring = _raw_state(dsn, anon)
    assert data == raw_before[0]  # ciphertexts untouched
    assert tables == raw_before[1]  # sealed metadata untouched
    assert keyring != raw_before[2]  # only the keyring changed
