"""Values printed as text by the client, as PostgreSQL prints them under the session's
settings: the formatting functions against the server's own output (``value::text`` on
a plain connection), and ``COPY ... TO`` of the same table, plain and encrypted, byte
for byte equal under each setting, in the text and CSV formats, on a C and an ICU
database."""

from __future__ import annotations

import datetime as dt
import random
import struct
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from type_pairs import ICU, Pair, open_pair

from adaptive_client.catalog.keys import MasterKey
from adaptive_client.values import datetime_input, datetime_output, interval_input, text_output
from adaptive_client.values.encodings import INFINITY, NEG_INFINITY, pg_text
from adaptive_client.values.interval_encoding import PgInterval, interval_text


@pytest.fixture(scope="module")
def plain(pg_cluster: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(pg_cluster, autocommit=True) as conn:
        yield conn


def _server_texts(conn: psycopg.Connection[Any], sql_type: str, literals: list[str]) -> list[str]:
    rows = conn.execute(f"SELECT x::{sql_type}::text FROM unnest(%s::text[]) x", (literals,))
    return [r[0] for r in rows.fetchall()]


# --- float4out, float8out -----------------------------------------------------------------


def _float8_literals() -> list[str]:
    # edges by bit pattern (the smallest subnormal, the largest, the smallest normal,
    # the largest double, 2**53 and past it where Ryu's edges matter), as float8.sql's
    # output section does, powers of ten, and random bit patterns
    bits = [0x1, 0x000FFFFFFFFFFFFF, 0x0010000000000000, 0x7FEFFFFFFFFFFFFF,
            0x4340000000000000, 0x4340000000000001, 0x4350000000000000, 0x43500000000005D9]  # fmt: skip
    out = [repr(struct.unpack("<d", struct.pack("<Q", b))[0]) for b in bits]
    out += ["0", "-0", "0.1", "1.1", "-34.84", "1.2345678901234e+200", "1.2345678901234e-200",
            "1e15", "1e14", "123456789012345", "1234567890123456", "1e-4", "1e-5", "4.35",
            "1.862680848654615e+16", "1e22", "1e23", "NaN", "Infinity", "-Infinity"]  # fmt: skip
    rnd = random.Random(8)
    for _ in range(150):
        x = struct.unpack("<d", rnd.randbytes(8))[0]
        if x == x and abs(x) != float("inf"):
            out.append(repr(x))
        out.append(repr(float(rnd.randint(1, 999) * 10 ** rnd.randint(10, 25))))
        out.append(repr(rnd.uniform(-1e6, 1e6)))
    return out


def _float4_literals() -> list[str]:
    out = ["0", "-0", "1e6", "999999", "1e-4", "1e-5", "0.1", "3.4e38", "1e-45", "1.4e-45",
           "1.2345678", "16777217", "1.17549435e-38", "3.4028235e38", "NaN", "-Infinity",
           "123456.7", "1004.3", "-34.84", "1.2345679e20"]  # fmt: skip
    rnd = random.Random(4)
    for _ in range(150):
        x = struct.unpack("<f", rnd.randbytes(4))[0]
        if x == x and abs(x) != float("inf"):
            out.append(repr(x))
        out.append(repr(float(rnd.randint(1, 999) * 10 ** rnd.randint(5, 30))))
        out.append(repr(rnd.uniform(-1e7, 1e7)))
    return out


@pytest.mark.parametrize("extra", [1, 0, -3, 3, -15, 2])
@pytest.mark.parametrize(
    ("sql_type", "literals", "text"),
    [
        ("float8", _float8_literals(), text_output.float8_text),
        ("float4", _float4_literals(), text_output.float4_text),
    ],
)
def test_floats_as_postgresql_prints_them(
    plain: psycopg.Connection[Any],
    sql_type: str,
    literals: list[str],
    text: Callable[[float, int], str],
    extra: int,
) -> None:
    plain.execute("SET extra_float_digits = 1")  # (the values as psycopg loads them)
    values = [r[0] for r in plain.execute(
        f"SELECT x::{sql_type} FROM unnest(%s::text[]) x", (literals,)
    ).fetchall()]  # fmt: skip
    plain.execute(f"SET extra_float_digits = {extra}")
    expected = _server_texts(plain, sql_type, literals)
    got = [text(v, extra) for v in values]
    wrong = [(lit, e, g) for lit, e, g in zip(literals, expected, got, strict=True) if e != g]
    assert not wrong, wrong[:10]


# --- interval_out -------------------------------------------------------------------------

# interval.sql's IntervalStyle section, and intervals of mixed signs
INTERVALS = [
    "interval '0'", "interval '1-2'", "interval '1 2:03:04'", "interval '2:03:04.45679'",
    "interval '1-2' + interval '3 4:05:06.7'", "interval '1-2' - interval '3 4:05:06.7'",
    "- interval '1-2' + interval '3 4:05:06.7'", "- interval '1-2'", "- interval '1 2:03:04'",
    "interval '-10 mons -3 days +03:55:06.70'", "interval '1 year 2 mons 3 days 04:05:06.699999'",
    "interval '0:0:0.7'", "interval '@ 14 seconds ago'", "interval '1 day -1 sec'",
    "interval '-1 sec'", "interval '-0.5 sec'", "interval '1 sec'", "interval '-1 day'",
    "interval '178000000 years'", "interval '-178000000 years'", "interval '1 mon -1 day'",
    "interval '2 days -3 hours'", "interval '-12:34:56.789'", "interval '-00:00:00.000001'",
    "interval '-1 year -00:00:01'", "interval '100 hours'", "interval '-1 min'",
    "interval '2147483647 days 2147483647 months'", "interval '-2147483648 days -1 months'",
    "interval '1 year -2 months +3 days -4 hours +5 minutes -6.5 seconds'",
]  # fmt: skip
STYLES = ["postgres", "postgres_verbose", "sql_standard", "iso_8601"]


@pytest.mark.parametrize("style", STYLES)
def test_intervals_as_postgresql_prints_them(plain: psycopg.Connection[Any], style: str) -> None:
    plain.execute("SET IntervalStyle = postgres")
    fields = []
    for sql in INTERVALS:
        written = plain.execute(f"SELECT ({sql})::text").fetchone()[0]  # type: ignore[index]
        fields.append(PgInterval(*interval_input.parse(written)))
    plain.execute(f"SET IntervalStyle = {style}")
    for sql, v in zip(INTERVALS, fields, strict=True):
        expected = plain.execute(f"SELECT ({sql})::text").fetchone()[0]  # type: ignore[index]
        assert interval_text(v, style) == expected, sql


# --- byteaout, dates, zones ---------------------------------------------------------------


@pytest.mark.parametrize("style", ["hex", "escape"])
def test_bytea_as_postgresql_prints_it(plain: psycopg.Connection[Any], style: str) -> None:
    values = [b"", b"abc", b"\x00\xff\\A'\"", bytes(range(256))]
    plain.execute(f"SET bytea_output = {style}")
    for v in values:
        expected = plain.execute("SELECT %s::bytea::text", (v,)).fetchone()[0]  # type: ignore[index]
        assert text_output.bytea_text(v, style) == expected


@pytest.mark.parametrize("style", ["ISO", "SQL", "Postgres", "German"])
def test_infinities_in_every_datestyle(plain: psycopg.Connection[Any], style: str) -> None:
    plain.execute(f"SET DateStyle = '{style}'")
    with text_output.using(text_output.OutputSettings(datestyle=style)):
        for kind in ("date", "timestamp", "timestamptz"):
            for v in (INFINITY, NEG_INFINITY):
                expected = plain.execute(f"SELECT '{v}'::{kind}::text").fetchone()[0]  # type: ignore[index]
                assert pg_text(v) == expected


@pytest.mark.parametrize("zone", ["+03:30", "UTC+3", "-5", "<+0330>-3:30", "XYZ+3", "GMT-2"])
@pytest.mark.parametrize("style", ["ISO", "SQL, DMY", "Postgres", "German"])
def test_timestamptz_under_a_posix_zone(
    plain: psycopg.Connection[Any], zone: str, style: str
) -> None:
    """A zone set as a POSIX offset (west of Greenwich) prints its name as the
    abbreviation outside ISO: none for '+03:30', UTC for 'UTC+3'."""
    plain.execute(f"SET TimeZone = '{zone}'")
    plain.execute(f"SET DateStyle = '{style}'")
    reported = plain.pgconn.parameter_status(b"TimeZone")
    assert reported is not None
    tz = datetime_input.zone_named(reported.decode())
    assert tz is not None
    instant = dt.datetime(2024, 7, 1, 12, 0, 0, 250000, tzinfo=dt.UTC)
    expected = plain.execute("SELECT %s::timestamptz::text", (instant,)).fetchone()[0]  # type: ignore[index]
    datestyle = plain.pgconn.parameter_status(b"DateStyle") or b""  # (an order kept)
    assert datetime_output.text(instant.astimezone(tz), datestyle.decode()) == expected


# --- COPY ... TO, plain and encrypted -----------------------------------------------------

COLUMNS = [
    ("iv", "interval"), ("f8", "float8"), ("f4", "real"), ("b", "bytea"), ("t", "time"),
    ("tz", "timetz"), ("d", "date"), ("ts", "timestamp(3)"), ("tstz", "timestamptz"),
    ("n", "numeric"), ("n2", "numeric(10,3)"), ("m", "money"), ("bo", "boolean"),
    ("u", "uuid"), ("ip", "inet"), ("c", "cidr"), ("bt", "bit(4)"), ("vb", "varbit"),
    ("j", "json"), ("jb", "jsonb"), ("mac", "macaddr"), ("s", "text"), ("ad", "date[]"),
    ("af", "float8[]"), ("a4", "real[]"), ("ab", "bytea[]"), ("atz", "timestamptz[]"),
]  # fmt: skip
ROWS = [
    ("'1 year 2 mons'", "0.1", "0.1", r"'\x00ff5c41'", "'04:05:06.5'", "'04:05:06+05:30'",
     "'1999-01-08'", "'1999-01-08 04:05:06'", "'1999-01-08 04:05:06+00'", "'NaN'", "1.5",
     "'12.34'", "true", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", "'192.168.1.1/24'",
     "'10.0.0.0/8'", "B'1010'", "B'101'", """'{"a": 1,  "b":2}'""", """'{"a": 1,  "b":2}'""",
     "'08:00:2b:01:02:03'", "'a,b\"c'", "'{1999-01-08,infinity}'", "'{0.1,1e100}'",
     "'{0.1,3.4e38}'", r"""'{"\\x00ff",NULL}'""", """'{"1999-01-08 04:05:06+00",-infinity}'"""),
    ("'-1 year -2 mons +3 days -04:05:06.7'", "1e100", "3.4e38", "'abc'",
     "'23:59:59.999999'", "'00:00:00-08'", "'infinity'", "'-infinity'", "'infinity'",
     "'Infinity'", "-0.000", "'-1234567.89'", "false", "NULL", "'::1'", "'2001:db8::/32'",
     "B'0000'", "B''", "'[1, 2.50]'", "'[1, 2.50]'", "NULL", "''", "'{}'",
     "'{NaN,-Infinity}'", "'{1e-45}'", "NULL", "NULL"),
    ("'3 days 04:05:06'", "123456789012345678", "1.2345678", "''", "'12:00'",
     "'12:00-03:30:15'", "'2024-02-29'", "'infinity'", "'-infinity'", "'-Infinity'",
     "12.000", "'-0.5'", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "'null'", "'null'",
     "NULL", r"'\.'", "NULL", "NULL", "NULL", "NULL", "NULL"),
    ("'0'", "-0.0", "1e-45", "NULL", "NULL", "NULL", "NULL", "'2000-01-01 00:00:00.123'",
     "'2024-03-10 12:00:00.25+00'", "1e-20", "NULL", "'0'", "NULL", "NULL", "NULL", "NULL",
     "NULL", "NULL", "NULL", "NULL", "NULL", "'tab\there'", "NULL", "NULL", "NULL", "NULL",
     "NULL"),
    ("'1 day -1 sec'", "1.0e15", "1e6", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "100",
     "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL",
     "NULL", "NULL", "NULL", "NULL", "NULL", "NULL"),
]  # fmt: skip
SETTINGS = [
    [],
    ["SET IntervalStyle = postgres_verbose"],
    ["SET IntervalStyle = sql_standard"],
    ["SET IntervalStyle = iso_8601"],
    ["SET extra_float_digits = 0"],
    ["SET extra_float_digits = -3"],
    ["SET extra_float_digits = 3"],
    ["SET bytea_output = escape"],
    ["SET DateStyle = 'SQL, DMY'"],
    ["SET DateStyle = 'Postgres, MDY'", "SET TimeZone = 'America/New_York'"],
    ["SET DateStyle = German"],
    ["SET TimeZone = '+03:30'", "SET DateStyle = SQL"],
    ["SET TimeZone = 'UTC+3'", "SET DateStyle = Postgres"],
    ["SET TimeZone = 'UTC+3'"],
    ["SET TimeZone = 'Asia/Kathmandu'", "SET DateStyle = 'SQL'"],
]


@pytest.fixture(scope="module", params=["C", "ICU"])
def pair(
    request: pytest.FixtureRequest, new_database: Callable[..., str], master_key: MasterKey
) -> Iterator[Pair]:
    locale = ICU if request.param == "ICU" else ""
    for made in open_pair(new_database, master_key, f"txo_{request.param}", locale=locale):
        made.both("CREATE TABLE t (" + ", ".join(f"{n} {t}" for n, t in COLUMNS) + ")")
        for row in ROWS:
            made.both(f"INSERT INTO t VALUES ({', '.join(row)})")
        yield made


def _copied(conn: Any, sql: str) -> bytes:
    with conn.cursor().copy(sql) as copy:
        return b"".join(bytes(block) for block in copy)


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: "; ".join(s) or "defaults")
def test_copy_to_prints_as_postgresql(pair: Pair, settings: list[str]) -> None:
    pair.both("RESET ALL")
    for statement in settings:
        pair.both(statement)
    for options in ("", " WITH (FORMAT csv)", " WITH (FORMAT csv, HEADER)"):
        sql = f"COPY t TO STDOUT{options}"
        plain, enc = _copied(pair.plain, sql), _copied(pair.enc, sql)
        assert enc == plain, (options, enc.decode(), plain.decode())
    one = "COPY (SELECT s FROM t WHERE s IS NOT NULL) TO STDOUT WITH (FORMAT csv)"
    assert _copied(pair.enc, one) == _copied(pair.plain, one)  # ('\.' alone: quoted)


