"""values/interval_math.py against PostgreSQL itself: for a few hundred random intervals
(months, days and microseconds of both signs), factors and instants, the product, the
quotient, the justify functions and a timestamptz or timestamp plus the interval, each
computed by the client and by the server in one statement and compared field by field
(an interval by its text, an instant by its microseconds)."""

from __future__ import annotations

import datetime as dt
import random
import zoneinfo
from collections.abc import Iterator

import psycopg
import pytest

from adaptive_client.values import interval_math as im
from adaptive_client.values.interval_encoding import PgInterval, interval_text

CASES = 300
ZONES = ["Europe/Berlin", "America/Sao_Paulo", "Australia/Lord_Howe"]


def _spans(rng: random.Random) -> list[PgInterval]:
    return [
        PgInterval(
            rng.randint(-40, 40),
            rng.randint(-400, 400),
            rng.choice([0, rng.randint(-(10**12), 10**12), rng.randint(-(10**6), 10**6)]),
        )
        for _ in range(CASES)
    ]


def _interval_sql(v: PgInterval) -> str:
    return f"'{v.months} mons {v.days} days {v.usec} microseconds'::interval"


@pytest.fixture
def server(pg_dsn: str) -> Iterator[psycopg.Connection]:
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("SET IntervalStyle = 'postgres'")
        yield conn


def test_products_quotients_and_justify(server: psycopg.Connection) -> None:
    rng = random.Random(20261202)
    spans = _spans(rng)
    factors = [rng.choice([0.5, 1.5, -2.25, 1 / 3, 7.0, 1e-3, rng.uniform(-9, 9)]) for _ in spans]
    items = []
    for v, f in zip(spans, factors, strict=True):
        iv = _interval_sql(v)
        items.append(
            f"({iv} * {f!r}::float8)::text, ({iv} / {f!r}::float8)::text,"
            f" justify_hours({iv})::text, justify_days({iv})::text,"
            f" justify_interval({iv})::text"
        )
    rows = [server.execute(f"SELECT {item}").fetchone() for item in items]
    for v, f, row in zip(spans, factors, rows, strict=True):
        mine = (
            interval_text(im.interval_mul(v, f)),
            interval_text(im.interval_div(v, f)),
            interval_text(im.justify_hours(v)),
            interval_text(im.justify_days(v)),
            interval_text(im.justify_interval(v)),
        )
        assert mine == tuple(row), (v, f)


@pytest.mark.parametrize("zone_name", ZONES)
def test_instants_plus_intervals(server: psycopg.Connection, zone_name: str) -> None:
    rng = random.Random(zone_name)
    zone = zoneinfo.ZoneInfo(zone_name)
    server.execute(f"SET TimeZone = '{zone_name}'")
    spans = _spans(rng)
    # instants around the zone's changes of offset: a spring and an autumn week
    base = dt.datetime(2024, 3, 25, tzinfo=dt.UTC)
    instants = [
        base
        + dt.timedelta(minutes=rng.randint(-20_000, 20_000) * 15 + rng.choice([0, 30]))
        + rng.choice([dt.timedelta(0), dt.timedelta(days=214)])
        for _ in spans
    ]
    for v, at in zip(spans, instants, strict=True):
        row = server.execute(
            f"SELECT extract(epoch FROM %s::timestamptz + {_interval_sql(v)}),"
            f" extract(epoch FROM %s::timestamp + {_interval_sql(v)})",
            (at, at.replace(tzinfo=None)),
        ).fetchone()
        assert row is not None
        zoned = im.timestamptz_add(at, v, zone)
        local = im.timestamp_add(at.replace(tzinfo=None), v)
        naive_epoch = (local - dt.datetime(1970, 1, 1)) / dt.timedelta(microseconds=1)
        assert (round(zoned.timestamp() * 10**6), round(naive_epoch)) == (
            round(row[0] * 10**6),
            round(row[1] * 10**6),
        ), (v, at)
