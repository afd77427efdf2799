"""Encodings: SQL values ↔ the bytes (DET, RND) and integers (OPE, HOM) schemes take.

One :class:`Encoding` per column type (``encoding_for``).  ``coerce`` turns what an
application passes into the value PostgreSQL would store (and psycopg 3 would return);
the other methods map that canonical value to the schemes' plaintexts and back.

| SQL type            | onions            | OPE domain (``ope_bits``)                        |
|---------------------|-------------------|--------------------------------------------------|
| smallint            | Eq, Ord, Sum      | 16 bits: value + 2**15                           |
| integer             | Eq, Ord, Sum      | 32 bits: value + 2**31                           |
| bigint              | Eq, Ord, Sum      | 64 bits: value + 2**63                           |
| numeric(p,s)        | Eq, Ord, Sum      | value·10**s + 10**p, bits of 2·10**p             |
| numeric             | Eq                | none (no bound on digits; declare numeric(p,s))  |
| real                | Eq, Ord           | 32 bits: IEEE-754 bits, sign-flip order          |
| double precision    | Eq, Ord           | 64 bits: IEEE-754 bits, sign-flip order          |
| varchar/text/char   | Eq, Ord*, Search  | 64 bits: first 8 bytes (C) or primary weights    |
| date                | Eq, Ord           | 32 bits: Julian day + 1 (4714-11-24 BC is day 1) |
| timestamp(p)        | Eq, Ord           | 64 bits: µs since 4714-11-24 BC 00:00, plus one  |
| timestamptz(p)      | Eq, Ord           | 64 bits: the instant (UTC) so                    |
| time(p)             | Eq, Ord           | 40 bits: µs since midnight (to 24:00:00)         |
| uuid                | Eq, Ord*          | 64 bits: the first 8 of its 16 bytes             |
| bytea               | Eq, Ord*          | 64 bits: the first 8 bytes                       |
| boolean             | Eq, Ord           | 8 bits: false 0, true 1                          |
| json                | Exact (RND) only  | none: PostgreSQL has no = or order for json      |
| jsonb               | Eq, Ord*, Exact   | 64 bits: a prefix of jsonb_cmp's order           |
| inet, cidr          | Eq, Ord*          | 95 bits: network_cmp's key (IPv6: a prefix)      |
| macaddr, macaddr8   | Eq, Ord           | 48 / 64 bits: the bytes                          |
| bit(n), varbit(n)   | Eq, Ord(*)        | the bits (and length); 64-bit prefix past 95     |
| money               | Eq, Ord, Sum      | 64 bits: cents + 2**63                           |

(the last four: ``network_encodings`` and ``bit_encodings``, registered in
``REGISTERED``.)

Dates and timestamps span PostgreSQL's whole range (4714-11-24 BC to 5874897-12-31 and
294276-12-31 23:59:59.999999) and hold ``-infinity`` at 0 and ``infinity`` at the top of
their OPE domain (``Infinite``); ``time`` goes to ``24:00:00``.  Values Python's
``datetime`` cannot hold have forms of their own (``far_datetime``: PgDate,
PgTimestamp, END_OF_DAY), handed to the application as psycopg gives them.  A date or
timestamp column made before (no ``full_range`` in its sealed metadata:
``SqlType.python_years``) keeps the encoding it was made with (``PythonDateEncoding``,
``PythonTimestampEncoding``: day numbers and µs since 0001-01-01, Python's years only; a
plain ``timestamp`` one refuses ``-infinity``).  Date/time strings are read by
PostgreSQL's rules (``datetime_input``) in the session's DateStyle and TimeZone; ISO
strings and Python values take a fast path.

(*) Strings, uuid, bytea and jsonb (``json_encoding``): the Ord onion orders by an
8-byte prefix only (``ope_exact`` is False), so equal prefixes tie and the client
finishes the sort; it cannot be decrypted.  Under the C collation the prefix is that of
the UTF-8 bytes (code point order); under another collation (ICU or libc, recorded per
column) that of the primary weights of the collator's sort key
(``CollatedTextEncoding``, ``collation``).
``char(n)`` compares ignoring trailing spaces, as PostgreSQL does.

NULL stays NULL in every onion: the provider learns which values are NULL.  Callers
handle NULL; only ``coerce`` ever sees ``None`` (and returns it).

Canonical forms (``to_bytes``): values equal under PostgreSQL's ``=`` encode to equal
bytes.  numeric(p,s) is stored at the column scale; unconstrained numeric normalized
(``1.10`` and ``1.1`` are equal, and decrypt as ``1.1``); ``-0.0`` encodes as ``0.0``
(decrypts as ``0.0``); ``char(n)`` without its trailing spaces.

``real`` values are returned as psycopg returns them: the double nearest PostgreSQL's
shortest text for the float4 (``0.1``, not ``0.10000000149011612``).

NaN and the infinities: float and numeric store NaN (one value, equal to itself, above
every number and infinity, as PostgreSQL orders both types) and the infinities; a
numeric(p,s) takes NaN but overflows on an infinity (``NumericOutOfRange``), as in
PostgreSQL.

``coerce`` has *storage* semantics (an INSERT or UPDATE value): it rounds (``2.5`` into
an integer column) and refuses values out of the column's domain.  A comparison such as
``int_col = 2.5`` or ``varchar3_col = 'abcd'`` is not a storage; callers must not coerce
its literal blindly (the predicate is simply false for such values in PostgreSQL).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import math
import re
import struct
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from functools import lru_cache
from typing import Any, ClassVar

import psycopg
from psycopg import errors as pg_errors
from psycopg.adapt import PyFormat

from . import (
    datetime_input,
    datetime_output,
    far_datetime,
    handout,
    interval_input,
    text_output,
)
from .clock import SessionTimestamp
from .collation import Collation, order_key, primary_prefix
from .errors import (
    CannotAdapt,
    ConfigError,
    DatetimeOutOfRange,
    EncodingError,
    InvalidDatetimeInput,
    InvalidTextInput,
    NumericOutOfRange,
    StringTooLong,
    ValueOutOfDomain,
)

# Exact decimal arithmetic (the default context rounds to 28 digits).
_CTX = decimal.Context(
    prec=decimal.MAX_PREC, rounding=ROUND_HALF_UP, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN
)
_EPOCH_TS = dt.datetime(1, 1, 1)
_ONE = Decimal(1)

EQ, ORD, SUM, SEARCH, SUBSTR = "Eq", "Ord", "Sum", "Search", "Substr"
TEXT_TYPES = frozenset({"varchar", "text", "char"})
# types whose values are strings a column reads with its input function: the text
# compared with such a column denotes the value it parses to, not itself
PARSED_STRING_TYPES = frozenset({"macaddr", "macaddr8", "bit", "varbit", "money"})


# --- SQL types ----------------------------------------------------------------------------


@dataclass(frozen=True)
class SqlType:
    """A parsed column type.

    ``name`` is canonical (smallint, integer, bigint, numeric, real, double precision,
    varchar, text, char, date, timestamp, timestamptz, time, uuid, bytea, boolean);
    ``precision`` is numeric's p, the length of varchar/char (None: unbounded), or the
    fractional digits of timestamp(p), timestamptz(p), time(p) (None: 6; a ``timestamp``
    is ``timestamp(6)``); ``scale`` is numeric's s.  An array type is named ``array``
    and carries its ``element`` type (one level whatever the dimensions declared:
    PostgreSQL ignores them, ``int[3][4]`` is ``int[]``).
    """

    name: str
    precision: int | None = None
    scale: int | None = None
    element: SqlType | None = None
    fields: str | None = None  # an interval's field restriction ("day to second")
    # a date, timestamp or timestamptz column made before the encodings held PostgreSQL's
    # whole range: it keeps the encoding it was made with (Python's years only)
    python_years: bool = False

    @property
    def oid(self) -> int:
        """PostgreSQL's type OID for the column's values (a result's type code)."""
        if self.element is not None:
            return ARRAY_OIDS[self.element.name]
        return TYPE_OIDS[self.name]

    def own_encoding(self) -> Encoding | None:
        """The encoding of a type that brings its own (an enum, ``usertypes``)."""
        return None

    def sql(self) -> str:
        if self.element is not None:
            return self.element.sql() + "[]"
        if self.name == "numeric" and self.precision is not None:
            return f"numeric({self.precision},{self.scale or 0})"
        if self.name in ("varchar", "char") and self.precision is not None:
            return f"{self.name}({self.precision})"
        if self.name == "char":
            return "bpchar"  # blank-padded char without a length limit
        if self.fields is not None:
            p = "" if self.precision is None else f"({self.precision})"
            return f"interval {self.fields}{p}"
        if self.name in _FRACTIONAL and self.precision is not None:
            return f"{self.name}({self.precision})"
        if self.name in _BIT_TYPES and self.precision is not None:
            return f"{self.name}({self.precision})"
        return self.name


# the types whose encoding changed to hold PostgreSQL's whole range: a column made
# before records no ``full_range`` and keeps its first encoding (``python_years``)
RANGED_TYPES = frozenset({"date", "timestamp", "timestamptz"})


def ranged(t: SqlType) -> bool:
    """Is ``t`` (or its element) a date, timestamp or timestamptz?"""
    return (t.element or t).name in RANGED_TYPES


def with_python_years(t: SqlType) -> SqlType:
    """``t`` as a column made before the full range (its encoding: Python's years)."""
    if t.element is not None:
        return dataclasses.replace(t, element=with_python_years(t.element))
    return dataclasses.replace(t, python_years=True) if t.name in RANGED_TYPES else t


def full_range(t: SqlType) -> bool:
    """Does a ranged type's column hold PostgreSQL's whole range?"""
    return not (t.element or t).python_years


_ALIASES = {
    "smallint": "smallint",
    "int2": "smallint",
    "integer": "integer",
    "int": "integer",
    "int4": "integer",
    "bigint": "bigint",
    "int8": "bigint",
    "numeric": "numeric",
    "decimal": "numeric",
    "real": "real",
    "float4": "real",
    "double precision": "double precision",
    "float8": "double precision",
    "float": "float",
    "varchar": "varchar",
    "character varying": "varchar",
    "text": "text",
    "char": "char",
    "character": "char",
    "bpchar": "bpchar",
    "date": "date",
    "timestamp": "timestamp",
    "timestamp without time zone": "timestamp",
    "boolean": "boolean",
    "bool": "boolean",
    "uuid": "uuid",
    "bytea": "bytea",
    "json": "json",
    "jsonb": "jsonb",
    "inet": "inet",
    "cidr": "cidr",
    "macaddr": "macaddr",
    "macaddr8": "macaddr8",
    "bit": "bit",
    "bit varying": "varbit",
    "varbit": "varbit",
    "money": "money",
}
# each canonical type name's OID, as PostgreSQL describes a result column of the type
TYPE_OIDS = {
    "smallint": 21, "integer": 23, "bigint": 20, "numeric": 1700, "real": 700,
    "double precision": 701, "text": 25, "varchar": 1043, "char": 1042, "date": 1082,
    "timestamp": 1114, "timestamptz": 1184, "time": 1083, "uuid": 2950, "bytea": 17,
    "boolean": 16, "json": 114, "jsonb": 3802, "interval": 1186, "timetz": 1266,
    "inet": 869, "cidr": 650, "macaddr": 829, "macaddr8": 774, "bit": 1560, "varbit": 1562,
    "money": 790,
}  # fmt: skip
# the OID of an array of each element type
ARRAY_OIDS = {
    "smallint": 1005, "integer": 1007, "bigint": 1016, "numeric": 1231, "real": 1021,
    "double precision": 1022, "text": 1009, "varchar": 1015, "char": 1014, "date": 1182,
    "timestamp": 1115, "timestamptz": 1185, "time": 1183, "uuid": 2951, "bytea": 1001,
    "boolean": 1000,
}  # fmt: skip
# an array type's spellings: ``elem[]``, ``elem[3][4]``, ``elem ARRAY``, ``elem ARRAY[3]``
# (dimensions ignored, as PostgreSQL ignores them), and the internal ``_elem`` names
_ARRAY_SUFFIX_RE = re.compile(r"(?: ?\[ ?\d* ?\])+| array(?: ?\[ ?\d+ ?\])?")
_INTERNAL_ARRAYS = frozenset(
    {"int2", "int4", "int8", "numeric", "float4", "float8", "text", "varchar", "bpchar",
     "date", "timestamp", "timestamptz", "time", "uuid", "bytea", "bool"}
)  # fmt: skip
# types whose modifier is a number of fractional digits (0 to 6)
_FRACTIONAL = frozenset({"timestamp", "timestamptz", "time", "timetz", "interval"})
# bit strings, whose modifier is a length in bits (bit: 1 where not given)
_BIT_TYPES = frozenset({"bit", "varbit"})
_MAX_BITS = 83_886_080
# encodings other modules define, by canonical type name (network_encodings,
# bit_encodings: imported at the end of this module, they add theirs)
REGISTERED: dict[str, Callable[[SqlType], Encoding]] = {}
# the text PostgreSQL prints for those modules' Python values, where str() is not it
TEXT_FORMATS: dict[type, Callable[[Any], str]] = {}
# PostgreSQL's spellings of the date/time types with a precision: (name, zoned)
_DATETIME_RE = re.compile(
    r"(timestamp|time) ?(?:\( ?(\d+) ?\))?(?: (with|without) time zone)?|(timestamptz|timetz)"
    r" ?(?:\( ?(\d+) ?\))?"
)
# names other SQL dialects have and PostgreSQL does not (a parser may map them to one
# PostgreSQL has: PostgreSQL refuses them, 42704)
FOREIGN_TYPE_NAMES = frozenset(
    {"tinyint", "mediumint", "datetime", "tinytext", "mediumtext", "longtext", "tinyblob",
     "mediumblob", "longblob", "nvarchar"}
)  # fmt: skip
_TYPE_RE = re.compile(r"([a-z][a-z0-9 ]*?) ?(?:\( ?(\d+) ?(?:, ?(-?\d+) ?)?\))?")
_MAX_VARCHAR = 10_485_760


def parse_sql_type(text: str) -> SqlType:
    """Parse a column type as written in DDL; unsupported types raise ConfigError."""
    norm = " ".join(str(text).lower().split())
    suffix = _ARRAY_SUFFIX_RE.search(norm)
    if suffix is not None and suffix.end() == len(norm) and suffix.start() > 0:
        return SqlType("array", element=_element_type(text, norm[: suffix.start()]))
    if norm.startswith("_") and norm[1:] in _INTERNAL_ARRAYS:
        return SqlType("array", element=_element_type(text, norm[1:]))
    when = _DATETIME_RE.fullmatch(norm)
    if when:
        return _datetime_type(text, when)
    if norm.startswith("interval"):
        fields, p = interval_input.type_parts(norm, text)
        return SqlType("interval", p, fields=fields)
    m = _TYPE_RE.fullmatch(norm)
    if not m or m.group(1) not in _ALIASES:
        raise ConfigError(f"unsupported column type {text!r}")
    name = _ALIASES[m.group(1)]
    a = int(m.group(2)) if m.group(2) is not None else None
    b = int(m.group(3)) if m.group(3) is not None else None
    if b is not None and name != "numeric":
        raise ConfigError(f"type {text!r} takes at most one modifier")
    if name == "numeric":
        if a is None:
            return SqlType("numeric")
        s = b or 0
        if not 1 <= a <= 1000 or not 0 <= s <= a:
            raise ConfigError(f"unsupported numeric precision/scale in {text!r}")
        return SqlType("numeric", a, s)
    if name == "float":
        if a is None or 25 <= a <= 53:
            return SqlType("double precision")
        if 1 <= a <= 24:
            return SqlType("real")
        raise ConfigError(f"float precision must be between 1 and 53 in {text!r}")
    if name in ("varchar", "char", "bpchar"):
        if a is not None and not 1 <= a <= _MAX_VARCHAR:
            raise ConfigError(f"invalid length in {text!r}")
        if name == "char" and a is None:
            a = 1  # char without a length is char(1)
        return SqlType("char" if name == "bpchar" else name, a)
    if name in _BIT_TYPES:
        if a is not None and not 1 <= a <= _MAX_BITS:
            raise ConfigError(f"invalid length in {text!r}")
        return SqlType(name, 1 if a is None and name == "bit" else a)
    if a is not None:
        raise ConfigError(f"type {name} takes no modifier: {text!r}")
    return SqlType(name)


def _element_type(text: str, element: str) -> SqlType:
    t = parse_sql_type(element)
    if t.element is not None or t.name not in ARRAY_OIDS:  # (arrays of these only, yet)
        raise ConfigError(f"unsupported column type {text!r}")
    return t


def _datetime_type(text: str, m: re.Match[str]) -> SqlType:
    """timestamp(p), timestamptz(p), time(p), timetz(p) from their spellings."""
    if m.group(4):
        base, digits, zoned = m.group(4)[:-2], m.group(5), True
    else:
        base, digits, zoned = m.group(1), m.group(2), m.group(3) == "with"
    # (PostgreSQL reduces a precision above 6 to 6, with a warning)
    p = min(int(digits), 6) if digits is not None else None
    name = base + "tz" if zoned else base
    if name == "timestamp" and p == 6:
        p = None  # timestamp(6) is timestamp
    return SqlType(name, p)


# --- helpers ------------------------------------------------------------------------------

_INT_RE = re.compile(r"[ \t\n\r\f\v]*[+-]?[0-9]+[ \t\n\r\f\v]*")
_NUM_RE = re.compile(
    r"[ \t\n\r\f\v]*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[ \t\n\r\f\v]*"
)
_INF_RE = re.compile(r"[ \t\n\r\f\v]*([+-]?)inf(?:inity)?[ \t\n\r\f\v]*", re.IGNORECASE)
_NAN_RE = re.compile(r"[ \t\n\r\f\v]*[+-]?nan[ \t\n\r\f\v]*", re.IGNORECASE)
_NUMERIC_NAN_RE = re.compile(r"[ \t\n\r\f\v]*nan[ \t\n\r\f\v]*", re.IGNORECASE)


def _type_error(t: SqlType, value: Any) -> EncodingError | CannotAdapt:
    """The error of a value of the wrong Python type: psycopg's, where psycopg could not
    send it to PostgreSQL either (no dumper for its type)."""
    try:
        psycopg.adapters.get_dumper(type(value), PyFormat.AUTO)
    except psycopg.ProgrammingError:
        return CannotAdapt(
            f"cannot adapt type {type(value).__name__!r} using placeholder '%s' (format: AUTO)"
        )
    return EncodingError(f"{t.sql()} does not take a {type(value).__name__}")


def _decimal_from(t: SqlType, value: Any) -> Decimal:
    """A value for a numeric column as a (possibly non-finite) Decimal, PostgreSQL-style."""
    if isinstance(value, bool) or value is None:
        raise _type_error(t, value)
    if isinstance(value, Decimal):
        return _NAN if value.is_nan() else value  # (sNaN, -NaN: PostgreSQL has one NaN)
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return _NAN if math.isnan(value) else Decimal(value)
        # PostgreSQL converts float8 to numeric through 15 significant digits
        return Decimal(format(value, ".15g"))
    if isinstance(value, str):
        if _NUM_RE.fullmatch(value):
            return Decimal(value.strip())
        if _NUMERIC_NAN_RE.fullmatch(value):
            return Decimal("NaN")
        inf = _INF_RE.fullmatch(value)
        if inf:
            return Decimal(f"{inf.group(1)}Infinity")
        raise InvalidTextInput(f'invalid input syntax for type numeric: "{value}"')
    raise _type_error(t, value)


_NAN = Decimal("NaN")


def _nan_last(v: Any) -> tuple[int, Any]:
    """An order key putting NaN above every number, as PostgreSQL orders numeric and
    float NaN (equal to itself)."""
    return (1, 0) if v != v else (0, v)


def _scaled_decimal(i: int, scale: int) -> Decimal:
    """``i · 10**-scale`` exactly, with exponent ``-scale`` (how psycopg returns numeric)."""
    return Decimal(i).scaleb(-scale, _CTX)


def _exponent(d: Decimal) -> int:
    """The exponent of a finite Decimal."""
    return int(d.as_tuple().exponent)


def _pg_round_away(d: Decimal, quantum: Decimal) -> Decimal:
    q = d.quantize(quantum, rounding=ROUND_HALF_UP, context=_CTX)
    return q.copy_abs() if q.is_zero() else q  # PostgreSQL's numeric has no -0


# --- encodings ----------------------------------------------------------------------------


class Encoding:
    """Encoders for one SQL type (see the table at the top of the module).

    ``coerce`` accepts ``None``; the other methods take canonical non-NULL values, as
    returned by ``coerce``.
    """

    onions: frozenset[str] = frozenset({EQ, ORD})
    ope_bits: int = 64
    ope_exact: bool = True
    # equal values (under SQL ``=``) may print differently: an Exact onion keeps the value
    # as written (``to_exact_bytes``) where the configuration asks for one
    exact_display: bool = False
    # Python's order of the values is not PostgreSQL's: the client sorts by order_key
    keyed_order: bool = False

    def __init__(self, sql_type: SqlType) -> None:
        self.sql_type = sql_type

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.sql_type.sql()})"

    def coerce(self, value: Any) -> Any:
        """The value PostgreSQL would store for ``value`` (``None`` stays ``None``)."""
        raise NotImplementedError

    def comparand(self, value: Any) -> Any:
        """The value a comparison with the column compares with: ``coerce``'s, but not
        rounded to the column's precision where the type rounds what it stores
        (``timestamp(p)``, ``time(p)``): PostgreSQL compares with the value as written."""
        return self.coerce(value)

    def to_bytes(self, v: Any) -> bytes:
        """Canonical, injective bytes: values equal under SQL ``=`` give equal bytes."""
        raise NotImplementedError

    def from_bytes(self, b: bytes) -> Any:
        raise NotImplementedError

    def to_exact_bytes(self, v: Any) -> bytes:
        """The value as written (an Exact onion's plaintext): ``to_bytes`` unless equal
        values print differently."""
        return self.to_bytes(v)

    def from_exact_bytes(self, b: bytes) -> Any:
        return self.from_bytes(b)

    def to_ope(self, v: Any) -> int:
        """An integer in ``[0, 2**ope_bits)`` in PostgreSQL's order."""
        raise EncodingError(f"{self.sql_type.sql()} has no Ord onion")

    def from_ope(self, i: int) -> Any:
        raise EncodingError(f"{self.sql_type.sql()} cannot be decrypted from its Ord onion")

    def order_key(self, v: Any) -> Any:
        """A key whose Python order is PostgreSQL's order of the values."""
        return v

    def to_hom(self, v: Any) -> int:
        raise EncodingError(f"{self.sql_type.sql()} has no Sum onion")

    def from_hom_sum(self, i: int) -> Any:
        """A SUM of ``to_hom`` values, typed the way PostgreSQL types ``SUM``."""
        raise EncodingError(f"{self.sql_type.sql()} has no Sum onion")

    def from_hom(self, i: int) -> Any:
        """The value whose ``to_hom`` is ``i``."""
        raise EncodingError(f"{self.sql_type.sql()} has no Sum onion")

    def _bad(self, what: str) -> EncodingError:
        return EncodingError(f"bad {self.sql_type.sql()} {what}")