def test_copy_settings_within_a_transaction(pair: Pair) -> None:
    """SET LOCAL in the COPY's transaction counts (the settings are read in it)."""
    pair.both("RESET ALL")
    for conn in (pair.plain, pair.enc):
        conn.autocommit = False
    try:
        pair.both("SET LOCAL extra_float_digits = -2")
        pair.both("SET LOCAL bytea_output = escape")
        sql = "COPY t (f8, f4, b, ab) TO STDOUT"
        assert _copied(pair.enc, sql) == _copied(pair.plain, sql)
    finally:
        for conn in (pair.plain, pair.enc):
            conn.rollback()
            conn.autocommit = True


def test_copy_rows_are_the_applications_values(pair: Pair) -> None:
    """rows() after set_types() gives what a SELECT gives: an interval as a timedelta."""
    pair.both("RESET ALL")
    got = []
    for conn in (pair.plain, pair.enc):
        with conn.cursor().copy("COPY t (iv, f4) TO STDOUT") as copy:
            copy.set_types(["interval", "real"])
            got.append(list(copy.rows()))
    assert got[1] == got[0]
    assert got[1][0][0] == dt.timedelta(days=425)


def test_timestamptz_after_a_zone_change(pair: Pair) -> None:
    """A timestamptz read again after SET TimeZone is in the new zone."""
    pair.both("RESET ALL")
    for zone in ("UTC", "America/New_York", "Asia/Kolkata"):
        pair.both(f"SET TimeZone = '{zone}'")
        sql = "SELECT tstz FROM t WHERE tstz > '-infinity' AND tstz < 'infinity' ORDER BY tstz"
        got = pair.enc.execute(sql).fetchall()
        assert got == pair.plain.execute(sql).fetchall()
        assert all(str(v.tzinfo) == zone for (v,) in got)
        copy = "COPY (SELECT tstz FROM t ORDER BY tstz) TO STDOUT"
        assert _copied(pair.enc, copy) == _copied(pair.plain, copy)
