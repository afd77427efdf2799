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

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql
from sqlglot import exp

from . import (
    checks,
    defaults,
    domains,
    foreign_keys,
    precomputed,
    range_indexes,
    recipes,
    sequence_objects,
    typeddl,
    views,
)
from .collation import Collation, column_collation
from .config import Config
from .defaults import Runtime
from .encodings import FOREIGN_TYPE_NAMES, SqlType, parse_sql_type
from .errors import (
    AdaptiveError,
    ConfigError,
    DuplicateTable,
    LayerFloorViolation,
    StaleMetadata,
    UndefinedTable,
    UnsupportedQuery,
)
from .keys import new_key
from .metadata import Catalog, ColumnMeta, IndexMeta, OnionColumn, TableMeta
from .onions import TOKEN_ONIONS, Onion, layer_index, stack_for
from .schemes import HOM

HOM_GROUP = "__paillier__"


class UndefinedType(AdaptiveError, pg_errors.UndefinedObject):
    """A column type PostgreSQL does not have (42704), refused as PostgreSQL refuses it."""


def _storage_type(col: ColumnMeta, oc: OnionColumn) -> str:
    if oc.stack == ("PLAIN",):  # in the clear: the server orders it, by its collation
        collate = col.collation and col.type.name in ("text", "varchar", "char")
        return col.type.sql() + (col.collation.clause() if collate and col.collation else "")
    if oc.onion is Onion.SUM:
        return "int8[]" if oc.stack == ("ASHE",) else "numeric"
    if oc.onion in TOKEN_ONIONS:
        return "bytea[]"
    return "bytea"


def _default_onions(col_type: Any, config: Config) -> tuple[Onion, ...]:
    from .encodings import encoding_for

    encoding = encoding_for(col_type)
    supported = encoding.onions
    order = [Onion.EQ, Onion.ORD, Onion.SUM, Onion.SEARCH, Onion.SUBSTR]
    out = []
    storable = getattr(recipes, "EXACT_ONIONS", False)
    # (a type with no other onion -- json -- keeps its Exact one whatever the setting:
    # it is where the value is)
    only_exact = not (supported & {o.value for o in order})
    if encoding.exact_display and (config.exact is not False or only_exact):
        if config.exact and not storable:
            raise ConfigError(
                f"exact = true: this client cannot store an Exact onion for {col_type.sql()}"
            )
        if storable:
            out.append(Onion.EXACT)
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


_SERIAL = {
    exp.DataType.Type.SMALLSERIAL: "smallint",
    exp.DataType.Type.SERIAL: "integer",
    exp.DataType.Type.BIGSERIAL: "bigint",
}
_ACTIONS = ("NO ACTION", "RESTRICT", "CASCADE", "SET NULL", "SET DEFAULT")


@dataclass
class _ForeignKey:
    name: str | None
    columns: list[str]
    ref_table: str
    ref_columns: list[str] | None
    on_delete: str = "NO ACTION"
    on_update: str = "NO ACTION"


@dataclass
class _Sequence:
    identity: str | None  # None: serial; "always" / "by default": an identity column
    options: list[str] = field(default_factory=list)  # START WITH 10, INCREMENT BY 2, ...


@dataclass
class TableSpec:
    """What a CREATE TABLE declares, gathered before anything is built."""

    name: str
    order: list[str] = field(default_factory=list)
    types: dict[str, Any] = field(default_factory=dict)
    nullable: dict[str, bool] = field(default_factory=dict)
    defaults: dict[str, Any] = field(default_factory=dict)
    runtime: dict[str, tuple[str, bool]] = field(default_factory=dict)
    sequences: dict[str, _Sequence] = field(default_factory=dict)
    # DEFAULT nextval('name'): the sequence created on its own that the column draws from
    drawn_from: dict[str, str] = field(default_factory=dict)
    pk: list[str] = field(default_factory=list)
    pk_name: str | None = None
    uniques: list[tuple[str | None, list[str]]] = field(default_factory=list)
    foreign_keys: list[_ForeignKey] = field(default_factory=list)
    checks: list[tuple[str | None, exp.Expression, str | None]] = field(default_factory=list)
    # COLLATE "name" of a text column (or the collation an altered column keeps)
    collations: dict[str, str | Collation] = field(default_factory=dict)
    # columns declared with an enum or a domain: the type's anon name, and what the
    # column takes from its domain (domains.apply_domain)
    udts: dict[str, str] = field(default_factory=dict)
    from_domain: dict[str, list[str]] = field(default_factory=dict)


