"""Backups of an encrypted database: ``pg_dump -Fc`` / ``pg_restore`` into another server
(keeping the owner, and ``--no-owner`` into a database of another name) and a
``pg_basebackup`` started as a server of its own.  The client reads every copy with the
same master key and gives the source's answers; sequences continue where the source's
do; range indexes, the ORE type and the peel UDFs come along and are used; ``adaptive-db
layers`` prints the same report; a wrong master key is refused with the client's
``WrongMasterKey``.  (docs/peels.md, "Backups and restores", is the DBA's procedure.)

Everything the client relies on lives inside the database and so inside a dump: the
schema ``adaptive`` (the sealed catalog, wrapped keys, layer records, the audit log, the
database's peel mode), its PL/pgSQL and PL/Python functions (peels, sums, MIN/MAX), the
``adaptive.ore`` type with its operators and operator class, and the extensions
``plpython3u`` and ``pgcrypto`` (``CREATE EXTENSION`` is in the dump).  Only roles
live outside a database: restoring with owners needs the owner role on the target first
(``pg_dumpall --roles-only``); ``--no-owner`` gives everything to the restoring role.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

import adaptive_client
from adaptive_client.admin import cli
from adaptive_client.admin.controls import layers_report as admin_layers
from adaptive_client.catalog.install import install
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.errors import PeelModeUnavailable, WrongMasterKey

from .own_servers import OwnServer, bin_path, free_ports, scratch_dir

pytestmark = pytest.mark.slow

#: each server's port: the first free of its three (the test's ports: 54440-54449)
SOURCE_PORTS = (54440, 54443, 54446)
TARGET_PORTS = (54441, 54444, 54447)
BASEBACKUP_PORTS = (54442, 54445, 54448)
OWNER = "shop_owner"
DBNAME = "shop"

CONFIG: dict[str, Any] = {
    "defaults": {"substring": True, "on_demand": ["Ord"], "design_budget": 256},
    "tables": {
        "customer": {
            # an Ord onion at ORE from the start: the adaptive.ore type, its operator class
            # and a range index over it must survive the dump
            "score": {"onions": ["Eq", "Ord"], "ord_layer": "ORE", "on_demand": []},
            "note": {"onions": ["Single"], "layer": "DET"},
        },
        "orders": {
            "amount": {"onions": ["Eq", "Ord", "Sum"]},
            "qty": {"onions": ["Eq", "Ord", "Sum"]},
        },
    },
}

#: the same without ORE (a base type and an operator class take a superuser): what a
#: database meant for hosted PostgreSQL is made with
CONFIG_HOSTED: dict[str, Any] = {
    **CONFIG,
    "tables": {
        **CONFIG["tables"],
        "customer": {**CONFIG["tables"]["customer"], "score": {"onions": ["Eq", "Ord"]}},
    },
}
HOSTED_DB, HOSTED_ROLE = "shop_hosted", "app"

DDL = [
    "CREATE SEQUENCE invoice_no START 1000",
    "CREATE TABLE customer (id serial PRIMARY KEY, name text, city text, born date, "
    "score integer, note text, tags jsonb)",
    "CREATE TABLE orders (id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
    "customer_id integer REFERENCES customer (id), amount numeric(10,2), qty integer, "
    "placed date, invoice integer DEFAULT nextval('invoice_no'), memo text)",
    "CREATE TABLE line (w integer, d integer, o integer, n integer, price numeric, "
    "PRIMARY KEY (w, d, o))",
    # a B-tree over the ORE column: its operator class's PL/pgSQL comparison runs when a
    # restore builds it
    "CREATE INDEX customer_score ON customer (score)",
]

#: the questions asked of the source before the dump (they peel and build what they
#: need) and of every copy after it (where they must peel and build nothing)
QUERIES = [
    # range (ORE), equality, order
    "SELECT id, name FROM customer WHERE score > 10 ORDER BY score, id",
    "SELECT id FROM customer WHERE score BETWEEN -20 AND 5 ORDER BY id",
    "SELECT id FROM customer WHERE city = 'Lima' ORDER BY id",
    "SELECT id, name FROM customer WHERE name >= 'name10' AND name < 'name20' ORDER BY name",
    # sums: a Sum onion, and a precomputed one the online design builds
    "SELECT sum(amount), sum(qty), avg(qty) FROM orders",
    "SELECT sum(amount * qty) FROM orders",
    # LIKE (trigrams), containment, a Single DET column
    "SELECT id FROM orders WHERE memo LIKE '%rush%' ORDER BY id",
    "SELECT id FROM customer WHERE tags @> '{\"k\": 2}' ORDER BY id",
    "SELECT id FROM customer WHERE note = 'note 1' ORDER BY id",
    # joins (a foreign key's join group) with grouping
    "SELECT c.name, count(*), sum(o.amount) FROM customer c JOIN orders o "
    "ON o.customer_id = c.id GROUP BY c.name ORDER BY c.name",
    "SELECT c.city, max(o.placed), min(o.invoice) FROM customer c JOIN orders o "
    "ON o.customer_id = c.id WHERE o.qty > 3 GROUP BY c.city ORDER BY c.city",
    # a range after the key's prefix: its range index
    "SELECT o, price FROM line WHERE w = 1 AND d = 2 AND o >= 5 AND o < 12 ORDER BY o",
    # everything read back
    "SELECT * FROM customer ORDER BY id",
    "SELECT * FROM orders ORDER BY id",
]
#: answered from an index of the copy, sequential scans off: range indexes (a key's
#: prefix then an Ord onion; an Ord onion built on first use) and the ORE column's
RANGE_QUERIES = [
    "SELECT o FROM line WHERE w = 2 AND d = 3 AND o >= 7 AND o < 20",
    "SELECT id FROM orders WHERE id BETWEEN 10 AND 20",
    "SELECT id FROM customer WHERE id > 30",
    "SELECT id FROM customer WHERE score > 30",
]
#: a peel the copies have not seen (orders.amount's Eq onion, RND -> DET: its Ord onion is
#: at RND too), run in the server peel mode by the restored PL/Python
LATE_PEEL = "SELECT id FROM orders WHERE amount = 14.02 ORDER BY id"


def late_peel_state(dsn: str, key: MasterKey) -> tuple[str, str | None]:
    """LATE_PEEL's onion: its layer, and the peel mode of the newest audit row if it is
    this onion's."""
    with psycopg.connect(dsn) as raw:
        (row,) = [
            r
            for r in admin_layers(raw, key)
            if (r.table, r.column, r.onion) == ("orders", "amount", "Eq")
        ]
        newest = raw.execute(
            "SELECT anon_table || '.' || anon_column, mode FROM adaptive.peel_log "
            "ORDER BY at DESC LIMIT 1"
        ).fetchone()
    return row.layer, newest[1] if newest and newest[0] == row.stored_as else None


