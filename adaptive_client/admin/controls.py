"""The DBA's view and controls: layers report, audit log, explicit peels, key rotation."""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import pq

from ..adapt import compaction, designed, range_indexes
from ..adapt import peel as peeling
from ..adapt.joins import key_group_members
from ..catalog.keys import MasterKey
from ..catalog.metadata import Catalog, ColumnMeta, TableMeta, root_label
from ..catalog.onions import LEAKAGE, STACKS, Cap, Onion
from ..compile.needs import BuildNeed
from ..errors import ConfigError, LayerFloorViolation, MetadataTampered
from ..values.collation import Collation


@dataclass
class LayerRow:
    table: str
    column: str
    type: str
    onion: str
    stored_as: str
    layer: str
    floor: str
    provider_learns: str


# How much each layer reveals, for a column's summary: the most revealing of its onions.
_REVEALS = {
    "RND": 0,
    "HOM": 0,
    "ASHE": 0,
    "SEARCH": 1,
    "DET": 2,
    "TRIGRAM": 2,
    "CONTAIN": 2,
    "ORE": 3,
    "OPE": 4,
    "PLAIN": 5,
}


# What an inexact Ord onion's OPE ciphertexts show of its prefix (BCLO: about the leading
# half of the plaintext's bits; a text column's first three or four characters verbatim)
OPE_PREFIX_SHOWN = (
    "and about its first half readable in the stored bytes (for text: the first 3 or 4 characters)"
)


# A Contain onion before its first use: one RND value per row whose length counts the
# row's tokens (13 + 16 bytes per distinct feature)
CONTAIN_AT_RND = (
    "nothing (beyond NULLs and each row's number of distinct paths and path-values, or of "
    "distinct elements: the RND value is 13 + 16 bytes per token)"
)


def _learns(
    layer: str,
    ope_exact: bool,
    join_group: str | None,
    shared: list[str] | None = None,
    collation: Collation | None = None,
    prefix_bits: int = 64,
) -> str:
    """``shared``: the other columns whose onion of this kind is under the same key (a
    declared join group, or a key group formed by join adjustments); ``prefix_bits``:
    the width of an inexact Ord onion's plaintext."""
    learns = LEAKAGE[layer]
    if layer in ("OPE", "ORE") and not ope_exact:
        size = "an 8-byte" if prefix_bits == 64 else f"a {prefix_bits}-bit"
        learns = f"order of {size} prefix"
        learns += f", {OPE_PREFIX_SHOWN}" if layer == "OPE" else ", and its first differing byte"
        if collation is not None and not collation.bytewise:
            learns = (
                f"order under collation {collation.describe()} of an 8-byte prefix of the "
                "sort key's primary weights, and which values tie on it (the same first "
                "letters, up to case and accents)"
            )
            if layer == "OPE":
                learns += ", and about the first half of those weights readable in the bytes"
    if layer in ("DET", "OPE", "ORE") and join_group:
        learns += f", also across the columns of join group {join_group}"
    if layer in ("DET", "OPE", "ORE") and shared:
        learns += f", also across {', '.join(shared)} (same key)"
    return learns


def key_groups(catalog: Catalog) -> dict[tuple[str, str], str]:
    """(table, column) -> the implied join group its foreign keys put it in, named by
    its members: the columns whose DET (and OPE) ciphertexts the provider can compare."""
    parent: dict[tuple[str, str], tuple[str, str]] = {}

    def root(x: tuple[str, str]) -> tuple[str, str]:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for table in catalog.tables.values():
        for fk in table.foreign_keys:
            for col, ref in zip(fk.columns, fk.ref_columns, strict=True):
                parent[root((table.name, col))] = root((fk.ref_table, ref))
    members: dict[tuple[str, str], list[str]] = {}
    for x in list(parent):
        members.setdefault(root(x), []).append(f"{x[0]}.{x[1]}")
    return {x: "{" + ", ".join(sorted(members[root(x)])) + "}" for x in parent}


