"""format() over encrypted columns in the client engine, judged against PostgreSQL
(refused before): %s, %L and %%, positions, the - flag, widths given or taken from an
argument (a negative one left-aligns), NULLs, each value's text as its output function
prints it, and PostgreSQL's 22023 for too few arguments, an unknown or unterminated
specifier and argument 0.  %I stays refused (0A000)."""

from __future__ import annotations

from .pairs import Pair, outcome, script_differences

DDL = [
    "CREATE TABLE f (id int PRIMARY KEY, name text, n int, price numeric(10,2), d date,"
    " ok boolean, w int)",
    "INSERT INTO f VALUES (1, 'ann', 3, 1.50, '2024-02-29', true, 6),"
    " (2, 'O''Brien', NULL, NULL, NULL, false, -6), (3, NULL, 7, 2.25, '2020-01-01', NULL, NULL)",
]

SCRIPT = [
    "SELECT id, format('%s-%s', name, id) FROM f ORDER BY id",
    "SELECT id, format('%L / %L / %s', name, n, price) FROM f ORDER BY id",
    "SELECT id, format('%2$s %1$s %s', name, n, d) FROM f ORDER BY id",
    "SELECT id, format('[%10s|%-10s]', name, n) FROM f ORDER BY id",
    "SELECT id, format('[%*s]', w, name) FROM f ORDER BY id",
    "SELECT id, format('%s %%', ok) FROM f ORDER BY id",
    "SELECT id FROM f WHERE format('%s:%s', name, n) = 'ann:3'",
    "SELECT id, format(NULL, name) FROM f WHERE id = 1",
    "SELECT id, format('%s %s', name) FROM f WHERE id = 1",  # 22023
    "SELECT id, format('%x', name) FROM f WHERE id = 1",  # 22023
    "SELECT id, format('%0$s', name) FROM f WHERE id = 1",  # 22023
    "SELECT id, format('%', name) FROM f WHERE id = 1",  # 22023
]


def test_format_as_in_postgresql(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, SCRIPT) == []


def test_format_with_an_identifier_is_refused(collated_pair: Pair) -> None:
    _, enc = collated_pair
    assert outcome(enc, "SELECT format('%I', name) FROM f") == ("error", "0A000")
