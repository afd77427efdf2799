"""ALTER TABLE through the client.

Each action changes the server table (anonymized columns, constraints) and the sealed
metadata in the DDL's transaction: a failure leaves both as they were.  Renames touch
only the sealed metadata -- the server's names are keyed hashes chosen once.  What
needs the values themselves (a new column's default for the rows already there, a
column's type, a constraint that needs an onion at another layer or under another key)
is done by the client: it reads the column's ciphertexts, decrypts, and writes the new
ones, row by row under the table lock the ALTER holds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql
from sqlglot import exp

from ..adapt import designed, range_indexes
from ..adapt.joins import group_of
from ..adapt.onion_storage import (
    add_onion_columns,
    bump_epoch,
    drop_onion_columns,
    set_not_null,
)
from ..catalog import checks, defaults, foreign_keys, precomputed, recipes, views
from ..catalog.metadata import Catalog, ColumnMeta, OnionColumn, TableMeta
from ..catalog.onions import TAGS, Cap, Onion, capabilities, layer_index
from ..catalog.tablespec import (
    TableSpec,
    checked_per_statement,
    column_type,
    key_column,
    key_timing,
    read_column,
    read_default,
    reference,
)
from ..compile.generated import (
    check_generation,
    computation_of,
    generation_text,
    generation_tree,
    inputs_of,
)
from ..compile.needs import BuildNeed
from ..errors import DuplicateTable, LayerFloorViolation, UnsupportedQuery
from ..syntax.identity_actions import AlterIdentity
from ..values.encodings import TEXT_TYPES
from . import identity
from .columns import build_column, create_sequence
from .context import DdlContext


def alter_table(ctx: DdlContext, stmt: exp.Alter) -> None:
    conn, catalog = ctx.conn, ctx.catalog
    name = stmt.this.name.lower()
    if not catalog.has_table(name):
        if stmt.args.get("exists"):
            return
        if name in catalog.views:
            raise pg_errors.WrongObjectType(f'"{name}" is not a table')
        raise pg_errors.UndefinedTable(f'relation "{name}" does not exist')
    meta = catalog.table(name)
    precomputed.refuse_alter(meta, stmt.args.get("actions") or [])
    for action in stmt.args.get("actions") or []:
        if isinstance(action, exp.ColumnDef):
            _add_column(ctx, meta, action)
        elif isinstance(action, exp.Drop) and str(action.args.get("kind")).upper() == "COLUMN":
            drop_column(conn, catalog, meta, action)
        elif isinstance(action, exp.Drop) and str(action.args.get("kind")).upper() == "CONSTRAINT":
            _drop_constraint(conn, catalog, meta, action)
        elif isinstance(action, exp.RenameColumn):
            _rename_column(conn, catalog, meta, action)
        elif isinstance(action, exp.AlterRename):
            meta = _rename_table(conn, catalog, meta, action.this.name.lower())
        elif isinstance(action, exp.AlterColumn):
            _alter_column(ctx, meta, action)
        elif isinstance(action, AlterIdentity):
            identity.alter_identity(ctx, meta, action)
        elif isinstance(action, exp.AddConstraint):
            for c in action.expressions:
                inner = c.expressions if isinstance(c, exp.Constraint) else [c]
                cname = c.name if isinstance(c, exp.Constraint) else None
                for item in inner:
                    _add_constraint(
                        conn, catalog, meta, item, cname, bool(stmt.args.get("not_valid"))
                    )
        else:
            raise UnsupportedQuery(
                f"ALTER TABLE ... {action.sql('postgres')} is not supported", "ALTER TABLE"
            )
    range_indexes.sync(conn, catalog, meta)
    catalog.write_table(conn, meta, new=False)
    bump_epoch(conn)


# -- values, rewritten by the client -----------------------------------------------------


def _readable(col: ColumnMeta) -> OnionColumn:
    for oc in recipes.onion_order(col):
        if Cap.DECRYPT in capabilities(oc.onion, oc.layer, oc.ope_exact):
            return oc
    raise UnsupportedQuery(f"no onion of {col.name} can be decrypted", "ALTER TABLE")


def _rewrite(
    conn: psycopg.Connection[Any],
    meta: TableMeta,
    targets: list[tuple[ColumnMeta, OnionColumn]],
    value_of: Callable[[tuple[Any, ...]], dict[str, Any]],
    sources: list[ColumnMeta],
) -> None:
    """Write the onion columns ``targets`` of every row: ``value_of`` maps a row's
    decrypted ``sources`` (by column name) to the plaintexts to encrypt."""
    read = [_readable(c) for c in sources]
    query = sql.SQL("SELECT ctid::text{} FROM {}").format(
        sql.SQL("").join(sql.SQL(", {}").format(sql.Identifier(oc.anon)) for oc in read),
        sql.Identifier(meta.anon),
    )
    rows = conn.execute(query).fetchall()
    if not rows or not targets:
        return
    update = sql.SQL("UPDATE {} SET {} WHERE ctid = %s::tid").format(
        sql.Identifier(meta.anon),
        sql.SQL(", ").join(sql.SQL("{} = %s").format(sql.Identifier(oc.anon)) for _, oc in targets),
    )
    batch = []
    for row in rows:
        plain = {
            c.name: recipes.decrypt(c, oc, stored)
            for c, oc, stored in zip(sources, read, row[1:], strict=True)
        }
        values = value_of(tuple(plain.values()))
        out = []
        for col, oc in targets:
            v = values.get(col.name)
            v = None if v is None else col.encoding.coerce(v)
            ct = None if v is None else recipes.encrypt(col, oc, v)
            out.append(list(ct) if ct is not None and oc.onion is Onion.SEARCH else ct)
        batch.append((*out, row[0]))
    with conn.cursor() as cur:
        cur.executemany(update, batch)


def _tag_check(conn: psycopg.Connection[Any], meta: TableMeta, oc: OnionColumn) -> None:
    """The layer-tag check of an onion column (see ddl.create_table), for its layer."""
    conn.execute(
        sql.SQL("ALTER TABLE {} DROP CONSTRAINT IF EXISTS {}").format(
            sql.Identifier(meta.anon), sql.Identifier("k_" + oc.anon)
        )
    )
    if oc.layer in TAGS and oc.onion in (Onion.EQ, Onion.ORD):
        conn.execute(
            sql.SQL("ALTER TABLE {} ADD CONSTRAINT {} CHECK (get_byte({}::bytea, 0) = {})").format(
                sql.Identifier(meta.anon),
                sql.Identifier("k_" + oc.anon),
                sql.Identifier(oc.anon),
                sql.Literal(oc.layer_tag(oc.layer)),
            )
        )


# -- actions ---------------------------------------------------------------------------------


def _add_column(ctx: DdlContext, meta: TableMeta, cd: exp.ColumnDef) -> None:
    conn, catalog, runtime = ctx.conn, ctx.catalog, ctx.runtime
    cname = cd.name.lower()
    if cname in meta.columns:
        if cd.args.get("exists"):
            return
        raise pg_errors.DuplicateColumn(
            f'column "{cname}" of relation "{meta.name}" already exists'
        )
    spec = TableSpec(meta.name)
    read_column(spec, cd)
    if spec.pk or spec.uniques or spec.checks:
        raise UnsupportedQuery(
            "ADD COLUMN with PRIMARY KEY, UNIQUE or CHECK: add the column, then the constraint",
            "ALTER TABLE ADD COLUMN",
        )
    # a self-reference resolves against the table's own keys
    spec.pk, spec.uniques = list(meta.primary_key), [(None, u) for u in meta.unique_keys.values()]
    shared = foreign_keys.shared_keys(catalog, spec, meta.name)
    taken = {oc.anon for c in meta.columns.values() for oc in c.onions.values()}
    col = build_column(conn, catalog, ctx.config, spec, cname, set(), shared, taken)
    if cname in spec.generated:
        col.generated = generation_text(spec.generated[cname])
        check_generation(catalog, {**meta.columns, cname: col}, cname, spec.generated[cname])
    meta.columns[cname] = col
    add_onion_columns(conn, meta, col)
    if cname in spec.sequences:
        create_sequence(ctx, meta, col, spec.sequences[cname])
    if col.generated is not None:  # (the rows there: their values computed)
        computation = computation_of(catalog, meta, col)
        sources = [meta.columns[n] for n in computation.inputs]
        _rewrite(
            conn,
            meta,
            [(col, oc) for oc in col.onions.values()],
            lambda row: {cname: computation.value(dict(zip(computation.inputs, row, strict=True)))},
            sources,
        )
    if col.has_default:
        token = defaults.RUNTIME.set(runtime)
        try:
            fill = defaults.builder(col)
            targets = [(col, oc) for oc in col.onions.values()]

            def value_of(_: tuple[Any, ...]) -> dict[str, Any]:
                defaults.next_bind()
                return {cname: fill(())}

            _rewrite(conn, meta, targets, value_of, [])
        finally:
            defaults.RUNTIME.reset(token)
    if not col.nullable:
        set_not_null(conn, meta, col)
    if spec.foreign_keys:
        _add_foreign_keys(conn, catalog, meta, spec)


def _views_using(catalog: Catalog, meta: TableMeta, column: str | None) -> list[str]:
    out = []
    for v in views.dependents(catalog, meta.name):
        if column is None or views.reads_column(catalog, v, meta.name, column):
            out.append(v.name)
    return out


def drop_column(
    conn: psycopg.Connection[Any], catalog: Catalog, meta: TableMeta, action: exp.Drop
) -> None:
    cascade = bool(action.args.get("cascade"))
    for node in action.args.get("tables") or []:
        cname = node.name.lower()
        if cname not in meta.columns:
            if action.args.get("exists"):
                continue
            raise pg_errors.UndefinedColumn(
                f'column "{cname}" of relation "{meta.name}" does not exist'
            )
        _drop_one(conn, catalog, meta, cname, cascade)


def _drop_one(
    conn: psycopg.Connection[Any], catalog: Catalog, meta: TableMeta, cname: str, cascade: bool
) -> None:
    if cname not in meta.columns:  # (dropped already, with a column it was generated from)
        return
    generated = [
        c.name
        for c in meta.columns.values()
        if c.generated is not None and cname in inputs_of(c.generated)
    ]
    if generated and not cascade:
        raise pg_errors.DependentObjectsStillExist(
            f"cannot drop column {cname} of table {meta.name} because other objects depend on it"
            f"\nDETAIL:  column {generated[0]} of table {meta.name} depends on column {cname}"
        )
    for name in generated:
        _drop_one(conn, catalog, meta, name, cascade)
    used = _views_using(catalog, meta, cname)
    if used and not cascade:
        raise pg_errors.DependentObjectsStillExist(
            f"cannot drop column {cname} of table {meta.name} because other objects depend on it"
        )
    for v in used:
        views.drop_view(conn, catalog, [v], exists=True, cascade=True)
    drop_onion_columns(conn, meta, meta.columns[cname], cascade)
    del meta.columns[cname]
    # what PostgreSQL drops with the column: its indexes and constraints
    if cname in meta.primary_key:
        meta.primary_key = []
    meta.unique_keys = {a: u for a, u in meta.unique_keys.items() if cname not in u}
    meta.indexes = [i for i in meta.indexes if cname not in i.columns]
    meta.foreign_keys = [f for f in meta.foreign_keys if cname not in f.columns]
    meta.checks = [c for c in meta.checks if cname not in checks.columns_of(c["sql"])]
    for other, fk in catalog.referencing(meta.name):
        if cname in fk.ref_columns and other is not meta:
            other.foreign_keys.remove(fk)
            catalog.write_table(conn, other, new=False)
    foreign_keys.set_null_trigger(conn, meta)


def _rename_column(
    conn: psycopg.Connection[Any], catalog: Catalog, meta: TableMeta, action: exp.RenameColumn
) -> None:
    old, new = action.this.name.lower(), action.args["to"].name.lower()
    col = meta.column(old)
    if new in meta.columns:
        raise pg_errors.DuplicateColumn(f'column "{new}" of relation "{meta.name}" already exists')
    if _views_using(catalog, meta, old):
        raise UnsupportedQuery(
            f"renaming {meta.name}.{old}: a view uses it (views are kept as their text); "
            "drop the view, rename, create it again",
            "RENAME COLUMN under a view",
        )
    col.name = new
    meta.columns = {new if k == old else k: v for k, v in meta.columns.items()}

    def swap(cols: list[str]) -> list[str]:
        return [new if c == old else c for c in cols]

    meta.primary_key = swap(meta.primary_key)
    meta.unique_keys = {a: swap(u) for a, u in meta.unique_keys.items()}
    for idx in meta.indexes:
        idx.columns = swap(idx.columns)
    for fk in meta.foreign_keys:
        fk.columns = swap(fk.columns)
    for other, fk in catalog.referencing(meta.name):
        fk.ref_columns = swap(fk.ref_columns)
        if other is not meta:
            catalog.write_table(conn, other, new=False)
    for c in meta.checks:
        tree = checks.parse_condition(c["sql"])
        for node in tree.find_all(exp.Column):
            if node.name.lower() == old:
                node.set("this", exp.to_identifier(new))
        c["sql"] = tree.sql("postgres")
    for gen in meta.columns.values():  # (a generated column's expression naming it)
        if gen.generated is not None and old in inputs_of(gen.generated):
            expression = generation_tree(gen.generated)
            for node in expression.find_all(exp.Column):
                if node.name.lower() == old:
                    node.set("this", exp.to_identifier(new))
            gen.generated = generation_text(expression)


def _rename_table(
    conn: psycopg.Connection[Any], catalog: Catalog, meta: TableMeta, new: str
) -> TableMeta:
    if catalog.has_relation(new):
        raise DuplicateTable(f'relation "{new}" already exists')
    old = meta.name
    for other, fk in catalog.referencing(old):
        fk.ref_table = new
        if other is not meta:
            catalog.write_table(conn, other, new=False)
    for v in views.dependents(catalog, old):
        body = views.definition(v)
        for t in body.find_all(exp.Table):
            if t.name.lower() == old:
                alias = t.alias_or_name
                t.set("this", exp.to_identifier(new))
                if not t.alias:
                    t.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
        v.sql = body.sql("postgres")
        v.tables = sorted({new if x == old else x for x in v.tables})
        catalog.write_table(conn, v, new=False)
    del catalog.tables[old]
    meta.name = new
    catalog.tables[new] = meta
    return meta


def _alter_column(ctx: DdlContext, meta: TableMeta, action: exp.AlterColumn) -> None:
    conn = ctx.conn
    col = meta.column(action.this.name)
    if action.args.get("dtype") is not None:
        _alter_type(ctx, meta, col, action)
    elif action.args.get("allow_null") is not None:
        if action.args["allow_null"]:
            identity.refuse_default_change(meta, col, "")
            if col.name in meta.primary_key:
                raise pg_errors.InvalidTableDefinition(f'column "{col.name}" is in a primary key')
            for oc in col.onions.values():
                conn.execute(
                    sql.SQL("ALTER TABLE {} ALTER COLUMN {} DROP NOT NULL").format(
                        sql.Identifier(meta.anon), sql.Identifier(oc.anon)
                    )
                )
            col.nullable = True
        else:
            set_not_null(conn, meta, col)
            col.nullable = False
    elif action.args.get("default") is not None:
        identity.refuse_default_change(meta, col, "")
        _refuse_generated_default(meta, col, "")
        spec = TableSpec(meta.name)
        read_default(spec, col.name, action.args["default"])
        col.default = spec.defaults.get(col.name)
        col.default_sql, col.default_volatile = spec.runtime.get(col.name, (None, False))
    elif action.args.get("drop"):
        identity.refuse_default_change(meta, col, "DROP IDENTITY")
        _refuse_generated_default(meta, col, "DROP EXPRESSION")
        col.default, col.default_sql, col.default_volatile = None, None, False
        if col.sequence is not None:  # a serial column's default is its sequence
            col.sequence = None
    else:
        raise UnsupportedQuery(
            f"ALTER COLUMN {action.sql('postgres')} is not supported", "ALTER COLUMN"
        )


def _refuse_generated_default(meta: TableMeta, col: ColumnMeta, hint: str) -> None:
    """PostgreSQL's 42601 for SET DEFAULT or DROP DEFAULT of a generated column."""
    if col.generated is not None:
        raise pg_errors.SyntaxError(
            f'column "{col.name}" of relation "{meta.name}" is a generated column'
            + (f"\nHINT:  Use ALTER TABLE ... ALTER COLUMN ... {hint} instead." if hint else "")
        )


