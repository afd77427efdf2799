"""ORDER BY and DISTINCT ON keys read as PostgreSQL reads them, after sqlglot's
qualification.

PostgreSQL resolves a key that is a bare name to the output of that name first (then to
an input column), and every name inside a key that is an expression to the input
columns only: in ``SELECT k AS hundred FROM t ORDER BY -hundred`` the order is by the
column ``hundred``, not by ``k``.  sqlglot (and DuckDB) let an output alias shadow the
column inside an expression too, and leave such names unqualified -- the client engine
then ordered by the alias (a different order), or typed the key as nothing (refused).
Here each unqualified name inside an expression key is qualified with the input it
reads, and a bare DISTINCT ON name of an output is that output's expression (DuckDB's
DISTINCT ON would read the input column)."""

from __future__ import annotations

from collections import Counter

from sqlglot import exp
from sqlglot.optimizer.qualify_columns import Resolver
from sqlglot.optimizer.scope import traverse_scope, walk_in_scope
from sqlglot.schema import Schema


def _keys(select: exp.Select) -> tuple[list[exp.Expression], list[exp.Expression]]:
    """(the ORDER BY keys, the DISTINCT ON keys)."""
    order = select.args.get("order")
    distinct = select.args.get("distinct")
    on = distinct.args.get("on") if isinstance(distinct, exp.Distinct) else None
    return (
        [o.this for o in order.expressions] if order is not None else [],
        list(on.expressions) if isinstance(on, exp.Tuple) else [],
    )


def _qualify_inputs(key: exp.Expression, resolver: Resolver) -> None:
    for column in list(walk_in_scope(key)):
        if isinstance(column, exp.Column) and not column.table:
            table = resolver.get_table(column)
            if table is not None:
                column.set("table", table)


def keys_read_inputs(tree: exp.Expression, schema: Schema) -> exp.Expression:
    """``tree`` (qualified) with its ORDER BY and DISTINCT ON keys reading PostgreSQL's
    columns, changed in place."""
    for scope in traverse_scope(tree):
        select = scope.expression
        if not isinstance(select, exp.Select):
            continue
        order_keys, on_keys = _keys(select)
        if not order_keys and not on_keys:
            continue
        resolver = Resolver(scope, schema)
        outputs = Counter(select.named_selects)
        by_name = {s.alias_or_name: s for s in select.selects if outputs[s.alias_or_name] == 1}
        for key in on_keys:
            bare = isinstance(key, exp.Column) and not key.table
            output = by_name.get(key.name) if bare else None
            if output is not None:
                key.replace(output.unalias().copy())
        for key in [k for k in order_keys if not isinstance(k, exp.Column)] + _keys(select)[1]:
            _qualify_inputs(key, resolver)  # (a bare ORDER BY name: an output's, or sqlglot's)
    return tree


__all__ = ["keys_read_inputs"]
