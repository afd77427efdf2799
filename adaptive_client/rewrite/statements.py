"""Compile one parsed statement (SELECT, INSERT, UPDATE, DELETE) for the encrypted schema."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any, cast

from psycopg import errors as pg_errors
from sqlglot import exp

from .. import defaults, domains, precomputed, recipes, sequences, views
from ..array_encoding import as_list
from ..collation import Collation
from ..encodings import SUM, TEXT_TYPES
from ..errors import EncodingError, UnsupportedQuery
from ..metadata import Catalog, ColumnMeta, OnionColumn, TableMeta
from ..onions import Cap
from ..sqltext import syntax_error
from ..tablespec import key_column
from .compiler import (
    ColumnRef,
    Compiler,
    Scope,
    server_sql,
    unsupported,
)
from .constants import PositionalParam
from .dependent_keys import with_dependent_keys
from .eager import eager_counts
from .flat_joins import with_flat_joins
from .natural_joins import with_natural_joins
from .plan import Compiled, Output, ParamBuilder, Params, RmwUpdate, RowFn, SortKey
from .positions import check_positions
from .precomputed import with_precomputed
from .projection import add_select, aggregate_oid, extreme, refuse_aggregate, value_expr
from .residual import compile_residual
from .scope import OnionNotBuilt
from .settings import DEFAULT_SETTINGS, Settings, applied
from .string_literals import with_plain_strings

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


def compile_statement(
    catalog: Catalog, stmt: exp.Expression, settings: Settings = DEFAULT_SETTINGS
) -> Compiled:
    """The plan of one parsed statement against the catalog snapshot ``catalog`` under
    ``settings``: a pure function -- it reads nothing from the database and changes
    nothing; what the statement needs first (peels, join adjustments, onions built on
    first use) is in the plan's ``needs``, ``joins`` and ``builds``."""
    try:
        with applied(settings):
            stmt = with_natural_joins(catalog, views.expand(catalog, with_plain_strings(stmt)))
            stmt = with_flat_joins(stmt)
            stmt = with_dependent_keys(catalog, stmt)
            with domains.using(catalog):  # (casts to its enums)
                return _compile_statement(catalog, stmt, settings.snapshot_rows)
    except OnionNotBuilt as first:
        return Compiled(kind="build", builds=[first.need])
    except RecursionError:  # e.g. thousands of ANDs: the rewrite recurses on the tree
        raise UnsupportedQuery("the statement nests too deeply to rewrite", "nesting") from None


def _compile_statement(catalog: Catalog, stmt: exp.Expression, snapshot_rows: bool) -> Compiled:
    check_positions(stmt)
    c = Compiler(catalog)
    if isinstance(stmt, exp.SetOperation) or (
        isinstance(stmt, exp.Select) and stmt.args.get("with_")
    ):
        # split execution (rewrite/residual.py)
        return compile_residual(catalog, stmt, "a set operation or WITH query")
    if isinstance(stmt, exp.Select):
        written, stmt = stmt, with_precomputed(catalog, stmt)
        try:
            out = _select(c, stmt, snapshot_rows=snapshot_rows)
        except UnsupportedQuery as refused:
            if not _client_aggregable(stmt):
                return compile_residual(catalog, written, str(refused))
            c = Compiler(catalog)
            try:
                out = _client_aggregate(c, stmt)
            except UnsupportedQuery:
                return compile_residual(catalog, written, str(refused))
    elif isinstance(stmt, exp.Insert):
        out = _insert(c, stmt)
    elif isinstance(stmt, exp.Update):
        out = _update(c, stmt)
    elif isinstance(stmt, exp.Delete):
        out = _delete(c, stmt)
    else:
        raise unsupported(stmt, f"{type(stmt).__name__} statement")
    out.needs = c.needs
    out.joins = c.joins
    out.tables = c.tables
    return out


# -- SELECT ------------------------------------------------------------------------------


def _nested_query(node: exp.Expr, stmt: exp.Select) -> bool:
    """A query nested in ``stmt`` that the server statement cannot hold: any but one
    inside an ``EXISTS`` or ``col IN (...)`` of its WHERE (compiled, or refused, by
    ``Compiler.exists`` and ``Compiler.in_subquery``)."""
    if node is stmt or not isinstance(node, exp.Select | exp.Subquery | exp.SetOperation):
        return False
    holder = node.find_ancestor(exp.Exists, exp.In)
    while holder is not None and holder.find_ancestor(exp.Select) is not stmt:
        holder = holder.find_ancestor(exp.Exists, exp.In)
    if holder is None:
        return True
    where = stmt.args.get("where")
    parent = holder.parent
    while parent is not None and parent is not where:
        parent = parent.parent
    return where is None or parent is not where


