"""The encrypted schema: what each table and column is, its onions, layers and keys.

Everything here is sealed in ``adaptive.tables`` (see
``adaptive_client/sql/metadata_schema.sql``) except each onion column's actual layer,
kept in the clear in ``adaptive.layers`` because the provider can observe it anyway and
stored procedures must update it.  The data model (``TableMeta``, ``ColumnMeta``,
``OnionColumn``, ...) is ``table_meta``'s, re-exported here; this module is the
:class:`Catalog`: the sealed rows read, checked against the catalog head and written.

Integrity of the catalog as a whole (``docs/security.md``): each sealed row is bound to
its identity and version by the AES-GCM associated data, which detects an altered row and
two rows' blobs swapped.  A row replaced by an *older* authentic version of itself, a row
deleted, or a dropped table's row restored would still open, so a sealed **catalog head**
(``adaptive.catalog_head``) lists every table row's current version and every key group,
under a generation counter that each metadata write increments.  Versions are taken from
that counter, hence unique across the catalog's history: an older version of any row,
even of a dropped-and-recreated table, never matches the head.  A client also refuses a
head whose generation is below one it has already seen (a rollback of the whole catalog).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import psycopg

from ..errors import (
    FormatOutdated,
    MetadataTampered,
    NotInitialized,
    StaleMetadata,
    UndefinedTable,
    UnsupportedQuery,
)
from ..values.encodings import SqlType
from . import table_meta
from .install import InstallError, install_database
from .keys import MasterKey, RootKeys, new_key
from .onions import Onion
from .table_meta import ColumnMeta as ColumnMeta  # (the data model, re-exported: __all__)
from .table_meta import ForeignKeyMeta, SequenceMeta, TableMeta, ViewMeta
from .table_meta import IndexMeta as IndexMeta
from .table_meta import OnionColumn as OnionColumn
from .usertypes import TypeMeta, resolve

# Keyring formats: 1 -- no catalog head; 2 -- a sealed catalog head exists; 3 -- the
# compact RND layer (AES-CTR under a 12-byte nonce, schemes/rnd.py) instead of AES-CBC
# under a 16-byte IV.  The root key's wrapping is bound to the format, so that lowering the
# (clear) format number to skip the head's checks, or to make a client read ciphertexts in
# the wrong format, makes the root key fail to unwrap; a client that predates a format
# refuses it as unknown.
KEYRING_FORMAT = 3
HEAD_FORMAT = 2  # the first format with a catalog head
CBC_RND_FORMATS = (1, 2)  # formats whose RND layer is AES-CBC: migrated by adaptive-db migrate
MIGRATE_HINT = "run `adaptive-db migrate --dsn ...` (re-encrypts the RND layers in place)"


def root_label(keyring_format: int) -> str:
    """The label the root key is wrapped under, for a keyring format."""
    return "root" if keyring_format == 1 else f"root/format-{keyring_format}"


@dataclass
class CatalogHead:
    """The sealed list of every metadata row's current version: replay/deletion detection."""

    generation: int
    tables: dict[str, int] = field(default_factory=dict)  # anon table name -> version
    groups: list[str] = field(default_factory=list)  # anon key-group names

    def to_json(self) -> dict[str, Any]:
        return {"generation": self.generation, "tables": self.tables, "groups": self.groups}


def _table_aad(anon: str, version: int) -> bytes:
    return f"table\x1f{anon}\x1f{version}".encode()


def _group_aad(anon: str) -> bytes:
    return f"group\x1f{anon}".encode()


def _committed(conn: psycopg.Connection[Any]) -> bool:
    """Whether what ``conn`` just read or wrote is committed.  Only a committed catalog
    generation becomes the floor below which a head is refused as rolled back: one seen
    inside a transaction (the client's own DDL, or a reload within it) may be rolled back
    by the application, legitimately."""
    return conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE


_M = TypeVar("_M")


