"""Aggregates and operators over columns of every kind of type, judged against
PostgreSQL: each statement gives what PostgreSQL gives -- its rows and their types, or
its error's SQLSTATE -- or a typed refusal (0A000); never a Python exception.  Before,
``-x`` of a text, date, uuid, array ... column and min/max(DISTINCT) of an array raised
TypeError, ``bool_and`` of an integer, ``string_agg`` of a number, ``min`` of a uuid or
bytea and ``-`` of a boolean were answered where PostgreSQL has no such function
(42883), ``text + 1`` was read as a number (22P02), and min/max of a char(n) grouped
lost its padding (a wrong answer); ``i IS TRUE`` of an integer was answered (42804), and
an array compared with a number raised an error without a SQLSTATE (42883); ntile() was
described as a bigint (PostgreSQL's integer)."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal
from typing import Any

import pytest

from .pairs import Pair, outcome

COLUMNS = {
    "i2": ("smallint", ["1", "-3", "NULL", "32767"]),
    "i8": ("bigint", ["1", "9000000000000000000", "NULL", "-5"]),
    "nu": ("numeric", ["1.50", "-0.001", "NULL", "1e20"]),
    "r": ("real", ["1.5", "0.1", "NULL", "-2"]),
    "bo": ("boolean", ["true", "false", "NULL", "true"]),
    "ch": ("char(3)", ["'a'", "'bc '", "NULL", "'xyz'"]),
    "tm": ("time", ["'10:00'", "'23:59:59.5'", "NULL", "'00:00'"]),
    "ttz": ("timetz", ["'10:00+02'", "'11:00+00'", "NULL", "'00:00-05'"]),
    "iv": ("interval", ["'1 mon'", "'30 days'", "NULL", "'-1 hour'"]),
    "uu": (
        "uuid",
        [
            "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'",
            "'00000000-0000-0000-0000-000000000000'",
            "NULL",
            "'ffffffff-ffff-ffff-ffff-ffffffffffff'",
        ],
    ),
    "by": ("bytea", ["'\\x00ff'", "'\\x'", "NULL", "'abc'"]),
    "js": ("jsonb", ["'{\"a\": 1}'", "'[1,2]'", "NULL", "'\"x\"'"]),
    "ar": ("int[]", ["'{1,2}'", "'{}'", "NULL", "'{3,NULL}'"]),
    "ip": ("inet", ["'10.0.0.1'", "'::1'", "NULL", "'192.168.0.0/16'"]),
    "tx": ("text", ["'b'", "'A'", "NULL", "'a'"]),
    "dt": ("date", ["'2020-01-01'", "'1999-12-31'", "NULL", "'2020-01-01'"]),
    "ts": ("timestamp", ["'2020-01-01 10:00'", "'1999-12-31'", "NULL", "'2020-01-01 10:00:00.5'"]),
}

DDL = [
    "CREATE TABLE t (id int PRIMARY KEY, g int, "
    + ", ".join(f"{c} {t}" for c, (t, _) in COLUMNS.items())
    + ")",
    "INSERT INTO t VALUES "
    + ", ".join(
        f"({i + 1}, {i % 2}, " + ", ".join(values[i] for _, values in COLUMNS.values()) + ")"
        for i in range(4)
    ),
]


def _statements(c: str) -> list[str]:
    out = []
    for f in ("sum", "avg", "min", "max", "bool_and", "string_agg"):
        arg = f"{c}, ','" if f == "string_agg" else c
        out.append(f"SELECT {f}({arg}) FROM t")
        out.append(f"SELECT g, {f}({arg}) FROM t GROUP BY g ORDER BY g")
        out.append(f"SELECT {f}(DISTINCT {arg}) FROM t")
    out.append(f"SELECT id, -{c} FROM t ORDER BY id")
    out.append(f"SELECT id, {c} + 1 FROM t ORDER BY id")
    out.append(f"SELECT ntile(2) OVER (ORDER BY {c} NULLS LAST, id), id FROM t ORDER BY id")
    for condition in (f"{c} IS TRUE", f"{c} IS NOT FALSE", f"{c} = 1", f"{c} IN (1, 2)"):
        out.append(f"SELECT id FROM t WHERE {condition} ORDER BY id")
    return out


# where the client refuses or differs, and why (a refusal where PostgreSQL answers is a
# gap; these are known)
GAPS = {
    "SELECT id, ip + 1 FROM t ORDER BY id": "inet arithmetic",
}


def _judged(conn: Any, sql: str) -> tuple[Any, ...]:
    try:
        return outcome(conn, sql, describe=lambda d: d.type_code)
    except Exception as exc:  # (anything but a database error: the client's defect)
        return ("python error", type(exc).__name__, str(exc))


@pytest.mark.parametrize("column", sorted(COLUMNS))
def test_as_postgresql_or_refused(collated_pair: Pair, column: str) -> None:
    """Every statement over the column as PostgreSQL answers it or refused (0A000); the
    known gaps differ still (a gap closed leaves the list)."""
    plain, enc = collated_pair
    differing = {}
    for sql in _statements(column):
        want, got = _judged(plain, sql), _judged(enc, sql)
        if got != want and got != ("error", "0A000"):
            differing[sql] = (want, got)
    known = {sql for sql in _statements(column) if sql in GAPS}
    assert {sql: d for sql, d in differing.items() if sql not in known} == {}
    assert set(differing) == known


CHOICES = [
    "SELECT id FROM t WHERE coalesce(bo, 1) = 1 ORDER BY id",  # 42804 (answered before)
    "SELECT id, coalesce(tx, 1) FROM t ORDER BY id",  # 42804
    "SELECT id, CASE WHEN i2 > 0 THEN bo ELSE 0 END FROM t ORDER BY id",  # 42804
    "SELECT id, greatest(i2, tx) FROM t ORDER BY id",  # 42804
    "SELECT id, coalesce(i2, i8), least(i2, 0) FROM t ORDER BY id",
    "SELECT id, coalesce(dt, ts), coalesce(tx, 'x') FROM t ORDER BY id",
]


def test_choices_between_type_categories(collated_pair: Pair) -> None:
    """A COALESCE, CASE, GREATEST or LEAST between a boolean, a number, a string or a
    date of different categories is PostgreSQL's 42804 (the client engine cast and
    answered)."""
    plain, enc = collated_pair
    assert [(s, _judged(enc, s)) for s in CHOICES] == [(s, _judged(plain, s)) for s in CHOICES]


PARAMETERS = [
    ("nu", True), ("nu", dt.date(2020, 1, 1)), ("nu", uuid.UUID(int=5)), ("ip", 1),
    ("ip", Decimal("1.5")), ("uu", 1), ("dt", 1), ("tm", dt.datetime(2020, 1, 1)),
    ("i8", b"x"), ("ts", dt.time(10)),
]  # fmt: skip


@pytest.mark.parametrize("operator", ["=", ">"])
def test_parameters_of_other_types(collated_pair: Pair, operator: str) -> None:
    """A parameter of a type PostgreSQL has no operator for against the column's is its
    42883 (with ``>`` the client engine's path raised 42804, the error of an assignment)."""
    plain, enc = collated_pair
    for column, value in PARAMETERS:
        sql = f"SELECT id FROM t WHERE {column} {operator} %s ORDER BY id"
        assert outcome(enc, sql, (value,)) == outcome(plain, sql, (value,)), (sql, value)


def test_money_compared_with_numbers(
    collated_pair: Pair,
) -> None:
    """money has operators with money alone: a number compared with it is 42883 (a
    numeric was compared, an integer raised 42804)."""
    plain, enc = collated_pair
    for conn in collated_pair:
        conn.execute("CREATE TABLE m (id int PRIMARY KEY, mo money)")
        conn.execute("INSERT INTO m VALUES (1, '1.50'), (2, '-3')")
    for value in (1, 2**40, 1.5, Decimal("1.50"), "1.50"):
        for operator in ("=", ">"):
            sql = f"SELECT id FROM m WHERE mo {operator} %s ORDER BY id"
            assert outcome(enc, sql, (value,)) == outcome(plain, sql, (value,)), (sql, value)


def test_money_arithmetic_with_numbers(collated_pair: Pair) -> None:
    """money + / - a number is 42883 in PostgreSQL, on an empty table too (the client
    answered it, or read the money's text as a number: 22P02); money's own arithmetic is
    refused."""
    plain, enc = collated_pair
    for conn in collated_pair:
        conn.execute("CREATE TABLE m (id int PRIMARY KEY, mo money)")
    statements = ["SELECT id, mo + 1 FROM m", "SELECT id, 1.5 - mo FROM m"]
    for sql in statements:
        assert outcome(enc, sql) == outcome(plain, sql) == ("error", "42883"), sql
    enc.execute("INSERT INTO m VALUES (1, '1.50')")
    for sql in statements:
        assert outcome(enc, sql) == ("error", "42883"), sql
    assert outcome(enc, "SELECT mo + mo FROM m") == ("error", "0A000")
