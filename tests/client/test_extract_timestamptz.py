"""EXTRACT, date_trunc and casts to date and timestamp of a timestamptz finished by the
client engine: the fields of the instant's time in the session's zone, the instant
truncated there, its date and local time there, as PostgreSQL gives them (Django's
``__year``, ``__month``, ``__hour`` lookups and ``datetimes()`` on a DateTimeField are
such EXTRACTs and truncations, ``__date`` such a cast)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.keys import MasterKey

ROWS = [
    (1, "2024-03-31 01:30:00+00"),  # a daylight-saving change in Europe that night
    (2, "2023-12-31 23:59:59.123456+00"),  # another year, day and week in most zones
    (3, "2024-07-01 12:00:00-07"),
    (4, None),
]
UNITS = ["year", "quarter", "month", "week", "day", "hour", "minute", "second"]
FIELDS = ["YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND", "EPOCH", "DOW", "QUARTER", "DOY"]


@pytest.fixture(scope="module")
def conns(new_database: Any, master_key: MasterKey) -> Iterator[tuple[Any, Any]]:
    plain = psycopg.connect(new_database("tzx_plain"), autocommit=True)
    enc = adaptive_client.connect(new_database("tzx_enc"), master_key=master_key, autocommit=True)
    for c in (plain, enc):
        c.execute("CREATE TABLE ev (id integer PRIMARY KEY, at timestamptz)")
        c.cursor().executemany("INSERT INTO ev VALUES (%s, %s)", ROWS)
    yield plain, enc
    plain.close()
    enc.close()


@pytest.mark.parametrize("zone", ["UTC", "America/Chicago", "Asia/Kolkata", "Europe/Paris"])
def test_extract_of_timestamptz_equals_plain(conns: tuple[Any, Any], zone: str) -> None:
    plain, enc = conns
    items = ", ".join(f"EXTRACT({f} FROM at)" for f in FIELDS)
    truncs = ", ".join(f"date_trunc('{u}', at)" for u in UNITS)
    for c in (plain, enc):
        c.execute(f"SET TIME ZONE '{zone}'")
    for sql, params in [
        (f"SELECT id, {items} FROM ev ORDER BY id", None),
        ("SELECT id FROM ev WHERE EXTRACT(MONTH FROM at) = %s ORDER BY id", (3,)),
        ("SELECT id FROM ev WHERE EXTRACT(YEAR FROM at) = %s ORDER BY id", (2024,)),
        (f"SELECT id, {truncs} FROM ev ORDER BY id", None),
        ("SELECT DISTINCT date_trunc('month', at) FROM ev ORDER BY 1", None),
        ("SELECT id, at::date, at::timestamp, CAST(at AS date) FROM ev ORDER BY id", None),
        ("SELECT id FROM ev WHERE (at)::date = %s ORDER BY id", (dt.date(2024, 3, 31),)),
    ]:
        assert enc.execute(sql, params).fetchall() == plain.execute(sql, params).fetchall()
