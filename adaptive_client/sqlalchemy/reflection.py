"""Reflection of the application's schema from the sealed catalog.

SQLAlchemy's PostgreSQL dialect reflects by querying ``pg_catalog``, which on an encrypted
database holds only anonymized tables of ciphertext columns.  Here the same answers come
from the client's decrypted catalog (:class:`~adaptive_client.catalog.metadata.Catalog`):
plain table and column names, the declared SQL types, nullability, constant defaults,
primary keys and indexes.  Unique and foreign-key constraints live only on the server (over
the anonymized columns); they are read from ``pg_constraint`` and mapped back to plain
names through the catalog."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from psycopg import sql
from sqlalchemy import types as sqltypes
from sqlalchemy.dialects.postgresql import (
    ARRAY,
    BIT,
    BYTEA,
    CIDR,
    DOUBLE_PRECISION,
    ENUM,
    INET,
    INTERVAL,
    JSON,
    JSONB,
    MACADDR,
    MACADDR8,
    MONEY,
    REAL,
    TIME,
    TIMESTAMP,
    UUID,
)

from ..catalog.defaults import printed_default
from ..catalog.metadata import Catalog, TableMeta
from ..catalog.usertypes import EnumType
from ..dbapi.connection import Connection
from ..syntax.names import shown
from ..values.encodings import SqlType

_ACTIONS = {"a": None, "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT"}


# PostgreSQL's dialect's reflected type of each column type, by the type's name
_SA_TYPES: dict[str, Callable[[SqlType], sqltypes.TypeEngine[Any]]] = {
    "smallint": lambda t: sqltypes.SMALLINT(),
    "integer": lambda t: sqltypes.INTEGER(),
    "bigint": lambda t: sqltypes.BIGINT(),
    "numeric": lambda t: sqltypes.NUMERIC(
        t.precision, t.scale if t.precision is not None else None
    ),
    "real": lambda t: REAL(),
    "double precision": lambda t: DOUBLE_PRECISION(precision=53),
    "varchar": lambda t: sqltypes.VARCHAR(t.precision),
    "text": lambda t: sqltypes.TEXT(),
    "char": lambda t: sqltypes.CHAR(t.precision),
    "bpchar": lambda t: sqltypes.CHAR(t.precision),
    "date": lambda t: sqltypes.DATE(),
    "timestamp": lambda t: TIMESTAMP(timezone=False, precision=t.precision),
    "timestamptz": lambda t: TIMESTAMP(timezone=True, precision=t.precision),
    "time": lambda t: TIME(timezone=False, precision=t.precision),
    "timetz": lambda t: TIME(timezone=True, precision=t.precision),
    "interval": lambda t: INTERVAL(precision=t.precision, fields=t.fields),
    "boolean": lambda t: sqltypes.BOOLEAN(),
    "uuid": lambda t: UUID(),
    "bytea": lambda t: BYTEA(),
    "json": lambda t: JSON(),
    "jsonb": lambda t: JSONB(),
    "inet": lambda t: INET(),
    "cidr": lambda t: CIDR(),
    "macaddr": lambda t: MACADDR(),
    "macaddr8": lambda t: MACADDR8(),
    "bit": lambda t: BIT(t.precision),
    "varbit": lambda t: BIT(t.precision, varying=True),
    "money": lambda t: MONEY(),
}


def sa_type(t: SqlType) -> sqltypes.TypeEngine[Any]:
    """The SQLAlchemy type of a column as PostgreSQL's own reflection would give it."""
    if isinstance(t, EnumType):
        return ENUM(*(label for label, _ in sorted(t.labels, key=lambda lp: lp[1])), name=t.name)
    if t.element is not None:
        return ARRAY(sa_type(t.element))
    make = _SA_TYPES.get(t.name)
    return make(t) if make is not None else sqltypes.NULLTYPE


def catalog_of(dbapi_conn: Any) -> Catalog:
    """The catalog of an adaptive connection (sync, async or pooled), fresh where the
    connection is between transactions (other clients' DDL is notified)."""
    conn = sync_connection(dbapi_conn)
    conn.refresh_catalog()
    if not conn.in_transaction():
        # the committed catalog, even where another client's DDL notification is still
        # on its way (has_table decides what create_all creates)
        conn.catalog.refresh(conn.control)
    return conn.catalog


def sync_connection(dbapi_conn: Any) -> Connection:
    """The synchronous adaptive connection of a DB-API connection (sync, async or
    pooled, as SQLAlchemy hands it)."""
    conn = getattr(dbapi_conn, "driver_connection", dbapi_conn)
    conn = getattr(conn, "sync_connection", conn)  # AsyncConnection
    if not isinstance(conn, Connection):
        raise TypeError(f"not an adaptive_client connection: {type(conn).__name__}")
    return conn


