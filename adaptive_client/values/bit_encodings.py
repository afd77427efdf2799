"""Encodings of PostgreSQL's bit strings (``bit(n)``, ``bit varying(n)``) and ``money``.

Values are what psycopg 3 returns for them (it has no loader for either: the text
PostgreSQL prints): a bit string ``'10110'``, an amount ``'$1,000.00'`` / ``'-$0.50'``.
Strings are read as ``bit_in``/``varbit_in`` and ``cash_in`` read them, with their
errors' SQLSTATEs.

| type          | Eq onion (DET)              | Ord onion (OPE)                              |
|---------------|-----------------------------|----------------------------------------------|
| bit(n)        | bit length, packed bits     | the bits, doubled plus one (exact where that |
|               |                             | fits 95 bits)                                |
| varbit(n)     | the same                    | bits zero-filled to n, then the length, the  |
|               |                             | same way                                     |
| longer ones   | the same                    | 64 bits: the first 64 bits, zero-filled*     |
| money         | the amount in cents, 8 bytes | 64 bits: cents + 2**63 (exact); Sum onion   |

``bitcmp`` orders by the bits zero-filled to a byte boundary over the shorter byte
length, then by bit length; that is the order of (bits zero-filled to any common width,
length).  (*) A bit string too long for the Ord plaintext keeps a prefix: ``ope_exact``
is False and the client finishes the order (``order_key``).

money follows ``lc_monetary`` ``C`` (PostgreSQL's default): ``$``, ``,`` between
thousands, ``.`` and two fractional digits.  A session under another ``lc_monetary``
reads and prints amounts differently in PostgreSQL; the client does not follow it.
``sum(money)`` is money; past 64 bits it is PostgreSQL's 22003, "money out of range".
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from psycopg import errors as pg_errors

from ..errors import EncodingError, InvalidTextInput, NumericOutOfRange, StringTooLong
from .encoding_base import EQ, EXACT, ORD, REGISTERED, SUM, Encoding, SqlType, type_error

VARBITMAXLEN = 0x3FFFFFFF - 7  # (bits of a 1 GB varlena)
_OPE_MAX = 95  # the widest domain of the native OPE


class BitLengthMismatch(EncodingError, pg_errors.StringDataLengthMismatch):
    """A bit string whose length is not its bit(n) column's (22026)."""


class BitLengthExceeded(EncodingError, pg_errors.ProgramLimitExceeded):
    """Hex bit-string input beyond the longest bit string (54000)."""


class NoMoneyCast(EncodingError, pg_errors.DatatypeMismatch):
    """A parameter of a type PostgreSQL does not assign to money (42804)."""


class NotConvertible(EncodingError, pg_errors.FeatureNotSupported):
    """NaN or an infinity assigned to money (0A000, numeric to bigint)."""


def parse_bits(text: str, length: int | None, fixed: bool) -> str:
    """``bit_in`` (``fixed``) or ``varbit_in``: the bits of a bit-string input, checked
    against the column's length after its digits."""
    head = text[:1]
    hexa = head in ("x", "X")
    body = text[1:] if head in ("b", "B", "x", "X") else text
    size = len(body.encode("utf-8"))
    if hexa and size > VARBITMAXLEN // 4:
        raise BitLengthExceeded(f"bit string length exceeds the maximum allowed ({VARBITMAXLEN})")
    # (a constant is read without the column's length, then cast to it: digits first)
    if hexa:
        for ch in body:
            if ch not in "0123456789abcdefABCDEF":
                raise InvalidTextInput(f'"{ch}" is not a valid hexadecimal digit')
        bits = "".join(f"{int(ch, 16):04b}" for ch in body)
    else:
        for ch in body:
            if ch not in "01":
                raise InvalidTextInput(f'"{ch}" is not a valid binary digit')
        bits = body
    if length is not None and fixed and len(bits) != length:
        raise BitLengthMismatch(f"bit string length {len(bits)} does not match type bit({length})")
    if length is not None and not fixed and len(bits) > length:
        raise StringTooLong(f"bit string too long for type bit varying({length})")
    return bits


