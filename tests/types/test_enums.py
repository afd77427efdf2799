"""Enum types through the client, against plain PostgreSQL (inputs and expectations of
PostgreSQL 15's enum.sql): labels written as literals, parameters and casts, refused
as PostgreSQL refuses them, ordered by declared position (values added BEFORE/AFTER
another included), grouped, compared, min/max; ALTER TYPE and DROP TYPE with their
errors; ADD VALUE inside a transaction; labels never on the server in the clear."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from type_pairs import Pair, check, open_pair, outcome

import adaptive_client
from adaptive_client.admin import controls as admin
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.catalog.usertypes import EnumPositionsExhausted


def same(pair: Pair, sql: str, params: Any = None) -> Any:
    """Run on both; the outcomes (rows or SQLSTATE) must be equal."""
    got = [outcome(c, sql, params) for c in (pair.plain, pair.enc)]
    assert got[0] == got[1], f"{sql}: plain {got[0]}, client {got[1]}"
    return got[0]


def test_enum_column(pair: Pair) -> None:
    pair.both("CREATE TYPE rainbow AS ENUM ('red', 'orange', 'yellow', 'green', 'blue', 'purple')")
    labels = ["red", "orange", "yellow", "green", "blue", "purple"]
    bad = ["mauve", "Red", " red", "red ", ""]
    check(pair, "rainbow", [*labels, "green", *bad, None], probes=[*labels, "mauve"])
    check(pair, "rainbow", [*labels, "red", *bad], as_literals=True)


def test_enum_sql_operators(pair: Pair) -> None:
    """enum.sql's queries: operators, casts, aggregates."""
    pair.both("CREATE TYPE planet AS ENUM ('venus', 'earth', 'mars')")
    pair.both("CREATE TABLE enumtest (col planet)")
    same(pair, "INSERT INTO enumtest VALUES ('venus'), ('earth'), ('mars'), ('earth')")
    for sql in [
        "SELECT * FROM enumtest WHERE col = 'earth'",
        "SELECT * FROM enumtest WHERE col <> 'earth' ORDER BY col",
        "SELECT * FROM enumtest WHERE col > 'venus' ORDER BY col",
        "SELECT * FROM enumtest WHERE col >= 'earth' ORDER BY col",
        "SELECT * FROM enumtest WHERE col < 'mars' ORDER BY col",
        "SELECT * FROM enumtest WHERE col <= 'earth' ORDER BY col DESC",
        "SELECT col, count(*) FROM enumtest GROUP BY col ORDER BY col",
        "SELECT min(col) FROM enumtest",
        "SELECT max(col) FROM enumtest",
        "SELECT max(col) FROM enumtest WHERE col < 'mars'",
        "SELECT count(DISTINCT col) FROM enumtest",
        "SELECT * FROM enumtest WHERE col = 'earth'::planet",
        "SELECT * FROM enumtest WHERE col IN ('venus', 'mars') ORDER BY col",
        "SELECT 'mars'::planet",
        "SELECT 'pluto'::planet",
        "SELECT * FROM enumtest WHERE col = 'pluto'",
        "SELECT * FROM enumtest WHERE col < 'pluto'",
    ]:
        same(pair, sql)
    same(pair, "SELECT * FROM enumtest WHERE col > %s ORDER BY col", ("venus",))
    same(pair, "INSERT INTO enumtest VALUES (%s)", (7,))  # an integer is no label (42804)


def test_result_type(pair: Pair) -> None:
    """psycopg returns an enum it has no adapter for as str; the plain database describes
    the column by the enum's OID (its own number in each database), the client as text:
    the encrypted database has no such type."""
    pair.both("CREATE TYPE kind AS ENUM ('a', 'b')")
    pair.both("CREATE TABLE kinds (k kind)")
    pair.both("INSERT INTO kinds VALUES ('b')")
    plain = pair.plain.execute("SELECT k FROM kinds")
    enc = pair.enc.execute("SELECT k FROM kinds")
    assert plain.fetchall() == enc.fetchall() == [("b",)]
    assert plain.description is not None and enc.description is not None
    assert plain.description[0].type_code >= 16384  # a user type's OID
    assert enc.description[0].type_code == 25
    assert [d.name for d in enc.description] == [d.name for d in plain.description]
    assert pair.enc.execute("SELECT 'a'::kind").description[0].name == "kind"  # type: ignore[index]