def _select(c: Compiler, stmt: exp.Select, *, snapshot_rows: bool = False) -> Compiled:
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
            items += [exp.column(r.column.name, table=None) for r in scope.star(None)]
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
                if ref is not None and _keyed(ref.column):
                    if _textual(ref.column):
                        plan.text_orders.append(ref.column.collation)
                    fn = _order_key(fn, ref.column)
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
                if _keyed(ref.column):
                    # text orders by its collation, an array by array_cmp: the client
                    # finishes with the key
                    if _textual(ref.column):
                        plan.text_orders.append(ref.column.collation)
                    fn = _order_key(fn, ref.column)
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
    if stmt.args.get("locks"):
        out.set("locks", [lock.copy() for lock in stmt.args["locks"]])
        row_key = _pk_key(c, scope, where_node) if not group and distinct is None else None
        if row_key is not None:
            plan.lock_key = row_key
            plan.lock_layout = [add_select(select_list, e) for e in _row_layout(scope)]
            plan.locks_rows = True
    elif snapshot_rows and not group and distinct is None and not _aggregates(stmt):
        # Under REPEATABLE READ or SERIALIZABLE a row read by key also serves a later
        # UPDATE x = x + k of that row in the same transaction (no SELECT FOR UPDATE round
        # trip): the UPDATE targets the version read, by ctid, and if another transaction
        # changed the row since the snapshot it fails with a serialization error -- exactly
        # when the plain UPDATE would.  (Not under READ COMMITTED, where it could miss.)
        row_key = _pk_key(c, scope, where_node)
        if row_key is not None:
            plan.lock_key = row_key
            plan.lock_layout = [add_select(select_list, e) for e in _row_layout(scope)]
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


def _textual(col: ColumnMeta) -> bool:
    """Does the column hold text (or arrays of text), ordered by its collation?"""
    return (col.type.element or col.type).name in TEXT_TYPES


def _keyed(col: ColumnMeta) -> bool:
    """Do the column's Python values sort otherwise than PostgreSQL's order (text under a
    collation, arrays by array_cmp, inet, money)?  The client then sorts by the encoding's
    ``order_key``."""
    keyed = col.type.name in TEXT_TYPES or col.type.element is not None
    return keyed or col.encoding.keyed_order


def _order_key(fn: RowFn, col: ColumnMeta) -> RowFn:
    """The row's value of a sort key as its order key (text: its collation's; NULL stays
    None)."""
    key = col.encoding.order_key

    def ordered(row: Sequence[Any]) -> Any:
        v = fn(row)
        return None if v is None else key(v)

    return ordered


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


# -- aggregates the client computes ------------------------------------------------------

_AGGS = (exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max)


def _client_aggregable(stmt: exp.Select) -> bool:
    """A single-row aggregate query (no GROUP BY/HAVING/ORDER/DISTINCT) over columns."""
    if any(stmt.args.get(k) for k in ("group", "having", "order", "distinct", "limit", "offset")):
        return False
    for e in stmt.expressions:
        node = e.this if isinstance(e, exp.Alias) else e
        if not isinstance(node, _AGGS):
            return False
        arg = node.this
        if isinstance(arg, exp.Distinct):
            arg = arg.expressions[0] if len(arg.expressions) == 1 else None
        if not isinstance(arg, exp.Column | exp.Star):
            return False
    return True


