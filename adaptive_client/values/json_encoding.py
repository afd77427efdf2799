"""json and jsonb columns: PostgreSQL's json input, jsonb's normal form and its order.

Input is read as PostgreSQL 15's json parser reads it (RFC 8259: whitespace is space,
tab, newline and carriage return; numbers without leading zeros, ``+``, ``.5`` or
``NaN``; strings with every character below 0x20 escaped), refusing what it refuses with
its SQLSTATE: 22P02 for invalid syntax, 22P05 for ``\\u0000`` in a jsonb string, 54001
for nesting deeper than PostgreSQL's stack allows (modelled on its default
``max_stack_depth``: about 14,500 arrays or 13,000 objects; the exact depth varies by a
few levels with the statement around it).

- ``json`` keeps the text exactly as written (its ``\\u`` escapes checked for four hex
  digits only, surrogates and ``\\u0000`` accepted, as PostgreSQL's validation does).
  PostgreSQL has no equality or order for json: the column has an Exact onion only
  (RND), and ``=``, ``GROUP BY``, ``DISTINCT`` and ``ORDER BY`` on it raise 42883 as in
  PostgreSQL.
- ``jsonb`` stores the normal form ``jsonb_out`` prints: keys sorted by length, then
  bytewise, the last of duplicate keys kept, ``{"a": 1, "b": [1, 2]}`` spacing, strings
  re-escaped as ``escape_json`` does, numbers as numeric prints them (``1.0`` stays
  ``1.0``, ``1e2`` is ``100``).  Its Eq onion holds the same text with every number
  normalised (``1.0`` and ``1`` are equal in jsonb), its Exact onion the text as
  printed; its Ord onion an 8-byte order-preserving prefix (``ope_exact`` False) whose
  ties the client breaks with :meth:`JsonbEncoding.order_key`, jsonb_cmp's order:
  top-level ``[]`` < null < strings < numbers < booleans < other arrays (by length,
  then elements) < objects (by number of pairs, then keys and values in stored order);
  strings (values and keys alike) compared by the database's collation.

Inside the client a value is a :class:`JsonText` (the text PostgreSQL prints); the
application receives what psycopg's loader for the type gives for that text
(:func:`application_value`, using the loads function registered on the session, if
any): ``json.loads`` by default.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg.adapt import PyFormat
from psycopg.types.json import Json, Jsonb

from ..errors import AdaptiveError, EncodingError, InvalidTextInput
from . import handout
from .collation import Collation, order_key, primary_prefix
from .encoding_base import EQ, ORD, REGISTERED, Encoding, SqlType, type_error
from .numeric_encodings import FreeNumericEncoding
from .session import connection

JSON_OID, JSONB_OID = 114, 3802
JSON_OIDS = frozenset({JSON_OID, JSONB_OID})


class UntranslatableCharacter(EncodingError, pg_errors.UntranslatableCharacter):
    """``\\u0000`` in a jsonb string (22P05), as PostgreSQL refuses it."""


class JsonTooDeep(EncodingError, pg_errors.StatementTooComplex):
    """Nesting deeper than PostgreSQL's parser has stack for (54001)."""


class JsonTypeMismatch(EncodingError, pg_errors.DatatypeMismatch):
    """A parameter of another SQL type stored into a json or jsonb column (42804)."""


class UndefinedJsonOperator(AdaptiveError, pg_errors.UndefinedFunction):
    """An operator or function PostgreSQL does not have for json or jsonb (42883)."""


# --- values -------------------------------------------------------------------------------


class JsonText:
    """A json or jsonb value inside the client: the text PostgreSQL prints for it."""

    __slots__ = ("oid", "text")

    def __init__(self, text: str, oid: int = JSON_OID) -> None:
        self.text = text
        self.oid = oid

    def __str__(self) -> str:
        return self.text  # (pg_text, COPY TO: PostgreSQL's output)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.text!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


