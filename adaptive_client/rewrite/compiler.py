"""SQL over plain names → SQL over onion columns, in passes over sqlglot expressions.

For every use of a column the compiler asks for a *capability* (:class:`Cap`): decrypt
it, compare it for equality, order it, sum it, search it.  :meth:`Compiler.require`
picks the onion that offers the capability at its actual layer or, failing that, the
onion that would offer it once peeled, and records a :class:`Need`.  Constants and
parameters compared with a column are encrypted for that onion at that layer, as
parameters.  Results are decrypted from the cheapest onion.  What the server cannot do
over ciphertexts but the client can do exactly after decryption (arithmetic in the
projection, ``SET x = x + 1``, finishing a sort on string-prefix ties) is done on the
client; anything else raises :class:`UnsupportedQuery` naming the construct.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext
from itertools import count
from typing import Any

from psycopg import errors as pg_errors
from sqlglot import exp

from .. import recipes
from ..array_encoding import Constructed, construct, same_elements
from ..clock import CLOCK_PREFIX, clock_kind, clock_name, clock_param, is_clock_cast
from ..clock import OIDS as CLOCK_OIDS
from ..domains import cast_type
from ..encodings import (
    PARSED_STRING_TYPES,
    TEXT_TYPES,
    CollatedTextEncoding,
    FloatEncoding,
    FreeNumericEncoding,
    IntEncoding,
    NumericEncoding,
    SqlType,
    TextEncoding,
    encoding_for,
    parse_sql_type,
)
from ..errors import (
    ConfigError,
    DatetimeOutOfRange,
    EncodingError,
    LayerFloorViolation,
    ParameterMismatch,
    UndefinedColumn,
    UnsupportedQuery,
    ValueOutOfDomain,
)
from ..interval_input import RANGES
from ..json_encoding import operator_refusal as json_operator_refusal
from ..json_encoding import refusal as json_refusal
from ..metadata import Catalog, ColumnMeta, OnionColumn, TableMeta
from ..needs import BuildNeed, JoinNeed, pending_offering
from ..onions import Cap, Onion, capabilities
from ..stats import STATS
from ..usertypes import EnumType
from ..wire import CiphertextArray
from .numeric import NUMBER_OIDS, pg_arith, pg_avg, pg_negate, pg_scaled, result_oid
from .params import escape_percent
from .plan import (
    AsheSum,
    ColumnValue,
    Compiled,
    Need,
    ParamBuilder,
    Params,
    RmwUpdate,
    RowFn,
    SortKey,
    StoredValue,
)

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
# the column types sum() and avg() take (of those a Sum onion may hold)
_SUMMABLE = frozenset(
    {"smallint", "integer", "bigint", "numeric", "real", "double precision", "interval", "money"}
)
# the type of sum(column) by the column's: bigint for the smaller integers, numeric for
# bigint and numeric, the float's own for floats (PostgreSQL's sum aggregates)
_SUM_OIDS = {
    "smallint": 20, "integer": 20, "bigint": 1700, "real": 700, "double precision": 701,
    "money": 790,
}  # fmt: skip


# the column types PostgreSQL has no min() and max() for
_NO_EXTREMES = frozenset({"bit", "varbit", "macaddr", "macaddr8"})


def refuse_aggregate(kind: type, column: ColumnMeta) -> None:
    """PostgreSQL's 42883 where it has no such aggregate of the column's type: sum(text),
    avg(date), avg(money), min(macaddr), max(bit)."""
    name = column.type.name
    missing = (
        name not in _SUMMABLE or (kind is exp.Avg and name == "money")
        if kind in (exp.Sum, exp.Avg)
        else kind in (exp.Min, exp.Max) and name in _NO_EXTREMES
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
        return 701 if name in ("real", "double precision") else 1700
    return column.type.oid if column is not None else 25  # min, max: the column's own


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


def parse_sql_type_name(to: exp.Expression) -> str:
    """The name :data:`_OIDS` knows a cast's target type by ('' for any other)."""
    try:
        return parse_sql_type(to.sql("postgres")).name
    except ConfigError:  # (a type the client does not encode: not in the table)
        return ""


# The parameters of the statement whose rows are being decoded (for client-side values).
CURRENT_PARAMS: ContextVar[Any] = ContextVar("CURRENT_PARAMS", default=())


class OnionNotBuilt(Exception):
    """The statement needs an onion its column builds on first use: compiling stops at the
    first such onion, and the statement's entry returns the need as its plan's
    ``builds`` (one build per compilation, as each build changes the catalog the
    statement is compiled against next).  An exception, so that it leaves every strategy
    and every tentative compilation of the split planner at once; deliberately not an
    :class:`~adaptive_client.errors.AdaptiveError`, which those take for a refusal."""

    def __init__(self, need: BuildNeed) -> None:
        super().__init__(need.describe())
        self.need = need


def _unsupported(node: exp.Expression, what: str | None = None) -> UnsupportedQuery:
    construct = what or type(node).__name__
    # sqlglot leaves a flag (a bool) where a node is missing, e.g. DELETE without FROM
    text = node.sql("postgres") if isinstance(node, exp.Expression) else str(node)
    if len(text) > 80:
        text = text[:77] + "..."
    return UnsupportedQuery(
        f"not supported over encrypted columns: {construct} in `{text}`", construct
    )


class _Ref:
    """A resolved column reference."""

    __slots__ = ("alias", "column", "table")

    def __init__(self, alias: str, table: TableMeta, column: ColumnMeta) -> None:
        self.alias = alias
        self.table = table
        self.column = column


class Scope:
    def __init__(self) -> None:
        self.entries: list[tuple[str, TableMeta, str]] = []  # (user alias, table, server alias)

    def add(self, alias: str, table: TableMeta, server_alias: str | None = None) -> str:
        server_alias = server_alias or f"a{len(self.entries)}"
        if any(a == alias for a, _, _ in self.entries):
            raise UnsupportedQuery(f'table name "{alias}" specified more than once', "alias")
        self.entries.append((alias, table, server_alias))
        return server_alias

    def resolve(self, col: exp.Column) -> _Ref:
        name = col.name.lower()
        qual = col.table.lower() if col.table else None
        hits = []
        for alias, table, server_alias in self.entries:
            if qual is not None and qual != alias:
                continue
            if qual is None and server_alias == "excluded":
                continue  # ON CONFLICT's proposed row is named only as EXCLUDED.col
            if name in table.columns:
                hits.append(_Ref(server_alias, table, table.columns[name]))
            elif qual is not None and name in table.precomputed:  # (rewrite/precomputed.py)
                hits.append(_Ref(server_alias, table, table.precomputed[name]))
        if not hits:
            where = f"{qual}.{name}" if qual else name
            raise UndefinedColumn(f'column "{where}" does not exist')
        if len(hits) > 1:
            raise UnsupportedQuery(f'column reference "{name}" is ambiguous', "ambiguous column")
        return hits[0]

    def star(self, qual: str | None) -> list[_Ref]:
        refs = []
        for alias, table, server_alias in self.entries:
            if qual is None or qual == alias:
                refs += [_Ref(server_alias, table, c) for c in table.columns.values()]
        return refs


class NestedScope(Scope):
    """The FROM items of a subquery (``EXISTS (SELECT ...)``): a name resolves among
    them first, else in the enclosing query (a correlated reference), as in SQL; their
    server aliases carry a prefix of their own, unique in the statement."""

    def __init__(self, parent: Scope, prefix: str) -> None:
        super().__init__()
        self.parent = parent
        self.prefix = prefix

    def add(self, alias: str, table: TableMeta, server_alias: str | None = None) -> str:
        return super().add(alias, table, server_alias or f"{self.prefix}{len(self.entries)}")

    def resolve(self, col: exp.Column) -> _Ref:
        qual = col.table.lower() if col.table else None
        if qual is not None and all(a != qual for a, _, _ in self.entries):
            return self.parent.resolve(col)
        try:
            return super().resolve(col)
        except UndefinedColumn:
            if qual is not None:
                raise
            return self.parent.resolve(col)


_UNREPRESENTABLE = object()
# A ciphertext no stored value equals: real ones start with a layer tag (1..3).
NO_MATCH = b"\xff" * 17


