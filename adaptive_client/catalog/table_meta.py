"""The encrypted schema's data model: each table, its columns, their onions (the stored
columns, their layers and keys), indexes, foreign keys, views and sequences, as the
catalog (``metadata.Catalog``) seals and opens them (``to_json`` / ``from_json``).

A column's encoding is its type's (``encodings.encoding_for``, under its collation);
an onion column builds its schemes from its keys lazily: a key never leaves these
objects except for a peel.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cached_property
from typing import Any

from ..errors import MetadataTampered, UndefinedColumn
from ..schemes import ASHE, CONTAIN, DET, HOM, OPE, ORE, RND, SEARCH, TRIGRAM
from ..schemes.rnd import single_opener
from ..values.collation import Collation
from ..values.encodings import (
    Encoding,
    SqlType,
    encoding_for,
    full_range,
    parse_sql_type,
    ranged,
    with_python_years,
)
from . import ord_layers
from .onions import TAGS, Onion


@dataclass
class OnionColumn:
    """One stored (anonymized) column holding one onion of a plain column."""

    onion: Onion
    anon: str
    stack: tuple[str, ...]
    layer: str
    floor: str | None
    keys: dict[str, bytes] = field(repr=False)  # (never shown: reprs reach logs)
    ope_bits: int = 64
    ope_exact: bool = True
    # the scheme of an Ord onion's order layer (named OPE in its stack): OPE or ORE
    # (ord_layers.py); recorded when the onion is made
    ord_scheme: str = "OPE"
    # Join adjustment (see joins.py): the label of the run-time key group this onion's
    # inner key belongs to, and per adjustment the column(s) joined and whether this one
    # moved (was re-keyed) or stayed
    key_group: str | None = None
    adjustments: list[dict[str, Any]] = field(default_factory=list)
    memo: dict[str, dict[Any, bytes]] = field(default_factory=dict, repr=False, compare=False)
    # stored value -> plaintext, for the values read again (recipes.decrypt)
    opened: dict[bytes, Any] = field(default_factory=dict, repr=False, compare=False)
    # the compiled openers of this onion's stored values, by decoder (opener())
    openers: dict[tuple[int, ...], Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def innermost(self) -> str:
        return self.stack[-1]

    # -- schemes, built lazily: a key never leaves these objects except for a peel -------
    @cached_property
    def rnd(self) -> RND:
        return RND(self.keys["RND"])

    @cached_property
    def det(self) -> DET:
        return DET(self.keys["DET"])

    @cached_property
    def ope(self) -> OPE | ORE:
        """The order layer's scheme (OPE or ORE: :attr:`ord_scheme`)."""
        return self.ope_keyed(self.keys["OPE"])

    def ope_keyed(self, key: bytes) -> OPE | ORE:
        """The order layer's scheme under ``key`` (a join adjustment's new key)."""
        return ORE(key, self.ope_bits) if self.ord_scheme == "ORE" else OPE(key, self.ope_bits)

    def layer_tag(self, layer: str) -> int:
        """The first byte of this onion's ciphertexts at ``layer`` (0: not bytes)."""
        if layer == "OPE":
            return ord_layers.TAG[self.ord_scheme]
        return TAGS.get(layer, 0)

    @property
    def shown_layer(self) -> str:
        """The layer's name as reports show it: ORE where the order layer is ORE."""
        return "ORE" if self.layer == "OPE" and self.ord_scheme == "ORE" else self.layer

    @property
    def ordered_as_bytes(self) -> bool:
        """Whether the stored bytes of the order layer sort as the values (OPE: yes;
        ORE: only through its type's operators)."""
        return self.ord_scheme != "ORE"

    @cached_property
    def hom(self) -> HOM:
        return HOM.from_bytes(self.keys["HOM"])

    @cached_property
    def ashe(self) -> ASHE:
        return ASHE(self.keys["ASHE"])

    @cached_property
    def search(self) -> SEARCH:
        return SEARCH(self.keys["SEARCH"])

    @cached_property
    def trigram(self) -> TRIGRAM:
        return TRIGRAM(self.keys["TRIGRAM"])

    @cached_property
    def contain(self) -> CONTAIN:
        return CONTAIN(self.keys["CONTAIN"])

    def opener(self, form: tuple[int, int, int, int]) -> Any | None:
        """The compiled opener of this onion's stored values, their plaintexts decoded by
        ``form`` (``encoding_base.compiled_form``): an Eq onion's ``[RND →] DET``, a
        Single onion's RND; None for other onions or without the compiled layer."""
        if form in self.openers:
            return self.openers[form]
        opener = None
        if self.stack[-1] == "DET" and set(self.stack) <= {"RND", "DET"}:
            opener = self.det.opener(self.keys["RND"] if "RND" in self.stack else None, form)
        elif self.stack == ("RND",) and self.onion is not Onion.EXACT:
            opener = single_opener(self.keys["RND"], form)  # (an Exact onion decodes otherwise)
        self.openers[form] = opener
        return opener

    def to_json(self) -> dict[str, Any]:
        return {
            "onion": self.onion.value,
            "anon": self.anon,
            "stack": list(self.stack),
            "floor": self.floor,
            "keys": {k: v.hex() for k, v in self.keys.items()},
            "ope_bits": self.ope_bits,
            "ope_exact": self.ope_exact,
            "start": self.layer,
            "key_group": self.key_group,
            "adjustments": self.adjustments,
            # (written only where not OPE: the catalogs made before ORE stay as they were)
            **({"ord_scheme": self.ord_scheme} if self.ord_scheme != "OPE" else {}),
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> OnionColumn:
        return cls(
            onion=Onion(d["onion"]),
            anon=d["anon"],
            stack=tuple(d["stack"]),
            layer=d["start"],
            floor=d["floor"],
            keys={k: bytes.fromhex(v) for k, v in d["keys"].items()},
            ope_bits=d["ope_bits"],
            ope_exact=d["ope_exact"],
            key_group=d.get("key_group"),
            adjustments=list(d.get("adjustments", [])),
            ord_scheme=d.get("ord_scheme", "OPE"),
        )


@dataclass
class ColumnMeta:
    name: str
    type: SqlType
    nullable: bool
    onions: dict[Onion, OnionColumn]
    default: Any = None
    join_group: str | None = None
    joinable: bool = True  # False: never re-keyed to join another column at run time
    # a serial or identity column: its sequence's plain and server names, and for an
    # identity column whether it is GENERATED ALWAYS ("always") or BY DEFAULT
    sequence: str | None = None
    sequence_anon: str | None = None
    identity: str | None = None
    # a default the server evaluates when a row omits the column (see defaults.py)
    default_sql: str | None = None
    default_volatile: bool = False
    # text columns: the collation their Ord onion orders by (None: recorded before
    # collations were, byte order -- see collation.py)
    collation: Collation | None = None
    # a precomputed column (see precomputed.py): the expression over the row it holds
    expression: str | None = None
    # a stored generated column: its expression over the row's other columns, as SQL
    # (compile/generated.py computes it on every write)
    generated: str | None = None
    # onions not built yet, each built when a statement first needs it (ondemand.py):
    # per onion, the start layer and floor it will have
    on_demand: dict[Onion, dict[str, str | None]] = field(default_factory=dict)
    # a column declared with an enum or a domain (usertypes.py): the type's anon name
    # (``type`` is then what it resolves to), and what the column has from a domain
    # rather than from its own declaration ("default", "not_null")
    udt: str | None = None
    from_domain: list[str] = field(default_factory=list)

    @property
    def has_default(self) -> bool:
        return self.default is not None or self.sequence is not None or self.default_sql is not None

    @cached_property
    def encoding(self) -> Encoding:
        return encoding_for(self.type, self.collation)

    @property
    def storage(self) -> list[OnionColumn]:
        return list(self.onions.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type.sql(),
            "nullable": self.nullable,
            "default": _default_json(self.default),
            "join_group": self.join_group,
            "joinable": self.joinable,
            "onions": [o.to_json() for o in self.onions.values()],
            # (a date/timestamp column made before records none: Python's years)
            **({"full_range": True} if ranged(self.type) and full_range(self.type) else {}),
            **{
                k: v
                for k, v in (
                    ("sequence", self.sequence),
                    ("sequence_anon", self.sequence_anon),
                    ("identity", self.identity),
                    ("default_sql", self.default_sql),
                    ("default_volatile", self.default_volatile or None),
                )
                if v is not None
            },
            **({"collation": self.collation.to_json()} if self.collation else {}),
            **({"expression": self.expression} if self.expression else {}),
            **({"generated": self.generated} if self.generated else {}),
            **({"udt": self.udt, "from_domain": self.from_domain} if self.udt else {}),
            **(
                {"on_demand": {o.value: v for o, v in self.on_demand.items()}}
                if self.on_demand
                else {}
            ),
        }

    @classmethod
    def from_json(
        cls, d: dict[str, Any], types: Callable[[str], SqlType] | None = None
    ) -> ColumnMeta:
        onions = [OnionColumn.from_json(o) for o in d["onions"]]
        udt = d.get("udt")
        if udt is not None and types is None:
            raise MetadataTampered(f"column {d['name']} names a user type out of context")
        sql_type = (
            types(udt) if udt is not None and types is not None else parse_sql_type(d["type"])
        )
        if ranged(sql_type) and not d.get("full_range"):
            sql_type = with_python_years(sql_type)
        return cls(
            name=d["name"],
            type=sql_type,
            nullable=d["nullable"],
            default=_default_value(d.get("default")),
            join_group=d.get("join_group"),
            joinable=d.get("joinable", True),
            onions={o.onion: o for o in onions},
            sequence=d.get("sequence"),
            sequence_anon=d.get("sequence_anon"),
            identity=d.get("identity"),
            default_sql=d.get("default_sql"),
            default_volatile=bool(d.get("default_volatile")),
            collation=Collation.from_json(d["collation"]) if d.get("collation") else None,
            expression=d.get("expression"),
            generated=d.get("generated"),
            on_demand={Onion(o): dict(v) for o, v in d.get("on_demand", {}).items()},
            udt=udt,
            from_domain=list(d.get("from_domain", [])),
        )


@dataclass
class IndexMeta:
    name: str
    anon: str
    columns: list[str]
    unique: bool


def _default_json(value: Any) -> Any:
    """A constant default as the sealed metadata's JSON holds it: a number with a
    fraction or an exponent (``DEFAULT 1.5``, a numeric constant) as its exact text."""
    if isinstance(value, Decimal | float):
        return {"numeric": str(value)}
    return value


def _default_value(stored: Any) -> Any:
    if isinstance(stored, dict) and set(stored) == {"numeric"}:
        return Decimal(stored["numeric"])
    return stored


@dataclass
class ForeignKeyMeta:
    """A foreign key, enforced by the server on the Eq (DET) ciphertexts: its columns
    share the DET key of the columns they reference (an implied join group)."""

    name: str
    anon: str
    columns: list[str]
    ref_table: str
    ref_columns: list[str]
    on_delete: str = "NO ACTION"
    on_update: str = "NO ACTION"


@dataclass
class ViewMeta:
    """A view: its definition lives only here, sealed; the client expands it."""

    name: str
    anon: str
    sql: str
    columns: list[str]
    tables: list[str]
    version: int = 1
    # the type OIDs of its columns (none recorded for a view made before they were)
    types: list[int] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "view": self.name,
            "anon": self.anon,
            "sql": self.sql,
            "columns": self.columns,
            "tables": self.tables,
            **({"types": self.types} if self.types else {}),
        }


