"""ORDER BY a bare name that is a select item's implicit output name
(compile/order_names.py), judged against PostgreSQL on an ICU and a libc collation:
``SELECT j::text FROM t ORDER BY j`` orders by the text (the output is named ``j``),
``ORDER BY count`` names ``count(*)``, two different outputs of the name are 42702.
Before, the name was the input column's (a different order), an unknown column (42703),
or a refusal.  With them: a text min/max inside a cast or ``||``, and a string the
client engine cannot read as the type a CASE resolves to (22P02 as in PostgreSQL), and a
column name of a table read twice (42702).  A name inside an ORDER BY or DISTINCT ON
expression is the input column's, never an output alias' (engine/order_inputs.py): the
client engine had ordered by the alias.  ``ORDER BY x USING <`` (sqlglot does not read
it: 42601 before), and DISTINCT ON keys that are not the leading ORDER BY keys (42P10:
the engine had answered)."""

from __future__ import annotations

from .pairs import Pair, script_differences

DDL = [
    "CREATE TABLE t (k int PRIMARY KEY, j int, s text, f float8)",
    "INSERT INTO t VALUES (1, -2, 'b', 1.5), (2, -4, 'a', -2), (3, 10, 'c', NULL),"
    " (4, 3, 'B', 0), (5, 3, 'x', 7.25), (6, NULL, NULL, 1)",
]

SCRIPT = [
    # the output's name, not the input column: text order
    "SELECT j::text FROM t ORDER BY j",
    "SELECT k, j::text FROM t ORDER BY j DESC, k",
    "SELECT j::text FROM t ORDER BY 1",
    "SELECT DISTINCT j::text FROM t ORDER BY j",
    "SELECT k, CASE WHEN j IS NULL THEN 'none' ELSE j::text END FROM t ORDER BY j, k",
    "SELECT k, coalesce(j::text, 'x') FROM t ORDER BY coalesce, k",
    "SELECT * FROM (SELECT k, j::text FROM t ORDER BY j LIMIT 3) x ORDER BY k",
    # function names
    "SELECT j, count(*) FROM t GROUP BY j ORDER BY count, j",
    "SELECT upper(s) FROM t ORDER BY upper",
    "SELECT max(s) FROM t GROUP BY j ORDER BY max",
    "SELECT max(s)::text FROM t GROUP BY j ORDER BY max",
    # an input column where no output has the name; the same output twice is one
    "SELECT k FROM t ORDER BY j, k",
    "SELECT j, t.j FROM t ORDER BY j",
    "SELECT -j AS j FROM t ORDER BY j",
    # two different outputs of the name
    "SELECT j::text, j FROM t ORDER BY j",
    "SELECT upper(s), lower(s) AS upper FROM t ORDER BY upper",
    # text min/max under a cast or concatenation
    "SELECT max(s) || '!', min(s)::varchar(1), length(max(s)) FROM t",
    # a CASE resolved to integer: the string is not one
    "SELECT CASE WHEN f > 0 THEN 'x' ELSE 1 END FROM t",
    "SELECT CASE WHEN f > 0 THEN j ELSE 'y' END FROM t",
    # a name of one table read twice is ambiguous (42702, was 42703); qualified it is not
    "SELECT count(*) FROM t x, t y WHERE x.k = y.k GROUP BY j ORDER BY j",
    "SELECT count(j) FROM t x, t y WHERE x.k = y.k GROUP BY x.j",
    "SELECT x.j, count(*) FROM t x, t y WHERE x.k = y.k GROUP BY x.j ORDER BY x.j",
    # outputs and inputs of GROUP BY: the input column first
    "SELECT s AS j FROM t GROUP BY j ORDER BY j",
    "SELECT j + 1 AS x, count(*) FROM t GROUP BY x ORDER BY x",
    "SELECT count(*) FROM t GROUP BY k ORDER BY j",
]

