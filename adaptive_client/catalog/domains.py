"""Columns of enum types and domains, as the catalog defines them (see usertypes.py).

What compiling a statement and reading a CREATE TABLE take from the catalog's user
types: a declared column's type (:func:`declared`), a cast to an enum
(:func:`cast_type`), what a column declared with a domain takes from it -- its default,
NOT NULL, its checks (:func:`column_domain`, :func:`domain_checks`,
:func:`apply_domain`) -- and PostgreSQL's message where a server violation is a
domain's (:func:`domain_report`).  Type names resolve against the catalog set by
:func:`using` for the statement at hand.  The DDL of the types themselves (CREATE /
ALTER / DROP TYPE and DOMAIN) is typeddl.py's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg.pq import DiagnosticField
from sqlglot import exp

from ..errors import ConfigError, UnsupportedQuery
from ..syntax.names import quoted_shown
from ..values.encodings import SqlType, encoding_for, parse_sql_type
from . import checks, defaults
from .metadata import Catalog, ColumnMeta
from .usertypes import chain


def pg_error(cls: type[psycopg.Error], primary: str, detail: str | None = None,
             hint: str | None = None) -> psycopg.Error:  # fmt: skip
    """An error of class ``cls`` reported as PostgreSQL reports it (diag fields set)."""
    info: dict[int, bytes | None] = {
        DiagnosticField.SEVERITY: b"ERROR",
        DiagnosticField.SEVERITY_NONLOCALIZED: b"ERROR",
        DiagnosticField.SQLSTATE: str(cls.sqlstate).encode(),
        DiagnosticField.MESSAGE_PRIMARY: primary.encode(),
    }
    text = primary
    if detail is not None:
        info[DiagnosticField.MESSAGE_DETAIL] = detail.encode()
        text += f"\nDETAIL:  {detail}"
    if hint is not None:
        info[DiagnosticField.MESSAGE_HINT] = hint.encode()
        text += f"\nHINT:  {hint}"
    return cls(text, info=info)


def check_condition(text: str) -> exp.Expression:
    """A domain check's condition, which may name no column but VALUE."""
    expr = checks.parse_condition(text)
    for c in expr.find_all(exp.Column):
        if c.name.lower() != "value" or c.table:
            raise pg_error(pg_errors.UndefinedColumn, f'column "{c.name}" does not exist')
    return expr


def default_value(t: SqlType, text: str) -> Any:
    """A domain's DEFAULT (a constant only), as a value of type ``t``."""
    node = checks.parse_condition(text)
    ok, value = defaults.constant(node)
    if not ok:
        raise UnsupportedQuery(f"a domain DEFAULT other than a constant: {text}", "DOMAIN DEFAULT")
    return encoding_for(t).coerce(value)


def column_domain(
    catalog: Catalog, anon: str
) -> tuple[str | None, bool, list[tuple[str, exp.Expression]]]:
    """What a column declared with user type ``anon`` takes from its domains: the
    default (SQL text, the outermost domain's that has one), NOT NULL, and the checks in
    the order PostgreSQL applies them (the base domain's first, each domain's by name)."""
    levels = chain(catalog.types, anon)
    default = next((d.default for d in levels if d.default is not None), None)
    not_null = any(d.not_null for d in levels)
    out: list[tuple[str, exp.Expression]] = []
    for d in reversed(levels):
        for c in sorted(d.checks, key=lambda c: c["name"]):
            out.append((c["name"], check_condition(c["sql"])))
    return default, not_null, out


def domain_checks(
    catalog: Catalog, table: str, column: str, anon: str
) -> list[tuple[str | None, exp.Expression, str | None]]:
    """The checks of a column declared with user type ``anon``, over the column, each
    marked with its server name (ordered as PostgreSQL applies them: the server applies
    a table's checks in the order of their names) and the declared type."""
    out: list[tuple[str | None, exp.Expression, str | None]] = []
    prefix = catalog.anon_index(table, "__domain__" + column)
    resolved = catalog.resolve_type(anon)

    def over_column(n: exp.Expression) -> exp.Expression:
        if isinstance(n, exp.Column):
            return exp.column(column)
        if isinstance(n, exp.Cast) and isinstance(n.this, exp.Column):
            with using(catalog):  # (VALUE::its own type: the value as it is)
                if cast_type(n.to) == resolved:
                    return exp.column(column)
        return n

    for rank, (name, expr) in enumerate(column_domain(catalog, anon)[2]):
        over = expr.transform(over_column)
        over.meta["anon"] = f"{prefix}_{rank:03d}"
        over.meta["domain"] = anon
        out.append((name, over, column))
    return out


def udt_name(catalog: Catalog, col: ColumnMeta) -> str:
    t = catalog.types.get(col.udt or "")
    return t.name if t else str(col.udt)