@dataclass
class SequenceMeta:
    """A sequence created on its own (CREATE SEQUENCE, as a dump writes a serial column's):
    the server's sequence under ``anon``; columns name it in ``DEFAULT nextval(...)``.
    ``owned_by``: the (table, column) it is dropped with, if any."""

    name: str
    anon: str
    owned_by: tuple[str, str] | None = None
    version: int = 1

    def to_json(self) -> dict[str, Any]:
        return {"sequence": self.name, "anon": self.anon, "owned_by": self.owned_by}


@dataclass
class TableMeta:
    name: str
    anon: str
    columns: dict[str, ColumnMeta]
    primary_key: list[str] = field(default_factory=list)
    indexes: list[IndexMeta] = field(default_factory=list)
    version: int = 1
    foreign_keys: list[ForeignKeyMeta] = field(default_factory=list)
    # server constraint (or unique index) name -> the application's name for it
    constraints: dict[str, str] = field(default_factory=dict)
    unique_keys: dict[str, list[str]] = field(default_factory=dict)  # server name -> columns
    # the key constraints declared DEFERRABLE and checked at the end of each statement
    # (not INITIALLY DEFERRED), by server name: a statement the client runs as several
    # defers them until its last (cursor.py _rmw)
    statement_checked: list[str] = field(default_factory=list)
    checks: list[dict[str, str]] = field(default_factory=list)  # name, anon, sql
    # precomputed onions (precomputed.py): hidden columns, never part of SELECT * or of
    # the columns an INSERT or COPY names, computed by the client from the row's values
    precomputed: dict[str, ColumnMeta] = field(default_factory=dict)
    # what the online design built (compile/design_wants.py), in the order it appeared:
    # per entry what (a column's Sum onion, a precomputed expression), its onions and
    # the bytes per row it was counted at against the table's budget
    designed: list[dict[str, Any]] = field(default_factory=list)
    # precomputed expressions the online design proposes no more: one a row's value did
    # not fit (retired: adapt/designed.py), in the order they were given up
    declined: list[str] = field(default_factory=list)

    @property
    def designed_bytes(self) -> int:
        """Bytes per row the online design has added to the table."""
        return sum(int(d["bytes"]) for d in self.designed)

    def column(self, name: str) -> ColumnMeta:
        try:
            return self.columns[name.lower()]
        except KeyError:
            if name.lower() in self.precomputed:
                return self.precomputed[name.lower()]
            raise UndefinedColumn(
                f'column "{name}" of relation "{self.name}" does not exist'
            ) from None

    @property
    def stored_columns(self) -> list[ColumnMeta]:
        """Every column with onions on the server: the declared ones, then the
        precomputed ones."""
        return [*self.columns.values(), *self.precomputed.values()]

    def onion_column(self, anon: str) -> tuple[ColumnMeta, OnionColumn] | None:
        for col in self.stored_columns:
            for oc in col.onions.values():
                if oc.anon == anon:
                    return col, oc
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "anon": self.anon,
            "primary_key": self.primary_key,
            "indexes": [vars(i) for i in self.indexes],
            "columns": [c.to_json() for c in self.columns.values()],
            "foreign_keys": [vars(f) for f in self.foreign_keys],
            "constraints": self.constraints,
            "unique_keys": self.unique_keys,
            "checks": self.checks,
            **(
                {"precomputed": [c.to_json() for c in self.precomputed.values()]}
                if self.precomputed
                else {}
            ),
            **({"designed": self.designed} if self.designed else {}),
            **({"declined": self.declined} if self.declined else {}),
            **({"statement_checked": self.statement_checked} if self.statement_checked else {}),
        }

    @classmethod
    def from_json(
        cls, d: dict[str, Any], version: int, types: Callable[[str], SqlType] | None = None
    ) -> TableMeta:
        cols = [ColumnMeta.from_json(c, types) for c in d["columns"]]
        return cls(
            name=d["name"],
            anon=d["anon"],
            columns={c.name: c for c in cols},
            primary_key=d["primary_key"],
            indexes=[IndexMeta(**i) for i in d["indexes"]],
            version=version,
            foreign_keys=[ForeignKeyMeta(**f) for f in d.get("foreign_keys", [])],
            constraints=dict(d.get("constraints", {})),
            unique_keys={k: list(v) for k, v in d.get("unique_keys", {}).items()},
            checks=list(d.get("checks", [])),
            precomputed={
                c.name: c for c in (ColumnMeta.from_json(p) for p in d.get("precomputed", []))
            },
            designed=list(d.get("designed", [])),
            declined=list(d.get("declined", [])),
            statement_checked=list(d.get("statement_checked", [])),
        )


__all__ = [
    "ColumnMeta",
    "ForeignKeyMeta",
    "IndexMeta",
    "OnionColumn",
    "SequenceMeta",
    "TableMeta",
    "ViewMeta",
]
