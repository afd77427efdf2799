"""UPDATE and DELETE of one table (with FROM / USING tables joined on the server).

SET to constants writes every onion of the column in one server statement; SET to a
value computed from the row (``x = x + 1``) is a read-modify-write: the rows are read
FOR UPDATE, the client computes and writes each back by ``ctid``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from psycopg import errors as pg_errors
from sqlglot import exp

from ..catalog import defaults, precomputed, recipes
from ..catalog.metadata import ColumnMeta
from ..syntax.names import shown
from .compiler import Compiler, server_sql
from .generated import computation_of, stale_after
from .plan import ColumnValue, Compiled, ParamBuilder, RmwUpdate, RowFn
from .projection import value_expr
from .row_keys import pk_key, row_layout
from .scope import Scope, unsupported
from .writes import (
    check_assignment,
    computing,
    engine_value,
    is_default,
    returning,
    sealing,
)


def _inputs(c: Compiler, meta: Any, col: ColumnMeta) -> tuple[str, ...]:
    """The columns a computed (generated or precomputed) column is computed from."""
    return computation_of(c.catalog, meta, col).inputs


def _target(
    c: Compiler, stmt: exp.Update | exp.Delete, verb: str
) -> tuple[Scope, Any, exp.Expression]:
    """The statement's one target table, the first in a new scope: (scope, its metadata,
    its server node); refused with a clause PostgreSQL's UPDATE and DELETE do not have."""
    for key in ("joins", "order", "limit"):
        if stmt.args.get(key):
            raise unsupported(stmt, f"{verb} ... {key.upper()}")
    scope, node = Scope(), stmt.this
    if not isinstance(node, exp.Table):
        raise unsupported(node, "UPDATE/DELETE target")
    meta = c.catalog.table(node.name)
    c.tables.append(meta)
    alias = (node.alias or node.name).lower()
    server_alias = scope.add(alias, meta)
    table = exp.Table(
        this=exp.to_identifier(meta.anon, quoted=True),
        alias=exp.TableAlias(this=exp.to_identifier(server_alias)),
    )
    return scope, meta, table


def _extra_tables(
    c: Compiler, scope: Scope, nodes: Sequence[exp.Expression]
) -> list[exp.Expression]:
    """UPDATE ... FROM / DELETE ... USING: the other tables, joined on the server (their
    join conditions, in WHERE or in an inner JOIN's ON written after them -- ``FROM t1
    JOIN t2 ON t1.a = t2.a`` -- compare ciphertexts under shared keys).  Another kind of
    join is refused (its table was taken without its condition: every row of the target
    matched)."""
    out: list[exp.Expression] = []
    pending: list[tuple[exp.Expression, exp.Join, exp.Expression, exp.Expression | None]] = []
    for node in nodes:
        joins = node.args.get("joins") or []
        bare = node.copy()
        bare.set("joins", None)
        server = c.table_node(scope, bare)
        before = [bare]
        for j in joins:
            kind = (j.args.get("kind") or "").upper()
            if j.args.get("side") or kind not in ("", "INNER", "CROSS"):
                raise unsupported(j, "UPDATE ... FROM / DELETE ... USING with an outer join")
            on = j.args.get("on") or _using_condition(c, before, j)
            pending.append((server, j, c.table_node(scope, j.this), on))
            before.append(j.this)
        out.append(server)
    for server, j, table, on in pending:  # (every table in scope: ON reads those before it)
        new = exp.Join(this=table)
        if j.args.get("kind"):
            new.set("kind", j.args["kind"])
        if on is not None:
            new.set("on", c.predicate(scope, on))
        server.append("joins", new)
    return out


