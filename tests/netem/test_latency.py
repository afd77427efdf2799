"""The emulated WAN adds the asked round trip to every exchange with the server."""

from __future__ import annotations

import statistics
import time

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from netem import emulate, netem_available

TOLERANCE_MS = 6.0  # scheduling noise on a busy 2-core machine


def _select1_ms(dsn: str, n: int = 15) -> float:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT 1")
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            conn.execute("SELECT 1").fetchone()
            times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def _through(dsn: str, rtt: float, method: str) -> tuple[float, str]:
    info = conninfo_to_dict(dsn)
    with emulate(str(info.get("host", "127.0.0.1")), int(info.get("port", 5432)), rtt, method) as e:
        return _select1_ms(make_conninfo(dsn, host=e.host, port=e.port)), e.method


@pytest.mark.parametrize("rtt", [20.0, 60.0])
def test_proxy_adds_the_round_trip(pg_dsn: str, rtt: float) -> None:
    base = _select1_ms(pg_dsn)
    got, method = _through(pg_dsn, rtt, "proxy")
    assert method == "proxy"
    assert abs(got - base - rtt) < TOLERANCE_MS, (base, got)


def test_zero_latency_is_direct(pg_dsn: str) -> None:
    info = conninfo_to_dict(pg_dsn)
    with emulate(str(info["host"]), int(info["port"]), 0.0) as e:
        assert e.method == "none" and e.port == int(info["port"])


def test_auto_picks_what_the_kernel_has(pg_dsn: str) -> None:
    got, method = _through(pg_dsn, 30.0, "auto")
    assert method == ("netem" if netem_available() else "proxy")
    assert got >= 30.0 - TOLERANCE_MS


@pytest.mark.skipif(not netem_available(), reason="this kernel has no netem qdisc")
def test_netem_adds_the_round_trip(pg_dsn: str) -> None:  # pragma: no cover - kernel-dependent
    base = _select1_ms(pg_dsn)
    got, method = _through(pg_dsn, 40.0, "netem")
    assert method == "netem" and abs(got - base - 40.0) < TOLERANCE_MS
