"""What a DDL statement declares, read before anything is built.

:func:`parse_table` reads a CREATE TABLE into a :class:`TableSpec` -- its columns, their
types (an enum or a domain resolved against the catalog, domains.py), nullability,
defaults (a constant, a sequence, an expression evaluated at write time), serial and
identity columns and their options, keys, foreign keys, checks and collations --
refused as PostgreSQL refuses it where it is malformed.  ALTER TABLE reads its column
definitions, defaults and references with the same functions.  Nothing here touches the
database: the DDL that builds the table (ddl.py, alter.py) and the advisor (advise.py)
read the spec; :func:`key_column` names the onion a key is enforced on, for the DDL and
for the compiler's ON CONFLICT.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from psycopg import errors as pg_errors
from sqlglot import exp

from ..errors import AdaptiveError, ConfigError, UnsupportedQuery
from ..values.collation import Collation
from ..values.encodings import FOREIGN_TYPE_NAMES, SqlType, parse_sql_type
from . import defaults, domains
from .metadata import OnionColumn, TableMeta
from .onions import Onion


class UndefinedType(AdaptiveError, pg_errors.UndefinedObject):
    """A column type PostgreSQL does not have (42704), refused as PostgreSQL refuses it."""


_SERIAL = {
    exp.DataType.Type.SMALLSERIAL: "smallint",
    exp.DataType.Type.SERIAL: "integer",
    exp.DataType.Type.BIGSERIAL: "bigint",
}
_ACTIONS = ("NO ACTION", "RESTRICT", "CASCADE", "SET NULL", "SET DEFAULT")


@dataclass
class ForeignKeySpec:
    """A declared REFERENCES: the referenced columns are None until resolved against
    the referenced table's key (foreign_keys.py)."""

    name: str | None
    columns: list[str]
    ref_table: str
    ref_columns: list[str] | None
    on_delete: str = "NO ACTION"
    on_update: str = "NO ACTION"


@dataclass
class SequenceSpec:
    """The sequence a serial or identity column draws from, and its options."""

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
    sequences: dict[str, SequenceSpec] = field(default_factory=dict)
    # DEFAULT nextval('name'): the sequence created on its own that the column draws from
    drawn_from: dict[str, str] = field(default_factory=dict)
    # the columns declaring a DEFAULT (a DEFAULT NULL included: it keeps no value)
    given_defaults: set[str] = field(default_factory=set)
    # GENERATED ALWAYS AS (expression) STORED: the expression (compile/generated.py)
    generated: dict[str, exp.Expression] = field(default_factory=dict)
    pk: list[str] = field(default_factory=list)
    pk_name: str | None = None
    uniques: list[tuple[str | None, list[str]]] = field(default_factory=list)
    # DEFERRABLE [INITIALLY DEFERRED] of the primary key ("pk") and of each unique key
    # (its index in ``uniques``), as the server's constraint declares it
    timing: dict[str | int, str] = field(default_factory=dict)
    foreign_keys: list[ForeignKeySpec] = field(default_factory=list)
    checks: list[tuple[str | None, exp.Expression, str | None]] = field(default_factory=list)
    # the table's own storage clauses, carried to the server's table as written (they
    # hold no application value): UNLOGGED, WITH (storage parameters), TABLESPACE
    unlogged: bool = False
    storage_parameters: list[str] = field(default_factory=list)
    tablespace: str | None = None
    # COLLATE "name" of a text column (or the collation an altered column keeps)
    collations: dict[str, str | Collation] = field(default_factory=dict)
    # columns declared with an enum or a domain: the type's anon name, and what the
    # column takes from its domain (domains.apply_domain)
    udts: dict[str, str] = field(default_factory=dict)
    from_domain: dict[str, list[str]] = field(default_factory=dict)


def _names(node: exp.Expression | None) -> list[str]:
    items = node.expressions if node is not None else []
    return [e.name.lower() for e in items]


