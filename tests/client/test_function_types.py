"""A call PostgreSQL has no function for, judged against PostgreSQL on an ICU and a libc
collation: a text function of an integer, a number, a date or a boolean (``left(n, 1)``,
``upper(d)``, ``n ~ 'x'``) and a type's name called with other than one argument
(``float8(1, 2)``) are 42883 through the client as in PostgreSQL (0A000, or a client
engine's binder error, before); the text functions of text still answer."""

from __future__ import annotations

from .pairs import Pair, outcome, script_differences

DDL = [
    "CREATE TABLE f (k int PRIMARY KEY, n int, b bigint, x numeric(8,2), r real,"
    " d date, ts timestamp, flag boolean, s text)",
    "INSERT INTO f VALUES (1, 12, 9000000000, 1.50, 2.5, '2024-01-02', '2024-01-02 03:04',"
    " true, 'hello world'), (2, -3, NULL, 2.25, -1, '2023-12-31', NULL, false, 'Foo'),"
    " (3, NULL, 7, NULL, NULL, NULL, NULL, NULL, NULL)",
]

# each refused by PostgreSQL with 42883 before it runs
UNDEFINED = [
    "SELECT left(n, 1) FROM f ORDER BY k",
    "SELECT right(b, 2) FROM f ORDER BY k",
    "SELECT translate(n, '1', '2') FROM f ORDER BY k",
    "SELECT lpad(x, 5) FROM f ORDER BY k",
    "SELECT replace(d, '1', '2') FROM f ORDER BY k",
    "SELECT repeat(flag, 2) FROM f ORDER BY k",
    "SELECT split_part(r, '.', 1) FROM f ORDER BY k",
    "SELECT md5(n) FROM f ORDER BY k",
    "SELECT upper(n) FROM f ORDER BY k",
    "SELECT lower(d) FROM f ORDER BY k",
    "SELECT length(x) FROM f ORDER BY k",
    "SELECT strpos(n, '1') FROM f ORDER BY k",
    "SELECT reverse(ts) FROM f ORDER BY k",
    "SELECT octet_length(n) FROM f ORDER BY k",
    "SELECT k FROM f WHERE n ~ '1' ORDER BY k",
    "SELECT float8(1, 2)",
    "SELECT float8(n, 2) FROM f ORDER BY k",
    "SELECT int4() FROM f",
]

# the same functions of text, answered
ANSWERED = [
    "SELECT left(s, 3), right(s, 2), upper(s), lower(s), length(s) FROM f ORDER BY k",
    "SELECT translate(s, 'lo', '01'), reverse(s), strpos(s, 'o') FROM f ORDER BY k",
    "SELECT left(n::text, 1), upper(d::text), length(x::text) FROM f ORDER BY k",
    "SELECT float8(n), int4(s IS NULL), text(n) FROM f ORDER BY k",
    "SELECT k FROM f WHERE n::text ~ '1' ORDER BY k",
]


def test_text_functions_of_other_types_are_undefined(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, UNDEFINED) == []
    # (each is PostgreSQL's error, not a pair of equal answers)
    plain, _ = collated_pair
    assert [s for s in UNDEFINED if outcome(plain, s) != ("error", "42883")] == []


def test_text_functions_of_text_answer(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, ANSWERED) == []


def test_array_function_of_a_constructor_is_a_typed_refusal(collated_pair: Pair) -> None:
    # (an array built of columns is not one the client holds: refused with a SQLSTATE,
    # where the client raised a configuration error without one)
    _, enc = collated_pair
    for statement in (
        "SELECT array_to_string(ARRAY[n, k], ',') FROM f ORDER BY k",
        "SELECT array_length(ARRAY[s, 'x'], 1) FROM f ORDER BY k",
    ):
        assert outcome(enc, statement) == ("error", "0A000"), statement
