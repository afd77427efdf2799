"""Encodings of PostgreSQL's network types: ``inet``, ``cidr``, ``macaddr``, ``macaddr8``.

Values are what psycopg 3's loaders return: ``inet`` an ``ipaddress`` address (a full
mask, /32 or /128) or interface, ``cidr`` a network, ``macaddr``/``macaddr8`` the
lower-case colon text (``08:00:2b:01:02:03``).  Strings are read as PostgreSQL's input
functions read them (``network_in`` with ``inet_net_pton``, ``macaddr_in``'s seven
``sscanf`` spellings, ``macaddr8_in``), errors with their SQLSTATEs; a Python address,
interface or network is what psycopg sends (an ``inet`` into a ``cidr`` column loses
its host bits, as the assignment cast does).

| type     | Eq onion (DET)                 | Ord onion (OPE)                              |
|----------|--------------------------------|----------------------------------------------|
| inet     | family, mask length, address   | 95 bits of (family, network, mask, address)* |
| cidr     | the same                       | the same*                                    |
| macaddr  | the 6 bytes                    | 48 bits: the bytes (exact)                   |
| macaddr8 | the 8 bytes                    | 64 bits: the bytes (exact)                   |

(*) ``network_cmp`` orders by family (IPv4 first), then the first bits of the two
addresses up to the shorter mask, then the mask length, then the whole address: that is
the order of (family, address with the host bits cleared, mask length, address).  An
IPv4 value's key is 71 bits and fits the Ord plaintext whole; an IPv6 value's keeps the
first 94 bits of its network only, so ``ope_exact`` is False and the client finishes the
order (``order_key``).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import Any

from psycopg.pq import DiagnosticField

from ..errors import InvalidTextInput, NumericOutOfRange
from .encoding_base import REGISTERED, TEXT_FORMATS, Encoding, SqlType, type_error

_DIGITS = frozenset("0123456789")
_HEX = frozenset("0123456789abcdefABCDEF")
_SPACE = frozenset(" \t\n\r\f\v")  # C's isspace

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Interface = ipaddress.IPv4Interface | ipaddress.IPv6Interface
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class _Cursor:
    """A C string being read: ``at(i)`` is ``'\\0'`` past its end."""

    __slots__ = ("s",)

    def __init__(self, s: str) -> None:
        self.s = s

    def at(self, i: int) -> str:
        return self.s[i] if i < len(self.s) else "\0"


def _digits_then(c: _Cursor, i: int, limit: int | None) -> tuple[int, str, int] | None:
    """Decimal digits from ``c.at(i - 1)`` on (a do-while over digits, as the C code):
    (value, the character after them, the index past that character); None past
    ``limit``."""
    ch = c.at(i - 1)
    value = 0
    while True:
        value = value * 10 + int(ch)
        if limit is not None and value > limit:
            return None
        ch = c.at(i)
        i += 1
        if ch == "\0" or ch not in _DIGITS:
            return value, ch, i


def _mask_suffix(c: _Cursor, ch: str, i: int, wrote: bool) -> tuple[int, str] | None:
    """``/bits`` after an IPv4 address, as both IPv4 readers take it: (bits or -1, the
    final character, which must be the end); None where malformed or above 32."""
    bits = -1
    if ch == "/" and c.at(i) in _DIGITS and wrote:
        got = _digits_then(c, i + 1, None)
        assert got is not None
        bits, ch, i = got
        if ch != "\0" or bits > 32:
            return None
    return bits, ch


def _dotted(c: _Cursor, ch: str, i: int, dst: list[int], strict: bool) -> tuple[str, int] | None:
    """Dotted decimal octets from ``ch`` (``c.at(i - 1)``) on, as both IPv4 readers take
    them, appended to ``dst``: (the character after them, the index past it); None past
    four octets, an octet above 255, or an octet followed by other than ``.``, ``/`` or
    the end.  After a dot, a character other than a digit ends them -- in cidr input
    (``strict``) it is an error."""
    while ch in _DIGITS:
        got = _digits_then(c, i, 255)
        if got is None:
            return None
        octet, ch, i = got
        if len(dst) >= 4:
            return None
        dst.append(octet)
        if ch in ("\0", "/"):
            break
        if ch != ".":
            return None
        ch, i = c.at(i), i + 1
        if strict and ch not in _DIGITS:
            return None  # (a digit read here starts the next octet)
    return ch, i


# the mask of an abbreviated cidr by its first octet: classes E, D, C, B, A
_CLASS_BITS = ((240, 32), (224, 8), (192, 24), (128, 16), (0, 8))


def _cidr_pton_ipv4(text: str) -> tuple[bytes, int] | None:
    """``inet_cidr_pton_ipv4``: cidr input, abbreviated forms expanded by class."""
    c = _Cursor(text)
    dst: list[int] = []
    ch, i = c.at(0), 1
    if ch == "0" and c.at(1) in "xX" and c.at(2) in _HEX:
        i = 2
        dirty = tmp = 0
        while True:
            ch = c.at(i)
            i += 1
            if ch == "\0" or ch not in _HEX:
                break
            tmp = int(ch, 16) if dirty == 0 else (tmp << 4) | int(ch, 16)
            dirty += 1
            if dirty == 2:
                if len(dst) >= 4:
                    return None
                dst.append(tmp)
                dirty = 0
        if dirty:
            if len(dst) >= 4:
                return None
            dst.append((tmp << 4) & 0xFF)
    elif ch in _DIGITS:
        dotted = _dotted(c, ch, i, dst, strict=True)
        if dotted is None:
            return None
        ch, i = dotted
    else:
        return None
    suffix = _mask_suffix(c, ch, i, bool(dst))
    if suffix is None:
        return None
    bits, ch = suffix
    if ch != "\0" or not dst:
        return None
    if bits == -1:
        first = dst[0]
        bits = next(n for least, n in _CLASS_BITS if first >= least)
        bits = max(bits, len(dst) * 8)
        if bits == 8 and first == 224:
            bits = 4
    while bits > len(dst) * 8:
        if len(dst) >= 4:
            return None
        dst.append(0)
    return bytes(dst).ljust(4, b"\0"), bits


def _net_pton_ipv4(text: str) -> tuple[bytes, int] | None:
    """``inet_net_pton_ipv4``: inet input (a prefix defaults to /32 with four octets)."""
    c = _Cursor(text)
    dst: list[int] = []
    dotted = _dotted(c, c.at(0), 1, dst, strict=False)
    if dotted is None:
        return None
    ch, i = dotted
    suffix = _mask_suffix(c, ch, i, bool(dst))
    if suffix is None:
        return None
    bits, ch = suffix
    if ch != "\0":
        return None
    if bits == -1:
        if len(dst) != 4:
            return None
        bits = 32
    if not dst or bits // 8 > len(dst):
        return None
    return bytes(dst).ljust(4, b"\0"), bits


def _getbits(text: str) -> int | None:
    """A mask length after ``/`` in IPv6 input: digits, no leading zero, at most 128."""
    if not text or any(ch not in _DIGITS for ch in text):
        return None
    if len(text) > 1 and text[0] == "0":
        return None
    value = 0
    for ch in text:
        value = value * 10 + int(ch)
        if value > 128:
            return None
    return value


def _getv4(text: str) -> tuple[list[int], int] | None:
    """An embedded dotted IPv4 tail of IPv6 input: (its octets, bits or -1)."""
    octets: list[int] = []
    val = n = 0
    for k, ch in enumerate(text):
        if ch in _DIGITS:
            if n != 0 and val == 0:
                return None  # no leading zeros
            n += 1
            val = val * 10 + int(ch)
            if val > 255:
                return None
            continue
        if ch in "./":
            if len(octets) > 3:
                return None
            octets.append(val)
            if ch == "/":
                bits = _getbits(text[k + 1 :])
                return None if bits is None else (octets, bits)
            val = n = 0
            continue
        return None
    if n == 0 or len(octets) > 3:
        return None
    octets.append(val)
    return octets, -1


def _pton_ipv6(text: str) -> tuple[bytes, int] | None:
    """``inet_cidr_pton_ipv6`` (inet and cidr alike)."""
    tmp = [0] * 16
    tp, colonp = 0, -1
    src = 0
    if text.startswith(":"):
        if text[1:2] != ":":
            return None
        src = 1
    curtok = src
    saw_xdigit = False
    val = digits = 0
    bits = -1
    n = len(text)
    while src < n:
        ch = text[src]
        src += 1
        if ch in _HEX:
            val = (val << 4) | int(ch, 16)
            digits += 1
            if digits > 4:
                return None
            saw_xdigit = True
            continue
        if ch == ":":
            curtok = src
            if not saw_xdigit:
                if colonp != -1:
                    return None
                colonp = tp
                continue
            if src >= n or tp + 2 > 16:
                return None
            tmp[tp], tmp[tp + 1] = (val >> 8) & 0xFF, val & 0xFF
            tp += 2
            saw_xdigit, digits, val = False, 0, 0
            continue
        if ch == "." and tp + 4 <= 16:
            v4 = _getv4(text[curtok:])
            if v4 is not None:
                octets, bits = v4
                tmp[tp : tp + len(octets)] = octets
                tp += 4
                saw_xdigit = False
                break
        if ch == "/":
            got = _getbits(text[src:])
            if got is not None:
                bits = got
                break
        return None
    if saw_xdigit:
        if tp + 2 > 16:
            return None
        tmp[tp], tmp[tp + 1] = (val >> 8) & 0xFF, val & 0xFF
        tp += 2
    if bits == -1:
        bits = 128
    if colonp != -1:
        if tp == 16:
            return None
        moved = tmp[colonp:tp]
        tmp[colonp:tp] = [0] * len(moved)
        tmp[16 - len(moved) :] = moved
        tp = 16
    if tp != 16:
        return None
    return bytes(tmp), bits


def _host_bits_clear(packed: bytes, bits: int) -> bool:
    """``addressOK``: no bit set right of the mask."""
    width = 8 * len(packed)
    return int.from_bytes(packed, "big") & ((1 << (width - bits)) - 1) == 0


def parse_network(text: str, is_cidr: bool) -> tuple[bytes, int]:
    """``network_in``: the packed address (4 or 16 bytes) and mask length of an inet or
    cidr string, or PostgreSQL's 22P02."""
    name = "cidr" if is_cidr else "inet"
    if ":" in text:
        got = _pton_ipv6(text)
    else:
        got = _cidr_pton_ipv4(text) if is_cidr else _net_pton_ipv4(text)
    if got is None:
        raise InvalidTextInput(f'invalid input syntax for type {name}: "{text}"')
    packed, bits = got
    if is_cidr and not _host_bits_clear(packed, bits):
        primary = f'invalid cidr value: "{text}"'
        detail = "Value has bits set to right of mask."
        raise InvalidTextInput(
            f"{primary}\nDETAIL:  {detail}",
            info={
                DiagnosticField.SQLSTATE: b"22P02",
                DiagnosticField.MESSAGE_PRIMARY: primary.encode(),
                DiagnosticField.MESSAGE_DETAIL: detail.encode(),
            },
        )
    return packed, bits


