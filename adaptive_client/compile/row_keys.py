"""The rows a statement names by primary key, and the layout locked rows are fetched in.

A SELECT ... FOR UPDATE (or, under snapshot isolation, a plain SELECT) of one row by its
whole primary key can serve a later read-modify-write UPDATE of that row: both name it by
:func:`pk_key` and read it in the :func:`row_layout`.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from ..catalog import recipes
from .compiler import Compiler
from .plan import Params
from .scope import Scope


def has_aggregates(stmt: exp.Select) -> bool:
    return any(isinstance(e, exp.AggFunc) for e in stmt.find_all(exp.AggFunc))


def row_layout(scope: Scope, columns: frozenset[str] | None = None) -> list[exp.Expression]:
    """ctid and, in table order, the onion each column decrypts from: the shape in which
    locked rows are fetched, whether by an RMW UPDATE or by an earlier SELECT FOR UPDATE.
    ``columns``: the columns whose values are fetched, NULL in the others' places (the
    positions stay those of every column); None: all."""
    _, meta, alias = scope.entries[0]
    out: list[exp.Expression] = [exp.column("ctid", table=alias)]
    for col in meta.columns.values():
        if columns is not None and col.name not in columns:
            out.append(exp.Null())
            continue
        oc = recipes.onion_order(col)[0]
        out.append(exp.column(oc.anon, table=alias, quoted=True))
    return out


def pk_key(c: Compiler, scope: Scope, where: exp.Expression | None) -> Any:
    """If ``where`` is ``pk1 = v1 AND pk2 = v2 ...`` over the whole primary key of the one
    table in scope, a function params -> hashable key of that row; else None."""
    if where is None or len(scope.entries) != 1:
        return None
    _, meta, _ = scope.entries[0]
    terms: list[exp.Expression] = []
    node: exp.Expression = where
    while isinstance(node, exp.And):
        terms.append(node.expression)
        node = node.this
    terms.append(node)
    parts: dict[str, Any] = {}
    for t in terms:
        if not isinstance(t, exp.EQ):
            return None
        col, val = t.this, t.expression
        if not isinstance(col, exp.Column):
            col, val = val, col
        if not isinstance(col, exp.Column):
            return None
        builder = c.value_of(val)
        if builder is None or col.name.lower() not in meta.columns:
            return None
        parts[col.name.lower()] = builder
    if not meta.primary_key or set(parts) != set(meta.primary_key):
        return None
    names = sorted(parts)
    encs = [meta.columns[n].encoding for n in names]
    builders = [parts[n] for n in names]

    anon = meta.anon
    parts_of = list(zip(encs, builders, strict=True))

    def key(p: Params) -> Any:
        return (anon, tuple([e.coerce(b(p)) for e, b in parts_of]))

    return key