class IntEncoding(Encoding):
    """smallint, integer, bigint: two's complement bytes; OPE offset by 2**(bits-1)."""

    onions = frozenset({EQ, ORD, SUM})

    def __init__(self, sql_type: SqlType, bits: int) -> None:
        super().__init__(sql_type)
        self.ope_bits = bits
        self._offset = 1 << (bits - 1)
        self._lo, self._hi = -self._offset, self._offset - 1
        self._width = bits // 8

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        name = self.sql_type.name
        if isinstance(value, bool):
            raise _type_error(self.sql_type, value)
        if isinstance(value, int):
            v = value
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise NumericOutOfRange(f"{name} out of range")
            v = round(value)  # float to integer rounds half to even (rint)
        elif isinstance(value, Decimal):
            if not value.is_finite():
                raise ValueOutOfDomain(f"cannot convert {value} to {name}")
            v = int(value.quantize(_ONE, rounding=ROUND_HALF_UP, context=_CTX))
        elif isinstance(value, str):
            if not _INT_RE.fullmatch(value):
                raise InvalidTextInput(f"invalid input syntax for type {name}")
            v = int(value)
        else:
            raise _type_error(self.sql_type, value)
        if not self._lo <= v <= self._hi:
            raise NumericOutOfRange(f"{name} out of range")
        return v

    def _check(self, v: int) -> int:
        if not self._lo <= v <= self._hi:
            raise NumericOutOfRange(f"{self.sql_type.name} out of range")
        return v

    def to_bytes(self, v: int) -> bytes:
        return self._check(v).to_bytes(self._width, "big", signed=True)

    def from_bytes(self, b: bytes) -> int:
        if len(b) != self._width:
            raise self._bad("encoding")
        return int.from_bytes(b, "big", signed=True)

    def to_ope(self, v: int) -> int:
        return self._check(v) + self._offset

    def from_ope(self, i: int) -> int:
        if not 0 <= i < 2 * self._offset:
            raise self._bad("order encoding")
        return i - self._offset

    def to_hom(self, v: int) -> int:
        return v

    def from_hom_sum(self, i: int) -> Any:
        # SUM(smallint | integer) is bigint (an int); SUM(bigint) is numeric (a Decimal)
        return Decimal(i) if self.sql_type.name == "bigint" else int(i)

    def from_hom(self, i: int) -> Any:
        return int(i)


