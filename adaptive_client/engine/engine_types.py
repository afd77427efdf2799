"""The client engine's types of the catalog's columns (:func:`duck_type`) and of its
results (:func:`result_oid`), the schema of a statement's tables in them
(:func:`schema_of`), and the statement's names qualified against that schema
(:func:`qualified`)."""

from __future__ import annotations

import re
from typing import cast

from psycopg import errors as pg_errors
from sqlglot import exp
from sqlglot.errors import OptimizeError, SqlglotError
from sqlglot.optimizer.pushdown_projections import pushdown_projections
from sqlglot.optimizer.qualify import qualify
from sqlglot.schema import ensure_schema

from ..catalog.metadata import Catalog, ColumnMeta, TableMeta
from ..catalog.tablespec import SYSTEM_COLUMNS
from ..errors import UndefinedColumn, UnsupportedQuery
from ..syntax.names import shown
from .held import DECIMAL_DIGITS, held_type
from .order_inputs import keys_read_inputs
from .runtime import refusal as _refuse

_INT_DUCK = {"smallint": "SMALLINT", "integer": "INTEGER", "bigint": "BIGINT"}


_SIMPLE_DUCK = {
    **_INT_DUCK,
    "text": "VARCHAR",
    "varchar": "VARCHAR",
    "date": "DATE",
    "timestamp": "TIMESTAMP",
    "timestamptz": "TIMESTAMPTZ",  # (an instant; shown in the session's zone: residual.run)
    "boolean": "BOOLEAN",
    "real": "FLOAT",
    "double precision": "DOUBLE",
    # (compared bytewise, as PostgreSQL compares it; its input forms are PostgreSQL's)
    "uuid": "UUID",
    "bytea": "BLOB",  # (compared bytewise, a prefix first, as PostgreSQL compares it)
}


def duck_type(table: TableMeta, col: ColumnMeta) -> str:
    """The DuckDB type holding ``col``'s values exactly, or a refusal."""
    t = col.type
    if t.name == "numeric" and t.precision is not None and t.precision <= DECIMAL_DIGITS:
        return f"DECIMAL({t.precision},{t.scale or 0})"
    if t.name in _SIMPLE_DUCK:
        return _SIMPLE_DUCK[t.name]
    if t.name == "char":
        # held without its trailing spaces (stored as VARCHAR, see :func:`storage_type`):
        # char(n) compares, concatenates and measures that way; typed CHAR(n) for the
        # annotation, so that LIKE and the outputs get the padding back
        return f"CHAR({t.precision or 1})"
    held = held_type(col)
    if held is not None:  # (by its order keys: engine/held.py)
        return held
    raise UnsupportedQuery(
        f"{table.name}.{col.name} ({t.sql()}) in a client-evaluated query", f"{t.name} column"
    )


# DuckDB result types -> PostgreSQL type OIDs
_OIDS = {
    "BOOLEAN": 16,
    "SMALLINT": 21,
    "INTEGER": 23,
    "BIGINT": 20,
    "FLOAT": 700,
    "DOUBLE": 701,
    "VARCHAR": 25,
    "DATE": 1082,
    "TIMESTAMP": 1114,
    "TIMESTAMP WITH TIME ZONE": 1184,
    "TIME": 1083,  # (a cast to time: time of day, as psycopg loads it)
    # (timestamp - timestamp, age(): values as psycopg loads PostgreSQL's, see
    # engine.pg_interval_out)
    "INTERVAL": 1186,
    "UUID": 2950,
    "BLOB": 17,
    '"NULL"': 25,
    "NULL": 25,
}


# one-dimensional arrays (array_agg): DuckDB's lists come back as Python lists, as
# psycopg returns PostgreSQL's arrays
_ARRAY_OIDS = {16: 1000, 21: 1005, 23: 1007, 20: 1016, 700: 1021, 701: 1022, 25: 1009,
               1082: 1182, 1114: 1115, 1700: 1231}  # fmt: skip


def result_oid(duck: str) -> int:
    if duck.endswith("[]") and not duck[:-2].endswith("]"):
        element = _ARRAY_OIDS.get(result_oid(duck[:-2]))
        if element is None:
            raise _refuse(f"a result of type {duck}")
        return element
    if duck.startswith("DECIMAL"):
        return 1700
    oid = _OIDS.get(duck)
    if oid is None:
        raise _refuse(f"a result of type {duck}")
    return oid


def cte_names(stmt: exp.Expression) -> set[str]:
    return {cte.alias_or_name.lower() for cte in stmt.find_all(exp.CTE)}


