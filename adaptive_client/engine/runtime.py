"""The client engine of split execution: an in-process DuckDB per thread, with the
functions that give PostgreSQL's semantics where DuckDB's differ, loaded with the
decrypted rows of a statement's server fetches (see compile/residual.py)."""

from __future__ import annotations

import contextlib
import math
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal, InvalidOperation, localcontext
from typing import Any, Final

import duckdb
from psycopg import errors as pg_errors
from sqlglot import exp

from ..errors import CollationUnavailable, UnsupportedQuery
from ..values import datetime_output, far_datetime, text_output
from ..values.collation import CaseMapping, Collation, collation_key
from ..values.datetime_input import date2j, j2date
from ..values.encodings import Infinite, single_of
from ..values.far_datetime import PgDate, PgTimestamp
from . import date_udfs, format_udf, scalar_udfs, text_casts
from .markers import REFUSAL_MARKER
from .numeric import float8_in, int_in, numeric_div, numeric_in
from .order_bytes import key_bytes
from .to_char import to_char

# The scale of a numeric quotient computed inside the client engine: PostgreSQL's
# (at least 16 significant digits) fits for quotients from 1e-8 to 1e14; others are
# refused at run time rather than rounded differently.
QUOTIENT_SCALE = 24


def pg_quotient(a: str, b: str) -> Decimal:
    """``a / b`` as PostgreSQL's numeric division gives it, if DECIMAL(38, 24) holds it."""
    x, y = Decimal(a), Decimal(b)
    if y == 0:
        raise ZeroDivisionError("division by zero")
    q = numeric_div(x, y)
    step = Decimal(1).scaleb(-QUOTIENT_SCALE)
    with localcontext() as ctx:  # (the default 28 digits cannot quantize every quotient)
        ctx.prec = 2000
        exact = q == q.quantize(step)
    if not exact or abs(q) >= Decimal(10) ** (38 - QUOTIENT_SCALE):
        raise ValueError("a numeric quotient beyond the client engine's DECIMAL(38,24)")
    return q


# NaN: above +Infinity (whose key it extends), equal only to itself, as PostgreSQL
# compares numerics
_NAN_KEY: Final = key_bytes(Decimal("Infinity")) + b"\xff"


def numeric_key(text: str) -> bytes:
    """The order key of ``text::numeric`` (engine/numeric_keys.py): its bytes' order is
    the numerics' order, whatever their size (22P02 where numeric_in refuses the text)."""
    value = numeric_in(text)
    return _NAN_KEY if value.is_nan() else key_bytes(value)


def numeric_text_sum(texts: list[str | None]) -> str | None:
    """``sum(text::numeric)`` as PostgreSQL's numeric sum gives it, as text: exact, at
    the largest display scale of its values (NULL where none is given; NaN beside any
    value, as +Infinity beside -Infinity)."""
    values = [numeric_in(t) for t in texts if t is not None]
    if not values:
        return None
    with localcontext() as ctx:
        ctx.prec = 2000
        ctx.traps[InvalidOperation] = False
        total = sum(values, Decimal(0))
    if total.is_nan():
        return "NaN"
    return format(total, "f") if total.is_finite() else str(total)


# boolin's words: each may be given by a prefix of at least this many characters
_BOOL_WORDS: Final = {"true": (True, 1), "false": (False, 1), "yes": (True, 1),
                      "no": (False, 1), "on": (True, 2), "off": (False, 2),
                      "1": (True, 1), "0": (False, 1)}  # fmt: skip


def pg_bool_in(text: str) -> bool:
    """``text::boolean`` as PostgreSQL's boolin reads it: spaces around, any case, a
    word's prefix (``'t'``, ``'ye'``, ``'of'``); anything else raises 22P02."""
    word = text.strip(" \t\n\r\v\f").lower()
    for full, (value, shortest) in _BOOL_WORDS.items():
        if shortest <= len(word) <= len(full) and full.startswith(word):
            return value
    raise pg_errors.InvalidTextRepresentation(f'invalid input syntax for type boolean: "{text}"')


_LOWER = {i: i + 32 for i in range(ord("A"), ord("Z") + 1)}
_UPPER = {i + 32: i for i in range(ord("A"), ord("Z") + 1)}


def pg_lower(s: str) -> str:
    """lower() under the C ctype: ASCII letters only."""
    return s.translate(_LOWER)


def pg_upper(s: str) -> str:
    return s.translate(_UPPER)


