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
| date                | Eq, Ord           | 32 bits: day number (0001-01-01 is day 1)        |
| timestamp           | Eq, Ord           | 64 bits: µs since 0001-01-01 00:00               |
| boolean             | Eq, Ord           | 8 bits: false 0, true 1                          |

(*) Strings: the Ord onion orders by an 8-byte prefix only (``ope_exact`` is False), so
equal prefixes tie and the client finishes the sort; it cannot be decrypted.  Under the
C collation the prefix is that of the UTF-8 bytes (code point order); under another
collation (ICU or libc, recorded per column) that of the primary weights of the
collator's sort key (``CollatedTextEncoding``, ``collation``).
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
PostgreSQL.  Not supported: ``±infinity`` dates and timestamps, dates outside
0001-01-01 … 9999-12-31 (Python's range), time zone offsets for ``timestamp``
(``EncodingError``).

``coerce`` has *storage* semantics (an INSERT or UPDATE value): it rounds (``2.5`` into
an integer column) and refuses values out of the column's domain.  A comparison such as
``int_col = 2.5`` or ``varchar3_col = 'abcd'`` is not a storage; callers must not coerce
its literal blindly (the predicate is simply false for such values in PostgreSQL).
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
import struct
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from functools import lru_cache
from typing import Any, ClassVar

from .clock import SessionTimestamp
from .collation import Collation, order_key, primary_prefix
from .errors import (
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


# --- SQL types ----------------------------------------------------------------------------


@dataclass(frozen=True)
class SqlType:
    """A parsed column type.

    ``name`` is canonical (smallint, integer, bigint, numeric, real, double precision,
    varchar, text, char, date, timestamp, boolean); ``precision`` is numeric's p or the
    length of varchar/char (None: unbounded); ``scale`` is numeric's s.
    """

    name: str
    precision: int | None = None
    scale: int | None = None

    def sql(self) -> str:
        if self.name == "numeric" and self.precision is not None:
            return f"numeric({self.precision},{self.scale or 0})"
        if self.name in ("varchar", "char") and self.precision is not None:
            return f"{self.name}({self.precision})"
        if self.name == "char":
            return "bpchar"  # blank-padded char without a length limit
        return self.name


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
}
_TYPE_RE = re.compile(r"([a-z][a-z0-9 ]*?) ?(?:\( ?(\d+) ?(?:, ?(-?\d+) ?)?\))?")
_TIMESTAMP_RE = re.compile(r"timestamp ?(?:\( ?(\d+) ?\))?(?: without time zone)?")
_MAX_VARCHAR = 10_485_760


def parse_sql_type(text: str) -> SqlType:
    """Parse a column type as written in DDL; unsupported types raise ConfigError."""
    norm = " ".join(str(text).lower().split())
    ts = _TIMESTAMP_RE.fullmatch(norm)
    if ts:
        if ts.group(1) is not None and int(ts.group(1)) != 6:
            raise ConfigError(f"unsupported column type {text!r}: only timestamp(6) precision")
        return SqlType("timestamp")
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
    if a is not None:
        raise ConfigError(f"type {name} takes no modifier: {text!r}")
    return SqlType(name)


# --- helpers ------------------------------------------------------------------------------

_INT_RE = re.compile(r"[ \t\n\r\f\v]*[+-]?[0-9]+[ \t\n\r\f\v]*")
_NUM_RE = re.compile(
    r"[ \t\n\r\f\v]*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[ \t\n\r\f\v]*"
)
_INF_RE = re.compile(r"[ \t\n\r\f\v]*([+-]?)inf(?:inity)?[ \t\n\r\f\v]*", re.IGNORECASE)
_NAN_RE = re.compile(r"[ \t\n\r\f\v]*[+-]?nan[ \t\n\r\f\v]*", re.IGNORECASE)
_NUMERIC_NAN_RE = re.compile(r"[ \t\n\r\f\v]*nan[ \t\n\r\f\v]*", re.IGNORECASE)


def _type_error(t: SqlType, value: Any) -> EncodingError:
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

    def __init__(self, sql_type: SqlType) -> None:
        self.sql_type = sql_type

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.sql_type.sql()})"

    def coerce(self, value: Any) -> Any:
        """The value PostgreSQL would store for ``value`` (``None`` stays ``None``)."""
        raise NotImplementedError

    def to_bytes(self, v: Any) -> bytes:
        """Canonical, injective bytes: values equal under SQL ``=`` give equal bytes."""
        raise NotImplementedError

    def from_bytes(self, b: bytes) -> Any:
        raise NotImplementedError

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
        return int(struct.unpack(self._ufmt, packed)[0])

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


