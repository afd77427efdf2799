"""Date/time input as PostgreSQL reads it, through the client and into plain PostgreSQL:
the literal forms of the manual's "Date/Time Input" appendix and of PostgreSQL's own
regression tests (date.sql, timestamp.sql, timestamptz.sql), under several DateStyle
and TimeZone settings, as parameters and as literals; the same values stored, read,
ordered, grouped and compared, the same SQLSTATE for those refused."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from zoneinfo import ZoneInfo

import pytest
from type_pairs import Pair, check, open_pair

from adaptive_client.catalog.keys import MasterKey
from adaptive_client.values.datetime_input import Session, parse


@pytest.fixture(scope="module")
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    yield from open_pair(new_database, master_key, "datetime")


# the input forms of date.sql (read under each DateStyle) and of the manual
DATES = [
    "January 8, 1999", "1999-01-08", "1999-01-18", "1/8/1999", "1/18/1999", "18/1/1999",
    "01/02/03", "19990108", "990108", "1999.008", "J2451187", "99-Jan-08", "1999-Jan-08",
    "08-Jan-99", "08-Jan-1999", "Jan-08-99", "Jan-08-1999", "99-08-Jan", "1999-08-Jan",
    "99 Jan 08", "1999 Jan 08", "08 Jan 99", "08 Jan 1999", "Jan 08 99", "Jan 08 1999",
    "99 08 Jan", "1999 08 Jan", "99-01-08", "08-01-99", "08-01-1999", "01-08-99",
    "01-08-1999", "99-08-01", "1999-08-01", "99 01 08", "1999 01 08", "08 01 99",
    "08 01 1999", "01 08 99", "01 08 1999", "99 08 01", "1999 08 01", "1962/2/18",
    "Jan 8 1999", "epoch", "1999-01-08 04:05:06 PST", "2024-02-30", "2024-02-29",
    "2023-02-29", "0000-01-01", "13/01/1999", "foo", "1999-01-08 Mars/Olympus",
    "4714-11-23 BC", "5874898-01-01", "  1999-01-08  ", "Sat, 08 Jan 1999",
]  # fmt: skip
# the input forms of timestamp.sql and timestamptz.sql
TIMESTAMPS = [
    "epoch", "Mon Feb 10 17:32:01 1997 PST", "Mon Feb 10 17:32:01.000001 1997 PST",
    "Mon Feb 10 17:32:01.999999 1997 PST", "Mon Feb 10 17:32:01.4 1997 PST",
    "Mon Feb 10 17:32:01.5 1997 PST", "1997-01-02", "1997-01-02 03:04:05",
    "1997-02-10 17:32:01-08", "1997-02-10 17:32:01-0800", "1997-02-10 17:32:01 -08:00",
    "19970210 173201 -0800", "1997-06-10 17:32:01 -07:00", "2001-09-22T18:19:20",
    "2000-03-15 08:14:01 GMT+8", "2000-03-15 13:14:02 GMT-1", "2000-03-15 12:14:03 GMT-2",
    "2000-03-15 03:14:04 PST+8", "2000-03-15 02:14:05 MST+7:00",
    "Feb 10 17:32:01 1997 -0800", "Feb 10 17:32:01 1997", "Feb 10 5:32PM 1997",
    "1997/02/10 17:32:01-0800", "1997-02-10 17:32:01 PST", "Feb-10-1997 17:32:01 PST",
    "02-10-1997 17:32:01 PST", "19970210 173201 PST", "1997.041 17:32:01 UTC",
    "19970210 173201 America/New_York", "19970710 173201 America/Does_not_exist",
    "1997-06-10 18:32:01 PDT", "Feb 16 17:32:01 0097", "Feb 16 17:32:01 0597",
    "Feb 29 17:32:01 1996", "Feb 29 17:32:01 1997", "Dec 31 17:32:01 1999",
    "Feb 16 17:32:01 -0097",
    "2018-11-02 12:34:56.78901234", "1999-01-08 04:05:06.1234565", "J2451187 04:05",
    "1999-01-08 24:00", "1999-01-08 24:00:01", "1999-01-08 23:59:60", "1999-01-08 25:00",
    "1999-01-08 04:05:06 +16", "1999-01-08 13:00 pm", "1999-01-08 12:00 am",
    "2024-11-03 01:30 America/New_York", "2024-03-10 02:30 America/New_York",
    "2024-03-31 02:30 Europe/Berlin", "1999-01-08 04:05:06 Asia/Kolkata",
    "1999-01-08T04:05:06Z", "1999-01-08 z", "1999-01-08 04:05 zulu", "allballs",
    "1999-01-08 allballs", "January 8, 1999 4:05 pm", "1999-01-08 04:05:06 PST",
    "1990-07-01 12:00 MSK", "2011-07-01 12:00 MSK", "1900-01-01 12:00 MSK",
    "2024-07-01 12:00 CLT", "1999-01-08 12:00 ART", "2024-06-01 12:00 CEST",
]  # fmt: skip
# the ends of PostgreSQL's ranges (for the input rules alone: BC years, and years past
# 9999, are refused by the client where PostgreSQL stores them -- Python's datetime has
# no such years)
EDGES = [
    "4714-11-24 BC", "January 8, 99 BC", "Feb 16 17:32:01 0097 BC", "4714-11-23 23:59:59 BC",
    "4714-11-24 00:00:00 BC", "294276-12-31 23:59:59", "5874897-12-31", "294277-01-01 00:00:00",
]  # fmt: skip

STYLES = ["ISO, MDY", "SQL, DMY", "ISO, YMD"]
ZONES = ["UTC", "America/New_York", "Asia/Kolkata"]


def _set(pair: Pair, style: str, zone: str) -> None:
    pair.both(f"SET DateStyle = '{style}'")
    pair.both(f"SET TimeZone = '{zone}'")


@pytest.mark.parametrize("style", STYLES)
def test_date_literals(pair: Pair, style: str) -> None:
    _set(pair, style, "UTC")
    check(pair, "date", DATES, as_literals=True)


@pytest.mark.parametrize("style", ["ISO, MDY", "SQL, DMY"])
def test_date_parameters(pair: Pair, style: str) -> None:
    _set(pair, style, "America/New_York")
    values = [*DATES[:20], dt.date(1999, 1, 8), dt.date(1, 1, 1), dt.date(9999, 12, 31)]
    check(pair, "date", values, probes=["1/8/1999", "epoch"])


@pytest.mark.parametrize(
    ("style", "zone"), [("ISO, MDY", z) for z in ZONES] + [("SQL, DMY", "UTC")]
)
def test_timestamp_literals(pair: Pair, style: str, zone: str) -> None:
    _set(pair, style, zone)
    probes = ["1997-02-10 17:32:01", "epoch", "2000-03-15"]
    check(pair, "timestamp", TIMESTAMPS, as_literals=True, probes=probes)


@pytest.mark.parametrize("zone", ZONES)
def test_timestamptz_literals(pair: Pair, zone: str) -> None:
    """An instant: the zone written places it, naive input is in the session's zone, and
    it reads back as an aware datetime in the session's zone, as psycopg loads it."""
    _set(pair, "ISO, MDY", zone)
    probes = ["1997-02-10 17:32:01 PST", "1997-02-10 17:32:01", "2000-03-15 08:14:01 GMT+8"]
    check(pair, "timestamptz", TIMESTAMPS, as_literals=True, probes=probes)