def _inet_value(packed: bytes, bits: int) -> Address | Interface:
    """An inet as psycopg's loader returns it: an address where the mask is full."""
    if bits == 8 * len(packed):
        return ipaddress.ip_address(packed)
    if len(packed) == 4:
        return ipaddress.IPv4Interface((packed, bits))
    return ipaddress.IPv6Interface((packed, bits))


def _cidr_value(packed: bytes, bits: int) -> Network:
    if len(packed) == 4:
        return ipaddress.IPv4Network((packed, bits))
    return ipaddress.IPv6Network((packed, bits))


def _parts(v: Any) -> tuple[bytes, int]:
    """(packed address, mask length) of an address, interface or network."""
    if isinstance(v, ipaddress.IPv4Network | ipaddress.IPv6Network):
        return v.network_address.packed, v.prefixlen
    if isinstance(v, ipaddress.IPv4Interface | ipaddress.IPv6Interface):
        return v.ip.packed, v.network.prefixlen
    return v.packed, v.max_prefixlen


_PYTHON_NETWORK = (
    ipaddress.IPv4Address,
    ipaddress.IPv6Address,
    ipaddress.IPv4Interface,
    ipaddress.IPv6Interface,
    ipaddress.IPv4Network,
    ipaddress.IPv6Network,
)