class NumericEncoding(Encoding):
    """numeric(p,s): the integer value·10**s, |value·10**s| < 10**p; NaN (which
    PostgreSQL stores in any numeric column and sorts above every number) is the integer
    10**p, just past the largest value.  Infinities overflow numeric(p,s), as in
    PostgreSQL."""

    onions = frozenset({EQ, ORD, SUM})

    def __init__(self, sql_type: SqlType) -> None:
        super().__init__(sql_type)
        self.p = sql_type.precision or 0
        self.s = sql_type.scale or 0
        self._limit = 10**self.p
        self.ope_bits = (2 * self._limit).bit_length()
        self._quantum = _ONE.scaleb(-self.s)
        self._width = (self.ope_bits + 8) // 8
        # the last value coerce() returned and its scaled integer: its onions' encoders
        # (to_bytes, to_ope) are handed that very object next, and need not scale it again
        # (the reference held keeps the identity from being reused)
        self._last: tuple[Decimal | None, int] = (None, 0)

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        d = _decimal_from(self.sql_type, value)
        if d.is_nan():
            return d
        if not d.is_finite():
            raise NumericOutOfRange(f"numeric field overflow for {self.sql_type.sql()}")
        q = _pg_round_away(d, self._quantum)
        x = self._scaled(q)
        if abs(x) >= self._limit:
            raise NumericOutOfRange(f"numeric field overflow for {self.sql_type.sql()}")
        self._last = (q, x)
        return q

    def _scaled(self, v: Decimal) -> int:
        q = v.quantize(self._quantum, rounding=ROUND_HALF_UP, context=_CTX)
        return int(q.scaleb(self.s, _CTX))

    def _checked(self, v: Decimal) -> int:
        last = self._last  # (one read: another thread may replace it meanwhile)
        if last[0] is v:
            return last[1]  # coerced, so within the limit
        if v.is_nan():
            return self._limit
        x = self._scaled(v)
        if abs(x) >= self._limit:
            raise NumericOutOfRange(f"numeric field overflow for {self.sql_type.sql()}")
        return x

    def to_bytes(self, v: Decimal) -> bytes:
        return self._checked(v).to_bytes(self._width, "big", signed=True)

    def from_bytes(self, b: bytes) -> Decimal:
        if len(b) != self._width:
            raise self._bad("encoding")
        x = int.from_bytes(b, "big", signed=True)
        if x == self._limit:
            return _NAN
        if abs(x) > self._limit:
            raise self._bad("encoding")
        return _scaled_decimal(x, self.s)

    def to_ope(self, v: Decimal) -> int:
        return self._checked(v) + self._limit

    def from_ope(self, i: int) -> Decimal:
        if i == 2 * self._limit:
            return _NAN
        if not 0 < i < 2 * self._limit:
            raise self._bad("order encoding")
        return _scaled_decimal(i - self._limit, self.s)

    def order_key(self, v: Decimal) -> Any:
        return _nan_last(v)

    def to_hom(self, v: Decimal) -> int:
        if v.is_nan():
            raise ValueOutOfDomain(
                f"NaN cannot be stored in a Sum onion ({self.sql_type.sql()}): "
                "declare the column without one to store NaN"
            )
        return self._checked(v)

    def from_hom_sum(self, i: int) -> Decimal:
        return _scaled_decimal(int(i), self.s)  # SUM(numeric(p,s)) keeps scale s

    def from_hom(self, i: int) -> Decimal:
        return _scaled_decimal(int(i), self.s)