def _client_aggregate(c: Compiler, stmt: exp.Select) -> Compiled:
    """SELECT SUM(x), ... computed by the client over the decrypted matching rows.

    Used when no onion lets the server compute an aggregate (e.g. SUM without a Sum
    onion): exact, at the price of fetching the qualifying rows.
    """
    scope = Scope()
    out = c.from_where(scope, stmt)
    select_list: list[exp.Expression] = []
    reducers: list[Any] = []
    names: list[Output] = []
    text_orders: list[Collation | None] = []
    for e in stmt.expressions:
        node = e.this if isinstance(e, exp.Alias) else e
        name = e.alias if isinstance(e, exp.Alias) else type(node).__name__.lower()
        arg = node.this
        distinct = isinstance(arg, exp.Distinct)
        if distinct:
            arg = arg.expressions[0]
        fn: RowFn | None = None
        col = None
        if isinstance(arg, exp.Column):
            ref = scope.resolve(arg)
            col = ref.column
            if not isinstance(node, exp.Count):
                refuse_aggregate(type(node), col)
            floats = ("real", "double precision")
            if isinstance(node, exp.Sum | exp.Avg) and col.type.name in floats:
                # PostgreSQL's float sum rounds each addition in its plan's order: the
                # split execution answers it where no order can matter (residual.py)
                raise UnsupportedQuery("a float sum on the client", "float sum")
            fn, _, _ = value_expr(c, scope, arg, select_list, {})
            if isinstance(node, exp.Min | exp.Max) and _textual(col):
                text_orders.append(col.collation)
        reducers.append((type(node), fn, distinct, col))
        names.append(Output(name, lambda row: None, aggregate_oid(type(node), col)))
    if not select_list:
        select_list.append(exp.Literal.number(1))
    out.set("expressions", select_list)

    def reduce(rows: list[Sequence[Any]]) -> tuple[Any, ...]:
        return tuple(_reduce(kind, fn, distinct, col, rows) for kind, fn, distinct, col in reducers)

    plan = Compiled(kind="select", returns_rows=True, statement_type="SELECT")
    plan.sql = server_sql(out)
    plan.params = c.params
    plan.outputs = names
    plan.reduce = reduce
    plan.text_orders = text_orders
    return plan


def _reduce(
    kind: type, fn: RowFn | None, distinct: bool, col: Any, rows: list[Sequence[Any]]
) -> Any:
    from .numeric import pg_avg

    if fn is None:  # COUNT(*)
        return len(rows)
    values = [v for v in (fn(r) for r in rows) if v is not None]
    if distinct:
        values = list(set(values))
    if kind is exp.Count:
        return len(values)
    if not values:
        return None
    if kind in (exp.Min, exp.Max):
        pick = min if kind is exp.Min else max
        if col is not None and _keyed(col):
            # the collation's order; an array as psycopg returns it (a list)
            return as_list(pick(values, key=col.encoding.order_key))
        return pick(values)
    if col is not None and col.encoding.keyed_order and SUM in col.encoding.onions:
        # money: summed as its Sum onion is
        return col.encoding.from_hom_sum(sum(col.encoding.to_hom(v) for v in values))
    total = sum(values)
    if kind is exp.Sum:
        # typed as PostgreSQL types SUM: bigint for small ints, numeric for bigint/numeric
        name = col.type.name
        if name in ("smallint", "integer"):
            return int(total)
        if name == "bigint":
            return Decimal(total)
        if name == "numeric" and col.type.scale is not None:
            return Decimal(total).quantize(Decimal(1).scaleb(-col.type.scale))
        return total
    return pg_avg(total, len(values), col.type)


# -- INSERT ------------------------------------------------------------------------------


def _target(c: Compiler, node: exp.Expression) -> tuple[Any, list[str] | None, str]:
    """The INSERT's table, its column list (None: all) and the name it goes by."""
    cols = None
    if isinstance(node, exp.Schema):
        cols = [i.name.lower() for i in node.expressions]
        node = node.this
    if not isinstance(node, exp.Table):
        raise unsupported(node, "INSERT target")
    meta = c.catalog.table(node.name)
    return meta, cols, (node.alias or meta.name).lower()


def engine_value(c: Compiler, node: exp.Expression) -> ParamBuilder | None:
    """A value written that depends on the statement's parameters and constants only
    (``upper(%s)``, ``%s + 1``, ``now() + interval '1 day'``): computed per execution by
    the client engine, as a SELECT of it without FROM, with PostgreSQL's semantics; the
    column's encoding then takes it as an assignment does.  None where it reads a column
    or a subquery (a row's own values: not a value of the statement)."""
    if node.find(exp.Column, exp.Subquery, exp.Select, exp.Star) is not None:
        return None
    from .residual import compile_residual

    plan = compile_residual(c.catalog, exp.Select(expressions=[node.copy()]))
    assert plan.residual is not None
    finish = plan.residual.finish

    def build(params: Params) -> Any:
        return finish(_no_fetch, params)[0][0]

    return build


def _no_fetch(i: int) -> list[list[Any]]:
    raise AssertionError("a SELECT without FROM fetches nothing")