def schema_of(catalog: Catalog, stmt: exp.Expression) -> dict[str, dict[str, str]]:
    """sqlglot schema (plain names, DuckDB types) of every base table the statement names."""
    ctes = cte_names(stmt)
    schema: dict[str, dict[str, str]] = {}
    for t in stmt.find_all(exp.Table):
        if t.args.get("db") or t.args.get("catalog"):
            raise _refuse("schema-qualified table", t)
        if not isinstance(t.this, exp.Identifier):
            raise _refuse("FROM item", t)
        name = t.name.lower()
        if name in ctes or name in schema:
            continue
        meta = catalog.table(name)
        schema[name] = {c.name: schema_type(meta, c) for c in meta.columns.values()}
    return schema


# a column the client engine cannot hold: named in the schema (a star expands to it, a
# name resolves), refused only where the statement reads it (:func:`compile_residual`)
NOT_HELD = "UNKNOWN"


def schema_type(table: TableMeta, col: ColumnMeta) -> str:
    try:
        return duck_type(table, col)
    except UnsupportedQuery:
        return NOT_HELD


def outputs_named(stmt: exp.Expression) -> exp.Expression:
    """``stmt`` with the select-list items sqlglot's qualify misreads named before it
    runs: each subscript as PostgreSQL names it, by its array's column (``tags[id]`` is
    ``tags``, not ``id``, which ORDER BY id would take), else ``?column?``; each scalar
    subquery by its output."""
    for select in stmt.find_all(exp.Select):
        for item in select.expressions:
            if not isinstance(item, exp.Bracket):
                continue
            base = item
            while isinstance(base, exp.Bracket):
                base = base.this
            name = base.name if isinstance(base, exp.Column) else "?column?"
            item.replace(exp.alias_(item.copy(), name, quoted=True))
        for item in select.expressions:
            # a scalar subquery: named by its one output (sqlglot's qualify reads ORDER BY
            # 1 of an unnamed one as a mistake)
            if isinstance(item, exp.Subquery) and not item.alias:
                inner = item.unnest()
                first = inner.expressions[0] if isinstance(inner, exp.Select) else None
                name = _figured_name(first) if first is not None else "?column?"
                # (exp.alias_ would name the subquery, not the output)
                item.replace(exp.Alias(this=item.copy(), alias=exp.to_identifier(name, True)))
    return stmt


def _figured_name(node: exp.Expression) -> str:
    """Most of PostgreSQL's name of an output (a column's, an alias', a function's)."""
    if isinstance(node, exp.Alias | exp.Column):
        return node.alias_or_name
    if isinstance(node, exp.Anonymous):
        return node.name.lower()
    return node.key if isinstance(node, exp.Func) else "?column?"


def qualified(stmt: exp.Expression, schema: dict[str, dict[str, str]]) -> exp.Expression:
    try:
        tables = ensure_schema(cast(dict[str, object], schema), dialect="postgres")
        tree = qualify(
            outputs_named(stmt.copy()),
            schema=tables,
            dialect="postgres",
            quote_identifiers=False,
            identify=False,
        )
        return keys_read_inputs(tree, tables)
    except OptimizeError as exc:
        msg = str(exc)
        unresolved = re.match(r"Column '([^']+)' could not be resolved", msg)
        if unresolved is not None:
            name = unresolved.group(1)
            if name.lower() in SYSTEM_COLUMNS:
                raise _refuse(f"the system column {name}") from None
            if any(t.alias_or_name == name for t in stmt.find_all(exp.Table)):
                raise _refuse(f"a whole-row reference ({name})") from None
            if sum(name in schema.get(t.name, {}) for t in stmt.find_all(exp.Table)) > 1:
                # (a name of several of the statement's tables -- or of one table read
                # twice, a self-join -- PostgreSQL's 42702)
                raise pg_errors.AmbiguousColumn(
                    f'column reference "{shown(name)}" is ambiguous'
                ) from None
        unknown = re.search(r"Unknown column: (\S+)", msg)
        if unknown is not None and unknown.group(1).lower() in SYSTEM_COLUMNS:
            raise _refuse(f"the system column {unknown.group(1)}") from None
        if unresolved is not None or unknown is not None:
            raise UndefinedColumn(msg) from None
        raise _refuse(f"statement the client cannot resolve ({msg})") from None
    except SqlglotError as exc:
        raise _refuse(f"statement the client cannot resolve ({exc})") from None


def unused_columns_dropped(tree: exp.Expression) -> exp.Expression:
    """The columns of derived tables and CTEs nothing reads, dropped (sqlglot's
    ``pushdown_projections``, which keeps what decides a subquery's rows): a column
    dropped is one the server does not ship and the client does not decrypt."""
    try:
        return pushdown_projections(tree)
    except OptimizeError:  # an unexpanded star, raised before any change: nothing dropped
        return tree