def table_names(catalog: Catalog) -> list[str]:
    return sorted(catalog.tables)


def columns(table: TableMeta) -> list[dict[str, Any]]:
    out = []
    for col in table.columns.values():
        # serial / identity columns and server-evaluated defaults, where the catalog
        # records them (attributes read by name: older catalogs have none)
        sequence = getattr(col, "sequence", None)
        identity = getattr(col, "identity", None)
        default_sql = getattr(col, "default_sql", None)
        entry: dict[str, Any] = {
            "name": col.name,
            "type": sa_type(col.type),
            "nullable": col.nullable,
            "default": printed_default(col.default),
            "autoincrement": False,
        }
        if identity:
            entry["default"] = None
            entry["autoincrement"] = True
            entry["identity"] = {"always": identity == "always", "start": 1, "increment": 1}
        elif sequence:
            entry["default"] = f"nextval('{sequence}'::regclass)"
            entry["autoincrement"] = True
        elif default_sql:
            entry["default"] = default_sql
        if col.generated is not None:  # (a stored generated column, as PostgreSQL reports it)
            entry["computed"] = {"sqltext": shown(col.generated), "persisted": True}
        out.append(entry)
    return out


def pk_constraint(table: TableMeta) -> dict[str, Any]:
    return {"constrained_columns": list(table.primary_key), "name": None}


def _server_constraints(conn: Connection, table: TableMeta) -> list[tuple[Any, ...]]:
    """Unique and foreign-key constraints of the anonymized table, from the server, read
    in the application's transaction (it sees the application's own uncommitted DDL)."""
    query = sql.SQL(
        "SELECT con.contype, con.conname, "
        "ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(n, i) "
        "JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.i), "
        "fr.relname::text, "
        "ARRAY(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(n, i) "
        "JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.i), "
        "con.confupdtype::text, con.confdeltype::text "
        "FROM pg_constraint con LEFT JOIN pg_class fr ON fr.oid = con.confrelid "
        "WHERE con.conrelid = to_regclass({}) AND con.contype IN ('u', 'f') "
        "ORDER BY con.oid"
    ).format(sql.Literal(sql.Identifier(table.anon).as_string(conn.pg)))
    with conn.pg.cursor() as cur:
        cur.execute(query)
        return cur.fetchall()


def _plain_columns(table: TableMeta, anon_cols: list[str]) -> list[str] | None:
    out = []
    for anon in anon_cols:
        hit = table.onion_column(anon)
        if hit is None:
            return None
        out.append(hit[0].name)
    return out


def unique_constraints(conn: Connection, table: TableMeta) -> list[dict[str, Any]]:
    recorded = getattr(table, "unique_keys", None)
    if recorded is not None:
        names = getattr(table, "constraints", {})
        return [
            {"name": names.get(anon), "column_names": list(cols)} for anon, cols in recorded.items()
        ]
    out = []
    for contype, _, cols, *_ in _server_constraints(conn, table):
        if contype != "u":
            continue
        plain = _plain_columns(table, cols)
        if plain is not None:
            out.append({"name": None, "column_names": plain})
    return out


def foreign_keys(conn: Connection, catalog: Catalog, table: TableMeta) -> list[dict[str, Any]]:
    recorded = getattr(table, "foreign_keys", None)
    if recorded is not None:
        out = []
        for fk in recorded:
            options = {}
            if fk.on_update.upper() != "NO ACTION":
                options["onupdate"] = fk.on_update.upper()
            if fk.on_delete.upper() != "NO ACTION":
                options["ondelete"] = fk.on_delete.upper()
            out.append(
                {
                    "name": fk.name,
                    "constrained_columns": list(fk.columns),
                    "referred_schema": None,
                    "referred_table": fk.ref_table,
                    "referred_columns": list(fk.ref_columns),
                    "options": options,
                }
            )
        return out
    out = []
    for contype, _, cols, ref_anon, ref_cols, upd, dele in _server_constraints(conn, table):
        if contype != "f":
            continue
        ref = catalog.by_anon.get(ref_anon)
        if ref is None:
            continue
        plain, ref_plain = _plain_columns(table, cols), _plain_columns(ref, ref_cols)
        if plain is None or ref_plain is None:
            continue
        options = {}
        if _ACTIONS.get(upd):
            options["onupdate"] = _ACTIONS[upd]
        if _ACTIONS.get(dele):
            options["ondelete"] = _ACTIONS[dele]
        out.append(
            {
                "name": None,
                "constrained_columns": plain,
                "referred_schema": None,
                "referred_table": ref.name,
                "referred_columns": ref_plain,
                "options": options,
            }
        )
    return out