def _names(node: exp.Expression | None) -> list[str]:
    items = node.expressions if node is not None else []
    return [e.name.lower() for e in items]


def _reference(cols: list[str], ref: exp.Reference, name: str | None) -> _ForeignKey:
    target = ref.this
    table = target.this if isinstance(target, exp.Schema) else target
    ref_cols = _names(target) if isinstance(target, exp.Schema) and target.expressions else None
    fk = _ForeignKey(name, cols, table.name.lower(), ref_cols)
    for option in ref.args.get("options") or []:
        words = " ".join(str(option).upper().split())
        for verb in ("ON DELETE ", "ON UPDATE "):
            if words.startswith(verb) and words[len(verb) :] in _ACTIONS:
                setattr(fk, "on_" + verb.split()[1].lower(), words[len(verb) :])
                break
        else:
            raise UnsupportedQuery(f"foreign key option {option} is not supported", "REFERENCES")
    return fk


def _table_constraint(spec: TableSpec, item: exp.Expression, name: str | None) -> None:
    if isinstance(item, exp.PrimaryKey):
        if spec.pk:
            raise pg_errors.InvalidTableDefinition(
                f'multiple primary keys for table "{spec.name}" are not allowed'
            )
        spec.pk, spec.pk_name = _names(item), name
    elif isinstance(item, exp.UniqueColumnConstraint):
        target = item.this
        spec.uniques.append((name, _names(target) if isinstance(target, exp.Schema) else []))
    elif isinstance(item, exp.ForeignKey):
        ref = item.args.get("reference")
        if ref is None:
            raise UnsupportedQuery("FOREIGN KEY without REFERENCES", "FOREIGN KEY")
        spec.foreign_keys.append(_reference(_names(item), ref, name))
    elif isinstance(item, exp.CheckColumnConstraint):
        spec.checks.append((name, item.this, None))
    else:
        raise UnsupportedQuery(
            f"table element {item.sql('postgres')!r} is not supported", type(item).__name__
        )


def column_type(kind: exp.Expression) -> SqlType:
    """The column type a DDL statement declares, refused as PostgreSQL refuses it where
    PostgreSQL has no such type (42704; the SQL parser maps some other dialects' names,
    ``tinyint``, ``datetime``, to PostgreSQL's), or by name where the client has no
    encoding for it (``ConfigError``)."""
    named = isinstance(kind, exp.DataType) and isinstance(kind.this, exp.DataType.Type)
    if named and kind.this.value.lower() in FOREIGN_TYPE_NAMES:
        raise UndefinedType(f'type "{kind.this.value.lower()}" does not exist')
    return parse_sql_type(kind.sql("postgres"))


