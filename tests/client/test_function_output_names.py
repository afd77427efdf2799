"""Output column names of functions and subscripts, judged against PostgreSQL: a function
is named after the name written, whichever node the SQL parser makes of it
(``array_length``, ``array_to_string``, ``concat_ws``), a subscript after what it
subscripts (``tags[1]`` is ``tags``).  They were ``?column?``.  Arithmetic on an
interval column in the select list, a system column and a whole-row reference are
refused (0A000) rather than failing as an operator or a column PostgreSQL lacks (42883,
42703); DDL naming a system column or an unknown referenced column fails with
PostgreSQL's SQLSTATE."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, outcome, plain_and_encrypted, script_differences

SCRIPT = [
    "CREATE TABLE ev (id int PRIMARY KEY, tags text[], n int, s text)",
    "INSERT INTO ev VALUES (1, '{x,y}', 3, 'ab'), (2, '{}', -4, NULL), (3, NULL, NULL, 'c')",
    "SELECT id, tags[1], array_length(tags, 1) FROM ev ORDER BY id",
    "SELECT id, array_to_string(tags, ',') FROM ev ORDER BY id",
    "SELECT id, cardinality(tags) FROM ev ORDER BY id",
    "SELECT abs(n), sign(n), upper(s), ceiling(n), btrim(s) FROM ev ORDER BY id",
    "SELECT id, char_length(s), substr(s, 1, 1), strpos(s, 'b') FROM ev ORDER BY id",
    "SELECT concat_ws('-', s, n) FROM ev ORDER BY id",
]


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "fn_names", {}, [], {}) as pair:
        yield pair


def test_output_names_as_in_postgresql(pair: Pair) -> None:
    assert script_differences(pair, SCRIPT) == []


def test_interval_arithmetic_in_select_list_is_named_as_in_postgresql(pair: Pair) -> None:
    """Interval arithmetic the client engine answers (refused before): its values and
    its output names (``?column?``, ``justify_hours``) PostgreSQL's."""
    plain, enc = pair
    for conn in pair:
        conn.execute("CREATE TABLE iv (id int PRIMARY KEY, dur interval)")
        conn.execute("INSERT INTO iv VALUES (1, '1 day 2 hours')")
    for sql in (
        "SELECT dur * 2 FROM iv",
        "SELECT dur + dur FROM iv",
        "SELECT justify_hours(dur * 12) FROM iv",
    ):
        assert outcome(plain, sql)[0] == "rows"
        assert outcome(enc, sql) == outcome(plain, sql)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT xmin = xmin FROM ev",
        "SELECT xmin FROM ev",
        "SELECT id FROM ev WHERE ctid = '(0,1)'",
        "SELECT ev.tableoid > 0 FROM ev",
    ],
)
def test_system_columns_are_refused_not_undefined(pair: Pair, sql: str) -> None:
    """A system column PostgreSQL answers is a refusal (0A000), not an unknown column
    (42703)."""
    plain, enc = pair
    script_differences(pair, SCRIPT[:2])
    assert outcome(plain, sql)[0] == "rows"
    assert outcome(enc, sql) == ("error", "0A000")


@pytest.mark.parametrize(
    "sql", ["SELECT ev FROM ev", "SELECT e FROM ev e", "SELECT id FROM ev e WHERE e IS NOT NULL"]
)
def test_whole_row_references_are_refused_not_undefined(pair: Pair, sql: str) -> None:
    """A whole-row reference (a table's name as a value) is a refusal, not 42703."""
    plain, enc = pair
    script_differences(pair, SCRIPT[:2])
    assert outcome(plain, sql)[0] == "rows"
    assert outcome(enc, sql) == ("error", "0A000")


DDL_ERRORS = [
    "CREATE TABLE sx (a int, xmin int)",  # 42701: a system column's name
    "CREATE TABLE sy (a int)",
    "ALTER TABLE sy ADD COLUMN ctid text",
    "CREATE TABLE pk (id int PRIMARY KEY)",
    "CREATE TABLE fk (pid int REFERENCES pk (nosuch))",  # 42703 (was 42830)
]


def test_ddl_errors_as_in_postgresql(pair: Pair) -> None:
    assert script_differences(pair, DDL_ERRORS) == []
