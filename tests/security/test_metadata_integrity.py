"""Metadata integrity: every way the provider could alter, swap, replay or delete a
metadata row is detected (``MetadataTampered``, or ``WrongMasterKey`` for the key-check
value) before the client uses anything.

Each case tampers with a committed database as the provider would (a plain superuser
connection), checks that a new client refuses it, then restores the saved metadata and
checks that a client opens it again -- so the refusal is the tampering's doing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.errors import MetadataTampered, WrongMasterKey

CONFIG = {
    "tables": {
        "item": {"owner": {"join_group": "people"}},
        "other_group": {"id": {"join_group": "others"}},
    }
}
METADATA_TABLES = ("keyring", "catalog_head", "tables", "key_groups", "layers", "epoch")
Rows = dict[str, list[tuple[Any, ...]]]


@dataclass
class Db:
    dsn: str
    key: MasterKey
    raw: psycopg.Connection[Any]
    snapshots: dict[str, Rows]

    def connect(self, **kw: Any) -> adaptive_client.Connection:
        return adaptive_client.connect(self.dsn, master_key=self.key, config=CONFIG, **kw)

    def rows(self, table: str, where: str = "") -> list[tuple[Any, ...]]:
        return self.raw.execute(f"SELECT * FROM adaptive.{table} {where}").fetchall()

    def snapshot(self) -> Rows:
        return {t: self.rows(t) for t in METADATA_TABLES}

    def restore(self, saved: Rows) -> None:
        with self.raw.transaction():
            for t in reversed(METADATA_TABLES):
                self.raw.execute(f"DELETE FROM adaptive.{t}")
            for t in METADATA_TABLES:
                for row in saved[t]:
                    marks = ", ".join(["%s"] * len(row))
                    self.raw.execute(f"INSERT INTO adaptive.{t} VALUES ({marks})", row)

    def anon(self, plain: str) -> str:
        with self.connect() as conn:
            return conn.catalog.table(plain).anon


@pytest.fixture(scope="module")
def db(new_database: Callable[..., str]) -> Iterator[Db]:
    dsn = new_database("tamper")
    key = MasterKey.generate()
    raw = psycopg.connect(dsn, autocommit=True)
    d = Db(dsn, key, raw, {})
    with d.connect(autocommit=True) as conn:
        conn.execute("CREATE TABLE person (id integer PRIMARY KEY, pname text)")
        conn.execute("CREATE TABLE item (id integer PRIMARY KEY, owner integer, price integer)")
        conn.execute("INSERT INTO person VALUES (1, 'ann'), (2, 'bob')")
        conn.execute("INSERT INTO item VALUES (10, 1, 5), (11, 2, 7)")
        d.snapshots["before_index"] = d.snapshot()
        conn.execute("CREATE INDEX item_price ON item (price)")
        conn.execute("CREATE TABLE gone (id integer, old_col text)")
        d.snapshots["gone_first"] = d.snapshot()
        conn.execute("DROP TABLE gone")
        conn.execute("CREATE TABLE gone (id integer, new_col date)")
        conn.execute("DROP TABLE gone")
        conn.execute("CREATE TABLE other_group (id integer)")
    d.snapshots["good"] = d.snapshot()
    try:
        yield d
    finally:
        raw.close()


def _flip(blob: bytes) -> bytes:
    b = bytearray(blob)
    b[-1] ^= 1
    return bytes(b)


# -- the tamper cases: each alters the committed metadata as the provider could -----------


def alter_table_row(d: Db) -> None:
    (sealed,) = d.raw.execute(
        "SELECT sealed FROM adaptive.tables WHERE anon_name = %s", (d.anon("item"),)
    ).fetchone() or (None,)
    d.raw.execute(
        "UPDATE adaptive.tables SET sealed = %s WHERE anon_name = %s",
        (_flip(sealed), d.anon("item")),
    )


def swap_table_blobs(d: Db) -> None:
    a, b = d.anon("item"), d.anon("person")
    d.raw.execute(
        "UPDATE adaptive.tables t SET sealed = o.sealed FROM adaptive.tables o "
        "WHERE (t.anon_name, o.anon_name) IN ((%s, %s), (%s, %s))",
        (a, b, b, a),
    )


def swap_table_rows_with_versions(d: Db) -> None:
    a, b = d.anon("item"), d.anon("person")
    d.raw.execute(
        "UPDATE adaptive.tables t SET sealed = o.sealed, version = o.version "
        "FROM adaptive.tables o WHERE (t.anon_name, o.anon_name) IN ((%s, %s), (%s, %s))",
        (a, b, b, a),
    )


def renumber_table_row(d: Db) -> None:
    d.raw.execute(
        "UPDATE adaptive.tables SET version = version + 1 WHERE anon_name = %s", (d.anon("item"),)
    )


def replay_older_version(d: Db) -> None:
    """item's row as it was before CREATE INDEX (authentic, just old)."""
    old = next(r for r in d.snapshots["before_index"]["tables"] if r[0] == d.anon("item"))
    d.raw.execute(
        "UPDATE adaptive.tables SET version = %s, sealed = %s WHERE anon_name = %s",
        (old[1], old[2], old[0]),
    )


