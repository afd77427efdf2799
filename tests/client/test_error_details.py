"""A constraint violation's report as PostgreSQL makes it: the class, the plain names in
``diag``, and the DETAIL quoting the key's values (decrypted by the client), compared
with the same statement on a plain database."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted

SCHEMA = [
    "CREATE TABLE person (id integer PRIMARY KEY, email text UNIQUE, born date, "
    "score numeric(6,2), nick varchar(10))",
    "CREATE TABLE visit (person_id integer REFERENCES person(id), day date, "
    "note text, PRIMARY KEY (person_id, day))",
    "INSERT INTO person VALUES (1, 'ann@example.org', '1990-05-17', 12.50, 'annie'), "
    "(2, 'bob@example.org', '1985-01-02', 7.25, 'bobby')",
    "INSERT INTO visit VALUES (1, '2024-03-01', 'first'), (1, '2024-03-05', 'second')",
]
VIOLATIONS = [
    "INSERT INTO person VALUES (1, 'x@example.org', NULL, NULL, NULL)",
    "INSERT INTO person VALUES (3, 'ann@example.org', NULL, NULL, NULL)",
    "INSERT INTO visit VALUES (1, '2024-03-01', 'again')",
    "INSERT INTO visit VALUES (42, '2024-03-02', 'nobody')",
    "UPDATE person SET email = 'bob@example.org' WHERE id = 1",
    "DELETE FROM person WHERE id = 1",
    # an index the rows violate: named as the application named it (it was the server's)
    "CREATE UNIQUE INDEX one_visit ON visit (person_id)",
]


@pytest.fixture(scope="module")
def pair(new_database: Callable[..., str]) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, MasterKey.generate(), "det", {}, SCHEMA, {}) as both:
        yield both


def _report(conn: Any, sql: str) -> tuple[Any, ...]:
    with pytest.raises(psycopg.Error) as info:
        conn.execute(sql)
    d = info.value.diag
    return (
        type(info.value).__name__,
        d.sqlstate,
        d.message_primary,
        d.message_detail,
        d.table_name,
        d.constraint_name,
    )


@pytest.mark.parametrize("sql", VIOLATIONS)
def test_violation_reported_as_postgresql(pair: Pair, sql: str) -> None:
    plain, enc = pair
    expected = _report(plain, sql)
    got = _report(enc, sql)
    assert got == expected
    assert expected[3] and "=(" in expected[3]  # (the DETAIL quotes the key's values)


def test_a_missing_index_dropped_is_an_undefined_object(pair: Pair) -> None:
    for conn in pair:
        with pytest.raises(psycopg.errors.UndefinedObject, match='index "nope" does not exist'):
            conn.execute("DROP INDEX nope")