def foreign_key_report(catalog: Catalog) -> list[tuple[str, str, str, str]]:
    """Each foreign key: its name, columns, referenced columns, and what it reveals."""
    groups = key_groups(catalog)
    out = []
    for table in sorted(catalog.tables.values(), key=lambda t: t.name):
        for fk in table.foreign_keys:
            group = groups.get((table.name, fk.columns[0]), "")
            out.append(
                (
                    fk.name,
                    f"{table.name} ({', '.join(fk.columns)})",
                    f"{fk.ref_table} ({', '.join(fk.ref_columns)})",
                    f"which rows of both tables hold equal keys, from the first insert "
                    f"(implied join group {group})",
                )
            )
    return out


def _beyond(fk_group: str | None, catalog: Catalog, table: Any, oc: Any) -> list[str]:
    """The columns sharing ``oc``'s key that its foreign keys' group does not name (those
    a join adjustment brought under it)."""
    named = set(fk_group.strip("{}").split(", ")) if fk_group else set()
    return [m for m in key_group_members(catalog, table, oc) if m not in named]


def layers_report(conn: psycopg.Connection[Any], master: MasterKey) -> list[LayerRow]:
    """Every onion column: its actual layer, floor and what the provider can learn now.
    (Opening the catalog checks its integrity: a tampered catalog is an error here.)"""
    catalog = Catalog.open(conn, master)
    groups = key_groups(catalog)
    rows = []
    for table in sorted(catalog.tables.values(), key=lambda t: t.name):
        for col in table.stored_columns:
            for oc in col.onions.values():
                rows.append(
                    LayerRow(
                        table.name,
                        col.name,
                        col.type.sql(),
                        oc.onion.value,
                        f"{table.anon}.{oc.anon}",
                        oc.shown_layer,
                        oc.floor or "-",
                        CONTAIN_AT_RND
                        if oc.onion is Onion.CONTAIN and oc.layer == "RND"
                        else _learns(
                            oc.shown_layer,
                            oc.ope_exact,
                            groups.get((table.name, col.name), col.join_group),
                            _beyond(groups.get((table.name, col.name)), catalog, table, oc),
                            col.collation,
                            col.encoding.ope_bits,
                        )
                        if col.expression is None
                        else "precomputed: "
                        + precomputed_reveals(
                            col.expression, oc.shown_layer, col.type.name == "boolean"
                        ),
                    )
                )
            for onion in col.on_demand:
                rows.append(
                    LayerRow(
                        table.name,
                        col.name,
                        col.type.sql(),
                        onion.value,
                        "-",
                        "(on first use)",
                        col.on_demand[onion].get("floor") or "-",
                        "nothing (not stored: built when a query first needs it)"
                        + (
                            f"; its order layer will be {col.on_demand[onion]['ord_layer']}"
                            if "ord_layer" in col.on_demand[onion]
                            else ""
                        ),
                    )
                )
    return rows


@dataclass
class PrecomputedRow:
    """One onion of a precomputed expression (precomputed.py), for ``adaptive-db layers``."""

    table: str
    name: str
    expression: str
    onion: str
    layer: str
    provider_learns: str


def precomputed_reveals(expression: str, layer: str, boolean: bool) -> str:
    """What the provider learns from a precomputed onion at ``layer``, about the
    expression's value (the expression itself is sealed in the catalog: the provider sees
    a column of the table, its onion kind and layer, not what it computes)."""
    if layer in ("RND", "HOM", "ASHE"):
        return "nothing (beyond NULLs)" + (": sums computable" if layer != "RND" else "")
    if layer == "DET" and boolean:
        return f"which rows satisfy {expression} and which do not (two classes)"
    if layer == "DET":
        return f"which rows have equal {expression}"
    if layer == "OPE":
        return (
            f"the order of the rows by {expression} (and equality), and its approximate "
            "values (the stored bytes follow them)"
        )
    if layer == "ORE":
        return f"the order of the rows by {expression} (and equality)"
    return f"{expression} itself" if layer == "PLAIN" else LEAKAGE.get(layer, layer)


