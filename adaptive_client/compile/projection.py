"""The select list's items as the client computes them: a function of the server's row.

:func:`value_expr` turns an item into the server expressions it needs (an onion column
to decrypt, an aggregate over ciphertexts) appended to the server's select list, and a
function of the fetched row giving the item's value, with its output name and type OID.
What PostgreSQL computes from the values (arithmetic, ``||``, the average of a sum) the
client computes after decryption, with PostgreSQL's semantics.
"""

from __future__ import annotations

import datetime as _dt
from decimal import Decimal
from typing import Any

from psycopg import errors as pg_errors
from psycopg import postgres
from sqlglot import exp

from ..catalog import recipes
from ..catalog.metadata import ColumnMeta, OnionColumn
from ..catalog.onions import Cap, Onion
from ..catalog.usertypes import EnumType
from ..engine.numeric import NUMBER_OIDS, int_range, pg_arith, pg_avg, pg_negate, result_oid
from ..errors import UnsupportedQuery
from ..values.clock import OIDS as CLOCK_OIDS
from ..values.clock import clock_kind, clock_name
from .aggregate_types import NO_EXTREMES
from .compiler import Compiler
from .constants import cast_target, concat_text
from .plan import CURRENT_PARAMS, AsheSum, ColumnValue, RowFn, StoredValue
from .scope import ColumnRef, Scope, unsupported

_OIDS = {
    "smallint": 21,
    "integer": 23,
    "bigint": 20,
    "numeric": 1700,
    "real": 700,
    "double precision": 701,
    "text": 25,
    "varchar": 1043,
    "char": 1042,
    "date": 1082,
    "timestamp": 1114,
    "boolean": 16,
}


_TEXT_OIDS = frozenset({25, 1043})
_EXTREME_OIDS = {1043: 25}  # varchar -> text (min/max)


# the column types sum() and avg() take (of those a Sum onion may hold)
_SUMMABLE = frozenset(
    {"smallint", "integer", "bigint", "numeric", "real", "double precision", "interval", "money"}
)


# the type of sum(column) by the column's: bigint for the smaller integers, numeric for
# bigint and numeric, the float's own for floats (PostgreSQL's sum aggregates)
_SUM_OIDS = {
    "smallint": 20, "integer": 20, "bigint": 1700, "real": 700, "double precision": 701,
    "money": 790, "interval": 1186,
}  # fmt: skip


def refuse_aggregate(kind: type, column: ColumnMeta) -> None:
    """PostgreSQL's 42883 where it has no such aggregate of the column's type: sum(text),
    avg(date), avg(money), min(macaddr), max(bit).  sum / avg of a time are PostgreSQL's
    over the interval it casts the time to: refused."""
    name = column.type.name
    if kind in (exp.Sum, exp.Avg) and name == "time":
        raise UnsupportedQuery("sum or avg of a time (PostgreSQL's, of it cast to interval)")
    missing = (
        name not in _SUMMABLE or (kind is exp.Avg and name == "money")
        if kind in (exp.Sum, exp.Avg)
        else kind in (exp.Min, exp.Max) and name in NO_EXTREMES
    )
    if missing:
        raise pg_errors.UndefinedFunction(
            f"function {kind.__name__.lower()}({column.type.sql()}) does not exist"
        )


def aggregate_oid(kind: type, column: ColumnMeta | None) -> int:
    """The type of an aggregate of ``column`` (None: of ``*``) as PostgreSQL gives it."""
    name = column.type.name if column is not None else ""
    if kind is exp.Count:
        return 20
    if kind is exp.Sum:
        return _SUM_OIDS.get(name, 1700)
    if kind is exp.Avg:
        return 701 if name in ("real", "double precision") else 1186 if name == "interval" else 1700
    if column is None:
        return 25
    # min, max: the column's own type, or the one whose aggregate PostgreSQL resolves to
    # (varchar has none of its own: text's)
    return _EXTREME_OIDS.get(column.type.oid, column.type.oid)


