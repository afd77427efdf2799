"""Values printed as text by the client engine, judged against PostgreSQL on an ICU and a
libc collation: ``text || x`` is ``text || x::text`` (a boolean's ``true``), concat()
and concat_ws() print each value by its type's output function (a boolean's ``t``), a
float's and a real's text is float8out's / float4out's under the session's
``extra_float_digits`` however it was set (SET, set_config(), SET LOCAL), and a date's
under its DateStyle.  Refused before, but for integers; a float expression over a real
column, whose type the client does not know, is still refused."""

from __future__ import annotations

from pathlib import Path

import psycopg

from .pairs import Pair, outcome, script_differences

DDL = [
    "CREATE TABLE v (k int PRIMARY KEY, s text, f float8, r real, b boolean,"
    " n numeric(8,2), d date, u uuid)",
    "INSERT INTO v VALUES"
    " (1, 'a', 1e15, 1e15, true, 1.5, '2020-01-02', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'),"
    " (2, 'b', 1e14, 3.14159, false, -2, '1999-12-31', NULL),"
    " (3, 'c', 1e-5, 1e-5, NULL, NULL, NULL, NULL),"
    " (4, 'd', 0.1, 0.1, true, 0, '2000-02-29', NULL),"
    " (5, 'e', 'NaN', '-Infinity', false, 100, '2000-01-01', NULL),"
    " (6, 'f', -1.5e-7, 123456789, true, 1, '2000-01-01', NULL),"
    " (7, NULL, 1.7976931348623157e308, 1.17549435e-38, true, 1, '2000-01-01', NULL),"
    " (8, 'h', 0.30000000000000004, 0.3, true, 1, '2000-01-01', NULL)",
]

PRINTED = [
    "SELECT k, 'x' || b, b || 'x', concat('x', b), concat_ws('-', s, b), b::text FROM v ORDER BY k",
    "SELECT k, s || n, concat(s, n), s || d, concat(s, d, n), s || u, concat(u) FROM v ORDER BY k",
    "SELECT k, f::text, r::text, s || f, concat(s, r), concat_ws(',', f, r)::varchar(6) FROM v ORDER BY k",
    "SELECT k, x::text FROM (SELECT k, r AS x FROM v) w ORDER BY k",
]

SCRIPT = [
    *PRINTED,
    "SET DateStyle = 'German'",
    "SELECT k, s || d, concat(s, d) FROM v ORDER BY k",
    "SET extra_float_digits = 0",
    *PRINTED,
    "SELECT set_config('extra_float_digits', '-3', false)",
    *PRINTED,
    "BEGIN",
    "SET LOCAL extra_float_digits = 3",
    *PRINTED,
    "COMMIT",
    *PRINTED,
    "RESET extra_float_digits",
    *PRINTED,
]


def test_values_printed_as_in_postgresql(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, SCRIPT, lambda d: (d.name, d.type_code)) == []


def test_a_float_expression_over_a_real_is_refused(collated_pair: Pair) -> None:
    _, enc = collated_pair
    assert outcome(enc, "SELECT (r * 2)::text FROM v") == ("error", "0A000")


def test_what_the_server_sees(collated_pair: Pair, tmp_path: Path) -> None:
    """docs/security.md: a statement printing a float on the client reads the session's
    extra_float_digits once per execution, and no float's text reaches the server; one
    that prints none does not read it."""
    _, enc = collated_pair
    trace = tmp_path / "protocol.trace"
    with trace.open("w") as out:
        enc.pg.pgconn.trace(out.fileno())
        enc.pg.pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS)
        for _ in range(2):
            assert enc.execute("SELECT f::text FROM v WHERE k = 6").fetchall() == [("-1.5e-07",)]
        enc.execute("SELECT upper(s) FROM v WHERE k = 6").fetchall()
        enc.pg.pgconn.untrace()
    sent = "\n".join(line for line in trace.read_text().splitlines() if line.startswith("F"))
    assert sent.count("current_setting('extra_float_digits')") == 2
    assert "1.5e-07" not in sent and "e-07" not in trace.read_text()