def _same_value(given: Any, coerced: Any) -> bool:
    """Does the coerced (stored) form denote exactly the value the query compares with?"""
    if type(given) is int and type(coerced) is int:  # the common case, decided cheaply
        return bool(given == coerced)
    if isinstance(coerced, list):  # an array: element by element
        return same_elements(given, coerced, _same_value)
    numbers = (int, float, Decimal)
    if isinstance(given, bool) or isinstance(coerced, bool):
        return True
    if isinstance(given, numbers) and isinstance(coerced, numbers):
        if given != given or coerced != coerced:  # NaN denotes NaN, and only NaN
            return given != given and coerced != coerced
        try:
            return bool(Decimal(given) == Decimal(coerced))
        except (ValueError, ArithmeticError):
            return given == coerced
    if isinstance(given, str) and isinstance(coerced, Decimal):
        if not coerced.is_finite():
            return True  # NaN, ±Infinity: as the column's input rules read the string
        try:
            return Decimal(given.strip()) == coerced
        except ArithmeticError:
            return False
    if isinstance(given, str) and isinstance(coerced, str):
        return given.rstrip(" ") == coerced.rstrip(" ")
    return True


def _positional_param(params: Any, idx: int) -> Any:
    """The value of the ``idx``-th ``%s``; too few parameters is refused, typed."""
    if (type(params) is tuple or type(params) is list) and idx < len(params):
        return params[idx]  # (the usual case, without the ABC check below)
    if isinstance(params, Mapping | str | bytes) or idx >= len(params):
        raise ParameterMismatch(
            f"the query has more placeholders than the {len(params)} parameters passed"
        )
    return params[idx]


@dataclass(frozen=True)
class PositionalParam:
    """The builder of the ``index``-th ``%s``: recognizable, so that a multi-row INSERT
    checks the parameter count once and then reads its values by index."""

    index: int

    def __call__(self, params: Any) -> Any:
        return _positional_param(params, self.index)


def _named_param(params: Any, key: str) -> Any:
    """The value of ``%(key)s``; anything but a mapping holding it is refused, typed."""
    if not isinstance(params, Mapping) or key not in params:
        raise ParameterMismatch(f"query parameter missing: {key}")
    return params[key]


def _concat(a: Any, b: Any) -> str | None:
    """PostgreSQL's ``||`` of two constants (NULL if either is), as text."""
    if a is None or b is None:
        return None
    return _text_of(a) + _text_of(b)


def _text_of(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str | int | Decimal):
        return str(v)
    if isinstance(v, _dt.date) and not isinstance(v, _dt.datetime):
        return v.isoformat()
    raise UnsupportedQuery(
        f"|| of a {type(v).__name__} value: give it as text", "concatenation of a non-text value"
    )


def _negated(value: Any) -> Any:
    """``-value`` for a number; PostgreSQL has no unary minus for strings or booleans."""
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        raise EncodingError(f"unary minus of a {type(value).__name__}")
    try:
        return -value
    except ArithmeticError:  # a Decimal beyond the context's exponents (found by atheris)
        raise ValueOutOfDomain("a numeric constant overflows numeric") from None


def _comparand(ref: _Ref, oc: OnionColumn, cap: Cap, layer: str, v: Any) -> Any:
    """The ciphertext a column's onion is compared with, for the value ``v``."""
    if v is None:
        return None
    if oc.innermost == "PLAIN":
        return v  # the server compares plain values itself, with its own casts
    c = _stored_form(ref, cap, v)
    return c if c is NO_MATCH else recipes.encrypt(ref.column, oc, c, layer)


# The parameter type whose comparands a column's encoding keeps (_DeterministicComparand):
# ints for numbers, strs for text -- one type each, since ``1 == 1.0 == True`` and
# ``Decimal('1.0') == Decimal('1.00')`` would share an entry; and none for dates and
# times, whose strings may depend on the session ('today', a time zone).
_KEPT_PARAMETER_TYPES: dict[type, type] = {
    IntEncoding: int,
    NumericEncoding: int,
    FreeNumericEncoding: int,
    FloatEncoding: int,
    TextEncoding: str,
    CollatedTextEncoding: str,
}


class _DeterministicComparand:
    """The builder of a comparand at a deterministic layer (DET, OPE): the ciphertexts of
    the values of one type given before are kept, so that a repeated statement's
    parameter costs a lookup -- coercion, checks and encoding are what the memo in
    recipes.encrypt leaves to each call."""

    __slots__ = ("_args", "_kept", "_type", "_value")
    _LIMIT = 4096

    def __init__(
        self, ref: _Ref, oc: OnionColumn, cap: Cap, layer: str, value: ParamBuilder, kept: type
    ) -> None:
        self._args = (ref, oc, cap, layer)
        self._value = value
        self._type = kept
        self._kept: dict[Any, Any] = {}

    def __call__(self, p: Params) -> Any:
        v = self._value(p)
        if type(v) is not self._type:
            return _comparand(*self._args, v)
        kept = self._kept
        c = kept.get(v)
        if c is not None:
            if c is not NO_MATCH:
                STATS.count(self._args[3])  # (as recipes.encrypt counts a memoized one)
            return c
        c = _comparand(*self._args, v)
        if len(kept) >= self._LIMIT:
            kept.clear()
        kept[v] = c
        return c


def _comparands(ref: _Ref, oc: OnionColumn, cap: Cap, layer: str, items: Any) -> list[Any]:
    """:func:`_comparand` of each item, the values encrypted in one batched call (a
    split statement's semi-join compares a key with tens of thousands)."""
    if oc.innermost not in ("DET", "OPE") or layer == "PLAIN":
        return [_comparand(ref, oc, cap, layer, v) for v in items]
    out: list[Any] = [None] * len(items)
    at: list[int] = []
    stored: list[Any] = []
    for i, v in enumerate(items):
        if v is not None:
            c = _stored_form(ref, cap, v)
            if c is NO_MATCH:
                out[i] = c
            else:
                at.append(i)
                stored.append(c)
    for i, ct in zip(at, recipes.encrypt_many(ref.column, oc, stored, layer), strict=True):
        out[i] = ct
    return out


def _stored_form(ref: _Ref, cap: Cap, v: Any) -> Any:
    """``v`` coerced to the column's type, NO_MATCH where it equals no value the column
    can hold (``int_col = 2.5``, ``varchar(3)_col = 'abcd'``); a range with such a
    value is refused."""
    col = ref.column
    try:
        c = col.encoding.comparand(v)  # (not rounded to a timestamp(p)'s precision)
    except DatetimeOutOfRange:
        raise  # the comparand itself is out of range: PostgreSQL fails the statement
    except ValueOutOfDomain:
        if isinstance(v, str) and col.type.name not in TEXT_TYPES:
            # a string constant (or parameter) has no type of its own: PostgreSQL reads it
            # with the column type's input function, and its error is the statement's
            raise
        c = _UNREPRESENTABLE
    parsed = isinstance(v, str) and col.type.name in PARSED_STRING_TYPES
    if isinstance(v, str) and isinstance(c, str) and col.type.name != "char":
        # (trailing spaces count in varchar and text: 'ab   ' stored in a varchar(2)
        # column is 'ab', which a comparison with 'ab   ' does not match)
        same = v == c
    else:
        same = c is not _UNREPRESENTABLE and _same_value(v, c)
    if c is _UNREPRESENTABLE or not (parsed or same):
        if cap is Cap.EQ:
            return NO_MATCH
        raise UnsupportedQuery(
            f"comparing {ref.table.name}.{col.name} ({col.type.sql()}) with a value "
            "its type cannot hold exactly",
            "range comparison with an unrepresentable value",
        )
    return c


_INT_RANGES = {"smallint": 2**15, "integer": 2**31, "bigint": 2**63}
_RANGE_OPS = {exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}