def _alter_type(ctx: DdlContext, meta: TableMeta, col: ColumnMeta, action: exp.AlterColumn) -> None:
    """ALTER COLUMN ... TYPE: every value decrypted, converted as PostgreSQL's assignment
    cast converts it, and encrypted into new onion columns under new keys."""
    conn, catalog = ctx.conn, ctx.catalog
    using = action.args.get("using")
    if using and col.generated is not None:
        raise pg_errors.InvalidColumnDefinition(
            "cannot specify USING when altering type of generated column\n"
            f'DETAIL:  Column "{col.name}" is a generated column.'
        )
    if using and not (
        isinstance(using, exp.Cast | exp.Column)
        and (using.this if isinstance(using, exp.Cast) else using).name.lower() == col.name
    ):
        raise UnsupportedQuery("ALTER COLUMN TYPE ... USING an expression", "ALTER TYPE USING")
    new_type = column_type(action.args["dtype"])
    for other in meta.columns.values():
        if other.generated is not None and col.name in inputs_of(other.generated):
            raise pg_errors.FeatureNotSupported(
                "cannot alter type of a column used by a generated column\n"
                f'DETAIL:  Column "{col.name}" is used by generated column "{other.name}".'
            )
    if col.identity is not None:
        identity.check_type(new_type.name)
    keyed = (
        col.name in meta.primary_key
        or any(col.name in u for u in meta.unique_keys.values())
        or any(col.name in f.columns for f in meta.foreign_keys)
        or any(col.name in fk.ref_columns for _, fk in catalog.referencing(meta.name))
        or any(col.name in i.columns for i in meta.indexes)
        or meta.checks
    )
    if keyed:
        raise UnsupportedQuery(
            f"ALTER TYPE of {meta.name}.{col.name}, which a key, index or check uses: drop "
            "them, alter, add them again",
            "ALTER TYPE of a key",
        )
    if _views_using(catalog, meta, col.name):
        raise pg_errors.FeatureNotSupported("cannot alter type of a column used by a view or rule")
    spec = TableSpec(meta.name)
    spec.order, spec.types = [col.name], {col.name: new_type}
    spec.nullable = {col.name: col.nullable}
    collate = action.args.get("collate")
    if isinstance(collate, exp.Expression):
        spec.collations[col.name] = collate.name
    elif col.collation is not None and new_type.name in TEXT_TYPES:
        spec.collations[col.name] = col.collation  # text to text keeps its collation
    taken = {oc.anon for c in meta.columns.values() for oc in c.onions.values()}
    new = build_column(conn, catalog, ctx.config, spec, col.name, set(), {}, taken)
    new.default, new.default_sql, new.default_volatile = (
        col.default,
        col.default_sql,
        col.default_volatile,
    )
    new.sequence, new.sequence_anon, new.identity = col.sequence, col.sequence_anon, col.identity
    new.generated = col.generated
    meta.columns[col.name] = new
    add_onion_columns(conn, meta, new)
    if new.sequence_anon is not None and new.sequence not in catalog.sequences:
        # the column's own sequence, owned by an onion column dropped below: owned by the
        # new one instead (an identity column's takes its new type, as PostgreSQL's does)
        conn.execute(
            sql.SQL("ALTER SEQUENCE {} {} OWNED BY {}.{}").format(
                sql.Identifier(new.sequence_anon),
                sql.SQL(f"AS {new_type.name}" if new.identity is not None else ""),
                sql.Identifier(meta.anon),
                sql.Identifier(next(iter(new.onions.values())).anon),
            )
        )
    targets = [(new, oc) for oc in new.onions.values()]
    _rewrite(conn, meta, targets, lambda row: {col.name: row[0]}, [col])
    drop_onion_columns(conn, meta, col)
    if not new.nullable:
        set_not_null(conn, meta, new)


