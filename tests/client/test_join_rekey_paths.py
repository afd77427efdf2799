"""How a join adjustment rewrites the moving column (joins.py).

Values of one width (integers, dates, short text: DET's one-block ciphertexts; OPE's)
are rewritten by position: the column read in one sequential scan, re-keyed, and each
row given the value at its position, if it still holds the value read there.  Values of
several widths (text longer than a block beside short text) go through a mapping of the
distinct ciphertexts joined by one UPDATE.  Both are shown here with NULLs and
duplicates against the plaintext answer, and the positional path's guard: a row out of
place rolls the UPDATE back and leaves every value as it was.
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from psycopg import sql

import adaptive_client
from adaptive_client.adapt import joins
from adaptive_client.catalog.onions import Onion

SHORT = ["ann", "bob", None, "ann", "", "zoë", "bob", None]
MIXED = [*SHORT, "a name longer than one AES block", "a name longer than one AES block"]


def _connect(new_database: Any, master_key: Any, cfg: dict[str, Any]) -> Any:
    dsn = new_database("rekey")
    return adaptive_client.connect(dsn, master_key=master_key, config=cfg, autocommit=True)


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    for name in ("_positional_update", "_mapping_update"):
        real = getattr(joins, name)

        def spy(*args: Any, _real: Any = real, _name: str = name) -> Any:
            result = _real(*args)
            calls.append(f"{_name}:{result}")
            return result

        monkeypatch.setattr(joins, name, spy)
    return calls


@pytest.mark.parametrize(
    ("values", "path"), [(SHORT, "_positional_update"), (MIXED, "_mapping_update")]
)
def test_text_join_after_rekey_equals_plaintext(
    new_database: Any,
    master_key: Any,
    monkeypatch: pytest.MonkeyPatch,
    values: list[Any],
    path: str,
) -> None:
    cfg = {"tables": {"tag": {"name": {"joins": False}}}}
    conn = _connect(new_database, master_key, cfg)
    try:
        conn.execute("CREATE TABLE person (id integer, name text)")
        conn.execute("CREATE TABLE tag (name text, label integer)")
        for i, v in enumerate(values):
            conn.execute("INSERT INTO person VALUES (%s, %s)", (i, v))
        tags = [("ann", 1), ("bob", 2), ("", 3), ("a name longer than one AES block", 4)]
        for t in tags:
            conn.execute("INSERT INTO tag VALUES (%s, %s)", t)
        calls = _spy(monkeypatch)
        got = conn.execute(
            "SELECT p.id, t.label FROM person p JOIN tag t ON p.name = t.name ORDER BY p.id"
        ).fetchall()
        expected = sorted((i, lab) for i, v in enumerate(values) for n, lab in tags if v == n)
        assert got == expected
        assert calls and calls[0].startswith(path), calls
        moved = conn.catalog.table("person").column("name").onions[Onion.EQ].adjustments
        assert moved and moved[0]["moved"]
        # every value still reads back, NULLs included
        back = conn.execute("SELECT id, name FROM person ORDER BY id").fetchall()
        assert back == list(enumerate(values))
    finally:
        conn.close()


def test_range_join_rekeys_ord_by_position(
    new_database: Any, master_key: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = {"tables": {"band": {"lo": {"joins": False}}}}
    conn = _connect(new_database, master_key, cfg)
    try:
        conn.execute("CREATE TABLE reading (id integer, v integer)")
        conn.execute("CREATE TABLE band (lo integer, name text)")
        readings = [(i, None if i % 5 == 0 else (i * 37) % 50 - 10) for i in range(40)]
        for r in readings:
            conn.execute("INSERT INTO reading VALUES (%s, %s)", r)
        for b in [(-10, "low"), (10, "mid"), (30, "high")]:
            conn.execute("INSERT INTO band VALUES (%s, %s)", b)
        calls = _spy(monkeypatch)
        got = conn.execute(
            "SELECT r.id, b.name FROM reading r JOIN band b ON r.v >= b.lo ORDER BY r.id, b.name"
        ).fetchall()
        bands = [(-10, "low"), (10, "mid"), (30, "high")]
        expected = sorted(
            (i, n) for i, v in readings if v is not None for lo, n in bands if v >= lo
        )
        assert got == expected
        assert any(c.startswith("_positional_update") for c in calls), calls
        assert not any(c.startswith("_mapping_update") for c in calls), calls
    finally:
        conn.close()


def test_positional_update_rolls_back_a_row_out_of_place(new_database: Any) -> None:
    dsn = new_database("rekeypos")
    with psycopg.connect(dsn, autocommit=True) as raw:
        raw.execute("CREATE TABLE t (id integer, c bytea)")
        values = [bytes([i]) * 4 if i % 3 else None for i in range(10)]
        for i, v in enumerate(values):
            raw.execute("INSERT INTO t VALUES (%s, %s)", (i, v))
        present = [v for v in values if v is not None]
        olds = b"".join(present)
        news = b"".join(bytes([255 - v[0]]) * 4 for v in present)
        oc = type("Onion", (), {"anon": "c_test"})()
        tbl, col = sql.Identifier("t"), sql.Identifier("c")

        misplaced = olds[4:8] + olds[:4] + olds[8:]  # two rows' values swapped
        with raw.transaction():
            rows = joins._positional_update(raw, oc, tbl, col, misplaced, 4, news, 4, len(present))
        assert rows is None
        assert raw.execute("SELECT id, c FROM t ORDER BY id").fetchall() == list(enumerate(values))

        with raw.transaction():
            rows = joins._positional_update(raw, oc, tbl, col, olds, 4, news, 4, len(present))
        assert rows == len(present)
        expected = [
            (i, None if v is None else bytes([255 - v[0]]) * 4) for i, v in enumerate(values)
        ]
        assert raw.execute("SELECT id, c FROM t ORDER BY id").fetchall() == expected
        # the position sequence does not outlive the re-key
        left = raw.execute(
            "SELECT count(*) FROM pg_class WHERE relname LIKE 'adaptive_rekey_pos_%'"
        ).fetchone()
        assert left == (0,)
