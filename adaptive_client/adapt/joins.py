"""Join adjustment: bring two columns under one key when a query first joins them.

Two onion columns compare over ciphertexts only if their inner layer (DET, or OPE) is
under the same key.  Columns declared in one ``join_group`` (or implied by a foreign key)
share keys from CREATE TABLE.  Any other pair is brought under one key at run time, the
first time a statement compares them -- an adaptation like a peel, and with a peel's
guarantees:

* **who moves** -- a *key group* is every onion column (of that onion kind) whose inner
  key is the same.  Of the two groups being joined, one *moves*: each of its members is
  re-keyed to the other group's key.  A group moves unless it cannot (a member declared
  ``joins = false``); declared ``join_group`` s stay put when the other side can move
  (the group's key is what a new table of that group gets); then the group with fewer
  rows moves.  Transitive groups follow: after ``a = b`` and ``b = c``, a, b and c share
  one key.
* **the server never holds a DET or OPE key** -- re-keying is done by the client, in
  every peel mode: it reads the column's distinct ciphertexts, decrypts them with the
  old key, encrypts them with the new one, and loads the mapping into a temporary table
  that one set-based UPDATE applies on the server.  A symmetric DET or OPE ciphertext
  cannot be re-keyed without both keys, and a proxy re-encryption layer (JOIN-ADJ's
  elliptic-curve adjustment) costs an elliptic-curve multiplication per row where this
  costs an AES block per *distinct* value (see docs/security.md for the trade-off).
* **atomic** -- one transaction per adjustment: the rows, the column's new name, its
  layer row, the sealed metadata of every table involved, the audit row.  Killed at any
  point, the group is wholly under its old key or wholly under the new one.
* **stale clients** -- a moved column is *renamed* (a new anonymized name): a statement
  compiled from metadata older than the adjustment names a column that no longer exists
  and fails (the connection turns that into a retry); it can neither write a value under
  the old key nor read a re-keyed value with it.  The sealed versions of every table
  involved are checked under the catalog head's lock: an adjustment planned from a
  catalog another client has changed meanwhile is abandoned and planned again.
* **audited** -- one ``adaptive.peel_log`` row per moved column, mode ``join``, from
  and to the same layer; the sealed metadata records each column's key group and, per
  adjustment, the column it was joined with and whether it moved.
* **refusals** -- peel mode ``off`` refuses (:class:`JoinAdjustmentDisabled`); a join
  whose both sides cannot move is refused (:class:`JoinForbidden`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from ..catalog import checks, foreign_keys
from ..catalog.metadata import Catalog, ColumnMeta, OnionColumn, TableMeta
from ..catalog.onions import Onion
from ..compile.needs import JoinNeed
from ..errors import JoinAdjustmentDisabled, JoinForbidden, StaleMetadata
from ..schemes import DET
from .onion_storage import bump_epoch


@dataclass(frozen=True)
class Member:
    """One onion column of a key group."""

    table: TableMeta
    column: ColumnMeta
    onion: OnionColumn

    @property
    def name(self) -> str:
        return f"{self.table.name}.{self.column.name}"


@dataclass
class Adjustment:
    """What one adjustment does: ``movers`` are re-keyed to ``anchor`` 's key."""

    need: JoinNeed
    movers: list[Member]
    anchor: Member
    others: list[Member]  # the rest of the anchor's group (their metadata records it)


def plan_adjustments(needs: list[JoinNeed]) -> list[JoinNeed]:
    """The needs once each (a statement may compare the same pair several times)."""
    seen: set[tuple[Any, ...]] = set()
    out = []
    for n in needs:
        key = (n.onion, n.key, *sorted([n.a, n.b]))
        if key not in seen:
            seen.add(key)
            out.append(n)
    return out


def check_allowed(need: JoinNeed, mode: str) -> None:
    if mode == "off":
        raise JoinAdjustmentDisabled(
            f"comparing {'.'.join(need.a)} with {'.'.join(need.b)} needs their {need.onion} "
            f"onions under one {need.key} key (a join adjustment), and peeling is off"
        )


def _member(catalog: Catalog, side: tuple[str, str], onion: Onion) -> Member:
    table = catalog.table(side[0])
    col = table.column(side[1])
    return Member(table, col, col.onions[onion])


