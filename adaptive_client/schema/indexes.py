"""CREATE INDEX and DROP INDEX through the client.

``CREATE INDEX`` builds a B-tree over the Eq onion columns (serving ``=`` once they are
at DET) and, when every indexed column has one, a second over the Ord onion columns
(serving ranges and ORDER BY once they are at OPE).  Peels rewrite values in place, so
the indexes stay valid.  A UNIQUE index is enforced over the key columns' DET
ciphertexts (injective): an Eq onion still at RND is re-encrypted to DET first.  A
partial index keeps its predicate where it tests columns for NULL.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql
from sqlglot import exp

from ..adapt import range_indexes
from ..adapt.onion_storage import bump_epoch
from ..catalog.metadata import Catalog, IndexMeta, TableMeta
from ..catalog.onions import Onion
from ..catalog.tablespec import dropped_objects, key_column, null_tests
from ..errors import DuplicateTable, LayerFloorViolation, UnsupportedQuery
from .alter import reencrypt


def _rewrite_sealed(conn: psycopg.Connection[Any], catalog: Catalog, meta: TableMeta) -> None:
    range_indexes.sync(conn, catalog, meta)
    catalog.write_table(conn, meta, new=False)
    bump_epoch(conn)


def create_index(conn: psycopg.Connection[Any], catalog: Catalog, stmt: exp.Create) -> None:
    index = stmt.this
    assert isinstance(index, exp.Index)
    table = index.args.get("table")
    params = index.args.get("params")
    if table is None or params is None:
        raise UnsupportedQuery("CREATE INDEX needs ON table (columns)", "CREATE INDEX")
    meta = catalog.table(table.name)
    cols: list[str] = []
    for e in params.args.get("columns") or []:
        node = e.this if isinstance(e, exp.Ordered) else e
        if not isinstance(node, exp.Column):
            raise UnsupportedQuery("only indexes over plain columns are supported", "CREATE INDEX")
        cols.append(meta.column(node.name).name)
    iname = index.name.lower() if index.name else f"{meta.name}_{'_'.join(cols)}_idx"
    if any(i.name == iname for i in meta.indexes):
        if stmt.args.get("exists"):
            return
        raise DuplicateTable(f'relation "{iname}" already exists')
    unique = bool(stmt.args.get("unique"))
    anon = catalog.anon_index(meta.name, iname)
    if unique:
        for c in cols:
            eq_oc = meta.column(c).onions.get(Onion.EQ)
            if eq_oc is not None and eq_oc.layer == "RND" and eq_oc.floor == "RND":
                raise LayerFloorViolation(
                    f"UNIQUE index on {meta.name}.{c}: needs its Eq onion at DET, "
                    "below its floor RND"
                )
            if eq_oc is not None and eq_oc.layer == "RND":
                # uniqueness is enforced over DET ciphertexts: the onion goes to DET now,
                # as ADD CONSTRAINT ... UNIQUE takes it (alter.py)
                reencrypt(conn, meta, meta.column(c), Onion.EQ, layer="DET")
    if unique:
        targets = [[key_column(meta, c) for c in cols]]
    else:
        targets = []
        eq = [
            meta.column(c).onions.get(Onion.EQ) or meta.column(c).onions.get(Onion.SINGLE)
            for c in cols
        ]
        if all(eq):
            targets.append([o for o in eq if o])
        ords = [meta.column(c).onions.get(Onion.ORD) for c in cols]
        if all(ords):
            targets.append([o for o in ords if o])
        if not targets:
            raise UnsupportedQuery(
                f"index {iname}: its columns share no onion to index", "CREATE INDEX"
            )
    predicate = _predicate(meta, params.args.get("where"), unique)
    for i, onion_cols in enumerate(targets):
        try:
            conn.execute(
                sql.SQL("CREATE {} INDEX {} ON {} ({}){}").format(
                    sql.SQL("UNIQUE") if unique else sql.SQL(""),
                    sql.Identifier(f"{anon}_{i}"),
                    sql.Identifier(meta.anon),
                    sql.SQL(", ").join(sql.Identifier(o.anon) for o in onion_cols),
                    predicate,
                )
            )
        except pg_errors.UniqueViolation as exc:
            # rows that violate it: reported in the index's name (server_errors.translate
            # reads it here, the catalog having no record of the index)
            exc.plain_constraint = iname  # type: ignore[attr-defined]
            raise
    meta.indexes.append(IndexMeta(iname, anon, cols, unique))
    _rewrite_sealed(conn, catalog, meta)


def _predicate(meta: TableMeta, where: exp.Where | None, unique: bool) -> sql.Composable:
    """`` WHERE ...`` of a partial index on the server (catalog.tablespec.null_tests),
    or nothing.  A partial UNIQUE index whose predicate the server cannot hold is
    refused; any other index whose predicate it cannot hold covers every row (the same
    answers, from a larger index)."""
    if where is None:
        return sql.SQL("")
    try:
        tests = null_tests(meta, where.this)
    except UnsupportedQuery:
        if unique:
            raise
        return sql.SQL("")
    return sql.SQL(" WHERE ") + sql.SQL(tests.sql("postgres"))


def server_index_names(conn: psycopg.Connection[Any], meta: TableMeta, idx: IndexMeta) -> list[str]:
    """The server's indexes of the application's index ``idx`` on ``meta``: one per onion
    its columns share (``{anon}_0``, ``{anon}_1``, made by :func:`create_index`), in the
    order made."""
    rows = conn.execute(
        "SELECT indexname FROM pg_indexes WHERE tablename = %s AND indexname LIKE %s "
        "ORDER BY indexname",
        (meta.anon, idx.anon + "\\_%"),
    ).fetchall()
    return [n for (n,) in rows]


def drop_index(conn: psycopg.Connection[Any], catalog: Catalog, stmt: exp.Drop) -> None:
    named = dropped_objects(stmt)
    if len(named) != 1:
        raise UnsupportedQuery("DROP INDEX of several indexes at once", "DROP INDEX")
    iname = named[0].name.lower()
    for meta in catalog.tables.values():
        for idx in meta.indexes:
            if idx.name == iname:
                for n in server_index_names(conn, meta, idx):
                    conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(n)))
                meta.indexes.remove(idx)
                _rewrite_sealed(conn, catalog, meta)
                return
    if not stmt.args.get("exists"):
        raise pg_errors.UndefinedObject(f'index "{iname}" does not exist')


def rename_index(conn: psycopg.Connection[Any], catalog: Catalog, stmt: exp.Alter) -> None:
    """ALTER INDEX [IF EXISTS] name RENAME TO new: the application's index takes the new
    name, and its server indexes the keyed names the new one gives (so that an index
    made later under the old name gets names of its own).  The index of a UNIQUE or
    PRIMARY KEY constraint renames the constraint, as in PostgreSQL."""
    actions = stmt.args.get("actions") or []
    if len(actions) != 1 or not isinstance(actions[0], exp.AlterRename):
        raise UnsupportedQuery("ALTER INDEX other than RENAME TO", "ALTER INDEX")
    old, new = stmt.this.name.lower(), actions[0].this.name.lower()
    for meta in catalog.tables.values():
        idx = next((i for i in meta.indexes if i.name == old), None)
        keys = [a for a in _indexed_keys(catalog, meta) if meta.constraints.get(a) == old]
        if idx is None and not keys:
            continue
        if new != old and _index_name_taken(catalog, new):
            raise DuplicateTable(f'relation "{new}" already exists')
        if idx is not None:
            anon = catalog.anon_index(meta.name, new)
            for i, name in enumerate(server_index_names(conn, meta, idx)):
                conn.execute(
                    sql.SQL("ALTER INDEX {} RENAME TO {}").format(
                        sql.Identifier(name), sql.Identifier(f"{anon}_{i}")
                    )
                )
            idx.name, idx.anon = new, anon
        for a in keys:
            meta.constraints[a] = new
        _rewrite_sealed(conn, catalog, meta)
        return
    if not stmt.args.get("exists"):
        raise pg_errors.UndefinedTable(f'relation "{old}" does not exist')


def _indexed_keys(catalog: Catalog, meta: TableMeta) -> list[str]:
    """The server names of ``meta``'s constraints with an index of their own (its primary
    key and unique keys)."""
    return [
        *meta.unique_keys,
        *([catalog.anon_index(meta.name, "__pkey__")] if meta.primary_key else []),
    ]


def _index_name_taken(catalog: Catalog, name: str) -> bool:
    """A relation of that name: a table, view or sequence, an index, or a key's index."""
    return catalog.has_relation(name) or any(
        name in (i.name for i in t.indexes)
        or name in (t.constraints.get(a) for a in _indexed_keys(catalog, t))
        for t in catalog.tables.values()
    )


__all__ = ["create_index", "drop_index", "rename_index", "server_index_names"]
