"""Views: ``CREATE [OR REPLACE] VIEW`` / ``DROP VIEW``, expanded by the client.

A view's definition is application logic (which rows a "published post" is): it lives
only in the sealed metadata, and the server has no object for it.  A query naming a view
gets the definition in its place, as a derived table, before the rewrite; the query then
runs as if the application had written the subquery (on the server where the rewrite
can, else split).  Writing through a view is refused.
"""

from __future__ import annotations

from typing import Any, cast

import psycopg
from psycopg import errors as pg_errors
from psycopg import postgres
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import traverse_scope

from ..errors import DuplicateTable, UndefinedTable, UnsupportedQuery
from ..syntax.sqltext import parse
from .keys import new_key
from .metadata import Catalog, ViewMeta


def definition(view: ViewMeta) -> exp.Expression:
    """The view's query, parsed from its stored text."""
    (stmt,) = parse(view.sql, names_folded=True)
    return stmt


def expand(catalog: Catalog, stmt: exp.Expression) -> exp.Expression:
    """``stmt`` with every view it names replaced by its definition (recursively)."""
    if not catalog.views:
        return stmt
    ctes = {c.alias_or_name.lower() for c in stmt.find_all(exp.CTE)}
    named = [
        t
        for t in stmt.find_all(exp.Table)
        if t.name.lower() in catalog.views and t.name.lower() not in ctes and not t.args.get("db")
    ]
    if not named:
        return stmt
    target = stmt.this if isinstance(stmt, exp.Insert | exp.Update | exp.Delete) else None
    if isinstance(target, exp.Schema):
        target = target.this
    for t in named:
        if t is target:
            raise UnsupportedQuery(
                f'writing through view "{t.name.lower()}" is not supported', "view write"
            )
    stmt = stmt.copy()
    for table in list(stmt.find_all(exp.Table)):
        name = table.name.lower()
        if name not in catalog.views or name in ctes or table.args.get("db"):
            continue
        view = catalog.views[name]
        body = expand(catalog, definition(view))
        alias = exp.TableAlias(
            this=exp.to_identifier(table.alias_or_name),
            columns=[exp.to_identifier(c) for c in view.columns],
        )
        table.replace(exp.Subquery(this=body, alias=alias))
    return stmt


def create_view(
    conn: psycopg.Connection[Any], catalog: Catalog, stmt: exp.Create, compile_outputs: Any
) -> None:
    table = stmt.this
    columns: list[str] = []
    if isinstance(table, exp.Schema):
        columns = [e.name.lower() for e in table.expressions]
        table = table.this
    name = table.name.lower()
    body = stmt.expression
    if not isinstance(body, exp.Select | exp.SetOperation):
        raise UnsupportedQuery("CREATE VIEW needs a query", "CREATE VIEW")
    if catalog.has_table(name):
        raise DuplicateTable(f'relation "{name}" already exists')
    old = catalog.views.get(name)
    if old is not None and not stmt.args.get("replace"):
        raise DuplicateTable(f'relation "{name}" already exists')
    described: list[tuple[str, int]] = compile_outputs(expand(catalog, body))
    outputs = [n for n, _ in described]
    types = [t for _, t in described]
    if columns:
        if len(columns) > len(outputs):
            raise pg_errors.SyntaxError("CREATE VIEW specifies more column names than columns")
        outputs = columns + outputs[len(columns) :]
    if old is not None:
        _check_replacement(old, outputs, types)
    body = _stars_expanded(catalog, body)
    tables = sorted({t.name.lower() for t in body.find_all(exp.Table)})
    anon = old.anon if old is not None else catalog.root.anonymize("view", name)
    if old is None and any(v.anon == anon for v in catalog.views.values()):
        # (the name's keyed name is a renamed view's: one of its own)
        anon = catalog.root.anonymize("view", name, new_key(8).hex())
    view = ViewMeta(name, anon, body.sql("postgres"), outputs, tables, types=types)
    if old is not None:
        view.version = old.version
    catalog.write_table(conn, view, new=old is None)
    catalog.views[name] = view


def reads_column(catalog: Catalog, view: ViewMeta, table: str, column: str) -> bool:
    """Whether ``view`` reads ``table.column`` (its ``*`` too, written out when it was
    made); where the client cannot resolve the view's names, it is taken to."""
    try:
        body = _qualified(catalog, definition(view))
    except SqlglotError:
        return True
    for scope in traverse_scope(body):
        for col in scope.columns:
            source = scope.sources.get(col.table)
            if isinstance(source, exp.Table) and source.name == table and col.name == column:
                return True
        if any(isinstance(s, exp.Table) and s.name == table for s in scope.sources.values()) and (
            any(True for _ in scope.expression.find_all(exp.Star))
        ):
            return True
    return False


