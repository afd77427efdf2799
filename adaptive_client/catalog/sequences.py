"""``SELECT currval('t_id_seq')``, ``lastval()``, ``nextval(...)``, ``setval(...)``,
``pg_get_serial_sequence('t', 'id')``.

The client hands out a serial column's values (see defaults.py), so the server's own
``currval`` of the session does not know them: these calls are answered by the client,
in PostgreSQL's terms (the same errors before a first ``nextval``).  The server's
sequences and tables have keyed names: which sequence a column owns is the catalog's.
"""

from __future__ import annotations

from typing import Any

from psycopg import errors as pg_errors
from psycopg import sql
from sqlglot import exp

from ..description import Column, described
from ..syntax.names import folded, quoted_shown, relation_named
from .defaults import Runtime
from .metadata import Catalog

_FUNCTIONS = {"currval", "lastval", "nextval", "setval", "pg_get_serial_sequence"}
_INT8, _TEXT = 20, 25


def _calls(stmt: exp.Expression) -> list[tuple[str, exp.Anonymous]] | None:
    if not isinstance(stmt, exp.Select) or any(
        stmt.args.get(k) for k in ("from_", "where", "group", "having", "order", "joins")
    ):
        return None
    out = []
    for item in stmt.expressions:
        node = item.unalias()
        if not isinstance(node, exp.Anonymous) or node.name.lower() not in _FUNCTIONS:
            return None
        out.append((item.alias_or_name if isinstance(item, exp.Alias) else node.name.lower(), node))
    return out


def _sequence(catalog: Catalog, node: exp.Expression) -> tuple[str, str | None]:
    """The sequence a call names: its name and its server sequence (None: a column's
    sequence that is not the client's to draw from)."""
    arg = node.this if isinstance(node, exp.Cast) else node
    if not (isinstance(arg, exp.Literal) and arg.is_string):
        raise pg_errors.FeatureNotSupported("the sequence must be named by a constant")
    return named(catalog, relation_named(str(arg.this)))


def named(catalog: Catalog, name: str) -> tuple[str, str | None]:
    """The sequence of that name: its name and its server sequence (see _sequence)."""
    own = catalog.sequences.get(name)  # created on its own (sequence_objects.py)
    if own is not None:
        return own.name, own.anon
    for table in catalog.tables.values():
        for col in table.columns.values():
            if col.sequence == name:
                return name, col.sequence_anon
    raise pg_errors.UndefinedTable(f'relation "{name}" does not exist')


def _serial_sequence(catalog: Catalog, args: list[exp.Expression]) -> str | None:
    """``pg_get_serial_sequence(table, column)``: the sequence a serial or identity
    column owns, schema-qualified; None for any other column."""
    if len(args) != 2 or not all(isinstance(a, exp.Literal) and a.is_string for a in args):
        raise pg_errors.FeatureNotSupported("pg_get_serial_sequence() needs constant arguments")
    table = relation_named(str(args[0].this))
    column = folded(str(args[1].this), True)  # (a column name, its case kept as given)
    if not catalog.has_table(table):
        if table in catalog.views:
            return None
        raise pg_errors.UndefinedTable(f'relation "{args[0].this}" does not exist')
    meta = catalog.table(table)
    if column not in meta.columns:
        raise pg_errors.UndefinedColumn(
            f'column "{args[1].this}" of relation "{args[0].this}" does not exist'
        )
    sequence = meta.columns[column].sequence
    if sequence is None or sequence in catalog.sequences:  # (one created on its own)
        return None
    return f"public.{quoted_shown(sequence)}"


def answer(
    stmt: exp.Expression, catalog: Catalog, runtime: Runtime
) -> tuple[list[tuple[Any, ...]], list[Column], int] | None:
    """The result of a SELECT of sequence functions, or None for any other statement."""
    calls = _calls(stmt)
    if not calls:
        return None
    row: list[Any] = []
    for _, call in calls:
        fn, args = call.name.lower(), call.expressions
        if fn == "lastval":
            row.append(runtime.last())
            continue
        if fn == "pg_get_serial_sequence":
            row.append(_serial_sequence(catalog, args))
            continue
        if not args:
            raise pg_errors.UndefinedFunction(f"function {fn}() does not exist")
        target = args[0].this if isinstance(args[0], exp.Cast) else args[0]
        if isinstance(target, exp.Anonymous) and target.name.lower() == "pg_get_serial_sequence":
            serial = _serial_sequence(catalog, target.expressions)
            if serial is None:  # (the functions are strict)
                row.append(None)
                continue
            target = exp.Literal.string(serial)
        name, anon = _sequence(catalog, target)
        if anon is None:
            raise pg_errors.UndefinedFunction(f"function {fn}() does not exist")
        if fn == "currval":
            row.append(runtime.currval(name))
        elif fn == "nextval":
            row.append(runtime.nextval(anon, name))
        else:  # setval(seq, n [, is_called])
            values = [a.to_py() for a in args[1:] if isinstance(a, exp.Literal | exp.Boolean)]
            if len(values) != len(args) - 1 or not values:
                raise pg_errors.FeatureNotSupported("setval needs constant arguments")
            result = runtime.conn.execute(
                sql.SQL("SELECT setval({}, {})").format(
                    sql.Literal(sql.Identifier(anon).as_string(runtime.conn)),
                    sql.SQL(", ").join(sql.Literal(v) for v in values),
                )
            ).fetchone()
            value = result[0] if result else None
            if value is not None:
                runtime.set(anon, name, value, bool(values[1]) if len(values) > 1 else True)
            row.append(value)
    description = [
        described(name, _TEXT if call.name.lower() == "pg_get_serial_sequence" else _INT8)
        for name, call in calls
    ]
    return [tuple(row)], description, 1


__all__ = ["answer", "named"]
