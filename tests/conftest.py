"""Session fixtures: one real PostgreSQL (the embedded cluster, or ADAPTIVE_TEST_DSN)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, settings
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from adaptive_client.catalog.install import install
from adaptive_client.catalog.keys import MasterKey

# No deadline: database round trips make timings noisy.  HYPOTHESIS_PROFILE picks another.
settings.register_profile(
    "ci", deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def pg_cluster() -> str:
    """The DSN of a maintenance database on the test server."""
    env = os.environ.get("ADAPTIVE_TEST_DSN")
    if env:
        return env
    from adaptive_client.admin.embedded import EmbeddedCluster

    cluster = EmbeddedCluster.default()
    cluster.up()
    return cluster.dsn("postgres")


@pytest.fixture(scope="session")
def new_database(pg_cluster: str) -> Iterator[Callable[..., str]]:
    """Factory: a fresh database with the extensions, metadata schema and UDFs.

    ``locale``: CREATE DATABASE options for its collation, e.g. ``LOCALE_PROVIDER icu
    ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'`` or ``LC_COLLATE 'en_US.UTF-8'`` (the database
    is then copied from template0, as PostgreSQL requires for another locale)."""
    created: list[str] = []

    def make(prefix: str = "t", *, locale: str = "") -> str:
        name = f"test_{prefix}_{uuid.uuid4().hex[:10]}"
        options = sql.SQL(f" TEMPLATE template0 {locale}" if locale else "")
        with psycopg.connect(pg_cluster, autocommit=True) as c:
            c.execute(sql.SQL("CREATE DATABASE {}{}").format(sql.Identifier(name), options))
        created.append(name)
        dsn = make_conninfo(pg_cluster, dbname=name)
        with psycopg.connect(dsn) as c:
            install(c)
        return dsn

    yield make
    # Each DROP DATABASE waits for a checkpoint: hundreds of them take minutes at the end
    # of a run.  They are dropped by a detached process the run does not wait for
    # (ADAPTIVE_TEST_DROP=wait: in the run itself).
    if os.environ.get("ADAPTIVE_TEST_DROP") == "wait":
        _drop(pg_cluster, created)
    elif created:
        subprocess.Popen(
            [sys.executable, __file__, pg_cluster, *created],
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )


def _drop(dsn: str, names: list[str]) -> None:
    with psycopg.connect(dsn, autocommit=True) as c:
        for name in names:
            c.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


if __name__ == "__main__":  # the detached drop of a finished run's databases
    _drop(sys.argv[1], sys.argv[2:])


@pytest.fixture(scope="session")
def pg_dsn(new_database: Callable[..., str]) -> str:
    return new_database("shared")


@pytest.fixture(scope="session")
def master_key() -> MasterKey:
    return MasterKey.generate()


def dbname_of(dsn: str) -> Any:
    return conninfo_to_dict(dsn).get("dbname")