def reencrypt(
    conn: psycopg.Connection[Any],
    meta: TableMeta,
    col: ColumnMeta,
    onion: Onion,
    layer: str | None = None,
    keys: dict[str, bytes] | None = None,
) -> None:
    """Move one onion of ``col`` to ``layer`` and/or under ``keys``, through the client."""
    oc = col.onions[onion]
    new = OnionColumn(
        onion=oc.onion,
        anon=oc.anon,
        stack=oc.stack,
        layer=layer or oc.layer,
        floor=oc.floor,
        keys={**oc.keys, **(keys or {})},
        ope_bits=oc.ope_bits,
        ope_exact=oc.ope_exact,
        ord_scheme=oc.ord_scheme,
    )
    if new.floor is not None and layer_index(new.stack, new.layer) > layer_index(
        new.stack, new.floor
    ):
        raise LayerFloorViolation(
            f"{meta.name}.{col.name}: the constraint needs its {onion} onion at {new.layer}, "
            f"below its floor {new.floor}"
        )
    if new.layer == oc.layer and new.keys == oc.keys:
        return
    conn.execute(
        sql.SQL("ALTER TABLE {} DROP CONSTRAINT IF EXISTS {}").format(
            sql.Identifier(meta.anon), sql.Identifier("k_" + oc.anon)
        )
    )
    tmp = ColumnMeta(col.name, col.type, col.nullable, {onion: new})
    _rewrite(conn, meta, [(tmp, new)], lambda row: {col.name: row[0]}, [col])
    col.onions[onion] = new
    _tag_check(conn, meta, new)
    conn.execute(
        "UPDATE adaptive.layers SET layer = %s WHERE anon_table = %s AND anon_column = %s",
        (new.layer, meta.anon, new.anon),
    )