# a name inside an expression key is the input column's, never an output alias's
INPUT_SCRIPT = [
    "CREATE TABLE h (k int PRIMARY KEY, hundred int, s text, f float8)",
    "INSERT INTO h SELECT i, (i * 37) % 100, 'v' || (i % 9), (i % 5) * 0.5"
    " FROM generate_series(1, 50) i",
    "SELECT k AS hundred FROM h ORDER BY -hundred LIMIT 5",
    "SELECT hundred AS k FROM h ORDER BY k + 0 LIMIT 5",
    "SELECT k AS hundred FROM h ORDER BY hundred % 10, k LIMIT 5",
    "SELECT k AS s FROM h ORDER BY length(s), k DESC LIMIT 3",
    "SELECT upper(s) AS s FROM h ORDER BY s || 'x', k LIMIT 4",
    "SELECT k AS hundred, hundred AS k FROM h ORDER BY k LIMIT 3",
    "SELECT k AS hundred, hundred AS k FROM h ORDER BY k + 0 LIMIT 3",
    "SELECT DISTINCT ON (hundred % 10) k AS hundred FROM h ORDER BY hundred % 10, k",
    "SELECT DISTINCT ON (hundred % 10) hundred, k FROM h ORDER BY hundred % 10, k DESC",
    "SELECT DISTINCT ON (abs(hundred - 50)) hundred FROM h ORDER BY abs(hundred - 50), hundred",
    "SELECT DISTINCT ON (k) hundred AS k, s FROM h ORDER BY k, s LIMIT 5",
    "SELECT DISTINCT ON (hundred) k FROM h ORDER BY hundred, k",
    "SELECT hundred % 7 AS k, count(*) FROM h GROUP BY k ORDER BY 1",
    "SELECT k % 7 AS hundred, count(*) FROM h GROUP BY hundred ORDER BY 1",
    # an avg and a sum of DISTINCT floats (the DISTINCT had been lost inside a cast)
    "SELECT avg(DISTINCT f), sum(DISTINCT f), avg(f), count(DISTINCT f) FROM h",
]

# ORDER BY ... USING < / >, and DISTINCT ON against ORDER BY (42P10 where they disagree)
DISTINCT_SCRIPT = [
    "CREATE TABLE d (k int PRIMARY KEY, string4 text, two int, ten int)",
    "INSERT INTO d SELECT i, CASE i % 4 WHEN 0 THEN 'AAAA' WHEN 1 THEN 'HHHH' WHEN 2"
    " THEN 'OOOO' ELSE 'VVVV' END, i % 2, i % 10 FROM generate_series(1, 60) i",
    "SELECT DISTINCT two, string4, ten FROM d ORDER BY two USING <, string4 USING <, ten USING <",
    "SELECT DISTINCT ON (string4) string4, two, ten FROM d"
    " ORDER BY string4 USING <, two USING >, ten USING <",
    "SELECT DISTINCT ON (string4, ten) string4, two, ten FROM d"
    " ORDER BY string4 USING <, two USING <, ten USING <",
    "SELECT DISTINCT ON (string4, ten) string4, ten, two FROM d"
    " ORDER BY string4 USING <, ten USING >, two USING <",
    "SELECT DISTINCT ON (string4, ten) string4, two, ten FROM d ORDER BY string4, two, ten",
    "SELECT DISTINCT ON (1) string4, two FROM d ORDER BY string4, 2 DESC",
    "SELECT DISTINCT ON (ten) ten AS x, two FROM d ORDER BY x, two DESC",
    "SELECT DISTINCT ON (x) ten AS x, two FROM d ORDER BY two, x",
    "SELECT DISTINCT ON (ten, two) ten, two FROM d ORDER BY two, ten DESC",
    "SELECT DISTINCT ON (ten) ten, k FROM d ORDER BY ten, k DESC",
    "SELECT k, ten FROM d ORDER BY ten USING >, k USING < NULLS FIRST LIMIT 5",
    "SELECT k FROM d ORDER BY ten USING > DESC",
    "SELECT array_agg(ten ORDER BY ten USING >) FROM d WHERE k < 12",
]


def test_order_by_names_as_in_postgresql(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, SCRIPT) == []


def test_distinct_on_and_order_by_using(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, DISTINCT_SCRIPT) == []


def test_names_inside_keys_are_input_columns(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, INPUT_SCRIPT) == []
