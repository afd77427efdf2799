"""Fixtures of the concurrency suites: a plain and an encrypted database with the same
schema, and a watchdog for every thread a test starts.

Every wait in these suites is bounded: the work runs in daemon threads the test joins
with a timeout (a hang fails the test, naming the threads still running, instead of
stopping the run), and the sessions a hung thread left behind are terminated so the
database can be dropped."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import psycopg
import pytest

from adaptive_client.catalog.keys import MasterKey


@dataclass
class Watchdog:
    """Threads started for a test, joined within a deadline."""

    threads: list[threading.Thread] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)

    def start(self, target: Callable[..., Any], *args: Any, name: str = "") -> threading.Thread:
        def run() -> None:
            try:
                target(*args)
            except BaseException as exc:  # (reported by join_all)
                self.errors.append(exc)

        thread = threading.Thread(target=run, name=name or target.__name__, daemon=True)
        self.threads.append(thread)
        thread.start()
        return thread

    def join_all(self, timeout: float) -> None:
        """Join every thread within ``timeout`` seconds in all; fail naming those still
        running, and re-raise the first error a thread raised."""
        deadline = _now() + timeout
        for thread in self.threads:
            thread.join(max(0.0, deadline - _now()))
        hung = [t.name for t in self.threads if t.is_alive()]
        assert not hung, f"threads still running after {timeout} s: {hung}"
        if self.errors:
            raise self.errors[0]


def _now() -> float:
    return time.monotonic()


@pytest.fixture()
def watchdog(pg_cluster: str) -> Iterator[Watchdog]:
    dog = Watchdog()
    yield dog
    if any(t.is_alive() for t in dog.threads):
        # a hung thread's sessions hold locks: end them, so the databases can go
        with psycopg.connect(pg_cluster, autocommit=True) as c:
            c.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname LIKE 'test\\_conc%%' AND pid <> pg_backend_pid()"
            )


@dataclass(frozen=True)
class Pair:
    """The same schema on a plain database (``plain``) and an encrypted one (``enc``)."""

    plain: str
    enc: str
    key: MasterKey


@pytest.fixture()
def pair(new_database: Callable[..., str]) -> Pair:
    plain = new_database("concp")
    enc = new_database("conce")
    return Pair(plain, enc, MasterKey.generate())