def test_add_value(pair: Pair) -> None:
    """enum.sql's planets: values added at the end, BEFORE and AFTER others, in order."""
    pair.both("CREATE TYPE planets AS ENUM ('venus', 'earth', 'mars')")
    pair.both("CREATE TABLE sky (id int, p planets)")
    pair.both("INSERT INTO sky VALUES (1, 'venus'), (2, 'earth'), (3, 'mars')")
    for sql in [
        "ALTER TYPE planets ADD VALUE 'uranus'",
        "ALTER TYPE planets ADD VALUE 'mercury' BEFORE 'venus'",
        "ALTER TYPE planets ADD VALUE 'saturn' BEFORE 'uranus'",
        "ALTER TYPE planets ADD VALUE 'jupiter' AFTER 'mars'",
        "ALTER TYPE planets ADD VALUE 'neptune' AFTER 'uranus'",
        "ALTER TYPE planets ADD VALUE 'plutoplutoplutoplutoplutoplutoplutoplutoplutoplutoplutoplutoplutopluto'",
        "ALTER TYPE planets ADD VALUE 'pluto' AFTER 'zeus'",
        "ALTER TYPE planets ADD VALUE 'mercury'",
        "ALTER TYPE planets ADD VALUE IF NOT EXISTS 'mercury'",
        "ALTER TYPE planets ADD VALUE IF NOT EXISTS 'pluto'",
        "ALTER TYPE planets ADD VALUE 'x' BEFORE",
        "ALTER TYPE nosuch ADD VALUE 'x'",
    ]:
        same(pair, sql)
    names = ["mercury", "jupiter", "saturn", "uranus", "neptune", "pluto"]
    for i, name in enumerate(names, 4):
        same(pair, "INSERT INTO sky VALUES (%s, %s)", (i, name))
    same(pair, "SELECT p FROM sky ORDER BY p")
    same(pair, "SELECT id FROM sky WHERE p > 'mars' AND p < 'neptune' ORDER BY p DESC")
    same(pair, "SELECT min(p), max(p) FROM sky")


def test_many_values_between_two(pair: Pair) -> None:
    """enum.sql's insenum: 30 values added before the same label keep their order (each
    takes the midpoint of a gap: about 32 fit between labels created together); past
    that the client refuses (54000) where PostgreSQL renumbers, and nothing changes."""
    pair.both("CREATE TYPE insenum AS ENUM ('L1', 'L2')")
    pair.both("CREATE TABLE ins (v insenum)")
    for i in range(1, 31):
        pair.both(f"ALTER TYPE insenum ADD VALUE 'i{i}' BEFORE 'L2'")
        pair.both("INSERT INTO ins VALUES (%s)", (f"i{i}",))
    pair.both("INSERT INTO ins VALUES ('L1'), ('L2')")
    same(pair, "SELECT v FROM ins ORDER BY v")
    same(pair, "SELECT v FROM ins WHERE v > 'i29' ORDER BY v")
    with pytest.raises(EnumPositionsExhausted) as info:
        for i in range(31, 80):
            pair.enc.execute(f"ALTER TYPE insenum ADD VALUE 'i{i}' BEFORE 'L2'")
    assert info.value.sqlstate == "54000"
    pair.enc.execute("INSERT INTO ins VALUES ('L2')")  # the type still works