def group_of(catalog: Catalog, onion: Onion, key: str, key_bytes: bytes) -> list[Member]:
    """Every onion column of kind ``onion`` whose ``key`` is ``key_bytes``: a key group."""
    out = []
    for table in sorted(catalog.tables.values(), key=lambda t: t.name):
        for col in table.columns.values():
            oc = col.onions.get(onion)
            if oc is not None and oc.keys.get(key) == key_bytes:
                out.append(Member(table, col, oc))
    return out


def _row_counts(conn: psycopg.Connection[Any], tables: set[str]) -> dict[str, float]:
    rows = conn.execute(
        "SELECT relname::text, greatest(reltuples, 0) FROM pg_class WHERE relname = ANY(%s)",
        (sorted(tables),),
    ).fetchall()
    return {r[0]: float(r[1]) for r in rows}


def choose(conn: psycopg.Connection[Any], catalog: Catalog, need: JoinNeed) -> Adjustment | None:
    """Which side moves, from the current catalog; None when nothing is left to do."""
    a, b = _member(catalog, need.a, need.onion), _member(catalog, need.b, need.onion)
    ka, kb = a.onion.keys[need.key], b.onion.keys[need.key]
    if ka == kb:
        return None  # another client joined them meanwhile
    ga, gb = (
        group_of(catalog, need.onion, need.key, ka),
        group_of(catalog, need.onion, need.key, kb),
    )
    counts = _row_counts(conn, {m.table.anon for m in ga + gb})

    def cost(group: list[Member]) -> tuple[Any, ...]:
        fixed = any(not m.column.joinable for m in group)
        declared = any(m.column.join_group for m in group)
        rows = sum(counts.get(m.table.anon, 0.0) for m in group)
        return (fixed, declared, rows, len(group), min(m.onion.anon for m in group))

    (mover, anchor_side, anchor_group) = (ga, b, gb) if cost(ga) < cost(gb) else (gb, a, ga)
    if any(not m.column.joinable for m in mover):
        fixed = [m.name for m in ga + gb if not m.column.joinable]
        raise JoinForbidden(
            f"comparing {'.'.join(need.a)} with {'.'.join(need.b)} needs their {need.onion} "
            f"onions under one key, and {', '.join(fixed)} may not be re-keyed for a join "
            "(joins = false in the onion configuration)"
        )
    others = [m for m in anchor_group if m.onion.anon != anchor_side.onion.anon]
    return Adjustment(need, mover, anchor_side, others)


def adjust(conn: psycopg.Connection[Any], catalog: Catalog, need: JoinNeed) -> int:
    """Carry out one join adjustment in its own transaction (a savepoint inside an open
    one) on ``conn``; return the rows re-keyed (-1: nothing was left to do).

    Raises :class:`StaleMetadata` when the catalog changed since it was loaded: the
    caller reloads it and plans again."""
    t0 = time.monotonic()
    plan = choose(conn, catalog, need)
    if plan is None:
        return -1
    involved = [*plan.movers, plan.anchor, *plan.others]
    tables = {m.table.anon: m.table for m in involved}
    total = 0
    with conn.transaction():
        # the same order as a peel: the layer rows, then the tables, then the catalog head
        for m in sorted(plan.movers, key=lambda m: (m.table.anon, m.onion.anon)):
            row = conn.execute(
                "SELECT layer FROM adaptive.layers WHERE anon_table = %s AND anon_column = %s "
                "FOR UPDATE",
                (m.table.anon, m.onion.anon),
            ).fetchone()
            if row is None or row[0] != m.onion.layer:
                raise StaleMetadata(f"{m.name} changed while a join adjustment was planned")
        for anon in sorted({m.table.anon for m in plan.movers}):
            conn.execute(
                sql.SQL("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE").format(sql.Identifier(anon))
            )
        head = catalog._read_head(conn, lock=True)
        for anon, meta in tables.items():
            if head.tables.get(anon) != meta.version:
                raise StaleMetadata(f"table {meta.name} changed while a join was planned")
        new_key = plan.anchor.onion.keys[need.key]
        label = plan.anchor.onion.key_group or plan.anchor.name
        generation = head.generation + 1
        moved_tables = {m.table.anon: m.table for m in plan.movers}
        # A group's foreign keys hold between its columns only once all are re-keyed
        # (checked at the end of the adjustment); checks on them hold ciphertext constants
        # under the old key (dropped, and added again under the new one).
        conn.execute("SET CONSTRAINTS ALL DEFERRED")
        for meta in moved_tables.values():
            checks.drop_all(conn, meta)
        moved_rows = [_rekey_values(conn, m, need.key, new_key) for m in plan.movers]
        total = sum(moved_rows)
        # the foreign keys checked now; then the schema changes (PostgreSQL refuses an
        # ALTER TABLE while constraint events are pending)
        conn.execute("SET CONSTRAINTS ALL IMMEDIATE")
        for m, rows in zip(plan.movers, moved_rows, strict=True):
            _rename(conn, m, generation, rows, t0)
            m.onion.keys[need.key] = new_key
            m.onion.key_group = label
            m.onion.adjustments.append(
                {"with": plan.anchor.name, "moved": True, "generation": generation}
            )
        for m in [plan.anchor, *plan.others]:
            m.onion.key_group = label
        plan.anchor.onion.adjustments.append(
            {
                "with": ", ".join(m.name for m in plan.movers),
                "moved": False,
                "generation": generation,
            }
        )
        for meta in moved_tables.values():
            checks.restore_all(conn, meta)
            foreign_keys.set_null_trigger(conn, meta)  # (it names the renamed columns)
        for meta in tables.values():
            catalog.write_table(conn, meta, new=False)
        bump_epoch(conn)
    return total