@pytest.mark.parametrize("zone", ZONES)
def test_timestamptz_parameters(pair: Pair, zone: str) -> None:
    _set(pair, "ISO, MDY", zone)
    kolkata, new_york = ZoneInfo("Asia/Kolkata"), ZoneInfo("America/New_York")
    values = [
        dt.datetime(1999, 1, 8, 4, 5, 6, tzinfo=dt.UTC),
        dt.datetime(1999, 1, 8, 4, 5, 6, tzinfo=kolkata),
        dt.datetime(2024, 11, 3, 1, 30, tzinfo=new_york),
        dt.datetime(2024, 11, 3, 1, 30, fold=1, tzinfo=new_york),
        dt.datetime(1999, 1, 8, 4, 5, 6),  # naive: the session's time zone
        dt.datetime(2024, 3, 10, 2, 30),
        "1999-01-08 04:05:06+05:30",
        "1999-01-08 04:05:06",
    ]
    check(pair, "timestamptz", values)


def test_timestamp_parameters(pair: Pair) -> None:
    """An aware datetime into a timestamp is its local time in the session's zone (the
    assignment cast from timestamptz), a date is midnight."""
    _set(pair, "ISO, MDY", "Asia/Kolkata")
    values = [
        dt.datetime(1999, 1, 8, 4, 5, 6, 789),
        dt.datetime(1999, 1, 8, 4, 5, 6, tzinfo=dt.UTC),
        dt.date(1999, 1, 8),
        "1999-01-08 04:05:06 PST",
        "Jan 8 1999 4:05:06.5",
    ]
    check(pair, "timestamp", values)