def fill(conn: Any) -> None:
    for ddl in DDL:
        conn.execute(ddl)
    conn.cursor().executemany(
        "INSERT INTO customer (name, city, born, score, note, tags) VALUES (%s, %s, %s, %s, %s, %s)",
        [
            (
                f"name{i:02d}",
                ["Oslo", "Lima", "Pune", "Kiev"][i % 4],
                f"19{50 + i}-0{1 + i % 9}-1{i % 10}",
                (i * 37) % 100 - 50,
                f"note {i % 3}",
                json.dumps({"k": i % 5, "tag": f"t{i % 7}"}),
            )
            for i in range(1, 41)
        ],
    )
    conn.cursor().executemany(
        "INSERT INTO orders (customer_id, amount, qty, placed, memo) VALUES (%s, %s, %s, %s, %s)",
        [
            (
                1 + i % 40,
                f"{(i * 7) % 300}.{i % 100:02d}",
                i % 9 + 1,
                f"2024-0{1 + i % 9}-1{i % 10}",
                f"memo {'rush' if i % 5 == 0 else 'slow'} {i}",
            )
            for i in range(1, 121)
        ],
    )
    conn.cursor().executemany(
        "INSERT INTO line VALUES (%s, %s, %s, %s, %s)",
        [(w, d, o, o % 5, o * 1.5) for w in (1, 2) for d in (1, 2, 3) for o in range(1, 31)],
    )
    for table in ("customer", "orders", "line"):
        conn.execute(f"ANALYZE {table}")