def range_constant(column: ColumnMeta, op: type, v: Any) -> tuple[type, Any] | bool | None:
    """``column op v`` for a number constant ``v`` the column's type cannot hold exactly
    (beyond its range, or with more decimals than its scale): PostgreSQL compares across
    types, so the comparison means ``column <= floor(v)`` (for < and <=) or ``column >=
    ceil(v)`` (for > and >=), floor and ceil the nearest values of the type; where no
    value of the type is there, it is true for every non-NULL value (True) or for none
    (False).  None where ``v`` is held exactly, or the type is not an integer or a
    numeric(p,s) one (the comparison as it is)."""
    name, t = column.type.name, column.type
    if op not in _RANGE_OPS or isinstance(v, bool) or not isinstance(v, int | Decimal):
        return None
    if isinstance(v, Decimal) and not v.is_finite():
        return None
    if name in _INT_RANGES:
        step, lo, hi = Decimal(1), Decimal(-_INT_RANGES[name]), Decimal(_INT_RANGES[name] - 1)
    elif name == "numeric" and t.precision is not None:
        scale = t.scale or 0
        step = Decimal(1).scaleb(-scale)
        hi = Decimal(10) ** (t.precision - scale) - step
        lo = -hi
    else:
        return None
    value = Decimal(v)
    with localcontext() as ctx:
        ctx.prec = 2000
        floor = value.quantize(step, rounding=ROUND_FLOOR)
        ceil = value.quantize(step, rounding=ROUND_CEILING)
    if floor == ceil and lo <= value <= hi:
        return None  # held exactly
    below = _RANGE_OPS[op] in ("<", "<=")
    bound = floor if below else ceil
    if bound > hi:
        return below
    if bound < lo:
        return not below
    kept = int(bound) if name in _INT_RANGES else bound
    return (exp.LTE if below else exp.GTE), kept


def number_constant(node: exp.Expression) -> int | Decimal | None:
    """The value of a number constant written in the statement (``-32769``, ``1.255``),
    None for anything else (a parameter's value comes at run time)."""
    while isinstance(node, exp.Paren):
        node = node.this
    negative = isinstance(node, exp.Neg)
    if negative:
        node = node.this
    if not isinstance(node, exp.Literal) or node.is_string:
        return None
    value = _literal_value(node)
    return -value if negative else value


def range_truth(column: exp.Expression, truth: bool) -> exp.Expression:
    """``column op v`` that :func:`range_constant` found always ``truth`` for a non-NULL
    value: NULL where the column is NULL, as the comparison is."""
    null = exp.Is(this=column, expression=exp.Null())
    if truth:
        return exp.Paren(this=exp.or_(exp.Not(this=null), exp.Null()))
    return exp.Paren(this=exp.and_(null, exp.Null()))


def _plain_subquery(node: exp.Expression, query: exp.Expression, what: str) -> exp.Select:
    """The SELECT of an EXISTS or IN the server's statement can hold: FROM, joins and
    WHERE only, no aggregate, window or further subquery."""
    inner = query
    while isinstance(inner, exp.Subquery):
        inner = inner.this
    if not isinstance(inner, exp.Select):
        raise _unsupported(node, f"{what} of other than a SELECT")
    extra = {k for k, v in inner.args.items() if v} - {"expressions", "from_", "joins", "where"}
    if extra or inner.args.get("from_") is None:
        raise _unsupported(node, f"{what} of a SELECT with " + ", ".join(sorted(extra)).upper())
    if inner.find(exp.AggFunc, exp.Window) or any(
        isinstance(n, exp.Select) and n is not inner for n in inner.walk()
    ):
        raise _unsupported(node, f"{what} with aggregates, windows or subqueries")
    return inner


def _quantified(node: exp.Expression) -> tuple[str, exp.Expression] | None:
    """("ANY" | "ALL", the array) for ``ANY(...)`` / ``SOME(...)`` / ``ALL(...)``."""
    if isinstance(node, exp.Any):
        inner = node.this
        while isinstance(inner, exp.Paren):
            inner = inner.this
        return "ANY", inner
    if isinstance(node, exp.All):
        return "ALL", node.this
    if isinstance(node, exp.Anonymous) and node.name.upper() in ("ALL", "SOME"):
        if len(node.expressions) != 1:
            raise _unsupported(node, node.name.upper())
        return ("ALL" if node.name.upper() == "ALL" else "ANY"), node.expressions[0]
    return None


_INT_TYPES = frozenset({"smallint", "integer", "bigint"})


def cast_target(to: exp.DataType) -> SqlType | None:
    """The column type a cast names, parsed once when the statement is compiled (None:
    not a type the client has; cast_value then refuses it when a value comes)."""
    try:
        return parse_sql_type(to.sql("postgres"))
    except Exception:
        return cast_type(to)


def cast_value(
    value: Any, to: exp.DataType, param: bool = False, target: SqlType | None = None
) -> Any:
    """``value::type`` with PostgreSQL's explicit-cast semantics, for a constant or a
    parameter: boolean <-> integer, booleans as text, strings truncated to varchar(n)
    (an explicit cast truncates where an assignment would fail), else the type's input
    rules (those of its encoding).  A parameter has the type psycopg sends it as: a
    Python int goes as smallint, integer or bigint by its size, and only integer casts
    to boolean."""
    if value is None:
        return None
    as_integer = param and isinstance(value, int) and not isinstance(value, bool)
    if as_integer and to.is_type(exp.DataType.Type.BOOLEAN):
        if -(2**15) <= value < 2**15:
            raise pg_errors.CannotCoerce("cannot cast type smallint to boolean")
        if not -(2**31) <= value < 2**31:
            source = "bigint" if -(2**63) <= value < 2**63 else "numeric"
            raise pg_errors.CannotCoerce(f"cannot cast type {source} to boolean")
    t = target if target is not None else cast_target(to)
    if t is None:
        raise UnsupportedQuery(f"cast to {to.sql('postgres')}", "cast")
    if isinstance(value, bool):
        if t.name in _INT_TYPES:
            value = int(value)
        elif t.name in ("text", "varchar", "char"):
            value = "true" if value else "false"
    elif t.name == "boolean" and isinstance(value, int):
        value = value != 0
    elif t.name in ("varchar", "char") and t.precision is not None and isinstance(value, str):
        value = value[: t.precision]
    elif isinstance(value, Constructed):
        value = Constructed(value.items, "cast")  # each element read as the cast's type
    return encoding_for(t).coerce(value)


def interval_constant(node: exp.Interval) -> ParamBuilder | None:
    """``interval '1 day'`` or ``interval '1 2' day to hour`` compared with an interval
    column: its value, read as PostgreSQL reads the typed literal."""
    text, unit = node.this, node.args.get("unit")
    if not isinstance(text, exp.Literal) or not text.is_string:
        return None
    written = node.meta.get("written")
    fields = None if written is not None or unit is None else unit.sql("postgres").lower()
    if fields is not None and fields not in RANGES:
        return None  # (a unit PostgreSQL does not take after the string)
    t = SqlType("interval", fields=fields)
    value = encoding_for(t).coerce(written if written is not None else text.name)
    return lambda p: value


def _literal_value(node: exp.Expression) -> Any:
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        text = node.this
        if any(ch in text for ch in ".eE"):
            try:
                return pg_scaled(Decimal(text))  # (1e3 is 1000, of scale 0)
            except ArithmeticError:  # an exponent beyond any numeric, as PostgreSQL says
                raise ValueOutOfDomain("a numeric constant overflows numeric") from None
        return int(text)
    if isinstance(node, exp.Boolean):
        return node.this
    raise _unsupported(node)


