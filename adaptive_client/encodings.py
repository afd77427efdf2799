"""Encodings: SQL values ↔ the bytes (DET/RND), integers (OPE, HOM) the schemes take.

| SQL type            | onions                 | OPE domain                                   |
|---------------------|------------------------|----------------------------------------------|
| smallint            | Eq, Ord, Sum           | 16 bits (value + 2**15)                      |
| integer             | Eq, Ord, Sum           | 32 bits (value + 2**31)                      |
| bigint              | Eq, Ord, Sum           | 64 bits (value + 2**63)                      |
| numeric(p,s)        | Eq, Ord, Sum           | value·10**s + 10**p, bits for 2·10**p        |
| numeric (no p)      | Eq                     | -                                            |
| real                | Eq, Ord                | 32 bits, IEEE-754 sign-flip order            |
| double precision    | Eq, Ord                | 64 bits, IEEE-754 sign-flip order            |
| varchar/text/char   | Eq, Ord*, Search       | first 8 UTF-8 bytes (*prefix order only)     |
| date                | Eq, Ord                | days since 0001-01-01 (32 bits)              |
| timestamp           | Eq, Ord                | µs since 0001-01-01 00:00 (64 bits)          |
| boolean             | Eq, Ord                | 8 bits                                       |

NULL stays NULL in every onion (callers never pass None to the encoders): the provider
learns which values are NULL.  Strings order bytewise (the C collation of the embedded
cluster); char(n) compares ignoring trailing spaces, as PostgreSQL does.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import struct
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from .errors import ConfigError, EncodingError, ValueOutOfDomain

_EPOCH_DATE = dt.date(1, 1, 1)
_EPOCH_TS = dt.datetime(1, 1, 1)


@dataclass(frozen=True)
class SqlType:
    name: str
    precision: int | None = None
    scale: int | None = None

    def sql(self) -> str:
        if self.name == "numeric" and self.precision is not None:
            return f"numeric({self.precision},{self.scale or 0})"
        if self.name in ("varchar", "char") and self.precision is not None:
            return f"{self.name}({self.precision})"
        return self.name


_ALIASES = {
    "int": "integer",
    "int4": "integer",
    "integer": "integer",
    "int2": "smallint",
    "smallint": "smallint",
    "int8": "bigint",
    "bigint": "bigint",
    "numeric": "numeric",
    "decimal": "numeric",
    "real": "real",
    "float4": "real",
    "double precision": "double precision",
    "float8": "double precision",
    "float": "double precision",
    "double": "double precision",
    "varchar": "varchar",
    "character varying": "varchar",
    "text": "text",
    "char": "char",
    "character": "char",
    "bpchar": "char",
    "date": "date",
    "timestamp": "timestamp",
    "timestamp without time zone": "timestamp",
    "datetime": "timestamp",
    "boolean": "boolean",
    "bool": "boolean",
}
_TYPE_RE = re.compile(r"^\s*([a-z][a-z0-9 ]*?)\s*(?:\(\s*(\d+)\s*(?:,\s*(-?\d+)\s*)?\))?\s*$")


def parse_sql_type(text: str) -> SqlType:
    m = _TYPE_RE.match(text.lower())
    if not m or m.group(1) not in _ALIASES:
        raise ConfigError(f"unsupported column type {text!r}")
    name = _ALIASES[m.group(1)]
    p = int(m.group(2)) if m.group(2) else None
    s = int(m.group(3)) if m.group(3) else None
    if name == "numeric" and p is not None:
        s = s or 0
        if not 1 <= p <= 1000 or not 0 <= s <= p:
            raise ConfigError(f"invalid numeric precision/scale in {text!r}")
    if name in ("varchar", "char") and p is None and name == "char":
        p = 1
    if name not in ("numeric", "varchar", "char") and p is not None:
        if name == "double precision" or name == "real":
            p = None
        elif name != "timestamp":
            raise ConfigError(f"type {name} takes no length: {text!r}")
        else:
            p = None
    return SqlType(name, p, s)


class Encoding:
    """Encoders for one SQL type (see the table above)."""

    onions: frozenset[str] = frozenset({"Eq", "Ord"})
    ope_bits: int = 64
    ope_exact: bool = True

    def __init__(self, sql_type: SqlType) -> None:
        self.sql_type = sql_type

    def coerce(self, value: Any) -> Any:
        raise NotImplementedError

    def to_bytes(self, v: Any) -> bytes:
        raise NotImplementedError

    def from_bytes(self, b: bytes) -> Any:
        raise NotImplementedError

    def to_ope(self, v: Any) -> int:
        raise NotImplementedError

    def from_ope(self, i: int) -> Any:
        raise EncodingError(f"{self.sql_type.sql()} cannot be decrypted from its Ord onion")

    def to_hom(self, v: Any) -> int:
        raise EncodingError(f"{self.sql_type.sql()} has no Sum onion")

    def from_hom_sum(self, i: int) -> Any:
        raise EncodingError(f"{self.sql_type.sql()} has no Sum onion")


class IntEncoding(Encoding):
    onions = frozenset({"Eq", "Ord", "Sum"})

    def __init__(self, sql_type: SqlType, bits: int) -> None:
        super().__init__(sql_type)
        self.ope_bits = bits
        self._lo, self._hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        self._width = bits // 8

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, bool):
            raise EncodingError(f"{self.sql_type.name} does not take a boolean")
        if isinstance(value, int):
            v = value
        elif isinstance(value, Decimal | float):
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueOutOfDomain(f"{value!r} is out of range for {self.sql_type.name}")
            v = int(Decimal(value).quantize(Decimal(1), rounding=ROUND_HALF_UP))
        elif isinstance(value, str):
            try:
                v = int(value.strip())
            except ValueError:
                raise EncodingError(f"invalid input for {self.sql_type.name}: {value!r}") from None
        else:
            raise EncodingError(f"{self.sql_type.name} does not take {type(value).__name__}")
        if not self._lo <= v <= self._hi:
            raise ValueOutOfDomain(f"value out of range for {self.sql_type.name}")
        return v

    def to_bytes(self, v: int) -> bytes:
        return v.to_bytes(self._width, "big", signed=True)

    def from_bytes(self, b: bytes) -> int:
        if len(b) != self._width:
            raise EncodingError(f"bad {self.sql_type.name} encoding")
        return int.from_bytes(b, "big", signed=True)

    def to_ope(self, v: int) -> int:
        return v - self._lo

    def from_ope(self, i: int) -> int:
        return i + self._lo

    def to_hom(self, v: int) -> int:
        return v

    def from_hom_sum(self, i: int) -> Any:
        # SUM(smallint/integer) is bigint (int in Python); SUM(bigint) is numeric
        return Decimal(i) if self.sql_type.name == "bigint" else i


class NumericEncoding(Encoding):
    onions = frozenset({"Eq", "Ord", "Sum"})

    def __init__(self, sql_type: SqlType) -> None:
        super().__init__(sql_type)
        self.p = sql_type.precision or 0
        self.s = sql_type.scale or 0
        self._limit = 10**self.p
        self.ope_bits = (2 * self._limit).bit_length()
        self._quantum = Decimal(1).scaleb(-self.s)
        self._width = (self.ope_bits + 8) // 8

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, bool):
            raise EncodingError("numeric does not take a boolean")
        if isinstance(value, float):
            value = repr(value)  # PostgreSQL converts float8 via its shortest text form
        try:
            d = Decimal(value.strip()) if isinstance(value, str) else Decimal(value)
        except (InvalidOperation, TypeError):
            raise EncodingError(f"invalid input for numeric: {value!r}") from None
        if not d.is_finite():
            raise ValueOutOfDomain("NaN and infinities are outside numeric(p,s)")
        d = d.quantize(self._quantum, rounding=ROUND_HALF_UP)
        if abs(d.scaleb(self.s)) >= self._limit:
            raise ValueOutOfDomain(f"numeric field overflow for {self.sql_type.sql()}")
        return d

    def _scaled(self, v: Decimal) -> int:
        return int(v.scaleb(self.s))

    def to_bytes(self, v: Decimal) -> bytes:
        return self._scaled(v).to_bytes(self._width, "big", signed=True)

    def from_bytes(self, b: bytes) -> Decimal:
        return Decimal(int.from_bytes(b, "big", signed=True)).scaleb(-self.s)

    def to_ope(self, v: Decimal) -> int:
        return self._scaled(v) + self._limit

    def from_ope(self, i: int) -> Decimal:
        return Decimal(i - self._limit).scaleb(-self.s)

    def to_hom(self, v: Decimal) -> int:
        return self._scaled(v)

    def from_hom_sum(self, i: int) -> Decimal:
        return Decimal(i).scaleb(-self.s)


class FreeNumericEncoding(Encoding):
    """numeric without precision: equality only (no finite OPE domain)."""

    onions = frozenset({"Eq"})

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        try:
            d = Decimal(value.strip()) if isinstance(value, str) else Decimal(value)
        except (InvalidOperation, TypeError):
            raise EncodingError(f"invalid input for numeric: {value!r}") from None
        return d

    def to_bytes(self, v: Decimal) -> bytes:
        return str(v.normalize() if v != 0 else Decimal(0)).encode()

    def from_bytes(self, b: bytes) -> Decimal:
        return Decimal(b.decode())

    def to_ope(self, v: Any) -> int:
        raise EncodingError("numeric without precision has no Ord onion: declare numeric(p,s)")


class FloatEncoding(Encoding):
    def __init__(self, sql_type: SqlType, bits: int) -> None:
        super().__init__(sql_type)
        self.ope_bits = bits
        self._fmt = ">f" if bits == 32 else ">d"
        self._int = ">I" if bits == 32 else ">Q"

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, bool):
            raise EncodingError(f"{self.sql_type.name} does not take a boolean")
        try:
            f = float(value)
        except (TypeError, ValueError):
            raise EncodingError(f"invalid input for {self.sql_type.name}: {value!r}") from None
        if math.isnan(f):
            raise ValueOutOfDomain("NaN is outside the encrypted float domain")
        if self.ope_bits == 32:
            try:
                f = struct.unpack(">f", struct.pack(">f", f))[0]
            except OverflowError:
                raise ValueOutOfDomain("value out of range for real") from None
        return 0.0 if f == 0 else f

    def to_bytes(self, v: float) -> bytes:
        return struct.pack(self._fmt, 0.0 if v == 0 else v)

    def from_bytes(self, b: bytes) -> float:
        return float(struct.unpack(self._fmt, b)[0])

    def to_ope(self, v: float) -> int:
        (u,) = struct.unpack(self._int, self.to_bytes(v))
        top = 1 << (self.ope_bits - 1)
        return u ^ ((1 << self.ope_bits) - 1) if u & top else u | top

    def from_ope(self, i: int) -> float:
        top = 1 << (self.ope_bits - 1)
        u = i & ~top if i & top else i ^ ((1 << self.ope_bits) - 1)
        return self.from_bytes(struct.pack(self._int, u))


class TextEncoding(Encoding):
    onions = frozenset({"Eq", "Ord", "Search"})
    ope_exact = False
    PREFIX = 8

    def __init__(self, sql_type: SqlType) -> None:
        super().__init__(sql_type)
        self.ope_bits = 8 * self.PREFIX
        self._char = sql_type.name == "char"

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, str):
            if isinstance(value, int | Decimal | float) and not isinstance(value, bool):
                value = str(value)
            else:
                raise EncodingError(f"{self.sql_type.sql()} takes str, not {type(value).__name__}")
        if "\x00" in value:
            raise EncodingError("strings cannot contain NUL characters")
        n = self.sql_type.precision
        if self._char:
            value = value.rstrip(" ")
            if n is not None and len(value) > n:
                raise ValueOutOfDomain(f"value too long for type character({n})")
            return value.ljust(n or 1)
        if n is not None and len(value) > n:
            if value[n:].strip(" ") == "":
                return value[:n]  # PostgreSQL truncates trailing spaces silently
            raise ValueOutOfDomain(f"value too long for type character varying({n})")
        return value

    def to_bytes(self, v: str) -> bytes:
        return (v.rstrip(" ") if self._char else v).encode("utf-8")

    def from_bytes(self, b: bytes) -> str:
        s = b.decode("utf-8")
        return s.ljust(self.sql_type.precision or 1) if self._char else s

    def to_ope(self, v: str) -> int:
        return int.from_bytes(self.to_bytes(v)[: self.PREFIX].ljust(self.PREFIX, b"\x00"), "big")


class DateEncoding(Encoding):
    ope_bits = 32

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, dt.datetime):
            raise EncodingError("date does not take a datetime")
        if isinstance(value, dt.date):
            return value
        if isinstance(value, str):
            try:
                return dt.date.fromisoformat(value.strip())
            except ValueError:
                raise EncodingError(f"invalid input for date: {value!r}") from None
        raise EncodingError(f"date does not take {type(value).__name__}")

    def to_bytes(self, v: dt.date) -> bytes:
        return v.toordinal().to_bytes(4, "big")

    def from_bytes(self, b: bytes) -> dt.date:
        return dt.date.fromordinal(int.from_bytes(b, "big"))

    def to_ope(self, v: dt.date) -> int:
        return v.toordinal()

    def from_ope(self, i: int) -> dt.date:
        return dt.date.fromordinal(i)


class TimestampEncoding(Encoding):
    ope_bits = 64

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, dt.datetime):
            if value.tzinfo is not None:
                raise EncodingError("timestamp (without time zone) does not take an aware datetime")
            return value
        if isinstance(value, dt.date):
            return dt.datetime(value.year, value.month, value.day)
        if isinstance(value, str):
            try:
                return dt.datetime.fromisoformat(value.strip())
            except ValueError:
                raise EncodingError(f"invalid input for timestamp: {value!r}") from None
        raise EncodingError(f"timestamp does not take {type(value).__name__}")

    def _micros(self, v: dt.datetime) -> int:
        d = v - _EPOCH_TS
        return (d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds

    def to_bytes(self, v: dt.datetime) -> bytes:
        return self._micros(v).to_bytes(8, "big")

    def from_bytes(self, b: bytes) -> dt.datetime:
        return _EPOCH_TS + dt.timedelta(microseconds=int.from_bytes(b, "big"))

    def to_ope(self, v: dt.datetime) -> int:
        return self._micros(v)

    def from_ope(self, i: int) -> dt.datetime:
        return _EPOCH_TS + dt.timedelta(microseconds=i)


class BoolEncoding(Encoding):
    ope_bits = 8

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in (
            "t",
            "true",
            "f",
            "false",
            "yes",
            "no",
            "1",
            "0",
            "on",
            "off",
        ):
            return value.strip().lower() in ("t", "true", "yes", "1", "on")
        raise EncodingError(f"boolean does not take {value!r}")

    def to_bytes(self, v: bool) -> bytes:
        return b"\x01" if v else b"\x00"

    def from_bytes(self, b: bytes) -> bool:
        if b not in (b"\x00", b"\x01"):
            raise EncodingError("bad boolean encoding")
        return b == b"\x01"

    def to_ope(self, v: bool) -> int:
        return int(v)

    def from_ope(self, i: int) -> bool:
        return bool(i)


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
    raise ConfigError(f"no encoding for {t.sql()}")


def encoding_for(t: SqlType | str) -> Encoding:
    return _encoding(parse_sql_type(t) if isinstance(t, str) else t)