def pg_substr_from(s: str, start: int) -> str:
    """substr(s, start) as PostgreSQL computes it."""
    return s[max(start, 1) - 1 :]


def pg_substr(s: str, start: int, length: int) -> str:
    """substr(s, start, length) as PostgreSQL computes it (positions before 1 count)."""
    if length < 0:
        raise ValueError("negative substring length not allowed")
    end = start + length
    first = max(start, 1)
    return s[first - 1 : end - 1] if end > first else ""


def decimal_scale(duck: str) -> int:
    """The scale of a client engine type ``DECIMAL(p,s)``."""
    return int(duck[len("DECIMAL(") : -1].split(",")[1])


def storage_type(duck: str) -> str:
    """The DuckDB column type of a :func:`duck_type` (char(n) is held as VARCHAR)."""
    return "VARCHAR" if duck.startswith("CHAR(") else duck


def refusal(what: str, node: Any = None) -> UnsupportedQuery:
    """The refusal of ``what`` in a statement the client engine would evaluate, naming
    the statement's part ``node`` (cut to 80 characters)."""
    text = ""
    if isinstance(node, exp.Expression):
        sql = node.sql("postgres")
        text = f" in `{sql[:77]}...`" if len(sql) > 80 else f" in `{sql}`"
    return UnsupportedQuery(f"not supported in a client-evaluated query: {what}{text}", what)


_ENGINES = threading.local()


def _engine() -> duckdb.DuckDBPyConnection:
    """This thread's in-memory DuckDB with the pg_* functions (made once: making one
    costs about a tenth of a second, most of a small statement's time)."""
    con: duckdb.DuckDBPyConnection | None = getattr(_ENGINES, "con", None)
    if con is not None:
        return con
    from duckdb.func import FunctionNullHandling
    from duckdb.sqltypes import BIGINT, BLOB, BOOLEAN, DATE, DOUBLE, INTEGER, TIMESTAMP, VARCHAR

    con = duckdb.connect(":memory:")
    # NULLs last whatever the direction: the order sqlglot assumes of DuckDB when it
    # spells out PostgreSQL's (first when descending) on every ORDER BY it writes
    con.execute("SET default_null_order = 'nulls_last'")
    # a constant in an aggregate's or a window's ORDER BY orders nothing, as in
    # PostgreSQL (one in a statement's own ORDER BY is refused before: compile/positions.py)
    con.execute("SET order_by_non_integer_literal = true")
    # the expression rewriter moves constants across a comparison (``i + 1 > 0`` becomes
    # ``i > -1``): an integer overflow PostgreSQL raises would be answered instead
    con.execute("SET disabled_optimizers = 'expression_rewriter'")
    con.create_function(
        "pg_numeric_div",
        pg_quotient,
        [VARCHAR, VARCHAR],
        duckdb.decimal_type(38, QUOTIENT_SCALE),
    )
    con.create_function("pg_numeric_key", numeric_key, [VARCHAR], BLOB)
    con.create_function("pg_bool_in", pg_bool_in, [VARCHAR], BOOLEAN)
    con.create_function(
        "pg_numeric_text_sum", numeric_text_sum, [duckdb.list_type(VARCHAR)], VARCHAR
    )
    con.create_function("pg_substr2", pg_substr_from, [VARCHAR, BIGINT], VARCHAR)
    con.create_function("pg_substr3", pg_substr, [VARCHAR, BIGINT, BIGINT], VARCHAR)
    con.create_function("pg_reverse", _reverse, [VARCHAR], VARCHAR)
    con.create_function("pg_rint", _rint, [DOUBLE], DOUBLE)
    con.create_function(
        "pg_float_low_exponent",
        float_low_exponent,
        [DOUBLE],
        INTEGER,
        null_handling=FunctionNullHandling.SPECIAL,  # (zero has no lowest set bit: NULL)
    )
    con.create_function("pg_int_in", int_in, [VARCHAR, BIGINT], BIGINT)
    con.create_function("pg_shift", pg_shift, [BIGINT, BIGINT, INTEGER, BOOLEAN], BIGINT)
    con.create_function("pg_date_text", _date_text, [DATE, VARCHAR], VARCHAR)
    con.create_function("pg_float8_text", _float8_text, [VARCHAR], VARCHAR)
    con.create_function("pg_float8_out", text_output.float8_text, [DOUBLE, INTEGER], VARCHAR)
    con.create_function("pg_float4_out", text_output.float4_text, [DOUBLE, INTEGER], VARCHAR)
    scalar_udfs.register(con)
    date_udfs.register(con)
    format_udf.register(con)
    con.create_function("pg_date_in", text_casts.date_in, [VARCHAR, VARCHAR], VARCHAR)
    con.create_function("pg_timestamp_in", text_casts.timestamp_in, [VARCHAR, VARCHAR], VARCHAR)
    for macro in (*_FLOAT8_MACROS, *_FLOAT8_FUNCTION_MACROS, _INTERVAL_OUT_MACRO):
        con.execute(macro)
    con.create_function(
        "pg_to_char",
        to_char,
        [TIMESTAMP, VARCHAR],
        VARCHAR,
        null_handling=FunctionNullHandling.SPECIAL,  # (an empty format gives NULL)
    )
    _ENGINES.con = con
    _ENGINES.statement_functions = {}
    return con


