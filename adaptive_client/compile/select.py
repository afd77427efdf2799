"""The direct strategy: one SELECT the server evaluates over ciphertexts.

:func:`compile_select` compiles a SELECT of plain tables (joins, WHERE, GROUP BY,
HAVING, ORDER BY, LIMIT, DISTINCT, FOR UPDATE) to one server statement over onion
columns, the client decrypting its rows and computing what only it can (arithmetic in
the select list, the end of a sort on string-prefix ties).  What it cannot compile it
refuses with :class:`~adaptive_client.errors.UnsupportedQuery` naming the construct;
the statement's entry then tries the next strategy.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from ..catalog import recipes
from ..catalog.metadata import OnionColumn
from ..catalog.onions import Cap
from ..errors import EncodingError, UnsupportedQuery
from .compiler import Compiler, server_sql
from .eager import eager_counts
from .ordering import keyed, order_key, textual
from .plan import Compiled, Output, ParamBuilder, Params, SortKey
from .projection import add_select, extreme, value_expr
from .row_keys import has_aggregates, pk_key, row_layout
from .scope import ColumnRef, Scope, server_lock, unsupported
from .settings import NO_KEPT_ROWS, KeptRows

_SELECT_ARGS_OK = {
    "expressions",
    "from_",
    "joins",
    "where",
    "group",
    "having",
    "order",
    "limit",
    "offset",
    "distinct",
    "kind",
    "hint",
    "locks",
    "exclude",
    "operation_modifiers",
}


def _nested_query(node: exp.Expr, stmt: exp.Select) -> bool:
    """A query nested in ``stmt`` that the server statement cannot hold: any but one
    inside an ``EXISTS``, ``col IN (...)`` or ``col = (...)`` of its WHERE (compiled, or
    refused, by ``Compiler.exists``, ``Compiler.in_subquery`` and ``Compiler.comparison``)."""
    if node is stmt or not isinstance(node, exp.Select | exp.Subquery | exp.SetOperation):
        return False
    holder = node.find_ancestor(exp.Exists, exp.In, exp.EQ)
    while holder is not None and holder.find_ancestor(exp.Select) is not stmt:
        holder = holder.find_ancestor(exp.Exists, exp.In, exp.EQ)
    if holder is None:
        return True
    where = stmt.args.get("where")
    parent = holder.parent
    while parent is not None and parent is not where:
        parent = parent.parent
    return where is None or parent is not where


def _keep_row(
    plan: Compiled,
    scope: Scope,
    select_list: list[exp.Expression],
    row_key: Any,
    kept: frozenset[str] | None,
) -> None:
    """``plan`` keeps the row it reads by ``row_key`` for a later read-modify-write of
    it: fetched in the row layout, with the values of ``kept``'s columns (None: all)."""
    plan.lock_key = row_key
    plan.lock_layout = [add_select(select_list, e) for e in row_layout(scope, kept)]
    plan.lock_columns = kept