@pytest.mark.parametrize("sql_type", ["date", "timestamp(3)", "timestamptz"])
def test_infinities(pair: Pair, sql_type: str) -> None:
    """±infinity are stored at the ends of the order (psycopg itself cannot load them:
    the rows are compared through their ids)."""
    _set(pair, "ISO, MDY", "UTC")
    values = ["infinity", "-infinity", "1999-01-08", "epoch", "-Infinity", "+infinity"]
    probes = ["infinity", "-infinity", "1999-01-08"]
    check(pair, sql_type, values, probes=probes, read=False)
    check(pair, sql_type, values, as_literals=True, read=False)


def test_plain_timestamp_holds_minus_infinity(pair: Pair) -> None:
    """A timestamp / timestamp(6) column holds -infinity, below every timestamp (a
    column made before the full range refuses it: test_datetime_range)."""
    _set(pair, "ISO, MDY", "UTC")
    values = ["-infinity", "0001-01-01 BC", "1999-01-08", "infinity"]
    check(pair, "timestamp", values, probes=["-infinity", "1999-01-08"], read=False)


def test_relative_words(pair: Pair) -> None:
    """today / tomorrow / yesterday from the server's clock in the session's zone."""
    _set(pair, "ISO, MDY", "Asia/Kolkata")
    values = ["today", "tomorrow", "yesterday", "TODAY", "tomorrow EST", "tomorrow zulu"]
    check(pair, "date", values, as_literals=True)
    check(pair, "timestamp", values, probes=["today", "tomorrow"])


def test_now_is_the_transaction_start(pair: Pair) -> None:
    _set(pair, "ISO, MDY", "America/New_York")
    pair.enc.execute("CREATE TABLE stamps (id int, v timestamptz, d date)")
    with pair.enc.transaction():
        pair.enc.execute(
            "INSERT INTO stamps VALUES (1, 'now', 'now'), (2, %s, %s)", ("now", "today")
        )
        rows = pair.enc.execute("SELECT v, d FROM stamps ORDER BY id").fetchall()
        now = pair.enc.execute("SELECT now()").fetchone()
    assert now is not None and rows[0] == rows[1] and rows[0][0] == now[0]


# --- the input rules alone, against the server's input functions ---------------------------


@pytest.mark.parametrize("order", ["MDY", "DMY", "YMD"])
def test_rules_match_the_server(pair: Pair, order: str) -> None:
    """Each literal's fields as datetime_input reads them equal the server's reading
    (its text in ISO), or both refuse with the same SQLSTATE."""
    conn = pair.plain
    conn.execute(f"SET DateStyle = 'ISO, {order}'")
    conn.execute("SET TimeZone = 'UTC'")
    session = Session(order=order, zone=dt.UTC, clock=lambda: dt.datetime.now(dt.UTC))
    wrong = []
    for kind, texts in (("date", DATES + EDGES), ("timestamp", TIMESTAMPS + EDGES)):
        for text in texts:
            try:
                server = conn.execute(f"SELECT %s::{kind}::text", (text,)).fetchone()
                expected: object = server[0] if server else None
            except Exception as exc:
                expected = ("error", getattr(exc, "sqlstate", None))
            try:
                f = parse(text, kind, session)
                got: object = _iso(f, kind)
            except Exception as exc:
                got = ("error", getattr(exc, "sqlstate", None))
            if isinstance(got, str) and isinstance(expected, str) and got != expected:
                got = got if not got.endswith(".000000") else got[:-7]
            if got != expected and not (
                isinstance(expected, tuple) and expected[1] == "22008" and got == "range"
            ):
                wrong.append((kind, text, expected, got))
    assert wrong == []