class JsonbText(JsonText):
    """A jsonb value: equal, hashed and ordered as jsonb compares (jsonb_cmp)."""

    __slots__ = ("_canon", "_key", "encoding")

    def __init__(self, text: str, encoding: JsonbEncoding, canon: str | None = None) -> None:
        super().__init__(text, JSONB_OID)
        self.encoding = encoding
        self._canon = canon
        self._key: Any = None

    @property
    def canonical(self) -> str:
        if self._canon is None:
            self._canon = _parse(self.text, jsonb=True).canon
        return self._canon

    def key(self) -> Any:
        if self._key is None:
            self._key = self.encoding.order_key(self)
        return self._key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JsonbText) and other.canonical == self.canonical

    def __hash__(self) -> int:
        return hash(self.canonical)

    def __lt__(self, other: JsonbText) -> bool:
        return bool(self.key() < other.key())

    def __le__(self, other: JsonbText) -> bool:
        return bool(self.key() <= other.key())

    def __gt__(self, other: JsonbText) -> bool:
        return bool(self.key() > other.key())

    def __ge__(self, other: JsonbText) -> bool:
        return bool(self.key() >= other.key())


def application_value(v: JsonText) -> Any:
    """The Python value psycopg's loader for the value's type gives for its text: the
    session connection's (a loads function registered on it or globally before it
    connected), else the global one."""
    conn = connection()
    adapters = conn.adapters if conn is not None else psycopg.adapters
    loader = adapters.get_loader(v.oid, psycopg.pq.Format.TEXT)
    if loader is None:
        return v.text
    return loader(v.oid, conn).load(v.text.encode("utf-8"))


for _kind in (JsonText, JsonbText):
    handout.register(_kind, application_value, *JSON_OIDS)


# --- the parser ---------------------------------------------------------------------------

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_WORD = re.compile(r"[A-Za-z0-9_\x80-\U0010ffff]+")  # PostgreSQL's JSON_ALPHANUMERIC_CHAR
_PLAIN_STRING = re.compile(r'"([^"\\\x00-\x1f]*)"')
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_INVALID = re.compile(r"[-+.A-Za-z0-9_\x80-\U0010ffff]+")
_HEX4 = re.compile(r"[0-9A-Fa-f]{4}")
# PostgreSQL's check_stack_depth() under the default max_stack_depth (2MB): the share of
# the stack one level of array or object nesting takes in its recursive descent parser
_ARRAY_LEVEL, _OBJECT_LEVEL = 1 / 14_541, 1 / 13_097
_OUT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r"}
_OUT_ESCAPES["\t"] = "\\t"
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f]')


def _bad(detail: str) -> InvalidTextInput:
    return InvalidTextInput(f"invalid input syntax for type json\nDETAIL:  {detail}")


def escape_json(s: str) -> str:
    """A string as PostgreSQL's escape_json prints it."""
    if not _NEEDS_ESCAPE.search(s):
        return f'"{s}"'
    return (
        '"' + _NEEDS_ESCAPE.sub(lambda m: _OUT_ESCAPES.get(m[0]) or f"\\u{ord(m[0]):04x}", s) + '"'
    )


class _Node:
    """A parsed jsonb value: its kind, its text as printed, its text with normalised
    numbers, and (scalars) its value or (containers) its size."""

    __slots__ = ("canon", "exact", "kind", "value")

    def __init__(self, kind: int, exact: str, canon: str, value: Any) -> None:
        self.kind, self.exact, self.canon, self.value = kind, exact, canon, value


# jsonb's type order (JsonbValue's enum): null < string < numeric < bool < array < object
NULL, STRING, NUMBER, BOOL, ARRAY, OBJECT = 0, 1, 2, 3, 16, 17
_KEYWORDS = {"true": (BOOL, True), "false": (BOOL, False), "null": (NULL, None)}


# a json number is read as numeric reads it (without precision: as written)
_NUMERIC = FreeNumericEncoding(SqlType("numeric"))


def _number(token: str) -> tuple[str, str, Decimal]:
    enc = _NUMERIC
    d = enc.coerce(token)
    return format(d, "f"), enc.to_bytes(d).decode("ascii"), d