def _unknown_added(mine: dict[str, _M], theirs: dict[str, _M]) -> bool:
    """The entries of ``theirs`` whose names ``mine`` lacks, added to it; True if any."""
    new = theirs.keys() - mine.keys()
    for name in new:
        mine[name] = theirs[name]
    return bool(new)


def _head_aad(generation: int) -> bytes:
    return f"catalog-head\x1f{generation}".encode()


class Catalog:
    """The decrypted, cached metadata of one database, for one client."""

    def __init__(self, root: RootKeys) -> None:
        self.root = root
        self.tables: dict[str, TableMeta] = {}
        self.by_anon: dict[str, TableMeta] = {}
        self.views: dict[str, ViewMeta] = {}
        self.sequences: dict[str, SequenceMeta] = {}
        # enums and domains by anon name (usertypes.py); the labels ALTER TYPE ... ADD
        # VALUE added in the current transaction (not usable until it commits)
        self.types: dict[str, TypeMeta] = {}
        self.fresh_labels: dict[str, set[str]] = {}
        self.epoch = -1
        # the highest catalog generation this client has seen: a lower one is a rollback
        self.generation = -1
        # the generation this client wrote in a transaction not yet committed
        self.written_generation = -1

    # -- bootstrap -----------------------------------------------------------------------
    @staticmethod
    def open(
        conn: psycopg.Connection[Any], master: MasterKey, *, outdated_ok: bool = False
    ) -> Catalog:
        """Check the master key against the keyring (creating it on first use) and load.

        A database in a previous ciphertext format raises :class:`FormatOutdated` naming
        ``adaptive-db migrate``, unless ``outdated_ok`` (the migration itself)."""
        select = "SELECT format, kcv, wrapped_root FROM adaptive.keyring WHERE id = 1"
        try:
            row = conn.execute(select).fetchone()
        except psycopg.errors.UndefinedTable:
            conn.rollback()
            raise NotInitialized(
                "this database has no adaptive metadata: run `adaptive-db init --dsn ...`"
            ) from None
        if row is None:
            root = new_key()
            with conn.transaction():
                created = conn.execute(
                    "INSERT INTO adaptive.keyring (id, format, kcv, wrapped_root) "
                    "VALUES (1, %s, %s, %s) ON CONFLICT (id) DO NOTHING RETURNING id",
                    (
                        KEYRING_FORMAT,
                        master.key_check_value(),
                        master.wrap(root, root_label(KEYRING_FORMAT)),
                    ),
                ).fetchone()
                if created is not None:
                    Catalog(RootKeys(root))._store_head(conn, CatalogHead(0), insert=True)
            if not conn.autocommit:
                conn.commit()
            row = conn.execute(select).fetchone()
            assert row is not None
        keyring_format = int(row[0])
        if keyring_format not in (*CBC_RND_FORMATS, KEYRING_FORMAT):
            raise MetadataTampered(f"unknown keyring format {keyring_format}")
        master.verify(bytes(row[1]))
        root = master.unwrap(bytes(row[2]), root_label(keyring_format))
        catalog = Catalog(RootKeys(root))
        try:
            if keyring_format == 1:
                catalog._upgrade(conn, master)
                if not conn.autocommit:
                    conn.commit()
            if keyring_format in CBC_RND_FORMATS:
                # an empty catalog has no ciphertexts: it moves to the current format as
                # it is; one with tables is migrated by its DBA, or opened for that only
                if not catalog._adopt_format_if_empty(conn, master) and not outdated_ok:
                    raise FormatOutdated(
                        f"this database's ciphertexts are in format {keyring_format}, this "
                        f"client writes format {KEYRING_FORMAT}: {MIGRATE_HINT}"
                    )
                if not conn.autocommit:
                    conn.commit()
            catalog.reload(conn)
        except psycopg.errors.UndefinedTable:
            conn.rollback()
            raise NotInitialized(
                "this database's metadata schema predates this client: "
                "run `adaptive-db init --dsn ...` again"
            ) from None
        return catalog

    def _upgrade(self, conn: psycopg.Connection[Any], master: MasterKey) -> None:
        """Format 1 -> 2: seal a head over the rows as they are (trust on first use)."""
        with conn.transaction():
            row = conn.execute(
                "SELECT format FROM adaptive.keyring WHERE id = 1 FOR UPDATE"
            ).fetchone()
            if row is None or row[0] != 1:
                return  # another client upgraded it meanwhile
            head = CatalogHead(0)
            for anon, version, sealed in conn.execute(
                "SELECT anon_name, version, sealed FROM adaptive.tables"
            ).fetchall():
                self.root.open(bytes(sealed), _table_aad(anon, version))  # authentic rows only
                head.tables[anon] = int(version)
                head.generation = max(head.generation, int(version))
            for anon, sealed in conn.execute(
                "SELECT anon_name, sealed FROM adaptive.key_groups"
            ).fetchall():
                self.root.open(bytes(sealed), _group_aad(anon))
                head.groups.append(anon)
            self._store_head(conn, head, insert=True)
            self.set_format(conn, master, HEAD_FORMAT)

    def set_format(self, conn: psycopg.Connection[Any], master: MasterKey, fmt: int) -> None:
        """Record keyring format ``fmt``, the root key re-wrapped under its label."""
        conn.execute(
            "UPDATE adaptive.keyring SET format = %s, wrapped_root = %s WHERE id = 1",
            (fmt, master.wrap(self.root.root, root_label(fmt))),
        )

    def _adopt_format_if_empty(self, conn: psycopg.Connection[Any], master: MasterKey) -> bool:
        """Move a catalog without tables from a CBC-RND format to the current one; whether
        the database is (now) in the current format."""
        with conn.transaction():
            row = conn.execute(
                "SELECT format FROM adaptive.keyring WHERE id = 1 FOR UPDATE"
            ).fetchone()
            if row is None or row[0] == KEYRING_FORMAT:
                return True  # another client moved it meanwhile
            if conn.execute("SELECT 1 FROM adaptive.tables LIMIT 1").fetchone() is not None:
                return False
            try:  # the stored procedures of this format (the peel strips CTR, not CBC)
                install_database(conn)
            except InstallError:
                return False  # a role that may not: the DBA's adaptive-db migrate does it
            self.set_format(conn, master, KEYRING_FORMAT)
            return True

    # -- the catalog head ------------------------------------------------------------------
    def _open_head(self, generation: int, sealed: bytes | None) -> CatalogHead:
        if sealed is None:
            raise MetadataTampered("the catalog head is missing")
        data = json.loads(self.root.open(bytes(sealed), _head_aad(generation)))
        head = CatalogHead(int(data["generation"]), dict(data["tables"]), list(data["groups"]))
        if head.generation != generation:
            raise MetadataTampered("the catalog head's generation was altered")
        if head.generation < self.generation:
            raise MetadataTampered(
                f"the catalog was rolled back (generation {head.generation} after "
                f"{self.generation})"
            )
        return head

    def _read_head(self, conn: psycopg.Connection[Any], lock: bool) -> CatalogHead:
        row = conn.execute(
            "SELECT generation, sealed FROM adaptive.catalog_head WHERE id = 1"
            + (" FOR UPDATE" if lock else "")
        ).fetchone()
        if row is None:
            raise MetadataTampered("the catalog head is missing")
        return self._open_head(int(row[0]), row[1])

    def _store_head(self, conn: psycopg.Connection[Any], head: CatalogHead, insert: bool) -> None:
        sealed = self.root.seal(json.dumps(head.to_json()).encode(), _head_aad(head.generation))
        if insert:
            conn.execute(
                "INSERT INTO adaptive.catalog_head (id, generation, sealed) VALUES (1, %s, %s)",
                (head.generation, sealed),
            )
        else:
            conn.execute(
                "UPDATE adaptive.catalog_head SET generation = %s, sealed = %s WHERE id = 1",
                (head.generation, sealed),
            )
        if _committed(conn):
            self.generation = max(self.generation, head.generation)
        else:
            self.written_generation = max(self.written_generation, head.generation)

    def committed(self) -> bool:
        """The transaction that wrote metadata committed: what it wrote is the floor now.
        True where columns' types changed (labels it added became usable): plans built
        before hold the old ones."""
        self.generation = max(self.generation, self.written_generation)
        self.written_generation = -1
        if not self.fresh_labels:
            return False
        self.fresh_labels.clear()
        self.bind_types()
        return True

    def rolled_back(self) -> None:
        self.written_generation = -1
        self.fresh_labels.clear()

    # -- user types ------------------------------------------------------------------------
    def resolve_type(self, anon: str) -> SqlType:
        return resolve(self.types, anon, self.fresh_labels)

    def user_type(self, name: str) -> TypeMeta | None:
        """The enum or domain of that name, if any."""
        name = name.lower()
        return next((t for t in self.types.values() if t.name == name), None)

    def bind_types(self) -> None:
        """Give every column of a user type what the type now stands for (after a type's
        definition changed)."""
        for table in self.tables.values():
            for col in table.stored_columns:
                if col.udt is not None:
                    col.type = self.resolve_type(col.udt)
                    col.__dict__.pop("encoding", None)  # (the cached_property)

    # -- loading -------------------------------------------------------------------------
    def reload(self, conn: psycopg.Connection[Any]) -> None:
        # one statement, one snapshot: the head, every row it must list, and the epoch
        # (read before the layers: a peel in between makes the next refresh reload again)
        rows = conn.execute(
            "SELECT 'epoch', '', value, NULL::bytea FROM adaptive.epoch WHERE id = 1 "
            "UNION ALL SELECT 'head', '', generation, sealed FROM adaptive.catalog_head "
            "WHERE id = 1 "
            "UNION ALL SELECT 'table', anon_name, version, sealed FROM adaptive.tables "
            "UNION ALL SELECT 'group', anon_name, 0, sealed FROM adaptive.key_groups"
        ).fetchall()
        epoch = next((r[2] for r in rows if r[0] == "epoch"), 0)
        head_row = next((r for r in rows if r[0] == "head"), None)
        if head_row is None:
            raise MetadataTampered("the catalog head is missing")
        head = self._open_head(int(head_row[2]), head_row[3])
        stored = {r[1]: int(r[2]) for r in rows if r[0] == "table"}
        if stored != head.tables:
            raise MetadataTampered(_head_mismatch("table", head.tables, stored))
        groups = sorted(r[1] for r in rows if r[0] == "group")
        if groups != sorted(head.groups):
            raise MetadataTampered(
                _head_mismatch("key group", dict.fromkeys(head.groups, 0), dict.fromkeys(groups, 0))
            )
        for kind, anon, _, sealed in rows:
            if kind == "group":  # authentic and in its own row (a few rows: cheap)
                self.root.open(bytes(sealed), _group_aad(anon))
        layers = self._read_layers(conn)
        tables: dict[str, TableMeta] = {}
        views: dict[str, ViewMeta] = {}
        sequences: dict[str, SequenceMeta] = {}
        types: dict[str, TypeMeta] = {}
        payloads = []
        for kind, anon, version, sealed in rows:
            if kind != "table":
                continue
            payload = json.loads(self.root.open(bytes(sealed), _table_aad(anon, version)))
            if payload.get("anon") != anon:
                raise MetadataTampered(f"metadata row {anon} describes another table")
            if "udt" in payload:  # (types first: tables' columns resolve them)
                types[anon] = TypeMeta.from_json(payload, version)
            else:
                payloads.append((anon, version, payload))
        for anon, version, payload in payloads:
            if "view" in payload:
                views[payload["view"]] = ViewMeta(
                    payload["view"],
                    anon,
                    payload["sql"],
                    list(payload["columns"]),
                    list(payload["tables"]),
                    version,
                    [int(t) for t in payload.get("types", [])],
                )
                continue
            if "sequence" in payload:
                owner = payload.get("owned_by")
                sequences[payload["sequence"]] = SequenceMeta(
                    payload["sequence"], anon, tuple(owner) if owner else None, version
                )
                continue
            meta = TableMeta.from_json(
                payload, version, lambda a: resolve(types, a, self.fresh_labels)
            )
            tables[meta.name] = meta
        self.tables = tables
        self.views = views
        self.sequences = sequences
        self.types = types
        self.by_anon = {t.anon: t for t in tables.values()}
        self._apply_layers(layers)
        self.epoch = epoch
        if _committed(conn):
            self.generation = head.generation
        else:
            # what this transaction will commit, as it now sees it: after a ROLLBACK TO
            # SAVEPOINT over its own DDL, less than it wrote (else that would become the
            # floor at commit, above the committed head: a false "rolled back")
            self.written_generation = head.generation

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

    def adopt_created(
        self, own: psycopg.Connection[Any] | None, latest: psycopg.Connection[Any]
    ) -> bool:
        """Inside a transaction on one snapshot (REPEATABLE READ, SERIALIZABLE): the
        relations this catalog does not know, added as PostgreSQL finds them -- its name
        lookups see every relation committed, whatever the transaction's snapshot.  Each
        as the snapshot describes it (``own``: the transaction's session) where it does:
        made before the snapshot, its rows are the ones the snapshot sees, at the layers
        it sees; else as the latest catalog does (``latest``): made after the snapshot,
        none of its rows is visible to the transaction, and what the transaction writes
        goes at the layers the table has now.  Relations known stay as they are (their
        layers are the snapshot's); True where any was added.  ``own`` None: the
        transaction has failed (nothing it reads runs; its next statement meets 25P02 on
        the server)."""
        added = False
        for source in (own, latest):
            if source is None:
                continue
            other = Catalog(self.root)
            other.fresh_labels = self.fresh_labels
            other.reload(source)
            added |= _unknown_added(self.types, other.types)
            added |= _unknown_added(self.tables, other.tables)
            added |= _unknown_added(self.views, other.views)
            added |= _unknown_added(self.sequences, other.sequences)
        self.by_anon = {t.anon: t for t in self.tables.values()}
        return added

    # -- lookup --------------------------------------------------------------------------
    def table(self, name: str) -> TableMeta:
        try:
            return self.tables[name.lower()]
        except KeyError:
            if name.lower().startswith("pg_"):
                # the server's own catalog (pg_class, pg_stat_user_tables, ...): it is
                # there, and describes the anonymized tables, not the application's
                raise UnsupportedQuery(
                    f"the server's system catalog relation {name} through the client (it "
                    "describes the stored, anonymized tables: `adaptive-db layers` shows "
                    "them by the application's names)",
                    "system catalog",
                ) from None
            raise UndefinedTable(f'relation "{name}" does not exist') from None

    def has_table(self, name: str) -> bool:
        return name.lower() in self.tables

    def has_relation(self, name: str) -> bool:
        """A table, a view or a sequence of that name (they share PostgreSQL's
        namespace)."""
        key = name.lower()
        return key in self.tables or key in self.views or key in self.sequences

    @property
    def constraint_names(self) -> dict[str, str]:
        """Server constraint names -> the application's, for errors."""
        out: dict[str, str] = {}
        for t in self.tables.values():
            out.update(t.constraints)
            for fk in t.foreign_keys:
                out[fk.anon] = fk.name
        return out

    def referencing(self, name: str) -> list[tuple[TableMeta, ForeignKeyMeta]]:
        """The foreign keys of other tables (and of the table itself) that reference
        table ``name``."""
        return [
            (t, fk)
            for t in self.tables.values()
            for fk in t.foreign_keys
            if fk.ref_table == name.lower()
        ]

    # -- names ---------------------------------------------------------------------------
    def anon_table(self, name: str) -> str:
        return self.root.anonymize("table", name.lower())

    def anon_column(self, table: str, column: str, onion: Onion) -> str:
        base = self.root.anonymize("column", table.lower(), column.lower(), length=12)
        return f"{base}_{onion.value.lower()}"

    def anon_index(self, table: str, name: str) -> str:
        return self.root.anonymize("index", table.lower(), name.lower())

    # -- writing -------------------------------------------------------------------------
    def seal_table(self, meta: TableMeta | ViewMeta | SequenceMeta | TypeMeta) -> bytes:
        return self.root.seal(
            json.dumps(meta.to_json()).encode(), _table_aad(meta.anon, meta.version)
        )

    def write_table(
        self,
        conn: psycopg.Connection[Any],
        meta: TableMeta | ViewMeta | SequenceMeta | TypeMeta,
        new: bool,
    ) -> None:
        """Insert (``new``) or rewrite a table's sealed row, at the next catalog generation.

        Runs in the caller's transaction (the DDL's), which holds the head's row lock
        until it ends: metadata writes of concurrent clients are serialized.
        """
        head = self._read_head(conn, lock=True)
        if not new and head.tables.get(meta.anon) != meta.version:
            self.reload(conn)
            raise StaleMetadata(f"table {meta.name} was changed by another client meanwhile: retry")
        head.generation += 1
        meta.version = head.generation
        sealed = self.seal_table(meta)
        if new:
            conn.execute(
                "INSERT INTO adaptive.tables (anon_name, version, sealed) VALUES (%s, %s, %s)",
                (meta.anon, meta.version, sealed),
            )
        else:
            conn.execute(
                "UPDATE adaptive.tables SET version = %s, sealed = %s WHERE anon_name = %s",
                (meta.version, sealed, meta.anon),
            )
        head.tables[meta.anon] = meta.version
        self._store_head(conn, head, insert=False)

    def delete_table(
        self, conn: psycopg.Connection[Any], meta: TableMeta | ViewMeta | SequenceMeta | TypeMeta
    ) -> None:
        head = self._read_head(conn, lock=True)
        conn.execute("DELETE FROM adaptive.tables WHERE anon_name = %s", (meta.anon,))
        head.tables.pop(meta.anon, None)
        head.generation += 1
        self._store_head(conn, head, insert=False)

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
            head = self._read_head(conn, lock=True)
            if anon in head.groups:  # deleted: fresh keys would silently break joins
                raise MetadataTampered(f"the keys of key group {anon} were deleted")
            fresh = make()
            sealed = self.root.seal(
                json.dumps({k: v.hex() for k, v in fresh.items()}).encode(), aad
            )
            inserted = conn.execute(
                "INSERT INTO adaptive.key_groups (anon_name, sealed) VALUES (%s, %s) "
                "ON CONFLICT (anon_name) DO NOTHING RETURNING anon_name",
                (anon, sealed),
            ).fetchone()
            if inserted is not None:
                head.groups.append(anon)
                head.generation += 1
                self._store_head(conn, head, insert=False)
            row = conn.execute(select, (anon,)).fetchone()
            assert row is not None
        elif anon not in self._read_head(conn, lock=False).groups:
            raise MetadataTampered(f"key group {anon} is not in the catalog head")
        data = json.loads(self.root.open(bytes(row[0]), aad))
        return {k: bytes.fromhex(v) for k, v in data.items()}


def _head_mismatch(kind: str, listed: dict[str, int], stored: dict[str, int]) -> str:
    """Which rows differ from the catalog head (anonymized names only)."""
    missing = sorted(set(listed) - set(stored))
    extra = sorted(set(stored) - set(listed))
    other = sorted(a for a in set(listed) & set(stored) if listed[a] != stored[a])
    parts = []
    if missing:
        parts.append(f"deleted: {', '.join(missing)}")
    if extra:
        parts.append(f"not in the catalog head: {', '.join(extra)}")
    if other:
        parts.append(f"replaced by another version: {', '.join(other)}")
    return f"{kind} metadata rows were tampered with ({'; '.join(parts)})"


__all__ = [
    "CBC_RND_FORMATS",
    "HEAD_FORMAT",
    "KEYRING_FORMAT",
    "MIGRATE_HINT",
    "Catalog",
    "CatalogHead",
    "root_label",
]
__all__ += table_meta.__all__  # (the data model, re-exported)