def _iso(f: object, kind: str) -> str:
    from adaptive_client.values.datetime_input import Fields, date2j

    assert isinstance(f, Fields)
    if f.special == "epoch":
        return "1970-01-01" if kind == "date" else "1970-01-01 00:00:00"
    if f.special is not None:
        return f.special
    end = 2147483494 if kind == "date" else 109203528
    if not 0 <= date2j(f.year, f.month, f.day) < end:
        return "range"
    year = f"{f.year:04d}" if f.year > 0 else f"{1 - f.year:04d}"
    day = f"{year}-{f.month:02d}-{f.day:02d}"
    bc = " BC" if f.year <= 0 else ""
    if kind == "date":
        return day + bc
    base = dt.datetime(2000, f.month, f.day) + dt.timedelta(
        hours=f.hour, minutes=f.minute, seconds=f.second, microseconds=f.micro
    )
    if base.date() != dt.date(2000, f.month, f.day):  # 24:00 or 23:59:60: the next day
        nxt = base.date()
        day = f"{year}-{nxt.month:02d}-{nxt.day:02d}"
    clock = base.strftime("%H:%M:%S") + (
        f".{base.microsecond:06d}".rstrip("0") if base.microsecond else ""
    )
    return f"{day} {clock}{bc}"


_PIECES = [
    "1999", "99", "08", "8", "1", "12", "13", "31", "32", "2024", "02", "29", "30", "0",
    "2000", "0097", "100", "Jan", "january", "Feb", "Sept", "dec", "Mon", "thursday", "BC",
    "AD", "am", "pm", "PST", "EST", "UTC", "z", "America/New_York", "Asia/Kolkata", "GMT+8",
    "04:05", "04:05:06", "04:05:06.789", "4:5", "24:00", "23:59:60", "12:00", "-08",
    "+05:30", "+0100", "-8:00", "J2451187", "1999.008", "1999-01-08", "1/8/1999",
    "08-Jan-1999", "19990108", "040506", "T", "allballs", "epoch", "on", "at", ",", "-",
]  # fmt: skip
_GLUE = [" ", " ", "", "-", "/", ", ", "T"]


@pytest.mark.parametrize("order", ["MDY", "DMY"])
def test_rules_on_random_inputs(pair: Pair, order: str) -> None:
    """Random sequences of date/time pieces (fixed seed): where the server reads one,
    the rules read the same date and time; where it refuses one, they refuse it.  (Zone
    names: the server also takes some malformed ones as POSIX zones, which the rules
    refuse, 22023; and which class-22 SQLSTATE a malformed input gets may differ.)"""
    import random

    conn = pair.plain
    conn.execute(f"SET DateStyle = 'ISO, {order}'")
    conn.execute("SET TimeZone = 'UTC'")
    session = Session(order=order, zone=dt.UTC, clock=lambda: dt.datetime.now(dt.UTC))
    rnd = random.Random(20261128)
    wrong = []
    for _ in range(250):
        text = rnd.choice(_PIECES)
        for _ in range(rnd.randint(0, 3)):
            text += rnd.choice(_GLUE) + rnd.choice(_PIECES)
        for kind in ("date", "timestamp"):
            try:
                row = conn.execute(f"SELECT %s::{kind}::text", (text,)).fetchone()
                expected: object = row[0] if row else None
            except Exception as exc:
                expected = ("error", getattr(exc, "sqlstate", None))
            try:
                got: object = _iso(parse(text, kind, session), kind)
            except Exception as exc:
                got = ("error", getattr(exc, "sqlstate", None))
            if got == "range":
                got = ("error", "22008")
            refused = isinstance(got, tuple)
            if isinstance(expected, tuple) and refused:
                continue  # both refuse
            if isinstance(expected, str) and refused and got[1] == "22023":  # type: ignore[index]
                continue  # a malformed zone name the server reads as a POSIX zone
            if got != expected:
                wrong.append((kind, text, expected, got))
    assert wrong == []