def restore_dropped_table(d: Db) -> None:
    """The row of a dropped table put back (its stored columns would need to exist too,
    but the metadata is checked first)."""
    gone = {r[0] for r in d.snapshots["gone_first"]["tables"]} - {
        r[0] for r in d.snapshots["good"]["tables"]
    }
    (anon,) = gone
    row = next(r for r in d.snapshots["gone_first"]["tables"] if r[0] == anon)
    d.raw.execute("INSERT INTO adaptive.tables VALUES (%s, %s, %s)", row)


def replay_dropped_incarnation_under_recreated(d: Db) -> None:
    """A table dropped and re-created under the same name: the first incarnation's row
    (same anonymized name) replayed in place of the second's."""
    with d.connect(autocommit=True) as conn:
        conn.execute("CREATE TABLE gone (id integer, newest_col boolean)")
    anon = d.anon("gone")
    first = next(r for r in d.snapshots["gone_first"]["tables"] if r[0] == anon)
    d.raw.execute(
        "UPDATE adaptive.tables SET version = %s, sealed = %s WHERE anon_name = %s",
        (first[1], first[2], anon),
    )


def delete_table_row(d: Db) -> None:
    d.raw.execute("DELETE FROM adaptive.tables WHERE anon_name = %s", (d.anon("person"),))


def alter_head(d: Db) -> None:
    (sealed,) = d.raw.execute("SELECT sealed FROM adaptive.catalog_head").fetchone() or (None,)
    d.raw.execute("UPDATE adaptive.catalog_head SET sealed = %s", (_flip(sealed),))


def renumber_head(d: Db) -> None:
    d.raw.execute("UPDATE adaptive.catalog_head SET generation = generation + 1")


def replay_older_head(d: Db) -> None:
    (old,) = d.snapshots["before_index"]["catalog_head"]
    d.raw.execute("UPDATE adaptive.catalog_head SET generation = %s, sealed = %s", old[1:])


def delete_head(d: Db) -> None:
    d.raw.execute("DELETE FROM adaptive.catalog_head")


def downgrade_keyring_format(d: Db) -> None:
    """Format 1 had no catalog head: claiming it would skip the head's checks."""
    d.raw.execute("DELETE FROM adaptive.catalog_head")
    d.raw.execute("UPDATE adaptive.keyring SET format = 1")


def alter_wrapped_root(d: Db) -> None:
    (w,) = d.raw.execute("SELECT wrapped_root FROM adaptive.keyring").fetchone() or (None,)
    d.raw.execute("UPDATE adaptive.keyring SET wrapped_root = %s", (_flip(w),))


def alter_key_group(d: Db) -> None:
    d.raw.execute(
        "UPDATE adaptive.key_groups SET sealed = set_byte(sealed, 40, get_byte(sealed, 40) # 1) "
        "WHERE anon_name = (SELECT min(anon_name) FROM adaptive.key_groups)"
    )