class BitEncoding(Encoding):
    """bit(n) and bit varying(n) / varbit (see the module's table)."""

    def __init__(self, sql_type: SqlType) -> None:
        super().__init__(sql_type)
        self.fixed = sql_type.name == "bit"
        self.length = sql_type.precision
        n = self.length
        # the exact key: the bits (bit(n)) or bits and length (varbit(n)), doubled plus
        # one, so that a comparand of another length has a key between two values'
        self._len_bits = 0 if self.fixed or n is None else n.bit_length()
        exact = n is not None and n + self._len_bits + 2 <= _OPE_MAX
        self.ope_exact = exact
        self.ope_bits = n + self._len_bits + 2 if exact and n is not None else 64

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, str):
            raise type_error(self.sql_type, value)
        return parse_bits(value, self.length, self.fixed)

    def comparand(self, value: Any) -> Any:
        # a constant compared with the column is a bit string of its own length (one of
        # another length than the column holds equals no row, and orders between them)
        if value is None:
            return None
        if not isinstance(value, str):
            raise type_error(self.sql_type, value)
        return parse_bits(value, None, self.fixed)

    def to_bytes(self, v: str) -> bytes:
        packed = int(v.ljust(-(-len(v) // 8) * 8, "0") or "0", 2)
        nbytes = -(-len(v) // 8)
        return len(v).to_bytes(4, "big") + packed.to_bytes(nbytes, "big")

    def from_bytes(self, b: bytes) -> str:
        b = bytes(b)
        if len(b) < 4:
            raise self._bad("encoding")
        n = int.from_bytes(b[:4], "big")
        if len(b) != 4 + -(-n // 8):
            raise self._bad("encoding")
        bits = "".join(f"{x:08b}" for x in b[4:])
        return bits[:n]

    def order_key(self, v: str) -> tuple[str, int]:
        """``bitcmp``: the bits zero-filled, then the length (a str of 0/1 compares as
        the bits do)."""
        return v.ljust(-(-len(v) // 8) * 8, "0"), len(v)

    def _key(self, v: str) -> int:
        n = self.length or 0
        bits = int(v.ljust(n, "0") or "0", 2)
        return bits << self._len_bits | (len(v) if self._len_bits else 0)

    def to_ope(self, v: str) -> int:
        """A value's key ``2k + 1``.  A comparand the column cannot hold gets an even key
        where bitcmp puts it (the bits compare as strings do): longer than n, just
        above its first n bits (``2k + 2``); shorter than a bit(n)'s n, just below the
        value its bits zero-filled make (``2k``)."""
        if not self.ope_exact:
            return int(v[:64].ljust(64, "0"), 2)
        n = self.length or 0
        if len(v) > n:
            return 2 * self._key(v[:n]) + 2
        if self.fixed and len(v) < n:
            return 2 * self._key(v)
        return 2 * self._key(v) + 1

    def from_ope(self, i: int) -> str:
        if not self.ope_exact or not 0 <= i < 1 << self.ope_bits or i % 2 == 0:
            raise self._bad("order encoding")
        i //= 2
        n = self.length or 0
        length = i & ((1 << self._len_bits) - 1) if self._len_bits else n
        if length > n:
            raise self._bad("order encoding")
        bits = format(i >> self._len_bits, f"0{n}b") if n else ""
        return bits[:length]


# --- money --------------------------------------------------------------------------------

_ONE = Decimal(1)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_SPACE = " \t\n\r\f\v"


def _money_range(text: str) -> NumericOutOfRange:
    return NumericOutOfRange(f'value "{text}" is out of range for type money')


def parse_money(text: str) -> int:
    """``cash_in`` under lc_monetary C: the amount in cents, or 22P02 / 22003."""
    s, i, n = text, 0, len(text)

    def skip_space(k: int) -> int:
        while k < n and s[k] in _SPACE:
            k += 1
        return k

    def skip_symbol(k: int) -> int:
        k = skip_space(k)
        if s.startswith("$", k):
            k += 1
        return skip_space(k)

    i = skip_symbol(i)
    negative = False
    if s.startswith(("-", "("), i):  # (a parenthesis is a minus sign)
        negative, i = True, i + 1
    elif s.startswith("+", i):
        i += 1
    i = skip_symbol(i)
    value = decimals = 0
    seen_dot = False
    while i < n:
        ch = s[i]
        if "0" <= ch <= "9" and (not seen_dot or decimals < 2):
            value = value * 10 + int(ch)
            if value > -_INT64_MIN:  # (PostgreSQL accumulates the negative value)
                raise _money_range(text)
            if seen_dot:
                decimals += 1
        elif ch == "." and not seen_dot:
            seen_dot = True
        elif ch != ",":
            break
        i += 1
    if i < n and "5" <= s[i] <= "9":  # round half away from zero on the next digit
        value += 1
        if value > -_INT64_MIN:
            raise _money_range(text)
    for _ in range(decimals, 2):
        value *= 10
        if value > -_INT64_MIN:
            raise _money_range(text)
    while i < n and "0" <= s[i] <= "9":
        i += 1
    while i < n:
        ch = s[i]
        if ch in _SPACE or ch in ")+$":
            i += 1
        elif ch == "-":
            negative, i = True, i + 1
        else:
            raise InvalidTextInput(f'invalid input syntax for type money: "{text}"')
    if not negative:
        if value == -_INT64_MIN:
            raise _money_range(text)
        return value
    return -value


def money_text(cents: int) -> str:
    """``cash_out`` under lc_monetary C: ``$1,234.56``, ``-$0.50``."""
    whole, frac = divmod(abs(cents), 100)
    return f"{'-' if cents < 0 else ''}${whole:,}.{frac:02d}"


def _money_cents(v: str) -> int:
    """The cents of a value ``money_text`` printed."""
    digits = v.replace("$", "").replace(",", "").replace(".", "")
    return int(digits)


def _bigint(x: int) -> int:
    if not _INT64_MIN <= x <= _INT64_MAX:
        raise NumericOutOfRange("bigint out of range")
    return x


class MoneyEncoding(Encoding):
    """money: the amount in cents (int64); Eq, Ord (exact) and Sum onions."""

    onions = frozenset({EQ, ORD, SUM})
    ope_bits = 64
    keyed_order = True  # ('$10.00' < '$9.00' as strings)
    _OFFSET = 2**63

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        return money_text(self._cents_of(value))

    def _cents_of(self, value: Any) -> int:
        if isinstance(value, str):
            return parse_money(value)
        if isinstance(value, bool):
            raise type_error(self.sql_type, value)
        if isinstance(value, int):
            # psycopg sends a small int as smallint, which PostgreSQL does not assign to
            # money; integer and bigint are multiplied by 100 (int8mul), a larger int
            # is numeric
            if -(2**15) <= value < 2**15:
                raise NoMoneyCast("column is of type money but expression is of type smallint")
            return _bigint(value * 100)
        if isinstance(value, Decimal):
            if value.is_nan():
                raise NotConvertible("cannot convert NaN to bigint")
            if value.is_infinite():
                raise NotConvertible("cannot convert infinity to bigint")
            scaled = value.scaleb(2, EXACT).quantize(
                Decimal(1), rounding=ROUND_HALF_UP, context=EXACT
            )
            return _bigint(int(scaled))
        if isinstance(value, float):
            raise NoMoneyCast("column is of type money but expression is of type double precision")
        raise type_error(self.sql_type, value)

    def to_bytes(self, v: str) -> bytes:
        return _money_cents(v).to_bytes(8, "big", signed=True)

    def from_bytes(self, b: bytes) -> str:
        if len(b) != 8:
            raise self._bad("encoding")
        return money_text(int.from_bytes(b, "big", signed=True))

    def to_ope(self, v: str) -> int:
        return _money_cents(v) + self._OFFSET

    def from_ope(self, i: int) -> str:
        if not 0 <= i < 2 * self._OFFSET:
            raise self._bad("order encoding")
        return money_text(i - self._OFFSET)

    def order_key(self, v: str) -> int:
        return _money_cents(v)

    def to_hom(self, v: str) -> int:
        return _money_cents(v)

    def from_hom_sum(self, i: int) -> str:
        # (PostgreSQL checks each partial sum; the Sum onion gives the total only, so a
        # sum whose total fits but whose running sum overflowed is not refused here)
        if not _INT64_MIN <= int(i) <= _INT64_MAX:
            raise NumericOutOfRange("money out of range")
        return money_text(int(i))

    def from_hom(self, i: int) -> str:
        return money_text(int(i))


__all__ = ["BitEncoding", "MoneyEncoding", "money_text", "parse_bits", "parse_money"]

REGISTERED.update({"bit": BitEncoding, "varbit": BitEncoding, "money": MoneyEncoding})
