"""DDL through the client: CREATE TABLE, DROP TABLE, CREATE INDEX, DROP INDEX.

A plain column becomes one stored column per onion, named by a keyed hash.  Keys:

* ``PRIMARY KEY`` / ``UNIQUE`` columns keep their Eq onion at DET from the start (the
  provider learns which rows are equal on a key -- nothing, since keys are unique -- and
  the uniqueness constraint is enforced on the DET ciphertexts, which are injective).
* ``CREATE INDEX`` builds a B-tree over the Eq onion columns (serving ``=`` once they
  are at DET) and, when every indexed column has one, a second over the Ord onion columns
  (serving ranges and ORDER BY once they are at OPE).  Peels rewrite values in place, so
  the indexes stay valid.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import psycopg
from psycopg import sql
from sqlglot import exp

from .config import Config
from .encodings import parse_sql_type
from .errors import (
    ConfigError,
    DuplicateTable,
    LayerFloorViolation,
    UndefinedTable,
    UnsupportedQuery,
)
from .keys import new_key
from .metadata import Catalog, ColumnMeta, IndexMeta, OnionColumn, TableMeta
from .onions import TAGS, TOKEN_ONIONS, Onion, layer_index, stack_for
from .schemes import HOM

HOM_GROUP = "__paillier__"


def _storage_type(col: ColumnMeta, oc: OnionColumn) -> str:
    if oc.stack == ("PLAIN",):
        return col.type.sql()
    if oc.onion is Onion.SUM:
        return "numeric"
    if oc.onion in TOKEN_ONIONS:
        return "bytea[]"
    return "bytea"


def _default_onions(col_type: Any, config: Config) -> tuple[Onion, ...]:
    from .encodings import encoding_for

    supported = encoding_for(col_type).onions
    order = [Onion.EQ, Onion.ORD, Onion.SUM, Onion.SEARCH, Onion.SUBSTR]
    out = []
    for o in order:
        if o.value not in supported:
            continue
        if o is Onion.SUM and not config.sum:
            continue
        if o is Onion.SEARCH and not config.search:
            continue
        if o is Onion.SUBSTR and not config.substring:
            continue
        out.append(o)
    return tuple(out)


def _hom_key(conn: psycopg.Connection[Any], catalog: Catalog, bits: int) -> bytes:
    """One Paillier key per database: Paillier is IND-CPA, sharing it leaks nothing."""
    keys = catalog.shared_keys(conn, HOM_GROUP, lambda: {"HOM": HOM.generate(bits).to_bytes()})
    return keys["HOM"]


def _bump_epoch(conn: psycopg.Connection[Any]) -> None:
    conn.execute("UPDATE adaptive.epoch SET value = value + 1 WHERE id = 1")
    conn.execute("NOTIFY adaptive_epoch")


def _constant(node: exp.Expression) -> Any:
    if isinstance(node, exp.Literal):
        return node.this if node.is_string else node.to_py()
    if isinstance(node, exp.Boolean):
        return node.this
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal):
        inner = node.this.to_py()
        if isinstance(inner, int | float | Decimal):
            return -inner
    raise UnsupportedQuery(
        f"DEFAULT {node.sql('postgres')}: only constant defaults are supported", "DEFAULT"
    )


def create_table(
    conn: psycopg.Connection[Any], catalog: Catalog, config: Config, stmt: exp.Create
) -> None:
    schema = stmt.this
    if not isinstance(schema, exp.Schema):
        raise UnsupportedQuery("CREATE TABLE ... AS is not supported", "CREATE TABLE AS")
    name = schema.this.name.lower()
    if catalog.has_table(name):
        if stmt.args.get("exists"):
            return
        raise DuplicateTable(f'relation "{name}" already exists')
    pk: list[str] = []
    uniques: list[list[str]] = []
    coldefs: list[exp.ColumnDef] = []
    for item in schema.expressions:
        if isinstance(item, exp.ColumnDef):
            coldefs.append(item)
        elif isinstance(item, exp.PrimaryKey):
            pk = [e.name.lower() for e in item.expressions]
        elif isinstance(item, exp.UniqueColumnConstraint | exp.Constraint):
            inner = item if isinstance(item, exp.UniqueColumnConstraint) else None
            if inner is None:
                for e in item.expressions:
                    if isinstance(e, exp.UniqueColumnConstraint):
                        inner = e
                    elif isinstance(e, exp.PrimaryKey):
                        pk = [c.name.lower() for c in e.expressions]
            if inner is not None:
                target = inner.this
                cols = target.expressions if isinstance(target, exp.Schema) else []
                uniques.append([c.name.lower() for c in cols])
        else:
            raise UnsupportedQuery(
                f"table element {item.sql('postgres')!r} is not supported", type(item).__name__
            )
    nullable: dict[str, bool] = {}
    defaults: dict[str, Any] = {}
    types: dict[str, Any] = {}
    order: list[str] = []
    for cd in coldefs:
        cname = cd.name.lower()
        order.append(cname)
        if cd.args.get("kind") is None:
            raise UnsupportedQuery(f"column {cname} needs a type", "column without type")
        types[cname] = parse_sql_type(cd.args["kind"].sql("postgres"))
        nullable[cname] = True
        for c in cd.constraints:
            kind = c.kind
            if isinstance(kind, exp.NotNullColumnConstraint):
                nullable[cname] = bool(kind.args.get("allow_null"))
            elif isinstance(kind, exp.PrimaryKeyColumnConstraint):
                pk = [cname]
            elif isinstance(kind, exp.UniqueColumnConstraint):
                uniques.append([cname])
            elif isinstance(kind, exp.DefaultColumnConstraint):
                defaults[cname] = _constant(kind.this)
            else:
                raise UnsupportedQuery(
                    f"column constraint {c.sql('postgres')!r} is not supported",
                    type(kind).__name__,
                )
    for cname in pk:
        if cname not in types:
            raise UnsupportedQuery(f"primary key column {cname} is not a column", "PRIMARY KEY")
        nullable[cname] = False
    keyed = set(pk) | {c for u in uniques for c in u}

    anon_table = catalog.anon_table(name)
    columns: dict[str, ColumnMeta] = {}
    for cname in order:
        ccfg = config.column(name, cname)
        onions = ccfg.onions or _default_onions(types[cname], config)
        col = ColumnMeta(
            cname, types[cname], nullable[cname], {}, defaults.get(cname), ccfg.join_group
        )
        col.joinable = ccfg.joins
        enc = col.encoding
        group_keys = catalog.group_keys(conn, ccfg.join_group) if ccfg.join_group else {}
        for onion in onions:
            if onion is not Onion.SINGLE and onion.value not in enc.onions:
                raise ConfigError(f"{name}.{cname}: type {col.type.sql()} has no {onion} onion")
            stack = stack_for(onion, ccfg.layer)
            start = ccfg.start.get(onion, stack[0])
            floor = ccfg.floor.get(onion)
            if onion is Onion.EQ and cname in keyed:
                start = "DET"  # keys are enforced on DET ciphertexts (documented leakage)
                if floor is not None and layer_index(stack, "DET") > layer_index(stack, floor):
                    raise LayerFloorViolation(
                        f"{name}.{cname}: PRIMARY KEY / UNIQUE needs its Eq onion at DET, "
                        f"below its floor {floor}"
                    )
            if floor is not None and layer_index(stack, floor) < layer_index(stack, start):
                raise ConfigError(f"{name}.{cname}: floor {floor} is above the start {start}")
            keys: dict[str, bytes] = {}
            for layer in stack:
                if layer in ("DET", "OPE") and layer in group_keys:
                    keys[layer] = group_keys[layer]
                elif layer == "HOM":
                    keys[layer] = _hom_key(conn, catalog, config.hom_bits)
                elif layer != "PLAIN":
                    keys[layer] = new_key()
            if onion is Onion.SINGLE and stack[0] == "RND":
                keys.setdefault("RND", new_key())
            col.onions[onion] = OnionColumn(
                onion=onion,
                anon=catalog.anon_column(name, cname, onion),
                stack=stack,
                layer=start,
                floor=floor,
                keys=keys,
                ope_bits=enc.ope_bits,
                ope_exact=enc.ope_exact,
            )
        columns[cname] = col
    meta = TableMeta(name, anon_table, columns, primary_key=pk)

    parts: list[sql.Composable] = []
    for col in columns.values():
        for oc in col.onions.values():
            piece = sql.SQL("{} {}").format(
                sql.Identifier(oc.anon), sql.SQL(_storage_type(col, oc))
            )
            if not col.nullable:
                piece = sql.SQL("{} NOT NULL").format(piece)
            if oc.layer in TAGS and oc.onion in (Onion.EQ, Onion.ORD):
                piece = sql.SQL("{} CONSTRAINT {} CHECK (get_byte({}, 0) = {})").format(
                    piece,
                    sql.Identifier("k_" + oc.anon),
                    sql.Identifier(oc.anon),
                    sql.Literal(TAGS[oc.layer]),
                )
            parts.append(piece)
    if pk:
        parts.append(
            sql.SQL("CONSTRAINT {} PRIMARY KEY ({})").format(
                sql.Identifier(catalog.anon_index(name, "__pkey__")),
                sql.SQL(", ").join(sql.Identifier(_key_column(meta, c).anon) for c in pk),
            )
        )
    for i, u in enumerate(uniques):
        parts.append(
            sql.SQL("CONSTRAINT {} UNIQUE ({})").format(
                sql.Identifier(catalog.anon_index(name, f"__unique{i}__")),
                sql.SQL(", ").join(sql.Identifier(_key_column(meta, c).anon) for c in u),
            )
        )
    conn.execute(
        sql.SQL("CREATE TABLE {} ({})").format(
            sql.Identifier(anon_table), sql.SQL(", ").join(parts)
        )
    )
    catalog.write_table(conn, meta, new=True)
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO adaptive.layers (anon_table, anon_column, onion, layer) "
            "VALUES (%s, %s, %s, %s)",
            [
                (anon_table, oc.anon, oc.onion.value, oc.layer)
                for col in columns.values()
                for oc in col.onions.values()
            ],
        )
    _bump_epoch(conn)
    catalog.tables[name] = meta
    catalog.by_anon[anon_table] = meta


def _key_column(meta: TableMeta, cname: str) -> OnionColumn:
    col = meta.column(cname)
    for onion in (Onion.EQ, Onion.SINGLE):
        oc = col.onions.get(onion)
        if oc is not None and oc.layer in ("DET", "OPE", "PLAIN"):
            return oc
    raise ConfigError(
        f"key column {meta.name}.{cname} needs an Eq onion (kept at DET) or a Single onion "
        "at PLAIN/DET/OPE to enforce uniqueness"
    )


def _dropped(stmt: exp.Drop) -> list[exp.Expression]:
    """The objects a DROP names (sqlglot keeps them under ``tables`` or ``this``)."""
    named = stmt.args.get("tables") or stmt.expressions or [stmt.this]
    return [t for t in named if t is not None]


def drop_table(conn: psycopg.Connection[Any], catalog: Catalog, stmt: exp.Drop) -> None:
    for table in _dropped(stmt):
        name = table.name.lower()
        if not catalog.has_table(name):
            if stmt.args.get("exists"):
                continue
            raise UndefinedTable(f'table "{name}" does not exist')
        meta = catalog.table(name)
        conn.execute(sql.SQL("DROP TABLE {}").format(sql.Identifier(meta.anon)))
        catalog.delete_table(conn, meta)
        _bump_epoch(conn)
        del catalog.tables[name]
        catalog.by_anon.pop(meta.anon, None)


def _rewrite_sealed(conn: psycopg.Connection[Any], catalog: Catalog, meta: TableMeta) -> None:
    catalog.write_table(conn, meta, new=False)
    _bump_epoch(conn)


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
                raise UnsupportedQuery(
                    f"UNIQUE index on {meta.name}.{c}: declare the column UNIQUE in CREATE TABLE "
                    "so its Eq onion starts at DET",
                    "CREATE UNIQUE INDEX",
                )
    if unique:
        targets = [[_key_column(meta, c) for c in cols]]
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
    for i, onion_cols in enumerate(targets):
        conn.execute(
            sql.SQL("CREATE {} INDEX {} ON {} ({})").format(
                sql.SQL("UNIQUE") if unique else sql.SQL(""),
                sql.Identifier(f"{anon}_{i}"),
                sql.Identifier(meta.anon),
                sql.SQL(", ").join(sql.Identifier(o.anon) for o in onion_cols),
            )
        )
    meta.indexes.append(IndexMeta(iname, anon, cols, unique))
    _rewrite_sealed(conn, catalog, meta)


def drop_index(conn: psycopg.Connection[Any], catalog: Catalog, stmt: exp.Drop) -> None:
    named = _dropped(stmt)
    if len(named) != 1:
        raise UnsupportedQuery("DROP INDEX of several indexes at once", "DROP INDEX")
    iname = named[0].name.lower()
    for meta in catalog.tables.values():
        for idx in meta.indexes:
            if idx.name == iname:
                rows = conn.execute(
                    "SELECT indexname FROM pg_indexes WHERE tablename = %s AND indexname LIKE %s",
                    (meta.anon, idx.anon + "_%"),
                ).fetchall()
                for (n,) in rows:
                    conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(n)))
                meta.indexes.remove(idx)
                _rewrite_sealed(conn, catalog, meta)
                return
    if not stmt.args.get("exists"):
        raise UndefinedTable(f'index "{iname}" does not exist')


__all__ = ["create_index", "create_table", "drop_index", "drop_table"]