def _add_constraint(
    conn: psycopg.Connection[Any],
    catalog: Catalog,
    meta: TableMeta,
    item: exp.Expression,
    name: str | None,
    not_valid: bool = False,
) -> None:
    """ADD CONSTRAINT: a key, a foreign key or a check (``not_valid``: a check or a
    foreign key the rows already there need not meet, as PostgreSQL's NOT VALID)."""
    if not_valid and not isinstance(item, exp.CheckColumnConstraint | exp.ForeignKey):
        raise pg_errors.FeatureNotSupported(
            "UNIQUE and PRIMARY KEY constraints cannot be marked NOT VALID"
        )
    if name is not None and name.lower() in set(meta.constraints.values()) | {
        f.name for f in meta.foreign_keys
    }:
        raise pg_errors.DuplicateObject(
            f'constraint "{name}" for relation "{meta.name}" already exists'
        )
    if isinstance(item, exp.UniqueColumnConstraint | exp.PrimaryKey):
        target = item.this if isinstance(item, exp.UniqueColumnConstraint) else item
        cols = [e.name.lower() for e in target.expressions]
        primary = isinstance(item, exp.PrimaryKey)
        if primary and meta.primary_key:
            raise pg_errors.InvalidTableDefinition(
                f'multiple primary keys for table "{meta.name}" are not allowed'
            )
        for c in cols:
            col = meta.column(c)
            if Onion.EQ in col.onions:
                reencrypt(conn, meta, col, Onion.EQ, layer="DET")
        plain = name or (f"{meta.name}_pkey" if primary else f"{meta.name}_{'_'.join(cols)}_key")
        anon = catalog.anon_index(meta.name, "__key__" + plain)
        if primary:
            for c in cols:
                set_not_null(conn, meta, meta.column(c))
                meta.column(c).nullable = False
        timing = key_timing(item)
        conn.execute(
            sql.SQL("ALTER TABLE {} ADD CONSTRAINT {} {} ({}) {}").format(
                sql.Identifier(meta.anon),
                sql.Identifier(anon),
                sql.SQL("PRIMARY KEY" if primary else "UNIQUE"),
                sql.SQL(", ").join(sql.Identifier(key_column(meta, c).anon) for c in cols),
                sql.SQL(timing),
            )
        )
        meta.constraints[anon] = plain
        if checked_per_statement(timing):
            meta.statement_checked.append(anon)
        if primary:
            meta.primary_key = cols
        else:
            meta.unique_keys[anon] = cols
    elif isinstance(item, exp.ForeignKey):
        spec = TableSpec(meta.name)
        spec.types = {c: col.type for c, col in meta.columns.items()}
        ref = item.args.get("reference")
        if ref is None:
            raise UnsupportedQuery("FOREIGN KEY without REFERENCES", "FOREIGN KEY")
        spec.foreign_keys.append(reference([e.name.lower() for e in item.expressions], ref, name))
        spec.pk = list(meta.primary_key)
        spec.uniques = [(None, u) for u in meta.unique_keys.values()]
        _add_foreign_keys(conn, catalog, meta, spec, not_valid)
    elif isinstance(item, exp.CheckColumnConstraint):
        for column in {c.name.lower() for c in item.this.find_all(exp.Column)}:
            if column in meta.columns and Onion.ORD in meta.column(column).on_demand:
                # the check compares over the Ord onion: built now (ondemand.py)
                designed.build_table(
                    conn, catalog, meta.name, [BuildNeed(meta.name, column, Onion.ORD)]
                )
        before = {
            c: dict((o, oc.layer) for o, oc in col.onions.items())
            for c, col in meta.columns.items()
        }
        parts = checks.add_checks(
            meta,
            [(name, item.this, None)],
            lambda p: catalog.anon_index(meta.name, "__check__" + p),
        )
        for cname, layers in before.items():  # a check may need an onion at a new layer
            col = meta.columns[cname]
            for onion, was in layers.items():
                now = col.onions[onion].layer
                if now != was:
                    col.onions[onion].layer = was
                    reencrypt(conn, meta, col, onion, layer=now)
        added = meta.checks[-len(parts) :] if parts else []
        for part, entry in zip(parts, added, strict=True):
            try:
                conn.execute(
                    sql.SQL("ALTER TABLE {} ADD {}{}").format(
                        sql.Identifier(meta.anon), part, sql.SQL(" NOT VALID" if not_valid else "")
                    )
                )
            except pg_errors.CheckViolation as exc:
                # (a row that violates it: reported in the check's name, which the
                # catalog holds only once the check is added)
                exc.plain_constraint = entry["name"]  # type: ignore[attr-defined]
                raise
    else:
        raise UnsupportedQuery(
            f"ADD CONSTRAINT {item.sql('postgres')} is not supported", "ADD CONSTRAINT"
        )


