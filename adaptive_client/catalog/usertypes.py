"""Enum types and domains: their definitions live only in the sealed catalog.

An enum's labels are application data: the server never sees them.  Each label has a
*position*, an integer of :data:`POSITION_BITS` bits, chosen once and never changed:

* ``CREATE TYPE ... AS ENUM`` spaces the labels :data:`STEP` apart from the middle of
  the domain, so that values can be added at either end (``ADD VALUE`` without BEFORE or
  AFTER appends one step past the last) about 2**31 times;
* ``ADD VALUE ... BEFORE | AFTER`` takes the midpoint between the two neighbours: about
  32 values fit between two labels created together.  Where no integer is left between
  them the statement is refused (``EnumPositionsExhausted``, 54000) rather than
  re-encrypting the rows that hold later labels.

An enum column's onions hold the position, never the label: the Eq onion is DET of the
position's 8 bytes (equal labels encrypt alike, every ciphertext has the same length,
and ``RENAME VALUE`` changes no stored byte), the Ord onion OPE of the position (the
server orders by the declared order, values added BEFORE another included).  A value
reads back as psycopg reads an enum it has no adapter for: a ``str``.  A result column
of an enum type is described as ``text`` (OID 25): the encrypted database has no such
type for an OID to name.

A domain is its base type (a built-in type, an enum, another domain) with a default,
NOT NULL and CHECK constraints; its columns are columns of the base type whose
constraints the server enforces as table constraints (``typeddl``).

``EnumType`` is the column type of an enum column (``SqlType`` with its labels);
``TypeMeta`` the sealed definition of an enum or a domain (a row of
``adaptive.tables``, listed in the catalog head like a table's).
"""

from __future__ import annotations

import enum as py_enum
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from psycopg import errors as pg_errors

from ..errors import AdaptiveError, EncodingError, InvalidTextInput, MetadataTampered
from ..syntax.names import quoted_shown
from ..values.encodings import EQ, ORD, Encoding, SqlType, parse_sql_type

POSITION_BITS = 64
STEP = 1 << 32
FIRST = 1 << 63
MAX_LABEL_BYTES = 63  # PostgreSQL's NAMEDATALEN - 1


class UnsafeNewEnumValue(EncodingError, pg_errors.UnsafeNewEnumValueUsage):
    """A label added in the current transaction to an enum that existed before it,
    used before the transaction commits (55P04), as PostgreSQL refuses it."""


class EnumPositionsExhausted(AdaptiveError, pg_errors.ProgramLimitExceeded):
    """No position is left between two labels for a value added BEFORE/AFTER (54000)."""


class EnumTypeMismatch(EncodingError, pg_errors.DatatypeMismatch):
    """A non-string value for an enum column (42804)."""


@dataclass(frozen=True)
class EnumType(SqlType):
    """An enum column's type: ``name`` is the enum's; ``labels`` (label, position) in
    declared order; ``unsafe`` the labels not usable yet (added in the transaction)."""

    labels: tuple[tuple[str, int], ...] = ()
    unsafe: frozenset[str] = frozenset()

    @property
    def oid(self) -> int:
        return 25  # (no such type on the server: described as its values' text)

    def sql(self) -> str:
        return self.name

    def own_encoding(self) -> Encoding | None:
        return _enum_encoding(self)