def _insert(c: Compiler, stmt: exp.Insert) -> Compiled:
    for key in ("overwrite", "partition", "where"):
        if stmt.args.get(key):
            raise unsupported(stmt, f"INSERT ... {key.upper()}")
    meta, cols, alias = _target(c, stmt.this)
    c.tables.append(meta)
    scope = Scope()
    server_alias = scope.add(alias, meta)
    # without a column list, the values fill the table's leading columns (as many as
    # there are values), the rest take their defaults
    named = bool(cols)
    cols = cols or list(meta.columns)
    if not named:
        cols = cols[: _source_width(stmt.expression, len(cols))]
    precomputed.refuse_written(meta, cols)
    for name in cols:
        meta.column(name)
    values = stmt.expression
    if values is None and stmt.args.get("default"):  # INSERT ... DEFAULT VALUES
        cols, values = [], exp.Values(expressions=[exp.Tuple(expressions=[])])
    if isinstance(values, exp.Select | exp.SetOperation | exp.Subquery):
        return _insert_select(c, stmt, meta, cols)
    if not isinstance(values, exp.Values):
        raise unsupported(stmt, "INSERT source")
    storage: list[tuple[ColumnMeta, OnionColumn]] = [
        (col, oc) for col in meta.stored_columns for oc in col.onions.values()
    ]
    rows: list[exp.Tuple] = []
    row_values: list[dict[str, ParamBuilder]] = []  # per row, every column's value
    widths = {len(_row_items(tup)) for tup in values.expressions}
    if len(widths) > 1:
        raise syntax_error("VALUES lists must all be the same length", None)
    for tup in values.expressions:
        exprs = _row_items(tup)
        if len(exprs) != len(cols):
            raise syntax_error(
                "INSERT has more expressions than target columns"
                if len(exprs) > len(cols)
                else "INSERT has more target columns than expressions",
                None,
            )
        given: dict[str, ParamBuilder | None] = {}
        for name, e in zip(cols, exprs, strict=True):
            if isinstance(e, exp.Var) and e.name.upper() == "DEFAULT":
                given[name] = None
                continue
            if meta.column(name).identity == "always":
                raise pg_errors.GeneratedAlways(
                    f'cannot insert a non-DEFAULT value into column "{name}"'
                )
            v = c.value_of(e)
            if v is None:
                v = _drawn_from_sequence(c.catalog, e)
            if v is None:
                v = engine_value(c, e)
            if v is None:
                raise unsupported(e, "non-constant value in INSERT")
            given[name] = v
        effective = {
            col.name: given.get(col.name) or defaults.builder(col) for col in meta.columns.values()
        }
        for col in meta.precomputed.values():
            effective[col.name] = _precomputing(meta, col, effective)
        row_values.append(effective)
        # (the VALUES parameters are made by plan.bulk: these builders, one per onion, are
        # their placeholders, and what Compiled.bind would call without it)
        rows.append(
            exp.Tuple(
                expressions=[
                    c.param(_encrypting(col, oc, effective[col.name])) for col, oc in storage
                ]
            )
        )
    target = exp.Schema(
        this=exp.Table(
            this=exp.to_identifier(meta.anon, quoted=True),
            alias=exp.TableAlias(this=exp.to_identifier(server_alias)),
        ),
        expressions=[exp.to_identifier(oc.anon, quoted=True) for _, oc in storage],
    )
    out = exp.Insert(this=target, expression=exp.Values(expressions=rows))
    plan = Compiled(kind="insert", statement_type="INSERT")
    # The VALUES parameters, made before ON CONFLICT's and RETURNING's, all at once and
    # column by column: the given values are bound (coerced, checked) before the defaults
    # are drawn, so that a value PostgreSQL rejects costs no sequence number, as on the
    # server.
    ordered = sorted(meta.columns.values(), key=lambda col: col.name not in cols)
    ordered += meta.precomputed.values()
    if len(rows) > 1:
        plan.bulk = _bulk_encrypting(ordered, storage, row_values)
    else:
        plan.bulk = _row_encrypting(ordered, storage, row_values[0])
    plan.bulk_size = len(rows) * len(storage)
    _returning(c, stmt, out, plan, scope)  # (RETURNING cannot name EXCLUDED)
    if stmt.args.get("conflict") is not None:
        out.set("conflict", _on_conflict(c, scope, meta, stmt.args["conflict"]))
    plan.sql = server_sql(out)
    plan.params = c.params
    return plan