def _add_foreign_keys(
    conn: psycopg.Connection[Any],
    catalog: Catalog,
    meta: TableMeta,
    spec: TableSpec,
    not_valid: bool = False,
) -> None:
    """Foreign keys on existing columns: each referencing onion re-encrypted under the
    referenced column's keys (the implied group), then the server constraint."""
    shared = foreign_keys.shared_keys(catalog, spec, meta.name)
    for cname, (keys, label) in shared.items():
        if cname in meta.columns:
            _join_key_group(conn, catalog, meta, meta.columns[cname], keys, label)
    fks = foreign_keys.resolve(catalog, spec, meta)
    for fk in fks:
        fk.anon = catalog.anon_index(meta.name, "__fkey__" + fk.name)
    for part in foreign_keys.server_constraints(catalog, meta, fks):
        conn.execute(
            sql.SQL("ALTER TABLE {} ADD {}{}").format(
                sql.Identifier(meta.anon), part, sql.SQL(" NOT VALID" if not_valid else "")
            )
        )
    meta.foreign_keys += fks
    foreign_keys.set_null_trigger(conn, meta)


def _join_key_group(
    conn: psycopg.Connection[Any],
    catalog: Catalog,
    meta: TableMeta,
    col: ColumnMeta,
    keys: dict[str, bytes],
    label: str,
) -> None:
    """``col`` re-encrypted under the keys of the column it now references -- and with
    it every column sharing its keys (the columns referencing it, those its join
    adjustments joined), whose comparisons with it would fail otherwise.  The server's
    foreign keys between those columns are dropped meanwhile and added again, checked,
    once all are re-keyed."""
    eq = col.onions.get(Onion.EQ)
    old = eq.keys.get("DET") if eq is not None else None
    members = [(meta, col)]
    if old is not None and old != keys["DET"]:
        members = [(m.table, m.column) for m in group_of(catalog, Onion.EQ, "DET", old)]
    names = {(m.name, c.name) for m, c in members}
    held = [
        (table, fk)
        for table in catalog.tables.values()
        for fk in table.foreign_keys
        if any((table.name, c) in names for c in fk.columns)
        or any((fk.ref_table, c) in names for c in fk.ref_columns)
    ]
    for table, fk in held:
        conn.execute(
            sql.SQL("ALTER TABLE {} DROP CONSTRAINT {}").format(
                sql.Identifier(table.anon), sql.Identifier(fk.anon)
            )
        )
    ord_key = col.onions[Onion.ORD].keys.get("OPE") if Onion.ORD in col.onions else None
    for table, member in members:
        member.join_group = label
        if Onion.EQ in member.onions:
            reencrypt(conn, table, member, Onion.EQ, layer="DET", keys={"DET": keys["DET"]})
        ord_ = member.onions.get(Onion.ORD)
        if ord_ is not None and "OPE" in keys and ord_.keys.get("OPE") in (ord_key, None):
            reencrypt(conn, table, member, Onion.ORD, keys={"OPE": keys["OPE"]})
    for table, fk in held:
        for part in foreign_keys.server_constraints(catalog, table, [fk]):
            conn.execute(sql.SQL("ALTER TABLE {} ADD {}").format(sql.Identifier(table.anon), part))
    for table in {id(t): t for t, _ in members if t is not meta}.values():
        catalog.write_table(conn, table, new=False)