class FreeNumericEncoding(Encoding):
    """numeric without precision: the Eq onion only (no finite OPE or Paillier domain).

    The canonical bytes are the normalized decimal text (``1.10`` and ``1.1`` are equal
    under ``=``, so they must encrypt alike): values decrypt without trailing fractional
    zeros.  Declare ``numeric(p,s)`` for Ord and Sum and for an exact display scale.
    ``NaN``, ``Infinity`` and ``-Infinity`` are stored as those words.
    """

    onions = frozenset({EQ})
    ope_bits = 0
    ope_exact = False
    exact_display = True  # 1.50 = 1.5, but PostgreSQL prints each as written
    _MAX_INT_DIGITS = 131_072
    _MAX_FRAC_DIGITS = 16_383

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        d = _decimal_from(self.sql_type, value)
        if not d.is_finite():
            return d
        if _exponent(d) > 0:
            d = d.quantize(_ONE, context=_CTX)  # PostgreSQL keeps no positive exponent
        if d.is_zero():
            d = d.copy_abs()
        if d.adjusted() >= self._MAX_INT_DIGITS or -_exponent(d) > self._MAX_FRAC_DIGITS:
            raise ValueOutOfDomain("value overflows numeric format")
        return d

    def to_bytes(self, v: Decimal) -> bytes:
        if not v.is_finite():
            return b"NaN" if v.is_nan() else b"-Infinity" if v.is_signed() else b"Infinity"
        n = v.normalize(_CTX)
        if n.is_zero():
            n = Decimal(0)
        elif _exponent(n) > 0:
            n = n.quantize(_ONE, context=_CTX)
        return str(n).encode("ascii")

    def from_bytes(self, b: bytes) -> Decimal:
        try:
            d = Decimal(bytes(b).decode("ascii"))
        except (UnicodeDecodeError, InvalidOperation):
            raise self._bad("encoding") from None
        if not d.is_finite() and str(d) not in ("NaN", "Infinity", "-Infinity"):
            raise self._bad("encoding")
        return d

    def order_key(self, v: Decimal) -> Any:
        return _nan_last(v)

    def to_exact_bytes(self, v: Decimal) -> bytes:
        """The decimal text with its scale (``1.50``; zero without a sign, ``0.0``),
        padded (``0x80`` then zeros) to a multiple of 16 bytes: under RND its length
        shows no more than the Eq onion's DET ciphertext does (one block up to 15
        characters)."""
        text = str(v).encode("ascii") if v.is_finite() else self.to_bytes(v)
        return text + b"\x80" + b"\x00" * (15 - len(text) % 16)

    def from_exact_bytes(self, b: bytes) -> Decimal:
        text = bytes(b).rstrip(b"\x00")
        if not text.endswith(b"\x80") or len(b) % 16:
            raise self._bad("encoding")
        return self.from_bytes(text[:-1])


class FloatEncoding(Encoding):
    """real and double precision: IEEE-754 bits; order by flipping the sign bit (or all
    bits of negatives), so ``-inf < … < -0.0 = 0.0 < … < +inf < NaN``: every NaN is
    stored as the one quiet NaN, equal to itself and above every number, as PostgreSQL
    compares floats."""

    def __init__(self, sql_type: SqlType, bits: int) -> None:
        super().__init__(sql_type)
        self.ope_bits = bits
        self._single = bits == 32
        self._fmt = ">f" if self._single else ">d"
        self._ufmt = ">I" if self._single else ">Q"
        self._top = 1 << (bits - 1)
        self._mask = (1 << bits) - 1
        self._nan_bits = 0x7FC00000 if self._single else 0x7FF8000000000000

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        f = self._to_double(value)
        if math.isnan(f):
            return math.nan
        if self._single:
            try:
                f32 = struct.unpack(">f", struct.pack(">f", f))[0]
            except OverflowError:
                raise NumericOutOfRange("value out of range for real: overflow") from None
            if isinstance(value, str | Decimal) and f32 != 0 and math.isfinite(f32):
                f32 = _nearest_single(
                    Decimal(value.strip()) if isinstance(value, str) else value, f32
                )
            if f32 == 0 and f != 0:
                raise NumericOutOfRange("value out of range for real: underflow")
            return _shortest_single(f32)
        return f

    def _to_double(self, value: Any) -> float:
        name = self.sql_type.name
        if isinstance(value, bool):
            raise _type_error(self.sql_type, value)
        if isinstance(value, float):
            return value
        if isinstance(value, int):
            try:
                return float(value)
            except OverflowError:
                raise NumericOutOfRange(f"value out of range for {name}") from None
        if isinstance(value, str):
            inf = _INF_RE.fullmatch(value)
            if inf:
                return -math.inf if inf.group(1) == "-" else math.inf
            if _NAN_RE.fullmatch(value):
                return math.nan
            if not _NUM_RE.fullmatch(value):
                raise InvalidTextInput(f"invalid input syntax for type {name}")
            value = Decimal(value.strip())
        if isinstance(value, Decimal):
            if value.is_nan():
                return math.nan
            f = float(value)
            if value.is_finite() and (math.isinf(f) or (f == 0 and not value.is_zero())):
                raise NumericOutOfRange(f"value out of range for {name}")
            return f
        raise _type_error(self.sql_type, value)

    def _bits(self, v: float) -> int:
        if v != v:
            return self._nan_bits
        try:
            packed = struct.pack(self._fmt, 0.0 if v == 0 else v)
        except OverflowError:
            raise NumericOutOfRange("value out of range for real") from None
        u = int(struct.unpack(self._ufmt, packed)[0])
        if self._single and v != 0 and math.isfinite(v) and _shortest_single(self._float32(u)) != v:
            # v is the double of a float4's shortest text, which rounds to a neighbour of
            # that float4 when the text lies near the middle between two (7.038531e-26)
            u = next((w for w in (u - 1, u + 1) if _shortest_single(self._float32(w)) == v), u)
        return u

    @staticmethod
    def _float32(u: int) -> float:
        return float(struct.unpack(">f", struct.pack(">I", u & 0xFFFFFFFF))[0])

    def _float(self, u: int) -> float:
        f = float(struct.unpack(self._fmt, struct.pack(self._ufmt, u))[0])
        if f != f:
            if u != self._nan_bits:
                raise self._bad("encoding")
            return math.nan
        return _shortest_single(f) if self._single else f

    def to_bytes(self, v: float) -> bytes:
        return self._bits(v).to_bytes(self.ope_bits // 8, "big")

    def from_bytes(self, b: bytes) -> float:
        if len(b) != self.ope_bits // 8:
            raise self._bad("encoding")
        return self._float(int.from_bytes(b, "big"))

    def to_ope(self, v: float) -> int:
        u = self._bits(v)
        return u ^ self._mask if u & self._top else u | self._top

    def from_ope(self, i: int) -> float:
        if not 0 <= i <= self._mask:
            raise self._bad("order encoding")
        return self._float(i & ~self._top if i & self._top else i ^ self._mask)

    def order_key(self, v: float) -> Any:
        return _nan_last(v)


def _nearest_single(d: Decimal, f32: float) -> float:
    """The float4 nearest the decimal ``d`` (ties to the even one), as PostgreSQL's
    ``strtof`` reads it.  ``f32`` is ``d`` rounded to a double and then to a float4: two
    roundings, which can land one float4 off (``7038531e-32``)."""
    bits = struct.unpack(">I", struct.pack(">f", f32))[0]
    best, best_bits, best_gap = f32, bits, abs(_CTX.subtract(Decimal(f32), d))
    for u in (bits - 1, bits + 1):  # the neighbours (same sign: f32 is not zero)
        c = struct.unpack(">f", struct.pack(">I", u & 0xFFFFFFFF))[0]
        if c == 0 or not math.isfinite(c):
            continue
        gap = abs(_CTX.subtract(Decimal(c), d))
        if gap < best_gap or (gap == best_gap and u % 2 == 0 and best_bits % 2 == 1):
            best, best_bits, best_gap = c, u, gap
    return float(best)


def single_of(v: float) -> float:
    """The float4 a real value stands for, as a double (exactly): the client holds a
    real as the double of its shortest text (``_shortest_single``), which rounded again
    to a float4 can land one off; read once from that text, as PostgreSQL's strtof."""
    if v == 0 or not math.isfinite(v):
        return v
    f32 = struct.unpack(">f", struct.pack(">f", v))[0]
    return _nearest_single(Decimal(repr(v)), f32)


def _shortest_single(x: float) -> float:
    """A float4 value as psycopg returns it: the double nearest PostgreSQL's shortest
    decimal text for it (``0.1``, not ``0.10000000149011612``)."""
    if x == 0 or not math.isfinite(x):
        return x
    for digits in range(1, 10):
        text = format(x, f".{digits}g")
        y = float(text)
        try:
            f32 = struct.unpack(">f", struct.pack(">f", y))[0]
        except OverflowError:
            continue
        # (a text one float4 off through the double may still name x: strtof decides)
        near = f32 == x or abs(_single_bits(f32) - _single_bits(x)) == 1
        if near and f32 != 0 and _nearest_single(Decimal(text), f32) == x:
            return y
    return x


def _single_bits(x: float) -> int:
    return int(struct.unpack(">i", struct.pack(">f", x))[0])


class TextEncoding(Encoding):
    """varchar(n), text, char(n): UTF-8 bytes; OPE over the first 8 bytes (inexact)."""

    onions = frozenset({EQ, ORD, SEARCH, SUBSTR})
    ope_exact = False
    PREFIX: ClassVar[int] = 8

    def __init__(self, sql_type: SqlType) -> None:
        super().__init__(sql_type)
        self.ope_bits = 8 * self.PREFIX
        self._char = sql_type.name == "char"
        self._n = sql_type.precision

    def coerce(self, value: Any) -> Any:
        return self._text(value, stored=True)

    def comparand(self, value: Any) -> Any:
        """The string as written: PostgreSQL compares a varchar(n) or char(n) column with
        a string of any length (only storing one applies the length)."""
        return self._text(value, stored=False)

    def _text(self, value: Any, stored: bool) -> Any:
        if value is None:
            return None
        t = self.sql_type
        if isinstance(value, str):
            v = value
        elif isinstance(value, int) and not isinstance(value, bool):
            v = str(value)
        elif isinstance(value, Decimal) and value.is_finite():
            # numeric's text form: no exponent, no negative zero
            v = format(value.copy_abs() if value.is_zero() else value, "f")
        else:
            raise _type_error(t, value)
        if "\x00" in v:
            raise EncodingError("strings cannot contain NUL characters")
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:
            raise EncodingError("strings must be valid Unicode (no lone surrogates)") from None
        n = self._n if stored else None
        if n is not None and len(v) > n:
            if v[n:].strip(" "):
                kind = "character" if self._char else "character varying"
                raise StringTooLong(f"value too long for type {kind}({n})")
            v = v[:n]  # PostgreSQL drops excess trailing spaces silently
        if self._char and n is not None:
            v = v.ljust(n)
        return v

    def _canonical(self, v: str) -> bytes:
        return (v.rstrip(" ") if self._char else v).encode("utf-8")

    def to_bytes(self, v: str) -> bytes:
        return self._canonical(v)

    def from_bytes(self, b: bytes) -> str:
        try:
            s = bytes(b).decode("utf-8")
        except UnicodeDecodeError:
            raise self._bad("encoding") from None
        return s.ljust(self._n) if self._char and self._n is not None else s

    def to_ope(self, v: str) -> int:
        return int.from_bytes(self.order_key(v)[: self.PREFIX].ljust(self.PREFIX, b"\0"), "big")

    def order_key(self, v: str) -> bytes:
        """Bytes whose order is PostgreSQL's order of the values (C: the UTF-8 bytes)."""
        return self._canonical(v)


class CollatedTextEncoding(TextEncoding):
    """A text type under a non-C collation: the Ord onion encrypts the first 8 bytes of
    the *primary weights* of the collator's sort key (``collation.primary_prefix``), so
    the server orders by the collation, up to ties (values with the same first letters
    up to case and accents, or the same first 8 bytes of weights) that the client breaks
    with the whole order (``order_key``).  Without the collation on the client
    (``CollationUnavailable``) no value can be put in the Ord onion nor ordered."""

    def __init__(self, sql_type: SqlType, collation: Collation) -> None:
        super().__init__(sql_type)
        self.collation = collation

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.sql_type.sql()}, {self.collation.describe()})"

    def to_ope(self, v: str) -> int:
        text = self._canonical(v).decode("utf-8")
        prefix = primary_prefix(self.collation, text)[: self.PREFIX]
        return int.from_bytes(prefix.ljust(self.PREFIX, b"\0"), "big")

    def order_key(self, v: str) -> Any:
        return order_key(self.collation, self._canonical(v).decode("utf-8"))