def _drawn_from_sequence(catalog: Catalog, e: exp.Expression) -> ParamBuilder | None:
    """``nextval('name')`` as a value: drawn by the client, as a serial column's."""
    name = defaults.sequence_named(e)
    if name is None:
        return None
    plain, anon = sequences.named(catalog, name)
    if anon is None:
        return None
    return defaults.sequence_builder(plain, anon)


def _row_items(row: exp.Expression) -> list[exp.Expression]:
    """The values of one VALUES row."""
    return row.expressions if isinstance(row, exp.Tuple) else [row]


def _source_width(source: exp.Expression | None, columns: int) -> int:
    """How many columns an INSERT without a column list fills: its VALUES rows' or
    SELECT's width (one past the table's columns where there are too many, for the
    error), all of them for DEFAULT VALUES or a source not known here."""
    if isinstance(source, exp.Values) and source.expressions:
        return min(max(len(_row_items(r)) for r in source.expressions), columns + 1)
    while isinstance(source, exp.Subquery):
        source = source.this
    if isinstance(source, exp.Select) and not any(
        isinstance(e, exp.Star) or (isinstance(e, exp.Column) and e.is_star)
        for e in source.expressions
    ):
        return min(len(source.expressions), columns + 1)
    return columns


def _insert_select(c: Compiler, stmt: exp.Insert, meta: Any, cols: list[str]) -> Compiled:
    """INSERT ... SELECT through the client: the source rows are read decrypted (the
    server cannot move values between columns under different keys), then inserted,
    encrypted for the target's onions, in the same transaction."""
    source_node = stmt.expression
    while isinstance(source_node, exp.Subquery):
        source_node = source_node.this
    rest = stmt.copy()
    rest.set("expression", None)
    if rest.find(exp.Placeholder) is not None:
        raise unsupported(stmt, "parameters outside the SELECT of INSERT ... SELECT")
    source = _compile_statement(c.catalog, source_node, False)
    if len(source.outputs) != len(cols):
        raise syntax_error(
            "INSERT has more expressions than target columns"
            if len(source.outputs) > len(cols)
            else "INSERT has more target columns than expressions",
            None,
        )
    row = exp.Tuple(expressions=[exp.Placeholder(this=f"u{i}") for i in range(len(cols))])
    target_stmt = stmt.copy()
    target_stmt.set(
        "this",
        exp.Schema(
            this=stmt.this.this if isinstance(stmt.this, exp.Schema) else stmt.this,
            expressions=[exp.to_identifier(n) for n in cols],
        ),
    )
    target_stmt.set("expression", exp.Values(expressions=[row]))
    target_c = Compiler(c.catalog)
    target = _insert(target_c, target_stmt)
    target.needs = target_c.needs
    target.tables = target_c.tables
    c.needs += source.needs + target.needs
    c.joins += source.joins
    c.tables += source.tables
    plan = Compiled(kind="insert", statement_type="INSERT")
    plan.insert_select = (source, target)
    plan.text_orders = source.text_orders  # the rows chosen by ORDER BY ... LIMIT
    plan.outputs, plan.returns_rows = target.outputs, target.returns_rows
    return plan


def _row_encrypting(
    columns: list[ColumnMeta],
    storage: list[tuple[ColumnMeta, OnionColumn]],
    effective: dict[str, ParamBuilder],
) -> Callable[[Params], list[Any]]:
    """The VALUES parameters of a single-row INSERT at once, in the statement's order: each
    column's value read (a plain %s by index), coerced once for all its onions, in the
    order of ``columns`` (given values before defaults); then every onion's stored value
    in one call (:class:`recipes.RowSealer`)."""
    position = {col.name: i for i, col in enumerate(columns)}
    sealer = recipes.RowSealer([(position[col.name], col, oc) for col, oc in storage])
    getters = [
        (b.index if isinstance(b, PositionalParam) else -1, b, col.encoding.coerce)
        for col in columns
        for b in (effective[col.name],)
    ]
    needed = 1 + max((i for i, _, _ in getters), default=-1)

    def bind(p: Params) -> list[Any]:
        kind = type(p)
        by_index = (kind is tuple or kind is list or not isinstance(p, Mapping | str | bytes)) and (
            len(p) >= needed
        )  # else the builders raise the typed error
        seq = cast(Sequence[Any], p)
        values = []
        for i, build, coerce in getters:
            x = seq[i] if by_index and i >= 0 else build(p)
            values.append(None if x is None else coerce(x))
        return sealer(values)

    return bind