def _drop_constraint(
    conn: psycopg.Connection[Any], catalog: Catalog, meta: TableMeta, action: exp.Drop
) -> None:
    cascade = bool(action.args.get("cascade"))
    for node in action.args.get("tables") or []:
        name = node.name.lower()
        fk = next((f for f in meta.foreign_keys if f.name == name), None)
        anon = fk.anon if fk else next((a for a, n in meta.constraints.items() if n == name), None)
        if anon is None:
            if action.args.get("exists"):
                continue
            raise pg_errors.UndefinedObject(
                f'constraint "{name}" of relation "{meta.name}" does not exist'
            )
        conn.execute(
            sql.SQL("ALTER TABLE {} DROP CONSTRAINT {} {}").format(
                sql.Identifier(meta.anon),
                sql.Identifier(anon),
                sql.SQL("CASCADE" if cascade else ""),
            )
        )
        if fk is not None:
            meta.foreign_keys.remove(fk)
            foreign_keys.set_null_trigger(conn, meta)
            continue
        del meta.constraints[anon]
        if anon not in meta.unique_keys and all(c["anon"] != anon for c in meta.checks):
            meta.primary_key = []
        meta.unique_keys.pop(anon, None)
        if anon in meta.statement_checked:
            meta.statement_checked.remove(anon)
        meta.checks = [c for c in meta.checks if c["anon"] != anon]
        if cascade:
            for other, ofk in catalog.referencing(meta.name):
                if other is not meta:
                    other.foreign_keys.remove(ofk)
                    catalog.write_table(conn, other, new=False)


__all__ = ["alter_table", "drop_column", "reencrypt"]