class EnumEncoding(Encoding):
    """An enum's labels: Eq bytes and Ord integer are the label's position."""

    onions = frozenset({EQ, ORD})
    ope_bits = POSITION_BITS

    def __init__(self, sql_type: EnumType) -> None:
        super().__init__(sql_type)
        self._type = sql_type
        self._position = dict(sql_type.labels)
        self._label = {p: label for label, p in sql_type.labels}

    def coerce(self, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, py_enum.Enum):
            value = value.name  # (psycopg sends a Python Enum member by its name)
        if not isinstance(value, str):
            kind = "integer" if isinstance(value, int) else type(value).__name__
            raise EnumTypeMismatch(f"value of type {kind} for enum {self._type.name}")
        if value not in self._position:
            raise InvalidTextInput(
                f'invalid input value for enum {quoted_shown(self._type.name)}: "{value}"'
            )
        if value in self._type.unsafe:
            raise UnsafeNewEnumValue(
                f'unsafe use of new value "{value}" of enum type {self._type.name}'
                "\nHINT:  New enum values must be committed before they can be used."
            )
        return value

    def to_bytes(self, v: str) -> bytes:
        return self._position[v].to_bytes(POSITION_BITS // 8, "big")

    def from_bytes(self, b: bytes) -> str:
        return self.from_ope(int.from_bytes(bytes(b), "big"))

    def to_ope(self, v: str) -> int:
        return self._position[v]

    def from_ope(self, i: int) -> str:
        try:
            return self._label[i]
        except KeyError:
            raise self._bad("position") from None

    def order_key(self, v: str) -> int:
        return self._position[v]


@lru_cache(maxsize=256)
def _enum_encoding(t: EnumType) -> EnumEncoding:
    return EnumEncoding(t)


@dataclass
class TypeMeta:
    """A user-defined type's sealed definition.  ``kind`` is ``enum`` (``labels``: label
    and position, in declared order) or ``domain`` (``base``: a built-in type as
    written, or ``base_udt``: the anon name of another enum or domain; ``not_null``,
    ``default`` as SQL text, ``checks``: name and condition over ``VALUE``)."""

    name: str
    anon: str
    kind: str
    labels: list[tuple[str, int]] = field(default_factory=list)
    base: str | None = None
    base_udt: str | None = None
    not_null: bool = False
    default: str | None = None
    checks: list[dict[str, str]] = field(default_factory=list)
    version: int = 1

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"udt": self.name, "anon": self.anon, "kind": self.kind}
        if self.kind == "enum":
            out["labels"] = [list(x) for x in self.labels]
        else:
            out.update(
                base=self.base,
                base_udt=self.base_udt,
                not_null=self.not_null,
                default=self.default,
                checks=self.checks,
            )
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any], version: int) -> TypeMeta:
        return cls(
            name=d["udt"],
            anon=d["anon"],
            kind=d["kind"],
            labels=[(str(label), int(p)) for label, p in d.get("labels", [])],
            base=d.get("base"),
            base_udt=d.get("base_udt"),
            not_null=bool(d.get("not_null")),
            default=d.get("default"),
            checks=[dict(c) for c in d.get("checks", [])],
            version=version,
        )

    def ordered(self) -> list[tuple[str, int]]:
        return sorted(self.labels, key=lambda x: x[1])


def resolve(
    types: dict[str, TypeMeta], anon: str, unsafe: dict[str, set[str]] | None = None
) -> SqlType:
    """The column type a user type stands for: an enum's ``EnumType``, a domain's base
    type (resolved through domains over domains)."""
    seen: set[str] = set()
    while True:
        meta = types.get(anon)
        if meta is None or anon in seen:
            raise MetadataTampered(f"user type {anon} is not in the catalog")
        seen.add(anon)
        if meta.kind == "enum":
            fresh = frozenset((unsafe or {}).get(anon, ()))
            return EnumType(meta.name, labels=tuple(meta.ordered()), unsafe=fresh)
        if meta.base_udt is None:
            return parse_sql_type(meta.base or "")
        anon = meta.base_udt


def chain(types: dict[str, TypeMeta], anon: str) -> list[TypeMeta]:
    """The domains a column of user type ``anon`` is declared with, outermost first
    (empty for an enum)."""
    out: list[TypeMeta] = []
    while anon in types and types[anon].kind == "domain" and len(out) < 64:
        out.append(types[anon])
        anon = types[anon].base_udt or ""
    return out


def position_between(below: int | None, above: int | None) -> int | None:
    """A position strictly between two labels' (None: the end of the order); None where
    no integer is left between them."""
    if below is None and above is None:
        return FIRST
    if above is None:
        assert below is not None
        top = 1 << POSITION_BITS
        p = below + STEP if below + STEP < top else (below + top) // 2
    elif below is None:
        p = above - STEP if above - STEP >= 0 else above // 2
    else:
        p = (below + above) // 2
    lo = -1 if below is None else below
    hi = 1 << POSITION_BITS if above is None else above
    return p if lo < p < hi else None


__all__ = [
    "EnumEncoding",
    "EnumPositionsExhausted",
    "EnumType",
    "TypeMeta",
    "UnsafeNewEnumValue",
    "chain",
    "position_between",
    "resolve",
]