def _bulk_encrypting(
    columns: list[ColumnMeta],
    storage: list[tuple[ColumnMeta, OnionColumn]],
    row_values: list[dict[str, ParamBuilder]],
) -> Callable[[Params], list[Any]]:
    """The VALUES parameters of a multi-row INSERT at once, in the statement's order: each
    column's values coerced once, each onion's ciphertexts made by one batched call (one
    call per layer per onion instead of one dispatch per value)."""
    width = len(storage)
    # Columns whose every row is a plain %s: their values are read by index once the
    # parameter count is checked (the usual batch: INSERT ... VALUES (%s, ...), ...).
    indexes: dict[str, list[int]] = {}
    for col in columns:
        builders = [row[col.name] for row in row_values]
        if all(isinstance(b, PositionalParam) for b in builders):
            indexes[col.name] = [b.index for b in builders]  # type: ignore[attr-defined]
    needed = 1 + max((i for idx in indexes.values() for i in idx), default=-1)

    def bind(p: Params) -> list[Any]:
        by_index = (
            not isinstance(p, Mapping | str | bytes) and len(p) >= needed
        )  # else the builders raise the typed error
        coerced: dict[str, list[Any]] = {}
        for col in columns:
            name, coerce = col.name, col.encoding.coerce
            idx = indexes.get(name) if by_index else None
            if idx is not None:
                seq = cast(Sequence[Any], p)
                coerced[name] = [None if (x := seq[i]) is None else coerce(x) for i in idx]
            else:
                coerced[name] = [
                    None if (x := row[name](p)) is None else coerce(x) for row in row_values
                ]
        out: list[Any] = [None] * (width * len(row_values))
        for j, (col, oc) in enumerate(storage):
            values = coerced[col.name]
            present = [i for i, x in enumerate(values) if x is not None]
            cts = recipes.encrypt_many(col, oc, [values[i] for i in present])
            for i, ct in zip(present, cts, strict=True):
                out[i * width + j] = ct
        return out

    return bind


def is_default(node: exp.Expression) -> bool:
    """``DEFAULT`` as a value (sqlglot reads it as a keyword in VALUES, a column in SET)."""
    return (
        isinstance(node, exp.Var | exp.Column)
        and not (isinstance(node, exp.Column) and (node.table or node.this.quoted))
        and node.name.upper() == "DEFAULT"
    )


def _precomputing(
    meta: TableMeta, col: ColumnMeta, effective: dict[str, ParamBuilder]
) -> ParamBuilder:
    """A precomputed column's value in an inserted row, from the row's plain values."""
    expression = precomputed.expression_of(meta, col)
    inputs = [(name, meta.columns[name], effective[name]) for name in expression.inputs]

    def build(p: Params) -> Any:
        row = {name: None if (x := b(p)) is None else c.encoding.coerce(x) for name, c, b in inputs}
        return precomputed.value_of(col, expression, row)

    return build


def _encrypting(col: ColumnMeta, oc: OnionColumn, v: ParamBuilder) -> ParamBuilder:
    # A single-row statement coerces per onion (cheap next to encryption); a multi-row
    # INSERT coerces each column once (see _bulk_encrypting).
    def build(p: Params) -> Any:
        x = v(p)
        if x is None:
            return None
        return recipes.encrypt(col, oc, col.encoding.coerce(x))

    return build


