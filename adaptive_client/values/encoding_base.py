"""The base of the encodings: SQL types, the ``Encoding`` interface, and the tables the
type families fill.

Contract: :class:`SqlType` is a parsed column type (``encodings.parse_sql_type`` parses
one); :class:`Encoding` is the interface every column type's encoding implements (see
``encodings`` for the table of types and onions); ``EQ``, ``ORD``, ``SUM``, ``SEARCH``,
``SUBSTR`` name the onions an encoding offers.  Each type family (``numeric_encodings``,
``text_encodings``, ``datetime_encodings``, ``interval_encoding``, ``json_encoding``,
``network_encodings``, ``bit_encodings``) imports this module and registers its
encodings in ``REGISTERED`` (by canonical type name) and the text of its Python values
in ``TEXT_FORMATS``; ``encodings`` imports every family and looks encodings up there.
This module imports no value module: every family may import it.
"""

from __future__ import annotations

import dataclasses
import decimal
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP
from typing import Any

import psycopg
from psycopg.adapt import PyFormat

from ..errors import CannotAdapt, EncodingError, ValueTypeMismatch

# Exact decimal arithmetic (the default context rounds to 28 digits).
EXACT = decimal.Context(
    prec=decimal.MAX_PREC, rounding=ROUND_HALF_UP, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN
)

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

    @property
    def typmod(self) -> int:
        """PostgreSQL's type modifier of the declared type, as a result column read from
        it reports it (-1: none; an interval's field restriction is not given)."""
        if self.element is not None:
            return self.element.typmod  # (an array column reports its element's)
        if self.precision is None or self.fields is not None:
            return -1
        if self.name == "numeric":
            return ((self.precision << 16) | (self.scale or 0)) + 4
        if self.name in ("varchar", "char"):
            return self.precision + 4
        if self.name in ("timestamp", "timestamptz", "time", "timetz") or self.name in BIT_TYPES:
            return self.precision
        return -1

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
        if self.name in FRACTIONAL_TYPES and self.precision is not None:
            return f"{self.name}({self.precision})"
        if self.name in BIT_TYPES and self.precision is not None:
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
# types whose modifier is a number of fractional digits (0 to 6)
FRACTIONAL_TYPES = frozenset({"timestamp", "timestamptz", "time", "timetz", "interval"})
# bit strings, whose modifier is a length in bits (bit: 1 where not given)
BIT_TYPES = frozenset({"bit", "varbit"})
# the encodings of the type families, by canonical type name: each family module adds
# its own when imported (``encodings`` imports them all)
REGISTERED: dict[str, Callable[[SqlType], Encoding]] = {}
# the text PostgreSQL prints for the families' Python values, where str() is not it
TEXT_FORMATS: dict[type, Callable[[Any], str]] = {}


def type_error(t: SqlType, value: Any) -> EncodingError | CannotAdapt:
    """The error of a value of the wrong Python type: psycopg's, where psycopg could not
    send it to PostgreSQL either (no dumper for its type); else PostgreSQL's when it is
    assigned to the column (42804: a comparison turns it into its own, 42883)."""
    try:
        psycopg.adapters.get_dumper(type(value), PyFormat.AUTO)
    except psycopg.ProgrammingError:
        return CannotAdapt(
            f"cannot adapt type {type(value).__name__!r} using placeholder '%s' (format: AUTO)"
        )
    return ValueTypeMismatch(f"{t.sql()} does not take a {type(value).__name__}")


# How the compiled layer decodes a DET plaintext (native/rnd/src/open.rs), as
# (decoder, width, scale, limit): its plain machine forms only, the rest decoded here.
NativeForm = tuple[int, int, int, int]
NATIVE_BYTES = 0  # none: the plaintext is handed back and decoded by ``from_bytes``
NATIVE_INT = 1  # a big-endian two's-complement integer of ``width`` bytes
NATIVE_TEXT = 2  # UTF-8
NATIVE_BOOL = 3  # one byte, 0 or 1
NATIVE_NUMERIC = 4  # an integer of ``width`` bytes scaled by 10**-scale, |i| < limit
NATIVE_DATE = 5  # a 4-byte Julian day + 1; a ``date`` where Python has one
# microseconds from PostgreSQL's first timestamp + 1 (8 bytes; limit: that offset from
# 2000-01-01), a naive ``datetime`` where Python has one
NATIVE_TIMESTAMP = 6
NO_NATIVE_FORM: NativeForm = (NATIVE_BYTES, 0, 0, 0)


def compiled_form(enc: Encoding) -> NativeForm:
    """``enc.native_form()``, where the class that states it also decodes the bytes: a
    subclass with a ``from_bytes`` of its own does not inherit its parent's form.  Kept
    on the encoding (a column's encoding is made once, and read on every value)."""
    form: NativeForm | None = enc.__dict__.get("_compiled_form")
    if form is None:
        mro = type(enc).__mro__
        states = next(c for c in mro if "native_form" in c.__dict__)
        decodes = next(c for c in mro if "from_bytes" in c.__dict__)
        form = enc.native_form() if states is decodes else NO_NATIVE_FORM
        enc.__dict__["_compiled_form"] = form
    return form


class Encoding:
    """Encoders for one SQL type (see the table of types and onions in ``encodings``).

    ``coerce`` accepts ``None``; the other methods take canonical non-NULL values, as
    returned by ``coerce``.
    """

    onions: frozenset[str] = frozenset({EQ, ORD})
    ope_bits: int = 64
    # the magnitude every Sum onion value (to_hom) stays below
    hom_bound: int = 2**63
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

    def native_form(self) -> NativeForm:
        """How the compiled layer decodes ``to_bytes``' output, where it decodes it
        exactly as :meth:`from_bytes` does (see NATIVE_*)."""
        return NO_NATIVE_FORM

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


def round_to(micros: int, precision: int) -> int:
    """``micros`` (since 2000-01-01) rounded to ``precision`` fractional digits as
    PostgreSQL's AdjustTimestampForTypmod rounds: half away from zero."""
    scale = 10 ** (6 - precision)
    q, r = divmod(abs(micros), scale)
    if 2 * r >= scale:
        q += 1
    return q * scale if micros >= 0 else -q * scale