def _constant_oid(node: exp.Expression) -> int:
    """The type PostgreSQL gives a constant select-list item: an integer literal is
    integer, bigint or numeric by its size, one with a point or exponent numeric, TRUE
    and FALSE boolean, a cast its type; a string, NULL or parameter text (25)."""
    if isinstance(node, exp.Paren):
        return _constant_oid(node.this)
    if isinstance(node, exp.Boolean):
        return 16
    if isinstance(node, exp.Cast):
        target = cast_target(node.to)
        return target.oid if target is not None else 25
    if isinstance(node, exp.Neg):
        inner = node.this
        while isinstance(inner, exp.Paren):
            inner = inner.this
        if isinstance(inner, exp.Literal) and not inner.is_string and inner.this.isdigit():
            value = -int(inner.this)  # the sign is the constant's: -2147483648 is an integer
            return 23 if value >= -(2**31) else 20 if value >= -(2**63) else 1700
        return _constant_oid(node.this)
    if isinstance(node, exp.Literal) and not node.is_string:
        text = node.this
        if not text.isdigit():
            return 1700
        value = int(text)
        return 23 if value <= 2**31 - 1 else 20 if value <= 2**63 - 1 else 1700
    return 25


def _numeric(value: Any) -> Any:
    return value if value is None or isinstance(value, Decimal) else Decimal(value)


# the output name PostgreSQL gives ``CAST(constant AS type)``: the type's own name
# a cast's output name, as PostgreSQL names it (the type's own name, pg_type's typname),
# by the column type's canonical name (an array's: its element's)
_CAST_NAMES = {
    "smallint": "int2", "integer": "int4", "bigint": "int8", "numeric": "numeric",
    "real": "float4", "double precision": "float8", "text": "text", "varchar": "varchar",
    "char": "bpchar", "date": "date", "timestamp": "timestamp", "timestamptz": "timestamptz",
    "time": "time", "timetz": "timetz", "interval": "interval", "boolean": "bool",
    "uuid": "uuid", "bytea": "bytea", "json": "json", "jsonb": "jsonb", "inet": "inet",
    "cidr": "cidr", "macaddr": "macaddr", "macaddr8": "macaddr8", "bit": "bit",
    "varbit": "varbit", "money": "money",
}  # fmt: skip


def _cast_name(to: exp.DataType) -> str:
    target = cast_target(to)
    while target is not None and target.element is not None:
        target = target.element
    if target is None:
        return "?column?"
    if isinstance(target, EnumType):
        return target.name  # (a cast to an enum is named by the enum)
    return _CAST_NAMES.get(target.name, "?column?")