def _column(spec: TableSpec, cd: exp.ColumnDef) -> None:
    cname = cd.name.lower()
    if cname in spec.types:
        raise pg_errors.DuplicateColumn(f'column "{cname}" specified more than once')
    spec.order.append(cname)
    kind = cd.args.get("kind")
    if kind is None:
        raise UnsupportedQuery(f"column {cname} needs a type", "column without type")
    if isinstance(kind, exp.DataType) and kind.this in _SERIAL:
        spec.types[cname] = parse_sql_type(_SERIAL[kind.this])
        spec.sequences[cname] = _Sequence(None)
        spec.nullable[cname] = False
    elif (user := domains.declared(kind)) is not None:
        spec.udts[cname], spec.types[cname] = user
        spec.nullable[cname] = True
    else:
        spec.types[cname] = column_type(kind)
        spec.nullable[cname] = True
    for c in cd.constraints:
        kind_ = c.kind
        cname_constraint = c.this.name if isinstance(c.this, exp.Identifier) else None
        if isinstance(kind_, exp.NotNullColumnConstraint):
            spec.nullable[cname] = bool(kind_.args.get("allow_null"))
        elif isinstance(kind_, exp.PrimaryKeyColumnConstraint):
            _table_constraint(spec, exp.PrimaryKey(expressions=[cd.this.copy()]), cname_constraint)
        elif isinstance(kind_, exp.UniqueColumnConstraint):
            spec.uniques.append((cname_constraint, [cname]))
        elif isinstance(kind_, exp.DefaultColumnConstraint):
            _default(spec, cname, kind_.this)
        elif isinstance(kind_, exp.GeneratedAsIdentityColumnConstraint):
            spec.sequences[cname] = _Sequence(
                "always" if kind_.this else "by default", _sequence_options(kind_)
            )
            spec.nullable[cname] = False
        elif isinstance(kind_, exp.Reference):
            spec.foreign_keys.append(_reference([cname], kind_, cname_constraint))
        elif isinstance(kind_, exp.CheckColumnConstraint):
            spec.checks.append((cname_constraint, kind_.this, cname))
        elif isinstance(kind_, exp.CollateColumnConstraint):
            spec.collations[cname] = kind_.this.name
        else:
            raise UnsupportedQuery(
                f"column constraint {c.sql('postgres')!r} is not supported",
                type(kind_).__name__,
            )
    if cname in spec.udts:
        domains.apply_domain(spec, cname)


_IDENTITY_OPTIONS = (
    ("start", "START WITH"),
    ("increment", "INCREMENT BY"),
    ("minvalue", "MINVALUE"),
    ("maxvalue", "MAXVALUE"),
)


def _sequence_options(node: exp.Expression) -> list[str]:
    out = sequence_objects.numbered_options(node, _IDENTITY_OPTIONS, "identity")
    if node.args.get("cycle"):
        out.append("CYCLE")
    return out


def _default(spec: TableSpec, cname: str, node: exp.Expression) -> None:
    ok, value = defaults.constant(node)
    if ok:
        if value is not None:
            spec.defaults[cname] = value
        return
    drawn_from = defaults.sequence_named(node)
    if drawn_from is not None:  # a sequence created on its own (sequence_objects.py)
        spec.drawn_from[cname] = drawn_from
        return
    spec.runtime[cname] = defaults.runtime_expression(node, f"{spec.name}.{cname}")


def parse_table(stmt: exp.Create) -> TableSpec:
    schema = stmt.this
    if not isinstance(schema, exp.Schema):
        raise UnsupportedQuery("CREATE TABLE ... AS is not supported", "CREATE TABLE AS")
    spec = TableSpec(schema.this.name.lower())
    for item in schema.expressions:
        if isinstance(item, exp.ColumnDef):
            _column(spec, item)
        elif isinstance(item, exp.Constraint):
            for inner in item.expressions:
                _table_constraint(spec, inner, item.name)
        else:
            _table_constraint(spec, item, None)
    for cname in spec.pk:
        if cname not in spec.types:
            raise pg_errors.UndefinedColumn(f'column "{cname}" named in key does not exist')
        spec.nullable[cname] = False
    for _, cols in spec.uniques:
        for cname in cols:
            if cname not in spec.types:
                raise pg_errors.UndefinedColumn(f'column "{cname}" named in key does not exist')
    for fk in spec.foreign_keys:
        for cname in fk.columns:
            if cname not in spec.types:
                raise pg_errors.UndefinedColumn(
                    f'column "{cname}" referenced in foreign key constraint does not exist'
                )
    return spec


def fresh_name(taken: set[str], make: Callable[..., str], *parts: str) -> str:
    """An anonymized name not in use: the keyed hash of ``parts``, salted with a counter
    when a renamed object still holds it."""
    name = make(*parts)
    n = 1
    while name in taken:
        name = make(*parts, str(n))
        n += 1
    return name