def check_constraints(table: TableMeta) -> list[dict[str, Any]]:
    return [{"name": c.get("name"), "sqltext": c.get("sql")} for c in getattr(table, "checks", [])]


def views(catalog: Catalog) -> dict[str, Any]:
    """The catalog's views (name -> its sealed record), where the catalog has them."""
    return dict(getattr(catalog, "views", {}) or {})


def view_columns(view: Any, catalog: Catalog) -> list[dict[str, Any]]:
    """A view's columns: the type of the table column an output names as it is
    (``SELECT t.a, b AS c ...``, ``SELECT * FROM t``); NullType for computed outputs
    (their type is PostgreSQL's to infer, and the sealed view does not record it);
    nullable, as PostgreSQL reflects every column of a view."""
    sources = _view_sources(view, catalog)
    out = []
    for name in view.columns:
        col = sources.get(name)
        out.append(
            {
                "name": name,
                "type": sa_type(col.type) if col is not None else sqltypes.NULLTYPE,
                "nullable": True,  # as PostgreSQL reflects a view's columns
                "default": None,
            }
        )
    return out


def _view_sources(view: Any, catalog: Catalog) -> dict[str, Any]:
    """Output name -> the table column it is, for the outputs that are bare columns."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(view.sql, read="postgres")
    except Exception:
        return {}
    if not isinstance(tree, exp.Select):
        return {}
    aliases: dict[str, TableMeta] = {}
    for t in tree.find_all(exp.Table):
        meta = catalog.tables.get(t.name.lower())
        if meta is not None:
            aliases[(t.alias or t.name).lower()] = meta
    if len({id(m) for m in aliases.values()}) != len(list(tree.find_all(exp.Table))):
        return {}  # a source that is not a table (a view, a subquery): left untyped
    out: dict[str, Any] = {}
    for item in tree.expressions:
        inner = item.unalias()
        if isinstance(inner, exp.Star) and len(aliases) == 1:
            for col in next(iter(aliases.values())).columns.values():
                out.setdefault(col.name, col)
        elif isinstance(inner, exp.Column) and not isinstance(inner.this, exp.Star):
            owners = (
                [aliases[inner.table.lower()]]
                if inner.table and inner.table.lower() in aliases
                else [m for m in aliases.values() if inner.name.lower() in m.columns]
            )
            if len(owners) == 1 and inner.name.lower() in owners[0].columns:
                out[item.alias_or_name.lower()] = owners[0].columns[inner.name.lower()]
    return out


def by_name(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """In the order PostgreSQL's reflection gives: by name (unnamed last)."""
    return sorted(items, key=lambda d: (d.get("name") is None, d.get("name") or ""))


def indexes(table: TableMeta) -> list[dict[str, Any]]:
    return [
        {
            "name": ix.name,
            "column_names": list(ix.columns),
            "unique": ix.unique,
            "include_columns": [],
            "dialect_options": {},
        }
        for ix in table.indexes
    ]


def enums(catalog: Catalog) -> list[dict[str, Any]]:
    """The enum types, as PostgreSQL's dialect reflects them (labels in declared order)."""
    return [
        {
            "name": t.name,
            "schema": "public",
            "visible": True,
            "labels": [label for label, _ in sorted(t.labels, key=lambda lp: lp[1])],
        }
        for t in sorted(catalog.types.values(), key=lambda t: t.name)
        if t.kind == "enum"
    ]


def domains(catalog: Catalog) -> list[dict[str, Any]]:
    """The domains, as PostgreSQL's dialect reflects them."""
    out = []
    for t in sorted(catalog.types.values(), key=lambda t: t.name):
        if t.kind != "domain":
            continue
        base = t.base if t.base is not None else catalog.types[str(t.base_udt)].name
        out.append(
            {
                "name": t.name,
                "schema": "public",
                "visible": True,
                "type": base,
                "nullable": not t.not_null,
                "default": t.default,
                "constraints": [{"name": c["name"], "check": c["sql"]} for c in t.checks],
                "collation": None,
            }
        )
    return out


def sequence_names(catalog: Catalog) -> list[str]:
    """Every sequence: those created on their own and those of serial/identity columns."""
    names = set(catalog.sequences)
    for table in catalog.tables.values():
        names.update(c.sequence for c in table.columns.values() if c.sequence)
    return sorted(names)
