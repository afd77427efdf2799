"""Strict SQL judged by PostgreSQL: every statement of strict_statements.py -- syntax
errors, overflow of each integer type, division by zero, bad casts and input, float
special values, numeric scales, rejected aggregate forms -- runs on a plain database
with psycopg and through the client on an encrypted one with the same schema and rows.
Where PostgreSQL raises, the client raises an error of the same SQLSTATE (a refusal,
which has none, does not pass); where PostgreSQL answers, the rows are equal as
PostgreSQL prints them (numerics with their scale).  No message the client raises shows
the parser's internals or terminal escape codes; a syntax error carries PostgreSQL's
message, and its position where the client's points where PostgreSQL's does.

Both connections are in autocommit mode: each statement on its own, as the server runs
it.  INSERT and UPDATE statements change the two databases alike (a statement that
fails changes neither), and the family's last statement reads the table back."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from adaptive_client.catalog.keys import MasterKey
from adaptive_client.syntax.sqltext import check_syntax, syntax_error

from .pairs import Pair, plain_and_encrypted
from .strict_statements import ALL, CONFIG, DDL, ROWS, SYNTAX, S
from .test_read_queries import _rows

# Where the client does not answer as PostgreSQL does: each a strict xfail, so that
# closing one shows here.
GAPS: dict[str, str] = {}


@pytest.fixture(scope="module")
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "strict", CONFIG, DDL, ROWS) as both:
        yield both


Outcome = tuple[str, Any]


def _run(conn: Any, s: S) -> tuple[Outcome, BaseException | None]:
    try:
        cur = conn.execute(s.sql, s.params)
        rows = cur.fetchall() if cur.description else []
    except psycopg.Error as exc:
        return ("error", exc.sqlstate), exc
    return ("rows", _rows(rows, s.ordered)), None


def test_enough_statements() -> None:
    statements = {(s.sql, s.params) for _, s in ALL}
    assert len(statements) >= 300
    assert len({name for name, _ in ALL}) == len(ALL)


@pytest.mark.parametrize(
    "s",
    [
        pytest.param(s, id=name, marks=pytest.mark.xfail(reason=GAPS[name], strict=True))
        if name in GAPS
        else pytest.param(s, id=name)
        for name, s in ALL
    ],
)
def test_statement_matches_plain(pair: Pair, s: S) -> None:
    plain, enc = pair
    expected, plain_exc = _run(plain, s)
    got, enc_exc = _run(enc, s)
    if enc_exc is not None:
        text = str(enc_exc)
        assert "\x1b" not in text and "sqlglot" not in text, text
    assert got == expected, f"{s.sql}: PostgreSQL {expected}, the client {got} ({enc_exc!r})"
    if plain_exc is not None and plain_exc.sqlstate == "42601":
        assert enc_exc is not None
        assert enc_exc.diag.message_primary == plain_exc.diag.message_primary


def test_syntax_positions_are_postgresql_s(pair: Pair) -> None:
    """The family of syntax errors: where the client points (statement_position), it
    points where PostgreSQL does, and it points for nearly all of them."""
    plain, enc = pair
    pointed = 0
    total = 0
    for _, s in SYNTAX:
        _, plain_exc = _run(plain, s)
        if plain_exc is None or plain_exc.sqlstate != "42601":
            continue
        _, enc_exc = _run(enc, s)
        assert enc_exc is not None, s.sql
        total += 1
        position = enc_exc.diag.statement_position
        if position is not None:
            pointed += 1
            assert position == plain_exc.diag.statement_position, s.sql
    assert total >= 60 and pointed >= total - 3


def test_syntax_error_is_psycopg_s() -> None:
    """The client's syntax error is psycopg's class, with the diagnostics PostgreSQL's
    server fills in, and is raised before anything reaches a server."""
    exc = syntax_error('syntax error at or near "FROM"', 12)
    assert isinstance(exc, psycopg.errors.SyntaxError)
    assert exc.sqlstate == "42601"
    assert exc.diag.sqlstate == "42601"
    assert exc.diag.statement_position == "12"
    assert exc.diag.severity == "ERROR"
    with pytest.raises(psycopg.errors.SyntaxError) as info:
        check_syntax("SELECT id, FROM t")
    assert str(info.value) == 'syntax error at or near "FROM"'
    check_syntax("SELECT id, x FROM t")  # valid: nothing raised


def test_syntax_error_in_a_transaction_is_not_a_refusal(pair: Pair) -> None:
    """A syntax error is PostgreSQL's class, not NotSupportedError, inside a
    transaction too, and the connection goes on."""
    _, enc = pair
    with pytest.raises(psycopg.errors.SyntaxError) as info:
        enc.execute("SELECT id,, i FROM nums")
    assert not isinstance(info.value, psycopg.NotSupportedError)
    assert enc.execute("SELECT count(*) FROM nums").fetchone() == (6,)


def test_client_arithmetic_is_typed() -> None:
    """The arithmetic the client computes per row: PostgreSQL's types, its errors."""
    from decimal import Decimal

    from adaptive_client.engine.numeric import FLOAT8, INT2, INT4, INT8, pg_arith, pg_negate

    assert pg_arith("/", -7, 2, INT4, INT4) == -3
    assert pg_arith("%", -7, 2, INT4, INT4) == -1
    assert pg_arith("%", -(2**31), -1, INT4, INT4) == 0
    assert str(pg_arith("*", Decimal("1.50"), Decimal("2.0"))) == "3.000"
    assert str(pg_arith("/", Decimal("10.50"), 3, None, INT4)) == "3.5000000000000000"
    assert pg_arith("+", 32767, 1, INT2, INT4) == 32768
    cases: list[tuple[Callable[[], Any], type[Exception], str]] = [
        (lambda: pg_arith("+", 2**31 - 1, 1, INT4, INT4), psycopg.errors.NumericValueOutOfRange,
         "integer out of range"),
        (lambda: pg_arith("*", 20, 10**9, INT4, INT4), psycopg.errors.NumericValueOutOfRange,
         "integer out of range"),
        (lambda: pg_arith("+", 32767, 1, INT2, INT2), psycopg.errors.NumericValueOutOfRange,
         "smallint out of range"),
        (lambda: pg_arith("-", -(2**63), 1, INT8, INT4), psycopg.errors.NumericValueOutOfRange,
         "bigint out of range"),
        (lambda: pg_arith("/", -(2**31), -1, INT4, INT4), psycopg.errors.NumericValueOutOfRange,
         "integer out of range"),
        (lambda: pg_arith("/", 1, 0, INT4, INT4), psycopg.errors.DivisionByZero,
         "division by zero"),
        (lambda: pg_arith("%", Decimal(1), 0), psycopg.errors.DivisionByZero, "division by zero"),
        (lambda: pg_arith("*", 1e300, 1e300, FLOAT8, FLOAT8),
         psycopg.errors.NumericValueOutOfRange, "value out of range: overflow"),
        (lambda: pg_arith("*", 1e-300, 1e-300, FLOAT8, FLOAT8),
         psycopg.errors.NumericValueOutOfRange, "value out of range: underflow"),
        (lambda: pg_negate(-(2**31), INT4), psycopg.errors.NumericValueOutOfRange,
         "integer out of range"),
    ]  # fmt: skip
    for call, error, message in cases:
        with pytest.raises(error) as info:
            call()
        assert str(info.value) == message
    assert pg_arith("/", float("nan"), 0.0, FLOAT8, FLOAT8) != 0  # NaN / 0 is NaN


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT id FROM nums ORDER BY CASE WHEN x IS DISTINCT FROM x THEN x ELSE x END, id",
        "SELECT CASE WHEN s IS NOT DISTINCT FROM 5 THEN 1 ELSE 0 END FROM nums ORDER BY id",
        "SELECT CASE WHEN s IS DISTINCT FROM 5 THEN 1 FROM nums",  # (no END: refused)
    ],
)
def test_distinct_from_inside_a_case(pair: Pair, sql: str) -> None:
    """``IS [NOT] DISTINCT FROM`` is an operator inside a CASE, not the FROM that would
    show the CASE unended."""
    plain, enc = pair
    expected = _run(plain, S(sql))[0]
    assert _run(enc, S(sql))[0] == expected
