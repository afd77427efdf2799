"""ORE ciphertexts as PostgreSQL sees them (sql/udf/26_ore.sql): adaptive.ore_cmp agrees
with the scheme's own comparison, and a column of type adaptive.ore is ordered, ranged,
indexed, aggregated and joined by its plaintexts -- against bytea constants too, the type
the client sends them in.  Its values never compare as bytea: an expression that would is
an error.  Without a superuser the type's script is skipped and nothing else."""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from psycopg import sql
from psycopg.types.string import ByteaLoader

from adaptive_client.catalog.install import install_database
from adaptive_client.schemes import OPE
from adaptive_client.schemes.ore import ORE, compare
from adaptive_client.values.encodings import encoding_for

KEY = bytes(range(32))


@pytest.fixture(scope="module")
def db(pg_dsn: str) -> Any:
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        oid = conn.execute("SELECT 'adaptive.ore'::regtype::oid").fetchone()
        assert oid is not None
        conn.adapters.register_loader(oid[0], ByteaLoader)
        yield conn


@settings(max_examples=40)
@given(st.lists(st.integers(0, 2**32 - 1), min_size=2, max_size=6))
def test_ore_cmp_agrees_with_the_scheme(db: psycopg.Connection[Any], xs: list[int]) -> None:
    o = ORE(KEY, 32)
    cts = [o.encrypt(x) for x in xs]
    pairs = [(a, b) for a in cts for b in cts]
    got = db.execute(
        "SELECT adaptive.ore_cmp(a, b) FROM unnest(%s::bytea[], %s::bytea[]) AS p(a, b)",
        ([a for a, _ in pairs], [b for _, b in pairs]),
    ).fetchall()
    assert [r[0] for r in got] == [compare(a, b) for a, b in pairs]


@pytest.mark.parametrize("t", ["integer", "bigint", "date", "text"])
def test_a_column_of_ore_is_ordered_by_its_plaintexts(db: psycopg.Connection[Any], t: str) -> None:
    enc = encoding_for(t)
    o = ORE(KEY, enc.ope_bits)
    rng = random.Random(5)
    plains = sorted({rng.getrandbits(enc.ope_bits) for _ in range(200)} | {0, 1, 2, 1000})
    order = {x: i for i, x in enumerate(plains)}
    table = f"ore_{t.replace(' ', '_')}_{uuid.uuid4().hex[:6]}"
    db.execute(sql.SQL("CREATE TABLE {} (i integer, v adaptive.ore)").format(sql.Identifier(table)))
    rows = [(order[x], o.encrypt(x)) for x in plains for _ in range(2 if x == 2 else 1)]
    rng.shuffle(rows)
    with db.cursor() as cur:
        cur.executemany(
            sql.SQL("INSERT INTO {} VALUES (%s, %s)").format(sql.Identifier(table)), rows
        )
    t_ = sql.Identifier(table)
    for indexed in (False, True):
        if indexed:
            db.execute(sql.SQL("CREATE INDEX ON {} (v)").format(t_))
            db.execute(sql.SQL("ANALYZE {}").format(t_))
        got = [r[0] for r in db.execute(sql.SQL("SELECT i FROM {} ORDER BY v, i").format(t_))]
        assert got == sorted(i for i, _ in rows)
        pivot = o.encrypt(plains[50])
        got = db.execute(
            sql.SQL("SELECT i FROM {} WHERE v >= %s AND %s > v ORDER BY v DESC").format(t_),
            (pivot, o.encrypt(plains[60])),
        ).fetchall()
        assert [r[0] for r in got] == list(range(59, 49, -1))
        lo, hi = db.execute(
            sql.SQL("SELECT adaptive.min(v), adaptive.max(v) FROM {}").format(t_)
        ).fetchone()  # type: ignore[misc]
        assert o.decrypt(lo) == plains[0] and o.decrypt(hi) == plains[-1]
        equal = db.execute(
            sql.SQL("SELECT count(*) FROM {} a JOIN {} b ON a.v = b.v").format(t_, t_)
        ).fetchone()
        assert equal == (len(rows) + 2,)  # the value stored twice: 4 pairs
        distinct = db.execute(sql.SQL("SELECT count(DISTINCT v) FROM {}").format(t_)).fetchone()
        assert distinct == (len(plains),)
    db.execute("SET enable_seqscan = off")
    try:
        plan = db.execute(
            sql.SQL("EXPLAIN SELECT i FROM {} WHERE v > %s ORDER BY v LIMIT 3").format(t_),
            (o.encrypt(plains[10]),),
        ).fetchall()
        assert any("Index Cond" in r[0] for r in plan), plan
    finally:
        db.execute("SET enable_seqscan = on")