# --- dates and times ----------------------------------------------------------------------


class Infinite:
    """``infinity`` or ``-infinity`` of a date or timestamp column: the value PostgreSQL
    stores past every date.  Returned where the column holds it (psycopg's loaders raise
    ``DataError`` on these: Python's dates end at 9999-12-31); ``str`` prints it as
    PostgreSQL does.  Ordered below / above every date and timestamp by ``order_key``."""

    __slots__ = ("sign",)

    def __init__(self, sign: int) -> None:
        self.sign = sign

    def __repr__(self) -> str:
        return "infinity" if self.sign > 0 else "-infinity"

    __str__ = __repr__

    def __reduce__(self) -> str:
        return "INFINITY" if self.sign > 0 else "NEG_INFINITY"


INFINITY = Infinite(1)
NEG_INFINITY = Infinite(-1)
_INFINITE_TYPE_NAMES = {1082: "date", 1114: "timestamp", 1184: "timestamp"}


def _infinite_value(v: Infinite, oid: int) -> Any:
    """What the session's loader gives the application for an infinite date or
    timestamp: by default psycopg's DataError (Python's dates end at years 1 and 9999),
    an application's own loader's value where it registered one."""
    return far_datetime.loaded(oid, lambda: "infinity" if v.sign > 0 else "-infinity")


handout.register_typed(Infinite, _infinite_value, *_INFINITE_TYPE_NAMES)
_INFINITE_BYTES = {INFINITY: b"infinity", NEG_INFINITY: b"-infinity"}
_BYTES_INFINITE = {v: k for k, v in _INFINITE_BYTES.items()}
_EPOCH_DATE = dt.date(1970, 1, 1)
_ISO_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_ISO_TIMESTAMP_RE = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[ T][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,6})?)?)?"
)
_ISO_ZONED_RE = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,6})?)?"
    r"(?:Z|[+-][0-9]{2}(?::?[0-9]{2})?)?"
)
_MAX_DISPLACEMENT = dt.timedelta(hours=15, minutes=59, seconds=59)
_ISO_TIME_RE = re.compile(r"[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,6})?)?")
_ONE_US = dt.timedelta(microseconds=1)
_PG_EPOCH = dt.datetime(2000, 1, 1)
# the first Julian day PostgreSQL's dates hold (4714-11-24 BC) and the day after the last
_JULIAN_MIN = 0
_DATE_END_JULIAN = 2147483494


def _infinite_key(v: Any) -> Any:
    """An order key: -infinity < every date or timestamp < infinity."""
    if type(v) is Infinite:
        return (v.sign, 0)
    return (0, v)


@lru_cache(maxsize=64)
def _session_for(datestyle: str, zone: str) -> tuple[str, dt.tzinfo | None]:
    return datetime_input.date_order(datestyle), datetime_input.zone_named(zone)


def current_session() -> datetime_input.Session:
    """The input rules' view of the session running the current statement: its
    DateStyle and TimeZone as the server reports them (ParameterStatus, no round trip),
    its clock read from the server when an input needs it (``now``, ``today``)."""
    from .defaults import RUNTIME

    runtime = RUNTIME.get()
    conn = getattr(runtime, "conn", None)
    if conn is None or conn.closed:  # (no statement running: PostgreSQL's defaults)
        return datetime_input.Session()
    status = conn.pgconn.parameter_status
    style = (status(b"DateStyle") or b"ISO, MDY").decode()
    name = (status(b"TimeZone") or b"UTC").decode()
    order, zone = _session_for(style, name)
    if zone is None:
        raise EncodingError(f"the session's TimeZone {name!r} is not a zone this client knows")

    def clock() -> dt.datetime:
        from .clock import SERVER_CLOCK

        server = SERVER_CLOCK.get()
        if server is not None:
            return server.value("now")
        # binary: psycopg's text loader reads a timestamptz only in DateStyle ISO
        row = conn.execute("SELECT now()", binary=True).fetchone()
        return row[0]

    return datetime_input.Session(order=order, zone=zone, clock=clock)


def _session_zone() -> dt.tzinfo:
    """The session's TimeZone (read on every timestamptz value: no Session built)."""
    from .defaults import RUNTIME

    conn = getattr(RUNTIME.get(), "conn", None)
    if conn is None or conn.closed:
        return dt.UTC
    name = conn.pgconn.parameter_status(b"TimeZone")
    zone = _zone_of(name or b"UTC")
    if zone is None:
        raise EncodingError(f"the session's TimeZone {name!r} is not a zone this client knows")
    return zone


@lru_cache(maxsize=64)
def _zone_of(name: bytes) -> dt.tzinfo | None:
    return datetime_input.zone_named(name.decode())


def _out_of_range(what: str, text: str) -> DatetimeOutOfRange:
    return DatetimeOutOfRange(f'{what} out of range: "{text}"')


def _beyond_python(what: str, text: str) -> ValueOutOfDomain:
    return ValueOutOfDomain(
        f"{what} {text!r}: an encrypted {what} column holds 0001-01-01 to 9999-12-31 and "
        "±infinity (the years Python's datetime has)"
    )


def _parsed_fields(text: str, kind: str) -> Any:
    """A date/time string as PostgreSQL's input function for ``kind`` reads it: its
    fields (``epoch`` as 1970-01-01 00:00 UTC), or INFINITY | NEG_INFINITY."""
    f = datetime_input.parse(text, kind, current_session())
    if f.special == "epoch":
        return datetime_input.Fields(1970, 1, 1, offset=0, has_date=True)
    if f.special is not None:
        return INFINITY if f.special == "infinity" else NEG_INFINITY
    return f


def _valid_julian(y: int, m: int) -> bool:
    """PostgreSQL's IS_VALID_JULIAN: from November 4714 BC to May 5874898."""
    return (y > -4713 or (y == -4713 and m >= 11)) and (y < 5874898 or (y == 5874898 and m < 6))


def _parsed_date(text: str) -> Any:
    """A date string as date_in reads it: a date, a PgDate or an infinity."""
    f = _parsed_fields(text, "date")
    if type(f) is Infinite:
        return f
    julian = datetime_input.date2j(f.year, f.month, f.day)
    if not _JULIAN_MIN <= julian < _DATE_END_JULIAN:
        raise _out_of_range("date", text)
    return far_datetime.date_of(julian)


def _local_micros(f: datetime_input.Fields) -> int:
    """The fields' local time in microseconds since 2000-01-01 00:00."""
    day = datetime_input.date2j(f.year, f.month, f.day) - far_datetime.POSTGRES_EPOCH_JDATE
    clock = ((f.hour * 60 + f.minute) * 60 + f.second) * 1_000_000 + f.micro
    return day * far_datetime.US_PER_DAY + clock


