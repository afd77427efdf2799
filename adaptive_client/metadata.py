"""The encrypted schema: what each table and column is, its onions, layers and keys.

Everything here is sealed in ``adaptive.tables`` (see ``sql/metadata_schema.sql``) except
each onion column's actual layer, kept in the clear in ``adaptive.layers`` because the
provider can observe it anyway and stored procedures must update it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import psycopg

from .encodings import Encoding, SqlType, encoding_for, parse_sql_type
from .errors import (
    MetadataTampered,
    NotInitialized,
    UndefinedColumn,
    UndefinedTable,
)
from .keys import MasterKey, RootKeys, new_key
from .onions import Onion
from .schemes import DET, HOM, OPE, RND, SEARCH

KEYRING_FORMAT = 1


@dataclass
class OnionColumn:
    """One stored (anonymized) column holding one onion of a plain column."""

    onion: Onion
    anon: str
    stack: tuple[str, ...]
    layer: str
    floor: str | None
    keys: dict[str, bytes]
    ope_bits: int = 64
    ope_exact: bool = True
    memo: dict[str, dict[Any, bytes]] = field(default_factory=dict, repr=False, compare=False)

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
    def ope(self) -> OPE:
        return OPE(self.keys["OPE"], self.ope_bits)

    @cached_property
    def hom(self) -> HOM:
        return HOM.from_bytes(self.keys["HOM"])

    @cached_property
    def search(self) -> SEARCH:
        return SEARCH(self.keys["SEARCH"])

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
        )


@dataclass
class ColumnMeta:
    name: str
    type: SqlType
    nullable: bool
    onions: dict[Onion, OnionColumn]
    default: Any = None
    join_group: str | None = None

    @cached_property
    def encoding(self) -> Encoding:
        return encoding_for(self.type)

    @property
    def storage(self) -> list[OnionColumn]:
        return list(self.onions.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type.sql(),
            "nullable": self.nullable,
            "default": self.default,
            "join_group": self.join_group,
            "onions": [o.to_json() for o in self.onions.values()],
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ColumnMeta:
        onions = [OnionColumn.from_json(o) for o in d["onions"]]
        return cls(
            name=d["name"],
            type=parse_sql_type(d["type"]),
            nullable=d["nullable"],
            default=d.get("default"),
            join_group=d.get("join_group"),
            onions={o.onion: o for o in onions},
        )


@dataclass
class IndexMeta:
    name: str
    anon: str
    columns: list[str]
    unique: bool


@dataclass
class TableMeta:
    name: str
    anon: str
    columns: dict[str, ColumnMeta]
    primary_key: list[str] = field(default_factory=list)
    indexes: list[IndexMeta] = field(default_factory=list)
    version: int = 1

    def column(self, name: str) -> ColumnMeta:
        try:
            return self.columns[name.lower()]
        except KeyError:
            raise UndefinedColumn(
                f'column "{name}" of table "{self.name}" does not exist'
            ) from None

    def onion_column(self, anon: str) -> tuple[ColumnMeta, OnionColumn] | None:
        for col in self.columns.values():
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
        }

    @classmethod
    def from_json(cls, d: dict[str, Any], version: int) -> TableMeta:
        cols = [ColumnMeta.from_json(c) for c in d["columns"]]
        return cls(
            name=d["name"],
            anon=d["anon"],
            columns={c.name: c for c in cols},
            primary_key=d["primary_key"],
            indexes=[IndexMeta(**i) for i in d["indexes"]],
            version=version,
        )


def _table_aad(anon: str, version: int) -> bytes:
    return f"table\x1f{anon}\x1f{version}".encode()


def _group_aad(anon: str) -> bytes:
    return f"group\x1f{anon}".encode()


class Catalog:
    """The decrypted, cached metadata of one database, for one client."""

    def __init__(self, root: RootKeys) -> None:
        self.root = root
        self.tables: dict[str, TableMeta] = {}
        self.by_anon: dict[str, TableMeta] = {}
        self.epoch = -1

    # -- bootstrap -----------------------------------------------------------------------
    @staticmethod
    def open(conn: psycopg.Connection[Any], master: MasterKey) -> Catalog:
        """Check the master key against the keyring (creating it on first use) and load."""
        try:
            row = conn.execute(
                "SELECT kcv, wrapped_root FROM adaptive.keyring WHERE id = 1"
            ).fetchone()
        except psycopg.errors.UndefinedTable:
            conn.rollback()
            raise NotInitialized(
                "this database has no adaptive metadata: run `adaptive-db init --dsn ...`"
            ) from None
        if row is None:
            root = new_key()
            conn.execute(
                "INSERT INTO adaptive.keyring (id, format, kcv, wrapped_root) "
                "VALUES (1, %s, %s, %s) ON CONFLICT (id) DO NOTHING",
                (KEYRING_FORMAT, master.key_check_value(), master.wrap(root, "root")),
            )
            conn.commit()
            row = conn.execute(
                "SELECT kcv, wrapped_root FROM adaptive.keyring WHERE id = 1"
            ).fetchone()
            assert row is not None
        master.verify(bytes(row[0]))
        catalog = Catalog(RootKeys(master.unwrap(bytes(row[1]), "root")))
        catalog.reload(conn)
        return catalog

    # -- loading -------------------------------------------------------------------------
    def reload(self, conn: psycopg.Connection[Any]) -> None:
        rows = conn.execute(
            "SELECT (SELECT value FROM adaptive.epoch WHERE id = 1), anon_name, version, sealed "
            "FROM adaptive.tables"
        ).fetchall()
        layers = self._read_layers(conn)
        epoch = conn.execute("SELECT value FROM adaptive.epoch WHERE id = 1").fetchone()
        tables: dict[str, TableMeta] = {}
        for _, anon, version, sealed in rows:
            payload = self.root.open(bytes(sealed), _table_aad(anon, version))
            meta = TableMeta.from_json(json.loads(payload), version)
            if meta.anon != anon:
                raise MetadataTampered(f"metadata row {anon} describes another table")
            tables[meta.name] = meta
        self.tables = tables
        self.by_anon = {t.anon: t for t in tables.values()}
        self._apply_layers(layers)
        self.epoch = epoch[0] if epoch else 0

    @staticmethod
    def _read_layers(conn: psycopg.Connection[Any]) -> list[tuple[str, str, str]]:
        return [
            (r[0], r[1], r[2])
            for r in conn.execute("SELECT anon_table, anon_column, layer FROM adaptive.layers")
        ]

    def _apply_layers(self, layers: list[tuple[str, str, str]]) -> None:
        for anon_table, anon_column, layer in layers:
            table = self.by_anon.get(anon_table)
            found = table.onion_column(anon_column) if table else None
            if found is None:
                continue
            _, oc = found
            if layer not in oc.stack:
                raise MetadataTampered(f"layer {layer} is not in the stack of {anon_column}")
            oc.layer = layer

    def refresh(self, conn: psycopg.Connection[Any]) -> bool:
        """Reload if the epoch moved; return True when something changed."""
        row = conn.execute("SELECT value FROM adaptive.epoch WHERE id = 1").fetchone()
        if row is None or row[0] == self.epoch:
            return False
        self.reload(conn)
        return True

    # -- lookup --------------------------------------------------------------------------
    def table(self, name: str) -> TableMeta:
        try:
            return self.tables[name.lower()]
        except KeyError:
            raise UndefinedTable(f'relation "{name}" does not exist') from None

    def has_table(self, name: str) -> bool:
        return name.lower() in self.tables

    # -- names ---------------------------------------------------------------------------
    def anon_table(self, name: str) -> str:
        return self.root.anonymize("table", name.lower())

    def anon_column(self, table: str, column: str, onion: Onion) -> str:
        base = self.root.anonymize("column", table.lower(), column.lower(), length=12)
        return f"{base}_{onion.value.lower()}"

    def anon_index(self, table: str, name: str) -> str:
        return self.root.anonymize("index", table.lower(), name.lower())

    # -- writing -------------------------------------------------------------------------
    def seal_table(self, meta: TableMeta) -> bytes:
        return self.root.seal(
            json.dumps(meta.to_json()).encode(), _table_aad(meta.anon, meta.version)
        )

    def group_keys(self, conn: psycopg.Connection[Any], group: str) -> dict[str, bytes]:
        """DET/OPE keys shared by a join group, created on first use."""
        return self.shared_keys(conn, group, lambda: {"DET": new_key(), "OPE": new_key()})

    def shared_keys(
        self, conn: psycopg.Connection[Any], group: str, make: Callable[[], dict[str, bytes]]
    ) -> dict[str, bytes]:
        """Keys shared by several columns, sealed in adaptive.key_groups.

        Race-safe: the first client to insert wins; everyone reads back the stored row.
        ``make`` is called only when no row exists yet (it may be expensive).
        """
        anon = self.root.anonymize("group", group.lower())
        aad = _group_aad(anon)
        select = "SELECT sealed FROM adaptive.key_groups WHERE anon_name = %s"
        row = conn.execute(select, (anon,)).fetchone()
        if row is None:
            fresh = make()
            sealed = self.root.seal(
                json.dumps({k: v.hex() for k, v in fresh.items()}).encode(), aad
            )
            conn.execute(
                "INSERT INTO adaptive.key_groups (anon_name, sealed) VALUES (%s, %s) "
                "ON CONFLICT (anon_name) DO NOTHING",
                (anon, sealed),
            )
            row = conn.execute(select, (anon,)).fetchone()
            assert row is not None
        data = json.loads(self.root.open(bytes(row[0]), aad))
        return {k: bytes.fromhex(v) for k, v in data.items()}