def test_rename(pair: Pair) -> None:
    pair.both("CREATE TYPE colour AS ENUM ('red', 'green', 'blue')")
    pair.both("CREATE TABLE paint (c colour)")
    pair.both("INSERT INTO paint VALUES ('red'), ('blue')")
    for sql in [
        "ALTER TYPE colour RENAME VALUE 'red' TO 'crimson'",
        "ALTER TYPE colour RENAME VALUE 'red' TO 'crimson'",
        "ALTER TYPE colour RENAME VALUE 'blue' TO 'green'",
        "SELECT c FROM paint ORDER BY c",
        "SELECT c FROM paint WHERE c = 'crimson'",
        "SELECT c FROM paint WHERE c = 'red'",
        "ALTER TYPE colour RENAME TO hue",
        "INSERT INTO paint VALUES ('crimson'::hue)",
        "SELECT c FROM paint WHERE c < 'blue'::hue ORDER BY c",
        "SELECT 'red'::colour",
        "ALTER TYPE hue RENAME TO paint",
        "CREATE TYPE hue AS ENUM ('x')",
        "CREATE TYPE paint AS ENUM ('x')",
        "CREATE TYPE dup AS ENUM ('a', 'a')",
        "CREATE TYPE bad AS ENUM (1)",
        "CREATE TYPE bad AS ENUM",
        "CREATE TYPE empty AS ENUM ()",
        "CREATE TABLE e0 (e empty)",
        "INSERT INTO e0 VALUES ('')",
        "CREATE TABLE nope (n nosuchtype)",
    ]:
        same(pair, sql)


def test_drop_type(pair: Pair) -> None:
    pair.both("CREATE TYPE lvl AS ENUM ('lo', 'hi')")
    pair.both("CREATE TABLE gauge (id int, l lvl)")
    pair.both("ALTER TABLE gauge ADD COLUMN l2 lvl")
    pair.both("INSERT INTO gauge VALUES (1, 'hi', 'lo')")
    same(pair, "SELECT * FROM gauge WHERE l2 < l")
    same(pair, "DROP TYPE lvl")
    same(pair, "DROP TYPE lvl RESTRICT")
    try:
        pair.enc.execute("DROP TYPE lvl")
    except psycopg.errors.DependentObjectsStillExist as exc:
        assert exc.diag.message_detail == "column l of table gauge depends on type lvl\n" \
            "column l2 of table gauge depends on type lvl"  # fmt: skip
    same(pair, "DROP TYPE nosuch")
    same(pair, "DROP TYPE IF EXISTS nosuch")
    same(pair, "DROP TYPE lvl CASCADE")
    same(pair, "SELECT * FROM gauge")
    same(pair, "CREATE TYPE lvl AS ENUM ('a')")
    same(pair, "DROP TYPE lvl")


@pytest.fixture
def tx_pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    """A pair of connections in transaction mode (not autocommit)."""
    for p in open_pair(new_database, master_key, "enm_tx"):
        p.plain.autocommit = False
        p.enc.autocommit = False
        yield p