def precomputed_report(catalog: Catalog) -> list[PrecomputedRow]:
    """Every precomputed onion of every table, its layer and what it reveals."""
    out = []
    for table in sorted(catalog.tables.values(), key=lambda t: t.name):
        for col in table.precomputed.values():
            expression = col.expression or ""
            for oc in col.onions.values():
                learns = precomputed_reveals(expression, oc.layer, col.type.name == "boolean")
                out.append(
                    PrecomputedRow(
                        table.name, col.name, expression, oc.onion.value, oc.layer, learns
                    )
                )
    return out


@dataclass
class DesignedRow:
    """One thing the online design built (compile/design_wants.py), in the order it
    appeared: what the provider saw appear, and when, is this list."""

    table: str
    order: int
    what: str
    column: str
    bytes_per_row: int
    table_total: int


# what the design report says of an expression the online design gave up
DECLINED = "declined: a value past its onion's bound"


def design_report(catalog: Catalog) -> list[DesignedRow]:
    """Per table, what the online design built, in order, and the bytes per row spent
    (against the client configuration's ``design_budget``); then the expressions it
    declined (order 0: a column retired, or a build given up, the provider saw which)."""
    out = []
    for table in sorted(catalog.tables.values(), key=lambda t: t.name):
        spent = 0
        for n, entry in enumerate(table.designed, 1):
            spent += int(entry["bytes"])
            out.append(
                DesignedRow(
                    table.name,
                    n,
                    str(entry["what"]),
                    str(entry["column"]),
                    int(entry["bytes"]),
                    spent,
                )
            )
        for expression in table.declined:  # (dropped, or never built: a value past it)
            out.append(DesignedRow(table.name, 0, expression, DECLINED, 0, spent))
    return out


def column_summary(rows: list[LayerRow]) -> list[tuple[str, str, str]]:
    """Per plain column, what the provider learns from all its onions together: the
    most revealing onion decides (the others reveal no more than it)."""
    worst: dict[tuple[str, str], LayerRow] = {}
    for r in rows:
        if r.layer not in _REVEALS:  # an onion built on first use: nothing stored yet
            continue
        key = (r.table, r.column)
        if key not in worst or _REVEALS[r.layer] > _REVEALS[worst[key].layer]:
            worst[key] = r
    out = []
    for (table, column), r in worst.items():
        learns = r.provider_learns
        if _REVEALS[r.layer] == 0:
            learns = "nothing but lengths and which values are NULL"
        out.append((f"{table}.{column}", f"{r.onion} at {r.layer}", learns))
    return out


@dataclass
class PeelRecord:
    """One row of the peel audit log: who peeled which column, when, from and to."""

    at: Any
    by_user: str
    client_addr: str
    application: str
    column: str
    onion: str
    from_layer: str
    to_layer: str
    mode: str
    rows: int | None
    duration_ms: Any


def audit_log(
    conn: psycopg.Connection[Any], master: MasterKey, limit: int = 50
) -> list[PeelRecord]:
    """The newest ``limit`` peels, with plain column names where the catalog has them
    (a dropped table's peels keep their anonymized names)."""
    catalog = Catalog.open(conn, master)
    out = []
    for r in conn.execute(
        "SELECT at, by_user, coalesce(host(client_addr), 'local'), coalesce(application, ''), "
        "anon_table, anon_column, onion, from_layer, to_layer, mode, rows, "
        "round(duration_ms::numeric, 1) FROM adaptive.peel_log ORDER BY id DESC LIMIT %s",
        (limit,),
    ):
        table = catalog.by_anon.get(r[4])
        found = table.onion_column(r[5]) if table else None
        name = f"{table.name}.{found[0].name}" if table and found else f"{r[4]}.{r[5]}"
        out.append(PeelRecord(r[0], r[1], r[2], r[3], name, *r[6:]))
    return out


