"""The encodings of the numeric types: smallint, integer, bigint, numeric(p,s),
numeric, real and double precision (see the table in ``encodings``).

Integers are two's complement bytes, their Ord onion the value offset by half the
domain, their Sum onion the value; numeric(p,s) is the integer value·10**s (NaN just
past the largest); numeric without precision has an Eq onion only (its normalized
decimal text); floats are their IEEE-754 bits, ordered by flipping the sign bit.  A
real is held as the double nearest PostgreSQL's shortest text for the float4
(``single_of`` gives the float4 back).
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from functools import partial
from typing import Any

from ..errors import InvalidTextInput, NumericOutOfRange, ValueOutOfDomain
from .encoding_base import (
    EQ,
    EXACT,
    NATIVE_INT,
    NATIVE_NUMERIC,
    NO_NATIVE_FORM,
    ORD,
    REGISTERED,
    SUM,
    Encoding,
    NativeForm,
    SqlType,
    type_error,
)

_ONE = Decimal(1)

_INT_RE = re.compile(r"[ \t\n\r\f\v]*[+-]?[0-9]+[ \t\n\r\f\v]*")
_NUM_RE = re.compile(
    r"[ \t\n\r\f\v]*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[ \t\n\r\f\v]*"
)
_INF_RE = re.compile(r"[ \t\n\r\f\v]*([+-]?)inf(?:inity)?[ \t\n\r\f\v]*", re.IGNORECASE)
_NAN_RE = re.compile(r"[ \t\n\r\f\v]*[+-]?nan[ \t\n\r\f\v]*", re.IGNORECASE)
_NUMERIC_NAN_RE = re.compile(r"[ \t\n\r\f\v]*nan[ \t\n\r\f\v]*", re.IGNORECASE)


def _decimal_from(t: SqlType, value: Any) -> Decimal:
    """A value for a numeric column as a (possibly non-finite) Decimal, PostgreSQL-style."""
    if isinstance(value, bool) or value is None:
        raise type_error(t, value)
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
    raise type_error(t, value)


_NAN = Decimal("NaN")


def _nan_last(v: Any) -> tuple[int, Any]:
    """An order key putting NaN above every number, as PostgreSQL orders numeric and
    float NaN (equal to itself)."""
    return (1, 0) if v != v else (0, v)


def _scaled_decimal(i: int, scale: int) -> Decimal:
    """``i · 10**-scale`` exactly, with exponent ``-scale`` (how psycopg returns numeric)."""
    return Decimal(i).scaleb(-scale, EXACT)


def _exponent(d: Decimal) -> int:
    """The exponent of a finite Decimal."""
    return int(d.as_tuple().exponent)


def _pg_round_away(d: Decimal, quantum: Decimal) -> Decimal:
    q = d.quantize(quantum, rounding=ROUND_HALF_UP, context=EXACT)
    return q.copy_abs() if q.is_zero() else q  # PostgreSQL's numeric has no -0


def negated(d: Decimal) -> Decimal:
    """``-d`` as numeric's unary minus makes it: exact (Python's ``-d`` rounds to its
    context's 28 digits), NaN and zero unsigned (PostgreSQL's numeric has no -0)."""
    return d if d.is_nan() or d.is_zero() else d.copy_negate()


def exact_sum(values: Iterable[Decimal]) -> Decimal:
    """The sum of numerics, exact (Python's ``sum`` rounds to 28 digits); Infinity and
    -Infinity sum to NaN, as PostgreSQL's."""
    total = Decimal(0)
    for v in values:
        try:
            total = EXACT.add(total, v)
        except InvalidOperation:  # (Infinity + -Infinity)
            return _NAN
    return total


# --- encodings ----------------------------------------------------------------------------


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
            raise type_error(self.sql_type, value)
        if isinstance(value, int):
            v = value
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise NumericOutOfRange(f"{name} out of range")
            v = round(value)  # float to integer rounds half to even (rint)
        elif isinstance(value, Decimal):
            if not value.is_finite():
                raise ValueOutOfDomain(f"cannot convert {value} to {name}")
            v = int(value.quantize(_ONE, rounding=ROUND_HALF_UP, context=EXACT))
        elif isinstance(value, str):
            if not _INT_RE.fullmatch(value):
                raise InvalidTextInput(f'invalid input syntax for type {name}: "{value}"')
            v = int(value)
            if not self._lo <= v <= self._hi:  # (the input function's own message)
                raise NumericOutOfRange(f'value "{value}" is out of range for type {name}')
        else:
            raise type_error(self.sql_type, value)
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

    def native_form(self) -> NativeForm:
        return (NATIVE_INT, self._width, 0, 0)

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
        self._limit = self.hom_bound = 10**self.p
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
            raise self._overflow(infinite=True)
        q = _pg_round_away(d, self._quantum)
        x = int(q.scaleb(self.s, EXACT))  # (exact: q has the column's scale)
        if abs(x) >= self._limit:
            raise self._overflow()
        self._last = (q, x)
        return q

    def _scaled(self, v: Decimal) -> int:
        q = v.quantize(self._quantum, rounding=ROUND_HALF_UP, context=EXACT)
        return int(q.scaleb(self.s, EXACT))

    def _checked(self, v: Decimal) -> int:
        last = self._last  # (one read: another thread may replace it meanwhile)
        if last[0] is v:
            return last[1]  # coerced, so within the limit
        if v.is_nan():
            return self._limit
        t = v.scaleb(self.s, EXACT)
        x = int(t) if t.is_finite() else None
        if x is None or x != t:  # more digits than the scale: rounded as coerce() rounds
            x = self._scaled(v)
        if abs(x) >= self._limit:
            raise self._overflow()
        return x

    def _overflow(self, infinite: bool = False) -> NumericOutOfRange:
        """PostgreSQL's error for a value the column's precision cannot hold."""
        p, s = self.sql_type.precision, self.s
        if infinite:
            detail = f"A field with precision {p}, scale {s} cannot hold an infinite value."
        else:
            bound = f"10^{p - s}" if p is not None and p > s else "1"
            detail = (
                f"A field with precision {p}, scale {s} must round to an absolute value "
                f"less than {bound}."
            )
        return NumericOutOfRange(f"numeric field overflow\nDETAIL:  {detail}")

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

    def native_form(self) -> NativeForm:
        if self._width > 15:  # (beyond the compiled decoder's 120 bits)
            return NO_NATIVE_FORM
        return (NATIVE_NUMERIC, self._width, self.s, self._limit)

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
            d = d.quantize(_ONE, context=EXACT)  # PostgreSQL keeps no positive exponent
        if d.is_zero():
            d = d.copy_abs()
        if d.adjusted() >= self._MAX_INT_DIGITS or -_exponent(d) > self._MAX_FRAC_DIGITS:
            raise ValueOutOfDomain("value overflows numeric format")
        return d

    def to_bytes(self, v: Decimal) -> bytes:
        if not v.is_finite():
            return b"NaN" if v.is_nan() else b"-Infinity" if v.is_signed() else b"Infinity"
        n = v.normalize(EXACT)
        if n.is_zero():
            n = Decimal(0)
        elif _exponent(n) > 0:
            n = n.quantize(_ONE, context=EXACT)
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


class SingleValue(float):
    """A value of type real -- the double of its shortest text, as psycopg loads one --
    made by the client (``0.1::real``): compared with a real column as that real, where
    a float8 of the same Python value would be the float8 0.1 (FloatEncoding.equal_to_double)."""


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
                raise self._out_of_range(value, "overflow") from None
            if isinstance(value, str | Decimal) and f32 != 0 and math.isfinite(f32):
                f32 = _nearest_single(
                    Decimal(value.strip()) if isinstance(value, str) else value, f32
                )
            if f32 == 0 and f != 0:
                raise self._out_of_range(value, "underflow")
            return shortest_single(f32)
        return f

    def equal_to_double(self, f: float) -> float | None:
        """The value of this type PostgreSQL finds equal to the float8 ``f`` (it compares
        a real with a float8 or a numeric as float8, the real widened): ``f`` itself for
        a double; for a real, the real that widens to exactly ``f`` -- held as the double
        of its shortest text, as psycopg loads it -- or None (0.1 widened is
        0.10000000149011612: no real equals the float8 0.1)."""
        if not self._single or not math.isfinite(f):
            return f
        try:
            f32 = struct.unpack(">f", struct.pack(">f", f))[0]
        except OverflowError:
            return None
        return shortest_single(f32) if f32 == f else None

    def _out_of_range(self, value: Any, which: str) -> NumericOutOfRange:
        """PostgreSQL's error for a value beyond the type: its input function's, naming
        the text (a numeric's digits), for a text or a numeric; a float8's conversion's
        (``value out of range: overflow``) for a float."""
        if isinstance(value, str | Decimal):
            text = value if isinstance(value, str) else format(value, "f")
            return NumericOutOfRange(f'"{text}" is out of range for type {self.sql_type.sql()}')
        return NumericOutOfRange(f"value out of range: {which}")

    def _to_double(self, value: Any) -> float:
        name = self.sql_type.name
        text: str | None = None  # (the text read, for the error of a value out of range)
        if isinstance(value, bool):
            raise type_error(self.sql_type, value)
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
                raise InvalidTextInput(f'invalid input syntax for type {name}: "{value}"')
            text, value = value, Decimal(value.strip())
        if isinstance(value, Decimal):
            if value.is_nan():
                return math.nan
            f = float(value)
            if value.is_finite() and (math.isinf(f) or (f == 0 and not value.is_zero())):
                raise self._out_of_range(text if text is not None else value, "overflow")
            return f
        raise type_error(self.sql_type, value)

    def _bits(self, v: float) -> int:
        if v != v:
            return self._nan_bits
        try:
            packed = struct.pack(self._fmt, 0.0 if v == 0 else v)
        except OverflowError:
            raise NumericOutOfRange("value out of range for real") from None
        u = int(struct.unpack(self._ufmt, packed)[0])
        if self._single and v != 0 and math.isfinite(v) and shortest_single(self._float32(u)) != v:
            # v is the double of a float4's shortest text, which rounds to a neighbour of
            # that float4 when the text lies near the middle between two (7.038531e-26)
            u = next((w for w in (u - 1, u + 1) if shortest_single(self._float32(w)) == v), u)
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
        return shortest_single(f) if self._single else f

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
    best, best_bits, best_gap = f32, bits, abs(EXACT.subtract(Decimal(f32), d))
    for u in (bits - 1, bits + 1):  # the neighbours (same sign: f32 is not zero)
        c = struct.unpack(">f", struct.pack(">I", u & 0xFFFFFFFF))[0]
        if c == 0 or not math.isfinite(c):
            continue
        gap = abs(EXACT.subtract(Decimal(c), d))
        if gap < best_gap or (gap == best_gap and u % 2 == 0 and best_bits % 2 == 1):
            best, best_bits, best_gap = c, u, gap
    return float(best)


def single_of(v: float) -> float:
    """The float4 a real value stands for, as a double (exactly): the client holds a
    real as the double of its shortest text (``shortest_single``), which rounded again
    to a float4 can land one off; read once from that text, as PostgreSQL's strtof."""
    if v == 0 or not math.isfinite(v):
        return v
    f32 = struct.unpack(">f", struct.pack(">f", v))[0]
    return _nearest_single(Decimal(repr(v)), f32)


def single_bits(x: float) -> float:
    """The double a real held as psycopg loads it widens to in PostgreSQL: its float4's
    own bits (0.10000000149011612 for the real 0.1), which its arithmetic and casts use."""
    return float(struct.unpack(">f", struct.pack(">f", x))[0])


def shortest_single(x: float) -> float:
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


def numeric_encoding(t: SqlType) -> Encoding:
    """numeric(p,s), or numeric without precision (the Eq onion only)."""
    return NumericEncoding(t) if t.precision is not None else FreeNumericEncoding(t)


REGISTERED.update(
    {
        "smallint": partial(IntEncoding, bits=16),
        "integer": partial(IntEncoding, bits=32),
        "bigint": partial(IntEncoding, bits=64),
        "numeric": numeric_encoding,
        "real": partial(FloatEncoding, bits=32),
        "double precision": partial(FloatEncoding, bits=64),
    }
)