# PostgreSQL's float8 operators (float.h) as macros of DuckDB's: an infinite result of
# finite operands is an overflow; a zero product or quotient of non-zero finite operands
# an underflow (both 22003); a zero divisor 22012 unless the dividend is NaN.  Macros, not
# Python functions: a Python function's NaN reaches DuckDB as NULL.
# An interval as psycopg loads PostgreSQL's: its text's years, months and days as
# 365, 30 and 1 days (PostgreSQL prints months / 12 years and months % 12 months), its
# time as is -- DuckDB's own conversion counts every month 30 days.  The result has no
# months, so that DuckDB's conversion to a timedelta is then exact.
_INTERVAL_OUT_MACRO: Final = (
    "CREATE MACRO pg_interval_out(iv) AS to_days(CAST(365 * datepart('year', iv) "
    "+ 30 * datepart('month', iv) + datepart('day', iv) AS INTEGER)) "
    "+ to_microseconds(CAST(CAST(datepart('hour', iv) AS BIGINT) * 3600000000 "
    "+ CAST(datepart('minute', iv) AS BIGINT) * 60000000 "
    "+ CAST(datepart('microseconds', iv) AS BIGINT) AS BIGINT))"
)

# float.c's dsqrt, dcbrt, dexp, dlog1 and dlog10: NaN through, PostgreSQL's errors
_FLOAT8_FUNCTION_MACROS: Final = [
    "CREATE MACRO pg_sqrt(a) AS CASE WHEN a < 0 "
    "THEN error('cannot take square root of a negative number') ELSE sqrt(a) END",
    "CREATE MACRO pg_cbrt(a) AS cbrt(a)",
    "CREATE MACRO pg_exp(a) AS CASE WHEN isnan(a) THEN a WHEN isinf(a) "
    "THEN (CASE WHEN a > 0 THEN a ELSE 0.0 END) WHEN isinf(exp(a)) "
    "THEN error('value out of range: overflow') WHEN exp(a) = 0 "
    "THEN error('value out of range: underflow') ELSE exp(a) END",
    "CREATE MACRO pg_ln(a) AS CASE WHEN a = 0 THEN error('cannot take logarithm of zero') "
    "WHEN a < 0 THEN error('cannot take logarithm of a negative number') ELSE ln(a) END",
    "CREATE MACRO pg_log10(a) AS CASE WHEN a = 0 THEN error('cannot take logarithm of zero') "
    "WHEN a < 0 THEN error('cannot take logarithm of a negative number') ELSE log10(a) END",
    # dpow: NaN's own rules, then the undefined and complex cases, then C's pow(), whose
    # infinite or zero result of finite operands is an overflow or an underflow
    "CREATE MACRO pg_power(a, b) AS CASE WHEN a IS NULL OR b IS NULL THEN NULL "
    "WHEN isnan(a) THEN (CASE WHEN isnan(b) OR b <> 0 THEN a ELSE 1.0 END) "
    "WHEN isnan(b) THEN (CASE WHEN a <> 1 THEN b ELSE 1.0 END) "
    "WHEN a = 0 AND b < 0 THEN error('zero raised to a negative power is undefined') "
    "WHEN a < 0 AND floor(b) <> b THEN "
    "error('a negative number raised to a non-integer power yields a complex result') "
    "WHEN isinf(pow(a, b)) AND NOT (isinf(a) OR isinf(b)) "
    "THEN error('value out of range: overflow') "
    "WHEN pow(a, b) = 0 AND a <> 0 AND NOT (isinf(a) OR isinf(b)) "
    "THEN error('value out of range: underflow') ELSE pow(a, b) END",
]