class NetworkEncoding(Encoding):
    """inet and cidr (see the module's table)."""

    ope_bits = 95  # the native OPE's widest domain: an IPv4 key whole
    ope_exact = False
    keyed_order = True  # (Python does not order an IPv4 and an IPv6 value)

    def __init__(self, sql_type: SqlType) -> None:
        super().__init__(sql_type)
        self.is_cidr = sql_type.name == "cidr"

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, str):
            packed, bits = parse_network(value, self.is_cidr)
        elif isinstance(value, _PYTHON_NETWORK):
            packed, bits = _parts(value)
            if self.is_cidr:  # an inet assigned to a cidr: the host bits cleared
                width = 8 * len(packed)
                kept = int.from_bytes(packed, "big") >> (width - bits) << (width - bits)
                packed = kept.to_bytes(len(packed), "big")
        else:
            raise type_error(self.sql_type, value)
        return self._value(packed, bits)

    def comparand(self, value: Any) -> Any:
        # a constant compared with either type is an inet: there is one set of operators,
        # inet's (cidr is binary-coercible to it), so a string is read by inet's rules
        if isinstance(value, str):
            return _inet_value(*parse_network(value, False))
        if isinstance(value, _PYTHON_NETWORK):
            return value
        return self.coerce(value)

    def _value(self, packed: bytes, bits: int) -> Any:
        return _cidr_value(packed, bits) if self.is_cidr else _inet_value(packed, bits)

    def to_bytes(self, v: Any) -> bytes:
        packed, bits = _parts(v)
        return bytes((len(packed), bits)) + packed

    def from_bytes(self, b: bytes) -> Any:
        b = bytes(b)
        if len(b) not in (6, 18) or b[0] != len(b) - 2 or b[1] > 8 * b[0]:
            raise self._bad("encoding")
        return self._value(b[2:], b[1])

    def order_key(self, v: Any) -> tuple[int, int, int, int]:
        """``network_cmp``'s order: family, network, mask length, address."""
        packed, bits = _parts(v)
        width = 8 * len(packed)
        address = int.from_bytes(packed, "big")
        network = address >> (width - bits) << (width - bits)
        return (0 if width == 32 else 1, network, bits, address)

    def to_ope(self, v: Any) -> int:
        family, network, bits, address = self.order_key(v)
        if family == 0:  # 1 + 32 + 6 + 32 = 71 bits, left-aligned
            key = ((network << 6 | bits) << 32) | address
            return key << (self.ope_bits - 71)
        # 1 + the first 94 bits of the network: a prefix of the key
        return (1 << 94) | network >> (128 - 94)