class DateEncoding(Encoding):
    """date: the Julian day plus one (0001-01-01 is 1721427), ``-infinity`` 0 and
    ``infinity`` 2**32 - 1, over PostgreSQL's whole range (4714-11-24 BC to
    5874897-12-31); DET: those 4 bytes.  Values are ``date`` where Python has them, else
    ``far_datetime.PgDate``."""

    ope_bits = 32
    keyed_order = True  # (a PgDate and an infinity among dates: ordered by to_ope)
    _TOP = 2**32 - 1

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        return self._held(self._value_of(value))

    def _value_of(self, value: Any) -> Any:
        if isinstance(value, SessionTimestamp):
            return value.date()  # now() assigned to a date: the session's local date
        if isinstance(value, dt.datetime):
            raise EncodingError("date does not take a datetime (pass .date())")
        if isinstance(value, dt.date):
            return value
        if isinstance(value, str):
            if _ISO_DATE_RE.fullmatch(value):
                try:
                    return dt.date.fromisoformat(value)
                except ValueError:
                    pass  # (the input rules say which error)
            return _parsed_date(value)
        if type(value) is Infinite or type(value) is far_datetime.PgDate:
            return value
        raise _type_error(self.sql_type, value)

    def _held(self, v: Any) -> Any:
        """``v`` if the column holds it (every date PostgreSQL has)."""
        return v

    def to_bytes(self, v: Any) -> bytes:
        return self.to_ope(v).to_bytes(4, "big")

    def from_bytes(self, b: bytes) -> Any:
        if len(b) != 4:
            raise self._bad("encoding")
        return self.from_ope(int.from_bytes(b, "big"))

    def to_ope(self, v: Any) -> int:
        if type(v) is Infinite:
            return 0 if v.sign < 0 else self._TOP
        julian = far_datetime.julian_of(v)
        if julian is None:
            raise EncodingError(f"not a date: {type(v).__name__}")
        return julian + 1

    def from_ope(self, i: int) -> Any:
        if i == 0 or i == self._TOP:
            return NEG_INFINITY if i == 0 else INFINITY
        if not 1 <= i <= _DATE_END_JULIAN:
            raise self._bad("encoding")
        return far_datetime.date_of(i - 1)

    def order_key(self, v: Any) -> Any:
        return self.to_ope(v)


class PythonDateEncoding(DateEncoding):
    """date, a column made before dates held PostgreSQL's whole range
    (``SqlType.python_years``): the proleptic Gregorian day number
    (``date.toordinal``), ``-infinity`` 0 and ``infinity`` 2**32 - 1; DET: the number's
    4 bytes, the infinities as the words.  It holds 0001-01-01 to 9999-12-31 and the
    infinities (``ValueOutOfDomain`` for a BC date or a year past 9999)."""

    keyed_order = False
    _MAX = dt.date.max.toordinal()

    def _held(self, v: Any) -> Any:
        if type(v) is far_datetime.PgDate:
            raise _beyond_python("date", far_datetime.date_text(v.julian, "ISO"))
        return v

    def to_bytes(self, v: Any) -> bytes:
        if type(v) is Infinite:
            return _INFINITE_BYTES[v]
        return self._held(v).toordinal().to_bytes(4, "big")

    def from_bytes(self, b: bytes) -> Any:
        if len(b) != 4:
            inf = _BYTES_INFINITE.get(bytes(b))
            if inf is None:
                raise self._bad("encoding")
            return inf
        i = int.from_bytes(b, "big")
        if not 1 <= i <= self._MAX:
            raise self._bad("encoding")
        return dt.date.fromordinal(i)

    def to_ope(self, v: Any) -> int:
        if type(v) is Infinite:
            return 0 if v.sign < 0 else self._TOP
        return self._held(v).toordinal()

    def from_ope(self, i: int) -> Any:
        if i == 0 or i == self._TOP:
            return NEG_INFINITY if i == 0 else INFINITY
        if not 1 <= i <= self._MAX:
            raise self._bad("encoding")
        return dt.date.fromordinal(i)

    def order_key(self, v: Any) -> Any:
        return _infinite_key(v)


def _round_to(micros: int, precision: int) -> int:
    """``micros`` (since 2000-01-01) rounded to ``precision`` fractional digits as
    PostgreSQL's AdjustTimestampForTypmod rounds: half away from zero."""
    scale = 10 ** (6 - precision)
    q, r = divmod(abs(micros), scale)
    if 2 * r >= scale:
        q += 1
    return q * scale if micros >= 0 else -q * scale


class TimestampEncoding(Encoding):
    """timestamp(p) and timestamptz(p): microseconds since 4714-11-24 BC 00:00 (Julian day
    0; timestamptz: UTC, the instant) plus one, ``-infinity`` 0 and ``infinity``
    2**64 - 1, over PostgreSQL's whole range (to 294276-12-31 23:59:59.999999: below
    2**63.04); DET: those 8 bytes.

    Values: naive datetimes (timestamp), aware ones in the session's TimeZone
    (timestamptz, as psycopg loads them), ``far_datetime.PgTimestamp`` where Python's
    years end; input strings as PostgreSQL reads them (``datetime_input``): into a
    timestamp a zone is ignored, into a timestamptz it places the instant (naive
    input: the session's TimeZone).  ``timestamp(p)`` rounds to ``p`` fractional
    digits."""

    ope_bits = 64
    keyed_order = True  # (a PgTimestamp and an infinity among datetimes: by to_ope)
    _TOP = 2**64 - 1
    _SPAN = far_datetime.END_TIMESTAMP - far_datetime.MIN_TIMESTAMP

    def __init__(self, sql_type: SqlType) -> None:
        super().__init__(sql_type)
        self.zoned = sql_type.name == "timestamptz"
        p = sql_type.precision
        self.precision = 6 if p is None else p
        self._kind = "timestamptz" if self.zoned else "timestamp"

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        return self._checked(self._value_of(value), self.precision)

    def comparand(self, value: Any) -> Any:
        return self._checked(self._value_of(value), 6) if value is not None else None

    def _value_of(self, value: Any) -> Any:
        if isinstance(value, str):
            return self._from_text(value)
        if isinstance(value, dt.datetime):
            return self._from_datetime(value)
        if isinstance(value, dt.date):
            v = dt.datetime(value.year, value.month, value.day)
            return self._localize(v, _session_zone()) if self.zoned else v
        if type(value) is Infinite:
            return value
        if type(value) is far_datetime.PgTimestamp:
            return self._from_far(value)
        if type(value) is far_datetime.PgDate:
            local = (value.julian - far_datetime.POSTGRES_EPOCH_JDATE) * far_datetime.US_PER_DAY
            return self._from_far(far_datetime.PgTimestamp(local, False))
        raise _type_error(self.sql_type, value)

    def _from_far(self, v: far_datetime.PgTimestamp) -> Any:
        """A PgTimestamp in this column's kind: a timestamp's local time placed in the
        session's TimeZone, or a timestamptz's instant read there."""
        micros = v.micros
        if v.zoned and not self.zoned:
            micros += far_datetime.zone_offset_at(micros, _session_zone()) * 1_000_000
        elif self.zoned and not v.zoned:
            f = far_datetime.fields_of(micros)
            micros -= f.offset_at(_session_zone()) * 1_000_000
        if not far_datetime.MIN_TIMESTAMP <= micros < far_datetime.END_TIMESTAMP:
            raise DatetimeOutOfRange("timestamp out of range")
        return self._value(micros)

    def _checked(self, v: Any, precision: int) -> Any:
        if type(v) is not Infinite and precision < 6:
            v = self._rounded(v)
        return self._held(v)

    def _held(self, v: Any) -> Any:
        """``v`` if the column holds it (every timestamp PostgreSQL has)."""
        return v

    def _from_datetime(self, value: dt.datetime) -> dt.datetime:
        if isinstance(value, SessionTimestamp):
            if self.zoned:
                return value
            # now() assigned to a timestamp: the session's local time, as PostgreSQL
            return dt.datetime.combine(value.date(), value.time())
        if self.zoned:
            if value.tzinfo is None:
                return self._localize(value, _session_zone())
            return value.astimezone(_session_zone())
        if value.tzinfo is not None:
            # a timestamptz assigned to a timestamp: the session's local time
            return value.astimezone(_session_zone()).replace(tzinfo=None)
        return value

    def _from_text(self, text: str) -> Any:
        if not self.zoned and _ISO_TIMESTAMP_RE.fullmatch(text):
            try:
                return dt.datetime.fromisoformat(text)
            except ValueError:
                pass  # (the input rules say which error)
        elif self.zoned and _ISO_ZONED_RE.fullmatch(text):
            try:
                v = dt.datetime.fromisoformat(text)
            except ValueError:
                v = None  # (the input rules say which error)
            written = v.utcoffset() if v is not None else None
            if v is not None and (written is None or abs(written) <= _MAX_DISPLACEMENT):
                zone = _session_zone()
                try:
                    return self._localize(v, zone) if written is None else v.astimezone(zone)
                except OverflowError:
                    pass  # (the instant beyond Python's years: the input rules place it)
        f = _parsed_fields(text, self._kind)
        if type(f) is Infinite:
            return f
        if not _valid_julian(f.year, f.month):
            raise _out_of_range("timestamp", text)
        micros = _local_micros(f)
        if self.zoned:
            micros -= f.offset_at(_session_zone()) * 1_000_000
        if not far_datetime.MIN_TIMESTAMP <= micros < far_datetime.END_TIMESTAMP:
            raise _out_of_range("timestamp", text)
        return self._value(micros)

    @staticmethod
    def _localize(v: dt.datetime, zone: dt.tzinfo) -> Any:
        """A naive local time in ``zone`` as PostgreSQL places it (a skipped time takes
        the offset before the change, a repeated one the later offset)."""
        f = datetime_input.Fields(v.year, v.month, v.day, v.hour, v.minute, zone=zone)
        utc = v - dt.timedelta(seconds=f.offset_at(zone))
        try:
            return utc.replace(tzinfo=dt.UTC).astimezone(zone)
        except OverflowError:  # (the local time of the instant is past 9999)
            micros = (utc - _PG_EPOCH) // _ONE_US
            return far_datetime.PgTimestamp(micros, True)

    def _rounded(self, v: Any) -> Any:
        micros = self._micros(v)
        rounded = _round_to(micros, self.precision)
        # (PostgreSQL 15 checks no range after rounding: 294276-12-31 23:59:59.999999
        # is stored in a timestamp(2) as 294277-01-01 00:00:00, which the domain holds)
        return v if rounded == micros else self._value(rounded)

    def _micros(self, v: Any) -> int:
        """Microseconds since 2000-01-01 00:00 (timestamptz: UTC)."""
        if type(v) is far_datetime.PgTimestamp:
            if v.zoned != self.zoned:
                raise EncodingError(f"not a {self._kind}: {v!r}")
            return v.micros
        if not isinstance(v, dt.datetime):
            raise EncodingError(f"not a {self._kind}: {type(v).__name__}")
        if v.tzinfo is not None:
            if not self.zoned:
                raise EncodingError("timestamp (without time zone) takes naive datetimes")
            v = v.astimezone(dt.UTC).replace(tzinfo=None)
        elif self.zoned:
            raise EncodingError("timestamptz takes aware datetimes")
        return (v - _PG_EPOCH) // _ONE_US

    def _value(self, micros: int) -> Any:
        return far_datetime.timestamp_of(micros, _session_zone() if self.zoned else None)

    def to_bytes(self, v: Any) -> bytes:
        return self.to_ope(v).to_bytes(8, "big")

    def from_bytes(self, b: bytes) -> Any:
        if len(b) != 8:
            raise self._bad("encoding")
        return self.from_ope(int.from_bytes(b, "big"))

    def to_ope(self, v: Any) -> int:
        if type(v) is Infinite:
            return 0 if v.sign < 0 else self._TOP
        return self._micros(v) - far_datetime.MIN_TIMESTAMP + 1

    def from_ope(self, i: int) -> Any:
        if i == 0 or i == self._TOP:
            return NEG_INFINITY if i == 0 else INFINITY
        if not 1 <= i <= self._SPAN + 1_000_000:  # (a rounded value, just past the end)
            raise self._bad("encoding")
        return self._value(i - 1 + far_datetime.MIN_TIMESTAMP)

    def order_key(self, v: Any) -> Any:
        return self.to_ope(v)


