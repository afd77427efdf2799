"""SELECTs without FROM over the server's own functions (settings, advisory locks, the
session's identity) are answered by the server as they are, parameters included; a
parameter anywhere else stays on the client."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.compile.server_functions import answered_by_server
from adaptive_client.syntax.params import normalize_placeholders
from adaptive_client.syntax.sqltext import parse

from .pairs import outcome


@pytest.fixture(scope="module")
def conns(new_database: Any, master_key: MasterKey) -> Iterator[tuple[Any, Any, str]]:
    dsn = new_database("srvfn_enc")
    plain = psycopg.connect(new_database("srvfn_plain"), autocommit=True)
    enc = adaptive_client.connect(dsn, master_key=master_key, autocommit=True)
    yield plain, enc, dsn
    plain.close()
    enc.close()


@pytest.mark.parametrize(
    "sql,params",
    [
        ("SELECT version() LIKE 'PostgreSQL%%'", ()),
        ("SELECT set_config('application_name', %s, false)", ("billing",)),
        ("SELECT current_setting('application_name')", ()),
        ("SELECT pg_try_advisory_xact_lock(%s::bigint)", (9,)),
        ("SELECT pg_backend_pid() > 0, current_user, current_database() LIKE 'srvfn_%%'", ()),
        ("SELECT txid_current() > 0 AS in_tx", ()),
        ("SELECT pg_advisory_lock(%s) = pg_advisory_lock(%s)", (1, 2)),  # an error, alike
    ],
)
def test_server_functions_answer_as_on_plain(
    conns: tuple[Any, Any, str], sql: str, params: tuple[Any, ...]
) -> None:
    plain, enc, _ = conns
    assert outcome(enc, sql, params or None) == outcome(plain, sql, params or None)


def test_an_advisory_lock_is_the_servers(conns: tuple[Any, Any, str]) -> None:
    """The lock is held on the server: another session cannot take it until released."""
    _, enc, dsn = conns
    enc.execute("SELECT pg_advisory_lock(%s)", (4242,))
    with psycopg.connect(dsn, autocommit=True) as other:
        assert other.execute("SELECT pg_try_advisory_lock(4242)").fetchone() == (False,)
        assert enc.execute("SELECT pg_advisory_unlock(%s)", (4242,)).fetchone() == (True,)
        assert other.execute("SELECT pg_try_advisory_lock(4242)").fetchone() == (True,)


@pytest.mark.parametrize(
    "sql,server",
    [
        ("SELECT pg_advisory_lock(%(key)s)", True),
        ("SELECT set_config('a.b', %s, true), current_setting('a.b')", True),
        ("SELECT current_user", True),
        ("SELECT upper(%s), pg_backend_pid()", False),  # a value no server function takes
        ("SELECT %s = pg_backend_pid()", False),
        ("SELECT 1 + 1", False),  # no server function: the client computes it
        ("SELECT pg_backend_pid() FROM t", False),
        ("SELECT pg_advisory_lock(length(%s))", False),
    ],
)
def test_what_goes_to_the_server_as_it_is(sql: str, server: bool) -> None:
    text, _, _ = normalize_placeholders(sql)
    assert answered_by_server(parse(text)[0]) is server