def reference(cols: list[str], ref: exp.Reference, name: str | None) -> ForeignKeySpec:
    target = ref.this
    table = target.this if isinstance(target, exp.Schema) else target
    ref_cols = _names(target) if isinstance(target, exp.Schema) and target.expressions else None
    fk = ForeignKeySpec(name, cols, table.name.lower(), ref_cols)
    for option in ref.args.get("options") or []:
        words = " ".join(str(option).upper().split())
        for verb in ("ON DELETE ", "ON UPDATE "):
            if words.startswith(verb) and words[len(verb) :] in _ACTIONS:
                setattr(fk, "on_" + verb.split()[1].lower(), words[len(verb) :])
                break
        else:
            raise UnsupportedQuery(f"foreign key option {option} is not supported", "REFERENCES")
    return fk


_TIMINGS: Final = frozenset(
    {"DEFERRABLE", "NOT DEFERRABLE", "INITIALLY DEFERRED", "INITIALLY IMMEDIATE"}
)


def checked_per_statement(timing: str) -> bool:
    """Whether a key of this timing is checked at the end of each statement (DEFERRABLE,
    INITIALLY IMMEDIATE): neither per row nor at commit."""
    return "DEFERRABLE" in timing.split() and "NOT" not in timing and "DEFERRED" not in timing


def key_timing(item: exp.Expression) -> str:
    """A key constraint's ``DEFERRABLE [INITIALLY DEFERRED]`` as the server's constraint
    declares it ("" for none); any other option refused."""
    words = [" ".join(str(o).upper().split()) for o in item.args.get("options") or []]
    for word in words:
        if word not in _TIMINGS:
            raise UnsupportedQuery(f"key constraint option {word}", "constraint option")
    return " ".join(words)


def _table_constraint(spec: TableSpec, item: exp.Expression, name: str | None) -> None:
    if isinstance(item, exp.PrimaryKey):
        if spec.pk:
            raise pg_errors.InvalidTableDefinition(
                f'multiple primary keys for table "{spec.name}" are not allowed'
            )
        spec.pk, spec.pk_name = _names(item), name
        spec.timing["pk"] = key_timing(item)
    elif isinstance(item, exp.UniqueColumnConstraint):
        target = item.this
        spec.timing[len(spec.uniques)] = key_timing(item)
        spec.uniques.append((name, _names(target) if isinstance(target, exp.Schema) else []))
    elif isinstance(item, exp.ForeignKey):
        ref = item.args.get("reference")
        if ref is None:
            raise UnsupportedQuery("FOREIGN KEY without REFERENCES", "FOREIGN KEY")
        spec.foreign_keys.append(reference(_names(item), ref, name))
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
    try:
        return parse_sql_type(kind.sql("postgres"))
    except ConfigError as unknown:
        # (PostgreSQL's own type, which the client has no encoding for: name, point...)
        raise UnsupportedQuery(str(unknown), "column type") from None


# PostgreSQL's other names of the serial types, which the SQL parser reads as user types
_SERIAL_NAMES = {"serial2": "smallint", "serial4": "integer", "serial8": "bigint"}


def _serial_type(kind: exp.Expression) -> str | None:
    """The integer type of a serial column's declared type; None for any other."""
    if not isinstance(kind, exp.DataType):
        return None
    if kind.this in _SERIAL:
        return _SERIAL[kind.this]
    written = kind.args.get("kind")
    if kind.this is exp.DataType.Type.USERDEFINED and isinstance(written, exp.Identifier):
        return _SERIAL_NAMES.get(written.name.lower()) if not written.quoted else None
    return None


# the columns PostgreSQL gives every table's rows: no column of a table may be named so,
# and a statement naming one reads the server's stored rows (refused by the compiler)
SYSTEM_COLUMNS: Final = frozenset({"ctid", "xmin", "xmax", "cmin", "cmax", "tableoid"})