def run(argv: list[str], timeout: int = 120) -> str:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    assert proc.returncode == 0, f"{Path(argv[0]).name} failed: {proc.stderr[-3000:]}"
    return proc.stdout


def layers_report(dsn: str, key_file: Path) -> str:
    """``adaptive-db layers`` with the audit log, as printed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(
            ["layers", "--dsn", dsn, "--master-key-file", str(key_file), "--log", "100"]
        )
    assert code == 0
    return out.getvalue()


def range_indexes(dsn: str) -> dict[str, str]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE indexname LIKE 'r\\_%%'"
        ).fetchall()
    return dict(rows)


def next_ids(dsn: str, key: MasterKey) -> list[Any]:
    """What a new connection's next inserts get from each sequence (serial, identity, a
    sequence as a default, and nextval() itself)."""
    with adaptive_client.connect(dsn, master_key=key, config=CONFIG, autocommit=True) as conn:
        customer = conn.execute(
            "INSERT INTO customer (name, city, score) VALUES ('new', 'Oslo', 1) RETURNING id"
        ).fetchone()
        order = conn.execute(
            "INSERT INTO orders (customer_id, amount, qty, memo) "
            "VALUES (%s, 1.50, 2, 'memo new') RETURNING id, invoice",
            (customer[0],),
        ).fetchone()
        (seq,) = conn.execute("SELECT nextval('invoice_no')").fetchone()
    return [customer[0], *order, seq]


@dataclass
class Source:
    """The source's state when it was copied, and what it did after."""

    key: MasterKey
    key_file: Path
    dump: Path  # pg_dump -Fc
    basebackup: Path  # pg_basebackup's data directory
    answers: list[list[tuple[Any, ...]]]  # QUERIES' answers
    layers: str  # adaptive-db layers --log
    range_indexes: dict[str, str]
    next_ids: list[Any]  # after the copies: its next inserts' ids ...
    late_peel: list[tuple[Any, ...]]  # ... and LATE_PEEL's answer
    hosted_dump: Path  # pg_dump -Fc of HOSTED_DB, made with CONFIG_HOSTED ...
    hosted_answers: list[list[tuple[Any, ...]]]  # ... and its QUERIES' answers


def build_hosted(server: OwnServer, key: MasterKey, workdir: Path) -> tuple[Path, Any]:
    """HOSTED_DB on the source server, filled and asked as the other, and its dump."""
    with psycopg.connect(server.dsn("postgres"), autocommit=True) as admin:
        admin.execute(
            sql.SQL("CREATE DATABASE {} OWNER {}").format(
                sql.Identifier(HOSTED_DB), sql.Identifier(OWNER)
            )
        )
    dsn = make_conninfo(server.dsn(HOSTED_DB), user=OWNER)
    with psycopg.connect(dsn) as conn:
        install(conn)
    with adaptive_client.connect(dsn, master_key=key, config=CONFIG_HOSTED, autocommit=True) as c:
        fill(c)
        answers = [c.execute(q).fetchall() for q in QUERIES]
    dump = workdir / "hosted.dump"
    run([bin_path("pg_dump"), "-Fc", "-f", str(dump), "-d", dsn])
    return dump, answers