def _string(text: str, start: int, decode: bool) -> tuple[str | None, int]:
    """The string token at ``start`` (a quote): its value (None unless ``decode``) and
    the index after it, checked as PostgreSQL's lexer checks it."""
    m = _PLAIN_STRING.match(text, start)
    if m:
        return m[1], m.end()
    out: list[str] = []
    i, n = start + 1, len(text)
    high: int | None = None  # a high surrogate waiting for its low one (jsonb)
    while True:
        if i >= n:
            raise _bad(f'Token "{text[start:]}" is invalid.')
        c = text[i]
        if c == '"':
            if high is not None:
                raise _bad("Unicode low surrogate must follow a high surrogate.")
            return ("".join(out) if decode else None), i + 1
        if c < " ":
            raise _bad(f"Character with value 0x{ord(c):02x} must be escaped.")
        if c != "\\":
            if high is not None and decode:
                raise _bad("Unicode low surrogate must follow a high surrogate.")
            out.append(c)
            i += 1
            continue
        e = text[i + 1 : i + 2]
        if e == "u":
            h = _HEX4.match(text, i + 2)
            if not h:
                raise _bad('"\\u" must be followed by four hexadecimal digits.')
            i = h.end()
            if not decode:
                continue
            ch = int(h[0], 16)
            if 0xD800 <= ch <= 0xDBFF:
                if high is not None:
                    raise _bad("Unicode high surrogate must not follow a high surrogate.")
                high = ch
                continue
            if 0xDC00 <= ch <= 0xDFFF:
                if high is None:
                    raise _bad("Unicode low surrogate must follow a high surrogate.")
                ch = 0x10000 + ((high - 0xD800) << 10) + (ch - 0xDC00)
                high = None
            elif high is not None:
                raise _bad("Unicode low surrogate must follow a high surrogate.")
            if ch == 0:
                raise UntranslatableCharacter(
                    "unsupported Unicode escape sequence\nDETAIL:  \\u0000 cannot be "
                    "converted to text."
                )
            out.append(chr(ch))
            continue
        if e not in _ESCAPES:
            raise _bad(f'Escape sequence "\\{e}" is invalid.')
        if high is not None and decode:
            raise _bad("Unicode low surrogate must follow a high surrogate.")
        out.append(_ESCAPES[e])
        i += 2


def _found(text: str, i: int) -> str:
    """The token PostgreSQL names in "but found ..." (or the end of input)."""
    if i >= len(text):
        raise _bad("The input string ended unexpectedly.")
    w = _WORD.match(text, i) or _NUMBER.match(text, i)
    return w[0] if w else text[i]


class _Parsed:
    __slots__ = ("canon", "exact", "top")

    def __init__(self, exact: str, canon: str, top: _Node | None) -> None:
        self.exact, self.canon, self.top = exact, canon, top


def _parse(text: str, *, jsonb: bool, key_of: Callable[[_Node, Any], Any] | None = None) -> Any:
    """Parse ``text`` as PostgreSQL's json input does (iteratively: no recursion limit
    but PostgreSQL's).  json: validated only (returns None); jsonb: a :class:`_Parsed`,
    or with ``key_of`` the order key built bottom-up (``key_of(node, children)``)."""
    # each open container: [is_object, items, pending key, its share of the stack]
    stack: list[list[Any]] = []
    depth = 0.0
    i = _WS.match(text, 0).end()  # type: ignore[union-attr]
    n = len(text)
    done: Any = None
    finished = False
    while not finished:
        # -- a value is expected at i --------------------------------------------------------
        if i >= n:
            raise _bad("The input string ended unexpectedly.")
        c = text[i]
        value: Any
        if c == "{" or c == "[":
            share = _OBJECT_LEVEL if c == "{" else _ARRAY_LEVEL
            depth += share
            if depth >= 1 - 1e-12:
                raise JsonTooDeep("stack depth limit exceeded")
            stack.append([c == "{", [], None, share])
            i = _WS.match(text, i + 1).end()  # type: ignore[union-attr]
            closer = "}" if c == "{" else "]"
            if i < n and text[i] == closer:
                i += 1
                value = _close(stack, jsonb, key_of)
                depth -= share
            elif c == "{":
                i = _key(text, i, stack[-1], jsonb)
                continue
            else:
                continue
        elif c == '"':
            s, i = _string(text, i, jsonb)
            value = _scalar(STRING, s, key_of) if jsonb else None
        elif c == "-" or "0" <= c <= "9":
            m = _NUMBER.match(text, i)
            if not m or _WORD.match(text, m.end()):
                raise _bad(f'Token "{_INVALID.match(text, i)[0]}" is invalid.')  # type: ignore[index]
            i = m.end()
            value = None
            if jsonb:
                exact, canon, d = _number(m[0])
                value = (
                    _Node(NUMBER, exact, canon, d)
                    if key_of is None
                    else key_of(_Node(NUMBER, "", "", d), None)
                )
        else:
            w = _WORD.match(text, i)
            word = w[0] if w else c
            if word not in _KEYWORDS:
                if c in ",:]}":
                    raise _bad(f'Expected JSON value, but found "{c}".')
                raise _bad(f'Token "{word}" is invalid.')
            i += len(word)
            kind, v = _KEYWORDS[word]
            value = _scalar(kind, v, key_of) if jsonb else None
        # -- after a value: a separator, a closer, or the end ----------------------------------
        while True:
            i = _WS.match(text, i).end()  # type: ignore[union-attr]
            if not stack:
                if i < n:
                    raise _bad(f'Expected end of input, but found "{_found(text, i)}".')
                done, finished = value, True
                break
            top = stack[-1]
            if top[0]:
                top[1].append((top[2], value))
            else:
                top[1].append(value)
            closer = "}" if top[0] else "]"
            if i < n and text[i] == closer:
                i += 1
                depth -= top[3]
                value = _close(stack, jsonb, key_of)
                continue
            if i < n and text[i] == ",":
                i = _WS.match(text, i + 1).end()  # type: ignore[union-attr]
                if top[0]:
                    i = _key(text, i, top, jsonb)
                break
            raise _bad(f'Expected "," or "{closer}", but found "{_found(text, i)}".')
    if not jsonb:
        return None
    if key_of is not None:
        return done
    return _Parsed(done.exact, done.canon, done)