def swap_key_groups(d: Db) -> None:
    d.raw.execute(
        "UPDATE adaptive.key_groups t SET sealed = o.sealed FROM adaptive.key_groups o "
        "WHERE t.anon_name <> o.anon_name"
    )


def delete_key_group(d: Db) -> None:
    d.raw.execute(
        "DELETE FROM adaptive.key_groups "
        "WHERE anon_name = (SELECT min(anon_name) FROM adaptive.key_groups)"
    )


def copy_key_group(d: Db) -> None:
    d.raw.execute(
        "INSERT INTO adaptive.key_groups SELECT 'g_0000000000000000', sealed "
        "FROM adaptive.key_groups LIMIT 1"
    )


def layer_outside_stack(d: Db) -> None:
    d.raw.execute(
        "UPDATE adaptive.layers SET layer = 'HOM' WHERE anon_table = %s AND onion = 'Eq' "
        "AND layer = 'RND'",
        (d.anon("person"),),
    )


TAMPERED = [
    alter_table_row,
    swap_table_blobs,
    swap_table_rows_with_versions,
    renumber_table_row,
    replay_older_version,
    restore_dropped_table,
    replay_dropped_incarnation_under_recreated,
    delete_table_row,
    alter_head,
    renumber_head,
    replay_older_head,
    delete_head,
    downgrade_keyring_format,
    alter_wrapped_root,
    alter_key_group,
    swap_key_groups,
    delete_key_group,
    copy_key_group,
    layer_outside_stack,
]


def test_the_fixture_has_what_the_cases_tamper_with(db: Db) -> None:
    good = db.snapshots["good"]
    assert len(good["tables"]) == 3 and len(good["key_groups"]) == 2
    assert len(good["catalog_head"]) == 1


@pytest.mark.parametrize("tamper", TAMPERED, ids=lambda f: f.__name__)
def test_tampering_is_detected(db: Db, tamper: Callable[[Db], None]) -> None:
    tamper(db)
    try:
        with pytest.raises(MetadataTampered):
            db.connect()
    finally:
        db.restore(db.snapshots["good"])
    with db.connect() as conn:  # the untampered catalog opens, and the data is intact
        assert conn.execute("SELECT pname FROM person WHERE id = 2").fetchall() == [("bob",)]


def test_altered_key_check_value_refuses_the_key(db: Db) -> None:
    db.raw.execute("UPDATE adaptive.keyring SET kcv = set_byte(kcv, 0, get_byte(kcv, 0) # 1)")
    try:
        with pytest.raises(WrongMasterKey):
            db.connect()
    finally:
        db.restore(db.snapshots["good"])


def test_whole_catalog_rollback_is_refused_by_a_running_client(db: Db) -> None:
    """The provider restores an older, self-consistent catalog (head and rows together)
    and notifies clients: a client that has seen a later generation refuses it."""
    saved = db.snapshot()
    live = db.connect(autocommit=True)
    try:
        live.execute("CREATE INDEX person_name ON person (pname)")
        db.restore(saved)
        db.raw.execute("UPDATE adaptive.epoch SET value = value + 1")
        db.raw.execute("NOTIFY adaptive_epoch")
        # (the notification reaches the client's session when the server delivers it:
        # on a loaded machine after the next statement, maybe -- that one still reads
        # the catalog the client holds, which is the later one)
        deadline = time.monotonic() + 30
        while True:
            try:
                live.execute("SELECT pname FROM person WHERE id = 1")
            except MetadataTampered as refused:
                assert "rolled back" in str(refused)
                break
            assert time.monotonic() < deadline, "the rolled-back catalog was never refused"
            time.sleep(0.01)
    finally:
        live.close()
        db.restore(db.snapshots["good"])


def test_count_of_tamper_cases() -> None:
    assert len(TAMPERED) + 2 >= 20  # 19 parametrized, the key-check value, the rollback