class Compiler:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.params: dict[str, ParamBuilder] = {}
        self.needs: list[Need] = []
        self.joins: list[JoinNeed] = []  # column pairs to bring under one key first
        # Candidate filters (split execution's pushed-down WHERE, which the client
        # evaluates again exactly): LIKE / ILIKE / regex may compile to a superset of
        # their rows, a trigram filter over the Substr onion.  Never under NOT (see
        # ``_negations``).
        self.candidate_filters = False
        # compiling a value an UPDATE assigns (the column's type then takes it)
        self.assigning = False
        self._n = count()
        self.tables: list[TableMeta] = []
        # a filter whose rows the client filters again (split execution's fetches) may be
        # a superset: a range on a string's prefix-only Ord onion then compiles to the
        # prefix's range, bounds included -- wherever it is not negated
        self.widen_inexact_ranges = False
        self._negations = 0
        # the statement groups (GROUP BY or HAVING): min / max of OPE ciphertexts per
        # group by the built-in text aggregate (see ``extreme``)
        self.grouped = False

    # -- parameters ----------------------------------------------------------------------
    def param(self, builder: ParamBuilder) -> exp.Placeholder:
        name = f"p{next(self._n)}"
        self.params[name] = builder
        return exp.Placeholder(this=name)

    def value_of(self, node: exp.Expression) -> ParamBuilder | None:
        """A builder for a constant/parameter node, or None if it is not one."""
        if isinstance(node, exp.Paren):
            return self.value_of(node.this)
        if isinstance(node, exp.Placeholder):
            key = node.name
            if node.args.get("jdbc") or not key or key.isdigit():  # ?, $1: not for psycopg
                raise _unsupported(node, "placeholder other than %s and %(name)s")
            if key.startswith("u") and key[1:].isdigit():
                return PositionalParam(int(key[1:]))
            if key.startswith(CLOCK_PREFIX):  # the client engine's clock values
                return clock_param(key[len(CLOCK_PREFIX) :])
            return lambda p: _named_param(p, key)
        if isinstance(node, exp.Null):
            return lambda p: None
        kind = clock_kind(node)
        if kind is not None:  # now(), CURRENT_DATE, ...: read from the server when bound
            return clock_param(kind)
        if isinstance(node, exp.Literal | exp.Boolean):
            v = _literal_value(node)
            return lambda p: v
        if isinstance(node, exp.Neg):
            inner = self.value_of(node.this)
            if inner is None:
                return None
            return lambda p: None if (x := inner(p)) is None else _negated(x)
        if isinstance(node, exp.Cast):
            if is_clock_cast(node):
                return self.value_of(node.this)  # (typed for the client engine only)
            operand = self.value_of(node.this)
            if operand is None:
                return None
            to, param = node.to, isinstance(node.this, exp.Placeholder)
            target = cast_target(to)
            return lambda p: cast_value(operand(p), to, param, target)
        if isinstance(node, exp.Array):  # ARRAY[...] of constants
            items = [self.value_of(x) for x in node.expressions]
            if any(b is None for b in items):
                return None
            built = [b for b in items if b is not None]
            return lambda p: construct([b(p) for b in built])
        if isinstance(node, exp.DPipe):  # 'prefix ' || %s: a constant string
            left, right = self.value_of(node.this), self.value_of(node.expression)
            if left is None or right is None:
                return None
            return lambda p: _concat(left(p), right(p))
        return None

    # -- choosing onions -------------------------------------------------------------------
    def require(self, ref: _Ref, cap: Cap, prefer: OnionColumn | None = None) -> OnionColumn:
        col = ref.column
        if cap in (Cap.EQ, Cap.ORD):
            refused = json_refusal(col.encoding, cap.value)
            if refused is not None:  # json: PostgreSQL has neither
                raise refused
        candidates = recipes.onion_order(col)
        if prefer is not None and cap in capabilities(prefer.onion, prefer.layer, prefer.ope_exact):
            return prefer
        for oc in candidates:
            if cap in capabilities(oc.onion, oc.layer, oc.ope_exact):
                return oc
        floor_hit: OnionColumn | None = None
        for oc in candidates:
            below = oc.stack[oc.stack.index(oc.layer) + 1 :]
            for layer in below:
                if cap not in capabilities(oc.onion, layer, oc.ope_exact):
                    continue
                if oc.floor is not None and oc.stack.index(layer) > oc.stack.index(oc.floor):
                    floor_hit = oc
                    break
                self.needs.append(Need(ref.table, col, oc, layer, cap))
                return oc
        if floor_hit is not None:
            raise LayerFloorViolation(
                f"{ref.table.name}.{col.name}: {cap.value} needs its {floor_hit.onion} onion "
                f"below its floor {floor_hit.floor}"
            )
        pending = pending_offering(col, cap)
        if pending is not None:  # built by the caller, then compiled again
            raise OnionNotBuilt(BuildNeed(ref.table.name, col.name, pending))
        raise UnsupportedQuery(
            f"{ref.table.name}.{col.name} ({col.type.sql()}) has no onion offering {cap.value}",
            cap.value,
        )

    @staticmethod
    def target_layer(oc: OnionColumn, cap: Cap) -> str:
        """The layer ``oc`` will be at when the statement runs (after any needed peel)."""
        if cap in capabilities(oc.onion, oc.layer, oc.ope_exact):
            return oc.layer
        for layer in oc.stack[oc.stack.index(oc.layer) + 1 :]:
            if cap in capabilities(oc.onion, layer, oc.ope_exact):
                return layer
        return oc.layer

    def encrypted_param(
        self, ref: _Ref, oc: OnionColumn, cap: Cap, value: ParamBuilder
    ) -> exp.Placeholder:
        layer = self.target_layer(oc, cap)
        kept = _KEPT_PARAMETER_TYPES.get(type(ref.column.encoding))
        if kept is not None and layer in ("DET", "OPE") and oc.innermost == layer:
            return self.param(_DeterministicComparand(ref, oc, cap, layer, value, kept))

        def build(p: Params) -> Any:
            return _comparand(ref, oc, cap, layer, value(p))

        return self.param(build)

    def encrypted_array_param(
        self, ref: _Ref, oc: OnionColumn, cap: Cap, value: ParamBuilder
    ) -> exp.Expression:
        """``col op ANY(%s)`` with a list: each element encrypted as a comparand."""
        layer = self.target_layer(oc, cap)

        def build(p: Params) -> Any:
            items = value(p)
            if items is None:
                return None
            if not isinstance(items, list | tuple):
                raise EncodingError(
                    f"ANY/ALL of {ref.table.name}.{ref.column.name} needs a list, "
                    f"not a {type(items).__name__}"
                )
            values = _comparands(ref, oc, cap, layer, items)
            if oc.innermost == "PLAIN" or layer == "PLAIN":
                return values
            return CiphertextArray(values)  # (in binary: nothing escaped)

        if oc.innermost == "PLAIN":
            return self.param(build)  # the server casts the plain array itself
        return exp.Cast(this=self.param(build), to=exp.DataType.build("bytea[]"))

    @staticmethod
    def col_expr(ref: _Ref, oc: OnionColumn) -> exp.Column:
        return exp.column(oc.anon, table=ref.alias, quoted=True)

    # -- FROM ------------------------------------------------------------------------------
    def table_node(self, scope: Scope, node: exp.Expression) -> exp.Expression:
        if (
            not isinstance(node, exp.Table)
            or node.args.get("db")
            or not isinstance(node.this, exp.Identifier)  # a function: generate_series(...)
        ):
            raise _unsupported(node, "FROM item")
        meta = self.catalog.table(node.name)
        self.tables.append(meta)
        alias = (node.alias or node.name).lower()
        server_alias = scope.add(alias, meta)
        return exp.Table(
            this=exp.to_identifier(meta.anon, quoted=True),
            alias=exp.TableAlias(this=exp.to_identifier(server_alias)),
        )

    # -- predicates ------------------------------------------------------------------------
    def predicate(self, scope: Scope, node: exp.Expression) -> exp.Expression:
        out = self._predicate(scope, node)
        if node.args.get("negate") and isinstance(out, exp.Is):  # IS NOT NULL
            out.set("negate", True)
        return out

    def _predicate(self, scope: Scope, node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.And | exp.Or):
            return type(node)(
                this=self.predicate(scope, node.this),
                expression=self.predicate(scope, node.expression),
            )
        if isinstance(node, exp.Not):
            self._negations += 1
            try:
                return exp.Not(this=self.predicate(scope, node.this))
            finally:
                self._negations -= 1
        if isinstance(node, exp.Paren):
            return exp.Paren(this=self.predicate(scope, node.this))
        if isinstance(node, exp.Boolean):
            return node.copy()
        if isinstance(node, exp.Exists):
            return self.exists(scope, node)
        if isinstance(node, exp.EQ | exp.NEQ):
            return self.comparison(scope, node, Cap.EQ)
        if isinstance(node, exp.GT | exp.GTE | exp.LT | exp.LTE):
            return self.comparison(scope, node, Cap.ORD)
        if isinstance(node, exp.Between):
            return self.between(scope, node)
        if isinstance(node, exp.In):
            return self.in_list(scope, node)
        if isinstance(node, exp.Is):
            return self.is_null(scope, node)
        if self.candidate_filters and isinstance(
            node, exp.Like | exp.ILike | exp.Escape | exp.RegexpLike | exp.RegexpILike
        ):
            substring = self.substring_filter(scope, node)
            if substring is not None:
                return substring
        if isinstance(node, exp.RegexpLike):
            return self.word_search(scope, node)
        if isinstance(node, exp.Like):
            return self.like(scope, node)
        if isinstance(node, exp.Column):
            ref = scope.resolve(node)
            if ref.column.type.name != "boolean":
                raise _unsupported(node, "non-boolean column as a condition")
            return self.comparison(scope, exp.EQ(this=node, expression=exp.true()), Cap.EQ)
        raise _unsupported(node)

    def exists(self, scope: Scope, node: exp.Exists) -> exp.Expression:
        """``EXISTS (SELECT ... FROM ... WHERE ...)``, correlated or not, as a subquery
        of the server's statement: its FROM items and WHERE over ciphertexts, names
        resolved first among its own tables.  Its WHERE is compiled exactly (no
        candidate filter, no widened range): the client cannot recheck a subquery whose
        tables it never sees, and ``NOT EXISTS`` would turn a superset into a loss."""
        from .statements import _from_where

        inner = _plain_subquery(node, node.this, "EXISTS")
        nested = NestedScope(scope, f"x{next(self._n)}_")
        with self._exactly():
            sub = _from_where(self, nested, inner)
        sub.set("expressions", [exp.Literal.number(1)])
        return exp.Exists(this=sub)

    @contextlib.contextmanager
    def _exactly(self) -> Iterator[None]:
        """Compiling a subquery of the server's statement: no candidate filter, no
        widened range (the client, which never sees its rows, could not recheck them),
        outside any NOT of the enclosing query."""
        saved = (self.candidate_filters, self.widen_inexact_ranges, self._negations)
        self.candidate_filters = self.widen_inexact_ranges = False
        self._negations = 0
        try:
            yield
        finally:
            self.candidate_filters, self.widen_inexact_ranges, self._negations = saved

    def in_subquery(self, scope: Scope, node: exp.In, ref: _Ref) -> exp.Expression:
        """``col [NOT] IN (SELECT col2 FROM ... WHERE ...)``, correlated or not, as a
        subquery of the server's statement, compiled as :meth:`exists` compiles its
        SELECT: ``col2`` compared with ``col`` over one onion (a DET key shared, as a
        join's).  ``NOT IN``'s NULL rules hold over ciphertexts: a NULL is stored NULL."""
        from .statements import _from_where

        inner = _plain_subquery(node, node.args["query"], "IN (subquery)")
        if len(inner.expressions) != 1:
            raise _unsupported(node, "IN with a subquery of other than one column")
        item = inner.expressions[0]
        marks = (len(self.needs), len(self.joins))
        nested = NestedScope(scope, f"x{next(self._n)}_")
        with self._exactly():
            sub = _from_where(self, nested, inner)
            inner_ref = self._column_side(
                nested, item.this if isinstance(item, exp.Alias) else item
            )
            if inner_ref is None:
                raise _unsupported(node, "IN (SELECT expression)")
            left, right = self.col_vs_col(ref, inner_ref, Cap.EQ)
        if (len(self.needs), len(self.joins)) != marks:
            # the client evaluates it over the decrypted rows (split execution) without
            # a peel or a re-keying; the server does where its onions already allow
            del self.needs[marks[0] :], self.joins[marks[1] :]
            raise _unsupported(node, "IN (subquery) needing a peel")
        sub.set("expressions", [right])
        return exp.In(this=left, query=exp.Subquery(this=sub))

    def _column_side(self, scope: Scope, node: exp.Expression) -> _Ref | None:
        while isinstance(node, exp.Paren):
            node = node.this
        return scope.resolve(node) if isinstance(node, exp.Column) else None

    def comparison(self, scope: Scope, node: exp.Expression, cap: Cap) -> exp.Expression:
        left, right = node.this, node.expression
        quantified = _quantified(right)
        if quantified is not None:
            return self.quantified(scope, node, cap, *quantified)
        lref, rref = self._column_side(scope, left), self._column_side(scope, right)
        op: Any = type(node)
        if lref is None and rref is not None:
            flipped: dict[Any, Any] = {
                exp.GT: exp.LT,
                exp.LT: exp.GT,
                exp.GTE: exp.LTE,
                exp.LTE: exp.GTE,
            }
            op = flipped.get(op, op)
            left, right, lref, rref = right, left, rref, lref
        if lref is not None and json_refusal(lref.column.encoding, cap.value) is not None:
            symbol = {exp.NEQ: "<>", exp.LT: "<", exp.GT: ">", exp.LTE: "<=", exp.GTE: ">="}
            raise json_operator_refusal(symbol.get(op, "="), "json" if rref else "unknown")
        if lref is None:
            lv, rv = self.value_of(left), self.value_of(right)
            if lv is not None and rv is not None:
                return op(this=self.param(lv), expression=self.param(rv))
            raise _unsupported(node, "comparison of expressions")
        if rref is not None:
            left_oc, right_oc = self.col_vs_col(lref, rref, cap)
            if cap is Cap.ORD:
                # two strings' prefixes: equal prefixes decide nothing about the order
                inexact = [(ref, self.require(ref, cap)) for ref in (lref, rref)]
                if any(not oc.ope_exact for _, oc in inexact):
                    if all(self._widened(oc) for _, oc in inexact):
                        op = {exp.LT: exp.LTE, exp.GT: exp.GTE}.get(op, op)
                    else:
                        for ref, oc in inexact:
                            self._exact_order(ref, oc, node)
            return op(this=left_oc, expression=right_oc)
        constant = number_constant(right) if cap is Cap.ORD else None
        bound = range_constant(lref.column, op, constant) if constant is not None else None
        value: ParamBuilder | None
        if isinstance(bound, bool):  # beyond the column type's range: always true / false
            return range_truth(self.col_expr(lref, self.require(lref, Cap.EQ)), bound)
        if bound is not None:  # more decimals than the type's scale: <= floor, >= ceil
            op, kept = bound
            value = lambda p: kept  # noqa: E731
        else:
            value = self.value_of(right)
        if (
            value is None
            and isinstance(right, exp.Interval)
            and lref.column.type.name == "interval"
        ):
            value = interval_constant(right)
        if value is None:
            raise _unsupported(node, "comparison with a non-constant expression")
        oc = self.require(lref, cap)
        if cap is Cap.ORD:
            if self._widened(oc):
                op = {exp.LT: exp.LTE, exp.GT: exp.GTE}.get(op, op)
            else:
                self._exact_order(lref, oc, node)
        return op(
            this=self.col_expr(lref, oc), expression=self.encrypted_param(lref, oc, cap, value)
        )

    def quantified(
        self, scope: Scope, node: exp.Expression, cap: Cap, kind: str, arg: exp.Expression
    ) -> exp.Expression:
        """``col op ANY(array)`` / ``col op ALL(array)``: the array is a list parameter or
        ``ARRAY[...]`` of constants, each element encrypted for the column's onion."""
        ref = self._column_side(scope, node.this)
        if ref is None:
            raise _unsupported(node, f"{kind} over an expression")
        oc = self.require(ref, cap)
        if cap is Cap.ORD:
            self._exact_order(ref, oc, node)
        if isinstance(arg, exp.Array):
            builders = [self.value_of(e) for e in arg.expressions]
            if any(b is None for b in builders):
                raise _unsupported(node, f"{kind} over a non-constant array")
            items: ParamBuilder = lambda p: [b(p) for b in builders if b is not None]  # noqa: E731
        else:
            value = self.value_of(arg)
            if value is None:
                raise _unsupported(node, f"{kind} over a subquery or expression")
            items = value
        array = self.encrypted_array_param(ref, oc, cap, items)
        wrapper: exp.Expression = (
            exp.Any(this=exp.Paren(this=array))
            if kind == "ANY"
            else exp.Anonymous(this="ALL", expressions=[array])
        )
        return type(node)(this=self.col_expr(ref, oc), expression=wrapper)

    def col_vs_col(self, a: _Ref, b: _Ref, cap: Cap) -> tuple[exp.Column, exp.Column]:
        mark = len(self.needs)
        oa, ob = self.require(a, cap), self.require(b, cap)
        if oa.onion is not ob.onion:
            # each side took the onion that serves ``cap`` soonest (e.g. an Ord onion at
            # OPE on one side, an Eq onion at DET on the other); ciphertexts compare only
            # within one onion kind, so take the first kind both can reach, and drop the
            # peels asked for the onions not used
            asked = self.needs[mark:]
            del self.needs[mark:]
            common = self._common_onion(a, b, cap)
            if common is None:
                self.needs[mark:] = asked  # e.g. a Single onion vs an Eq onion, both DET
            else:
                oa, ob = common
        la, lb = self.target_layer(oa, cap), self.target_layer(ob, cap)
        if cap is Cap.ORD:
            for ref, oc in ((a, oa), (b, ob)):
                self._exact_order(ref, oc, exp.column(ref.column.name))
        inner_a = {"DET": "DET", "OPE": "OPE", "PLAIN": "PLAIN"}.get(la)
        ta, tb = a.column.type, b.column.type
        # (a date/timestamp column made before the full range encodes its own way)
        same_type = (
            ta.name == tb.name
            and (ta.element or ta).python_years == (tb.element or tb).python_years
        )
        same_key = (
            la == lb
            and inner_a is not None
            and (inner_a == "PLAIN" or oa.keys.get(inner_a) == ob.keys.get(inner_a))
            and same_type
        )
        adjustable = (
            la == lb
            and inner_a in ("DET", "OPE")
            and same_type
            and oa.onion is ob.onion
            and oa.innermost == ob.innermost == inner_a
            and oa.ope_bits == ob.ope_bits
        )
        if not same_key and adjustable:
            # under different keys: the connection brings them under one key (joins.py)
            # before the statement runs, as it peels
            assert inner_a is not None
            self.joins.append(
                JoinNeed(
                    oa.onion, inner_a, (a.table.name, a.column.name), (b.table.name, b.column.name)
                )
            )
        elif not same_key:
            raise UnsupportedQuery(
                f"comparing {a.table.name}.{a.column.name} ({a.column.type.sql()}) with "
                f"{b.table.name}.{b.column.name} ({b.column.type.sql()}) over ciphertexts "
                "needs both of one type and under one key",
                "column comparison across types or onions",
            )
        return self.col_expr(a, oa), self.col_expr(b, ob)

    def _common_onion(self, a: _Ref, b: _Ref, cap: Cap) -> tuple[OnionColumn, OnionColumn] | None:
        """The first onion kind (in the client's preference) both columns have and can
        bring to ``cap`` within their floors, with the peels it takes."""
        for oa in recipes.onion_order(a.column):
            ob = b.column.onions.get(oa.onion)
            if ob is None:
                continue
            la, lb = self._reachable(oa, cap), self._reachable(ob, cap)
            if la is None or lb is None:
                continue
            for ref, oc, layer in ((a, oa, la), (b, ob, lb)):
                if layer != oc.layer:
                    self.needs.append(Need(ref.table, ref.column, oc, layer, cap))
            return oa, ob
        return None

    @staticmethod
    def _reachable(oc: OnionColumn, cap: Cap) -> str | None:
        """The outermost layer of ``oc``, not below its floor, that offers ``cap``."""
        for layer in oc.stack[oc.stack.index(oc.layer) :]:
            if oc.floor is not None and oc.stack.index(layer) > oc.stack.index(oc.floor):
                return None
            if cap in capabilities(oc.onion, layer, oc.ope_exact):
                return layer
        return None

    def between(self, scope: Scope, node: exp.Between) -> exp.Expression:
        ref = self._column_side(scope, node.this)
        lo, hi = self.value_of(node.args["low"]), self.value_of(node.args["high"])
        if ref is None or lo is None or hi is None:
            raise _unsupported(node, "BETWEEN over non-constant bounds")
        oc = self.require(ref, Cap.ORD)
        if not self._widened(oc):
            self._exact_order(ref, oc, node)
        return exp.Between(
            this=self.col_expr(ref, oc),
            low=self.encrypted_param(ref, oc, Cap.ORD, lo),
            high=self.encrypted_param(ref, oc, Cap.ORD, hi),
        )

    def _widened(self, oc: OnionColumn) -> bool:
        """Does a range on ``oc`` compile to a superset (see ``widen_inexact_ranges``)?
        The Ord plaintext of a string is a weakly monotone prefix of its order key, so
        ``s < v`` implies ``prefix(s) <= prefix(v)``: the prefix's closed range keeps every
        row the range keeps."""
        return (
            self.widen_inexact_ranges
            and not self._negations
            and not oc.ope_exact
            and oc.innermost != "PLAIN"
        )

    def _exact_order(self, ref: _Ref, oc: OnionColumn, node: exp.Expression) -> None:
        if not oc.ope_exact and oc.layer != "PLAIN" and oc.innermost != "PLAIN":
            raise _unsupported(node, f"range comparison on {ref.column.type.name}")

    def in_list(self, scope: Scope, node: exp.In) -> exp.Expression:
        ref = self._column_side(scope, node.this)
        if ref is not None and node.args.get("query") is not None:
            return self.in_subquery(scope, node, ref)
        if ref is None or node.args.get("query") is not None:
            raise _unsupported(node, "IN with a subquery or expression")
        oc = self.require(ref, Cap.EQ)
        items = []
        for item in node.expressions:
            v = self.value_of(item)
            if v is None:
                raise _unsupported(node, "IN with non-constant items")
            items.append(self.encrypted_param(ref, oc, Cap.EQ, v))
        return exp.In(this=self.col_expr(ref, oc), expressions=items)

    def is_null(self, scope: Scope, node: exp.Is) -> exp.Expression:
        ref = self._column_side(scope, node.this)
        if (
            ref is not None
            and isinstance(node.expression, exp.Boolean)
            and ref.column.type.name == "boolean"
        ):
            # b IS TRUE / b IS FALSE: (b = true|false) IS TRUE -- false, not NULL, on NULL
            eq = exp.EQ(this=node.this.copy(), expression=node.expression.copy())
            return exp.Is(
                this=exp.Paren(this=self.comparison(scope, eq, Cap.EQ)), expression=exp.true()
            )
        if ref is None or not isinstance(node.expression, exp.Null):
            raise _unsupported(node, "IS over an expression")
        oc = recipes.onion_order(ref.column)[0]  # NULL stays NULL in every onion
        return exp.Is(this=self.col_expr(ref, oc), expression=exp.Null())

    def word_search(self, scope: Scope, node: exp.RegexpLike) -> exp.Expression:
        ref = self._column_side(scope, node.this)
        pattern = self.value_of(node.expression)
        if ref is None or pattern is None:
            raise _unsupported(node, "regular expression")
        literal = node.expression
        if isinstance(literal, exp.Literal) and not (
            str(literal.this).startswith("\\m") and str(literal.this).endswith("\\M")
        ):
            # not a whole word: split execution (a plain string becomes a LIKE there)
            raise _unsupported(node, "regular expression")
        oc = self.require(ref, Cap.WORD)

        def build(p: Params) -> Any:
            v = pattern(p)
            return None if v is None else recipes.word_token(oc, v)

        return exp.ArrayContainsAll(
            this=self.col_expr(ref, oc),
            expression=exp.Cast(this=self.param(build), to=exp.DataType.build("bytea[]")),
        )

    def substring_filter(self, scope: Scope, node: exp.Expression) -> exp.Expression | None:
        """A candidate filter for LIKE / ILIKE / ``~`` / ``~*`` over the column's Substr
        onion: the rows whose trigram tokens include every trigram of the pattern's literal
        runs (a superset of the matches; the client evaluates the pattern exactly).  None
        where the predicate is left to the exact paths (no Substr onion, NOT LIKE, an
        exact LIKE without wildcards)."""
        escape: str | None = "\\"
        if isinstance(node, exp.Escape):
            esc = self.value_of(node.expression)
            if esc is None or not isinstance(node.this, exp.Like | exp.ILike):
                return None
            value = esc(())
            if not isinstance(value, str) or len(value) > 1:
                return None
            escape = value or None
            node = node.this
        if node.args.get("negate") or self._negations:
            return None  # a superset of rows cannot be negated
        ref = self._column_side(scope, node.this)
        pattern = self.value_of(node.expression)
        if ref is None or pattern is None or Onion.SUBSTR not in ref.column.onions:
            return None
        regex = isinstance(node, exp.RegexpLike | exp.RegexpILike)
        if isinstance(node, exp.RegexpLike) and isinstance(node.expression, exp.Literal):
            text = str(node.expression.this)
            if text.startswith("\\m") and text.endswith("\\M"):
                return None  # a whole word: the Search onion answers it exactly
        oc = self.require(ref, Cap.SUBSTR)

        def build(p: Params) -> Any:
            v = pattern(p)
            if v is None:
                return None
            runs = regex_runs(str(v)) if regex else like_runs(str(v), escape)
            return oc.trigram.required(runs)

        return exp.ArrayContainsAll(
            this=self.col_expr(ref, oc),
            expression=exp.Cast(this=self.param(build), to=exp.DataType.build("bytea[]")),
        )

    def like(self, scope: Scope, node: exp.Like) -> exp.Expression:
        ref = self._column_side(scope, node.this)
        pattern = self.value_of(node.expression)
        if (
            ref is None
            or pattern is None
            or node.args.get("escape")
            # a pattern built with || ('%' || %s || '%': SQLAlchemy's contains(),
            # startswith(), endswith()) has its wildcards around the value: split
            # execution answers it, exactly
            or isinstance(node.expression, exp.DPipe)
        ):
            raise _unsupported(node, "LIKE")
        if isinstance(node.expression, exp.Literal):
            text = str(node.expression.this)
            if "%" in text or "_" in text:
                raise UnsupportedQuery(
                    "LIKE with wildcards is not supported over ciphertexts; for whole words "
                    r"use col ~ '\mword\M' (Search onion)",
                    "LIKE with wildcards",
                )
        if not isinstance(node.expression, exp.Literal):
            # a pattern known only when bound (a plan serves every value, with wildcards
            # or not): split execution evaluates it exactly, its candidates filtered on
            # the server through the Substr onion where the column has one
            raise _unsupported(node, "LIKE with a parameter pattern")
        oc = self.require(ref, Cap.EQ)
        col = ref.column
        layer = self.target_layer(oc, Cap.EQ)

        def build(p: Params) -> Any:  # a literal without wildcards: an equality
            v = pattern(p)
            if v is None:
                return None
            return recipes.encrypt(col, oc, col.encoding.coerce(v), layer)

        op = exp.NEQ if node.args.get("negate") else exp.EQ
        return op(this=self.col_expr(ref, oc), expression=self.param(build))

    # -- projections (values computed on the client) ---------------------------------------
    def value_expr(
        self,
        scope: Scope,
        node: exp.Expression,
        select: list[exp.Expression],
        grouped: dict[int, OnionColumn],
        distinct: bool = False,
    ) -> tuple[RowFn, str, int]:
        """(function of the server row giving the value, output name, type OID)."""
        if isinstance(node, exp.Alias):
            fn, _, oid = self.value_expr(scope, node.this, select, grouped, distinct)
            return fn, node.alias, oid
        if isinstance(node, exp.Paren):
            return self.value_expr(scope, node.this, select, grouped, distinct)
        if isinstance(node, exp.Column):
            ref = scope.resolve(node)
            prefer = grouped.get(id(ref.column))
            oc = self.require(ref, Cap.EQ if distinct else Cap.DECRYPT, prefer)
            if distinct:
                grouped[id(ref.column)] = oc
            col = ref.column
            exact = col.onions.get(Onion.EXACT)
            if prefer is not None and not distinct and exact is not None:
                # a grouped value as written: one of the group's rows', as PostgreSQL
                # shows one (1.50 and 1.5 group together)
                one = exp.Bracket(
                    this=exp.Paren(this=exp.ArrayAgg(this=self.col_expr(ref, exact))),
                    expressions=[exp.Literal.number(0)],  # (0-based: [1] in SQL)
                )
                return ColumnValue(col, exact, self.add_select(select, one)), col.name, col.type.oid
            idx = self.add_select(select, self.col_expr(ref, oc))
            return ColumnValue(col, oc, idx), col.name, col.type.oid
        if isinstance(node, exp.Count):
            return self.count(scope, node, select)
        if isinstance(node, exp.Sum | exp.Avg):
            return self.sum_avg(scope, node, select)
        if isinstance(node, exp.Min | exp.Max):
            return self.min_max(scope, node, select)
        kind = clock_kind(node)
        if kind is not None:  # now(), CURRENT_DATE, ...: the server's own values
            idx = self.add_select(select, node.copy())
            return (lambda row: row[idx]), clock_name(node), CLOCK_OIDS[kind]
        const = self.value_of(node)
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
            lf, _, loid = self.value_expr(scope, node.this, select, grouped)
            rf, _, roid = self.value_expr(scope, node.expression, select, grouped)
            _check_client_arithmetic(node, loid, roid)
            op = _ARITH[type(node)]
            name = str(node.meta.get("pg_function", "?column?"))  # mod(a, b) is named mod
            oid = result_oid(loid, roid) if {loid, roid} <= NUMBER_OIDS else max(loid, roid)
            return (lambda row: _apply(op, lf(row), rf(row), loid, roid)), name, oid
        if isinstance(node, exp.Neg):
            f, _, oid = self.value_expr(scope, node.this, select, grouped)
            return (lambda row: pg_negate(f(row), oid)), "?column?", oid
        if isinstance(node, exp.Coalesce) and self.assigning:
            # SET x = coalesce(x, %s) + 1: the first non-NULL value, stored as the column's
            # type stores it (in an output its type and scale would be PostgreSQL's to say)
            fns = [
                self.value_expr(scope, arg, select, grouped)[0]
                for arg in [node.this, *node.expressions]
            ]
            first = lambda row: next((v for f in fns if (v := f(row)) is not None), None)  # noqa: E731
            return first, "coalesce", 25
        if isinstance(node, exp.DPipe):
            # text || text per row (UPDATE ... SET x = x || %s too); under DISTINCT (two
            # rows' different parts may concatenate alike), a char(n) side, whose padding
            # PostgreSQL strips, or another type's text form: split execution
            if distinct:
                raise _unsupported(node, "|| under DISTINCT in the select list")
            lf, _, loid = self.value_expr(scope, node.this, select, grouped)
            rf, _, roid = self.value_expr(scope, node.expression, select, grouped)
            if loid not in _TEXT_OIDS or roid not in _TEXT_OIDS:
                raise _unsupported(node, "|| of other than text in the select list")
            return (lambda row: _concat(lf(row), rf(row))), "?column?", 25
        raise _unsupported(node, f"{type(node).__name__} in the select list")

    @staticmethod
    def add_select(select: list[exp.Expression], node: exp.Expression) -> int:
        text = node.sql("postgres")
        for i, e in enumerate(select):
            if e.sql("postgres") == text:
                return i
        select.append(node)
        return len(select) - 1

    def count(
        self, scope: Scope, node: exp.Count, select: list[exp.Expression]
    ) -> tuple[RowFn, str, int]:
        arg = node.this
        if isinstance(arg, exp.Star) or arg is None:
            idx = self.add_select(select, exp.Count(this=exp.Star()))
        elif isinstance(arg, exp.Distinct):
            if len(arg.expressions) != 1:  # COUNT(DISTINCT) or COUNT(DISTINCT a, b)
                raise _unsupported(node, "COUNT(DISTINCT) of other than one column")
            ref = self._column_side(scope, arg.expressions[0])
            if ref is None:
                raise _unsupported(node, "COUNT(DISTINCT expression)")
            oc = self.require(ref, Cap.EQ)
            idx = self.add_select(
                select, exp.Count(this=exp.Distinct(expressions=[self.col_expr(ref, oc)]))
            )
        else:
            ref = self._column_side(scope, arg)
            if ref is None:
                raise _unsupported(node, "COUNT(expression)")
            oc = recipes.onion_order(ref.column)[0]
            idx = self.add_select(select, exp.Count(this=self.col_expr(ref, oc)))
        return StoredValue(idx), "count", 20

    def sum_avg(
        self, scope: Scope, node: exp.Expression, select: list[exp.Expression]
    ) -> tuple[RowFn, str, int]:
        arg = node.this
        if isinstance(arg, exp.Distinct):
            raise _unsupported(node, f"{type(node).__name__.upper()}(DISTINCT ...)")
        ref = self._column_side(scope, arg)
        if ref is None:
            raise _unsupported(node, f"{type(node).__name__.upper()} over an expression")
        col = ref.column
        refuse_aggregate(type(node), col)  # as PostgreSQL refuses sum(text), avg(date)
        if col.type.name in ("real", "double precision"):
            # PostgreSQL's float sum rounds each addition in its plan's order, the Sum
            # onion's is exact: the split execution answers it where no order can matter
            raise _unsupported(node, "a float sum over the Sum onion")
        oc = self.require(ref, Cap.SUM)
        cexp = self.col_expr(ref, oc)
        if oc.innermost == "PLAIN":
            sidx = self.add_select(select, exp.Sum(this=cexp))
            summed: RowFn = lambda row: row[sidx]  # noqa: E731
        elif oc.innermost == "ASHE":
            # the sums of the two halves, how many were summed and their nonces: the
            # client removes the pads (schemes/ashe.py)
            hi, lo, n, nonces = (self.add_select(select, e) for e in ashe_aggregates(cexp))
            summed = AsheSum(col, oc, hi, lo, n, nonces)
        else:
            n2 = Decimal(oc.hom.n2)
            call = exp.Anonymous(
                this="adaptive.hom_sum", expressions=[cexp, self.param(lambda p: n2)]
            )
            sidx = self.add_select(select, call)
            summed = lambda row: recipes.hom_sum(col, oc, row[sidx])  # noqa: E731
        if isinstance(node, exp.Sum):
            return summed, "sum", _SUM_OIDS.get(col.type.name, 1700)
        cidx = self.add_select(select, exp.Count(this=cexp))
        avg_oid = 701 if col.type.name in ("real", "double precision") else 1700
        return (lambda row: pg_avg(summed(row), row[cidx], col.type)), "avg", avg_oid

    def extreme(self, node: exp.Expression, ref: _Ref, oc: OnionColumn) -> exp.Expression:
        """``min`` / ``max`` (the kind of ``node``) of a column over its Ord onion: the
        built-in one over a plain innermost layer; over OPE ciphertexts, per group the
        built-in text one of their hex digits in byte order (the order of the bytes;
        the stored aggregate's SQL transition function, called per row, took 10 s where
        this takes 3 over TPC-H SF 1's lineitem), else the stored aggregate, which the
        planner answers from an index on the onion as it does a plain min / max."""
        col = self.col_expr(ref, oc)
        if oc.innermost == "PLAIN":
            return type(node)(this=col)
        if self.grouped:
            hexed = exp.Collate(
                this=exp.Anonymous(this="encode", expressions=[col, exp.Literal.string("hex")]),
                expression=exp.Identifier(this="C", quoted=True),
            )
            return exp.Anonymous(
                this="decode", expressions=[type(node)(this=hexed), exp.Literal.string("hex")]
            )
        return exp.Anonymous(this=f"adaptive.{type(node).__name__.lower()}", expressions=[col])

    def min_max(
        self, scope: Scope, node: exp.Expression, select: list[exp.Expression]
    ) -> tuple[RowFn, str, int]:
        ref = self._column_side(scope, node.this)
        if ref is None:
            raise _unsupported(node, f"{type(node).__name__.upper()} over an expression")
        refuse_aggregate(type(node), ref.column)
        oc = self.require(ref, Cap.ORD)
        self._exact_order(ref, oc, node)
        col = ref.column
        name = type(node).__name__.lower()
        exact = col.onions.get(Onion.EXACT)
        if exact is not None and oc.innermost != "PLAIN":
            # the extreme as written (an interval's '1 year', not the 360 days its Ord
            # onion orders it by): the Exact onion of a row the Ord onion puts first
            desc = isinstance(node, exp.Max)
            first = exp.Ordered(this=self.col_expr(ref, oc), desc=desc, nulls_first=False)
            agg = exp.ArrayAgg(this=exp.Order(this=self.col_expr(ref, exact), expressions=[first]))
            one = exp.Bracket(this=exp.Paren(this=agg), expressions=[exp.Literal.number(0)])
            return ColumnValue(col, exact, self.add_select(select, one)), name, col.type.oid
        idx = self.add_select(select, self.extreme(node, ref, oc))
        if oc.innermost == "PLAIN":
            return (lambda row: row[idx]), name, col.type.oid
        return (
            (lambda row: recipes.ope_value(col, oc, row[idx])),
            name,
            col.type.oid,
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


_DATE_OIDS = frozenset(_OIDS[t] for t in ("date", "timestamp"))
_FLOAT_OIDS = frozenset(_OIDS[t] for t in ("real", "double precision"))
_FLOAT8 = _OIDS["double precision"]
_INEXACT_QUOTIENT_OIDS = frozenset(_OIDS[t] for t in ("numeric", "real", "double precision"))


def _check_client_arithmetic(node: exp.Expression, loid: int, roid: int) -> None:
    """Arithmetic in the select list computed per row on the client: what the column
    types already show it cannot compute (date arithmetic, a quotient of numerics, whose
    scale PostgreSQL derives from the values) is refused here, at compile time, so that
    the split execution answers it instead of a refusal at run time.  A parameter's type
    is its value's: checked per row, as before.  A quotient in double precision (a
    float8 operand, the other an integer, numeric or float8) is computed per row as
    PostgreSQL's float division computes it (numeric.float8_op: IEEE division, its
    22012 and 22003)."""
    floats = {loid, roid} & _FLOAT_OIDS
    if isinstance(node, exp.Div) and floats == {_FLOAT8} and {loid, roid} <= NUMBER_OIDS:
        return  # (a real's value is read as its shortest decimal, not its float4 bits)
    for side, oid in ((node.this, loid), (node.expression, roid)):
        if oid in _DATE_OIDS:
            raise _unsupported(node, "date arithmetic in the select list")
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
            raise _unsupported(node, "a quotient other than of integers in the select list")


def _apply(op: str, a: Any, b: Any, left: int, right: int) -> Any:
    """``a op b`` per row as PostgreSQL computes it for operands of the types ``left``
    and ``right`` (a parameter's: its value's): integer overflow, division by zero and
    float overflow raise PostgreSQL's errors, integer division truncates."""
    if a is None or b is None:
        return None
    if isinstance(a, _dt.date) or isinstance(b, _dt.date):
        raise UnsupportedQuery("date arithmetic on the client", "date arithmetic")
    return pg_arith(op, a, b, left, right)


def like_runs(pattern: str, escape: str | None) -> list[tuple[str, bool, bool]]:
    """The literal runs of a LIKE pattern, each with whether it is anchored at the
    text's start and end.  A pattern PostgreSQL would reject (ending in the escape
    character) gives no runs: no filter, and the exact evaluation raises the error."""
    runs: list[tuple[str, bool, bool]] = []
    run, start, i = "", 0, 0
    while i < len(pattern):
        ch = pattern[i]
        if escape is not None and ch == escape:
            if i + 1 == len(pattern):
                return []
            run += pattern[i + 1]
            i += 2
            continue
        if ch in "%_":
            if run:
                runs.append((run, start == 0, False))
            run, start = "", i + 1
        else:
            run += ch
        i += 1
    if run:
        runs.append((run, start == 0, True))
    return runs


_REGEX_META = frozenset("\\.^$*+?()[]{}|")


def regex_runs(pattern: str) -> list[tuple[str, bool, bool]]:
    """The literal run of a regular expression that is a plain string, optionally
    anchored by ``^`` and ``$``; any other expression gives no runs (no filter)."""
    body = pattern
    at_start = body.startswith("^")
    if at_start:
        body = body[1:]
    at_end = body.endswith("$")
    if at_end:
        body = body[:-1]
    if not body or any(ch in _REGEX_META for ch in body):
        return []
    return [(body, at_start, at_end)]


def server_sql(node: exp.Expression) -> str:
    return escape_percent(node.sql("postgres"))


__all__ = [
    "Compiled",
    "Compiler",
    "RmwUpdate",
    "Scope",
    "SortKey",
    "server_sql",
]