_FLOAT8_MACROS: Final = [
    "CREATE MACRO pg_float8_checked(r, a, b) AS CASE WHEN isinf(r) AND NOT (isinf(a) OR "
    "isinf(b)) THEN error('value out of range: overflow') ELSE r END",
    "CREATE MACRO pg_float8_add(a, b) AS pg_float8_checked(a + b, a, b)",
    "CREATE MACRO pg_float8_sub(a, b) AS pg_float8_checked(a - b, a, b)",
    "CREATE MACRO pg_float8_mul(a, b) AS CASE WHEN a * b = 0 AND NOT (a = 0 OR b = 0) "
    "THEN error('value out of range: underflow') ELSE pg_float8_checked(a * b, a, b) END",
    "CREATE MACRO pg_float8_div(a, b) AS CASE WHEN b = 0 AND NOT isnan(a) "
    "THEN error('division by zero') WHEN isinf(a / b) AND NOT isinf(a) "
    "THEN error('value out of range: overflow') WHEN a / b = 0 AND a <> 0 AND NOT isinf(b) "
    "THEN error('value out of range: underflow') ELSE a / b END",
]


def _float8_text(text: str) -> str:
    """``text::double precision`` as PostgreSQL reads it (numeric.float8_in), given back
    as text DuckDB's cast reads to the same double (NaN and infinities included)."""
    return repr(float8_in(text))


def pg_shift(a: int, count: int, width: int, left: bool) -> int:
    """PostgreSQL's ``<<`` / ``>>`` of an integer of ``width`` bytes, as its C does on
    x86-64: an int2 or int4 shifted as a 32-bit int and an int8 as a 64-bit one, the
    count modulo the bits, the result wrapped to them (then an int2's to 16 bits); a
    right shift keeps the sign."""
    bits = 64 if width == 8 else 32
    count &= bits - 1
    value = a << count if left else a >> count
    value &= (1 << bits) - 1
    if value >= 1 << (bits - 1):
        value -= 1 << bits
    if width == 2:
        value &= 0xFFFF
        value = value - 0x10000 if value >= 0x8000 else value
    return value


def float_low_exponent(x: float | None) -> int | None:
    """The exponent of ``x``'s lowest set bit (``x`` is an integer multiple of 2**it);
    None for NULL, zero and the special values."""
    if x is None or x == 0 or not math.isfinite(x):
        return None
    n, d = x.as_integer_ratio()
    n = abs(n)
    return (n & -n).bit_length() - d.bit_length()


def _rint(x: float) -> float:
    """PostgreSQL's round() of a double precision: rint(), half to even, the sign kept."""
    if not math.isfinite(x):
        return x
    return math.copysign(float(round(x)), x)


def _reverse(text: str) -> str:
    """PostgreSQL's reverse(): code points in reverse order."""
    return text[::-1]


class _Refusals:
    """Where this thread's collation key functions record the refusal they raised: the
    running statement's list (set by :func:`engine` for each statement), so that the
    functions themselves stay registered from one statement to the next."""

    current: list[CollationUnavailable]

    def __init__(self) -> None:
        self.current = []


def _key_function(coll: Collation) -> Callable[[str], bytes]:
    """This thread's function giving ``coll``'s keys (the same one for every statement)."""
    made: dict[Collation, Callable[[str], bytes]] = _ENGINES.__dict__.setdefault("keys", {})
    found = made.get(coll)
    if found is None:
        box: _Refusals = _ENGINES.__dict__.setdefault("refusals", _Refusals())

        def key(text: str) -> bytes:
            try:
                return collation_key(coll, text)
            except CollationUnavailable as exc:
                box.current.append(exc)  # raised as itself, not as DuckDB's error
                raise

        found = made[coll] = key
    return found