def _qualified(catalog: Catalog, body: exp.Expression) -> exp.Expression:
    schema: dict[str, dict[str, str]] = {
        t.name: {c: "INT" for c in t.columns} for t in catalog.tables.values()
    }
    schema.update({v.name: {c: "INT" for c in v.columns} for v in catalog.views.values()})
    return qualify(
        body.copy(),
        schema=cast(dict[str, object], schema),
        dialect="postgres",
        expand_stars=True,
        quote_identifiers=False,
        identify=False,
        validate_qualify_columns=False,
    )


def _stars_expanded(catalog: Catalog, body: exp.Expression) -> exp.Expression:
    """The view's query with each ``*`` written out as the columns it reads now:
    PostgreSQL fixes a view's columns when it is made, so a column added to its table
    later is not among them, and one dropped that it never named does not depend on it."""
    if not any(True for _ in body.find_all(exp.Star)):
        return body
    try:
        return _qualified(catalog, body)
    except SqlglotError:
        return body  # (what the client cannot expand is refused when the view is read)


def _check_replacement(old: ViewMeta, outputs: list[str], types: list[int]) -> None:
    """CREATE OR REPLACE VIEW keeps the old view's columns, names and types, in order
    (it may add columns after them), as PostgreSQL requires."""
    if len(outputs) < len(old.columns):
        raise pg_errors.InvalidTableDefinition("cannot drop columns from view")
    for i, (was, now) in enumerate(zip(old.columns, outputs, strict=False)):
        if was != now:
            raise pg_errors.InvalidTableDefinition(
                f'cannot change name of view column "{was}" to "{now}"'
            )
        if i < len(old.types) and i < len(types) and old.types[i] != types[i]:
            raise pg_errors.InvalidTableDefinition(
                f'cannot change data type of view column "{was}" from '
                f"{_type_name(old.types[i])} to {_type_name(types[i])}"
            )


def _type_name(oid: int) -> str:
    info = postgres.types.get(oid)
    return info.regtype if info is not None else str(oid)


def renaming(catalog: Catalog, stmt: exp.Alter) -> tuple[str, str] | None:
    """(view, new name) of an ``ALTER VIEW | TABLE view RENAME TO new``; None for any
    other statement."""
    actions = stmt.args.get("actions") or []
    name = stmt.this.name.lower()
    if name not in catalog.views or len(actions) != 1:
        return None
    if not isinstance(actions[0], exp.AlterRename):
        return None
    return name, actions[0].this.name.lower()


def rename_view(conn: psycopg.Connection[Any], catalog: Catalog, name: str, new: str) -> None:
    """A view renamed.  One another view reads is refused: that view's stored query
    names it (PostgreSQL's follows the view itself)."""
    if catalog.has_relation(new):
        raise DuplicateTable(f'relation "{new}" already exists')
    if dependents(catalog, name):
        raise UnsupportedQuery(
            f"renaming view {name}, which other views read", "rename of a view read by views"
        )
    view = catalog.views.pop(name)
    view.name = new
    catalog.write_table(conn, view, new=False)
    catalog.views[new] = view


def drop_view(
    conn: psycopg.Connection[Any],
    catalog: Catalog,
    names: list[str],
    *,
    exists: bool,
    cascade: bool,
) -> None:
    for name in names:
        view = catalog.views.get(name)
        if view is None:
            if exists:
                continue
            if catalog.has_table(name):
                raise pg_errors.WrongObjectType(f'"{name}" is not a view')
            raise UndefinedTable(f'view "{name}" does not exist')
        drop_dependents(conn, catalog, name, cascade=cascade, what="view")
        catalog.delete_table(conn, view)
        del catalog.views[name]


def dependents(catalog: Catalog, name: str) -> list[ViewMeta]:
    return [v for v in catalog.views.values() if name in v.tables and v.name != name]


def drop_dependents(
    conn: psycopg.Connection[Any], catalog: Catalog, name: str, *, cascade: bool, what: str
) -> None:
    """The views over ``name``: refused without CASCADE, as PostgreSQL refuses, or dropped."""
    deps = dependents(catalog, name)
    if deps and not cascade:
        raise pg_errors.DependentObjectsStillExist(
            f"cannot drop {what} {name} because other objects depend on it"
        )
    for v in deps:
        drop_view(conn, catalog, [v.name], exists=True, cascade=True)


__all__ = [
    "create_view",
    "definition",
    "drop_dependents",
    "drop_view",
    "expand",
    "reads_column",
    "rename_view",
    "renaming",
]
