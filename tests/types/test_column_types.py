"""Column types beyond the first ones -- timestamp(p), timestamptz(p), time(p), uuid,
bytea -- created, written, read back, ordered, grouped and compared as in a plain
database, on a C and an ICU database; types PostgreSQL does not have refused as it
refuses them; each new column shown by ``adaptive-db layers``."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from type_pairs import Pair, check, norm, outcome

import adaptive_client
from adaptive_client.admin import controls as admin
from adaptive_client.catalog.keys import MasterKey

STAMPS = [
    "1999-01-08 04:05:06.123456", "1999-01-08 04:05:06.5", "1969-07-20 20:17:40.05",
    "1999-01-08 04:05:06.125", "2000-01-01 00:00:00.0000005", "1899-12-31 23:59:59.95",
    dt.datetime(2024, 2, 29, 12, 0, 0, 999999), "epoch", "Jan 8 1999 4:05:06.75 PM",
]  # fmt: skip


@pytest.mark.parametrize("p", [0, 1, 2, 3, 5, 6])
def test_timestamp_precision(pair: Pair, p: int) -> None:
    """timestamp(p) rounds what it stores to p fractional digits, as PostgreSQL
    (half away from zero around 2000-01-01).  Comparands here are exact at p digits
    (see the report of what is left: an unrounded comparand is rounded by the client)."""
    pair.both("SET TimeZone = 'UTC'")
    check(pair, f"timestamp({p})", STAMPS, probes=["1999-01-08 04:05:06", "epoch"])


@pytest.mark.parametrize(
    "sql_type", ["timestamptz", "timestamptz(0)", "timestamp(3) with time zone"]
)
@pytest.mark.parametrize("zone", ["UTC", "America/New_York", "Asia/Kolkata"])
def test_timestamptz(pair: Pair, sql_type: str, zone: str) -> None:
    pair.both(f"SET TimeZone = '{zone}'")
    values = [
        *STAMPS,
        "1999-01-08 04:05:06.5+02",
        "2024-11-03 01:30:00 America/New_York",
        dt.datetime(2024, 6, 1, 12, tzinfo=dt.UTC),
        dt.datetime(2024, 6, 1, 12),
    ]
    check(pair, sql_type, values, probes=["1999-01-08 04:05:06+00", "2024-06-01 12:00 UTC"])


TIMES = [
    "04:05:06.789", "04:05", "04:05 PM", "040506", "allballs", "1999-01-08 04:05:06",
    "04:05:06 PST", "2003-04-12 04:05:06 America/New_York", "25:00", "foo", "12:00 am",
    "23:59:59.999999", dt.time(13, 14, 15, 161718), "04:05:06.5",
    # assigned, a timestamp's time of day (a timestamptz's in the session's zone) and an
    # interval's time field (refused before)
    dt.datetime(2020, 1, 1, 10, 30, 5, 123456), dt.datetime(2020, 6, 1, 23, 59, tzinfo=dt.UTC),
    dt.timedelta(days=1, seconds=5), dt.timedelta(hours=-1), dt.timedelta(hours=30),
]  # fmt: skip


@pytest.mark.parametrize("sql_type", ["time", "time(0)", "time(3)", "time without time zone"])
def test_time(pair: Pair, sql_type: str) -> None:
    exact = sql_type in ("time", "time without time zone")
    values = TIMES if exact else [v for v in TIMES if v != "23:59:59.999999"]
    check(pair, sql_type, values, probes=["04:05:06", "12:00", "allballs"])


UUIDS = [
    "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}",
    "A0EEBC999C0B4EF8BB6D6BB9BD380A12", "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a13",
    "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
    "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1", "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
    "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 ", "xyz", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
    "a0eebc99-9c0b4-ef8bb6d6-bb9bd380a11", uuid.UUID(int=7), uuid.UUID(int=2**127 + 1),
    # the same first 8 bytes, told apart by the rest (the client finishes the sort)
    "a0eebc99-9c0b-4ef8-0000-000000000001", "a0eebc99-9c0b-4ef8-ffff-000000000000",
]  # fmt: skip


def test_uuid(pair: Pair) -> None:
    """uuid orders bytewise; ``=`` on the server, ranges through the client engine (the
    server's prefix range first)."""
    check(pair, "uuid", UUIDS, probes=UUIDS[:6])
    check(pair, "uuid", [u for u in UUIDS if isinstance(u, str)], as_literals=True)


BYTEAS: list[Any] = [
    b"abc", b"", b"ab", b"abd", b"\x00\xff", b"abcdefgh1", b"abcdefgh0", b"abcdefgh",
    "\\x414243", "\\x 41 42 ", "abc", "a\\\\b", "\\001x", "\\xzz", "\\x4", "\\x4 1", "a\\q",
    bytearray(b"\x80" * 20), memoryview(b"xyz"),
]  # fmt: skip


def test_bytea(pair: Pair) -> None:
    """bytea orders bytewise (a prefix first), string input read as byteain reads it."""
    check(pair, "bytea", BYTEAS, probes=[b"abc", b"", "\\x00ff", b"abcdefgh", "abcdefgh0"])
    literals = [v for v in BYTEAS if isinstance(v, str)]
    check(pair, "bytea", literals, as_literals=True)


@pytest.mark.parametrize("name", ["tinyint", "mediumint", "datetime", "nvarchar(5)", "longtext"])
def test_types_postgresql_lacks(pair: Pair, name: str) -> None:
    """Another dialect's type names, which the SQL parser knows, are refused as
    PostgreSQL refuses them: 42704, type ... does not exist."""
    sql = f"CREATE TABLE lacks_{name.split('(')[0]} (x {name})"
    for conn in (pair.plain, pair.enc):
        with pytest.raises(psycopg.errors.UndefinedObject, match="does not exist"):
            conn.execute(sql)


@pytest.mark.parametrize("name", ["xml", "tsvector", "point"])
def test_types_out_of_reach_are_refused_by_name(pair: Pair, name: str) -> None:
    with pytest.raises(psycopg.Error) as info:
        pair.enc.execute(f"CREATE TABLE later_{name.split('(')[0].split()[0]} (x {name})")
    assert name.split("(")[0].split()[0] in str(info.value).lower()


def test_layers_shows_each_new_column(
    new_database: Callable[..., str], master_key: MasterKey
) -> None:
    dsn = new_database("layers_types")
    types = {
        "ts": "timestamp(3)",
        "tz": "timestamptz",
        "t": "time(2)",
        "u": "uuid",
        "b": "bytea",
    }
    columns = ", ".join(f"{c} {t}" for c, t in types.items())
    with adaptive_client.connect(dsn, master_key=master_key.hex(), autocommit=True) as conn:
        conn.execute(f"CREATE TABLE typed (id int PRIMARY KEY, {columns})")
        conn.execute(
            "INSERT INTO typed VALUES (1, 'epoch', 'epoch', '04:05', %s, %s)",
            (uuid.uuid4(), b"\x00"),
        )
    with psycopg.connect(dsn) as raw:
        rows = admin.layers_report(raw, master_key)
    shown = {(r.column, r.type, r.onion) for r in rows if r.table == "typed"}
    for column, sql_type in types.items():
        expect = parsed_sql(sql_type)
        assert {(column, expect, "Eq"), (column, expect, "Ord")} <= shown, (column, shown)
    ords = {r.column: r.provider_learns for r in rows if r.table == "typed" and r.onion == "Ord"}
    # never ordered: not stored yet (built on first use)
    assert ords["u"] == ords["b"] == "nothing (not stored: built when a query first needs it)"
    # ordered once: the Ord onions are at OPE, over an 8-byte prefix (docs/security.md)
    with adaptive_client.connect(dsn, master_key=master_key.hex(), autocommit=True) as conn:
        conn.execute("INSERT INTO typed (id, u, b) VALUES (2, %s, %s)", (uuid.uuid4(), b"x" * 40))
        conn.execute("SELECT id FROM typed ORDER BY u").fetchall()
        conn.execute("SELECT id FROM typed ORDER BY b").fetchall()
        conn.execute("SELECT id FROM typed WHERE u = %s", (uuid.uuid4(),)).fetchall()
    with psycopg.connect(dsn) as raw:
        rows = admin.layers_report(raw, master_key)
        learns = {(r.column, r.onion): (r.layer, r.provider_learns) for r in rows}
        assert learns["u", "Ord"][0] == "OPE"
        assert learns["u", "Ord"][1].startswith("order of an 8-byte prefix, and about its first")
        assert learns["b", "Ord"][1].startswith("order of an 8-byte prefix, and about its first")
        assert learns["u", "Eq"][0] == "DET"
        # every uuid's DET ciphertext has the same length (AES-SIV over 16 bytes)
        eq = next(r.stored_as for r in rows if r.column == "u" and r.onion == "Eq")
        table, column = eq.split(".")
        lengths = raw.execute(f'SELECT DISTINCT length("{column}") FROM "{table}"').fetchall()
        assert len(lengths) == 1


def parsed_sql(text: str) -> str:
    from adaptive_client.values.encodings import parse_sql_type

    return parse_sql_type(text).sql()


@pytest.mark.parametrize("sql_type", ["timestamptz", "time", "uuid", "bytea"])
def test_description_type_codes(pair: Pair, sql_type: str) -> None:
    table = f"described_{sql_type}"
    pair.both(f"CREATE TABLE {table} (v {sql_type})")
    codes = [c.execute(f"SELECT v FROM {table}").description for c in (pair.plain, pair.enc)]
    assert codes[0] is not None and codes[1] is not None
    assert codes[0][0].type_code == codes[1][0].type_code


@pytest.mark.parametrize("sql_type", ["timestamp(2)", "timestamptz(1)", "time(0)"])
def test_unrounded_comparands(pair: Pair, sql_type: str) -> None:
    """``ts2_col = '... 06.125'`` is false in PostgreSQL for the stored ``06.13``: the
    literal is compared as written, not rounded as a stored value is."""
    pair.both("SET TimeZone = 'UTC'")
    day = "" if sql_type.startswith("time(") else "1999-01-08 "
    values = [f"{day}04:05:06.125", f"{day}04:05:06.135", f"{day}04:05:06.4"]
    check(pair, sql_type, values)


def test_an_application_schema(pair: Pair) -> None:
    """uuid keys referenced by a foreign key (ON DELETE CASCADE), a timestamptz with a
    now() default, bytea and time columns: joins, grouping, ranges and writes as in
    PostgreSQL."""
    first, second = uuid.UUID(int=11), uuid.UUID(int=2**120)
    for conn in (pair.plain, pair.enc):
        conn.execute(
            "CREATE TABLE app_parent (id uuid PRIMARY KEY, name text, "
            "made timestamptz DEFAULT now(), blob bytea)"
        )
        conn.execute(
            "CREATE TABLE app_child (id serial PRIMARY KEY, "
            "parent uuid REFERENCES app_parent(id) ON DELETE CASCADE, at time(0))"
        )
        conn.execute(
            "INSERT INTO app_parent (id, name, blob) VALUES (%s, 'x', %s), (%s, 'y', %s)",
            (first, b"\x01", second, b"\x02" * 30),
        )
        conn.execute(
            "INSERT INTO app_child (parent, at) VALUES (%s, '04:05'), (%s, '13:00:00.6'), "
            "(%s, '23:00')",
            (first, first, second),
        )
    statements: list[tuple[str, Any]] = [
        ("SELECT p.name, count(*) FROM app_parent p JOIN app_child c ON c.parent = p.id "
         "GROUP BY p.name ORDER BY 1", None),
        ("SELECT p.name, c.at FROM app_parent p JOIN app_child c ON c.parent = p.id "
         "ORDER BY c.at", None),
        ("SELECT id FROM app_parent WHERE id = %s", (first,)),
        ("SELECT name FROM app_parent WHERE blob = %s", (b"\x02" * 30,)),
        ("SELECT count(*) FROM app_child WHERE at BETWEEN '04:00' AND '14:00'", None),
        ("SELECT max(at), min(at) FROM app_child", None),
        ("SELECT name FROM app_parent ORDER BY blob DESC", None),
        ("UPDATE app_child SET at = '05:00' WHERE parent = %s", (second,)),
        ("DELETE FROM app_parent WHERE id = %s", (second,)),
        ("SELECT parent, at FROM app_child ORDER BY id", None),
        ("SELECT count(*) FROM app_parent WHERE made <= now()", None),
    ]  # fmt: skip
    for sql, params in statements:
        got = []
        for conn in (pair.plain, pair.enc):
            cur = conn.execute(sql, params)
            got.append(cur.fetchall() if cur.description else cur.rowcount)
        assert got[0] == got[1], sql


@pytest.mark.parametrize("zone", ["UTC", "America/New_York", "Asia/Kolkata"])
def test_new_types_in_the_client_engine(pair: Pair, zone: str) -> None:
    """Statements the client engine finishes (an expression over text, a range on a
    prefix-ordered column) over tables with timestamptz, uuid and bytea columns: the
    same rows as PostgreSQL's, timestamptz in the session's zone."""
    pair.both(f"SET TimeZone = '{zone}'")
    table = f"engine_{zone.split('/')[-1].lower()}"
    pair.both(f"CREATE TABLE {table} (id int PRIMARY KEY, a text, b text, at timestamptz, "
              "u uuid, raw bytea)")  # fmt: skip
    rows = [
        (1, "Ann", "Lee", "2024-03-10 12:00+00", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", b"\x01"),
        (2, "Bo", "Ng", "2024-11-03 05:30+00", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12", b""),
        (3, "Cy", "Ox", None, None, None),
        (4, "Di", "Po", "1999-12-31 23:59:59.5-08", "00000000-0000-0000-0000-000000000001",
         b"\x01\x02"),
    ]  # fmt: skip
    for conn in (pair.plain, pair.enc):
        conn.cursor().executemany(f"INSERT INTO {table} VALUES (%s, %s, %s, %s, %s, %s)", rows)
    for sql in (
        f"SELECT id, a || ' ' || b, at, u, raw FROM {table} ORDER BY at, id",
        f"SELECT a || b, max(at), min(at) FROM {table} GROUP BY 1 ORDER BY 1",
        f"SELECT a || b, at FROM {table} WHERE at > '2024-06-01' ORDER BY 1",
        f"SELECT id, a || b FROM {table} WHERE u > 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'",
        f"SELECT id FROM {table} WHERE raw < '\\x0102' ORDER BY raw, id",
        f"SELECT count(*) FROM {table} WHERE at BETWEEN '1999-12-31' AND '2024-06-01 UTC'",
    ):
        expected = outcome(pair.plain, sql)
        assert expected[0] == "ok" and expected[1], sql
        assert outcome(pair.enc, sql) == expected, sql


@pytest.mark.parametrize("sql_type", ["varchar(5)", "char(5)", "text"])
def test_strings_compared_past_the_length(pair: Pair, sql_type: str) -> None:
    """A comparison is not a storage: a varchar(n) or char(n) column compared with a
    longer string (trailing spaces, or more characters) as PostgreSQL compares them --
    trailing spaces count in varchar and text, not in char."""
    values = ["ab", "ab   ", "abcde", "ab c", ""]
    probes = ["ab      ", "ab   ", "abcdef", "abcde  x", "ab", " "]
    check(pair, sql_type, values, probes=probes)
    check(pair, sql_type, values, as_literals=True, probes=probes)


CASTS = [
    ("SELECT CAST(%s AS interval), '1 year 2 mons'::interval", (dt.timedelta(days=1),)),
    ("SELECT CAST(%s AS jsonb), '[1, 2.0]'::json, '{\"b\":1,\"a\":2}'::jsonb", ('{"a": 1}',)),
    ("SELECT %s::timetz, CAST(%s AS time with time zone)",
     ("12:00+01", dt.time(12, 57, 18, tzinfo=dt.UTC))),
    ("SELECT '{1,2}'::int[], '{a,b}'::text[], ARRAY[1, 2]::bigint[]", None),
    ("SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid, '\\x0102'::bytea", None),
    ("SELECT '10.0.0.1'::inet, '10.0.0.0/8'::cidr, '08:00:2b:01:02:03'::macaddr", None),
    ("SELECT '101'::bit(3), '1'::varbit, '$1,000.5'::money", None),
    ("SELECT '12:00'::time, '1999-01-08 04:05'::timestamptz, 5::bigint, 'x'::varchar(3)", None),
]  # fmt: skip


@pytest.mark.parametrize(("sql", "params"), CASTS)
def test_constant_casts_as_postgresql(pair: Pair, sql: str, params: Any) -> None:
    """A constant or a parameter cast to each type, selected: PostgreSQL's output names,
    type codes and the Python values psycopg gives (no form internal to the client)."""
    got = []
    for conn in (pair.plain, pair.enc):
        cur = conn.execute(sql, params)
        described = [(d.name, d.type_code) for d in cur.description or []]
        got.append((described, [tuple(norm(v) for v in r) for r in cur.fetchall()]))
    assert got[0] == got[1]