def _colon_text(packed: bytes) -> str:
    return ":".join(f"{x:02x}" for x in packed)


# macaddr_in's sscanf formats, in its order: ("x", width) conversions and literals
_MAC_FORMATS: list[list[tuple[str, int] | str]] = [
    [("x", 0), ":", ("x", 0), ":", ("x", 0), ":", ("x", 0), ":", ("x", 0), ":", ("x", 0)],
    [("x", 0), "-", ("x", 0), "-", ("x", 0), "-", ("x", 0), "-", ("x", 0), "-", ("x", 0)],
    [("x", 2), ("x", 2), ("x", 2), ":", ("x", 2), ("x", 2), ("x", 2)],
    [("x", 2), ("x", 2), ("x", 2), "-", ("x", 2), ("x", 2), ("x", 2)],
    [("x", 2), ("x", 2), ".", ("x", 2), ("x", 2), ".", ("x", 2), ("x", 2)],
    [("x", 2), ("x", 2), "-", ("x", 2), ("x", 2), "-", ("x", 2), ("x", 2)],
    [("x", 2), ("x", 2), ("x", 2), ("x", 2), ("x", 2), ("x", 2)],
]


def _scan_hex(s: str, i: int, width: int) -> tuple[int, int] | None:
    """``%x`` (``%2x``) at ``s[i]``: whitespace skipped, a sign, a ``0x`` prefix, hex
    digits, at most ``width`` characters after the whitespace (0: no limit)."""
    while i < len(s) and s[i] in _SPACE:
        i += 1
    end = len(s) if width == 0 else min(len(s), i + width)
    j, sign = i, 1
    if j < end and s[j] in "+-":
        sign = -1 if s[j] == "-" else 1
        j += 1
    if j + 2 < end and s[j : j + 2] in ("0x", "0X") and s[j + 2] in _HEX:
        j += 2
    start = j
    while j < end and s[j] in _HEX:
        j += 1
    if j == start:
        return None
    return sign * int(s[start:j], 16), j


def _scan(s: str, fmt: list[tuple[str, int] | str]) -> list[int] | None:
    """The six values of one format, when it matches with nothing but whitespace left
    (``%1s`` unmatched)."""
    values: list[int] = []
    i = 0
    for part in fmt:
        if isinstance(part, str):
            if i >= len(s) or s[i] != part:
                return None
            i += 1
            continue
        got = _scan_hex(s, i, part[1])
        if got is None:
            return None
        value, i = got
        values.append(value)
    if s[i:].strip(" \t\n\r\f\v"):
        return None
    return values


def parse_macaddr(text: str) -> bytes:
    """``macaddr_in``: the six bytes, or PostgreSQL's 22P02 / 22003."""
    for fmt in _MAC_FORMATS:
        values = _scan(text, fmt)
        if values is not None:
            break
    else:
        raise InvalidTextInput(f'invalid input syntax for type macaddr: "{text}"')
    if any(not 0 <= x <= 255 for x in values):
        raise NumericOutOfRange(f'invalid octet value in "macaddr" value: "{text}"')
    return bytes(values)