# -- projections (values computed on the client) ---------------------------------------
def value_expr(
    c: Compiler,
    scope: Scope,
    node: exp.Expression,
    select: list[exp.Expression],
    grouped: dict[int, OnionColumn],
    distinct: bool = False,
) -> tuple[RowFn, str, int]:
    """(function of the server row giving the value, output name, type OID)."""
    if isinstance(node, exp.Alias):
        fn, _, oid = value_expr(c, scope, node.this, select, grouped, distinct)
        return fn, node.alias, oid
    if isinstance(node, exp.Paren):
        return value_expr(c, scope, node.this, select, grouped, distinct)
    if isinstance(node, exp.Column):
        ref = scope.resolve(node)
        prefer = grouped.get(id(ref.column))
        oc = c.require(ref, Cap.EQ if distinct else Cap.DECRYPT, prefer)
        if distinct:
            grouped[id(ref.column)] = oc
        col = ref.column
        exact = col.onions.get(Onion.EXACT)
        if prefer is not None and not distinct and exact is not None:
            # a grouped value as written: one of the group's rows', as PostgreSQL
            # shows one (1.50 and 1.5 group together) -- the first its scan meets,
            # as PostgreSQL's aggregation of a table scan shows it
            written = c.col_expr(ref, exact)
            ctid = exp.column("ctid", table=written.table)
            in_scan = exp.Order(this=written, expressions=[exp.Ordered(this=ctid)])
            one = exp.Bracket(
                this=exp.Paren(this=exp.ArrayAgg(this=in_scan)),
                expressions=[exp.Literal.number(0)],  # (0-based: [1] in SQL)
            )
            return ColumnValue(col, exact, add_select(select, one)), col.name, col.type.oid
        idx = add_select(select, c.col_expr(ref, oc))
        return c.row_value(ColumnValue(col, oc, idx)), col.name, col.type.oid
    if isinstance(node, exp.Count):
        return count_output(c, scope, node, select)
    if isinstance(node, exp.Sum | exp.Avg):
        return sum_avg_output(c, scope, node, select)
    if isinstance(node, exp.Min | exp.Max):
        return min_max_output(c, scope, node, select)
    kind = clock_kind(node)
    if kind is not None:  # now(), CURRENT_DATE, ...: the server's own values
        idx = add_select(select, node.copy())
        return (lambda row: row[idx]), clock_name(node), CLOCK_OIDS[kind]
    if isinstance(node, exp.Array):
        # (an array constructor's elements give its type: the client's engine types it,
        # where a constant here would be handed out untyped)
        raise unsupported(node, "ARRAY[...] in the select list")
    const = c.value_of(node)
    if const is not None:
        # parameters are read from the statement's current parameters when rows decode
        oid = _constant_oid(node)
        if isinstance(node, exp.Cast):
            # (a constant's cast is named by its type, an ARRAY[...] constructor's
            # by the constructor, which names itself more strongly)
            name = "array" if isinstance(node.this, exp.Array) else _cast_name(node.to)
        else:
            name = "bool" if isinstance(node, exp.Boolean) else "?column?"
        if oid == 1700:  # 9223372036854775808 is a numeric, as PostgreSQL reads it
            return (lambda row: _numeric(const(CURRENT_PARAMS.get()))), name, oid
        return (lambda row: const(CURRENT_PARAMS.get())), name, oid
    if isinstance(node, exp.Add | exp.Sub | exp.Mul | exp.Div | exp.Mod):
        lf, _, loid = value_expr(c, scope, node.this, select, grouped)
        rf, _, roid = value_expr(c, scope, node.expression, select, grouped)
        _check_client_arithmetic(node, loid, roid)
        op = _ARITH[type(node)]
        name = str(node.meta.get("pg_function", "?column?"))  # mod(a, b) is named mod
        oid = result_oid(loid, roid) if {loid, roid} <= NUMBER_OIDS else max(loid, roid)
        held = int_range(loid)
        if op in "+-" and held is not None:  # (x = x + k: every counter a statement adds to)
            return _IntegerSum(op, lf, rf, loid, roid, held), name, oid
        return (lambda row: _apply(op, lf(row), rf(row), loid, roid)), name, oid
    if isinstance(node, exp.Neg):
        f, _, oid = value_expr(c, scope, node.this, select, grouped)
        if oid not in NUMBER_OIDS:
            # (an interval's negation on its fields: the client engine's, as its other
            # arithmetic -- a timedelta's would store '-1 mon' as '-30 days')
            _refuse_negation(node, oid)
        return (lambda row: pg_negate(f(row), oid)), "?column?", oid
    if isinstance(node, exp.Coalesce) and c.assigning:
        # SET x = coalesce(x, %s) + 1: the first non-NULL value, stored as the column's
        # type stores it (in an output its type and scale would be PostgreSQL's to say)
        fns = [
            value_expr(c, scope, arg, select, grouped)[0] for arg in [node.this, *node.expressions]
        ]
        first = lambda row: next((v for f in fns if (v := f(row)) is not None), None)  # noqa: E731
        return first, "coalesce", 25
    if isinstance(node, exp.DPipe):
        # text || text per row (UPDATE ... SET x = x || %s too); under DISTINCT (two
        # rows' different parts may concatenate alike), a char(n) side, whose padding
        # PostgreSQL strips, or another type's text form: split execution
        if distinct:
            raise unsupported(node, "|| under DISTINCT in the select list")
        lf, _, loid = value_expr(c, scope, node.this, select, grouped)
        rf, _, roid = value_expr(c, scope, node.expression, select, grouped)
        if loid not in _TEXT_OIDS or roid not in _TEXT_OIDS:
            raise unsupported(node, "|| of other than text in the select list")
        return (lambda row: concat_text(lf(row), rf(row))), "?column?", 25
    raise unsupported(node, f"{type(node).__name__} in the select list")


def add_select(select: list[exp.Expression], node: exp.Expression) -> int:
    text = node.sql("postgres")
    for i, e in enumerate(select):
        if e.sql("postgres") == text:
            return i
    select.append(node)
    return len(select) - 1