def _one_default(spec: TableSpec, cname: str, given: str) -> None:
    """PostgreSQL's 42601 where a column declares a second default or identity (a
    serial's sequence is its default)."""
    seq = spec.sequences.get(cname)
    has_default = cname in spec.given_defaults or (seq is not None and seq.identity is None)
    where = f'column "{cname}" of table "{spec.name}"'
    if cname in spec.generated:
        if given == "generated":
            raise pg_errors.SyntaxError(f"multiple generation clauses specified for {where}")
        raise pg_errors.SyntaxError(f"both {given} and generation expression specified for {where}")
    if given == "generated":
        if seq is not None and seq.identity is not None:
            raise pg_errors.SyntaxError(
                f"both identity and generation expression specified for {where}"
            )
        if has_default:
            raise pg_errors.SyntaxError(
                f"both default and generation expression specified for {where}"
            )
        return
    if given == "identity" and seq is not None and seq.identity is not None:
        raise pg_errors.SyntaxError(f"multiple identity specifications for {where}")
    if given == "default" and has_default:
        raise pg_errors.SyntaxError(f"multiple default values specified for {where}")
    if (given == "identity" and has_default) or (
        given == "default" and seq is not None and seq.identity is not None
    ):
        raise pg_errors.SyntaxError(f"both default and identity specified for {where}")
    if given == "default":
        spec.given_defaults.add(cname)


def read_column(spec: TableSpec, cd: exp.ColumnDef) -> None:
    cname = cd.name.lower()
    if cname in spec.types:
        raise pg_errors.DuplicateColumn(f'column "{cname}" specified more than once')
    if cname in SYSTEM_COLUMNS:
        raise pg_errors.DuplicateColumn(
            f'column name "{cname}" conflicts with a system column name'
        )
    spec.order.append(cname)
    kind = cd.args.get("kind")
    if kind is None:
        raise UnsupportedQuery(f"column {cname} needs a type", "column without type")
    serial = _serial_type(kind)
    if serial is not None:
        spec.types[cname] = parse_sql_type(serial)
        spec.sequences[cname] = SequenceSpec(None)
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
            key = exp.PrimaryKey(expressions=[cd.this.copy()], options=kind_.args.get("options"))
            _table_constraint(spec, key, cname_constraint)
        elif isinstance(kind_, exp.UniqueColumnConstraint):
            unique = exp.UniqueColumnConstraint(
                this=exp.Schema(expressions=[cd.this.copy()]), options=kind_.args.get("options")
            )
            _table_constraint(spec, unique, cname_constraint)
        elif isinstance(kind_, exp.DefaultColumnConstraint):
            _one_default(spec, cname, "default")
            read_default(spec, cname, kind_.this)
        elif isinstance(kind_, exp.GeneratedAsIdentityColumnConstraint):
            _one_default(spec, cname, "identity")
            spec.sequences[cname] = SequenceSpec(
                "always" if kind_.this else "by default", _sequence_options(kind_)
            )
            spec.nullable[cname] = False
        elif isinstance(kind_, exp.ComputedColumnConstraint):
            _one_default(spec, cname, "generated")
            spec.generated[cname] = kind_.this
        elif isinstance(kind_, exp.Reference):
            spec.foreign_keys.append(reference([cname], kind_, cname_constraint))
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


def numbered_options(
    node: exp.Expression, names: tuple[tuple[str, str], ...], what: str
) -> list[str]:
    """The options of ``node`` that take a number (``START WITH 5``), as SQL of integers
    only; any other value refused naming ``what`` (sequence, identity)."""
    out = []
    for arg, words in names:
        value = node.args.get(arg)
        if value is not None:
            ok, v = defaults.constant(value)
            if not ok or not isinstance(v, int):
                raise UnsupportedQuery(f"{what} option {words} {value.sql()}", what.upper())
            out.append(f"{words} {int(v)}")
    return out


def _sequence_options(node: exp.Expression) -> list[str]:
    out = numbered_options(node, _IDENTITY_OPTIONS, "identity")
    if node.args.get("cycle"):
        out.append("CYCLE")
    return out


def read_default(spec: TableSpec, cname: str, node: exp.Expression) -> None:
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


#: the clauses of CREATE TABLE a table over onions cannot take: partitions and inheritance
#: place rows by a column's value (the server holds ciphertexts, at RND when created)
_REFUSED_PROPERTIES: dict[type[exp.Expression], str] = {
    exp.PartitionedByProperty: "PARTITION BY",
    exp.PartitionedOfProperty: "PARTITION OF",
    exp.InheritsProperty: "INHERITS",
}