def compile_select(
    c: Compiler, stmt: exp.Select, *, kept_rows: KeptRows = NO_KEPT_ROWS
) -> Compiled:
    extra = {k for k, v in stmt.args.items() if v} - _SELECT_ARGS_OK
    if extra:
        raise unsupported(stmt, ", ".join(sorted(extra)).upper())
    if any(_nested_query(n, stmt) for n in stmt.walk()):
        raise unsupported(stmt, "subquery")
    if stmt.args.get("from_") and not isinstance(stmt.args["from_"].this, exp.Table):
        raise unsupported(stmt, "FROM (subquery)")
    scope = Scope()
    out = c.from_where(scope, stmt)
    distinct = stmt.args.get("distinct")
    if distinct is not None and distinct.args.get("on"):
        raise unsupported(stmt, "DISTINCT ON")

    items: list[exp.Expression] = []
    for e in stmt.expressions:
        if isinstance(e, exp.Star):
            # (each qualified by its FROM item: a name two tables share is not ambiguous)
            items += [
                exp.column(col, table=alias)
                for alias, table, _ in scope.entries
                for col in table.columns
            ]
        elif isinstance(e, exp.Column) and isinstance(e.this, exp.Star):
            qual = e.table.lower()
            items += [exp.column(r.column.name, table=qual) for r in scope.star(qual)]
        else:
            items.append(e)

    # GROUP BY first: the projection of a grouped column must use the same onion column
    grouped: dict[int, OnionColumn] = {}
    group = stmt.args.get("group")
    c.grouped = group is not None or stmt.args.get("having") is not None
    select_list: list[exp.Expression] = []
    if group is not None:
        keys = []
        for g in group.expressions:
            g = _by_position(g, items)
            if (
                isinstance(g, exp.Column)
                and not g.table
                and not any(g.name.lower() in t.columns for _, t, _ in scope.entries)
            ):  # an output alias (PostgreSQL prefers an input column of the same name)
                g = _by_position(g, items, aliases=True)
            ref = c.column_side(scope, g)
            if ref is None:
                raise unsupported(g, "GROUP BY expression")
            oc = c.require(ref, Cap.EQ)
            grouped[id(ref.column)] = oc
            keys.append(c.col_expr(ref, oc))
        out.set("group", exp.Group(expressions=keys))

    outputs: list[Output] = []
    for e in items:
        fn, name, oid = value_expr(c, scope, e, select_list, grouped, distinct=distinct is not None)
        outputs.append(Output(name, fn, oid))
    visible = len(select_list)

    having = stmt.args.get("having")
    if having is not None:
        out.set("having", exp.Having(this=_having(c, scope, having.this, select_list)))

    plan = Compiled(kind="select", returns_rows=True, statement_type="SELECT")
    order = stmt.args.get("order")
    limit_node, offset_node = stmt.args.get("limit"), stmt.args.get("offset")
    client_sort: list[SortKey] = []
    need_client = False
    first_inexact: int | None = None  # the first server key that only orders a prefix
    # With DISTINCT, PostgreSQL orders only by what is selected: the Ord ciphertext of a
    # selected column joins the select list, hidden -- a function of the selected value,
    # it leaves DISTINCT's rows as they are.
    distinct_keys: set[str] = set()
    if order is not None:
        server_keys = []
        client_only = False  # a key only the client computes: it sorts by every key after
        for o in order.expressions:
            key = _by_position(o.this, items, aliases=True)
            desc = bool(o.args.get("desc"))
            nulls_first = o.args.get("nulls_first")
            nulls_first = desc if nulls_first is None else bool(nulls_first)
            ref = c.column_side(scope, key)
            if client_only:
                # ties of the keys before are ordered by this one, on the client too
                fn, _, oid = value_expr(c, scope, key, select_list, grouped)
                if ref is None and oid in _TEXT_OIDS:
                    raise unsupported(o, "ORDER BY text computed on the client")
                if ref is not None and keyed(ref.column):
                    if textual(ref.column):
                        plan.text_orders.append(ref.column.collation)
                    fn = order_key(fn, ref.column)
                client_sort.append(SortKey(fn, desc, nulls_first))
                continue
            if ref is not None:
                oc = c.require(ref, Cap.ORD, grouped.get(id(ref.column)))
                if distinct is not None:
                    if not _selects_column(c, scope, items, ref):
                        raise unsupported(o, "ORDER BY a column not selected, with DISTINCT")
                    okey = c.col_expr(ref, oc)
                    add_select(select_list, okey)
                    distinct_keys.add(okey.sql("postgres"))
                if id(ref.column) in grouped and group is not None:
                    # equal values <=> equal Ord ciphertexts: grouping by both is the same
                    grp = out.args["group"]
                    okey = c.col_expr(ref, oc)
                    if all(e.sql() != okey.sql() for e in grp.expressions):
                        grp.append("expressions", okey)
                server_keys.append(
                    exp.Ordered(this=c.col_expr(ref, oc), desc=desc, nulls_first=nulls_first)
                )
                exact = oc.ope_exact or oc.innermost == "PLAIN"
                if not exact:
                    need_client = True
                    if first_inexact is None:
                        first_inexact = len(server_keys) - 1
                fn, _, _ = value_expr(
                    c, scope, key, select_list, grouped, distinct=distinct is not None
                )
                if keyed(ref.column):
                    # text orders by its collation, an array by array_cmp: the client
                    # finishes with the key
                    if textual(ref.column):
                        plan.text_orders.append(ref.column.collation)
                    fn = order_key(fn, ref.column)
                client_sort.append(SortKey(fn, desc, nulls_first))
            elif isinstance(key, exp.Count):
                fn, _, _ = value_expr(c, scope, key, select_list, grouped)
                idx = len(select_list) - 1
                server_keys.append(
                    exp.Ordered(
                        this=exp.Literal.number(_pos(select_list, key, c)),
                        desc=desc,
                        nulls_first=nulls_first,
                    )
                )
                client_sort.append(SortKey(fn, desc, nulls_first))
                _ = idx
            else:
                fn, _, oid = value_expr(c, scope, key, select_list, grouped)
                if oid in _TEXT_OIDS:
                    # (text orders by its collation: split execution orders it so)
                    raise unsupported(o, "ORDER BY text computed on the client")
                client_sort.append(SortKey(fn, desc, nulls_first))
                need_client = True
                server_keys = []
                client_only = True
        if server_keys and not (need_client and not server_keys):
            out.set("order", exp.Order(expressions=server_keys))
        if need_client:
            hidden = {e.sql("postgres") for e in select_list[visible:]}
            if distinct is not None and hidden - distinct_keys:
                raise unsupported(order, "ORDER BY a non-selected key with DISTINCT")
            plan.client_sort = client_sort
    if need_client and (limit_node is not None or offset_node is not None):
        if not server_keys or len(server_keys) != len(order.expressions):  # type: ignore[union-attr]
            raise unsupported(stmt, "LIMIT over an order the server cannot compute")
        lim = c.value_of(limit_node.expression) if limit_node is not None else None
        off = c.value_of(offset_node.expression) if offset_node is not None else None
        if (limit_node is not None and lim is None) or (offset_node is not None and off is None):
            raise unsupported(stmt, "non-constant LIMIT/OFFSET")
        plan.client_limit = (lim, off)
        if first_inexact is not None:
            # Rows tied on a string's OPE prefix are told apart, by the rest of the string
            # and by the keys after it, only on the client: the server's order stops at
            # that key, so that FETCH ... WITH TIES keeps every row of the tie.
            out.set("order", exp.Order(expressions=server_keys[: first_inexact + 1]))
        if lim is not None:

            def total(p: Params, lim: ParamBuilder = lim, off: ParamBuilder | None = off) -> int:
                return _int(lim(p)) + (_int(off(p)) if off else 0)

            out.set(
                "limit",
                exp.Fetch(
                    direction="FIRST",
                    count=c.param(total),
                    limit_options=exp.LimitOptions(rows=True, with_ties=True),
                ),
            )
    else:
        if limit_node is not None:
            lim = c.value_of(limit_node.expression)
            if lim is None:
                raise unsupported(stmt, "non-constant LIMIT")
            out.set("limit", exp.Limit(expression=c.param(lim)))
        if offset_node is not None:
            off = c.value_of(offset_node.expression)
            if off is None:
                raise unsupported(stmt, "non-constant OFFSET")
            out.set("offset", exp.Offset(expression=c.param(off)))
    where_node = stmt.args["where"].this if stmt.args.get("where") else None
    # the columns a row read by key keeps for a read-modify-write (None: all, or none
    # where the table is not one the session updates so)
    kept = None
    if len(scope.entries) == 1:
        plan.kept_table = scope.entries[0][1].name
        kept = kept_rows.columns(plan.kept_table)
    if stmt.args.get("locks"):
        out.set("locks", [server_lock(scope, lock) for lock in stmt.args["locks"]])
        row_key = pk_key(c, scope, where_node) if not group and distinct is None else None
        if row_key is not None:
            _keep_row(plan, scope, select_list, row_key, kept)
            plan.locks_rows = True
    elif (
        kept_rows.snapshot
        and kept is not None
        and not group
        and distinct is None
        and not has_aggregates(stmt)
    ):
        # Under REPEATABLE READ or SERIALIZABLE a row read by key also serves a later
        # UPDATE x = x + k of that row in the same transaction (no SELECT FOR UPDATE round
        # trip): the UPDATE targets the version read, by ctid, and if another transaction
        # changed the row since the snapshot it fails with a serialization error -- exactly
        # when the plain UPDATE would.  (Not under READ COMMITTED, where it could miss.)
        # Only for a table the session updates so, and only the columns those updates
        # read: anything more such a read fetches would be work for nothing.
        row_key = pk_key(c, scope, where_node)
        if row_key is not None:
            _keep_row(plan, scope, select_list, row_key, kept)
    if distinct is not None:
        out.set("distinct", exp.Distinct())
    if not select_list:
        select_list.append(exp.Literal.number(1))
    out.set("expressions", select_list)
    plan.sql = server_sql(eager_counts(out))
    plan.params = c.params
    plan.outputs = outputs
    return plan