def _key(text: str, i: int, frame: list[Any], jsonb: bool) -> int:
    """An object's key and its colon at ``i``; the index of the value after them."""
    if i >= len(text) or text[i] != '"':
        raise _bad(f'Expected string or "}}", but found "{_found(text, i)}".')
    key, i = _string(text, i, jsonb)
    frame[2] = key
    i = _WS.match(text, i).end()  # type: ignore[union-attr]
    if i >= len(text) or text[i] != ":":
        raise _bad(f'Expected ":", but found "{_found(text, i)}".')
    return _WS.match(text, i + 1).end()  # type: ignore[union-attr]


def _scalar(kind: int, v: Any, key_of: Callable[[_Node, Any], Any] | None) -> Any:
    text = escape_json(v) if kind == STRING else "null" if v is None else "true" if v else "false"
    node = _Node(kind, text, text, v)
    return node if key_of is None else key_of(node, None)


def storage_order(key: str) -> tuple[int, bytes]:
    """jsonb's order of an object's keys: by length in bytes, then bytewise."""
    b = key.encode("utf-8")
    return len(b), b


def _close(stack: list[list[Any]], jsonb: bool, key_of: Callable[[_Node, Any], Any] | None) -> Any:
    is_object, items, _, _ = stack.pop()
    if not jsonb:
        return None
    if is_object:
        pairs = dict(items)  # the last of duplicate keys wins
        keys = sorted(pairs, key=storage_order)
        if key_of is not None:
            return key_of(_Node(OBJECT, "", "", len(keys)), [(k, pairs[k]) for k in keys])
        exact = ", ".join(f"{escape_json(k)}: {pairs[k].exact}" for k in keys)
        canon = ", ".join(f"{escape_json(k)}: {pairs[k].canon}" for k in keys)
        return _Node(OBJECT, "{" + exact + "}", "{" + canon + "}", len(keys))
    if key_of is not None:
        return key_of(_Node(ARRAY, "", "", len(items)), items)
    exact = ", ".join(v.exact for v in items)
    canon = ", ".join(v.canon for v in items)
    return _Node(ARRAY, "[" + exact + "]", "[" + canon + "]", len(items))


# --- encodings ----------------------------------------------------------------------------


