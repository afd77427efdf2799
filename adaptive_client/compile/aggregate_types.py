"""PostgreSQL's 42883 where it has no aggregate of the argument's type, checked on the
statement as written, against the catalog, before it is compiled -- the client's paths
would answer it: the client engine's min/max take a boolean or a uuid, its bool_and an
integer, its string_agg any value, and so did the plans over the column's onions.

* ``min``, ``max``, ``sum``, ``avg`` of booleans (``bool_and`` and ``bool_or`` are
  theirs);
* ``min`` / ``max`` of the types PostgreSQL orders but gives no such aggregate
  (``uuid``, ``bytea``, ``bit``, ``jsonb`` ...);
* ``bool_and`` / ``bool_or`` / ``every`` of anything but a boolean;
* ``string_agg`` of anything but text (``bytea``'s, which PostgreSQL has, is refused:
  the client would give it as text).

An argument's type is known here where it is a column of one table, a cast, or a
boolean form (a comparison, a logical operator)."""

from __future__ import annotations

from typing import Final

from psycopg import errors as pg_errors
from sqlglot import exp

from ..catalog.metadata import Catalog
from ..errors import UnsupportedQuery

_NOT_OF_BOOLEANS: Final = {exp.Min: "min", exp.Max: "max", exp.Sum: "sum", exp.Avg: "avg"}

# the types without min/max (their btree order is PostgreSQL's, not an aggregate's)
NO_EXTREMES: Final = frozenset(
    {"boolean", "uuid", "bytea", "bit", "varbit", "macaddr", "macaddr8", "json", "jsonb"}
)

_OF_BOOLEANS_ONLY: Final = {exp.LogicalAnd: "bool_and", exp.LogicalOr: "bool_or"}

_TEXT_TYPES: Final = frozenset({"text", "varchar", "char"})

# a boolean whatever its operands: a constant, a comparison, a logical operator
_BOOLEAN_FORMS: Final = (exp.Boolean, exp.Predicate, exp.Connector, exp.Not)


def _column_type(catalog: Catalog, tree: exp.Expression, column: exp.Column) -> str | None:
    """The type of the table column ``column`` reads, where one table of the catalog has
    it (None: a derived table's, or more than one table's)."""
    tables = [
        t
        for t in tree.find_all(exp.Table)
        if t.name in catalog.tables and (not column.table or t.alias_or_name == column.table)
    ]
    types = {
        catalog.table(t.name).columns[column.name].type.name
        for t in tables
        if column.name in catalog.table(t.name).columns
    }
    return types.pop() if len(types) == 1 else None


def _argument_type(catalog: Catalog, tree: exp.Expression, node: exp.Expression) -> str | None:
    while isinstance(node, exp.Paren | exp.Distinct | exp.Order):
        if isinstance(node, exp.Distinct):
            if len(node.expressions) != 1:
                return None
            node = node.expressions[0]
        else:
            node = node.this
    if isinstance(node, _BOOLEAN_FORMS):
        return "boolean"
    if isinstance(node, exp.Column):
        return _column_type(catalog, tree, node)
    if isinstance(node, exp.Cast) and node.to.is_type(exp.DataType.Type.BOOLEAN):
        return "boolean"
    return None


def check_aggregate_types(catalog: Catalog, tree: exp.Expression) -> None:
    """42883 where an aggregate has no version of its argument's type (see the module)."""
    kinds = (*_NOT_OF_BOOLEANS, *_OF_BOOLEANS_ONLY, exp.GroupConcat)
    for node in tree.find_all(*kinds):
        arg = node.this
        if arg is None:
            continue
        typed = _argument_type(catalog, tree, arg)
        if typed is None:
            continue
        name = _NOT_OF_BOOLEANS.get(type(node)) or _OF_BOOLEANS_ONLY.get(type(node))
        if isinstance(node, exp.GroupConcat):
            if typed == "bytea":
                raise UnsupportedQuery("string_agg of bytea: not supported by the client")
            if typed not in _TEXT_TYPES:
                raise pg_errors.UndefinedFunction(
                    f"function string_agg({typed}, unknown) does not exist"
                )
        elif isinstance(node, exp.LogicalAnd | exp.LogicalOr):
            if typed != "boolean":
                raise pg_errors.UndefinedFunction(f"function {name}({typed}) does not exist")
        elif (typed == "boolean") or (isinstance(node, exp.Min | exp.Max) and typed in NO_EXTREMES):
            raise pg_errors.UndefinedFunction(f"function {name}({typed}) does not exist")


__all__ = ["NO_EXTREMES", "check_aggregate_types"]
