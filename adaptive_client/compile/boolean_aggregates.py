"""PostgreSQL has no ``min``, ``max``, ``sum`` or ``avg`` of booleans (``bool_and`` and
``bool_or`` are theirs): ``max(flag)`` is 42883.  The client's paths answered it -- the
client engine's min/max take a boolean, and so did the plans over the column's onions --
so the statement is checked as written, against the catalog, before it is compiled."""

from __future__ import annotations

from typing import Final

from psycopg import errors as pg_errors
from sqlglot import exp

from ..catalog.metadata import Catalog

_NOT_OF_BOOLEANS: Final = {exp.Min: "min", exp.Max: "max", exp.Sum: "sum", exp.Avg: "avg"}

# a boolean whatever its operands: a constant, a comparison, a logical operator
_BOOLEAN_FORMS: Final = (exp.Boolean, exp.Predicate, exp.Connector, exp.Not)


def _column_is_boolean(catalog: Catalog, tree: exp.Expression, column: exp.Column) -> bool:
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
    return types == {"boolean"}


def _is_boolean(catalog: Catalog, tree: exp.Expression, node: exp.Expression) -> bool:
    while isinstance(node, exp.Paren | exp.Distinct):
        node = node.this if isinstance(node, exp.Paren) else node.expressions[0]
    if isinstance(node, _BOOLEAN_FORMS):
        return True
    if isinstance(node, exp.Column):
        return _column_is_boolean(catalog, tree, node)
    if isinstance(node, exp.Cast):
        return node.to.is_type(exp.DataType.Type.BOOLEAN)
    return False


def check_boolean_aggregates(catalog: Catalog, tree: exp.Expression) -> None:
    """42883 where a min/max/sum/avg aggregates booleans."""
    for node in tree.find_all(*_NOT_OF_BOOLEANS):
        arg = node.this
        if isinstance(arg, exp.Distinct) and len(arg.expressions) != 1:
            continue
        if arg is not None and _is_boolean(catalog, tree, arg):
            name = _NOT_OF_BOOLEANS[type(node)]
            raise pg_errors.UndefinedFunction(f"function {name}(boolean) does not exist")


__all__ = ["check_boolean_aggregates"]