def build_column(
    conn: psycopg.Connection[Any],
    catalog: Catalog,
    config: Config,
    spec: TableSpec,
    cname: str,
    keyed: set[str],
    shared: dict[str, tuple[dict[str, bytes], str]],
    taken: set[str] | None = None,
) -> ColumnMeta:
    """One declared column, with its onions, layers and keys (nothing written yet).
    ``taken``: the table's onion column names in use (a renamed column keeps its own)."""
    name = spec.name
    taken = taken or set()
    ccfg = config.column(name, cname)
    onions = ccfg.onions or _default_onions(spec.types[cname], config)
    onions = foreign_keys.onions_kept(spec, cname, onions)
    col = ColumnMeta(
        cname,
        spec.types[cname],
        spec.nullable[cname],
        {},
        spec.defaults.get(cname),
        ccfg.join_group,
    )
    col.joinable = ccfg.joins
    col.udt, col.from_domain = spec.udts.get(cname), list(spec.from_domain.get(cname, []))
    if cname in spec.runtime:
        col.default_sql, col.default_volatile = spec.runtime[cname]
    collation = spec.collations.get(cname)
    col.collation = (
        collation
        if isinstance(collation, Collation)
        else column_collation(conn, (col.type.element or col.type).name, collation)
    )
    enc = col.encoding
    group_keys = catalog.group_keys(conn, ccfg.join_group) if ccfg.join_group else {}
    if cname in shared:
        if ccfg.join_group:
            raise ConfigError(
                f"{name}.{cname}: a foreign key column shares the keys of the column it "
                f"references; it cannot also be in join group {ccfg.join_group}"
            )
        group_keys, col.join_group = shared[cname]
    # onions built on first use (ondemand.py): not those sharing keys with other columns
    # (a join group's, a foreign key's), nor one the configuration lists explicitly
    # without asking for that
    lazy = ccfg.on_demand if ccfg.on_demand is not None else config.on_demand
    if ccfg.onions is not None and ccfg.on_demand is None:
        lazy = ()
    # (nor one a CHECK constraint compares: it is enforced over the onion from the start)
    checked = {c.name.lower() for _, e, _ in spec.checks for c in e.find_all(exp.Column)}
    if cname in shared or ccfg.join_group or cname in checked:
        lazy = ()
    for onion in onions:
        if onion not in (Onion.SINGLE, Onion.EXACT) and onion.value not in enc.onions:
            raise ConfigError(f"{name}.{cname}: type {col.type.sql()} has no {onion} onion")
        stack = stack_for(onion, ccfg.layer, config.sum_layer)
        start = ccfg.start.get(onion, stack[0])
        floor = ccfg.floor.get(onion)
        if onion is Onion.EQ and (cname in keyed or cname in shared):
            start = "DET"  # keys are enforced on DET ciphertexts (documented leakage)
            if floor is not None and layer_index(stack, "DET") > layer_index(stack, floor):
                raise LayerFloorViolation(
                    f"{name}.{cname}: PRIMARY KEY / UNIQUE / REFERENCES needs its Eq onion "
                    f"at DET, below its floor {floor}"
                )
        if floor is not None and layer_index(stack, floor) < layer_index(stack, start):
            raise ConfigError(f"{name}.{cname}: floor {floor} is above the start {start}")
        if onion in lazy and len(onions) > 1:
            col.on_demand[onion] = {"start": start, "floor": floor}
            continue
        anon = onion_anon(catalog, name, cname, onion, taken)
        col.onions[onion] = new_onion_column(
            conn, catalog, config.hom_bits, col, onion, stack, start, floor, anon, group_keys
        )
    if cname in spec.sequences:
        seq = spec.sequences[cname]
        col.sequence = f"{name}_{cname}_seq"
        col.identity = seq.identity
        # a name of its own for each sequence ever created: the blocks of values other
        # connections drew from a dropped table's sequence never match a new table's
        col.sequence_anon = catalog.root.anonymize("sequence", name, cname, new_key(8).hex())
    elif cname in spec.drawn_from:
        drawn = sequence_objects.named(catalog, spec.drawn_from[cname])
        col.sequence, col.sequence_anon = drawn.name, drawn.anon
    return col


def onion_anon(catalog: Catalog, table: str, column: str, onion: Onion, taken: set[str]) -> str:
    """The anonymized name of a column's onion, salted while a renamed column holds it."""
    anon, n = catalog.anon_column(table, column, onion), 1
    while anon in taken:
        anon, n = catalog.anon_column(table, f"{column}\x1f{n}", onion), n + 1
    return anon


