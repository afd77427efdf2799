"""DDL through the client: CREATE TABLE, DROP TABLE, TRUNCATE, and the dispatch of
every DDL statement to the module that runs it (:func:`statement`).

A plain column becomes one stored column per onion, named by a keyed hash (columns.py).
``PRIMARY KEY`` / ``UNIQUE`` columns keep their Eq onion at DET from the start (the
provider learns which rows are equal on a key -- nothing, since keys are unique -- and
the uniqueness constraint is enforced on the DET ciphertexts, which are injective).
Indexes are indexes.py's, ALTER TABLE alter.py's, enum types and domains typeddl.py's,
sequences sequence_objects.py's, views views.py's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql
from sqlglot import exp

from ..adapt import designed, range_indexes
from ..adapt.onion_storage import bump_epoch, fresh_name, storage_type
from ..catalog import checks, domains, foreign_keys, precomputed, views
from ..catalog.defaults import Runtime
from ..catalog.metadata import Catalog, ColumnMeta, TableMeta
from ..catalog.tablespec import checked_per_statement, dropped_objects, key_column, parse_table
from ..compile.generated import check_generation, generation_text
from ..compile.statements import compile_statement
from ..errors import DuplicateTable, StaleMetadata, UndefinedTable, UnsupportedQuery
from . import alter, indexes, sequence_objects, typeddl
from .columns import build_column, create_sequence
from .context import DdlContext


def create_table(ctx: DdlContext, stmt: exp.Create) -> None:
    conn, catalog, config = ctx.conn, ctx.catalog, ctx.config
    spec = parse_table(stmt)
    name = spec.name
    if catalog.has_relation(name):
        if stmt.args.get("exists"):
            return
        raise DuplicateTable(f'relation "{name}" already exists')
    if catalog.user_type(name) is not None:
        raise domains.pg_error(pg_errors.DuplicateObject, f'type "{name}" already exists')
    keyed = set(spec.pk) | {c for _, u in spec.uniques for c in u}
    taken = set(catalog.by_anon) | {v.anon for v in catalog.views.values()}
    anon_table = fresh_name(taken, lambda *p: catalog.root.anonymize("table", *p), name)
    shared = foreign_keys.shared_keys(catalog, spec, name)
    columns: dict[str, ColumnMeta] = {}
    for cname in spec.order:
        columns[cname] = build_column(conn, catalog, config, spec, cname, keyed, shared)
    for cname, tree in spec.generated.items():
        columns[cname].generated = generation_text(tree)
    for cname, tree in spec.generated.items():
        check_generation(catalog, columns, cname, tree)
    meta = TableMeta(name, anon_table, columns, primary_key=spec.pk)
    meta.precomputed = precomputed.build_columns(
        config, spec, columns, lambda p: build_column(conn, catalog, config, spec, p, set(), {})
    )
    if spec.pk:
        meta.constraints[catalog.anon_index(name, "__pkey__")] = spec.pk_name or f"{name}_pkey"
        if checked_per_statement(spec.timing.get("pk", "")):
            meta.statement_checked.append(catalog.anon_index(name, "__pkey__"))
    for i, (uname, cols) in enumerate(spec.uniques):
        anon = catalog.anon_index(name, f"__unique{i}__")
        meta.unique_keys[anon] = list(cols)
        meta.constraints[anon] = uname or f"{name}_{'_'.join(cols)}_key"
        if checked_per_statement(spec.timing.get(i, "")):
            meta.statement_checked.append(anon)
    meta.foreign_keys = foreign_keys.resolve(catalog, spec, meta)
    check_parts = checks.add_checks(  # (before the columns: a check sets start layers)
        meta, spec.checks, lambda plain: catalog.anon_index(name, "__check__" + plain)
    )
    parts: list[sql.Composable] = []
    for col in meta.stored_columns:
        for oc in col.onions.values():
            piece = sql.SQL("{} {}").format(sql.Identifier(oc.anon), sql.SQL(storage_type(col, oc)))
            if not col.nullable:
                piece = sql.SQL("{} NOT NULL").format(piece)
            # No layer-tag check yet: every client that knows the table has its onions at
            # these layers, so none can write at another until a peel, which adds the
            # check (peel.py).  PostgreSQL prepares every CHECK of a table afresh for each
            # INSERT and UPDATE, about 4 us apiece: one per onion made a single-row write
            # cost the server two to three times as much as the write itself.
            parts.append(piece)
    if spec.pk:
        parts.append(
            sql.SQL("CONSTRAINT {} PRIMARY KEY ({}) {}").format(
                sql.Identifier(catalog.anon_index(name, "__pkey__")),
                sql.SQL(", ").join(sql.Identifier(key_column(meta, c).anon) for c in spec.pk),
                sql.SQL(spec.timing.get("pk", "")),
            )
        )
    for i, (anon, u) in enumerate(meta.unique_keys.items()):
        parts.append(
            sql.SQL("CONSTRAINT {} UNIQUE ({}) {}").format(
                sql.Identifier(anon),
                sql.SQL(", ").join(sql.Identifier(key_column(meta, c).anon) for c in u),
                sql.SQL(spec.timing.get(i, "")),  # (DEFERRABLE ...: words of a fixed set)
            )
        )
    parts += foreign_keys.server_constraints(catalog, meta, meta.foreign_keys)
    parts += check_parts
    storage = (
        [sql.SQL("WITH ({})").format(sql.SQL(", ").join(map(sql.SQL, spec.storage_parameters)))]
        if spec.storage_parameters
        else []
    )
    if spec.tablespace is not None:
        storage.append(sql.SQL("TABLESPACE {}").format(sql.Identifier(spec.tablespace)))
    conn.execute(
        sql.SQL("CREATE {}TABLE {} ({}) {}").format(
            sql.SQL("UNLOGGED " if spec.unlogged else ""),
            sql.Identifier(anon_table),
            sql.SQL(", ").join(parts),
            sql.SQL(" ").join(storage),
        )
    )
    for col in columns.values():
        if col.name in spec.sequences:
            create_sequence(ctx, meta, col, spec.sequences[col.name])
    if meta.foreign_keys:
        foreign_keys.set_null_trigger(conn, meta)
    range_indexes.sync(conn, catalog, meta)
    catalog.write_table(conn, meta, new=True)
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO adaptive.layers (anon_table, anon_column, onion, layer) "
            "VALUES (%s, %s, %s, %s)",
            [
                (anon_table, oc.anon, oc.onion.value, oc.layer)
                for col in meta.stored_columns
                for oc in col.onions.values()
            ],
        )
    bump_epoch(conn)
    catalog.tables[name] = meta
    catalog.by_anon[anon_table] = meta


def drop_table(
    conn: psycopg.Connection[Any], catalog: Catalog, stmt: exp.Drop, runtime: Runtime
) -> None:
    names = []
    for table in dropped_objects(stmt):
        name = table.name.lower()
        if not catalog.has_table(name):
            if stmt.args.get("exists"):
                continue
            if name in catalog.views:
                raise pg_errors.WrongObjectType(f'"{name}" is not a table')
            raise UndefinedTable(f'table "{name}" does not exist')
        names.append(name)
    cascade = bool(stmt.args.get("cascade"))
    for name in names:
        for other, fk in catalog.referencing(name):
            if other.name in names:
                continue
            if not cascade:
                raise pg_errors.DependentObjectsStillExist(
                    f"cannot drop table {name} because other objects depend on it\n"
                    f"DETAIL:  constraint {fk.name} on table {other.name} depends on table {name}"
                )
        views.drop_dependents(conn, catalog, name, cascade=cascade, what="table")
    dropped = [catalog.table(n) for n in names]
    if not dropped:
        return
    conn.execute(
        sql.SQL("DROP TABLE {} {}").format(
            sql.SQL(", ").join(sql.Identifier(m.anon) for m in dropped),
            sql.SQL("CASCADE" if cascade else ""),
        )
    )
    for meta in dropped:
        conn.execute(
            sql.SQL("DROP FUNCTION IF EXISTS {}()").format(
                sql.Identifier(foreign_keys.trigger_name(meta))
            )
        )
        catalog.delete_table(conn, meta)
        del catalog.tables[meta.name]
        catalog.by_anon.pop(meta.anon, None)
        for col in meta.columns.values():  # (its serial columns' sequences, dropped with it)
            if col.sequence is not None:
                runtime.dropped(col.sequence)
    for other in catalog.tables.values():  # their foreign keys into the dropped tables
        kept = [fk for fk in other.foreign_keys if fk.ref_table not in names]
        if len(kept) != len(other.foreign_keys):
            other.foreign_keys = kept
            foreign_keys.set_null_trigger(conn, other)
            catalog.write_table(conn, other, new=False)
    bump_epoch(conn)


def truncate(
    conn: psycopg.Connection[Any], catalog: Catalog, stmt: exp.TruncateTable, runtime: Runtime
) -> None:
    """TRUNCATE [TABLE] t, ... [RESTART IDENTITY | CONTINUE IDENTITY] [CASCADE | RESTRICT]:
    the server truncates (and restarts the sequences its tables own); the client forgets
    the sequence values it drew."""
    metas = [catalog.table(t.name) for t in stmt.expressions]
    restart = str(stmt.args.get("identity") or "").upper() == "RESTART"
    cascade = str(stmt.args.get("option") or "").upper() == "CASCADE"
    conn.execute(
        sql.SQL("TRUNCATE {} {} {}").format(
            sql.SQL(", ").join(sql.Identifier(m.anon) for m in metas),
            sql.SQL("RESTART IDENTITY" if restart else ""),
            sql.SQL("CASCADE" if cascade else ""),
        )
    )
    if restart:  # the named tables' sequences, and with CASCADE those of the tables
        restarted = {m.name for m in metas}  # that reference them, transitively
        while cascade:
            more = {t.name for n in restarted for t, _ in catalog.referencing(n)} - restarted
            if not more:
                break
            restarted |= more
        for name in restarted:
            for col in catalog.table(name).columns.values():
                if col.sequence_anon:
                    runtime.reset(col.sequence_anon)


def statement(ctx: DdlContext, stmt: exp.Expression) -> Callable[[], None]:
    """The DDL statement ``stmt``, as a function to run in a transaction (type names
    resolved against the catalog's enums and domains)."""
    with domains.using(ctx.catalog):  # (statements read when made: CREATE DOMAIN)
        run = _statement(ctx, stmt)

    def in_context() -> None:
        with domains.using(ctx.catalog):
            run()

    return in_context


def _statement(ctx: DdlContext, stmt: exp.Expression) -> Callable[[], None]:
    conn, catalog, runtime = ctx.conn, ctx.catalog, ctx.runtime
    if typeddl.is_type_statement(stmt):
        return typeddl.statement(conn, catalog, stmt)

    kind = (stmt.args.get("kind") or "").upper()
    if isinstance(stmt, exp.Create) and stmt.find(exp.TemporaryProperty) is not None:
        # (the client's tables are described by sealed metadata in the database, which
        # every session reads: a temporary one would be seen, and outlive its session)
        raise UnsupportedQuery(
            f"CREATE TEMPORARY {kind or 'object'} through the client (create it on a "
            "plain connection, or a regular table dropped when done)",
            "temporary table",
        )
    if isinstance(stmt, exp.Create) and kind == "TABLE":
        return lambda: create_table(ctx, stmt)
    if isinstance(stmt, exp.Create) and kind == "INDEX":
        return lambda: indexes.create_index(conn, catalog, stmt)
    if isinstance(stmt, exp.Create) and kind == "SEQUENCE":
        return lambda: sequence_objects.create(conn, catalog, stmt)
    if isinstance(stmt, exp.Drop) and kind == "SEQUENCE":
        return lambda: sequence_objects.drop(conn, catalog, stmt, runtime)
    if isinstance(stmt, exp.Create) and kind == "VIEW":
        return lambda: views.create_view(
            conn, catalog, stmt, lambda q: _output_names(conn, catalog, q)
        )
    if isinstance(stmt, exp.Drop) and kind == "TABLE":
        return lambda: drop_table(conn, catalog, stmt, runtime)
    if isinstance(stmt, exp.Drop) and kind == "INDEX":
        return lambda: indexes.drop_index(conn, catalog, stmt)
    if isinstance(stmt, exp.Drop) and kind == "VIEW":
        return lambda: views.drop_view(
            conn,
            catalog,
            [t.name.lower() for t in dropped_objects(stmt)],
            exists=bool(stmt.args.get("exists")),
            cascade=bool(stmt.args.get("cascade")),
        )
    if isinstance(stmt, exp.TruncateTable):
        return lambda: truncate(conn, catalog, stmt, runtime)
    if isinstance(stmt, exp.Alter) and kind == "INDEX":
        return lambda: indexes.rename_index(conn, catalog, stmt)
    if isinstance(stmt, exp.Alter) and kind in ("TABLE", "VIEW"):
        renamed = views.renaming(catalog, stmt)
        if renamed is not None:  # (ALTER VIEW v RENAME TO w; ALTER TABLE v, as PostgreSQL)
            return lambda: views.rename_view(conn, catalog, *renamed)
        if kind == "TABLE":
            return lambda: alter.alter_table(ctx, stmt)
        name = stmt.this.name.lower()
        if name not in catalog.views:
            if stmt.args.get("exists"):
                return lambda: None
            if catalog.has_relation(name):
                raise pg_errors.WrongObjectType(f'"{name}" is not a view')
            raise UndefinedTable(f'relation "{name}" does not exist')
    raise UnsupportedQuery(
        f"{type(stmt).__name__} {kind} is not supported", f"{type(stmt).__name__} {kind}"
    )


def _output_names(
    conn: psycopg.Connection[Any], catalog: Catalog, query: exp.Expression
) -> list[tuple[str, int]]:
    """A view's columns, name and type OID, as its query compiles; an onion the query
    needs that its column builds on first use is built now (designed.py), in the DDL's
    transaction."""
    for _ in range(8):
        plan = compile_statement(catalog, query)
        if not plan.builds:
            return [(o.name, o.type_code) for o in plan.outputs]
        for need in plan.builds:
            designed.build_table(conn, catalog, need.table, [need])
    raise StaleMetadata("the view's columns kept changing while it was created")


__all__ = ["create_table", "drop_table", "statement", "truncate"]