def _check_pending_floor(meta: TableMeta, col: ColumnMeta, onion: Onion, layer: str) -> None:
    """A peel the DBA asks of an onion not built yet, below the floor it will have."""
    stack, floor = STACKS[onion], col.on_demand[onion].get("floor")
    target = "OPE" if layer.upper() == "ORE" else layer.upper()  # (the order layer)
    if floor in stack and target in stack and stack.index(target) > stack.index(floor):
        raise LayerFloorViolation(f"{meta.name}.{col.name}: {target} is below the floor {floor}")


def peel_column(
    conn: psycopg.Connection[Any],
    master: MasterKey,
    table: str,
    column: str,
    onion: str,
    layer: str,
    mode: str = "server",
) -> int:
    """Peel one onion to ``layer`` on the DBA's request; floors are enforced here too."""
    catalog = Catalog.open(conn, master)
    meta = catalog.table(table)
    col = meta.column(column)
    try:
        key = next(o for o in Onion if o.value.lower() == onion.lower())
    except StopIteration:
        raise ConfigError(f"unknown onion {onion!r}") from None
    if key in col.on_demand:  # built first (ondemand.py: it updates ``col`` too), then peeled
        _check_pending_floor(meta, col, key, layer)  # (refused before anything is built)
        designed.build_table(conn, catalog, meta.name, [BuildNeed(meta.name, col.name, key)])
    oc = col.onions.get(key)
    if oc is None:
        raise ConfigError(f"{meta.name}.{col.name} has no {key} onion")
    layer = layer.upper()
    if layer == "ORE" and oc.ord_scheme == "ORE":  # (the order layer, under that scheme)
        layer = "OPE"
    if layer not in oc.stack:
        raise ConfigError(f"{layer} is not a layer of the {key} onion {oc.stack}")
    if oc.stack.index(layer) <= oc.stack.index(oc.layer):
        return 0
    if oc.floor is not None and oc.stack.index(layer) > oc.stack.index(oc.floor):
        raise LayerFloorViolation(f"{meta.name}.{col.name}: {layer} is below the floor {oc.floor}")
    need = peeling.Need(meta, col, oc, layer, Cap.DECRYPT)
    peeling.check_allowed(need, mode if mode != "off" else "server")
    with conn.transaction():
        rows = peeling.peel(conn, meta, oc, layer, mode)
        range_indexes.after_peel(conn, catalog, meta, oc, rows)
    if rows > 0 and conn.autocommit and conn.info.transaction_status == pq.TransactionStatus.IDLE:
        compaction.after_adaptation(conn, [meta.anon])  # (the peel has committed)
    return rows


def rotate_master_key(conn: psycopg.Connection[Any], old: MasterKey, new: MasterKey) -> None:
    """Re-wrap the root key under ``new``; data and per-layer keys are untouched.

    Every key in the database is reachable only through the root key (it seals the
    metadata rows that hold the layer keys), so re-wrapping the root re-wraps them all.
    The catalog is opened first, so a tampered catalog is refused rather than re-keyed.
    The keyring row is locked and rewritten in one transaction: clients holding the old
    key keep working on their cached root key; new connections need the new key.
    """
    if hmac.compare_digest(old.key_check_value(), new.key_check_value()):
        raise ConfigError("the new master key is the current one")
    Catalog.open(conn, old, outdated_ok=True)  # checks the old key and the catalog
    with conn.transaction():
        row = conn.execute(
            "SELECT format, kcv, wrapped_root FROM adaptive.keyring WHERE id = 1 FOR UPDATE"
        ).fetchone()
        if row is None:
            raise MetadataTampered("the keyring is missing")
        label = root_label(int(row[0]))
        old.verify(bytes(row[1]))
        root = old.unwrap(bytes(row[2]), label)
        conn.execute(
            "UPDATE adaptive.keyring SET kcv = %s, wrapped_root = %s, rotated_at = now() "
            "WHERE id = 1",
            (new.key_check_value(), new.wrap(root, label)),
        )