def _rekey_values(conn: psycopg.Connection[Any], m: Member, key: str, new_key: bytes) -> int:
    """Re-key one column's values in place (inside the caller's transaction)."""
    oc = m.onion
    tbl, col = sql.Identifier(m.table.anon), sql.Identifier(oc.anon)
    # both scans of the column (the read, then the UPDATE) from its first block, by one
    # process: the positional UPDATE relies on the same order
    with _settings(conn, synchronize_seqscans="off", max_parallel_workers_per_gather="0"):
        row = (
            conn.cursor(binary=True)
            .execute(
                sql.SQL(
                    "SELECT CASE WHEN min(length({c})) = max(length({c})) "
                    "THEN string_agg({c}, ''::bytea) END, min(length({c})), count({c}) FROM {t} "
                    "WHERE {c} IS NOT NULL"
                ).format(c=_bytes(col), t=tbl)
            )
            .fetchone()
        )
        if row is None or not row[2]:
            return 0
        if row[0] is not None:
            packed, width, count = bytes(row[0]), int(row[1]), int(row[2])
            rekeyed = _rekeyed_packed(oc, key, new_key, packed, width)
            if rekeyed is not None:
                rows = _positional_update(conn, oc, tbl, col, packed, width, *rekeyed, count)
                if rows is not None:
                    return rows
    return _mapping_update(conn, oc, key, new_key, tbl, col)


def _rekeyed_packed(
    oc: OnionColumn, key: str, new_key: bytes, packed: bytes, width: int
) -> tuple[bytes, int] | None:
    """The column's values (packed end to end, ``width`` bytes each, in the table's
    order) re-keyed, packed the same way, and their width; None when the re-keyed
    values differ in width.  Short DET values are re-keyed as one run; others once per
    distinct value."""
    if key == "DET" and oc.layer == "DET":
        news = DET(oc.keys["DET"]).rekey_packed(packed, DET(new_key))
        if news is not None:
            return news, width
    olds = [packed[i : i + width] for i in range(0, len(packed), width)]
    distinct = list(set(olds))
    mapped = dict(zip(distinct, _rekeyed(oc, key, new_key, distinct), strict=True))
    widths = {len(v) for v in mapped.values()}
    if len(widths) != 1:
        return None
    return b"".join([mapped[o] for o in olds]), widths.pop()


