"""The client-aggregate strategy: a single-row aggregate query the server cannot compute.

``SELECT sum(x), count(DISTINCT y) ... FROM ... WHERE ...`` where no onion lets the
server aggregate: the server filters, the client decrypts the qualifying rows and
reduces them with PostgreSQL's result types -- exact, at the price of fetching them.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from sqlglot import exp

from ..catalog import recipes
from ..engine.numeric import pg_avg
from ..errors import UnsupportedQuery
from ..values.array_encoding import as_list
from ..values.collation import Collation
from ..values.encoding_base import EXACT
from ..values.encodings import SUM
from ..values.interval_encoding import PgInterval, interval_value, intervals_as_written
from ..values.interval_math import interval_div, interval_sum
from ..values.numeric_encodings import exact_sum
from .compiler import Compiler, server_sql
from .ordering import keyed, textual
from .plan import ColumnValue, Compiled, Output, RowFn, open_rows, row_opening
from .projection import aggregate_oid, refuse_aggregate, value_expr
from .scope import Scope

_AGGS = (exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max)


def client_aggregable(stmt: exp.Select) -> bool:
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


def compile_client_aggregate(c: Compiler, stmt: exp.Select) -> Compiled:
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
            if isinstance(node, exp.Min | exp.Max) and textual(col):
                text_orders.append(col.collation)
        reducers.append((type(node), _ColumnReader.of(fn), distinct, col))
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


class _ColumnReader:
    """The values an aggregate reads from the server's rows: a stored column's opened in
    one call for the whole result (the compiled row opener, or the Python path's
    column-wise decryption), any other expression computed row by row."""

    __slots__ = ("_fn", "_opening", "_outputs")

    def __init__(self, fn: RowFn) -> None:
        self._fn = fn
        self._outputs = [Output("value", fn)] if type(fn) is ColumnValue else None
        self._opening = row_opening(self._outputs) if self._outputs is not None else None

    @classmethod
    def of(cls, fn: RowFn | None) -> _ColumnReader | None:
        return None if fn is None else cls(fn)

    def __call__(self, rows: list[Sequence[Any]]) -> list[Any]:
        if self._outputs is None:
            return [self._fn(r) for r in rows]
        # (a connection made with native=False opens in Python alone, as its results)
        opening = self._opening if recipes.COMPILED.get() else None
        return [r[0] for r in open_rows(self._outputs, [tuple(r) for r in rows], opening)]


def _distinct(values: list[Any]) -> list[Any]:
    """The distinct values, NaN once: PostgreSQL's NaN equals itself (Python's is
    unequal to every NaN, itself included, and hashed by identity)."""
    out = list({v for v in values if v == v})
    nan = next((v for v in values if v != v), None)
    return out if nan is None else [*out, nan]


def _interval_aggregate(
    kind: type, read: _ColumnReader, distinct: bool, rows: list[Sequence[Any]]
) -> Any:
    """sum / avg of an interval column as PostgreSQL computes them, on the fields it
    stores (months, days, microseconds: a timedelta has counted a month 30 days and a
    year 365, so '6 mons' + '6 mons' would not be '1 year')."""
    with intervals_as_written():
        values = [v for v in read(rows) if v is not None]
    if any(not isinstance(v, PgInterval) for v in values):
        raise UnsupportedQuery("sum or avg of an interval column without its exact fields")
    if distinct:
        # (equal spans of other fields -- '1 mon' and '30 days' -- are one value to
        # PostgreSQL, and which of them it keeps depends on its sort)
        by_span: dict[int, set[PgInterval]] = {}
        for v in values:
            by_span.setdefault(v.span, set()).add(v)
        if any(len(kept) > 1 for kept in by_span.values()):
            raise UnsupportedQuery("sum or avg of DISTINCT intervals written differently")
        values = [next(iter(kept)) for kept in by_span.values()]
    if not values:
        return None
    total = interval_sum(values)
    return interval_value(total if kind is exp.Sum else interval_div(total, float(len(values))))


def _reduce(
    kind: type, read: _ColumnReader | None, distinct: bool, col: Any, rows: list[Sequence[Any]]
) -> Any:
    if read is None:  # COUNT(*)
        return len(rows)
    if kind in (exp.Sum, exp.Avg) and col is not None and col.type.name == "interval":
        return _interval_aggregate(kind, read, distinct, rows)
    values = [v for v in read(rows) if v is not None]
    if distinct and kind not in (exp.Min, exp.Max):  # (the same extremes either way)
        values = _distinct(values)
    if kind is exp.Count:
        return len(values)
    if not values:
        return None
    if kind in (exp.Min, exp.Max):
        pick = min if kind is exp.Min else max
        if col is not None and (keyed(col) or any(v != v for v in values)):
            # the collation's order; an array as psycopg returns it (a list); NaN above
            # every number, as PostgreSQL orders it
            return as_list(pick(values, key=col.encoding.order_key))
        return pick(values)
    if col is not None and col.encoding.keyed_order and SUM in col.encoding.onions:
        # money: summed as its Sum onion is
        return col.encoding.from_hom_sum(sum(col.encoding.to_hom(v) for v in values))
    total = exact_sum(values) if isinstance(values[0], Decimal) else sum(values)
    if kind is exp.Sum:
        # typed as PostgreSQL types SUM: bigint for small ints, numeric for bigint/numeric
        name = col.type.name
        if name in ("smallint", "integer"):
            return int(total)
        if name == "bigint":
            return Decimal(total)
        if name == "numeric" and col.type.scale is not None:
            return Decimal(total).quantize(Decimal(1).scaleb(-col.type.scale), context=EXACT)
        return total
    return pg_avg(total, len(values), col.type)