def _returning(
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
            for alias, table, server_alias in scope.entries:
                if server_alias == "excluded":  # ON CONFLICT's row is not returned
                    continue
                if qual is None or qual == alias:
                    items += [exp.column(col, table=alias) for col in table.columns]
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


def _on_conflict(c: Compiler, scope: Scope, meta: Any, node: exp.OnConflict) -> exp.OnConflict:
    """ON CONFLICT over the keys' ciphertexts: the conflict target names the key columns'
    Eq onions (the unique index the server enforces); DO UPDATE SET writes every onion of
    a column, from EXCLUDED's onions or from encrypted constants."""
    out = exp.OnConflict()
    if node.args.get("constraint") is not None:
        name = node.args["constraint"].name.lower()
        anon = next((a for a, n in meta.constraints.items() if n == name), None)
        if anon is None and (name != f"{meta.name}_pkey" or not meta.primary_key):
            raise pg_errors.UndefinedObject(
                f'constraint "{name}" for table "{meta.name}" does not exist'
            )
        if anon is not None:
            out.set("constraint", exp.to_identifier(anon, quoted=True))
            keys = []
        else:
            keys = list(meta.primary_key)
    else:
        keys = []
        for k in node.args.get("conflict_keys") or []:
            col = k.this if isinstance(k, exp.Ordered) else k
            if not isinstance(col, exp.Column | exp.Identifier):
                raise unsupported(node, "ON CONFLICT over an expression")
            keys.append(meta.column(col.name).name)
    if keys:
        out.set(
            "conflict_keys",
            [exp.to_identifier(key_column(meta, k).anon, quoted=True) for k in keys],
        )
    action = node.args.get("action")
    verb = action.name.upper() if action is not None else ""
    if verb == "DO NOTHING":
        out.set("action", exp.var("DO NOTHING"))
        return out
    if verb != "DO UPDATE":
        raise unsupported(node, f"ON CONFLICT {verb}")
    if not keys and out.args.get("constraint") is None:
        raise UnsupportedQuery(
            "ON CONFLICT DO UPDATE requires inference specification or constraint name",
            "ON CONFLICT",
        )
    scope.add("excluded", meta, server_alias="excluded")
    sets: list[exp.Expression] = []
    for a in node.expressions:
        if not isinstance(a, exp.EQ) or not isinstance(a.this, exp.Column):
            raise unsupported(a, "ON CONFLICT SET item")
        col = meta.column(a.this.name)
        src = a.expression
        if (
            isinstance(src, exp.Column)
            and (src.table or "").lower() == "excluded"
            and src.name.lower() == col.name
        ):
            for oc in col.onions.values():
                sets.append(
                    exp.EQ(
                        this=exp.column(oc.anon, quoted=True),
                        expression=exp.column(oc.anon, table="excluded", quoted=True),
                    )
                )
            continue
        v = c.value_of(src)
        if v is None and is_default(src):
            v = defaults.builder(col)
        if v is None:
            raise unsupported(a, "ON CONFLICT DO UPDATE SET computed from the rows")
        for oc in col.onions.values():
            sets.append(
                exp.EQ(
                    this=exp.column(oc.anon, quoted=True),
                    expression=c.param(_encrypting(col, oc, v)),
                )
            )
    out.set("action", exp.var("DO UPDATE"))
    out.set("expressions", sets)
    where = node.args.get("where")
    if where is not None:
        out.set("where", exp.Where(this=c.predicate(scope, where.this)))
    return out


# -- UPDATE / DELETE ---------------------------------------------------------------------


def _single_table(c: Compiler, scope: Scope, node: exp.Expression) -> tuple[Any, exp.Expression]:
    if not isinstance(node, exp.Table):
        raise unsupported(node, "UPDATE/DELETE target")
    meta = c.catalog.table(node.name)
    c.tables.append(meta)
    alias = (node.alias or node.name).lower()
    server_alias = scope.add(alias, meta)
    return meta, exp.Table(
        this=exp.to_identifier(meta.anon, quoted=True),
        alias=exp.TableAlias(this=exp.to_identifier(server_alias)),
    )


def _extra_tables(
    c: Compiler, scope: Scope, nodes: Sequence[exp.Expression]
) -> list[exp.Expression]:
    """UPDATE ... FROM / DELETE ... USING: the other tables, joined on the server (their
    join conditions, in WHERE, compare ciphertexts under shared keys)."""
    return [c.table_node(scope, n) for n in nodes]


def _update(c: Compiler, stmt: exp.Update) -> Compiled:
    for key in ("joins", "order", "limit"):
        if stmt.args.get(key):
            raise unsupported(stmt, f"UPDATE ... {key.upper().rstrip('_')}")
    scope = Scope()
    meta, table = _single_table(c, scope, stmt.this)
    from_ = stmt.args.get("from_")
    others = _extra_tables(c, scope, [from_.this] if from_ is not None else [])
    where = stmt.args.get("where")
    pred = c.predicate(scope, where.this) if where is not None else None
    constant: list[tuple[ColumnMeta, ParamBuilder]] = []
    computed: list[tuple[ColumnMeta, exp.Expression]] = []
    precomputed.refuse_update(
        meta,
        [
            a.this.name
            for a in stmt.expressions
            if isinstance(a, exp.EQ) and isinstance(a.this, exp.Column)
        ],
    )
    for a in stmt.expressions:
        if not isinstance(a, exp.EQ) or not isinstance(a.this, exp.Column):
            raise unsupported(a, "SET item")
        col = meta.column(a.this.name)
        v = c.value_of(a.expression)
        if v is None and not is_default(a.expression):
            v = engine_value(c, a.expression)
        if v is not None:
            constant.append((col, v))
        elif is_default(a.expression):
            constant.append((col, defaults.builder(col)))
        else:
            computed.append((col, a.expression))
    if not computed:
        sets = []
        for col, v in constant:
            for oc in col.onions.values():
                sets.append(
                    exp.EQ(
                        this=exp.column(oc.anon, quoted=True),
                        expression=c.param(_encrypting(col, oc, v)),
                    )
                )
        out = exp.Update(this=table, expressions=sets)
        if others:
            out.set("from_", exp.From(this=others[0]))
        if pred is not None:
            out.set("where", exp.Where(this=pred))
        plan = Compiled(kind="update", statement_type="UPDATE")
        _returning(c, stmt, out, plan, scope)
        plan.sql = server_sql(out)
        plan.params = c.params
        return plan
    if others:
        raise unsupported(stmt, "UPDATE ... FROM with values computed from the rows")
    where_node = where.this if where is not None else None
    plan = _rmw_update(c, scope, meta, table, pred, constant, computed, where_node)
    if stmt.args.get("returning") and plan.rmw is not None:
        # the client writes each row back by ctid; RETURNING rides on those writes, over
        # the table under the alias the items were compiled against
        written = exp.Update(this=table)
        _returning(c, stmt, written, plan, scope)
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
) -> Compiled:
    """SET x = f(row): SELECT ... FOR UPDATE the rows, compute on the client, write back."""
    select_list: list[exp.Expression] = _row_layout(scope)
    width = len(select_list)
    assignments: list[tuple[ColumnMeta, Any]] = []
    for col, e in computed:
        c.assigning = True  # (a value assigned: the column's type decides how it is stored)
        try:
            fn, _, _ = value_expr(c, scope, e, select_list, {})
        finally:
            c.assigning = False
        assignments.append((col, _row_fn(fn)))
    for col, v in constant:
        assignments.append((col, _param_fn(v)))
    sel = exp.Select(expressions=select_list).from_(table)
    if pred is not None:
        sel.set("where", exp.Where(this=pred))
    sel.set("locks", [exp.Lock(update=True)])
    rmw = RmwUpdate(meta, server_sql(sel), dict(c.params), assignments)
    if len(select_list) == width:  # the values come from the layout alone: cacheable
        rmw.lock_key = _pk_key(c, scope, where_node)
    return Compiled(kind="update", rmw=rmw, statement_type="UPDATE")