def test_add_value_in_transaction(tx_pair: Pair) -> None:
    """enum.sql: a value added in a transaction to an enum that existed before cannot be
    used until the transaction commits (55P04); one added to an enum created in the
    same transaction can; a ROLLBACK takes the value back out of the client's catalog."""
    pair = tx_pair
    pair.both("CREATE TYPE bogus AS ENUM ('good')")
    pair.both("CREATE TABLE b (v bogus)")
    for c in (pair.plain, pair.enc):
        c.commit()
    pair.both("ALTER TYPE bogus ADD VALUE 'new'")
    pair.both("SAVEPOINT x")
    same(pair, "SELECT 'new'::bogus")
    pair.both("ROLLBACK TO x")
    same(pair, "INSERT INTO b VALUES ('new')")
    pair.both("ROLLBACK TO x")
    same(pair, "INSERT INTO b VALUES ('good')")
    for c in (pair.plain, pair.enc):
        c.commit()
    same(pair, "SELECT 'new'::bogus")
    same(pair, "INSERT INTO b VALUES ('new')")
    same(pair, "SELECT v FROM b ORDER BY v")
    for c in (pair.plain, pair.enc):
        c.commit()
    # renamed in the transaction: still the old type, not safe
    pair.both("ALTER TYPE bogus RENAME TO bogon")
    pair.both("ALTER TYPE bogon ADD VALUE 'bad'")
    same(pair, "SELECT 'bad'::bogon")
    for c in (pair.plain, pair.enc):
        c.rollback()
    same(pair, "SELECT 'bad'::bogus")  # rolled back: no such label, the old name back
    for c in (pair.plain, pair.enc):
        c.rollback()
    # a type created in the transaction: its labels are usable at once, those ADD VALUE
    # added to it are not either (PostgreSQL 15)
    pair.both("CREATE TYPE fresh AS ENUM ('good')")
    pair.both("ALTER TYPE fresh ADD VALUE 'bad'")
    pair.both("ALTER TYPE fresh ADD VALUE 'ugly' BEFORE 'good'")
    pair.both("CREATE TABLE f (v fresh)")
    pair.both("INSERT INTO f VALUES ('good')")
    pair.both("SAVEPOINT y")
    same(pair, "SELECT 'bad'::fresh")
    pair.both("ROLLBACK TO y")
    same(pair, "INSERT INTO f VALUES ('ugly')")
    for c in (pair.plain, pair.enc):
        c.rollback()
    same(pair, "SELECT 'good'::fresh")  # (42704: the type went with the rollback)


def test_failed_alter_in_transaction_rolls_back(tx_pair: Pair) -> None:
    pair = tx_pair
    pair.both("CREATE TYPE st AS ENUM ('on', 'off')")
    for c in (pair.plain, pair.enc):
        c.commit()
    pair.both("ALTER TYPE st RENAME VALUE 'on' TO 'up'")
    same(pair, "ALTER TYPE st ADD VALUE 'off'")  # fails the transaction
    for c in (pair.plain, pair.enc):
        c.rollback()
    same(pair, "SELECT 'on'::st")
    same(pair, "SELECT 'up'::st")


def test_layers_and_no_label_in_clear(
    new_database: Callable[..., str], master_key: MasterKey
) -> None:
    """``adaptive-db layers`` shows an enum column; neither the server's catalog nor any
    stored byte holds a label."""
    dsn = new_database("enm_layers")
    label = "zanzibarquokka"
    with adaptive_client.connect(dsn, master_key=master_key.hex(), autocommit=True) as conn:
        conn.execute(f"CREATE TYPE secretive AS ENUM ('plain', '{label}')")
        conn.execute("CREATE TABLE held (id int PRIMARY KEY, s secretive)")
        conn.execute(f"INSERT INTO held VALUES (1, '{label}'), (2, 'plain')")
        conn.execute(f"ALTER TYPE secretive ADD VALUE '{label}2' BEFORE 'plain'")
        assert conn.execute(f"SELECT id FROM held WHERE s > '{label}2' ORDER BY s").fetchall() == [
            (2,),
            (1,),
        ]
    with psycopg.connect(dsn, autocommit=True) as raw:
        rows = admin.layers_report(raw, master_key)
        shown = {(r.column, r.type, r.onion) for r in rows if r.table == "held"}
        assert {("s", "secretive", "Eq"), ("s", "secretive", "Ord")} <= shown
        assert raw.execute("SELECT count(*) FROM pg_enum").fetchone() == (0,)
        assert raw.execute(
            "SELECT count(*) FROM pg_type WHERE typname IN ('secretive', %s)", (label,)
        ).fetchone() == (0,)
        tables = raw.execute(
            "SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r'"
        ).fetchall()
        for (table,) in tables:
            text = raw.execute(f"SELECT coalesce(string_agg(t::text, ''), '') FROM {table} t")
            dumped = str(text.fetchone())
            assert label not in dumped, table
            hexed = label.encode().hex()
            assert hexed not in dumped, table
