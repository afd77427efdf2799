"""PostgreSQL's spellings of a string constant -- N'', E'' escapes, U&'' with and without
UESCAPE, dollar quotes -- written, compared and selected as on plain PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, outcome, plain_and_encrypted

SCHEMA = ["CREATE TABLE g (id integer PRIMARY KEY, name text, tag varchar(20))"]
WRITES = [
    "INSERT INTO g VALUES (1, N'Rock', N'band')",
    r"INSERT INTO g VALUES (2, E'a\tb\'c\x41\101\\z', e'it''s')",
    r"INSERT INTO g VALUES (3, E'\u00e9t\u00e9 \U0001F600', 'summer')",
    r"INSERT INTO g VALUES (4, U&'d\0061t\+000061', U&'\00e9\\')",
    "INSERT INTO g VALUES (5, U&'d!0061t!!' UESCAPE '!', 'bang')",
    r"INSERT INTO g VALUES (6, U&'\D83D\DE00', 'pair')",
    "INSERT INTO g VALUES (7, $$dollar's \\ $$, $tag$with $$ inside$tag$)",
]
READS = [
    "SELECT id, name, tag FROM g ORDER BY id",
    "SELECT id FROM g WHERE name = N'Rock'",
    r"SELECT id FROM g WHERE name = E'a\tb''cAA\\z'",
    "SELECT id FROM g WHERE tag = $$with $$ || $$$$ || 'inside' OR tag = U&'\\00e9\\\\'",
    "SELECT N'x' || name FROM g WHERE id = 1",
]


@pytest.fixture(scope="module")
def pair(new_database: Callable[..., str]) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, MasterKey.generate(), "lit", {}, SCHEMA, {}) as both:
        for conn in both:
            for sql in WRITES:
                conn.execute(sql)
        yield both


@pytest.mark.parametrize("sql", READS)
def test_string_constants_as_postgresql(pair: Pair, sql: str) -> None:
    plain, enc = pair
    expected = plain.execute(sql).fetchall()
    assert enc.execute(sql).fetchall() == expected
    assert expected


CONTINUED = [
    "SELECT 'a' 'b'",
    "SELECT 'a'\n'b'",
    "SELECT 'first line'\n' - next line' /* c */\n' - third line'",
    "SELECT 'a' -- c\n'b'",
    "SELECT 'x' || 'y'\n'z'",
]


@pytest.mark.parametrize("sql", CONTINUED)
def test_continued_string_constants_as_postgresql(pair: Pair, sql: str) -> None:
    """Two string constants are one only across a line break, and without a /* comment
    */ between them (the client took 'a' 'b' and named the result concat)."""
    assert outcome(pair[1], sql) == outcome(pair[0], sql)


def test_a_case_branch_of_an_array_constructor(pair: Pair) -> None:
    """The comma inside ARRAY[...] in a CASE branch is the constructor's (the client's
    syntax check read it as ending the CASE: 42601)."""
    sql = "SELECT CASE WHEN true THEN ARRAY['a', 'b'] END"
    assert outcome(pair[1], sql) == outcome(pair[0], sql)
