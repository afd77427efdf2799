"""Fixtures for the SQLAlchemy, asyncio and pool tests: a plain database (psycopg, the
oracle) and an encrypted one (through the client), as SQLAlchemy URLs and DSNs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from psycopg.conninfo import conninfo_to_dict

import adaptive_client.sqlalchemy  # noqa: F401  (registers the dialects for a checkout)
from adaptive_client.catalog.keys import MasterKey

# SQLAlchemy's own compliance suite runs as a pytest session of its own
# (test_compliance.py), with SQLAlchemy's test plugin.
collect_ignore = ["suite"]


def sa_url(dsn: str, driver: str, **query: str) -> sa.URL:
    d = conninfo_to_dict(dsn)
    return sa.URL.create(
        f"postgresql+{driver}",
        username=d.get("user"),
        password=d.get("password"),
        host=d.get("host"),
        port=int(d["port"]) if d.get("port") else None,
        database=d.get("dbname"),
        query=query,
    )


@pytest.fixture(scope="session")
def key_file(tmp_path_factory: pytest.TempPathFactory, master_key: MasterKey) -> Path:
    path = tmp_path_factory.mktemp("key") / "master.key"
    path.write_text(master_key.hex())
    path.chmod(0o600)
    return path


@pytest.fixture()
def dsn_pair(new_database: Callable[..., str]) -> tuple[str, str]:
    """(plain DSN, encrypted DSN): two fresh databases."""
    return new_database("sa_plain"), new_database("sa_enc")


@pytest.fixture()
def engines(dsn_pair: tuple[str, str], key_file: Path) -> Iterator[tuple[Any, Any]]:
    """(plain engine over psycopg, encrypted engine over postgresql+adaptive)."""
    plain = sa.create_engine(sa_url(dsn_pair[0], "psycopg"))
    enc = sa.create_engine(sa_url(dsn_pair[1], "adaptive", master_key_file=str(key_file)))
    yield plain, enc
    plain.dispose()
    enc.dispose()
