"""A float's cast to ``numeric(p, s)`` in the client engine (scalar_udfs.float_numeric),
judged against PostgreSQL on an ICU and a libc collation: the float's 15 (a real's 6)
significant digits rounded half away from zero to the scale -- ``2.675`` is ``2.68``
though its double is below it -- and 22003 where the integer part does not fit or the
float is infinite (refused before); a real column's six digits also read through a
derived table.  NaN, and a precision above 38, are refused."""

from __future__ import annotations

from .pairs import Pair, outcome, script_differences

DDL = [
    "CREATE TABLE o (k int PRIMARY KEY, price float8, r real, qty int)",
    "INSERT INTO o VALUES (1, 1.5, 1.5, 2), (2, 2.675, 2.675, 1), (3, 0.1, 0.1, 5),"
    " (4, NULL, NULL, 3), (5, -1.005, -1.005, 7), (6, 1e10, 3.4e38, 1),"
    " (7, 0.125, 0.125, 1), (8, 123456.7891, 123456.7891, 1)",
]

SCRIPT = [
    "SELECT k, price::numeric(10,2), r::numeric(10,2), (price * qty)::numeric(12,3)"
    " FROM o WHERE k <> 6 ORDER BY k",
    "SELECT k, price::numeric(5,0) FROM o WHERE k < 6 ORDER BY k",
    # a real's six digits, read directly or through a derived table (123457.00)
    "SELECT k, r::numeric(10,2), x::numeric(10,1) FROM o, LATERAL (SELECT r AS x) l WHERE k = 8",
    "SELECT k, x::numeric(10,2) FROM (SELECT k, r AS x FROM o) s WHERE k = 8",
    "SELECT k, CAST(price AS decimal(8,4)) FROM o WHERE k <> 6 ORDER BY k",
    "SELECT k FROM o WHERE price::numeric(10,1) = 2.7 ORDER BY k",
    "SELECT k, price::numeric(10,2) FROM o WHERE k = 6",  # 22003
    "SELECT k, r::numeric(38,2) FROM o WHERE k = 6",  # 22003
    "SELECT x::numeric(10,2) FROM (VALUES ('Infinity'::float8)) v(x)",  # 22003
]


def test_floats_cast_to_numeric_as_in_postgresql(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, SCRIPT) == []


def test_nan_and_wide_precisions_are_refused(collated_pair: Pair) -> None:
    _, enc = collated_pair
    for statement in (
        "SELECT x::numeric(10,2) FROM (VALUES ('NaN'::float8)) v(x)",
        "SELECT r::numeric(50,2) FROM o",
    ):
        assert outcome(enc, statement) == ("error", "0A000"), statement


# a numeric's cast to double precision: its text read as float8in reads it (correctly
# rounded, where dividing by a power of ten is an ulp off past 2**53); refused before
NUMERIC_FLOAT_SCRIPT = [
    "CREATE TABLE m (k int PRIMARY KEY, p numeric(10,2), w numeric(38,18))",
    "INSERT INTO m VALUES (1, 1.50, 12345678901234567890.123456789012345678),"
    " (2, 2.25, 0.1), (3, NULL, 9007199254740993), (4, -0.01, 0.000000000000000001),"
    " (5, 99999999.99, -9007199254740995.5)",
    "SELECT k, p::float8, w::float8, CAST(w AS double precision) FROM m ORDER BY k",
    "SELECT k, p::float8 * 2, (w * 3)::float8 FROM m ORDER BY k",
    "SELECT sum(p)::float8, max(w)::float8 FROM m",
    "SELECT k FROM m WHERE p::float8 > 1.6 ORDER BY w::float8 DESC",
    "SELECT k, w::float8::text FROM m ORDER BY k",
]


def test_numerics_cast_to_double_precision_as_in_postgresql(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, NUMERIC_FLOAT_SCRIPT) == []
