"""Order keys as bytes: :func:`key_bytes` turns an Encoding's ``order_key`` (tuples,
lists, numbers, strings, bytes, dates and times, UUIDs) into bytes whose unsigned
bytewise order is Python's order of the keys, and whose equality is the keys' equality.

The client engine compares, sorts, groups and takes min/max of such bytes
(engine/held.py): a column whose type it has no type for is held as the bytes of its
values' order keys, in PostgreSQL's order by construction of each ``order_key``.

Every encoding is *prefix-free* (no value's bytes begin another's), so that a tuple's
elements can be concatenated and compared in turn:

* a tuple or list: each element after a byte 0x02, then 0x01 (a proper prefix of a
  tuple ends first, and is smaller, as in Python);
* a number (int, bool, Decimal, float; the three compare with one another in Python, so
  they share one form): a sign class (-infinity, negative, zero, positive, infinity),
  then for non-zero finite values the decimal exponent and the significant digits,
  complemented for negatives (exact: a float is its exact binary value);
* a str: its UTF-8 bytes (code point order, Python's), a bytes value its bytes, each
  with 0x00 escaped as 0x00 0xFF and ended by 0x00 0x00;
* dates, times, datetimes (naive, or aware as the instant), timedeltas: a tag and a
  number; a UUID: a tag and its 16 bytes.

Values of different kinds that Python cannot compare get different tags (their order
between one another is arbitrary, as no key compares them).  A string under a libc
collation (a strcoll key) gives its collation's sort-key bytes; one with combining
marks, which glibc's keys may misorder, is refused, as is a NaN and anything else, with
:class:`UnsupportedQuery`.
"""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal
from typing import Any, Final

from ..errors import UnsupportedQuery

_ELEMENT, _END = b"\x02", b"\x01"
_NUMBER, _STR, _BYTES = 0x10, 0x20, 0x30
_DATE, _NAIVE, _AWARE, _TIME, _SPAN, _UUID = 0x40, 0x41, 0x42, 0x43, 0x44, 0x50
_NEG_INF, _NEG, _ZERO, _POS, _POS_INF = 0, 1, 2, 3, 4
_EXP_OFFSET: Final = 1 << 63
_DIGITS: Final = bytes(range(1, 11))  # '0'..'9' as 1..10 (0 ends the digits)
_POS_DIGITS: Final = bytes.maketrans(b"0123456789", _DIGITS)
_NEG_DIGITS: Final = bytes.maketrans(b"0123456789", bytes(254 - d for d in range(1, 11)))
_EPOCH: Final = dt.datetime(1, 1, 1)
_UTC_EPOCH: Final = dt.datetime(1, 1, 1, tzinfo=dt.UTC)


def key_bytes(key: Any) -> bytes:
    """The bytes of an order key (see the module docstring)."""
    out = bytearray()
    _put(out, key)
    return bytes(out)


def _put(out: bytearray, key: Any) -> None:
    t = type(key)
    if t is tuple or t is list:
        for x in key:
            out += _ELEMENT
            _put(out, x)
        out += _END
    elif t is int or t is bool or t is Decimal or t is float:
        out.append(_NUMBER)
        _number(out, key)
    elif t is str:
        out.append(_STR)
        _escaped(out, key.encode("utf-8", "surrogatepass"))
    elif t is bytes or t is bytearray or t is memoryview:
        out.append(_BYTES)
        _escaped(out, bytes(key))
    elif t is dt.datetime:
        if key.tzinfo is None or key.utcoffset() is None:
            out.append(_NAIVE)
            _number(out, _micros(key - _EPOCH))
        else:
            out.append(_AWARE)
            _number(out, _micros(key - _UTC_EPOCH))
    elif t is dt.date:
        out.append(_DATE)
        _number(out, key.toordinal())
    elif t is dt.time and key.tzinfo is None:
        out.append(_TIME)
        _number(out, ((key.hour * 60 + key.minute) * 60 + key.second) * 10**6 + key.microsecond)
    elif t is dt.timedelta:
        out.append(_SPAN)
        _number(out, _micros(key))
    elif t is uuid.UUID:
        out.append(_UUID)
        out += key.bytes
    elif hasattr(key, "sort_bytes"):  # (a string under a libc collation: values/collation.py)
        out.append(_STR)
        _escaped(out, key.sort_bytes())
    else:
        raise UnsupportedQuery(
            f"not supported in a client-evaluated query: ordering values by a key of "
            f"type {t.__name__}",
            "order key",
        )


def _micros(span: dt.timedelta) -> int:
    return (span.days * 86400 + span.seconds) * 10**6 + span.microseconds


def _escaped(out: bytearray, raw: bytes) -> None:
    out += raw.replace(b"\x00", b"\x00\xff")
    out += b"\x00\x00"


def _number(out: bytearray, x: int | bool | Decimal | float) -> None:
    if type(x) is float:
        if x != x:
            raise UnsupportedQuery(
                "not supported in a client-evaluated query: a NaN in an order key", "order key"
            )
        if x in (float("inf"), float("-inf")):
            out.append(_POS_INF if x > 0 else _NEG_INF)
            return
    d = x if type(x) is Decimal else Decimal(x)
    if not d.is_finite():
        if d.is_nan():
            raise UnsupportedQuery(
                "not supported in a client-evaluated query: a NaN in an order key", "order key"
            )
        out.append(_POS_INF if d > 0 else _NEG_INF)
        return
    if not d:
        out.append(_ZERO)
        return
    sign, digits, exponent = d.as_tuple()
    text = "".join(map(str, digits)).rstrip("0").encode("ascii")
    adjusted = int(exponent) + len(digits) - 1  # (digits has no leading zero: d != 0)
    if sign:
        out.append(_NEG)
        out += (_EXP_OFFSET - adjusted).to_bytes(8, "big")
        out += text.translate(_NEG_DIGITS)
        out.append(0xFF)
    else:
        out.append(_POS)
        out += (_EXP_OFFSET + adjusted).to_bytes(8, "big")
        out += text.translate(_POS_DIGITS)
        out.append(0x00)


__all__ = ["key_bytes"]