def engine(
    tables: Sequence[tuple[str, list[tuple[str, str]]]],
    keys: Mapping[str, Collation] | None = None,
    refusals: list[CollationUnavailable] | None = None,
    case_mapping: CaseMapping | None = None,
    row_functions: Sequence[tuple[str, Callable[..., Any], list[str], str, bool]] = (),
) -> duckdb.DuckDBPyConnection:
    """The client engine with the statement's tables (empty) and its functions: each of
    ``keys`` (``pg_collation_key``, ``pg_collation_key_<n>``) gives the collation key of
    a string under its collation (a string without one is refused: the refusal is
    appended to ``refusals``); ``pg_lower`` / ``pg_upper`` map case as ``case_mapping``
    does (ASCII only without one, the C ctype); ``row_functions``: the statement's calls
    of jsonb and array functions (engine/row_calls.py: name, function, parameter and
    result types, whether NULL arguments reach it).  :func:`release` drops the tables."""
    from duckdb.func import FunctionNullHandling
    from duckdb.sqltypes import BLOB, VARCHAR

    if refusals is None:
        refusals = []
    _ENGINES.__dict__.setdefault("refusals", _Refusals()).current = refusals
    con = _engine()
    mapping = case_mapping or CaseMapping("ascii")
    functions: list[tuple[str, Callable[..., Any], list[Any], Any, bool]] = [
        ("pg_lower", mapping.lower, [VARCHAR], VARCHAR, False),
        ("pg_upper", mapping.upper, [VARCHAR], VARCHAR, False),
        ("pg_initcap", mapping.title, [VARCHAR], VARCHAR, False),
    ]
    for function, coll in (keys or {}).items():
        functions.append((function, _key_function(coll), [VARCHAR], BLOB, False))
    for name, fn, params, result, with_nulls in row_functions:
        types = [duckdb.sqltype(p) for p in params]
        functions.append((name, fn, types, duckdb.sqltype(result), with_nulls))
    # each function as registered: kept from one statement to the next while the same
    # (registering costs about a millisecond a statement)
    wanted = {
        name: (fn, tuple(str(a) for a in args), str(result), with_nulls)
        for name, fn, args, result, with_nulls in functions
    }
    for attempt in (1, 2):
        try:
            registered: dict[str, Any] = getattr(_ENGINES, "statement_functions", {})
            for name, spec in registered.items():  # the previous statement's, if others
                if wanted.get(name) != spec:
                    con.remove_function(name)
            _ENGINES.statement_functions = {
                n: spec for n, spec in registered.items() if wanted.get(n) == spec
            }
            for name, fn, args, result, with_nulls in functions:
                if _ENGINES.statement_functions.get(name) == wanted[name]:
                    continue
                con.create_function(
                    name,
                    fn,
                    args,
                    result,
                    null_handling=(
                        FunctionNullHandling.SPECIAL if with_nulls else FunctionNullHandling.DEFAULT
                    ),
                )
                _ENGINES.statement_functions[name] = wanted[name]
            for name, cols in tables:
                defs = ", ".join(f'"{c}" {storage_type(t)}' for c, t in cols)
                con.execute(f'CREATE OR REPLACE TABLE "{name}" ({defs})')
            return con
        except duckdb.Error:
            # left unusable by a statement that failed inside it (e.g. a refusal raised
            # from a function mid-query): this thread gets a fresh engine
            if attempt == 2:
                raise
            _discard(con)
            con = _engine()
    raise AssertionError("unreachable")


def _discard(con: duckdb.DuckDBPyConnection) -> None:
    _ENGINES.con = None
    _ENGINES.statement_functions = {}
    with contextlib.suppress(duckdb.Error):
        con.close()


def release(
    con: duckdb.DuckDBPyConnection, tables: Sequence[tuple[str, list[tuple[str, str]]]]
) -> None:
    """Drop the statement's tables (their rows are the decrypted data)."""
    try:
        for name, _ in tables:
            con.execute(f'DROP TABLE IF EXISTS "{name}"')
    except duckdb.Error:  # the engine is unusable: the next statement makes another
        _ENGINES.con = None
        release(con, tables)


