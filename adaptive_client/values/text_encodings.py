"""The encodings of the character types, uuid, bytea and boolean (see the table in
``encodings``).

Text is its UTF-8 bytes (``char(n)`` without its trailing spaces), its Ord onion the
first 8 bytes of its order key: the bytes under the C collation, the primary weights
of the collator's sort key under another (``CollatedTextEncoding``); uuid and bytea
are their bytes, ordered by the first 8; a boolean is one byte.  Strings are read as
PostgreSQL's input functions read them (bytea's hex and escape formats, boolean's
words), with their errors.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from decimal import Decimal
from typing import Any, ClassVar

from psycopg import errors as pg_errors

from ..errors import EncodingError, InvalidTextInput, StringTooLong
from .collation import Collation, order_key, primary_prefix
from .encoding_base import (
    EQ,
    NATIVE_BOOL,
    NATIVE_TEXT,
    ORD,
    REGISTERED,
    SEARCH,
    SUBSTR,
    Encoding,
    NativeForm,
    SqlType,
    type_error,
)
from .session import time_zone
from .value_text import pg_text


def _assigned_text(value: Any) -> str | None:
    """The text PostgreSQL stores in a text column assigned a parameter of another type
    psycopg sends typed: the type's output under the session's settings (a boolean's
    cast: ``true``; a timestamptz in the session's time zone); None for a type psycopg
    does not send."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float | uuid.UUID | dt.date | dt.time | dt.timedelta | bytes):
        if isinstance(value, dt.datetime) and value.tzinfo is not None:
            value = value.astimezone(time_zone())  # (timestamptz prints in the session's)
        return pg_text(value)
    return None


class BlankPadded(str):
    """A value of type char(n) the client made (``'ab'::char(5)``, padded): converted to
    varchar or text -- assigned, or compared -- its trailing spaces go, as PostgreSQL's
    conversion from char drops them."""


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
            v = value.rstrip(" ") if type(value) is BlankPadded and not self._char else value
        elif isinstance(value, int) and not isinstance(value, bool):
            v = str(value)
        elif isinstance(value, Decimal) and value.is_finite():
            # numeric's text form: no exponent, no negative zero
            v = format(value.copy_abs() if value.is_zero() else value, "f")
        elif stored and (assigned := _assigned_text(value)) is not None:
            v = assigned
        else:
            raise type_error(t, value)
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

    def native_form(self) -> NativeForm:
        # (width: char(n)'s n, the value padded with spaces to n characters)
        return (NATIVE_TEXT, (self._n or 0) if self._char else 0, 0, 0)

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
        raise type_error(self.sql_type, value)

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
        raise type_error(self.sql_type, value)

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
            raise InvalidTextInput(f'invalid input syntax for type boolean: "{value}"')
        raise type_error(self.sql_type, value)

    def to_bytes(self, v: bool) -> bytes:
        return b"\x01" if v else b"\x00"

    def from_bytes(self, b: bytes) -> bool:
        if len(b) != 1:
            raise self._bad("encoding")
        return self.from_ope(b[0])

    def native_form(self) -> NativeForm:
        return (NATIVE_BOOL, 0, 0, 0)

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

REGISTERED.update(
    {
        "varchar": TextEncoding,
        "text": TextEncoding,
        "char": TextEncoding,
        "uuid": UuidEncoding,
        "bytea": ByteaEncoding,
        "boolean": BoolEncoding,
    }
)