def _using_condition(
    c: Compiler, before: list[exp.Expression], join: exp.Join
) -> exp.Expression | None:
    """``JOIN t2 USING (a)``'s condition: ``t2.a`` equal to the ``a`` of the one table
    before it that has such a column (none or several: refused)."""
    names = [u.name.lower() for u in join.args.get("using") or []]
    if not names:
        return None
    right = join.this
    conditions = []
    for name in names:
        owners = [t for t in before if name in c.catalog.table(t.name).columns]
        if len(owners) != 1:
            raise unsupported(join, "JOIN ... USING a column of several tables before it")
        left = owners[0]
        conditions.append(
            exp.EQ(
                this=exp.column(name, table=left.alias_or_name),
                expression=exp.column(name, table=right.alias_or_name),
            )
        )
    return cast(exp.Expression, exp.and_(*conditions))


def compile_update(c: Compiler, stmt: exp.Update) -> Compiled:
    seen: set[str] = set()
    for a in stmt.expressions:  # (PostgreSQL's check, whether or not a row matches)
        if isinstance(a, exp.EQ) and isinstance(a.this, exp.Column):
            if a.this.name.lower() in seen:
                raise pg_errors.SyntaxError(
                    f'multiple assignments to same column "{shown(a.this.name)}"'
                )
            seen.add(a.this.name.lower())
    scope, meta, table = _target(c, stmt, "UPDATE")
    from_ = stmt.args.get("from_")
    others = _extra_tables(c, scope, [from_.this] if from_ is not None else [])
    where = stmt.args.get("where")
    pred = c.predicate(scope, where.this) if where is not None else None
    constant: list[tuple[ColumnMeta, ParamBuilder]] = []
    computed: list[tuple[ColumnMeta, exp.Expression]] = []
    assigned = [
        a.this.name
        for a in stmt.expressions
        if isinstance(a, exp.EQ) and isinstance(a.this, exp.Column)
    ]
    precomputed.refuse_written(meta, assigned)
    stale = stale_after(c.catalog, meta, assigned)
    for a in stmt.expressions:
        if not isinstance(a, exp.EQ) or not isinstance(a.this, exp.Column):
            raise unsupported(a, "SET item")
        col = meta.column(a.this.name)
        check_assignment(col, a.expression)
        if col.generated is not None:  # (SET g = DEFAULT: computed again)
            stale += [] if col in stale else [col]
            continue
        v = c.value_of(a.expression)
        if v is None and not is_default(a.expression):
            v = engine_value(c, a.expression)
        if v is not None:
            constant.append((col, v))
        elif is_default(a.expression):
            constant.append((col, defaults.builder(col)))
        else:
            computed.append((col, a.expression))
    by_name = {col.name: v for col, v in constant}
    if not computed and all(set(_inputs(c, meta, p)) <= by_name.keys() for p in stale):
        # every input of each computed column it changes is assigned a value: the
        # client computes the new values from the statement's parameters
        constant += [(p, computing(c.catalog, meta, p, by_name)) for p in stale]
        stale = []
    if not computed and not stale:
        sets = []
        for col, v in constant:
            for oc, build in zip(col.onions.values(), sealing(col, v), strict=True):
                sets.append(
                    exp.EQ(this=exp.column(oc.anon, quoted=True), expression=c.param(build))
                )
        out = exp.Update(this=table, expressions=sets)
        if others:
            out.set("from_", exp.From(this=others[0]))
        if pred is not None:
            out.set("where", exp.Where(this=pred))
        plan = Compiled(kind="update", statement_type="UPDATE")
        returning(c, stmt, out, plan, scope)
        plan.sql = server_sql(out)
        plan.params = c.params
        return plan
    if others:
        raise unsupported(stmt, "UPDATE ... FROM with values computed from the rows")
    where_node = where.this if where is not None else None
    plan = _rmw_update(c, scope, meta, table, pred, constant, computed, where_node, stale)
    if stmt.args.get("returning") and plan.rmw is not None:
        # the client writes each row back by ctid; RETURNING rides on those writes, over
        # the table under the alias the items were compiled against
        written = exp.Update(this=table)
        returning(c, stmt, written, plan, scope)
        plan.rmw.returning = server_sql(written.args["returning"])
        plan.rmw.alias = scope.entries[0][2]
    return plan