def _input_text(t: SqlType, value: Any, comparand: bool) -> tuple[str, bool]:
    """The text a value stores (what psycopg sends), and whether it came as jsonb (a
    Jsonb wrapper: PostgreSQL reads it as jsonb, then casts it)."""
    if isinstance(value, str):
        text, as_jsonb = value, False
    elif isinstance(value, Json | Jsonb):
        as_jsonb = isinstance(value, Jsonb)
        if comparand and (t.name == "jsonb") != as_jsonb:
            raise UndefinedJsonOperator(
                f"operator does not exist: {t.name} = {'jsonb' if as_jsonb else 'json'}"
            )
        conn = connection()
        adapters = conn.adapters if conn is not None else psycopg.adapters
        dumped = adapters.get_dumper(type(value), PyFormat.TEXT)(type(value), conn).dump(value)
        text = bytes(dumped).decode("utf-8") if dumped is not None else "null"
    else:
        err = type_error(t, value)
        if not isinstance(err, EncodingError):
            raise err  # psycopg cannot send it either
        sql = _SQL_TYPE_NAMES.get(type(value), type(value).__name__)
        if comparand:
            raise UndefinedJsonOperator(f"operator does not exist: {t.name} = {sql}")
        raise JsonTypeMismatch(f"column is of type {t.name} but expression is of type {sql}")
    if "\x00" in text:
        raise EncodingError("strings cannot contain NUL characters")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise EncodingError("strings must be valid Unicode (no lone surrogates)") from None
    return text, as_jsonb


_SQL_TYPE_NAMES: dict[type, str] = {
    int: "smallint", float: "double precision", bool: "boolean", Decimal: "numeric",
    bytes: "bytea", list: "array",
}  # fmt: skip


def _padded(text: str) -> bytes:
    """The text padded (0x80 then zeros) to a multiple of 16 bytes: under RND its length
    shows no more than a DET ciphertext of it would (one AES block per 16 bytes)."""
    b = text.encode("utf-8")
    return b + b"\x80" + b"\x00" * (15 - len(b) % 16)


def _unpadded(enc: Encoding, b: bytes) -> str:
    body = bytes(b).rstrip(b"\x00")
    if not body.endswith(b"\x80") or len(b) % 16:
        raise enc._bad("encoding")
    try:
        return body[:-1].decode("utf-8")
    except UnicodeDecodeError:
        raise enc._bad("encoding") from None


class JsonEncoding(Encoding):
    """json: the text as written, in an Exact onion (RND) only: PostgreSQL has no
    equality or order for json."""

    onions: frozenset[str] = frozenset()
    ope_bits = 0
    ope_exact = False
    exact_display = True

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, JsonText):
            return value if type(value) is JsonText else JsonText(value.text)
        text, as_jsonb = _input_text(self.sql_type, value, comparand=False)
        if as_jsonb:  # jsonb cast to json: jsonb_out's text
            return JsonText(_parse(text, jsonb=True).exact)
        _parse(text, jsonb=False)
        return JsonText(text)

    def comparand(self, value: Any) -> Any:
        raise UndefinedJsonOperator(_operator_message("json", value))

    def to_bytes(self, v: JsonText) -> bytes:
        return v.text.encode("utf-8")

    def from_bytes(self, b: bytes) -> JsonText:
        try:
            return JsonText(bytes(b).decode("utf-8"))
        except UnicodeDecodeError:
            raise self._bad("encoding") from None

    def to_exact_bytes(self, v: JsonText) -> bytes:
        return _padded(v.text)

    def from_exact_bytes(self, b: bytes) -> JsonText:
        return JsonText(_unpadded(self, b))

    def order_key(self, v: JsonText) -> Any:
        """A key per text: what the client engine holds a json value by (engine/held.py;
        json has no equality or order, so nothing compares these keys)."""
        return v.text.encode("utf-8")


def _operator_message(name: str, value: Any) -> str:
    if isinstance(value, Jsonb):
        other = "jsonb"
    elif isinstance(value, Json):
        other = "json"
    elif isinstance(value, str):
        other = "unknown"
    else:
        other = _SQL_TYPE_NAMES.get(type(value), type(value).__name__)
    return f"operator does not exist: {name} = {other}"


def refusal(encoding: Encoding, cap: str) -> UndefinedJsonOperator | None:
    """PostgreSQL's error for a json column asked for equality or order (None: the
    column's type has them)."""
    if not isinstance(encoding, JsonEncoding):
        return None
    what = "ordering" if cap == "order" else "equality"
    return UndefinedJsonOperator(f"could not identify an {what} operator for type json")


def operator_refusal(symbol: str, other: str) -> UndefinedJsonOperator:
    """PostgreSQL's error for ``json_column <symbol> <other>``: json has no operator."""
    return UndefinedJsonOperator(f"operator does not exist: json {symbol} {other}")