_TEXT_OIDS = frozenset({25, 1042, 1043})


def _int(v: Any) -> int:
    if v is None:
        return 0
    try:
        return int(v)
    except (TypeError, ValueError):
        raise EncodingError("LIMIT and OFFSET take integers") from None


def _pos(select_list: list[exp.Expression], node: exp.Expression, c: Compiler) -> int:
    text = node.sql("postgres")
    for i, e in enumerate(select_list):
        if e.sql("postgres") == text:
            return i + 1
    return len(select_list)


def _selects_column(c: Compiler, scope: Scope, items: list[exp.Expression], ref: ColumnRef) -> bool:
    """Whether the select list has ``ref``'s column itself (aliased or not)."""
    for item in items:
        r = c.column_side(scope, item.this if isinstance(item, exp.Alias) else item)
        if r is not None and r.alias == ref.alias and r.column is ref.column:
            return True
    return False


def _by_position(
    node: exp.Expression, items: list[exp.Expression], aliases: bool = False
) -> exp.Expression:
    """Resolve ORDER BY / GROUP BY ``1`` and output-alias references to the item."""
    if isinstance(node, exp.Literal) and not node.is_string and str(node.this).isdigit():
        i = int(node.this)  # only an integer is a position (ORDER BY 1.5 is a constant)
        if not 1 <= i <= len(items):
            raise UnsupportedQuery(f"position {i} is not in the select list", "ORDER BY position")
        item = items[i - 1]
        return item.this if isinstance(item, exp.Alias) else item
    if aliases and isinstance(node, exp.Column) and not node.table:
        for item in items:
            if isinstance(item, exp.Alias) and item.alias.lower() == node.name.lower():
                return item.this
    return node


