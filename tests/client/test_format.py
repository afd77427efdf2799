"""Ciphertext formats: a database written in the previous format (AES-CBC RND layers,
keyring format 2) is refused with a typed error naming ``adaptive-db migrate``, and that
command re-encrypts it in place, atomically; afterwards every query answers as PostgreSQL
does on the plain data, peels included.

The previous-format database is made by writing with this client and then turning every
RND value back into the old bytes (``LegacyCbcRnd``, the exact old format, checked by its
known answers in tests/schemes/test_rnd.py) and the keyring back to format 2, with the
root key wrapped under that format's label, as a client of that format left it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

import adaptive_client
from adaptive_client.admin import cli
from adaptive_client.admin.migrate import migrate
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.catalog.metadata import KEYRING_FORMAT, Catalog, root_label
from adaptive_client.catalog.onions import TOKEN_ONIONS
from adaptive_client.errors import FormatOutdated, MetadataTampered
from adaptive_client.schemes.rnd import RND, LegacyCbcRnd

SCHEMA = [
    "CREATE TABLE item (id integer PRIMARY KEY, name text, price numeric(8,2), "
    "qty integer, placed date, note varchar(60))",
    "CREATE TABLE line (item_id integer REFERENCES item (id), n integer, amount bigint)",
]
ITEMS = [
    (1, "red apple", "1.50", 10, "2024-01-05", "fresh fruit"),
    (2, "green pear", "2.25", None, "2024-02-11", None),
    (3, "blue plum", None, 7, None, "stone fruit"),
    (4, "", "0.00", 0, "2023-12-31", "a much longer note, beyond a block or two"),
    (5, None, "99.99", -3, "2024-03-01", "fruit"),
]
LINES = [(1, 1, 100), (1, 2, 250), (2, 1, -5), (4, 1, None), (5, 3, 9_000_000_000)]
QUERIES = [
    "SELECT id, name, price, qty, placed, note FROM item ORDER BY id",
    "SELECT id FROM item WHERE name = 'green pear'",
    "SELECT id FROM item WHERE qty > 0 ORDER BY qty",
    "SELECT name, sum(amount) FROM item JOIN line ON line.item_id = item.id "
    "GROUP BY name ORDER BY name",
    "SELECT id FROM item WHERE note LIKE '%fruit%' ORDER BY id",
    "SELECT max(placed), min(price) FROM item",
]


def _fill(conn: Any) -> None:
    for stmt in SCHEMA:
        conn.execute(stmt)
    cur = conn.cursor()
    cur.executemany("INSERT INTO item VALUES (%s, %s, %s, %s, %s, %s)", ITEMS)
    cur.executemany("INSERT INTO line VALUES (%s, %s, %s)", LINES)


@pytest.fixture(scope="module")
def plain_answers(new_database: Callable[..., str]) -> list[list[tuple[Any, ...]]]:
    with psycopg.connect(new_database("fmt_plain"), autocommit=True) as conn:
        _fill(conn)
        return [conn.execute(q).fetchall() for q in QUERIES]


def _rnd_columns(dsn: str, master: MasterKey) -> list[tuple[str, Any]]:
    """(anon table, onion column) of every onion column at RND."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        catalog = Catalog.open(conn, master, outdated_ok=True)
    return [
        (meta.anon, oc)
        for meta in catalog.tables.values()
        for col in meta.columns.values()
        for oc in col.storage
        if oc.layer == "RND"
    ]


def _stored(dsn: str, columns: list[tuple[str, Any]]) -> dict[tuple[str, str], list[Any]]:
    """Every RND column's stored values, in a fixed order."""
    out = {}
    with psycopg.connect(dsn, autocommit=True) as conn:
        for table, oc in columns:
            out[(table, oc.anon)] = [
                r[0]
                for r in conn.execute(
                    sql.SQL("SELECT {} FROM {} ORDER BY ctid").format(
                        sql.Identifier(oc.anon), sql.Identifier(table)
                    )
                ).fetchall()
            ]
    return out


