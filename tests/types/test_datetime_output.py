"""``datetime_output.text`` against PostgreSQL's own output functions: every DateStyle,
several zones, dates, timestamps and timestamptz values with and without fractions."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from type_pairs import open_pair

from adaptive_client.values import datetime_output

STYLES = ["ISO, MDY", "ISO, DMY", "SQL, DMY", "SQL, MDY", "Postgres, MDY", "Postgres, DMY",
          "German", "SQL, YMD"]  # fmt: skip
ZONES = ["UTC", "America/New_York", "Asia/Kolkata", "Asia/Kathmandu", "Europe/London",
         "Etc/GMT+5", "Australia/Lord_Howe"]  # fmt: skip
VALUES = [
    ("date", "1999-01-08"), ("date", "2024-02-29"), ("date", "0001-01-01"),
    ("timestamp", "1999-01-08 04:05:06.5"), ("timestamp", "2000-01-01 00:00:00"),
    ("timestamp", "1969-07-20 20:17:40.000001"),
    ("timestamptz", "1999-07-08 04:05:06+00"), ("timestamptz", "2024-11-03 05:30:00.25+00"),
    ("timestamptz", "2024-03-10 12:00:00+00"), ("timestamptz", "1900-01-01 00:00:00+00"),
]  # fmt: skip


@pytest.fixture(scope="module")
def plain(pg_cluster: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(pg_cluster, autocommit=True) as conn:
        yield conn


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("style", STYLES)
def test_text_as_postgresql_prints_it(
    plain: psycopg.Connection[Any], style: str, zone: str
) -> None:
    plain.execute(f"SET TimeZone = '{zone}'")
    for kind, literal in VALUES:
        plain.execute("SET DateStyle = 'ISO'")  # (psycopg loads values in ISO)
        value = plain.execute(f"SELECT '{literal}'::{kind}").fetchone()[0]  # type: ignore[index]
        plain.execute(f"SET DateStyle = '{style}'")
        expected = plain.execute(f"SELECT '{literal}'::{kind}::text").fetchone()[0]  # type: ignore[index]
        assert datetime_output.text(value, style) == expected, (kind, literal)


def test_style_of() -> None:
    assert datetime_output.style_of("SQL, DMY") == ("SQL", True)
    assert datetime_output.style_of("postgres") == ("POSTGRES", False)
    assert datetime_output.style_of("ISO, MDY") == ("ISO", False)
    assert datetime_output.text(dt.date(1999, 1, 8), "German") == "08.01.1999"


@pytest.fixture(scope="module")
def pair(new_database: Any, master_key: Any) -> Iterator[Any]:
    yield from open_pair(new_database, master_key, "dtout")


@pytest.mark.parametrize("style", STYLES)
def test_client_prints_in_the_sessions_datestyle(pair: Any, style: str) -> None:
    """A date cast to text by the client engine, and COPY ... TO of dates, timestamps
    and timestamptz values, as PostgreSQL prints them under the session's DateStyle."""
    table = "dt_" + style.replace(",", "").replace(" ", "_").lower()
    pair.both(f"CREATE TABLE {table} (id int PRIMARY KEY, d date, ts timestamp, tz timestamptz)")
    pair.both("SET TimeZone = 'America/New_York'")
    for conn in (pair.plain, pair.enc):
        conn.execute(
            f"INSERT INTO {table} VALUES (1, '1999-01-08', '1999-01-08 04:05:06.5', "
            "'1999-07-08 04:05:06+00'), (2, '2024-02-29', NULL, '2024-11-03 05:30:00.25+00')"
        )
    pair.both(f"SET DateStyle = '{style}'")
    sql = f"SELECT id, d::text, CAST(d AS varchar(6)) FROM {table} ORDER BY id"
    assert pair.enc.execute(sql).fetchall() == pair.plain.execute(sql).fetchall()
    copied = []
    for conn in (pair.plain, pair.enc):
        with conn.cursor().copy(f"COPY {table} TO STDOUT") as copy:
            copied.append(b"".join(bytes(block) for block in copy))
    assert copied[0] == copied[1]
    assert b"1999" in copied[0]