def count_output(
    c: Compiler, scope: Scope, node: exp.Count, select: list[exp.Expression]
) -> tuple[RowFn, str, int]:
    arg = node.this
    if isinstance(arg, exp.Star) or arg is None:
        idx = add_select(select, exp.Count(this=exp.Star()))
    elif isinstance(arg, exp.Distinct):
        if len(arg.expressions) != 1:  # COUNT(DISTINCT) or COUNT(DISTINCT a, b)
            raise unsupported(node, "COUNT(DISTINCT) of other than one column")
        ref = c.column_side(scope, arg.expressions[0])
        if ref is None:
            raise unsupported(node, "COUNT(DISTINCT expression)")
        oc = c.require(ref, Cap.EQ)
        idx = add_select(select, exp.Count(this=exp.Distinct(expressions=[c.col_expr(ref, oc)])))
    else:
        ref = c.column_side(scope, arg)
        if ref is None:
            raise unsupported(node, "COUNT(expression)")
        oc = recipes.onion_order(ref.column)[0]
        idx = add_select(select, exp.Count(this=c.col_expr(ref, oc)))
    return StoredValue(idx), "count", 20


def sum_avg_output(
    c: Compiler, scope: Scope, node: exp.Expression, select: list[exp.Expression]
) -> tuple[RowFn, str, int]:
    arg = node.this
    if isinstance(arg, exp.Distinct):
        raise unsupported(node, f"{type(node).__name__.upper()}(DISTINCT ...)")
    ref = c.column_side(scope, arg)
    if ref is None:
        raise unsupported(node, f"{type(node).__name__.upper()} over an expression")
    col = ref.column
    refuse_aggregate(type(node), col)  # as PostgreSQL refuses sum(text), avg(date)
    if col.type.name in ("real", "double precision"):
        # PostgreSQL's float sum rounds each addition in its plan's order, the Sum
        # onion's is exact: the split execution answers it where no order can matter
        raise unsupported(node, "a float sum over the Sum onion")
    oc = c.require(ref, Cap.SUM)
    cexp = c.col_expr(ref, oc)
    if oc.innermost == "PLAIN":
        sidx = add_select(select, exp.Sum(this=cexp))
        summed: RowFn = lambda row: row[sidx]  # noqa: E731
    elif oc.innermost == "ASHE":
        # the sums of the two halves, how many were summed and their nonces: the
        # client removes the pads (schemes/ashe.py)
        hi, lo, n, nonces = (add_select(select, e) for e in ashe_aggregates(cexp))
        summed = AsheSum(col, oc, hi, lo, n, nonces)
    else:
        n2 = Decimal(oc.hom.n2)
        call = exp.Anonymous(this="adaptive.hom_sum", expressions=[cexp, c.param(lambda p: n2)])
        sidx = add_select(select, call)
        summed = lambda row: recipes.hom_sum(col, oc, row[sidx])  # noqa: E731
    if isinstance(node, exp.Sum):
        return summed, "sum", _SUM_OIDS.get(col.type.name, 1700)
    cidx = add_select(select, exp.Count(this=cexp))
    avg_oid = 701 if col.type.name in ("real", "double precision") else 1700
    return (lambda row: pg_avg(summed(row), row[cidx], col.type)), "avg", avg_oid


def extreme(c: Compiler, node: exp.Expression, ref: ColumnRef, oc: OnionColumn) -> exp.Expression:
    """``min`` / ``max`` (the kind of ``node``) of a column over its Ord onion: the
    built-in one over a plain innermost layer; over OPE ciphertexts, per group the
    built-in text one of their hex digits in byte order (the order of the bytes;
    the stored aggregate's SQL transition function, called per row, took 10 s where
    this takes 3 over TPC-H SF 1's lineitem), else the stored aggregate, which the
    planner answers from an index on the onion as it does a plain min / max."""
    col = c.col_expr(ref, oc)
    if oc.innermost == "PLAIN":
        return type(node)(this=col)
    if c.grouped and oc.ordered_as_bytes:  # (ORE: its type's aggregate, below)
        hexed = exp.Collate(
            this=exp.Anonymous(this="encode", expressions=[col, exp.Literal.string("hex")]),
            expression=exp.Identifier(this="C", quoted=True),
        )
        return exp.Anonymous(
            this="decode", expressions=[type(node)(this=hexed), exp.Literal.string("hex")]
        )
    return exp.Anonymous(this=f"adaptive.{type(node).__name__.lower()}", expressions=[col])


