"""What INSERT, UPDATE and DELETE share: the values they write, encrypted for each onion,
and the RETURNING items computed from the rows the server returns.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from psycopg import errors as pg_errors
from sqlglot import exp

from ..catalog import defaults, recipes
from ..catalog.compiled_sealing import row_sealers
from ..catalog.metadata import Catalog, ColumnMeta, OnionColumn, TableMeta
from ..errors import UndefinedTable
from ..syntax.names import shown
from .compiler import Compiler
from .generated import Computation, computation_of
from .plan import Compiled, Output, ParamBuilder, Params
from .projection import value_expr
from .residual import compile_residual
from .scope import Scope


def engine_value(c: Compiler, node: exp.Expression) -> ParamBuilder | None:
    """A value written that depends on the statement's parameters and constants only
    (``upper(%s)``, ``%s + 1``, ``now() + interval '1 day'``): computed per execution by
    the client engine, as a SELECT of it without FROM, with PostgreSQL's semantics; the
    column's encoding then takes it as an assignment does.  None where it reads a column
    or a subquery (a row's own values: not a value of the statement)."""
    if node.find(exp.Column, exp.Subquery, exp.Select, exp.Star) is not None:
        return None
    plan = compile_residual(c.catalog, exp.Select(expressions=[node.copy()]))
    assert plan.residual is not None
    finish = plan.residual.finish

    def build(params: Params) -> Any:
        return finish(_no_fetch, params)[0][0]

    return build


def _no_fetch(i: int) -> list[list[Any]]:
    raise AssertionError("a SELECT without FROM fetches nothing")


def is_default(node: exp.Expression) -> bool:
    """``DEFAULT`` as a value (sqlglot reads it as a keyword in VALUES, a column in SET)."""
    return (
        isinstance(node, exp.Var | exp.Column)
        and not (isinstance(node, exp.Column) and (node.table or node.this.quoted))
        and node.name.upper() == "DEFAULT"
    )


def check_assignment(col: ColumnMeta, value: exp.Expression, update: bool = True) -> None:
    """PostgreSQL's 428C9 for a value other than DEFAULT written to a generated column,
    and for an UPDATE (or ON CONFLICT DO UPDATE) setting a GENERATED ALWAYS identity
    column to anything but DEFAULT (an INSERT's is compile/insert.py's: OVERRIDING)."""
    if is_default(value):
        return
    name = shown(col.name)
    if col.generated is not None:
        message = (
            f'column "{name}" can only be updated to DEFAULT'
            if update
            else f'cannot insert a non-DEFAULT value into column "{name}"'
        )
        raise pg_errors.GeneratedAlways(
            f'{message}\nDETAIL:  Column "{name}" is a generated column.'
        )
    if update and col.identity == "always":
        raise pg_errors.GeneratedAlways(f'column "{name}" can only be updated to DEFAULT')


class ComputedValue:
    """A computed (generated or precomputed) column's value in a written row, from the
    row's other values: called as a parameter builder it computes them from their own
    builders; the INSERT binders give it the row's values they computed already
    (:meth:`from_values`), so that a value drawn from a sequence is drawn once."""

    def __init__(
        self, computation: Computation, inputs: list[tuple[str, ColumnMeta, ParamBuilder]]
    ) -> None:
        self.computation = computation
        self.inputs = inputs

    def __call__(self, p: Params) -> Any:
        return self.computation.value(
            {
                name: None if (x := b(p)) is None else c.encoding.coerce(x)
                for name, c, b in self.inputs
            }
        )

    def from_values(self, values: Mapping[str, Any]) -> Any:
        return self.computation.value(values)


def computing(
    catalog: Catalog, meta: TableMeta, col: ColumnMeta, effective: dict[str, ParamBuilder]
) -> ComputedValue:
    """A computed column's value in a written row whose columns' values ``effective``
    gives (see :class:`ComputedValue`)."""
    computation = computation_of(catalog, meta, col)
    return ComputedValue(
        computation, [(n, meta.columns[n], effective[n]) for n in computation.inputs]
    )


def sealing(col: ColumnMeta, v: ParamBuilder) -> list[ParamBuilder]:
    """The stored values of all ``col``'s onions (in ``col.onions`` order) for the value
    ``v`` gives: one builder per onion, the value coerced and every onion sealed once per
    bind, together (:class:`recipes.RowSealer`: the RND layers in one call, the
    statistics counted once) -- an UPDATE's ``SET col = %s``."""
    onions = list(col.onions.values())
    # (the compiled layer seals the value as the application gave it, where it can)
    sealer, compiled = row_sealers([(0, 0, col, oc) for oc in onions])
    key = object()  # (this column's sealed values, in the bind's mapping)

    def sealed(p: Params) -> list[Any]:
        x = v(p)
        if x is None:
            return [None] * len(onions)
        if compiled is not None and recipes.COMPILED.get():
            return compiled((x,))
        return sealer([col.encoding.coerce(x)])

    def onion(i: int) -> ParamBuilder:
        def build(p: Params) -> Any:
            return defaults.once_per_bind(key, lambda: sealed(p))[i]

        return build

    return [onion(i) for i in range(len(onions))]


def encrypting(col: ColumnMeta, oc: OnionColumn, v: ParamBuilder) -> ParamBuilder:
    # A single-row statement coerces per onion (cheap next to encryption); a multi-row
    # INSERT coerces each column once (see _bulk_encrypting).
    def build(p: Params) -> Any:
        x = v(p)
        if x is None:
            return None
        return recipes.encrypt(col, oc, col.encoding.coerce(x))

    return build


def returning(
    c: Compiler, stmt: exp.Expression, out: exp.Expression, plan: Compiled, scope: Scope
) -> None:
    """RETURNING of an INSERT, UPDATE or DELETE: the server returns the onion columns the
    items need (of the row as written), the client decrypts and computes the items."""
    ret = stmt.args.get("returning")
    if not ret:
        return
    items: list[exp.Expression] = []
    for e in ret.expressions:
        if isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star)):
            qual = e.table.lower() if isinstance(e, exp.Column) and e.table else None
            matched = False
            for alias, table, server_alias in scope.entries:
                if server_alias == "excluded":  # ON CONFLICT's row is not returned
                    continue
                if qual is None or qual == alias:
                    items += [exp.column(col, table=alias) for col in table.columns]
                    matched = True
            if not matched:
                raise _no_entry(scope, qual or "")
        else:
            items.append(e)
    select_list: list[exp.Expression] = []
    outputs = []
    for e in items:
        fn, name, oid = value_expr(c, scope, e, select_list, {})
        outputs.append(Output(name, fn, oid))
    out.set("returning", exp.Returning(expressions=select_list))
    plan.outputs = outputs
    plan.returns_rows = True


def _no_entry(scope: Scope, qual: str) -> UndefinedTable:
    """PostgreSQL's 42P01 for ``qual.*`` naming no entry of the statement: a table
    known by another alias is an invalid reference, any other name a missing entry."""
    if any(table.name == qual for _, table, _ in scope.entries):
        return UndefinedTable(f'invalid reference to FROM-clause entry for table "{qual}"')
    return UndefinedTable(f'missing FROM-clause entry for table "{qual}"')