def _to_previous_format(dsn: str, master: MasterKey) -> int:
    """Rewrite a format-3 database as a format-2 client left it; the RND values turned."""
    columns = _rnd_columns(dsn, master)
    turned = 0
    with psycopg.connect(dsn) as conn:
        for table, oc in columns:
            new, old = RND(oc.keys["RND"]), LegacyCbcRnd(oc.keys["RND"])
            tbl, col = sql.Identifier(table), sql.Identifier(oc.anon)
            rows = conn.execute(
                sql.SQL("SELECT ctid, {} FROM {} WHERE {} IS NOT NULL").format(
                    col if oc.onion in TOKEN_ONIONS else sql.SQL("{}::bytea").format(col), tbl, col
                )
            ).fetchall()
            for ctid, value in rows:
                if oc.onion in TOKEN_ONIONS:
                    value = [old.encrypt(new.decrypt(bytes(value[0])))]
                else:
                    value = old.encrypt(new.decrypt(bytes(value)))
                conn.execute(
                    sql.SQL("UPDATE {} SET {} = %s WHERE ctid = %s").format(tbl, col),
                    (value, ctid),
                )
                turned += 1
        catalog = Catalog.open(conn, master)
        catalog.set_format(conn, master, 2)
        conn.execute(OLD_RND_DECRYPT)
    return turned


# A stand-in for the previous format's stored procedure (it stripped CBC, not CTR): the
# migration installs this format's procedures in its transaction.
OLD_RND_DECRYPT = (
    "CREATE OR REPLACE FUNCTION adaptive.rnd_decrypt(ct bytea, key bytea) RETURNS bytea "
    "LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT '\\x00'::bytea $$"
)


def _server_strips_ctr(dsn: str) -> bool:
    key = bytes(range(32))
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT adaptive.rnd_decrypt(%s, %s)", (RND(key).encrypt(b"\x02abc"), key)
        ).fetchone()
    return row is not None and bytes(row[0]) == b"\x02abc"


@pytest.fixture
def previous_format_db(new_database: Callable[..., str], master_key: MasterKey) -> str:
    dsn = new_database("fmt_old")
    with adaptive_client.connect(dsn, master_key=master_key, autocommit=True) as conn:
        _fill(conn)
        # one onion peeled before the migration: it has no RND layer left to migrate
        conn.execute("SELECT id FROM item WHERE qty = 7").fetchall()
    assert _to_previous_format(dsn, master_key) > 20
    assert not _server_strips_ctr(dsn)
    return dsn


def test_previous_format_is_refused_with_the_command_to_run(
    previous_format_db: str, master_key: MasterKey
) -> None:
    with pytest.raises(FormatOutdated, match=r"adaptive-db migrate") as info:
        adaptive_client.connect(previous_format_db, master_key=master_key)
    assert isinstance(info.value, psycopg.NotSupportedError)
    assert "format 2" in str(info.value)


def test_migrate_command_then_every_answer_as_postgresql(
    previous_format_db: str,
    master_key: MasterKey,
    plain_answers: list[list[tuple[Any, ...]]],
    tmp_path: Path,
    capsys: Any,
) -> None:
    before = _stored(previous_format_db, _rnd_columns(previous_format_db, master_key))
    key_file = tmp_path / "master.key"
    key_file.write_text(master_key.hex())
    args = ["migrate", "--dsn", previous_format_db, "--master-key-file", str(key_file)]
    assert cli.main(args) == 0
    assert "format 2 -> 3" in capsys.readouterr().out
    after = _stored(previous_format_db, _rnd_columns(previous_format_db, master_key))
    assert after.keys() == before.keys()
    for name, values in before.items():  # every value re-encrypted, 19..34 bytes shorter
        for old, new in zip(values, after[name], strict=True):
            assert (old is None) == (new is None)
            if old is not None and not isinstance(old, list):
                assert len(old) >= 1 + 16 + 16 and len(new) < len(old) - 3
    with psycopg.connect(previous_format_db) as conn:
        assert conn.execute("SELECT format FROM adaptive.keyring").fetchone() == (KEYRING_FORMAT,)
    assert _server_strips_ctr(previous_format_db)
    with adaptive_client.connect(previous_format_db, master_key=master_key) as conn:
        answers = [conn.execute(q).fetchall() for q in QUERIES]  # peels the rest server-side
    assert answers == plain_answers
    assert cli.main(args) == 0  # again: nothing to do
    assert "nothing to do" in capsys.readouterr().out


def test_migration_is_atomic(previous_format_db: str, master_key: MasterKey) -> None:
    columns = _rnd_columns(previous_format_db, master_key)
    table, oc = columns[-1]  # the last column of the last table migrated: a late failure
    with psycopg.connect(previous_format_db, autocommit=True) as conn:
        conn.execute(
            sql.SQL(
                "UPDATE {} SET {} = %s WHERE ctid = (SELECT max(ctid) FROM {} WHERE {} IS NOT NULL)"
            ).format(
                sql.Identifier(table),
                sql.Identifier(oc.anon),
                sql.Identifier(table),
                sql.Identifier(oc.anon),
            ),
            ([b"\x01" + bytes(48)] if oc.onion in TOKEN_ONIONS else b"\x01" + bytes(48),),
        )
    before = _stored(previous_format_db, columns)
    with psycopg.connect(previous_format_db, autocommit=True) as conn, pytest.raises(psycopg.Error):
        migrate(conn, master_key)
    assert _stored(previous_format_db, columns) == before  # nothing moved
    assert not _server_strips_ctr(previous_format_db)  # nor the stored procedures
    with pytest.raises(FormatOutdated):
        adaptive_client.connect(previous_format_db, master_key=master_key)