@pytest.fixture(scope="module")
def source() -> Iterator[Source]:
    server = OwnServer(free_ports(SOURCE_PORTS)[0], prefix="adaptive-backup-src-")
    workdir = scratch_dir("adaptive-backup-files-")
    try:
        server.start()
        with psycopg.connect(server.dsn("postgres"), autocommit=True) as admin:
            admin.execute(sql.SQL("CREATE ROLE {} LOGIN SUPERUSER").format(sql.Identifier(OWNER)))
            admin.execute(
                sql.SQL("CREATE DATABASE {} OWNER {}").format(
                    sql.Identifier(DBNAME), sql.Identifier(OWNER)
                )
            )
        dsn = make_conninfo(server.dsn(DBNAME), user=OWNER)
        with psycopg.connect(dsn) as conn:
            install(conn)
        key = MasterKey.generate()
        key_file = workdir / "master.key"
        key_file.write_text(key.hex())
        with adaptive_client.connect(dsn, master_key=key, config=CONFIG, autocommit=True) as c:
            fill(c)
            answers = [c.execute(q).fetchall() for q in QUERIES]
        hosted_dump, hosted_answers = build_hosted(server, key, workdir)
        # the state copied: every peel and build the queries needed is done
        layers = layers_report(dsn, key_file)
        indexes = range_indexes(dsn)
        dump = workdir / "shop.dump"
        run([bin_path("pg_dump"), "-Fc", "-f", str(dump), "-d", dsn])
        basebackup = workdir / "base"
        run(
            [bin_path("pg_basebackup"), "-D", str(basebackup), "-X", "stream", "-c", "fast",
             "-d", server.dsn("postgres")]
        )  # fmt: skip
        # the source goes on: its sequences, a peel it had not done
        ids = next_ids(dsn, key)
        with adaptive_client.connect(dsn, master_key=key, config=CONFIG, autocommit=True) as c:
            late = c.execute(LATE_PEEL).fetchall()
        assert late and late_peel_state(dsn, key) == ("DET", "server")
        yield Source(
            key, key_file, dump, basebackup, answers, layers, indexes, ids, late,
            hosted_dump, hosted_answers,
        )  # fmt: skip
    finally:
        server.destroy()
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="module")
def target() -> Iterator[OwnServer]:
    """Another server, with the owner role of the source's database (the roles are not in
    a database's dump: ``pg_dumpall --roles-only`` carries them)."""
    server = OwnServer(free_ports(TARGET_PORTS)[0], prefix="adaptive-backup-dst-")
    try:
        server.start()
        with psycopg.connect(server.dsn("postgres"), autocommit=True) as admin:
            admin.execute(sql.SQL("CREATE ROLE {} LOGIN SUPERUSER").format(sql.Identifier(OWNER)))
        yield server
    finally:
        server.destroy()


def check_copy(src: Source, dsn: str, *, recovered: bool = False) -> None:
    """The copy at ``dsn`` answers, sequences, indexes and layers as the source did.

    ``recovered``: a physical copy started by replaying WAL.  PostgreSQL logs a sequence
    32 values ahead of what it hands out, so such a copy's sequences may continue a few
    values further than the source's (as after a crash): above, never at or below."""
    assert range_indexes(dsn) == src.range_indexes
    with psycopg.connect(dsn) as raw:
        (ore_columns,) = raw.execute(
            "SELECT count(*) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
            "WHERE a.atttypid = to_regtype('adaptive.ore') AND c.relkind = 'r'"
        ).fetchone()
    assert ore_columns == 1  # customer.score's Ord onion, at ORE
    with adaptive_client.connect(dsn, master_key=src.key, config=CONFIG, autocommit=True) as conn:
        for query, expected in zip(QUERIES, src.answers, strict=True):
            assert conn.execute(query).fetchall() == expected, query
        conn.execute("SET enable_seqscan = off")
        plans = ["\n".join(r[0] for r in conn.execute("EXPLAIN " + q)) for q in RANGE_QUERIES]
        conn.execute("RESET enable_seqscan")
    assert all("Index" in plan and "Seq Scan" not in plan for plan in plans), plans
    assert sum(name in plan for name in src.range_indexes for plan in plans) >= 2, plans
    # nothing peeled or built by the questions: the copy was at the source's layers
    assert layers_report(dsn, src.key_file) == src.layers
    with pytest.raises(WrongMasterKey):
        adaptive_client.connect(dsn, master_key=MasterKey.generate()).close()
    # sequences continue where the source's were when it was copied
    ids = next_ids(dsn, src.key)
    if recovered:
        assert all(got >= expected for got, expected in zip(ids, src.next_ids, strict=True))
    else:
        assert ids == src.next_ids
    # the peel functions came along: a peel the source did after the copy, here in the
    # server mode too
    assert late_peel_state(dsn, src.key) == ("RND", None)
    with adaptive_client.connect(dsn, master_key=src.key, config=CONFIG, autocommit=True) as conn:
        assert conn.execute(LATE_PEEL).fetchall() == src.late_peel
    assert late_peel_state(dsn, src.key) == ("DET", "server")