def load(
    con: duckdb.DuckDBPyConnection,
    name: str,
    cols: list[tuple[str, str]],
    columns: list[list[Any]],
) -> bool:
    """Insert the decrypted values, given a list per column.

    Columns of strings and bytes (text, ciphertexts carried undecrypted, numerics and
    dates as text) are handed to the engine as numpy object arrays, which it scans
    several times faster than it converts a list parameter (38,000 rows of seven
    ciphertexts: 0.2 s against 0.6 s); the others as one list parameter each (a NaN
    stays a NaN there), joined to the arrays by position.

    Whether an infinite date or timestamp, or a date outside Python's years, was loaded:
    the engine compares them as PostgreSQL does, but gives them back as the last or
    first day of year 9999 / 1, or as text."""
    if not columns or not columns[0]:
        return False
    infinite = False
    columns = list(columns)
    arrays: dict[str, Any] = {}
    listed: list[list[Any]] = []
    unnested: list[str] = []
    items = []
    for i, (_, t) in enumerate(cols):
        if t.startswith("CHAR("):  # char(n) held without its padding
            columns[i] = [None if v is None else v.rstrip(" ") for v in columns[i]]
        if t == "FLOAT":  # a real as its float4, exactly (not the double rounded again)
            columns[i] = [None if v is None else single_of(v) for v in columns[i]]
        if t.startswith("DECIMAL") or t in ("DATE", "TIMESTAMP"):
            # as text, parsed by the engine: several times faster than its conversion
            # of Python Decimal and date objects, and as exact
            # (each distinct value converted once: a fetched column repeats values --
            # quantities, discounts, dates; equal numerics of different scales share a
            # text, which the cast to the column's fixed scale makes the same value)
            texts: dict[Any, str | None] = {
                v: None if v is None else _text(v) for v in dict.fromkeys(columns[i])
            }
            infinite = infinite or any(type(v) in (Infinite, PgDate) for v in texts)
            columns[i] = list(map(texts.__getitem__, columns[i]))
        if t.startswith(("DECIMAL", "CHAR(")) or t in ("DATE", "TIMESTAMP", "VARCHAR", "BLOB"):
            arrays[f"c{i}"] = _objects(columns[i])
            items.append(f"CAST(__v.c{i} AS {storage_type(t)})")
        else:
            listed.append(columns[i])
            unnested.append(f"unnest(${len(listed)}::{storage_type(t)}[]) AS c{i}")
            items.append(f"__u.c{i}")
    view = f"__load_{name}"
    if not arrays:
        con.execute(
            f'INSERT INTO "{name}" SELECT {", ".join(items)} '
            f"FROM (SELECT {', '.join(unnested)}) AS __u",
            listed,
        )
        return infinite
    con.register(view, arrays)
    try:
        if listed:
            con.execute(
                f'INSERT INTO "{name}" SELECT {", ".join(items)} FROM "{view}" AS __v '
                f"POSITIONAL JOIN (SELECT {', '.join(unnested)}) AS __u",
                listed,
            )
        else:
            con.execute(f'INSERT INTO "{name}" SELECT {", ".join(items)} FROM "{view}" AS __v')
    finally:
        con.unregister(view)
    return infinite


def _objects(values: list[Any]) -> Any:
    import numpy as np

    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


# a date or timestamp outside Python's years as the engine prints it: the date, its era,
# a timestamp's time of day (``0044-03-15 (BC)``, ``0001-12-31 (BC) 23:00:00``)
_FAR_TEXT = re.compile(r"(\d{4,})-(\d\d)-(\d\d)( \(BC\))?(?: (.+))?")


def far_date(text: str) -> tuple[int, str | None] | None:
    """The Julian day of a date or timestamp the engine gives as its text (outside
    Python's years), and a timestamp's time of day as written; None for other text."""
    m = _FAR_TEXT.fullmatch(text)
    if m is None:
        return None
    year = int(m[1])
    return date2j(1 - year if m[4] else year, int(m[2]), int(m[3])), m[5]


# a time of day of the engine's text of a timestamp outside Python's years
_CLOCK = re.compile(r"(\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?")


def far_value(text: str, timestamp: bool) -> PgDate | PgTimestamp:
    """A date or timestamp the engine gives as its text (outside Python's years) as the
    client holds it, a ``PgDate`` or ``PgTimestamp``."""
    read = far_date(text)
    clock = _CLOCK.fullmatch(read[1] or "00:00:00") if read is not None else None
    if read is None or clock is None:
        raise refusal(f"the engine's value {text!r}")
    if not timestamp:
        return PgDate(read[0])
    seconds = (int(clock[1]) * 60 + int(clock[2])) * 60 + int(clock[3])
    micros = seconds * 1_000_000 + int((clock[4] or "0").ljust(6, "0"))
    epoch = far_datetime.POSTGRES_EPOCH_JDATE
    return PgTimestamp((read[0] - epoch) * far_datetime.US_PER_DAY + micros, False)


def _date_text(value: Any, datestyle: str) -> str:
    """A date printed in the DateStyle; one outside Python's years comes from the engine
    as its own text (``0044-03-15 (BC)``, ``10000-01-01``)."""
    if isinstance(value, str):
        read = far_date(value)
        assert read is not None  # (the engine's own text of a date)
        return far_datetime.date_text(read[0], datestyle)
    return datetime_output.text(value, datestyle)