def _shortest_single(x: float) -> float:
    """A float4 value as psycopg returns it: the double nearest PostgreSQL's shortest
    decimal text for it (``0.1``, not ``0.10000000149011612``)."""
    if x == 0 or not math.isfinite(x):
        return x
    for digits in range(1, 10):
        y = float(format(x, f".{digits}g"))
        try:
            if struct.unpack(">f", struct.pack(">f", y))[0] == x:
                return y
        except OverflowError:
            continue
    return x


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
        n = self._n
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


class DateEncoding(Encoding):
    """date: the proleptic Gregorian day number (``date.toordinal``)."""

    ope_bits = 32
    _MAX = dt.date.max.toordinal()

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, SessionTimestamp):
            return value.date()  # now() assigned to a date: the session's local date
        if isinstance(value, dt.datetime):
            raise EncodingError("date does not take a datetime (pass .date())")
        if isinstance(value, dt.date):
            return value
        if isinstance(value, str):
            try:
                return dt.date.fromisoformat(value.strip())
            except ValueError:
                raise InvalidDatetimeInput("invalid input syntax for type date") from None
        raise _type_error(self.sql_type, value)

    def to_bytes(self, v: dt.date) -> bytes:
        return v.toordinal().to_bytes(4, "big")

    def from_bytes(self, b: bytes) -> dt.date:
        if len(b) != 4:
            raise self._bad("encoding")
        return self.from_ope(int.from_bytes(b, "big"))

    def to_ope(self, v: dt.date) -> int:
        return v.toordinal()

    def from_ope(self, i: int) -> dt.date:
        if not 1 <= i <= self._MAX:
            raise self._bad("encoding")
        return dt.date.fromordinal(i)


_FRACTION_RE = re.compile(r"(\d\d:\d\d:\d\d)\.(\d{7,})")


class TimestampEncoding(Encoding):
    """timestamp (without time zone): microseconds since 0001-01-01 00:00."""

    ope_bits = 64
    _MAX = (dt.datetime.max - _EPOCH_TS) // dt.timedelta(microseconds=1)

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, SessionTimestamp):
            # now() assigned to a timestamp: the session's local time, as PostgreSQL
            return dt.datetime.combine(value.date(), value.time())
        if isinstance(value, dt.datetime):
            if value.tzinfo is not None:
                raise EncodingError("timestamp (without time zone) takes naive datetimes")
            return value
        if isinstance(value, dt.date):
            return dt.datetime(value.year, value.month, value.day)
        if isinstance(value, str):
            return self._parse(value.strip())
        raise _type_error(self.sql_type, value)

    @staticmethod
    def _parse(text: str) -> dt.datetime:
        extra = 0
        m = _FRACTION_RE.search(text)
        if m:  # more than microsecond precision: PostgreSQL rounds (rint)
            extra = round(float("0." + m.group(2)) * 1e6)
            text = text[: m.start()] + m.group(1) + text[m.end() :]
        try:
            v = dt.datetime.fromisoformat(text)
        except ValueError:
            raise InvalidDatetimeInput("invalid input syntax for type timestamp") from None
        if v.tzinfo is not None:
            raise EncodingError("timestamp (without time zone) takes no time zone offset")
        try:
            return v + dt.timedelta(microseconds=extra)
        except OverflowError:
            raise DatetimeOutOfRange("timestamp out of range") from None

    @staticmethod
    def _micros(v: dt.datetime) -> int:
        return (v - _EPOCH_TS) // dt.timedelta(microseconds=1)

    def to_bytes(self, v: dt.datetime) -> bytes:
        return self._micros(v).to_bytes(8, "big")

    def from_bytes(self, b: bytes) -> dt.datetime:
        if len(b) != 8:
            raise self._bad("encoding")
        return self.from_ope(int.from_bytes(b, "big"))

    def to_ope(self, v: dt.datetime) -> int:
        return self._micros(v)

    def from_ope(self, i: int) -> dt.datetime:
        if not 0 <= i <= self._MAX:
            raise self._bad("encoding")
        return _EPOCH_TS + dt.timedelta(microseconds=i)


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


@lru_cache(maxsize=512)
def _encoding(t: SqlType) -> Encoding:
    n = t.name
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
        return DateEncoding(t)
    if n == "timestamp":
        return TimestampEncoding(t)
    if n == "boolean":
        return BoolEncoding(t)
    raise ConfigError(f"no encoding for type {t.sql()!r}")


@lru_cache(maxsize=512)
def _collated(t: SqlType, collation: Collation) -> Encoding:
    return CollatedTextEncoding(t, collation)


def encoding_for(t: SqlType | str, collation: Collation | None = None) -> Encoding:
    """The (shared, immutable) encoding of a column type; a text type under a collation
    other than C orders by that collation (None: byte order, a column created before
    collations were recorded)."""
    parsed = parse_sql_type(t) if isinstance(t, str) else t
    if collation is not None and not collation.bytewise and parsed.name in TEXT_TYPES:
        return _collated(parsed, collation)
    return _encoding(parsed)
