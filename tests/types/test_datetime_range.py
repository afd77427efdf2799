"""Dates, timestamps and times over PostgreSQL's whole range -- BC, past year 9999,
``24:00:00`` -- stored, read back, ordered, grouped, compared and printed as in a plain
database, on a C and an ICU database.  Reading such a value gives what psycopg gives
(its ``DataError``, same class and message, under every DateStyle); its text (a cast,
COPY ... TO) is PostgreSQL's.  A column made before the full range keeps its encoding."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from type_pairs import ICU, Pair, check, literal, norm, open_pair, outcome

import adaptive_client
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.catalog.metadata import ColumnMeta
from adaptive_client.errors import ValueOutOfDomain
from adaptive_client.values import far_datetime
from adaptive_client.values.encodings import (
    INFINITY,
    NEG_INFINITY,
    encoding_for,
    parse_sql_type,
    with_python_years,
)

ZONES = ("UTC", "America/New_York", "Asia/Kolkata")
STYLES = ("ISO, MDY", "SQL, DMY", "Postgres, MDY", "German", "Postgres, DMY")

DATES = [
    "4714-11-24 BC", "0001-01-01 BC", "2000-01-01 BC", "0001-12-31 BC", "January 8, 99 BC",
    "0001-01-01", "1999-01-08", "9999-12-31", "10000-01-01", "5874897-12-31", "infinity",
    "-infinity",
]  # fmt: skip
TIMESTAMPS = [
    "4714-11-24 00:00:00 BC", "0001-01-01 00:00 BC", "2000-01-01 12:34:56.789 BC",
    "Feb 16 17:32:01 0097 BC", "0001-01-01", "1999-01-08 04:05:06", "9999-12-31 23:59:59.999999",
    "10000-01-01 00:00", "294276-12-31 23:59:59.999999", "infinity", "-infinity",
]  # fmt: skip
ZONED = [
    *TIMESTAMPS[:-3], "294276-12-31 15:59:59-08", "4714-11-23 16:00:00-08 BC",
    "205000-07-10 17:32:01 Europe/Helsinki", "205000-01-10 17:32:01 Europe/Helsinki",
    "Sat Mar 12 23:58:48 10000 IST", "infinity", "-infinity",
]  # fmt: skip
TIMES = ["00:00", "12:00", "23:59:59.999999", "24:00:00", "23:59:60", "23:59:59.9999999"]
TIMETZ = ["24:00:00+03", "23:59:59-05", "00:00+00", "24:00:00-15:59"]
COLUMNS = {
    "date": DATES,
    "timestamp": TIMESTAMPS,
    "timestamp(2)": TIMESTAMPS,
    "timestamptz": ZONED,
    "timestamptz(0)": ZONED,
    "time": TIMES,
    "time(2)": TIMES,
    "timetz": TIMETZ,
}
_PROBES = {
    "date": ["0001-01-01 BC", "10000-01-01", "1999-01-08", "-infinity"],
    "time": ["24:00:00", "23:59:59.999999", "12:00"],
    "timetz": ["24:00:00+03", "00:00+00"],
}


def probes(sql_type: str) -> list[str]:
    name = sql_type.split("(")[0]
    if name == "date" or name == "time" or name == "timetz":
        return _PROBES[name]
    return ["0001-01-01 00:00 BC", "10000-01-01 00:00", "1999-01-08 04:05:06", "infinity"]


@pytest.fixture(scope="module", params=["C", "ICU"])
def pair(
    request: pytest.FixtureRequest, new_database: Callable[..., str], master_key: MasterKey
) -> Iterator[Pair]:
    # (its own fixture: its databases named with this suite's prefix)
    locale = ICU if request.param == "ICU" else ""
    yield from open_pair(new_database, master_key, f"bcd_{request.param}", locale=locale)


def _set(pair: Pair, datestyle: str, zone: str) -> None:
    pair.both(f"SET DateStyle = '{datestyle}'")
    pair.both(f"SET TimeZone = '{zone}'")


_TABLES = iter(range(10**6))


def _table(pair: Pair, sql_type: str, values: list[str]) -> str:
    """A fresh ``(id, v)`` table of each database holding ``values`` (as literals)."""
    table = f"bcd{next(_TABLES)}"
    pair.both(f"CREATE TABLE {table} (id integer PRIMARY KEY, v {sql_type})")
    for i, text in enumerate(values):
        sql = f"INSERT INTO {table} VALUES ({i}, {literal(text)})"
        # (a BC instant in a zone whose first offset puts it before 4714-11-24 BC UTC
        # is refused by both, with the same SQLSTATE)
        got = [outcome(c, sql) for c in (pair.plain, pair.enc)]
        assert got[0] == got[1], f"{text!r}: plain {got[0]}, client {got[1]}"
    return table


def fetched(conn: Any, sql: str) -> tuple[Any, ...]:
    """``("ok", rows)`` or the exception's class and message (psycopg's loaders raise
    ``DataError`` and, for some DateStyles, ``NotImplementedError``)."""
    try:
        rows = conn.execute(sql).fetchall()
    except Exception as exc:  # (what the application sees, whatever its class)
        return ("error", type(exc).__name__, str(exc))
    return ("ok", [tuple(norm(v) for v in row) for row in rows])


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("sql_type", list(COLUMNS))
def test_stored_ordered_grouped_compared(pair: Pair, sql_type: str, zone: str) -> None:
    """Every value is stored (as a parameter and as a literal), ordered, grouped,
    counted and compared with =, <, >, <= as PostgreSQL does."""
    _set(pair, "ISO, MDY", zone)
    values = COLUMNS[sql_type]
    check(pair, sql_type, values, probes=probes(sql_type), read=False)
    check(pair, sql_type, values, as_literals=True, read=False)


@pytest.mark.parametrize("datestyle", STYLES)
@pytest.mark.parametrize("sql_type", ["date", "timestamp", "timestamptz", "time(2)", "timetz"])
def test_read_back_as_psycopg(pair: Pair, sql_type: str, datestyle: str) -> None:
    """Each row read alone gives what psycopg gives: the value, or the same exception
    with the same message (the text shown is PostgreSQL's under the DateStyle)."""
    _set(pair, "ISO, MDY", "America/New_York")
    # (not the infinities: the client returns its own Infinite value for those)
    values = [v for v in COLUMNS[sql_type] if not v.endswith("infinity")]
    table = _table(pair, sql_type, values)
    pair.both(f"SET DateStyle = '{datestyle}'")
    for i, text in enumerate(values):
        sql = f"SELECT v FROM {table} WHERE id = {i}"
        plain, enc = fetched(pair.plain, sql), fetched(pair.enc, sql)
        if plain[1] == "NotImplementedError" and enc[0] == "ok":
            continue  # (a timestamptz within Python's years: the client reads every style)
        assert enc == plain, f"{text!r}: plain {plain}, client {enc}"
    if sql_type != "timestamptz" or datestyle.startswith("ISO"):
        sql = f"SELECT id, v FROM {table} ORDER BY v, id"
        assert fetched(pair.enc, sql) == fetched(pair.plain, sql)


def test_far_values_are_errors_by_default(pair: Pair) -> None:
    """The messages are psycopg's own (an application sees nothing new)."""
    _set(pair, "ISO, MDY", "UTC")
    table = _table(pair, "date", ["0001-01-01 BC", "10000-01-01"])
    with pytest.raises(psycopg.DataError, match=r"date too small \(before year 1\)"):
        pair.enc.execute(f"SELECT v FROM {table} WHERE id = 0").fetchall()
    with pytest.raises(psycopg.DataError, match=r"date too large \(after year 10K\)"):
        pair.enc.execute(f"SELECT v FROM {table} WHERE id = 1").fetchall()


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("datestyle", STYLES)
def test_copy_to(pair: Pair, datestyle: str, zone: str) -> None:
    """COPY ... TO prints the values as PostgreSQL prints them."""
    _set(pair, "ISO, MDY", zone)
    tables = [_table(pair, t, COLUMNS[t]) for t in ("date", "timestamp", "timestamptz", "time")]
    pair.both(f"SET DateStyle = '{datestyle}'")
    for table in tables:
        copy = f"COPY {table} TO STDOUT"
        assert _copied(pair.enc, copy) == _copied(pair.plain, copy)


def _copied(conn: Any, sql: str) -> bytes:
    with conn.cursor().copy(sql) as copy:
        return b"".join(bytes(block) for block in copy)


def test_application_loader_is_used(pair: Pair) -> None:
    """A loader the application registers on the session decides what it receives for
    a value Python cannot hold, as with psycopg (here: the text itself)."""
    _set(pair, "ISO, MDY", "UTC")
    table = _table(pair, "date", ["0001-01-01 BC", "1999-01-08"])

    class Text(psycopg.adapt.Loader):
        def load(self, data: Any) -> str:
            return bytes(data).decode()

    for conn in (pair.plain, pair.enc.pg):
        conn.adapters.register_loader("date", Text)
    try:
        sql = f"SELECT v FROM {table} WHERE id = 0"
        assert pair.enc.execute(sql).fetchall() == [("0001-01-01 BC",)]
        assert pair.plain.execute(sql).fetchall() == [("0001-01-01 BC",)]
    finally:
        for conn in (pair.plain, pair.enc.pg):
            conn.adapters.register_loader("date", psycopg.types.datetime.DateLoader)


# --- encodings -------------------------------------------------------------------------------


def test_order_encodings_span_postgresql_range() -> None:
    date, ts = encoding_for("date"), encoding_for("timestamptz")
    first, last = date.coerce("4714-11-24 BC"), date.coerce("5874897-12-31")
    assert date.to_ope(NEG_INFINITY) == 0 < date.to_ope(first) == 1
    assert date.to_ope(last) < date.to_ope(INFINITY) == 2**date.ope_bits - 1
    assert date.from_ope(date.to_ope(first)) == first and type(first) is far_datetime.PgDate
    low, high = ts.coerce("4714-11-24 00:00 BC UTC"), ts.coerce("294276-12-31 23:59:59.999999Z")
    assert ts.to_ope(low) == 1 and ts.to_ope(high) < 2**63.04 < 2**ts.ope_bits - 1
    assert ts.from_bytes(ts.to_bytes(high)) == high
    assert encoding_for("time").to_ope(encoding_for("time").coerce("24:00:00")) < 2**40


def test_python_values_stay_python() -> None:
    date, ts = encoding_for("date"), encoding_for("timestamp")
    assert date.from_ope(date.to_ope(dt.date(1, 1, 1))) == dt.date(1, 1, 1)
    assert ts.from_ope(ts.to_ope(dt.datetime.max)) == dt.datetime.max
    assert date.coerce("0001-12-31 BC") < dt.date(1, 1, 1) < date.coerce("10000-01-01")
    assert encoding_for("time").coerce("24:00") > dt.time(23, 59, 59, 999999)


def test_python_years_encodings_read_the_old_bytes() -> None:
    """A column made before (``python_years``): the bytes and order numbers it always
    had -- the day number, microseconds since 0001-01-01, the words of the infinities."""
    date = encoding_for(with_python_years(parse_sql_type("date")))
    d = dt.date(1999, 1, 8)
    assert date.to_bytes(d) == d.toordinal().to_bytes(4, "big") and date.to_ope(d) == d.toordinal()
    assert date.from_bytes(b"infinity") is INFINITY and date.to_ope(NEG_INFINITY) == 0
    with pytest.raises(ValueOutOfDomain):
        date.coerce("0001-01-01 BC")
    for sql_type, shift in (("timestamp", 0), ("timestamp(2)", 1), ("timestamptz", 1)):
        ts = encoding_for(with_python_years(parse_sql_type(sql_type)))
        v = dt.datetime(1999, 1, 8, 4, 5, 6)
        if sql_type == "timestamptz":
            v = v.replace(tzinfo=dt.UTC)
        micros = (v.replace(tzinfo=None) - dt.datetime(1, 1, 1)) // dt.timedelta(microseconds=1)
        assert ts.to_bytes(v) == micros.to_bytes(8, "big") and ts.to_ope(v) == micros + shift
        assert ts.from_bytes(micros.to_bytes(8, "big")) == v
        with pytest.raises(ValueOutOfDomain):
            ts.coerce("10000-01-01 00:00")
    with pytest.raises(ValueOutOfDomain, match="-infinity"):
        encoding_for(with_python_years(parse_sql_type("timestamp"))).coerce("-infinity")


def test_column_made_before_keeps_its_encoding(
    pair: Pair, monkeypatch: pytest.MonkeyPatch, master_key: MasterKey
) -> None:
    """A column whose sealed metadata has no ``full_range`` (made before) reads and
    orders its values as before and refuses the new ones; a foreign key to it takes
    its encoding."""
    _set(pair, "ISO, MDY", "UTC")
    to_json = ColumnMeta.to_json

    def before(self: ColumnMeta) -> dict[str, Any]:
        out = to_json(self)
        out.pop("full_range", None)
        return out

    with monkeypatch.context() as m:
        m.setattr(ColumnMeta, "to_json", before)
        pair.enc.execute("CREATE TABLE bcd_old (d date PRIMARY KEY, ts timestamp, tz timestamptz)")
    # a fresh connection reads the column from the sealed metadata
    conn = adaptive_client.connect(
        pair.enc.pg.info.dsn, master_key=master_key.hex(), autocommit=True
    )
    try:
        col = conn.catalog.table("bcd_old").column("d")
        assert col.type.python_years and type(col.encoding).__name__ == "PythonDateEncoding"
        rows = [("1999-01-08", "1999-01-08 04:05", "1999-01-08 04:05+00"),
                ("infinity", "infinity", "-infinity"), ("0001-01-01", None, None)]  # fmt: skip
        for row in rows:
            conn.execute("INSERT INTO bcd_old VALUES (%s, %s, %s)", row)
        for bad in ("INSERT INTO bcd_old (d) VALUES ('0001-01-01 BC')",
                    "INSERT INTO bcd_old (d, ts) VALUES ('2000-01-02', '-infinity')",
                    "INSERT INTO bcd_old (d, tz) VALUES ('2000-01-03', '10000-01-01')"):  # fmt: skip
            with pytest.raises(ValueOutOfDomain):
                conn.execute(bad)
        got = conn.execute("SELECT d FROM bcd_old WHERE d > '1000-01-01' ORDER BY d LIMIT 1")
        assert [str(r[0]) for r in got.fetchall()] == ["1999-01-08"]
        # (an infinity is given to the application as psycopg gives it: its DataError)
        assert conn.execute("SELECT count(*) FROM bcd_old WHERE d = 'infinity'").fetchone() == (1,)
        with pytest.raises(psycopg.DataError, match="infinity"):
            conn.execute("SELECT d FROM bcd_old WHERE d > '3000-01-01'").fetchall()
        conn.execute("CREATE TABLE bcd_new (d date REFERENCES bcd_old (d), e date)")
        new = conn.catalog.table("bcd_new")
        assert new.column("d").type.python_years and not new.column("e").type.python_years
        conn.execute("INSERT INTO bcd_new VALUES ('1999-01-08', '0001-01-01 BC')")
        joined = conn.execute("SELECT o.ts FROM bcd_old o JOIN bcd_new n ON o.d = n.d").fetchall()
        assert joined == [(dt.datetime(1999, 1, 8, 4, 5),)]
    finally:
        conn.close()