def _text(v: Any) -> str:
    """A numeric's, date's or timestamp's text as the engine reads it (the infinities
    as its words, which it reads as PostgreSQL's)."""
    if isinstance(v, Decimal):
        if not v.is_finite():  # (a numeric(p,s)'s NaN: the engine's DECIMAL has none)
            raise UnsupportedQuery(
                f"a numeric {v} in a client-evaluated query", "numeric NaN or infinity"
            )
        return format(v, "f")
    if isinstance(v, Infinite):
        return "infinity" if v.sign > 0 else "-infinity"
    if isinstance(v, PgDate):  # (a date outside Python's years: the engine holds it)
        year, month, day = j2date(v.julian)
        era = " (BC)" if year <= 0 else ""
        return f"{abs(year - 1) if year <= 0 else year:04d}-{month:02d}-{day:02d}{era}"
    if isinstance(v, PgTimestamp):
        raise UnsupportedQuery(
            "a timestamp outside years 1 to 9999 in a client-evaluated query", "timestamp range"
        )
    return str(v.isoformat())


# DuckDB's names of the integer types, and the smallest value of each: an overflow's
# message names the type by one or, where it shows only the operands (a division, abs),
# by the other -- the value that has no negation in its type
_INT_NAMES: Final = {"INT16": "smallint", "INT32": "integer", "INT64": "bigint"}
_INT_MINIMA: Final = {"-32768": "smallint", "-2147483648": "integer",
                      "-9223372036854775808": "bigint"}  # fmt: skip
_INT_TYPE: Final = re.compile(r"\bINT(16|32|64)\b")
_INT_VALUE: Final = re.compile(r"-\d+")
# a string DuckDB could not read as a value of a type: PostgreSQL's type name for it
_UNREADABLE: Final = re.compile(r"Could not convert string (['\"])(.*)\1 to (\w+)")
_READ_TYPES: Final = {
    **_INT_NAMES, "DOUBLE": "double precision", "FLOAT": "real", "BOOL": "boolean",
    "DECIMAL": "numeric", "INTERVAL": "interval",
}  # fmt: skip


# psycopg's errors the pg_* functions raise, by the class name DuckDB quotes

_UDF_ERRORS: Final[dict[str, type[pg_errors.Error]]] = {
    "InvalidTextRepresentation": pg_errors.InvalidTextRepresentation,
    "NumericValueOutOfRange": pg_errors.NumericValueOutOfRange,
    "ProgramLimitExceeded": pg_errors.ProgramLimitExceeded,
    "InvalidParameterValue": pg_errors.InvalidParameterValue,
    "InvalidDatetimeInput": pg_errors.InvalidDatetimeFormat,
    "DatetimeOutOfRange": pg_errors.DatetimeFieldOverflow,
    "DatetimeFieldOverflow": pg_errors.DatetimeFieldOverflow,
    "FeatureNotSupported": pg_errors.FeatureNotSupported,
    "SubstringError": pg_errors.SubstringError,
}

# DuckDB's binder errors that are PostgreSQL's own refusals of a statement, as
# PostgreSQL raises them (the statement is checked on the client engine's empty tables
# before anything is fetched)
_BINDER_ERRORS: Final[list[tuple[str, type[pg_errors.Error], str]]] = [
    ("aggregate function calls cannot be nested", pg_errors.GroupingError,
     "aggregate function calls cannot be nested"),
    ("WHERE clause cannot contain aggregates", pg_errors.GroupingError,
     "aggregate functions are not allowed in WHERE"),
    ("GROUP BY clause cannot contain aggregates", pg_errors.GroupingError,
     "aggregate functions are not allowed in GROUP BY"),
    ("must appear in the GROUP BY clause", pg_errors.GroupingError,
     "a column must appear in the GROUP BY clause or be used in an aggregate function"),
    ("Window functions are not supported here", pg_errors.WrongObjectType,
     "window function call requires an OVER clause"),
]  # fmt: skip


# DuckDB's binder on an operator of two string literals, which PostgreSQL cannot choose
# an operator for either (42725)
_AMBIGUOUS: Final = re.compile(
    r'Could not choose a best candidate function for the function call "([^\w\s(]+)'
    r'\(STRING_LITERAL, STRING_LITERAL\)"'
)


