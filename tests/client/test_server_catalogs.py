"""Reads of the server's catalogs that describe the server (extensions, settings,
databases, collations, time zones) are answered by the server, as on a plain database;
a catalog that lists relations, or an application's table beside such a catalog, stays
refused."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.errors import UnsupportedQuery

from .pairs import outcome


@pytest.fixture(scope="module")
def conns(new_database: Any, master_key: MasterKey) -> Iterator[tuple[Any, Any]]:
    plain = psycopg.connect(new_database("srvcat_plain"), autocommit=True)
    enc = adaptive_client.connect(
        new_database("srvcat_enc"), master_key=master_key, autocommit=True
    )
    for conn in (plain, enc):
        conn.execute("CREATE TABLE t (id integer PRIMARY KEY, v text)")
    yield plain, enc
    plain.close()
    enc.close()


@pytest.mark.parametrize(
    "sql,params",
    [
        ("SELECT 1 FROM pg_extension WHERE extname = %s", ("plpgsql",)),  # (Django's)
        ("SELECT 1 FROM pg_extension WHERE extname = %s", ("hstore",)),
        ("SELECT extname FROM pg_catalog.pg_extension WHERE extname = 'plpgsql'", ()),
        ("SELECT setting, unit FROM pg_settings WHERE name = %(name)s", {"name": "work_mem"}),
        ("SELECT count(*) > 0 FROM pg_available_extensions WHERE name = 'hstore'", ()),
        ("SELECT collname FROM pg_collation WHERE collname IN ('C', 'en-US-x-icu') ORDER BY 1", ()),
        ("SELECT utc_offset FROM pg_timezone_names WHERE name = %s", ("Asia/Kolkata",)),
        ("SELECT rolname FROM pg_roles WHERE rolname = current_user", ()),
        ("SELECT datname LIKE 'srvcat%%' FROM pg_database WHERE datname = current_database()", ()),
        (
            "WITH e AS (SELECT extname FROM pg_extension) SELECT count(*) FROM e WHERE extname = %s",
            ("plpgsql",),
        ),
        ("SELECT 1 FROM public.pg_extension", ()),  # (not there: 42P01, alike)
        ("SELECT nosuch FROM pg_settings", ()),  # 42703, alike
    ],
)
def test_server_catalogs_answer_as_on_plain(conns: tuple[Any, Any], sql: str, params: Any) -> None:
    plain, enc = conns
    assert outcome(enc, sql, params or None) == outcome(plain, sql, params or None)


def test_in_a_transaction_the_read_is_part_of_it(conns: tuple[Any, Any]) -> None:
    """As on a plain database: the read opens the transaction, an error in it fails it."""
    _, enc = conns
    enc.autocommit = False
    try:
        enc.execute("INSERT INTO t VALUES (1, 'a')")
        with pytest.raises(psycopg.errors.UndefinedColumn):
            enc.execute("SELECT nosuch FROM pg_extension")
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            enc.execute("SELECT 1 FROM pg_extension")
        enc.rollback()
        assert enc.execute("SELECT count(*) FROM t").fetchone() == (0,)
        enc.rollback()
    finally:
        enc.autocommit = True


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT relname FROM pg_class",  # lists the stored, anonymized tables
        "SELECT attname FROM pg_attribute",
        "SELECT t.v FROM t, pg_extension",  # an application's table beside a catalog
        "SELECT extname FROM pg_extension WHERE extname IN (SELECT v FROM t)",
    ],
)
def test_catalogs_of_relations_and_mixed_reads_stay_refused(
    conns: tuple[Any, Any], sql: str
) -> None:
    _, enc = conns
    with pytest.raises(UnsupportedQuery):
        enc.execute(sql)