def restore(target: OwnServer, src: Source, dbname: str, *options: str) -> str:
    with psycopg.connect(target.dsn("postgres"), autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))
    dsn = target.dsn(dbname)
    run([bin_path("pg_restore"), "--exit-on-error", *options, "-d", dsn, str(src.dump)])
    run([bin_path("vacuumdb"), "--analyze-only", "-d", dsn])  # statistics are not dumped
    return dsn


def test_restore_keeping_owners(source: Source, target: OwnServer) -> None:
    dsn = restore(target, source, DBNAME)
    with psycopg.connect(dsn) as raw:
        owners = raw.execute(
            "SELECT DISTINCT pg_get_userbyid(relowner) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname IN ('public', 'adaptive') AND c.relkind = 'r'"
        ).fetchall()
    assert owners == [(OWNER,)]
    check_copy(source, make_conninfo(dsn, user=OWNER))


def test_restore_without_owners_into_another_name(source: Source, target: OwnServer) -> None:
    dsn = restore(target, source, "shop_copy", "--no-owner")
    check_copy(source, dsn)


def test_base_backup_started_as_a_server(source: Source) -> None:
    server = OwnServer(free_ports(BASEBACKUP_PORTS)[0], prefix="adaptive-backup-bb-")
    try:
        server.datadir.parent.mkdir(parents=True)
        shutil.copytree(source.basebackup, server.datadir)
        server.start_existing()
        check_copy(source, make_conninfo(server.dsn(DBNAME), user=OWNER), recovered=True)
    finally:
        server.destroy()


#: what a role that is not a superuser may not restore: PL/Python (the server-side peel)
#: and the ORE type with what is made of it (its input and output functions, in the
#: language ``internal``; its comparisons, operators and operator class)
NEEDS_SUPERUSER = re.compile(r"plpython3u|adaptive\.ore|language internal|must be superuser")


def test_restore_by_a_role_that_is_not_a_superuser(source: Source, target: OwnServer) -> None:
    """Hosted PostgreSQL: the database's owner restores with ``--no-owner``; what needs a
    superuser fails (and only that), ``adaptive-db init --peel client`` records the
    client peel mode, and the client reads and peels as before."""
    with psycopg.connect(target.dsn("postgres"), autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(HOSTED_ROLE)))
        admin.execute(
            sql.SQL("CREATE DATABASE {} OWNER {}").format(
                sql.Identifier(HOSTED_DB), sql.Identifier(HOSTED_ROLE)
            )
        )
    dsn = make_conninfo(target.dsn(HOSTED_DB), user=HOSTED_ROLE)
    proc = subprocess.run(
        [bin_path("pg_restore"), "--no-owner", "--no-privileges", "-d", dsn,
         str(source.hosted_dump)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    errors = [line for line in proc.stderr.splitlines() if "ERROR:" in line]
    assert errors and all(NEEDS_SUPERUSER.search(e) for e in errors), [
        e for e in errors if not NEEDS_SUPERUSER.search(e)
    ]
    run([bin_path("vacuumdb"), "--analyze-only", "-d", dsn])
    # the server peel is not there: said at once, with what to do
    with pytest.raises(PeelModeUnavailable, match="adaptive-db init --peel client"):
        adaptive_client.connect(dsn, master_key=source.key)
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli.main(["init", "--dsn", dsn, "--peel", "client"]) == 0
    with adaptive_client.connect(
        dsn, master_key=source.key, config=CONFIG_HOSTED, autocommit=True
    ) as conn:
        for query, expected in zip(QUERIES, source.hosted_answers, strict=True):
            assert conn.execute(query).fetchall() == expected, query
        assert conn.execute(LATE_PEEL).fetchall() == source.late_peel
    assert late_peel_state(dsn, source.key) == ("DET", "client")