def _positional_update(
    conn: psycopg.Connection[Any],
    oc: OnionColumn,
    tbl: sql.Identifier,
    col: sql.Identifier,
    olds: bytes,
    width: int,
    news: bytes,
    new_width: int,
    count: int,
) -> int | None:
    """Rewrite the column by position: the i-th non-NULL value of a sequential scan
    takes the i-th re-keyed value -- no mapping table and no join, about a crypto-free
    UPDATE's cost.  A row is rewritten only if it still holds the i-th value read (then
    its new value is that value's, whatever the order); if any row did not, the UPDATE
    is rolled back (to a savepoint) and None returned: the caller re-keys by a mapping
    instead."""
    position = sql.Identifier(f"adaptive_rekey_pos_{oc.anon}")
    conn.execute(sql.SQL("CREATE TEMP SEQUENCE {} CACHE 100000").format(position))
    name = sql.Literal(f"pg_temp.adaptive_rekey_pos_{oc.anon}")
    rows = None
    try:
        with conn.transaction():
            cur = conn.cursor(binary=True).execute(
                sql.SQL(
                    "UPDATE {t} SET {c} = substring(%s::bytea FROM "
                    "(currval({p}) - 1)::integer * {nw} + 1 FOR {nw}) "
                    "WHERE {c} IS NOT NULL AND {b} = substring(%s::bytea FROM "
                    "(nextval({p}) - 1)::integer * {w} + 1 FOR {w})"
                ).format(
                    t=tbl,
                    c=col,
                    b=_bytes(col),
                    p=name,
                    w=sql.Literal(width),
                    nw=sql.Literal(new_width),
                ),
                (news, olds),
            )
            if cur.rowcount != count:
                raise _Misplaced
            rows = cur.rowcount
    except _Misplaced:
        pass
    conn.execute(sql.SQL("DROP SEQUENCE {}").format(position))
    return rows


def _bytes(col: sql.Composable) -> sql.Composable:
    """A column's stored bytes (an Ord onion at ORE is of type adaptive.ore, which is
    bytea only explicitly: its bytes are compared and read as bytes here)."""
    return sql.SQL("{}::bytea").format(col)


class _Misplaced(Exception):
    """A positional re-key found a row out of place (rolled back)."""


def _mapping_update(
    conn: psycopg.Connection[Any],
    oc: OnionColumn,
    key: str,
    new_key: bytes,
    tbl: sql.Identifier,
    col: sql.Identifier,
) -> int:
    """Re-key the column through a mapping of its distinct ciphertexts, loaded into a
    temporary table and joined by one UPDATE: for values of several widths."""
    # the distinct ciphertexts, deduplicated here: the column as one binary array is
    # read faster than the server sorts or hashes it for a DISTINCT
    row = (
        conn.cursor(binary=True)
        .execute(
            sql.SQL("SELECT array_agg({}) FROM {} WHERE {} IS NOT NULL").format(
                _bytes(col), tbl, col
            )
        )
        .fetchone()
    )
    olds = list(set(row[0])) if row is not None and row[0] is not None else []
    if not olds:
        return 0
    news = _rekeyed(oc, key, new_key, olds)
    mapping = sql.Identifier(f"adaptive_rekey_{oc.anon}")
    conn.execute(
        sql.SQL("CREATE TEMP TABLE {} (old bytea, new bytea) ON COMMIT DROP").format(mapping)
    )
    with conn.cursor().copy(
        sql.SQL("COPY {} (old, new) FROM STDIN (FORMAT BINARY)").format(mapping)
    ) as copy:
        copy.write(_binary_copy(olds, news))
    conn.execute(sql.SQL("ANALYZE {}").format(mapping))
    # the mapping's hash table in memory, in one batch (a spilled hash join doubles the
    # UPDATE's time)
    with _settings(conn, work_mem=_REKEY_WORK_MEM):
        cur = conn.execute(
            sql.SQL("UPDATE {} AS t SET {} = m.new FROM {} AS m WHERE {} = m.old").format(
                tbl, col, mapping, _bytes(sql.SQL("t.{}").format(col))
            )
        )
    conn.execute(sql.SQL("DROP TABLE {}").format(mapping))
    return cur.rowcount


@contextmanager
def _settings(conn: psycopg.Connection[Any], **values: str) -> Iterator[None]:
    """Settings for the statements inside, put back after: this may be the
    application's transaction.  (On an error they are not: the rollback of the
    adjustment's savepoint puts them back.)"""
    before = {
        name: conn.execute("SELECT current_setting(%s)", (name,)).fetchone() for name in values
    }
    for name, value in values.items():
        conn.execute("SELECT set_config(%s, %s, true)", (name, value))
    yield
    for name, row in before.items():
        if row is not None:
            conn.execute("SELECT set_config(%s, %s, true)", (name, row[0]))