def new_onion_column(
    conn: psycopg.Connection[Any],
    catalog: Catalog,
    hom_bits: int,
    col: ColumnMeta,
    onion: Onion,
    stack: tuple[str, ...],
    start: str,
    floor: str | None,
    anon: str,
    group_keys: dict[str, bytes],
) -> OnionColumn:
    """One onion of ``col`` under fresh keys (a join group's DET and OPE keys if it has
    one), nothing written yet."""
    keys: dict[str, bytes] = {}
    for layer in stack:
        if layer in ("DET", "OPE") and layer in group_keys:
            keys[layer] = group_keys[layer]
        elif layer == "HOM":
            keys[layer] = _hom_key(conn, catalog, hom_bits)
        elif layer != "PLAIN":
            keys[layer] = new_key()
    if onion is Onion.SINGLE and stack[0] == "RND":
        keys.setdefault("RND", new_key())
    enc = col.encoding
    return OnionColumn(
        onion=onion,
        anon=anon,
        stack=stack,
        layer=start,
        floor=floor,
        keys=keys,
        ope_bits=enc.ope_bits,
        ope_exact=enc.ope_exact,
    )


def create_sequence(
    conn: psycopg.Connection[Any],
    meta: TableMeta,
    col: ColumnMeta,
    seq: _Sequence,
    runtime: Runtime | None = None,
) -> None:
    """The server sequence of a serial or identity column, owned by the column (dropped
    with it, restarted by TRUNCATE ... RESTART IDENTITY)."""
    assert col.sequence_anon is not None
    conn.execute(
        sql.SQL("CREATE SEQUENCE {} AS {} {} OWNED BY {}.{}").format(
            sql.Identifier(col.sequence_anon),
            sql.SQL(col.type.sql()),
            sql.SQL(" ".join(seq.options)),
            sql.Identifier(meta.anon),
            sql.Identifier(next(iter(col.onions.values())).anon),
        )
    )
    if runtime is not None:  # (a name freed by a dropped table may be reused)
        runtime.reset(col.sequence_anon)


def create_table(
    conn: psycopg.Connection[Any],
    catalog: Catalog,
    config: Config,
    stmt: exp.Create,
    runtime: Runtime | None = None,
) -> None:
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
    meta = TableMeta(name, anon_table, columns, primary_key=spec.pk)
    meta.precomputed = precomputed.build_columns(
        config, spec, columns, lambda p: build_column(conn, catalog, config, spec, p, set(), {})
    )
    if spec.pk:
        meta.constraints[catalog.anon_index(name, "__pkey__")] = spec.pk_name or f"{name}_pkey"
    for i, (uname, cols) in enumerate(spec.uniques):
        anon = catalog.anon_index(name, f"__unique{i}__")
        meta.unique_keys[anon] = list(cols)
        meta.constraints[anon] = uname or f"{name}_{'_'.join(cols)}_key"
    meta.foreign_keys = foreign_keys.resolve(catalog, spec, meta)
    check_parts = checks.add_checks(  # (before the columns: a check sets start layers)
        meta, spec.checks, lambda plain: catalog.anon_index(name, "__check__" + plain)
    )
    parts: list[sql.Composable] = []
    for col in meta.stored_columns:
        for oc in col.onions.values():
            piece = sql.SQL("{} {}").format(
                sql.Identifier(oc.anon), sql.SQL(_storage_type(col, oc))
            )
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
            sql.SQL("CONSTRAINT {} PRIMARY KEY ({})").format(
                sql.Identifier(catalog.anon_index(name, "__pkey__")),
                sql.SQL(", ").join(sql.Identifier(_key_column(meta, c).anon) for c in spec.pk),
            )
        )
    for anon, u in meta.unique_keys.items():
        parts.append(
            sql.SQL("CONSTRAINT {} UNIQUE ({})").format(
                sql.Identifier(anon),
                sql.SQL(", ").join(sql.Identifier(_key_column(meta, c).anon) for c in u),
            )
        )
    parts += foreign_keys.server_constraints(catalog, meta, meta.foreign_keys)
    parts += check_parts
    conn.execute(
        sql.SQL("CREATE TABLE {} ({})").format(
            sql.Identifier(anon_table), sql.SQL(", ").join(parts)
        )
    )
    for col in columns.values():
        if col.name in spec.sequences:
            create_sequence(conn, meta, col, spec.sequences[col.name], runtime)
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