def domain_report(catalog: Catalog, sqlstate: str, constraint: str | None,
                  column: str | None) -> str | None:  # fmt: skip
    """PostgreSQL's message where a server violation is a domain's: a check of a domain
    (``value for domain d violates check constraint "c"``), or the NOT NULL of a
    column's domain (``domain d does not allow null values``); None otherwise."""
    for table in catalog.tables.values():
        if sqlstate == "23514" and constraint:
            for c in table.checks:
                if c["anon"] == constraint and c.get("domain"):
                    t = catalog.types.get(c["domain"])
                    name = quoted_shown(t.name if t else c["domain"])
                    return f'value for domain {name} violates check constraint "{c["name"]}"'
        if sqlstate == "23502" and column:
            for col in table.columns.values():
                if col.udt and any(oc.anon == column for oc in col.onions.values()):
                    if column_domain(catalog, col.udt)[1]:
                        return f"domain {udt_name(catalog, col)} does not allow null values"
                    return None
    return None


# -- type names, resolved against the statement's catalog ---------------------------------

_CATALOG: ContextVar[Catalog | None] = ContextVar("adaptive_user_types", default=None)


@contextmanager
def using(catalog: Catalog) -> Iterator[None]:
    """Resolve type names in DDL and casts against ``catalog``'s enums and domains."""
    token = _CATALOG.set(catalog)
    try:
        yield
    finally:
        _CATALOG.reset(token)


def _user_name(kind: exp.Expression) -> str | None:
    if not isinstance(kind, exp.DataType) or kind.this != exp.DataType.Type.USERDEFINED:
        return None
    ident = kind.args.get("kind")
    if isinstance(ident, exp.Identifier):
        name = ident.this if ident.quoted else ident.this.lower()
        quoted = bool(ident.quoted)
    else:
        name, quoted = kind.sql("postgres").lower(), False
    if not quoted and _builtin(name):
        return None  # (cidr, macaddr, varbit: built-in types the parser does not know)
    return name


def _builtin(name: str) -> bool:
    try:
        parse_sql_type(name)
    except ConfigError:
        return False
    return True


def declared(kind: exp.Expression) -> tuple[str, SqlType] | None:
    """(anon, resolved type) of a column declared with an enum or a domain; None for a
    built-in type; a name the catalog has no type for is PostgreSQL's 42704."""
    name = _user_name(kind)
    if name is None:
        return None
    catalog = _CATALOG.get()
    meta = catalog.user_type(name) if catalog is not None else None
    if catalog is None or meta is None:
        try:  # a built-in type the parser does not know by name (_int4, timetz(3), ...)
            parse_sql_type(kind.sql("postgres"))
        except ConfigError:
            if psycopg.postgres.types.get(name) is not None:  # (PostgreSQL's own: path...)
                raise UnsupportedQuery(
                    f'column type "{name}": not supported by the client', "column type"
                ) from None
            raise pg_error(pg_errors.UndefinedObject, f'type "{name}" does not exist') from None
        return None
    return meta.anon, catalog.resolve_type(meta.anon)


def cast_type(to: exp.Expression) -> SqlType | None:
    """The type of a cast to an enum (None for other types, and for a domain: its checks
    would have to be applied to the value, which the client does not do)."""
    name = _user_name(to)
    catalog = _CATALOG.get()
    if name is None or catalog is None:
        return None
    meta = catalog.user_type(name)
    if meta is None:
        raise pg_error(pg_errors.UndefinedObject, f'type "{name}" does not exist')
    if meta.kind != "enum":
        return None
    return catalog.resolve_type(meta.anon)


def apply_domain(spec: Any, cname: str) -> None:
    """What a column declared with a domain takes from it (``tablespec.TableSpec``): its
    default where the column has none, NOT NULL, its checks."""
    catalog = _CATALOG.get()
    anon = spec.udts[cname]
    if catalog is None or catalog.types[anon].kind != "domain":
        return
    default, not_null, _ = column_domain(catalog, anon)
    taken: list[str] = []
    own_default = cname in spec.defaults or cname in spec.runtime or cname in spec.sequences
    if default is not None and not own_default:
        spec.defaults[cname] = default_value(spec.types[cname], default)
        taken.append("default")
    if not_null and spec.nullable[cname]:
        spec.nullable[cname] = False
        taken.append("not_null")
    spec.from_domain[cname] = taken
    spec.checks.extend(domain_checks(catalog, spec.name, cname, anon))


__all__ = [
    "apply_domain",
    "cast_type",
    "check_condition",
    "column_domain",
    "declared",
    "default_value",
    "domain_checks",
    "domain_report",
    "pg_error",
    "udt_name",
    "using",
]