class JsonbEncoding(Encoding):
    """jsonb: the normal form (Exact onion), the normal form with normalised numbers (Eq
    onion), an 8-byte order-preserving prefix (Ord onion, ties broken on the client)."""

    onions = frozenset({EQ, ORD})
    ope_bits = 64
    ope_exact = False
    exact_display = True  # {"a": 1.0} = {"a": 1}, but PostgreSQL prints each as written

    def __init__(self, sql_type: SqlType, collation: Collation | None = None) -> None:
        super().__init__(sql_type)
        self.collation = None if collation is None or collation.bytewise else collation

    def coerce(self, value: Any) -> Any:
        return self._value(value, comparand=False)

    def comparand(self, value: Any) -> Any:
        return self._value(value, comparand=True)

    def _value(self, value: Any, comparand: bool) -> Any:
        if value is None:
            return None
        if isinstance(value, JsonbText):
            return value if value.encoding is self else JsonbText(value.text, self)
        if isinstance(value, JsonText):
            value = value.text
        text, _ = _input_text(self.sql_type, value, comparand)
        parsed = _parse(text, jsonb=True)
        return JsonbText(parsed.exact, self, parsed.canon)

    def to_bytes(self, v: JsonbText) -> bytes:
        return v.canonical.encode("utf-8")

    def from_bytes(self, b: bytes) -> JsonbText:
        try:
            text = bytes(b).decode("utf-8")
        except UnicodeDecodeError:
            raise self._bad("encoding") from None
        return JsonbText(text, self, text)

    def to_exact_bytes(self, v: JsonbText) -> bytes:
        return _padded(v.text)

    def from_exact_bytes(self, b: bytes) -> JsonbText:
        return JsonbText(_unpadded(self, b), self)

    # -- order -----------------------------------------------------------------------------
    def _string_key(self, s: str) -> Any:
        return s.encode("utf-8") if self.collation is None else order_key(self.collation, s)

    def order_key(self, v: JsonbText) -> Any:
        """jsonb_cmp's order as a nested tuple (see the module docstring)."""

        def key_of(node: _Node, children: Any) -> Any:
            kind = node.kind
            if kind == NULL:
                return (NULL,)
            if kind in (STRING, NUMBER, BOOL):
                return (kind, self._string_key(node.value) if kind == STRING else node.value)
            if kind == ARRAY:
                return (ARRAY, node.value, tuple(children))
            flat: list[Any] = []
            for k, child in children:
                flat += (self._string_key(k), child)
            return (OBJECT, node.value, tuple(flat))

        k = _parse(v.canonical, jsonb=True, key_of=key_of)
        if k[0] == OBJECT:
            return k
        if k[0] == ARRAY:  # a top-level array: by length, then before a raw scalar's
            return (ARRAY, k[1], 1, k[2])
        return (ARRAY, 1, 0, (k,))  # a raw scalar: a one-element pseudo-array

    def to_ope(self, v: JsonbText) -> int:
        top = _parse(v.canonical, jsonb=True).top
        kind, value = top.kind, top.value
        if kind == ARRAY:
            tag, rest = (0, b"") if value == 0 else (5, min(value, 0xFFFFFFFF).to_bytes(4, "big"))
        elif kind == OBJECT:
            tag, rest = 6, min(value, 0xFFFFFFFF).to_bytes(4, "big")
        elif kind == NULL:
            tag, rest = 1, b""
        elif kind == STRING:
            s = value
            prefix = (
                s.encode("utf-8") if self.collation is None else primary_prefix(self.collation, s)
            )
            tag, rest = 2, prefix[:7]
        elif kind == NUMBER:
            tag, rest = 3, _double_order(float(value)).to_bytes(8, "big")[:7]
        else:
            tag, rest = 4, bytes([1 if value else 0])
        return int.from_bytes((bytes([tag]) + rest).ljust(8, b"\0")[:8], "big")


def _double_order(f: float) -> int:
    """A double's bits flipped so that unsigned order is numeric order."""
    (u,) = struct.unpack(">Q", struct.pack(">d", 0.0 if f == 0 else f))
    return int(u ^ 0xFFFFFFFFFFFFFFFF if u >> 63 else u | (1 << 63))


def json_encoding(t: SqlType, collation: Collation | None = None) -> Encoding:
    """The encoding of a json or jsonb column (jsonb's strings ordered by ``collation``,
    the database's)."""
    return JsonEncoding(t) if t.name == "json" else JsonbEncoding(t, collation)


REGISTERED.update({"json": json_encoding, "jsonb": json_encoding})