def _aggregates(stmt: exp.Select) -> bool:
    return any(isinstance(e, exp.AggFunc) for e in stmt.find_all(exp.AggFunc))


def _row_layout(scope: Scope) -> list[exp.Expression]:
    """ctid and, in table order, the onion each column decrypts from: the shape in which
    locked rows are fetched, whether by an RMW UPDATE or by an earlier SELECT FOR UPDATE."""
    _, meta, alias = scope.entries[0]
    out: list[exp.Expression] = [exp.column("ctid", table=alias)]
    for col in meta.columns.values():
        oc = recipes.onion_order(col)[0]
        out.append(exp.column(oc.anon, table=alias, quoted=True))
    return out


def _pk_key(c: Compiler, scope: Scope, where: exp.Expression | None) -> Any:
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

    def key(p: Params) -> Any:
        return (meta.anon, tuple(e.coerce(b(p)) for e, b in zip(encs, builders, strict=True)))

    return key


def _row_fn(fn: RowFn) -> Any:
    return lambda row, params: fn(row)


def _param_fn(v: ParamBuilder) -> Any:
    return lambda row, params: v(params)


def _delete(c: Compiler, stmt: exp.Delete) -> Compiled:
    for key in ("joins", "order", "limit"):
        if stmt.args.get(key):
            raise unsupported(stmt, f"DELETE ... {key.upper()}")
    scope = Scope()
    _, table = _single_table(c, scope, stmt.this)
    out = exp.Delete(this=table)
    using = stmt.args.get("using") or []
    if using:
        out.set("using", _extra_tables(c, scope, using))
    where = stmt.args.get("where")
    if where is not None:
        out.set("where", exp.Where(this=c.predicate(scope, where.this)))
    plan = Compiled(kind="delete", statement_type="DELETE")
    _returning(c, stmt, out, plan, scope)
    plan.sql = server_sql(out)
    plan.params = c.params
    return plan