def min_max_output(
    c: Compiler, scope: Scope, node: exp.Expression, select: list[exp.Expression]
) -> tuple[RowFn, str, int]:
    ref = c.column_side(scope, node.this)
    if ref is None:
        raise unsupported(node, f"{type(node).__name__.upper()} over an expression")
    refuse_aggregate(type(node), ref.column)
    oc = c.require(ref, Cap.ORD)
    c.exact_order(ref, oc, node)
    col = ref.column
    name = type(node).__name__.lower()
    oid = aggregate_oid(type(node), col)
    exact = col.onions.get(Onion.EXACT)
    if exact is not None and oc.innermost != "PLAIN":
        # the extreme as written (an interval's '1 year', not the 360 days its Ord
        # onion orders it by): the Exact onion of a row the Ord onion puts first
        desc = isinstance(node, exp.Max)
        first = exp.Ordered(this=c.col_expr(ref, oc), desc=desc, nulls_first=False)
        agg = exp.ArrayAgg(this=exp.Order(this=c.col_expr(ref, exact), expressions=[first]))
        one = exp.Bracket(this=exp.Paren(this=agg), expressions=[exp.Literal.number(0)])
        return ColumnValue(col, exact, add_select(select, one)), name, oid
    idx = add_select(select, extreme(c, node, ref, oc))
    if oc.innermost == "PLAIN":
        return (lambda row: row[idx]), name, oid
    return (
        (lambda row: recipes.ope_value(col, oc, row[idx])),
        name,
        oid,
    )


def ashe_aggregates(cexp: exp.Expression) -> list[exp.Expression]:
    """The server's part of a SUM over an ASHE onion ``{nonce, hi, lo}``: sum(hi),
    sum(lo) (exact: PostgreSQL sums int8 in 128 bits), count and the nonces as one bytea."""

    def part(i: int) -> exp.Expression:  # sqlglot's brackets count from 0
        return exp.Bracket(this=cexp.copy(), expressions=[exp.Literal.number(i)])

    nonces = exp.Anonymous(
        this="string_agg",
        expressions=[
            exp.Anonymous(this="int8send", expressions=[part(0)]),
            exp.Cast(this=exp.Literal.string(""), to=exp.DataType.build("bytea")),
        ],
    )
    return [exp.Sum(this=part(1)), exp.Sum(this=part(2)), exp.Count(this=cexp.copy()), nonces]


# the operator of each arithmetic node, computed by numeric.pg_arith in the operands' types
_ARITH: dict[type, str] = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/", exp.Mod: "%"}


# dates, times, timestamps and intervals: their arithmetic is the client engine's, or
# refused
_DATE_OIDS = frozenset(_OIDS[t] for t in ("date", "timestamp")) | {1083, 1184, 1186, 1266}


_FLOAT_OIDS = frozenset(_OIDS[t] for t in ("real", "double precision"))


_FLOAT8 = _OIDS["double precision"]


_INEXACT_QUOTIENT_OIDS = frozenset(_OIDS[t] for t in ("numeric", "real", "double precision"))


# jsonb and the array types: their operators are not arithmetic
_COMPOSITE_OIDS = frozenset({3802} | {t.array_oid for t in postgres.types if t.array_oid})


_MONEY = 790

# the names PostgreSQL's messages give the types (format_type), where psycopg's differ
_TYPE_NAMES = {
    16: "boolean", 21: "smallint", 23: "integer", 20: "bigint", 700: "real",
    701: "double precision", 1043: "character varying", 1042: "character",
}  # fmt: skip


def _type_name(oid: int) -> str:
    known = postgres.types.get(oid)
    return _TYPE_NAMES.get(oid) or (known.name if known is not None else "unknown")


# the column types without arithmetic operators: text, char, varchar, boolean, uuid, bytea
_NO_ARITHMETIC_OIDS = frozenset({25, 1042, 1043, 16, 2950, 17})


def _refuse_negation(node: exp.Neg, oid: int) -> None:
    """``-x`` of other than a number or an interval: PostgreSQL's 42883 where ``x`` is
    a column (its type known), else split execution's to answer."""
    operand = node.this
    while isinstance(operand, exp.Paren):
        operand = operand.this
    known = postgres.types.get(oid)
    # (money: its own operator; time: PostgreSQL negates it as an interval, an implicit
    # cast the client does not make)
    if isinstance(operand, exp.Column) and known is not None and oid not in (790, 1083, 1186):
        raise pg_errors.UndefinedFunction(f"operator does not exist: - {_type_name(oid)}")
    raise unsupported(node, "- of other than a number in the select list")


