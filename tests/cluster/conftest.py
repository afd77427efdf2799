"""Servers beyond the shared one: a primary and its streaming standbys of the suite's own.

The primary is an embedded cluster under a temporary directory on port 54400, its
standbys (``EmbeddedCluster.up_standbys``, the code behind ``adaptive-db up --standbys``)
on 54401 and 54402 (or the next free run of 54400-54416); the shared cluster is never
touched.  Everything is stopped and removed at the end of the session, and by a watchdog
process if the session dies first.  Other suites of this directory keep their fixtures in
files of their own.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

from adaptive_client.admin.embedded import (
    EmbeddedCluster,
    EmbeddedDbError,
    EmbeddedStandby,
    free_ports,
    watchdog,
)
from adaptive_client.catalog.install import install

# The suite's ports: the primary's and its standbys' after it.  They lie in the range the
# kernel hands out to clients' sockets, so one may be held a while (TIME_WAIT) by a
# connection elsewhere: the first run of free ports among these is taken (free_ports).
PRIMARY_PORTS = (54400, 54407, 54414)
STANDBYS = 2


@dataclass
class ReplicaSet:
    """A running primary and its standbys."""

    primary: EmbeddedCluster
    standbys: list[EmbeddedStandby]

    def primary_dsn(self, dbname: str | None = None) -> str:
        return self.primary.dsn(dbname)

    def standby_dsns(self, dbname: str | None = None) -> list[str]:
        return [s.dsn(dbname) for s in self.standbys]

    def set_apply_delay(self, number: int, ms: int) -> None:
        """``recovery_min_apply_delay`` of standby ``number`` (1, 2...), in force at once."""
        with psycopg.connect(self.standbys[number - 1].dsn("postgres"), autocommit=True) as c:
            c.execute(sql.SQL("ALTER SYSTEM SET recovery_min_apply_delay = {}").format(ms))
            c.execute("SELECT pg_reload_conf()")

    def pause_replay(self, number: int, paused: bool) -> None:
        """Pause (or resume) the replay of standby ``number``."""
        call = "pg_wal_replay_pause" if paused else "pg_wal_replay_resume"
        with psycopg.connect(self.standbys[number - 1].dsn("postgres"), autocommit=True) as c:
            c.execute(f"SELECT {call}()")

    def wait_replayed(self, timeout: float = 30.0) -> None:
        """Until every running standby has replayed what the primary has written."""
        import time

        with psycopg.connect(self.primary.dsn("postgres"), autocommit=True) as p:
            row = p.execute("SELECT pg_current_wal_insert_lsn()").fetchone()
        assert row is not None
        target = row[0]
        deadline = time.monotonic() + timeout
        for standby in self.standbys:
            if not standby.running():
                continue
            with psycopg.connect(standby.dsn("postgres"), autocommit=True) as s:
                while True:
                    done = s.execute(
                        "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (target,)
                    ).fetchone()
                    if done and done[0]:
                        break
                    assert time.monotonic() < deadline, "a standby does not replay"
                    time.sleep(0.02)


@pytest.fixture(scope="session")
def replica_set() -> Iterator[ReplicaSet]:
    """A primary and two streaming standbys of the session's own (see the module doc)."""
    if os.environ.get("ADAPTIVE_TEST_DSN"):
        pytest.skip("the cluster suites start servers of their own on this machine")
    root = Path(tempfile.mkdtemp(prefix="adaptive-replicas-"))
    root.chmod(0o755)  # (the server user reaches the data under it)
    guard = watchdog(root)  # (stops the servers if this session is killed)
    primary: EmbeddedCluster | None = None
    try:
        # a port that looked free may still be refused to the server (another program
        # took it meanwhile): then the next run of free ports, on a cluster of its own
        starts = list(PRIMARY_PORTS)
        while primary is None:
            port = free_ports(tuple(starts), STANDBYS + 1)
            candidate = EmbeddedCluster(root / str(port), port=port)
            (root / str(port)).mkdir()
            (root / str(port)).chmod(0o755)
            try:
                candidate.up()
            except EmbeddedDbError:
                candidate.destroy()
                starts.remove(port)
                if not starts:
                    raise
                continue
            primary = candidate
        with psycopg.connect(primary.dsn(), autocommit=True) as conn:
            install(conn)
        primary.up_standbys(STANDBYS)
        standbys = [primary.standby(n) for n in range(1, STANDBYS + 1)]
        yield ReplicaSet(primary, standbys)
    finally:
        if primary is not None:
            primary.destroy()
        shutil.rmtree(root, ignore_errors=True)
        guard.kill()


@pytest.fixture
def replica_db(replica_set: ReplicaSet) -> Callable[[], tuple[str, list[str]]]:
    """Factory: a fresh database on the primary with the metadata schema, replayed on
    the standbys; (primary DSN, standby DSNs)."""

    def make() -> tuple[str, list[str]]:
        name = f"r_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(replica_set.primary_dsn("postgres"), autocommit=True) as c:
            c.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        dsn = make_conninfo(replica_set.primary_dsn(), dbname=name)
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("CREATE EXTENSION IF NOT EXISTS plpython3u")
            c.execute("CREATE EXTENSION IF NOT EXISTS pgcrypto")
            install(c)
        replica_set.wait_replayed()
        return dsn, replica_set.standby_dsns(name)

    return make