class PythonTimestampEncoding(TimestampEncoding):
    """timestamp(p) and timestamptz(p), a column made before timestamps held
    PostgreSQL's whole range (``SqlType.python_years``): microseconds since 0001-01-01
    00:00 (timestamptz: UTC).  DET: those 8 bytes (infinities: the words); OPE: the same
    number, plus one for all but ``timestamp`` / ``timestamp(6)`` (columns made before
    the infinities were stored), so that ``-infinity`` is 0; ``infinity`` is 2**64 - 1.
    It holds 0001-01-01 to 9999-12-31 and the infinities (a ``timestamp`` /
    ``timestamp(6)`` column: ``infinity`` only); ``ValueOutOfDomain`` for the rest."""

    keyed_order = False
    _MAX = (dt.datetime.max - _EPOCH_TS) // _ONE_US

    def __init__(self, sql_type: SqlType) -> None:
        super().__init__(sql_type)
        # (timestamp and timestamp(6) keep the order encoding they always had)
        self._shift = 0 if not self.zoned and self.precision == 6 else 1

    def _held(self, v: Any) -> Any:
        if type(v) is Infinite:
            if v.sign < 0 and not self._shift:
                raise ValueOutOfDomain(
                    f"-infinity: an encrypted {self.sql_type.sql()} column made as timestamp "
                    "or timestamp(6) holds 0001-01-01 to 9999-12-31 and infinity; declare "
                    "timestamp(0..5) or timestamptz for -infinity"
                )
            return v
        if type(v) is far_datetime.PgTimestamp:
            zone = _session_zone() if self.zoned else None
            raise _beyond_python("timestamp", far_datetime.timestamp_text(v, "ISO", zone))
        return v

    def _old_micros(self, v: dt.datetime) -> int:
        self._held(v)
        return self._micros(v) - self._EPOCH_OFFSET

    _EPOCH_OFFSET = (_EPOCH_TS - _PG_EPOCH) // _ONE_US  # 0001-01-01 since 2000-01-01

    def _old_value(self, micros: int) -> dt.datetime:
        v = _EPOCH_TS + dt.timedelta(microseconds=micros)
        if self.zoned:
            return v.replace(tzinfo=dt.UTC).astimezone(_session_zone())
        return v

    def to_bytes(self, v: Any) -> bytes:
        if type(v) is Infinite:
            return _INFINITE_BYTES[v]
        return self._old_micros(v).to_bytes(8, "big")

    def from_bytes(self, b: bytes) -> Any:
        # (b"infinity" is 8 bytes long too: the words first; as a number it lies past
        # 9999-12-31, so no timestamp's bytes are a word)
        inf = _BYTES_INFINITE.get(bytes(b))
        if inf is not None:
            return inf
        if len(b) != 8:
            raise self._bad("encoding")
        i = int.from_bytes(b, "big")
        if not 0 <= i <= self._MAX:
            raise self._bad("encoding")
        return self._old_value(i)

    def to_ope(self, v: Any) -> int:
        if type(v) is Infinite:
            self._held(v)
            return 0 if v.sign < 0 else self._TOP
        return self._old_micros(v) + self._shift

    def from_ope(self, i: int) -> Any:
        if i == self._TOP or (i == 0 and self._shift):
            return INFINITY if i else NEG_INFINITY
        i -= self._shift
        if not 0 <= i <= self._MAX:
            raise self._bad("encoding")
        return self._old_value(i)

    def order_key(self, v: Any) -> Any:
        return _infinite_key(v)


class RoundedEncoding(Encoding):
    """A type with fractional digits (``time(p)``, ``timetz(p)``): a stored value is
    rounded to the column's ``p`` digits, a comparand kept to the microsecond, as
    PostgreSQL compares with the value as written."""

    def __init__(self, sql_type: SqlType) -> None:
        super().__init__(sql_type)
        p = sql_type.precision
        self.precision = 6 if p is None else p

    def coerce(self, value: Any) -> Any:
        return self._checked(value, self.precision)

    def comparand(self, value: Any) -> Any:
        return self._checked(value, 6)

    def _checked(self, value: Any, precision: int) -> Any:
        """``value`` read and rounded to ``precision`` digits (None stays None)."""
        raise NotImplementedError


class TimeEncoding(RoundedEncoding):
    """time(p): microseconds since midnight, ``00:00`` to ``24:00:00`` (which PostgreSQL
    holds and Python's ``time`` does not: ``far_datetime.END_OF_DAY``, read back as
    psycopg reads it, a ``DataError``).  Values are ``datetime.time`` and END_OF_DAY.
    (Columns made when 24:00:00 was refused hold the same numbers below it.)"""

    ope_bits = 40  # 86_400_000_000 < 2**37
    keyed_order = True  # (END_OF_DAY among times: ordered by to_ope)

    def _checked(self, value: Any, precision: int) -> Any:
        if value is None:
            return None
        if isinstance(value, dt.time):
            if value.tzinfo is not None:
                value = value.replace(tzinfo=None)  # time takes the local time of day
            micros = self._of(value)
        elif isinstance(value, dt.datetime):
            raise _type_error(self.sql_type, value)
        elif isinstance(value, str):
            micros = self._parse(value)
        elif value is far_datetime.END_OF_DAY:
            micros = far_datetime.US_PER_DAY
        else:
            raise _type_error(self.sql_type, value)
        if precision < 6:
            micros = _round_to(micros, precision)
        return self._time(micros)

    @staticmethod
    def _of(v: Any) -> int:
        if v is far_datetime.END_OF_DAY:
            return far_datetime.US_PER_DAY
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond

    @staticmethod
    def _time(micros: int) -> Any:
        if micros >= far_datetime.US_PER_DAY:
            return far_datetime.END_OF_DAY
        s, us = divmod(micros, 1_000_000)
        m, s = divmod(s, 60)
        h, m = divmod(m, 60)
        return dt.time(h, m, s, us)

    def _parse(self, text: str) -> int:
        if _ISO_TIME_RE.fullmatch(text):
            try:
                return self._of(dt.time.fromisoformat(text))
            except ValueError:
                pass
        f = datetime_input.parse(text, "time", current_session())
        if f.special is not None:
            raise InvalidDatetimeInput(
                f'invalid input syntax for type time without time zone: "{text}"'
            )
        return ((f.hour * 60 + f.minute) * 60 + f.second) * 1_000_000 + f.micro

    def to_bytes(self, v: Any) -> bytes:
        return self._of(v).to_bytes(5, "big")

    def from_bytes(self, b: bytes) -> Any:
        if len(b) != 5:
            raise self._bad("encoding")
        return self.from_ope(int.from_bytes(b, "big"))

    def to_ope(self, v: Any) -> int:
        return self._of(v)

    def from_ope(self, i: int) -> Any:
        if not 0 <= i <= far_datetime.US_PER_DAY:
            raise self._bad("encoding")
        return self._time(i)

    def order_key(self, v: Any) -> Any:
        return self._of(v)


_UUID_RE = re.compile(r"(\{)?[0-9a-fA-F]{4}(?:-?[0-9a-fA-F]{4}){7}(?(1)\})")


class UuidEncoding(Encoding):
    """uuid: the 16 bytes.  The Ord onion orders by the first 8 (``ope_exact`` False:
    the client finishes ties by all 16), as PostgreSQL compares uuids: bytewise."""

    ope_exact = False

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, uuid.UUID):
            return value
        if isinstance(value, str):
            if not _UUID_RE.fullmatch(value):
                raise InvalidTextInput(f'invalid input syntax for type uuid: "{value}"')
            return uuid.UUID(value.strip("{}").replace("-", ""))
        raise _type_error(self.sql_type, value)

    def to_bytes(self, v: uuid.UUID) -> bytes:
        return v.bytes

    def from_bytes(self, b: bytes) -> uuid.UUID:
        if len(b) != 16:
            raise self._bad("encoding")
        return uuid.UUID(bytes=bytes(b))

    def to_ope(self, v: uuid.UUID) -> int:
        return int.from_bytes(v.bytes[:8], "big")

    def order_key(self, v: uuid.UUID) -> bytes:
        return v.bytes