def _table_properties(spec: TableSpec, stmt: exp.Create) -> None:
    """The storage clauses of ``stmt`` into ``spec``; the others refused by name (never
    dropped: a table made without its PARTITION BY would take rows PostgreSQL refuses)."""
    props = stmt.args.get("properties")
    for prop in props.expressions if props is not None else []:
        if isinstance(prop, exp.UnloggedProperty):
            spec.unlogged = True
        elif isinstance(prop, exp.TableSpaceProperty):
            spec.tablespace = prop.this.name
        elif type(prop) is exp.Property:  # WITH (fillfactor = 70, ...)
            spec.storage_parameters.append(f"{prop.name} = {prop.args['value'].sql('postgres')}")
        else:
            clause = _REFUSED_PROPERTIES.get(type(prop), prop.sql("postgres"))
            raise UnsupportedQuery(
                f"CREATE TABLE ... {clause} over encrypted columns", f"CREATE TABLE {clause}"
            )


def parse_table(stmt: exp.Create) -> TableSpec:
    schema = stmt.this
    if not isinstance(schema, exp.Schema):
        if stmt.find(exp.PartitionedOfProperty) is not None:
            _table_properties(TableSpec(""), stmt)  # (refused, by name)
        raise UnsupportedQuery("CREATE TABLE ... AS is not supported", "CREATE TABLE AS")
    spec = TableSpec(schema.this.name.lower())
    _table_properties(spec, stmt)
    for item in schema.expressions:
        if isinstance(item, exp.ColumnDef):
            read_column(spec, item)
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


def key_column(meta: TableMeta, cname: str) -> OnionColumn:
    col = meta.column(cname)
    for onion in (Onion.EQ, Onion.SINGLE):
        oc = col.onions.get(onion)
        if oc is not None and oc.layer in ("DET", "OPE", "PLAIN"):
            return oc
    raise ConfigError(
        f"key column {meta.name}.{cname} needs an Eq onion (kept at DET) or a Single onion "
        "at PLAIN/DET/OPE to enforce uniqueness"
    )


def null_tests(meta: TableMeta, node: exp.Expression) -> exp.Expression:
    """A partial index's predicate (or an ON CONFLICT's inferring it) over the server's
    columns: NULL tests of the table's columns -- over any onion of the column, which is
    NULL exactly where the value is (``deleted_at IS NULL``) -- joined by AND, OR and
    NOT.  Any other predicate compares values, which the server holds only as
    ciphertexts: refused (a partial UNIQUE index taken as a whole one would refuse rows
    PostgreSQL stores)."""
    if isinstance(node, exp.And | exp.Or):
        return type(node)(
            this=null_tests(meta, node.this), expression=null_tests(meta, node.expression)
        )
    if isinstance(node, exp.Not | exp.Paren):
        return type(node)(this=null_tests(meta, node.this))
    if (
        isinstance(node, exp.Is)
        and isinstance(node.this, exp.Column)
        and isinstance(node.expression, exp.Null)
    ):
        col = meta.column(node.this.name)
        onion = next(iter(col.onions.values()))
        return exp.Is(
            this=exp.column(onion.anon, quoted=True),
            expression=exp.Null(),
            negate=node.args.get("negate"),
        )
    raise UnsupportedQuery(
        f"a partial index's predicate other than NULL tests of columns: {node.sql('postgres')}",
        "partial index predicate",
    )


def dropped_objects(stmt: exp.Drop) -> list[exp.Expression]:
    """The objects a DROP names (sqlglot keeps them under ``tables`` or ``this``)."""
    named = stmt.args.get("tables") or stmt.expressions or [stmt.this]
    return [t for t in named if t is not None]


__all__ = [
    "SYSTEM_COLUMNS",
    "ForeignKeySpec",
    "SequenceSpec",
    "TableSpec",
    "UndefinedType",
    "checked_per_statement",
    "column_type",
    "dropped_objects",
    "key_column",
    "key_timing",
    "null_tests",
    "numbered_options",
    "parse_table",
    "read_column",
    "read_default",
    "reference",
]