def _check_client_arithmetic(node: exp.Expression, loid: int, roid: int) -> None:
    """Arithmetic in the select list computed per row on the client: what the column
    types already show it cannot compute (date arithmetic, a quotient of numerics, whose
    scale PostgreSQL derives from the values) is refused here, at compile time, so that
    the split execution answers it instead of a refusal at run time.  A parameter's type
    is its value's: checked per row, as before.  A quotient in double precision (a
    float8 operand, the other an integer, numeric or float8) is computed per row as
    PostgreSQL's float division computes it (numeric.float8_op: IEEE division, its
    22012 and 22003)."""
    if {loid, roid} & _COMPOSITE_OIDS:  # (jsonb - key, ...: the client engine's)
        raise unsupported(node, "an operator of jsonb or arrays in the select list")
    no_operator = pg_errors.UndefinedFunction(
        f"operator does not exist: {_type_name(loid)} {_ARITH[type(node)]} {_type_name(roid)}"
    )
    if _MONEY in (loid, roid):
        if {loid, roid} & NUMBER_OIDS and isinstance(node, exp.Add | exp.Sub):
            raise no_operator  # (money adds to and subtracts from money alone)
        raise unsupported(node, "money arithmetic in the select list")
    for side, oid in ((node.this, loid), (node.expression, roid)):
        while isinstance(side, exp.Paren):
            side = side.this
        if isinstance(side, exp.Column) and oid in _NO_ARITHMETIC_OIDS:
            # (a text column is not read as a number, as a string constant would be)
            raise no_operator
    floats = {loid, roid} & _FLOAT_OIDS
    if isinstance(node, exp.Div) and floats == {_FLOAT8} and {loid, roid} <= NUMBER_OIDS:
        return  # (a real's value is read as its shortest decimal, not its float4 bits)
    for side, oid in ((node.this, loid), (node.expression, roid)):
        if oid in _DATE_OIDS:
            raise unsupported(node, "date arithmetic in the select list")
        if not isinstance(node, exp.Div | exp.Mod):
            continue
        inner = side
        while isinstance(inner, exp.Paren | exp.Neg):
            inner = inner.this
        decimal_literal = isinstance(inner, exp.Literal) and not (
            inner.is_string or str(inner.this).isdigit()
        )
        if decimal_literal or (
            oid in _INEXACT_QUOTIENT_OIDS and not isinstance(inner, exp.Literal)
        ):
            raise unsupported(node, "a quotient other than of integers in the select list")


class _IntegerSum:
    """``a + b`` or ``a - b`` per row, ``a`` of an integer type: two ints whose result
    that type holds are added as they are -- the result's type is that one or a wider
    one, which holds it too -- and anything else is :func:`_apply`'s, which types the
    operands and raises PostgreSQL's errors."""

    __slots__ = ("_held", "_left", "_op", "_right", "_types")

    def __init__(
        self, op: str, left: RowFn, right: RowFn, loid: int, roid: int, held: tuple[int, int]
    ) -> None:
        self._op, self._left, self._right = op, left, right
        self._types = (loid, roid)
        self._held = held

    def __call__(self, row: Any) -> Any:
        a, b = self._left(row), self._right(row)
        if type(a) is int and type(b) is int:
            r = a + b if self._op == "+" else a - b
            low, high = self._held
            if low <= r <= high:
                return r
        return _apply(self._op, a, b, *self._types)


def _apply(op: str, a: Any, b: Any, left: int, right: int) -> Any:
    """``a op b`` per row as PostgreSQL computes it for operands of the types ``left``
    and ``right`` (a parameter's: its value's): integer overflow, division by zero and
    float overflow raise PostgreSQL's errors, integer division truncates."""
    if isinstance(a, _dt.date) or isinstance(b, _dt.date):
        raise UnsupportedQuery("date arithmetic on the client", "date arithmetic")
    return pg_arith(op, a, b, left, right)  # (NULL if either is, its operand typed)