_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


class InvalidHexData(EncodingError, pg_errors.InvalidParameterValue):
    """bytea hex input with a bad digit or an odd number of them (22023, as PostgreSQL)."""


def _bytea_hex(body: str) -> bytes:
    """PostgreSQL's hex bytea input after ``\\x``: pairs of digits, whitespace between
    pairs."""
    digits = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c in " \t\n\r":
            i += 1
            continue
        if c not in _HEX_DIGITS:
            raise InvalidHexData(f'invalid hexadecimal digit: "{c}"')
        if i + 1 >= n:
            raise InvalidHexData("invalid hexadecimal data: odd number of digits")
        if body[i + 1] not in _HEX_DIGITS:
            raise InvalidHexData(f'invalid hexadecimal digit: "{body[i + 1]}"')
        digits.append(body[i : i + 2])
        i += 2
    return bytes.fromhex("".join(digits))


_BYTEA_ESCAPE_RE = re.compile(r"\\\\|\\[0-3][0-7]{2}")


class ByteaEncoding(Encoding):
    """bytea: the bytes.  The Ord onion orders by the first 8 (``ope_exact`` False: the
    client finishes ties by the whole value), as PostgreSQL compares bytea: bytewise,
    a prefix first.  A string is read as PostgreSQL's bytea input reads it (hex
    ``\\x4142``, or the escape format)."""

    ope_exact = False
    PREFIX: ClassVar[int] = 8

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, bytes | bytearray | memoryview):
            return bytes(value)
        if isinstance(value, str):
            return self._parse(value)
        raise _type_error(self.sql_type, value)

    @staticmethod
    def _parse(text: str) -> bytes:
        if text.startswith("\\x"):
            return _bytea_hex(text[2:])
        out = bytearray()
        i = 0
        raw = text.encode("utf-8")
        while i < len(raw):
            if raw[i] != 0x5C:  # backslash
                out.append(raw[i])
                i += 1
                continue
            m = _BYTEA_ESCAPE_RE.match(raw[i:].decode("latin-1"))
            if m is None:
                raise InvalidTextInput("invalid input syntax for type bytea")
            piece = m.group(0)
            out.append(0x5C if piece == "\\\\" else int(piece[1:], 8))
            i += len(piece)
        return bytes(out)

    def to_bytes(self, v: bytes) -> bytes:
        return v

    def from_bytes(self, b: bytes) -> bytes:
        return bytes(b)

    def to_ope(self, v: bytes) -> int:
        return int.from_bytes(v[: self.PREFIX].ljust(self.PREFIX, b"\0"), "big")

    def order_key(self, v: bytes) -> bytes:
        return v


_fraction_text = datetime_output.fraction_text
_offset_text = datetime_output.offset_text


# the text output of values of composite types, by Python type, filled by their modules
# (array_encoding: lists)
COMPOSITE_TEXT: dict[type, Callable[[Any], str]] = {}


def session_datestyle() -> str:
    """The DateStyle of the session running the current statement (as the server reports
    it: no round trip); PostgreSQL's default where none runs."""
    return text_output.current().datestyle


def pg_text(v: Any) -> str | None:
    """A value's text as PostgreSQL prints it under the session's output settings
    (``text_output.current()``: DateStyle, IntervalStyle, extra_float_digits,
    bytea_output): what COPY ... TO and a text result show.  A float is printed as a
    double precision (``text_output.float4_text`` prints a real).  ``None`` is NULL."""
    if v is None:
        return None
    for kind, out in COMPOSITE_TEXT.items():
        if isinstance(v, kind):
            return out(v)
    if isinstance(v, bool):
        return "t" if v else "f"
    if isinstance(v, dt.datetime):
        return datetime_output.text(v, text_output.current().datestyle)
    if isinstance(v, dt.time):
        clock = f"{v.hour:02d}:{v.minute:02d}:{v.second:02d}" + _fraction_text(v.microsecond)
        return clock + _offset_text(v.utcoffset())  # (timetz: with its zone)
    if isinstance(v, dt.timedelta):
        from .interval_encoding import PgInterval, interval_text

        fields = PgInterval(0, v.days, v.seconds * 1_000_000 + v.microseconds)
        return interval_text(fields, text_output.current().intervalstyle)
    if isinstance(v, dt.date):
        return datetime_output.text(v, text_output.current().datestyle)
    if isinstance(v, bytes | bytearray | memoryview):
        return text_output.bytea_text(bytes(v), text_output.current().bytea_output)
    if isinstance(v, Decimal):
        if v.is_nan():
            return "NaN"
        if v.is_infinite():
            return "-Infinity" if v.is_signed() else "Infinity"
        return format(v, "f")
    fmt = TEXT_FORMATS.get(type(v))
    if fmt is not None:
        return fmt(v)
    if isinstance(v, float):
        return text_output.float8_text(v, text_output.current().extra_float_digits)
    return str(v)


_BOOL_WORDS = {"true": True, "false": False, "yes": True, "no": False}


class BoolEncoding(Encoding):
    """boolean: one byte, false 0 and true 1 (false < true, as in PostgreSQL)."""

    ope_bits = 8

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, bool):
            return value
        if isinstance(value, str):
            v = _parse_bool(value.strip().lower())
            if v is not None:
                return v
            raise InvalidTextInput("invalid input syntax for type boolean")
        raise _type_error(self.sql_type, value)

    def to_bytes(self, v: bool) -> bytes:
        return b"\x01" if v else b"\x00"

    def from_bytes(self, b: bytes) -> bool:
        if len(b) != 1:
            raise self._bad("encoding")
        return self.from_ope(b[0])

    def to_ope(self, v: bool) -> int:
        return 1 if v else 0

    def from_ope(self, i: int) -> bool:
        if i not in (0, 1):
            raise self._bad("encoding")
        return i == 1


def _parse_bool(s: str) -> bool | None:
    """PostgreSQL's boolean input: a prefix of true/false/yes/no, on/off, 1/0."""
    if s in ("1", "0"):
        return s == "1"
    if s in ("on", "off", "of"):
        return s == "on"
    if s:
        for word, v in _BOOL_WORDS.items():
            if word.startswith(s):
                return v
    return None


# the encodings of composite types (arrays), by SqlType name: factory(type, collation of
# its text elements or None), filled by their modules (array_encoding)
COMPOSITE_ENCODINGS: dict[str, Callable[[SqlType, Collation | None], Encoding]] = {}


@lru_cache(maxsize=512)
def _composite(t: SqlType, collation: Collation | None) -> Encoding:
    factory = COMPOSITE_ENCODINGS.get(t.name)
    if factory is None:
        raise ConfigError(f"no encoding for type {t.sql()!r}")
    return factory(t, collation)


@lru_cache(maxsize=512)
def _encoding(t: SqlType) -> Encoding:
    n = t.name
    if t.element is not None:
        return _composite(t, None)
    if n == "smallint":
        return IntEncoding(t, 16)
    if n == "integer":
        return IntEncoding(t, 32)
    if n == "bigint":
        return IntEncoding(t, 64)
    if n == "numeric":
        return NumericEncoding(t) if t.precision is not None else FreeNumericEncoding(t)
    if n == "real":
        return FloatEncoding(t, 32)
    if n == "double precision":
        return FloatEncoding(t, 64)
    if n in ("varchar", "text", "char"):
        return TextEncoding(t)
    if n == "date":
        return PythonDateEncoding(t) if t.python_years else DateEncoding(t)
    if n in ("timestamp", "timestamptz"):
        return PythonTimestampEncoding(t) if t.python_years else TimestampEncoding(t)
    if n == "time":
        return TimeEncoding(t)
    if n == "uuid":
        return UuidEncoding(t)
    if n == "bytea":
        return ByteaEncoding(t)
    if n == "boolean":
        return BoolEncoding(t)
    if n in ("json", "jsonb"):
        from .json_encoding import json_encoding  # (it imports this module)

        return json_encoding(t)
    if n in ("interval", "timetz"):
        from .interval_encoding import ENCODINGS

        return ENCODINGS[n](t)
    if n in REGISTERED:
        return REGISTERED[n](t)
    raise ConfigError(f"no encoding for type {t.sql()!r}")


@lru_cache(maxsize=512)
def _collated(t: SqlType, collation: Collation) -> Encoding:
    if t.name == "jsonb":  # its strings order by the database's collation
        from .json_encoding import json_encoding

        return json_encoding(t, collation)
    return CollatedTextEncoding(t, collation)


_COLLATED_TYPES = TEXT_TYPES | {"jsonb"}


def encoding_for(t: SqlType | str, collation: Collation | None = None) -> Encoding:
    """The (shared, immutable) encoding of a column type; a text type under a collation
    other than C orders by that collation (None: byte order, a column created before
    collations were recorded)."""
    parsed = parse_sql_type(t) if isinstance(t, str) else t
    own = parsed.own_encoding()
    if own is not None:
        return own
    if parsed.element is not None and collation is not None and not collation.bytewise:
        return _composite(parsed, collation)
    if collation is not None and not collation.bytewise and parsed.name in _COLLATED_TYPES:
        return _collated(parsed, collation)
    return _encoding(parsed)


for _far in (far_datetime.PgDate, far_datetime.PgTimestamp, far_datetime.EndOfDay):
    TEXT_FORMATS[_far] = far_datetime.text_of

# (last: these modules import this one, and add their types to REGISTERED)
from . import bit_encodings, network_encodings  # noqa: E402, F401
