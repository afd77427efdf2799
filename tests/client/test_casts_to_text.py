"""Casts to text the client engine prints as PostgreSQL's output functions do, judged
against PostgreSQL: a boolean, a uuid and a numeric column of declared scale (its digits
at that scale), compared, concatenated and matched by LIKE (Django casts the column of a
``contains`` lookup to text).  They were refused; a numeric expression's cast, whose
display scale PostgreSQL derives from the values, still is."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, outcome, plain_and_encrypted, script_differences

SCRIPT = [
    "CREATE TABLE c (id int PRIMARY KEY, m numeric(10,2), u uuid, b bool)",
    "INSERT INTO c VALUES (1, 12.5, 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', true),"
    " (2, -0.5, NULL, false), (3, NULL, '00000000-0000-0000-0000-000000000000', NULL)",
    "SELECT id, m::text, u::text, b::text FROM c ORDER BY id",
    "SELECT id, CAST(m AS varchar), CAST(u AS varchar(8)), CAST(b AS varchar) FROM c ORDER BY id",
    "SELECT id FROM c WHERE m::text LIKE '%.50' ORDER BY id",
    "SELECT id, m::text || 'x', upper(u::text) FROM c ORDER BY id",
    "SELECT id FROM c WHERE u::text LIKE 'a0%'",
    "SELECT id, b::varchar(3) FROM c ORDER BY id",
]


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "casts_to_text", {}, [], {}) as pair:
        yield pair


def test_casts_to_text_as_in_postgresql(pair: Pair) -> None:
    assert script_differences(pair, SCRIPT) == []


def test_cast_of_a_numeric_expression_to_text_is_refused(pair: Pair) -> None:
    plain, enc = pair
    script_differences(pair, SCRIPT[:2])
    sql = "SELECT (m * 2)::text FROM c"
    assert outcome(plain, sql)[0] == "rows"
    assert outcome(enc, sql) == ("error", "0A000")