def _rename(
    conn: psycopg.Connection[Any], m: Member, generation: int, rows: int, t0: float
) -> None:
    """Rename a re-keyed column and log it (inside the caller's transaction)."""
    oc = m.onion
    # A new name: statements compiled before the adjustment fail instead of writing a
    # value under the old key or reading a re-keyed one with it.
    rename_onion(conn, m.table.anon, oc, "j", generation)
    conn.execute(
        "INSERT INTO adaptive.peel_log (anon_table, anon_column, onion, from_layer, to_layer, "
        "mode, rows, duration_ms) VALUES (%s, %s, %s, %s, %s, 'join', %s, %s)",
        (
            m.table.anon,
            oc.anon,
            oc.onion.value,
            oc.layer,
            oc.layer,
            rows,
            (time.monotonic() - t0) * 1000,
        ),
    )


def rename_onion(
    conn: psycopg.Connection[Any], table_anon: str, oc: OnionColumn, why: str, generation: int
) -> None:
    """Give an onion column a new anonymized name (``why``: ``j`` join adjustment, ``b``
    onion build; and the catalog generation), with its layer-tag check and layer row,
    so that statements compiled from older metadata fail and are retried."""
    tbl = sql.Identifier(table_anon)
    base = oc.anon.rsplit("_", 1)[0]
    renamed = f"{base}_{oc.onion.value.lower()}{why}{generation}"
    conn.execute(
        sql.SQL("ALTER TABLE {} RENAME COLUMN {} TO {}").format(
            tbl, sql.Identifier(oc.anon), sql.Identifier(renamed)
        )
    )
    has_check = conn.execute(
        "SELECT 1 FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid "
        "WHERE t.relname = %s AND c.conname = %s",
        (table_anon, "k_" + oc.anon),
    ).fetchone()
    if has_check:
        conn.execute(
            sql.SQL("ALTER TABLE {} RENAME CONSTRAINT {} TO {}").format(
                tbl, sql.Identifier("k_" + oc.anon), sql.Identifier("k_" + renamed)
            )
        )
    conn.execute(
        "UPDATE adaptive.layers SET anon_column = %s, changed_at = now() "
        "WHERE anon_table = %s AND anon_column = %s",
        (renamed, table_anon, oc.anon),
    )
    oc.anon = renamed


def _rekeyed(oc: OnionColumn, key: str, new_key: bytes, olds: list[bytes]) -> list[bytes]:
    """``olds`` (the column's ciphertexts at its layer, verified under the lock: every
    value is at it, the peel having converted them all) under ``new_key``."""
    wrapped = oc.layer == "RND"  # a group member not peeled yet: its RND layer is kept
    inner = oc.rnd.decrypt_many(olds) if wrapped else olds
    if key == "DET":
        news = DET(oc.keys["DET"]).rekey_many(inner, DET(new_key))
    else:
        old_ope, new_ope = oc.ope_keyed(oc.keys["OPE"]), oc.ope_keyed(new_key)  # (or ORE)
        news = new_ope.encrypt_many(old_ope.decrypt_many(inner))
    return oc.rnd.encrypt_many(news) if wrapped else news


_REKEY_WORK_MEM = "256MB"
_COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + bytes(8)  # signature, flags, extension length
_COPY_TRAILER = b"\xff\xff"


def _binary_copy(olds: list[bytes], news: list[bytes]) -> bytes:
    """COPY's binary format of (old, new) bytea rows, built in one pass: per row the
    field count, then each field's length and bytes."""
    sizes: dict[int, bytes] = {}

    def size(n: int) -> bytes:
        s = sizes.get(n)
        if s is None:
            s = sizes[n] = n.to_bytes(4, "big")
        return s

    body = b"".join(
        [
            b"\x00\x02" + size(len(old)) + old + size(len(new)) + new
            for old, new in zip(olds, news, strict=True)
        ]
    )
    return _COPY_HEADER + body + _COPY_TRAILER


def key_group_members(catalog: Catalog, table: TableMeta, oc: OnionColumn) -> list[str]:
    """The other columns whose ``oc``-kind onion shares its inner key (for ``layers``)."""
    key = oc.innermost
    if key not in ("DET", "OPE") or key not in oc.keys:
        return []
    return [
        m.name
        for m in group_of(catalog, oc.onion, key, oc.keys[key])
        if not (m.table.anon == table.anon and m.onion.anon == oc.anon)
    ]