def test_an_empty_previous_format_database_moves_on_open(
    new_database: Callable[..., str], master_key: MasterKey
) -> None:
    dsn = new_database("fmt_empty")
    adaptive_client.connect(dsn, master_key=master_key).close()  # creates the keyring
    with psycopg.connect(dsn) as conn:
        Catalog.open(conn, master_key).set_format(conn, master_key, 2)
        conn.execute(OLD_RND_DECRYPT)
    with adaptive_client.connect(dsn, master_key=master_key, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (a integer)")
        conn.execute("INSERT INTO t VALUES (1)")
        assert conn.execute("SELECT a FROM t WHERE a = 1").fetchall() == [(1,)]
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SELECT format FROM adaptive.keyring").fetchone() == (KEYRING_FORMAT,)
    assert _server_strips_ctr(dsn)


def test_format_number_is_bound_to_the_root_key(
    new_database: Callable[..., str], master_key: MasterKey
) -> None:
    dsn = new_database("fmt_bound")
    with adaptive_client.connect(dsn, master_key=master_key, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (a integer)")
    with psycopg.connect(dsn, autocommit=True) as conn:  # the provider lowers the number
        conn.execute("UPDATE adaptive.keyring SET format = 2")
    with pytest.raises(psycopg.Error):  # the root key does not unwrap under format 2's label
        adaptive_client.connect(dsn, master_key=master_key)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("UPDATE adaptive.keyring SET format = 4")
    with pytest.raises(MetadataTampered, match="unknown keyring format 4"):
        adaptive_client.connect(dsn, master_key=master_key)
    assert root_label(3) == "root/format-3"


def test_server_peel_refuses_a_wrong_key(
    new_database: Callable[..., str], master_key: MasterKey
) -> None:
    dsn = new_database("fmt_wrongkey")
    with adaptive_client.connect(dsn, master_key=master_key, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (a integer)")
        conn.cursor().executemany("INSERT INTO t VALUES (%s)", [(i,) for i in range(50)])
    ((table, oc),) = [c for c in _rnd_columns(dsn, master_key) if c[1].onion.value == "Eq"]
    with psycopg.connect(dsn) as conn:
        before = conn.execute(
            sql.SQL("SELECT {} FROM {} ORDER BY ctid").format(
                sql.Identifier(oc.anon), sql.Identifier(table)
            )
        ).fetchall()
        with pytest.raises(psycopg.Error, match="wrong key"):
            conn.execute(
                "SELECT adaptive.peel_layer(%s, %s, 'RND', 'DET', %s, 2)",
                (table, oc.anon, bytes(32)),
            )
        conn.rollback()
        after = conn.execute(
            sql.SQL("SELECT {} FROM {} ORDER BY ctid").format(
                sql.Identifier(oc.anon), sql.Identifier(table)
            )
        ).fetchall()
    assert after == before


def test_server_peel_without_pgcrypto_strips_per_value(
    new_database: Callable[..., str], master_key: MasterKey
) -> None:
    """Without pgcrypto, adaptive.peel_layer strips the CTR layer with the PL/Python
    adaptive.rnd_decrypt: the same answers, Search onion included."""
    dsn = new_database("fmt_nocrypto")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP EXTENSION pgcrypto")
    # (every onion stored at CREATE TABLE: the three onions peeled by the server)
    stored = {"defaults": {"on_demand": []}}
    with adaptive_client.connect(
        dsn, master_key=master_key, autocommit=True, config=stored
    ) as conn:
        _fill(conn)
        assert conn.execute("SELECT id FROM item WHERE name = 'green pear'").fetchall() == [(2,)]
        assert conn.execute("SELECT id FROM item WHERE qty > 0 ORDER BY qty").fetchall() == [
            (3,),
            (1,),
        ]
        assert conn.execute(
            "SELECT id FROM item WHERE note ~ '\\mfruit\\M' ORDER BY id"
        ).fetchall() == [
            (1,),
            (3,),
            (5,),
        ]
    with psycopg.connect(dsn) as conn:
        peeled = conn.execute(
            "SELECT count(*) FROM adaptive.peel_log WHERE mode = 'server'"
        ).fetchone()
    assert peeled is not None and peeled[0] >= 3