def _integer_overflow(msg: str, destination: bool) -> str:
    """PostgreSQL's message for an integer overflow DuckDB reported in ``msg``: the
    type it names (the cast's destination for a conversion), or else the one whose
    smallest value overflowed; bigint where neither is shown (the widest, as the
    client engine evaluates integer arithmetic in the type PostgreSQL gives it)."""
    names = _INT_TYPE.findall(msg.split("destination type")[-1] if destination else msg)
    if names:
        return f"{_INT_NAMES['INT' + names[-1]]} out of range"
    for value in _INT_VALUE.findall(msg):
        if value in _INT_MINIMA:
            return f"{_INT_MINIMA[value]} out of range"
    return "bigint out of range"


def translate(exc: duckdb.Error) -> Exception:
    """A DuckDB error as the psycopg error PostgreSQL raises for the same cause, or a
    typed refusal."""
    msg = str(exc)
    if "division by zero" in msg.lower():
        return pg_errors.DivisionByZero("division by zero")
    if "negative substring length" in msg:
        return pg_errors.SubstringError("negative substring length not allowed")
    for marker, error in _UDF_ERRORS.items():
        # an error a pg_* function raised as PostgreSQL's: DuckDB's message ends with it
        at = msg.find(f"{marker}: ")
        if at >= 0:
            return error(msg[at + len(marker) + 2 :].strip())
    at = msg.find(REFUSAL_MARKER)
    if at >= 0:  # a refusal the statement computes (error() of a reason)
        reason = msg[at + len(REFUSAL_MARKER) :].strip()
        return UnsupportedQuery(f"not supported in a client-evaluated query: {reason}", reason)
    for reason in (
        "cannot take square root of a negative number",
        "zero raised to a negative power is undefined",
        "a negative number raised to a non-integer power yields a complex result",
    ):
        if reason in msg:
            return pg_errors.InvalidArgumentForPowerFunction(reason)
    for reason in ("cannot take logarithm of zero", "cannot take logarithm of a negative number"):
        if reason in msg:
            return pg_errors.InvalidArgumentForLogarithm(reason)
    for reason in ("value out of range: overflow", "value out of range: underflow"):
        if reason in msg:  # the pg_float8_* macros'
            return pg_errors.NumericValueOutOfRange(reason)
    if isinstance(exc, duckdb.OutOfRangeException) and "Overflow" in msg and "DECIMAL" not in msg:
        return pg_errors.NumericValueOutOfRange(_integer_overflow(msg, destination=False))
    if isinstance(exc, duckdb.ConversionException) and "Failed to cast decimal value" in msg:
        return pg_errors.NumericValueOutOfRange(_integer_overflow(msg, destination=True))
    if (
        isinstance(exc, duckdb.ConversionException)
        and "out of range for the destination type" in msg
        and _INT_TYPE.search(msg.split("destination type")[-1])
    ):
        return pg_errors.NumericValueOutOfRange(_integer_overflow(msg, destination=True))
    if isinstance(exc, duckdb.ConversionException) and "to type DECIMAL" in msg:
        return pg_errors.NumericValueOutOfRange("numeric field overflow")
    unreadable = _UNREADABLE.search(msg) if isinstance(exc, duckdb.ConversionException) else None
    if unreadable is not None and unreadable.group(3) in _READ_TYPES:
        error = (
            pg_errors.InvalidDatetimeFormat
            if unreadable.group(3) == "INTERVAL"
            else pg_errors.InvalidTextRepresentation
        )
        return error(
            f"invalid input syntax for type {_READ_TYPES[unreadable.group(3)]}: "
            f'"{unreadable.group(2)}"'
        )
    if "Invalid RANGE PRECEDING value" in msg or "Invalid RANGE FOLLOWING value" in msg:
        return pg_errors.InvalidPrecedingOrFollowingSize(
            "invalid preceding or following size in window function"
        )
    if isinstance(exc, duckdb.BinderException):
        ambiguous = _AMBIGUOUS.search(msg)
        if ambiguous is not None:  # ('a' - 'b': both of unknown type)
            return pg_errors.AmbiguousFunction(
                f"operator is not unique: unknown {ambiguous.group(1)} unknown"
            )
        for pattern, error, message in _BINDER_ERRORS:
            if pattern in msg:
                return error(message)
    if isinstance(exc, duckdb.InvalidInputException) and "More than one row" in msg:
        return pg_errors.CardinalityViolation(
            "more than one row returned by a subquery used as an expression"
        )
    return UnsupportedQuery(
        "the client engine could not evaluate the statement: " + msg.splitlines()[0][:200].rstrip(),
        "client evaluation",
    )