def test_ore_values_never_compare_as_bytea(db: psycopg.Connection[Any]) -> None:
    db.execute("CREATE TEMP TABLE ore_strict (v adaptive.ore)")
    db.execute("INSERT INTO ore_strict VALUES (%s)", (ORE(KEY, 8).encrypt(3),))
    for expr in ("encode(v, 'hex')", "v || '\\x00'::bytea", "min(v)"):
        with pytest.raises(psycopg.errors.UndefinedFunction):
            db.execute(f"SELECT {expr} FROM ore_strict")
    assert db.execute("SELECT get_byte(v::bytea, 0) FROM ore_strict").fetchone() == (4,)


def test_without_a_superuser_the_type_is_skipped(
    new_database: Callable[..., str], pg_cluster: str
) -> None:
    dsn = new_database("orenosu")
    role = f"ore_owner_{uuid.uuid4().hex[:6]}"
    with psycopg.connect(pg_cluster, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
    fresh = dsn.replace("dbname=", "dbname=") + f" user={role}"
    with psycopg.connect(pg_cluster, autocommit=True) as admin:
        name = psycopg.conninfo.conninfo_to_dict(dsn)["dbname"]
        admin.execute(
            sql.SQL("CREATE DATABASE {} OWNER {}").format(
                sql.Identifier(f"{name}_nosu"), sql.Identifier(role)
            )
        )
    nosu = psycopg.conninfo.make_conninfo(fresh, dbname=f"{name}_nosu")
    try:
        with psycopg.connect(nosu) as conn:
            report = install_database(conn)
            assert "26_ore.sql" not in report.scripts and report.ore is not None
            assert "ORE type needs a superuser" in report.summary()
            assert conn.execute("SELECT to_regtype('adaptive.ore')").fetchone() == (None,)
    finally:
        with psycopg.connect(pg_cluster, autocommit=True) as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                    sql.Identifier(f"{name}_nosu")
                )
            )
            admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


def test_rnd_values_order_as_bytes_and_ope_values_are_refused(db: psycopg.Connection[Any]) -> None:
    """An onion still at RND (tag 1) may be indexed: its values order as bytea, below every
    ORE value; an OPE ciphertext against an ORE one is an error, never an order."""
    ore = ORE(KEY, 16).encrypt(5)
    rnd_low, rnd_high = b"\x01" + bytes(30), b"\x01" + b"\xff" * 30
    got = db.execute(
        "SELECT adaptive.ore_cmp(%s, %s), adaptive.ore_cmp(%s, %s), adaptive.ore_cmp(%s, %s)",
        (rnd_low, rnd_high, rnd_high, ore, ore, rnd_low),
    ).fetchone()
    assert got == (-1, -1, 1)
    with pytest.raises(psycopg.errors.DataException):
        db.execute("SELECT adaptive.ore_cmp(%s, %s)", (OPE(KEY, 16).encrypt(5), ore))
    # another key's value: ordered by key id, both ways
    other = ORE(bytes(32), 16).encrypt(5)
    expected = -1 if ore[1:9] < other[1:9] else 1
    got = db.execute(
        "SELECT adaptive.ore_cmp(%s, %s), adaptive.ore_cmp(%s, %s)", (ore, other, other, ore)
    ).fetchone()
    assert got == (expected, -expected)