def parse_macaddr8(text: str) -> bytes:
    """``macaddr8_in``: eight bytes (six widened with FF:FE in the middle), or 22P02."""
    fail = InvalidTextInput(f'invalid input syntax for type macaddr8: "{text}"')
    raw = text.encode("utf-8")
    out: list[int] = []
    spacer = 0
    i = 0
    while i < len(raw) and raw[i] in b" \t\n\r\f\v":
        i += 1
    while i + 1 < len(raw):
        if len(out) == 8:
            raise fail
        pair = raw[i : i + 2]
        if any(ch not in b"0123456789abcdefABCDEF" for ch in pair):
            raise fail
        out.append(int(pair, 16))
        i += 2
        if i < len(raw) and raw[i] in b":-.":
            if spacer == 0:
                spacer = raw[i]
            elif spacer != raw[i]:
                raise fail
            i += 1
        if len(out) in (6, 8) and i < len(raw) and raw[i] in b" \t\n\r\f\v":
            if raw[i:].strip(b" \t\n\r\f\v"):
                raise fail
            i = len(raw)
    if len(out) == 6:
        out[3:3] = [0xFF, 0xFE]
    elif len(out) != 8:
        raise fail
    return bytes(out)


class MacEncoding(Encoding):
    """macaddr (6 bytes) and macaddr8 (8): bytewise order, exactly the OPE integer."""

    def __init__(self, sql_type: SqlType) -> None:
        super().__init__(sql_type)
        self._size = 8 if sql_type.name == "macaddr8" else 6
        self.ope_bits = 8 * self._size
        self._parse: Callable[[str], bytes] = parse_macaddr8 if self._size == 8 else parse_macaddr

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, str):
            raise type_error(self.sql_type, value)
        return _colon_text(self._parse(value))

    def _packed(self, v: str) -> bytes:
        return bytes.fromhex(v.replace(":", ""))

    def to_bytes(self, v: str) -> bytes:
        return self._packed(v)

    def from_bytes(self, b: bytes) -> str:
        if len(b) != self._size:
            raise self._bad("encoding")
        return _colon_text(bytes(b))

    def to_ope(self, v: str) -> int:
        return int.from_bytes(self._packed(v), "big")

    def from_ope(self, i: int) -> str:
        if not 0 <= i < 1 << self.ope_bits:
            raise self._bad("order encoding")
        return _colon_text(i.to_bytes(self._size, "big"))

    def order_key(self, v: str) -> bytes:
        return self._packed(v)


def ipv6_text(packed: bytes) -> str:
    """An IPv6 address as PostgreSQL prints it (``inet_net_ntop_ipv6``): the longest run
    of two or more zero words as ``::``, an IPv4 tail dotted after ``::`` or
    ``::ffff:``."""
    words = [int.from_bytes(packed[k : k + 2], "big") for k in range(0, 16, 2)]
    best_base, best_len, cur_base, cur_len = -1, 0, -1, 0
    for k, w in enumerate([*words, 1]):
        if w == 0 and k < 8:
            if cur_base == -1:
                cur_base, cur_len = k, 0
            cur_len += 1
        elif cur_base != -1:
            if best_base == -1 or cur_len > best_len:
                best_base, best_len = cur_base, cur_len
            cur_base = -1
    if best_len < 2:
        best_base = -1
    out = ""
    for k in range(8):
        if best_base != -1 and best_base <= k < best_base + best_len:
            if k == best_base:
                out += ":"
            continue
        if k != 0:
            out += ":"
        if k == 6 and best_base == 0 and (best_len == 6 or (best_len == 5 and words[5] == 0xFFFF)):
            return out + ".".join(str(x) for x in packed[12:])
        out += f"{words[k]:x}"
    if best_base != -1 and best_base + best_len == 8:
        out += ":"
    return out


def network_text(v: Any) -> str:
    """An inet or cidr value as PostgreSQL prints it (``inet_out``/``cidr_out``)."""
    packed, bits = _parts(v)
    text = ipv6_text(packed) if len(packed) == 16 else ".".join(str(x) for x in packed)
    if isinstance(v, ipaddress.IPv4Network | ipaddress.IPv6Network) or bits != 8 * len(packed):
        text += f"/{bits}"
    return text


__all__ = [
    "MacEncoding",
    "NetworkEncoding",
    "network_text",
    "parse_macaddr",
    "parse_macaddr8",
    "parse_network",
]

REGISTERED.update({"inet": NetworkEncoding, "cidr": NetworkEncoding})
REGISTERED.update({"macaddr": MacEncoding, "macaddr8": MacEncoding})
for _kind in (ipaddress.IPv6Address, ipaddress.IPv6Interface, ipaddress.IPv6Network):
    TEXT_FORMATS[_kind] = network_text