def drop_table(
    conn: psycopg.Connection[Any], catalog: Catalog, stmt: exp.Drop, runtime: Runtime
) -> None:
    names = []
    for table in _dropped(stmt):
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
    for other in catalog.tables.values():  # their foreign keys into the dropped tables
        kept = [fk for fk in other.foreign_keys if fk.ref_table not in names]
        if len(kept) != len(other.foreign_keys):
            other.foreign_keys = kept
            foreign_keys.set_null_trigger(conn, other)
            catalog.write_table(conn, other, new=False)
    _bump_epoch(conn)


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


def statement(
    conn: psycopg.Connection[Any],
    catalog: Catalog,
    config: Config,
    runtime: Runtime,
    stmt: exp.Expression,
) -> Callable[[], None]:
    """The DDL statement ``stmt``, as a function to run in a transaction (type names
    resolved against the catalog's enums and domains)."""
    with domains.using(catalog):  # (statements read when made: CREATE DOMAIN)
        run = _statement(conn, catalog, config, runtime, stmt)

    def in_context() -> None:
        with domains.using(catalog):
            run()

    return in_context


def _statement(
    conn: psycopg.Connection[Any],
    catalog: Catalog,
    config: Config,
    runtime: Runtime,
    stmt: exp.Expression,
) -> Callable[[], None]:
    from . import alter

    if typeddl.is_type_statement(stmt):
        return typeddl.statement(conn, catalog, stmt)

    kind = (stmt.args.get("kind") or "").upper()
    if isinstance(stmt, exp.Create) and kind == "TABLE":
        return lambda: create_table(conn, catalog, config, stmt, runtime)
    if isinstance(stmt, exp.Create) and kind == "INDEX":
        return lambda: create_index(conn, catalog, stmt)
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
        return lambda: drop_index(conn, catalog, stmt)
    if isinstance(stmt, exp.Drop) and kind == "VIEW":
        return lambda: views.drop_view(
            conn,
            catalog,
            [t.name.lower() for t in _dropped(stmt)],
            exists=bool(stmt.args.get("exists")),
            cascade=bool(stmt.args.get("cascade")),
        )
    if isinstance(stmt, exp.TruncateTable):
        return lambda: truncate(conn, catalog, stmt, runtime)
    if isinstance(stmt, exp.Alter) and kind == "TABLE":
        return lambda: alter.alter_table(conn, catalog, config, runtime, stmt)
    raise UnsupportedQuery(
        f"{type(stmt).__name__} {kind} is not supported", f"{type(stmt).__name__} {kind}"
    )


def _output_names(
    conn: psycopg.Connection[Any], catalog: Catalog, query: exp.Expression
) -> list[str]:
    """A view's column names, as its query compiles; an onion the query needs that its
    column builds on first use is built now (ondemand.py), in the DDL's transaction."""
    from . import ondemand
    from .needs import BuildRequired
    from .rewrite.statements import compile_statement

    for _ in range(8):
        try:
            return [o.name for o in compile_statement(catalog, query).outputs]
        except BuildRequired as required:
            ondemand.build(conn, catalog, required.need)
    raise StaleMetadata("the view's columns kept changing while it was created")


def _rewrite_sealed(conn: psycopg.Connection[Any], catalog: Catalog, meta: TableMeta) -> None:
    range_indexes.sync(conn, catalog, meta)
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
                # uniqueness is enforced over DET ciphertexts: the onion goes to DET now,
                # as ADD CONSTRAINT ... UNIQUE takes it (alter.py)
                from . import alter

                alter.reencrypt(conn, meta, meta.column(c), Onion.EQ, layer="DET")
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


__all__ = [
    "create_index",
    "create_table",
    "drop_index",
    "drop_table",
    "parse_table",
    "statement",
    "truncate",
]