def _having(
    c: Compiler, scope: Scope, node: exp.Expression, select_list: list[exp.Expression]
) -> exp.Expression:
    if isinstance(node, exp.And | exp.Or):
        return type(node)(
            this=_having(c, scope, node.this, select_list),
            expression=_having(c, scope, node.expression, select_list),
        )
    if isinstance(node, exp.Not | exp.Paren):
        return type(node)(this=_having(c, scope, node.this, select_list))
    if isinstance(node, exp.GT | exp.GTE | exp.LT | exp.LTE) and isinstance(
        node.this, exp.Max | exp.Min
    ):
        return _having_extreme(c, scope, node, node.this)
    if isinstance(node, exp.EQ | exp.NEQ | exp.GT | exp.GTE | exp.LT | exp.LTE):
        sides: list[exp.Expression] = []
        for side in (node.this, node.expression):
            if isinstance(side, exp.Count):
                arg = side.this
                if isinstance(arg, exp.Star):
                    sides.append(exp.Count(this=exp.Star()))
                else:
                    inner = arg.expressions[0] if isinstance(arg, exp.Distinct) else arg
                    ref = c.column_side(scope, inner)
                    if ref is None:
                        raise unsupported(side, "HAVING COUNT(expression)")
                    oc = (
                        c.require(ref, Cap.EQ)
                        if isinstance(arg, exp.Distinct)
                        else recipes.onion_order(ref.column)[0]
                    )
                    col = c.col_expr(ref, oc)
                    sides.append(
                        exp.Count(
                            this=exp.Distinct(expressions=[col])
                            if isinstance(arg, exp.Distinct)
                            else col
                        )
                    )
            else:
                v = c.value_of(side)
                if v is None:
                    raise unsupported(node, "HAVING over encrypted aggregates")
                sides.append(c.param(v))
        return type(node)(this=sides[0], expression=sides[1])
    raise unsupported(node, "HAVING condition")


def _having_extreme(
    c: Compiler, scope: Scope, node: exp.Expression, side: exp.Expression
) -> exp.Expression:
    """``max(col) <op> constant`` (or min) in HAVING: the extreme over the Ord onion
    (exact types only) compared with the constant encrypted for that onion."""
    ref = c.column_side(scope, side.this)
    if ref is None:
        raise unsupported(node, "HAVING over encrypted aggregates")
    oc = c.require(ref, Cap.ORD)
    c.exact_order(ref, oc, side)
    v = c.value_of(node.expression)
    if v is None:
        raise unsupported(node, "HAVING over encrypted aggregates")
    server_extreme = extreme(c, side, ref, oc)
    return type(node)(this=server_extreme, expression=c.encrypted_param(ref, oc, Cap.ORD, v))
