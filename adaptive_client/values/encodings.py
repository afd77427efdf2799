"""Encodings: SQL values ↔ the bytes (DET, RND) and integers (OPE, HOM) schemes take.

One :class:`Encoding` per column type (``encoding_for``).  ``coerce`` turns what an
application passes into the value PostgreSQL would store (and psycopg 3 would return);
the other methods map that canonical value to the schemes' plaintexts and back.

This module is the registry above the type families: ``parse_sql_type`` reads a column
type as DDL writes it, ``encoding_for`` gives its encoding (looked up in the table the
families fill, ``encoding_base.REGISTERED``; arrays in ``COMPOSITE_ENCODINGS``, which
``array_encoding`` fills), ``pg_text`` prints a value as PostgreSQL does.  The base
(``SqlType``, ``Encoding``) is ``encoding_base``; the families are
``numeric_encodings``, ``text_encodings``, ``datetime_encodings``,
``interval_encoding``, ``json_encoding``, ``network_encodings`` and ``bit_encodings``.
The names other modules use are re-exported here (``__all__``).

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

import re
from collections.abc import Callable
from functools import lru_cache

from ..errors import ConfigError

# (bit_encodings and network_encodings: imported for their entries in REGISTERED alone)
from . import bit_encodings, datetime_output, interval_input, network_encodings, text_output  # noqa: F401
from .collation import Collation
from .datetime_encodings import INFINITY, NEG_INFINITY, Infinite
from .encoding_base import (
    ARRAY_OIDS,
    BIT_TYPES,
    EQ,
    ORD,
    PARSED_STRING_TYPES,
    REGISTERED,
    SEARCH,
    SUBSTR,
    SUM,
    TEXT_TYPES,
    TYPE_OIDS,
    Encoding,
    SqlType,
    full_range,
    ranged,
    with_python_years,
)
from .json_encoding import json_encoding
from .numeric_encodings import (
    FloatEncoding,
    FreeNumericEncoding,
    IntEncoding,
    NumericEncoding,
    single_of,
)
from .text_encodings import CollatedTextEncoding, TextEncoding
from .value_text import COMPOSITE_TEXT, pg_text

__all__ = [
    "ARRAY_OIDS",
    "COMPOSITE_ENCODINGS",
    "COMPOSITE_TEXT",
    "EQ",
    "FOREIGN_TYPE_NAMES",
    "INFINITY",
    "NEG_INFINITY",
    "ORD",
    "PARSED_STRING_TYPES",
    "SEARCH",
    "SUBSTR",
    "SUM",
    "TEXT_TYPES",
    "TYPE_OIDS",
    "CollatedTextEncoding",
    "Encoding",
    "FloatEncoding",
    "FreeNumericEncoding",
    "Infinite",
    "IntEncoding",
    "NumericEncoding",
    "SqlType",
    "TextEncoding",
    "encoding_for",
    "full_range",
    "parse_sql_type",
    "pg_text",
    "ranged",
    "session_datestyle",
    "single_of",
    "with_python_years",
]

# --- column types as DDL writes them ------------------------------------------------------

# the spellings of each type PostgreSQL accepts -> its canonical name
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
# (dimensions ignored, as PostgreSQL ignores them), and the internal ``_elem`` names
_ARRAY_SUFFIX_RE = re.compile(r"(?: ?\[ ?\d* ?\])+| array(?: ?\[ ?\d+ ?\])?")
_INTERNAL_ARRAYS = frozenset(
    {"int2", "int4", "int8", "numeric", "float4", "float8", "text", "varchar", "bpchar",
     "date", "timestamp", "timestamptz", "time", "uuid", "bytea", "bool"}
)  # fmt: skip
# types whose modifier is a number of fractional digits (0 to 6)
_MAX_BITS = 83_886_080
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
    if name in BIT_TYPES:
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


# --- text output --------------------------------------------------------------------------


def session_datestyle() -> str:
    """The DateStyle of the session running the current statement (as the server reports
    it: no round trip); PostgreSQL's default where none runs."""
    return text_output.current().datestyle


# --- the encodings, by type ---------------------------------------------------------------

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
    if t.element is not None:
        return _composite(t, None)
    factory = REGISTERED.get(t.name)
    if factory is None:
        raise ConfigError(f"no encoding for type {t.sql()!r}")
    return factory(t)


@lru_cache(maxsize=512)
def _collated(t: SqlType, collation: Collation) -> Encoding:
    if t.name == "jsonb":  # its strings order by the database's collation
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
