"""bit(n), bit varying(n) and money columns created, written, read back, ordered, grouped
and compared as in a plain database, on a C and an ICU database: the input literals of
PostgreSQL's regression tests for these types (good and bad, with their SQLSTATEs), as
literals, ``B'...'``/``X'...'`` constants and parameters; sum(money); ``adaptive-db
layers`` shows the columns."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import psycopg
import pytest
from type_pairs import Pair, check, outcome

import adaptive_client
from adaptive_client.admin import controls as admin
from adaptive_client.catalog.keys import MasterKey

# bit.sql's bit strings and inputs (B'...' constants' bodies, '...'::bit strings)
BITS = [
    "10", "00000000000", "11011000000", "01010101010", "101011111010", "", "0", "010101",
    "001", "0111", "011", "0010", "011101", "1010", "0000101", "00001010", "00000101",
    "000001010", "101101", "11101011", "011101011", "111010110", "01010101", "0101011100",
    "1111111111", "01010001", "01010Z01", "x01010Z01", "X554", "X555", "x1F", "b101",
    "B0110", "xabc", "1", "00000000", "000000001", "10000000", "1000000000000000",
]  # fmt: skip


PROBES = ["01010101010", "1", "0", "01010101", "00000000000", "11111111111", "0101"]


@pytest.mark.parametrize(
    "sql_type",
    ["bit(11)", "bit", "bit(8)", "bit(12)", "varbit(11)", "bit varying", "varbit(96)", "bit(4)"],
)
def test_bit_strings(pair: Pair, sql_type: str) -> None:
    """Length mismatch 22026 (bit(n)), too long 22001 (varbit(n)), a bad digit 22P02;
    ordered by bitcmp: the bits zero-filled, then the length."""
    check(pair, sql_type, BITS, probes=PROBES)
    check(pair, sql_type, BITS, as_literals=True)
    # ranges where the Ord onion is exact (bit, bit(n), varbit(n) up to about 90 bits),
    # with comparands of every length: those the column cannot hold order between values
    if sql_type not in ("bit varying", "varbit(96)"):
        check(pair, sql_type, BITS, probes=[*PROBES, "1111", "x0", "b"])
        check(pair, sql_type, BITS, as_literals=True)


@pytest.mark.parametrize("sql_type", ["bit(11)", "varbit(12)", "bit varying"])
def test_bit_constants(pair: Pair, sql_type: str) -> None:
    """B'...' and X'...' constants, written and compared (bit.sql's table rows)."""
    table = f"bitconst_{sql_type.split('(')[0].replace(' ', '_')}"
    pair.both(f"CREATE TABLE {table} (id int, v {sql_type})")
    constants = [
        "B'10'", "B'00000000000'", "B'11011000000'", "B'01010101010'", "B'101011111010'",
        "B''", "B'0'", "B'010101'", "X'1F'", "X'554'", "x'a0'",
    ]  # fmt: skip
    statements = [f"INSERT INTO {table} VALUES ({i}, {c})" for i, c in enumerate(constants)]
    statements += [
        f"SELECT id, v FROM {table} ORDER BY v, id",
        f"SELECT id FROM {table} WHERE v = B'01010101010' ORDER BY id",
        f"SELECT id FROM {table} WHERE v = X'554' ORDER BY id",
        f"SELECT v, count(*) FROM {table} GROUP BY v ORDER BY v",
    ]
    for sql in statements:
        got = []
        for conn in (pair.plain, pair.enc):
            try:
                cur = conn.execute(sql)
                got.append(("ok", cur.fetchall() if cur.description else None))
            except psycopg.Error as exc:
                got.append(("error", exc.sqlstate))
        assert got[0] == got[1], sql


# money.sql's inputs, cash_in's other spellings, and values as psycopg sends them
MONEY: list[Any] = [
    "2", "1234567890", "12345678901234567", "123456789012345678", "9223372036854775807",
    "-12345", "-1234567890", "-12345678901234567", "-123456789012345678",
    "-9223372036854775808", "(1)", "($123,456.78)", "-92233720368547758.08",
    "92233720368547758.07", "-92233720368547758.09", "92233720368547758.08",
    "-92233720368547758.085", "92233720368547758.075", "878.08", "90000000000000099.00", "123",
    "$123.45", "$123.451", "$123.454", "$123.455", "$123.456", "$123.459", "\\x0001",
    "192233720368547758.07", "$1,000.00", "12.345", "-$1.00", "(1.00)", "", "$", " - $ 1 ",
    "1,2,3.4,5", "1e3", "$ 12", "12$", "12-", "+5", "12.3.4", "abc", "1 2", "0.005", "-0.005",
    Decimal("1.005"), Decimal("-2.5"), Decimal("0.004"), Decimal("1E+20"), Decimal("NaN"),
    12, 100_000, 2**40, 2**70, 1.5,
]  # fmt: skip


def test_money(pair: Pair) -> None:
    """cash_in under lc_monetary C: rounding on the third decimal, parentheses and a
    trailing minus for negatives, 22003 past int64 cents, 22P02 on junk; ordered by the
    amount (as strings '$10.00' sorts before '$9.00')."""
    probes = ["$123.45", "0", "-1", "(1.00)", "92233720368547758.07"]
    check(pair, "money", MONEY, probes=probes)
    literals = [v for v in MONEY if isinstance(v, str)]
    check(pair, "money", literals, as_literals=True)


def test_money_sum(pair: Pair) -> None:
    """sum(money) is money (type code 790); min, max and ORDER BY by the amount.  (A
    grouped sum is left: it is evaluated by the client's engine, which has no money.)"""
    pair.both("CREATE TABLE money_sum (g int, m money)")
    rows = [(1, "$10.00"), (1, "9.99"), (2, "-$5.50"), (2, "(0.50)"), (3, None)]
    for conn in (pair.plain, pair.enc):
        conn.execute("INSERT INTO money_sum VALUES " + ", ".join(["(%s, %s)"] * len(rows)),
                     [x for r in rows for x in r])  # fmt: skip
    for sql in [
        "SELECT sum(m) FROM money_sum",
        "SELECT min(m), max(m) FROM money_sum",
        "SELECT g FROM money_sum ORDER BY m DESC NULLS LAST, g",
    ]:
        got = []
        for conn in (pair.plain, pair.enc):
            cur = conn.execute(sql)
            assert cur.description is not None
            got.append((cur.fetchall(), [d.type_code for d in cur.description]))
        assert got[0] == got[1], sql


@pytest.mark.parametrize("sql_type", ["bit(3)", "varbit(5)", "money"])
def test_description_type_codes(pair: Pair, sql_type: str) -> None:
    table = f"described_{sql_type.split('(')[0]}"
    pair.both(f"CREATE TABLE {table} (v {sql_type})")
    codes = [c.execute(f"SELECT v FROM {table}").description for c in (pair.plain, pair.enc)]
    assert codes[0] is not None and codes[1] is not None
    assert codes[0][0].type_code == codes[1][0].type_code


def test_layers_shows_bit_and_money_columns(
    new_database: Callable[..., str], master_key: MasterKey
) -> None:
    dsn = new_database("net_bit_layers")
    types = {"b": "bit(3)", "v": "varbit", "m": "money"}
    columns = ", ".join(f"{c} {t}" for c, t in types.items())
    with adaptive_client.connect(dsn, master_key=master_key.hex(), autocommit=True) as conn:
        conn.execute(f"CREATE TABLE typed (id int PRIMARY KEY, {columns})")
        conn.execute("INSERT INTO typed VALUES (1, B'101', X'1F', '$1.00')")
        for column in types:
            conn.execute(f"SELECT id FROM typed ORDER BY {column}").fetchall()
        conn.execute("SELECT sum(m) FROM typed").fetchall()
    with psycopg.connect(dsn) as raw:
        rows = admin.layers_report(raw, master_key)
    shown = {(r.column, r.type, r.onion): r for r in rows if r.table == "typed"}
    assert shown["b", "bit(3)", "Ord"].provider_learns.startswith(
        "order of values (and equality), and their approximate values"
    )
    assert shown["v", "varbit", "Ord"].provider_learns.startswith("order of an 8-byte prefix, and")
    assert shown["m", "money", "Ord"].layer == "OPE"
    assert ("b", "bit(3)", "Eq") in shown and ("v", "varbit", "Eq") in shown


@pytest.mark.parametrize("layer", ["ASHE", "HOM"])
def test_money_sum_onion(
    new_database: Callable[..., str], master_key: MasterKey, layer: str
) -> None:
    """With Sum onions configured, sum(money) is computed on the server over the Sum
    onion (the layers report shows it) and equals PostgreSQL's; past 64 bits it is
    PostgreSQL's 22003."""
    config = {"defaults": {"sum": True, "sum_layer": layer, "hom_bits": 512}}
    plain = psycopg.connect(new_database("net_money_p"), autocommit=True)
    dsn = new_database("net_money_e")
    enc = adaptive_client.connect(dsn, master_key=master_key.hex(), config=config, autocommit=True)
    amounts = ["$10.00", "9.99", "-$5.50", "(0.50)", "92233720368547758.07", "0.01"]
    try:
        for conn in (plain, enc):
            conn.execute("CREATE TABLE ms (id int, m money)")
            for i, a in enumerate(amounts):
                conn.execute("INSERT INTO ms VALUES (%s, %s)", (i, a))
        for where in ["id < 4", "id <> 4", "id = 99", "id >= 0"]:
            sql = f"SELECT sum(m) FROM ms WHERE {where}"
            got = [outcome(c, sql) for c in (plain, enc)]
            assert got[0] == got[1], where
        assert got[0] == ("error", "22003")
    finally:
        plain.close()
        enc.close()
    with psycopg.connect(dsn) as raw:
        rows = admin.layers_report(raw, master_key)
    assert any(r.column == "m" and r.onion == "Sum" for r in rows)


def test_bit_constants_elsewhere(pair: Pair) -> None:
    """A bit-string constant outside a bit column is the text of its bits, as PostgreSQL
    gives it (selected, concatenated, stored into text); cast to another type it is
    refused rather than read as a string of digits (X'1F'::int is 31, not 11111)."""
    pair.both("CREATE TABLE bit_elsewhere (id int, t text)")
    for sql in [
        "INSERT INTO bit_elsewhere VALUES (1, B'101'), (2, X'A1')",
        "SELECT id, t FROM bit_elsewhere ORDER BY id",
        "SELECT B'101', X'1F', B'101' || B'1'",
        "SELECT id FROM bit_elsewhere WHERE t = '10100001'",
    ]:
        assert outcome(pair.plain, sql) == outcome(pair.enc, sql), sql
    with pytest.raises(psycopg.errors.FeatureNotSupported):
        pair.enc.execute("SELECT X'1F'::int")


@pytest.mark.parametrize(
    "sql",
    ["SELECT avg(m) FROM agg_types", "SELECT min(b) FROM agg_types",
     "SELECT max(v) FROM agg_types", "SELECT min(mac), max(mac8) FROM agg_types",
     "SELECT min(m), max(m), min(i), max(i) FROM agg_types", "SELECT sum(i) FROM agg_types",
     "SELECT count(DISTINCT v), count(b) FROM agg_types"],
)  # fmt: skip
def test_aggregates_postgresql_has(pair: Pair, sql: str) -> None:
    """min and max where PostgreSQL has them (money, inet), its 42883 where it does not
    (avg(money), min(bit), max(varbit), min(macaddr), sum(inet))."""
    pair.both(
        "CREATE TABLE IF NOT EXISTS agg_types "
        "(m money, b bit(3), v varbit, mac macaddr, mac8 macaddr8, i inet)"
    )
    if not pair.plain.execute("SELECT 1 FROM agg_types").fetchall():
        for conn in (pair.plain, pair.enc):
            conn.execute(
                "INSERT INTO agg_types VALUES ('$5', '101', '1', '08002b010203', "
                "'08002b010203', '10.0.0.1'), ('-$1.50', '011', '0111', '08002b010204', "
                "'08002b010204', '::1')"
            )
    assert outcome(pair.plain, sql) == outcome(pair.enc, sql)
