"""The strict-SQL differential suite's schema, rows and statements: invalid and edge
statements -- syntax errors of many kinds, overflow of each integer type (over encrypted
columns, of constants, in INSERT and UPDATE values), division by zero of integers,
numerics and floats, bad casts and invalid input, float special values, numeric scales,
aggregate forms PostgreSQL rejects.  PostgreSQL decides what each one does: the suite
(test_strict_sql.py) runs it on a plain database and through the client, and compares.

Statements are named ``family-n``; each family's statements are built from the types'
limits, so that every integer type meets every operator at its edge.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

DDL = [
    """CREATE TABLE nums (
        id integer PRIMARY KEY,
        s smallint,
        i integer,
        b bigint,
        n numeric(12,2),
        f double precision,
        x text,
        d date,
        ok boolean
    )""",
    "CREATE TABLE ins (s smallint, i integer, b bigint, n numeric(5,2), f double precision)",
]

# every column in all the onions its type supports, at their strongest layers
CONFIG: dict[str, Any] = {"defaults": {"sum": False, "search": False}}

S_MAX, I_MAX, B_MAX = 2**15 - 1, 2**31 - 1, 2**63 - 1
S_MIN, I_MIN, B_MIN = -(2**15), -(2**31), -(2**63)

ROWS: dict[str, list[tuple[Any, ...]]] = {
    "nums": [
        (1, S_MAX, I_MAX, B_MAX, Decimal("9999999999.99"), 1e300, "12", None, True),
        (2, S_MIN, I_MIN, B_MIN, Decimal("-3.25"), -1e-300, "abc", None, False),
        (3, 0, 0, 0, Decimal("0.00"), 0.0, " 7 ", None, None),
        (4, 7, 20, 200, Decimal("10.50"), 2.5, "1.5", None, True),
        (5, None, None, None, None, None, None, None, None),
        (6, -3, -7, -9, Decimal("-7.50"), -0.5, "-12", None, False),
    ],
    "ins": [(1, 1, 1, Decimal("1.00"), 1.0)],
}


@dataclass(frozen=True)
class S:
    """One statement: its SQL, its parameters, whether its rows come in an order."""

    sql: str
    params: tuple[Any, ...] | None = None
    ordered: bool = True


def _family(name: str, statements: list[S]) -> list[tuple[str, S]]:
    return [(f"{name}-{k}", s) for k, s in enumerate(statements, 1)]


# -- syntax errors (and a few statements of the same shapes that are valid) --------------

_SYNTAX = [
    "SELECT id, FROM nums",
    "SELECT id,, i FROM nums",
    "SELECT , id FROM nums",
    "SELECT id i s FROM nums",
    "SELECT id FROM nums,",
    "SELECT id FROM nums WHERE",
    "SELECT id FROM nums WHERE i =",
    "SELECT id FROM nums WHERE i = = 1",
    "SELECT id FROM nums WHERE i IN ()",
    "SELECT id FROM nums WHERE i IN (1,)",
    "SELECT id FROM nums WHERE i IN (1,,2)",
    "SELECT id FROM nums WHERE i BETWEEN 1",
    "SELECT id FROM nums WHERE i BETWEEN AND 5",
    "SELECT id FROM nums GROUP BY",
    "SELECT id FROM nums GROUP BY id,",
    "SELECT id FROM nums ORDER BY",
    "SELECT id FROM nums ORDER BY id,",
    "SELECT id FROM nums ORDER BY id DESC ASC",
    "SELECT id FROM nums LIMIT",
    "SELECT id FROM nums LIMIT 1 LIMIT 2",
    "SELECT id FROM nums OFFSET",
    "SELECT id FROM nums HAVING",
    "SELECT id FROM WHERE i = 1",
    "SELECT id FROM nums nn mm",
    "SELECT id FROM nums JOIN ins",
    "SELECT id FROM nums JOIN ins WHERE id = 1",
    "SELECT id FROM nums LEFT JOIN ins ON",
    "SELECT id FROM (SELECT id FROM nums)",
    "SELECT id FROM nums WHERE (i = 1",
    "SELECT id FROM nums WHERE i = 1)",
    "SELECT (id FROM nums",
    "SELECT id + FROM nums",
    "SELECT id * * 2 FROM nums",
    "SELECT id AS FROM nums",
    "SELECT id AS",
    "SELECT 1 +",
    "SELECT f(i,) FROM nums",
    "SELECT abs(, i) FROM nums",
    "SELECT count(DISTINCT *) FROM nums",
    "SELECT ALL DISTINCT id FROM nums",
    "SELECT id FROM nums WHERE x = 'abc",
    'SELECT "id FROM nums',
    "SELECT $$abc FROM nums",
    "SELECT id /* no end FROM nums",
    "SELEC id FROM nums",
    "SELECT id FORM nums",
    "SELECT id FROM nums WHER i = 1",
    "SELECT id FROM nums WHERE i = 1 ORDER id",
    "SELECT id FROM nums GROUP id",
    "SELECT CASE WHEN i > 0 THEN 1 FROM nums",
    "SELECT CASE i WHEN THEN 1 END FROM nums",
    "SELECT CAST(i AS) FROM nums",
    "SELECT CAST(i integer) FROM nums",
    "SELECT i:: FROM nums",
    "SELECT id FROM nums UNION",
    "SELECT id FROM nums UNION SELECT",
    "SELECT id FROM nums WHERE EXISTS",
    "SELECT id FROM nums WHERE i NOT",
    "SELECT id FROM nums WHERE i IS",
    "SELECT id FROM nums WHERE x LIKE",
    "INSERT INTO ins VALUES (1,)",
    "INSERT INTO ins VALUES ()",
    "INSERT INTO ins (s,) VALUES (1)",
    "INSERT INTO ins (s) VALUES",
    "INSERT INTO ins (s) VALUES (1),",
    "INSERT ins (s) VALUES (1)",
    "UPDATE ins SET s = 1,",
    "UPDATE ins SET WHERE s = 1",
    "UPDATE ins SET s = WHERE s = 1",
    "UPDATE SET s = 1",
    "DELETE ins",
    "DELETE FROM ins WHERE",
    "DELETE FROM WHERE s = 1",
    "SELECT id FROM nums WHERE i = ANY()",
    "SELECT array[1,] FROM nums",
    "SELECT id FROM nums FETCH FIRST ROWS",
    # valid statements of the same shapes: the rules must not refuse them
    "SELECT FROM nums",
    "SELECT id AS from_ FROM nums ORDER BY 1",
    "SELECT left(x, 1), right(x, 1) FROM nums ORDER BY id",
    "SELECT id FROM nums CROSS JOIN ins ORDER BY id",
    "SELECT count(*) FROM nums WHERE i IN (1, 2)",
    "SELECT id FROM nums WHERE x = 'a,b,' OR x = ',' ORDER BY id",
    'SELECT id AS "from" FROM nums ORDER BY id',
    "SELECT id FROM (SELECT id FROM nums) AS q ORDER BY id",
    "SELECT id FROM nums -- a comment, with a comma,\n ORDER BY id",
    "SELECT id FROM nums /* a, comment */ ORDER BY id",
    "SELECT id FROM nums AS a JOIN nums AS b USING (id) ORDER BY id",
    "SELECT a.id FROM nums AS a NATURAL JOIN ins AS b ORDER BY 1",
]

SYNTAX = _family("syntax", [S(q) for q in _SYNTAX])


# -- integer overflow over encrypted columns ---------------------------------------------

_LIMITS = {"s": (S_MAX, S_MIN), "i": (I_MAX, I_MIN), "b": (B_MAX, B_MIN)}


def _overflow_columns() -> list[S]:
    out: list[S] = []
    for col, (high, _) in _LIMITS.items():
        for expr in (
            f"{col} + 1",
            f"{col} - 1",
            f"{col} * 2",
            f"{col} * -1",
            f"-{col}",
            f"{col} / -1",
            f"{col} % -1",
            f"abs({col})",
            f"{col} + {col}",
            f"{col} * {col}",
            f"{col} - {col}",
            f"{col} + {high}",
            f"{col} * 1000000000",
            f"{col} + 2147483647",
            f"{col}::smallint",
            f"{col}::integer",
            f"({col} + 0)::smallint",
            f"{col} + 1::smallint",
            f"{col} * 2::bigint",
        ):
            out.append(S(f"SELECT id, {expr} FROM nums ORDER BY id"))
            out.append(S(f"SELECT id FROM nums WHERE {expr} > 0 ORDER BY id"))
        # one row at a time: which rows overflow
        for row in (1, 2, 4):
            out.append(S(f"SELECT {col} + 1, {col} - 1, {col} * 3 FROM nums WHERE id = {row}"))
        out.append(S(f"SELECT max({col}) + 1 FROM nums"))
        out.append(S(f"SELECT min({col}) - 1 FROM nums"))
        out.append(S(f"SELECT sum({col}) FROM nums"))
        out.append(S(f"SELECT sum({col} * 2) FROM nums"))
        out.append(S(f"SELECT id FROM nums ORDER BY {col} + 1, id"))
    return out


OVERFLOW = _family("overflow", _overflow_columns())


# -- constants: overflow and typing of literals ------------------------------------------

_CONSTANTS = [
    "SELECT 2147483647 + 1",
    "SELECT -2147483648 - 1",
    "SELECT 2147483647 * 2",
    "SELECT -2147483648 / -1",
    "SELECT -2147483648 % -1",
    "SELECT (-2147483648)::integer / -1",
    "SELECT -2147483648::integer",
    "SELECT 32767::smallint + 1::smallint",
    "SELECT (-32768)::smallint * -1::smallint",
    "SELECT 32767::smallint + 1",
    "SELECT 9223372036854775807 + 1",
    "SELECT -9223372036854775808 - 1",
    "SELECT 9223372036854775807::bigint * 2",
    "SELECT 9223372036854775808",
    "SELECT 9223372036854775807 + 1.0",
    "SELECT 4611686018427387904 * 2",
    "SELECT 2147483648::integer",
    "SELECT 32768::smallint",
    "SELECT 9223372036854775808::bigint",
    "SELECT id, 2147483647 + 1 FROM nums ORDER BY id",
    "SELECT id, i + (2147483647 + 1) FROM nums ORDER BY id",
    "SELECT id, 32767::smallint + s FROM nums ORDER BY id",
    "SELECT id FROM nums WHERE i > 2147483647 + 1",
    "SELECT id FROM nums WHERE i > 2147483647 * 2 ORDER BY id",
    "SELECT id FROM nums WHERE b > 9223372036854775807 ORDER BY id",
    "SELECT id FROM nums WHERE i = 2147483648 ORDER BY id",
    "SELECT id FROM nums WHERE s = 32768 ORDER BY id",
    "SELECT id FROM nums WHERE s < -32769 ORDER BY id",
    "SELECT id, i + 1 FROM nums WHERE i < 2147483647 ORDER BY id",
    "SELECT id, s * 2 FROM nums WHERE s < 16000 AND s > -16000 ORDER BY id",
    "SELECT id, 1 + 1 FROM nums ORDER BY id",
    "SELECT id, 7 / 2, -7 / 2, 7 % -2, -7 % 2 FROM nums ORDER BY id",
]

CONSTANTS = _family("const", [S(q) for q in _CONSTANTS])


# -- INSERT and UPDATE values ------------------------------------------------------------

_WRITES = [
    S("INSERT INTO ins (s) VALUES (32768) RETURNING s"),
    S("INSERT INTO ins (s) VALUES (-32769) RETURNING s"),
    S("INSERT INTO ins (s) VALUES (32767) RETURNING s"),
    S("INSERT INTO ins (s) VALUES ('32768') RETURNING s"),
    S("INSERT INTO ins (s) VALUES (32767 + 1) RETURNING s"),
    S("INSERT INTO ins (s) VALUES (%s) RETURNING s", (32768,)),
    S("INSERT INTO ins (s) VALUES (%s) RETURNING s", (-32768,)),
    S("INSERT INTO ins (i) VALUES (2147483648) RETURNING i"),
    S("INSERT INTO ins (i) VALUES (-2147483649) RETURNING i"),
    S("INSERT INTO ins (i) VALUES (2147483647) RETURNING i"),
    S("INSERT INTO ins (i) VALUES ('2147483648') RETURNING i"),
    S("INSERT INTO ins (i) VALUES (2147483647 + 1) RETURNING i"),
    S("INSERT INTO ins (i) VALUES (%s) RETURNING i", (2**31,)),
    S("INSERT INTO ins (i) VALUES (%s) RETURNING i", (-(2**31),)),
    S("INSERT INTO ins (b) VALUES (9223372036854775808) RETURNING b"),
    S("INSERT INTO ins (b) VALUES (-9223372036854775809) RETURNING b"),
    S("INSERT INTO ins (b) VALUES (9223372036854775807) RETURNING b"),
    S("INSERT INTO ins (b) VALUES ('9223372036854775808') RETURNING b"),
    S("INSERT INTO ins (b) VALUES (%s) RETURNING b", (2**63,)),
    S("INSERT INTO ins (b) VALUES (%s) RETURNING b", (-(2**63),)),
    S("INSERT INTO ins (i) VALUES (2.5) RETURNING i"),
    S("INSERT INTO ins (i) VALUES (-2.5) RETURNING i"),
    S("INSERT INTO ins (i) VALUES ('2.5') RETURNING i"),
    S("INSERT INTO ins (i) VALUES ('abc') RETURNING i"),
    S("INSERT INTO ins (i) VALUES ('') RETURNING i"),
    S("INSERT INTO ins (i) VALUES (' 12 ') RETURNING i"),
    S("INSERT INTO ins (s) VALUES (1e5) RETURNING s"),
    S("INSERT INTO ins (i) VALUES (2147483647.5) RETURNING i"),
    S("INSERT INTO ins (n) VALUES (1000.00) RETURNING n"),
    S("INSERT INTO ins (n) VALUES (999.995) RETURNING n"),
    S("INSERT INTO ins (n) VALUES (999.994) RETURNING n"),
    S("INSERT INTO ins (n) VALUES ('abc') RETURNING n"),
    S("INSERT INTO ins (n) VALUES (%s) RETURNING n", (Decimal("1000"),)),
    S("INSERT INTO ins (n) VALUES (1.005) RETURNING n"),
    S("INSERT INTO ins (f) VALUES ('1e400') RETURNING f"),
    S("INSERT INTO ins (f) VALUES ('nan') RETURNING f"),
    S("INSERT INTO ins (f) VALUES ('-Infinity') RETURNING f"),
    S("INSERT INTO ins (f) VALUES ('abc') RETURNING f"),
    S("INSERT INTO ins (f) VALUES (1 / 0) RETURNING f"),
    S("INSERT INTO ins (i) VALUES (1 / 0) RETURNING i"),
    S("INSERT INTO ins (s, i) VALUES (1, 2), (32768, 3) RETURNING s, i"),
    S("UPDATE ins SET s = s + 32767 RETURNING s"),
    S("UPDATE ins SET i = i * 2147483647 RETURNING i"),
    S("UPDATE ins SET b = b + 9223372036854775807 RETURNING b"),
    S("UPDATE ins SET s = 32768 RETURNING s"),
    S("UPDATE ins SET i = %s RETURNING i", (2**31,)),
    S("UPDATE ins SET n = n * 1000 RETURNING n"),
    S("UPDATE ins SET i = i / 0 RETURNING i"),
    # without a column list the values fill the leading columns, the rest their defaults
    S("INSERT INTO ins VALUES (7, 8) RETURNING s, i, b, n, f"),
    S("INSERT INTO ins VALUES (7, 8), (9) RETURNING s"),
    S("INSERT INTO ins (s, i) VALUES (7) RETURNING s"),
    S("INSERT INTO ins VALUES (1, 2, 3, 4, 5, 6) RETURNING s"),
    S("INSERT INTO ins SELECT 10, 11 RETURNING s, i, b"),
    S("INSERT INTO ins SELECT 1, 2, 3, 4, 5, 6 RETURNING s"),
    S("INSERT INTO ins DEFAULT VALUES RETURNING s, i"),
    S("INSERT INTO ins VALUES"),
    S("SELECT s, i, b, n, f FROM ins ORDER BY s, i, b, n, f", ordered=True),
]

WRITES = _family("write", _WRITES)


# -- division by zero --------------------------------------------------------------------

_ZERO = [
    "SELECT id, i / 0 FROM nums ORDER BY id",
    "SELECT id, s / 0 FROM nums ORDER BY id",
    "SELECT id, b / 0 FROM nums ORDER BY id",
    "SELECT id, i % 0 FROM nums ORDER BY id",
    "SELECT id, b % 0 FROM nums ORDER BY id",
    "SELECT id, mod(i, 0) FROM nums ORDER BY id",
    "SELECT id, n / 0 FROM nums ORDER BY id",
    "SELECT id, n % 0 FROM nums ORDER BY id",
    "SELECT id, n / 0.0 FROM nums ORDER BY id",
    "SELECT id, f / 0 FROM nums ORDER BY id",
    "SELECT id, f / 0.0 FROM nums ORDER BY id",
    "SELECT id, i / (i - i) FROM nums ORDER BY id",
    "SELECT id, 100 / i FROM nums ORDER BY id",
    "SELECT id, 100 % s FROM nums ORDER BY id",
    "SELECT id, 1.5 / n FROM nums ORDER BY id",
    "SELECT id, 1.0 / f FROM nums ORDER BY id",
    "SELECT id FROM nums WHERE i / 0 > 1 ORDER BY id",
    "SELECT id FROM nums WHERE 100 / i > 1 ORDER BY id",
    "SELECT id FROM nums WHERE n / 0 > 1 ORDER BY id",
    "SELECT id FROM nums WHERE f / 0 > 1 ORDER BY id",
    "SELECT id FROM nums WHERE i % 0 = 1 ORDER BY id",
    "SELECT id, 100 / i FROM nums WHERE i <> 0 ORDER BY id",
    "SELECT id, 100 / nullif(i, 0) FROM nums ORDER BY id",
    "SELECT sum(i) / 0 FROM nums",
    "SELECT max(i) / min(s - s) FROM nums",
    "SELECT 1 / 0",
    "SELECT 1 % 0",
    "SELECT 1.0 / 0",
    "SELECT 1e0::float8 / 0",
    "SELECT 'nan'::float8 / 0",
]

ZERO = _family("zero", [S(q) for q in _ZERO])


# -- casts and input syntax --------------------------------------------------------------

_CASTS = [
    "SELECT 'abc'::integer",
    "SELECT ''::integer",
    "SELECT ' 12 '::integer",
    "SELECT '12.5'::integer",
    "SELECT '1e3'::integer",
    "SELECT '0x10'::integer",
    "SELECT '1_000'::integer",
    "SELECT '+12'::integer",
    "SELECT '32768'::smallint",
    "SELECT '-32769'::smallint",
    "SELECT '2147483648'::integer",
    "SELECT '9223372036854775808'::bigint",
    "SELECT 'abc'::numeric",
    "SELECT '1.5e3'::numeric",
    "SELECT 123.45::numeric(4,2)",
    "SELECT 12.345::numeric(4,2)",
    "SELECT 'abc'::float8",
    "SELECT '1e400'::float8",
    "SELECT '1e-400'::float8",
    "SELECT 'infinity'::float8",
    "SELECT 'abc'::boolean",
    "SELECT 'yes'::boolean",
    "SELECT 'abc'::date",
    "SELECT '2024-13-01'::date",
    "SELECT '2024-02-30'::date",
    "SELECT 2.5::integer, 3.5::integer, (-2.5)::integer",
    "SELECT 2.5::float8::integer, 3.5::float8::integer",
    "SELECT 1e10::float8::integer",
    "SELECT id, x::integer FROM nums ORDER BY id",
    "SELECT id, x::integer FROM nums WHERE id IN (1, 3, 6) ORDER BY id",
    "SELECT id, x::numeric FROM nums WHERE id IN (1, 3, 4) ORDER BY id",
    "SELECT id, x::float8 FROM nums ORDER BY id",
    "SELECT id, n::integer FROM nums ORDER BY id",
    "SELECT id, n::smallint FROM nums ORDER BY id",
    "SELECT id, n::numeric(4,1) FROM nums ORDER BY id",
    "SELECT id, f::integer FROM nums ORDER BY id",
    "SELECT id, f::numeric FROM nums WHERE id = 4",
    "SELECT id, b::integer FROM nums ORDER BY id",
    "SELECT id, i::smallint FROM nums WHERE id IN (3, 4, 6) ORDER BY id",
    "SELECT id FROM nums WHERE i = 'abc' ORDER BY id",
    "SELECT id FROM nums WHERE s = '40000' ORDER BY id",
    "SELECT id FROM nums WHERE i = '12.5' ORDER BY id",
    "SELECT id FROM nums WHERE b = '9223372036854775808' ORDER BY id",
    "SELECT id FROM nums WHERE n = 'abc' ORDER BY id",
    "SELECT id FROM nums WHERE f = 'abc' ORDER BY id",
    "SELECT id FROM nums WHERE d = '2024-13-01' ORDER BY id",
    "SELECT id FROM nums WHERE i = %s ORDER BY id",
    "SELECT id FROM nums WHERE s = %s ORDER BY id",
]

_CAST_PARAMS: dict[str, tuple[Any, ...]] = {
    "SELECT id FROM nums WHERE i = %s ORDER BY id": (2**40,),
    "SELECT id FROM nums WHERE s = %s ORDER BY id": (40000,),
}

CASTS = _family("cast", [S(q, _CAST_PARAMS.get(q)) for q in _CASTS])


# -- floats: special values, overflow, underflow -----------------------------------------

_FLOATS = [
    "SELECT id, f * f FROM nums ORDER BY id",
    "SELECT id, f * 10 FROM nums ORDER BY id",
    "SELECT id, f + 1e308 FROM nums ORDER BY id",
    "SELECT id, f / 1e-300 FROM nums ORDER BY id",
    "SELECT id, f * 1e-300 FROM nums ORDER BY id",
    "SELECT id, f - f FROM nums ORDER BY id",
    "SELECT id, f * 'nan'::float8 FROM nums ORDER BY id",
    "SELECT id, f + 'infinity'::float8 FROM nums ORDER BY id",
    "SELECT id, f * 'infinity'::float8 FROM nums ORDER BY id",
    "SELECT id FROM nums WHERE f * f > 1 ORDER BY id",
    "SELECT id FROM nums WHERE f * 10 > 1 ORDER BY id",
    "SELECT id FROM nums WHERE f + 'nan'::float8 > 0 ORDER BY id",
    "SELECT 'infinity'::float8 - 'infinity'::float8",
    "SELECT 'nan'::float8 = 'nan'::float8",
    "SELECT 1e308::float8 * 10",
    "SELECT 1e-308::float8 * 1e-308::float8",
    "SELECT id, f * 2 FROM nums WHERE id IN (3, 4, 6) ORDER BY id",
    "SELECT id, f + i FROM nums WHERE id IN (3, 4, 6) ORDER BY id",
    "SELECT id, f / 2 FROM nums WHERE id IN (3, 4, 6) ORDER BY id",
]

FLOATS = _family("float", [S(q) for q in _FLOATS])


# -- numerics: scales, truncation, rounding ----------------------------------------------

_NUMERICS = [
    "SELECT id, n + 1 FROM nums ORDER BY id",
    "SELECT id, n - 0.001 FROM nums ORDER BY id",
    "SELECT id, n * n FROM nums ORDER BY id",
    "SELECT id, n * 1.5 FROM nums ORDER BY id",
    "SELECT id, n * i FROM nums ORDER BY id",
    "SELECT id, n + b FROM nums ORDER BY id",
    "SELECT id, n / 3 FROM nums ORDER BY id",
    "SELECT id, n / 7.000 FROM nums ORDER BY id",
    "SELECT id, n % 3 FROM nums ORDER BY id",
    "SELECT id, n % 0.3 FROM nums ORDER BY id",
    "SELECT id, i / 3.0 FROM nums ORDER BY id",
    "SELECT id, round(n, 1) FROM nums ORDER BY id",
    "SELECT id, trunc(n, 1) FROM nums ORDER BY id",
    "SELECT id, -n FROM nums ORDER BY id",
    "SELECT id, abs(n) FROM nums ORDER BY id",
    "SELECT id FROM nums WHERE n * 2 > 1 ORDER BY id",
    "SELECT id FROM nums WHERE n / 3 > 1 ORDER BY id",
    "SELECT id FROM nums WHERE n % 3 = 1.5 ORDER BY id",
    "SELECT sum(n), avg(n) FROM nums",
    "SELECT avg(i), avg(s), avg(b) FROM nums",
    "SELECT id, i / 3, -i / 3, i % 3, -i % 3 FROM nums WHERE id IN (4, 6) ORDER BY id",
    "SELECT id, s / 2, s % 2, b / 7, b % 7 FROM nums WHERE id IN (4, 6) ORDER BY id",
    "SELECT 0.1 + 0.2, 1.10 * 2.0, 10.0 / 4, 10 / 4.0, 7.5 % 2",
]

NUMERICS = _family("numeric", [S(q) for q in _NUMERICS])


# -- aggregate forms PostgreSQL rejects --------------------------------------------------

_AGGREGATES = [
    "SELECT string_agg(x, ',') WITHIN GROUP (ORDER BY x) FROM nums",
    "SELECT count(*) WITHIN GROUP (ORDER BY i) FROM nums",
    "SELECT sum(i) WITHIN GROUP (ORDER BY i) FROM nums",
    "SELECT array_agg(i) WITHIN GROUP (ORDER BY i) FROM nums",
    "SELECT sum(i) OVER () WITHIN GROUP (ORDER BY i) FROM nums",
    "SELECT sum(sum(i)) FROM nums",
    "SELECT id FROM nums WHERE sum(i) > 0",
    "SELECT x FROM nums GROUP BY i",
    "SELECT max(i, s) FROM nums",
    "SELECT sum(*) FROM nums",
    "SELECT sum(x) FROM nums",
    "SELECT avg(x) FROM nums",
    "SELECT string_agg(x, ',' ORDER BY x) FROM nums",
    "SELECT sum(i) FILTER (WHERE i) FROM nums",
    "SELECT count(*) FROM nums GROUP BY sum(i)",
    "SELECT id FROM nums ORDER BY sum(i)",
    "SELECT row_number() FROM nums",
    "SELECT id, sum(i) FROM nums",
]

AGGREGATES = _family("agg", [S(q) for q in _AGGREGATES])


# -- conditions that are not booleans (and ones that are) ----------------------------------

_CONDITIONS = [
    "SELECT id FROM nums WHERE i ORDER BY id",
    "SELECT id FROM nums WHERE s ORDER BY id",
    "SELECT id FROM nums WHERE b ORDER BY id",
    "SELECT id FROM nums WHERE n ORDER BY id",
    "SELECT id FROM nums WHERE f ORDER BY id",
    "SELECT id FROM nums WHERE x ORDER BY id",
    "SELECT id FROM nums WHERE d ORDER BY id",
    "SELECT id FROM nums WHERE i + 1 ORDER BY id",
    "SELECT id FROM nums WHERE NOT i ORDER BY id",
    "SELECT id FROM nums WHERE i AND ok ORDER BY id",
    "SELECT id FROM nums WHERE ok OR x ORDER BY id",
    "SELECT count(*) FROM nums HAVING count(*)",
    "SELECT sum(i) FILTER (WHERE s) FROM nums",
    "SELECT id, CASE WHEN i THEN 1 END FROM nums ORDER BY id",
    "SELECT a.id FROM nums AS a JOIN nums AS b ON a.i ORDER BY 1",
    "SELECT id FROM nums WHERE ok ORDER BY id",
    "SELECT id FROM nums WHERE NOT ok ORDER BY id",
    "SELECT id FROM nums WHERE ok AND i > 0 ORDER BY id",
    "SELECT id, CASE i WHEN 20 THEN 'twenty' ELSE 'other' END FROM nums ORDER BY id",
    "SELECT id, CASE WHEN ok THEN i END FROM nums ORDER BY id",
    "SELECT count(*) FILTER (WHERE ok), count(*) FILTER (WHERE i > 0) FROM nums",
    "SELECT id FROM nums WHERE (i > 0) = ok ORDER BY id",
]

CONDITIONS = _family("bool", [S(q) for q in _CONDITIONS])


ALL: list[tuple[str, S]] = (
    SYNTAX
    + OVERFLOW
    + CONSTANTS
    + WRITES
    + ZERO
    + CASTS
    + FLOATS
    + NUMERICS
    + AGGREGATES
    + CONDITIONS
)