def _rmw_update(
    c: Compiler,
    scope: Scope,
    meta: Any,
    table: exp.Expression,
    pred: exp.Expression | None,
    constant: list[tuple[ColumnMeta, ParamBuilder]],
    computed: list[tuple[ColumnMeta, exp.Expression]],
    where_node: exp.Expression | None = None,
    stale: Sequence[ColumnMeta] = (),
) -> Compiled:
    """SET x = f(row): SELECT ... FOR UPDATE the rows, compute on the client, write back
    -- with the precomputed columns ``stale`` (their inputs assigned) computed again from
    each row's new values."""
    select_list: list[exp.Expression] = row_layout(scope)
    width = len(select_list)
    assignments: list[tuple[ColumnMeta, Any]] = []
    # (the stored values the assignments read, decrypted together: RmwUpdate.open_row)
    opened: dict[int, ColumnValue] = {}
    c.opened = opened
    try:
        for col, e in computed:
            c.assigning = True  # (a value assigned: the column's type decides how it is stored)
            try:
                fn, _, _ = value_expr(c, scope, e, select_list, {})
            finally:
                c.assigning = False
            assignments.append((col, _row_fn(fn)))
        for col, v in constant:
            assignments.append((col, _param_fn(v)))
        positions = {col.name: i for i, col in enumerate(meta.columns.values(), start=1)}
        for col in stale:
            assignments.append((col, _recomputed(c, meta, col, positions, assignments)))
    finally:
        c.opened = None
    reads = frozenset(v.column.name for v in opened.values())
    # (the columns read fetched, NULL in the others' places: the positions stay)
    fetched = row_layout(scope, reads) + select_list[width:]
    sel = exp.Select(expressions=fetched).from_(table)
    if pred is not None:
        sel.set("where", exp.Where(this=pred))
    sel.set("locks", [exp.Lock(update=True)])
    rmw = RmwUpdate(
        meta,
        server_sql(sel),
        dict(c.params),
        assignments,
        [v for v in opened.values() if v.column.type.element is None],
        reads,
    )
    if len(select_list) == width:  # the values come from the layout alone: cacheable
        rmw.lock_key = pk_key(c, scope, where_node)
    return Compiled(kind="update", rmw=rmw, statement_type="UPDATE")


def _row_fn(fn: RowFn) -> Any:
    return lambda row, params: fn(row)


def _param_fn(v: ParamBuilder) -> Any:
    return lambda row, params: v(params)


def _recomputed(
    c: Compiler,
    meta: Any,
    col: ColumnMeta,
    positions: dict[str, int],
    assignments: Sequence[tuple[ColumnMeta, Any]],
) -> Any:
    """A computed column's value in a row an UPDATE rewrites: its expression over the
    row's new values (each input assigned by the statement, else as read)."""
    expression = computation_of(c.catalog, meta, col)
    new = {c.name: (c, fn) for c, fn in assignments if c.name in expression.inputs}
    # (the row as read holds each column's ciphertext from the onion it decrypts from)
    read = [
        (
            name,
            c.row_value(
                ColumnValue(meta.columns[name], recipes.onion_order(meta.columns[name])[0], i)
            ),
        )
        for name, i in positions.items()
        if name in expression.inputs and name not in new
    ]

    def compute(row: Sequence[Any], params: Any) -> Any:
        values = {name: value(row) for name, value in read}
        for name, (c, fn) in new.items():
            v = fn(row, params)
            values[name] = None if v is None else c.encoding.coerce(v)
        return expression.value(values)

    return compute


def compile_delete(c: Compiler, stmt: exp.Delete) -> Compiled:
    scope, _, table = _target(c, stmt, "DELETE")
    out = exp.Delete(this=table)
    using = stmt.args.get("using") or []
    if using:
        out.set("using", _extra_tables(c, scope, using))
    where = stmt.args.get("where")
    if where is not None:
        out.set("where", exp.Where(this=c.predicate(scope, where.this)))
    plan = Compiled(kind="delete", statement_type="DELETE")
    returning(c, stmt, out, plan, scope)
    plan.sql = server_sql(out)
    plan.params = c.params
    return plan
