"""Per-row precomputed onions: the value of an expression over a row, stored encrypted.

A workload that sums ``l_extendedprice * (1 - l_discount)``, groups by
``extract(year from o_orderdate)`` or filters on ``o_comment NOT LIKE '%special%'``
asks the server for something no onion of a single column offers.  Declared in the onion
configuration (``[precomputed.<table>.<name>]``: the expression, its type, its onions),
the value is computed by the client from the plaintext row on every INSERT and COPY and
stored in onions of its own (Eq, Ord, Sum), as a hidden column of the table: the
planner (:mod:`adaptive_client.compile.precomputed_pass`) replaces each occurrence of the
expression in a statement by that column, and the server filters, groups, orders or sums
over it.

The expression is evaluated here with PostgreSQL's semantics for the constructs accepted
(anything else is refused when the table is created): ``+``, ``-``, ``*`` and unary minus
on integers and numerics (exact: a product's scale is the sum of its factors' scales, a
sum's the larger), comparisons, ``AND`` / ``OR`` / ``NOT`` (three-valued), ``[NOT] LIKE``
with a constant pattern on text, ``substring(<text> FROM m [FOR n])`` with constant bounds,
``extract(year|month|day from <date>)`` (a numeric, as PostgreSQL 14 and later return
it), and a jsonb column's part by a constant path (``attrs ->> 'sku'``, ``attrs -> 'a'
->> 'b'``, ``attrs #>> '{a,0}'``: values/jsonb_paths.py).  NULL in, NULL out, as
PostgreSQL propagates it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Context, Decimal
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from ..errors import (
    ConfigError,
    EncodingError,
    InvalidTextInput,
    UndefinedColumn,
    UnsupportedQuery,
    ValueOutOfDomain,
)
from ..schemes.ashe import BOUND as ASHE_BOUND
from ..values import jsonb_paths
from ..values.array_encoding import parse_array
from ..values.encodings import parse_sql_type
from .config import Config
from .metadata import ColumnMeta, TableMeta
from .tablespec import TableSpec

_EXACT = Context(prec=100_000)  # numerics are exact: no rounding in + - *
_EXTRACT = {"YEAR": "year", "MONTH": "month", "DAY": "day"}
_TEXT = {"text", "varchar"}

Row = Mapping[str, Any]
Evaluator = Callable[[Row], Any]


@dataclass(frozen=True)
class Expression:
    """A parsed precomputed expression: its canonical text, inputs and evaluator."""

    text: str
    tree: exp.Expression
    inputs: tuple[str, ...]
    evaluate: Evaluator


@dataclass(frozen=True)
class _Scope:
    """What an operator's operands compile against: the row's columns, the place errors
    name, and the compiler of an operand."""

    columns: Mapping[str, ColumnMeta]
    where: str
    build: Callable[[exp.Expression], Evaluator]


def parse(text: str, where: str) -> exp.Expression:
    # (read as a select list's one item: an expression that begins with a column named
    # like a statement -- ``comment NOT LIKE ...`` -- is not read as that statement)
    try:
        select = sqlglot.parse_one(f"SELECT {text}", read="postgres")
    except SqlglotError as exc:
        raise ConfigError(f"{where}: cannot parse {text!r}: {exc}") from None
    items = select.expressions if isinstance(select, exp.Select) else []
    if len(items) != 1 or isinstance(items[0], exp.Alias) or select.args.get("from_"):
        raise ConfigError(f"{where}: {text!r} is not an expression")
    return strip_parens(items[0])


def strip_parens(tree: exp.Expression) -> exp.Expression:
    """``tree`` without parentheses (their grouping is the tree's shape already)."""

    tree = tree.copy()
    while isinstance(tree, exp.Paren):
        tree = tree.this
    for paren in list(tree.find_all(exp.Paren)):
        inner = paren.this
        while isinstance(inner, exp.Paren):
            inner = inner.this
        paren.replace(inner)
    return tree


def canonical(tree: exp.Expression) -> str:
    """Text two spellings of one expression share (spacing, redundant parentheses, case
    of names): every operand that is itself an operation parenthesized."""

    def wrap(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Paren):
            return node
        for key in ("this", "expression"):
            child = node.args.get(key)
            if isinstance(child, exp.Binary | exp.Not | exp.Neg | exp.Like):
                node.set(key, exp.Paren(this=child))
        return node

    return strip_parens(tree).transform(wrap).sql(dialect="postgres", normalize=True)


def compile_expression(text: str, columns: Mapping[str, ColumnMeta], where: str) -> Expression:
    """``text`` over the columns of one table, or a ConfigError naming what is refused."""
    tree = parse(text, where)
    inputs: list[str] = []

    def build(node: exp.Expression) -> Evaluator:
        if isinstance(node, exp.Column):
            if node.table:
                raise ConfigError(f"{where}: name the row's own columns unqualified")
            name = node.name.lower()
            if name not in columns:
                raise ConfigError(f"{where}: no column {name!r} in the table")
            col = columns[name]
            if col.sequence is not None or col.default_sql is not None:
                raise ConfigError(
                    f"{where}: {name} is drawn from a sequence or default on the server"
                )
            if name not in inputs:
                inputs.append(name)
            return lambda row: row[name]
        if isinstance(node, exp.Literal):
            value: Any = node.this if node.is_string else _number(node.this)
            return lambda row: value
        if isinstance(node, exp.Null):
            return lambda row: None
        if isinstance(node, exp.Boolean):
            truth = bool(node.this)
            return lambda row: truth
        if isinstance(node, exp.Neg):
            inner = build(node.this)
            return lambda row: None if (v := inner(row)) is None else -v
        if isinstance(node, exp.Add | exp.Sub | exp.Mul):
            return _arithmetic(type(node), build(node.this), build(node.expression))
        if isinstance(node, exp.EQ | exp.NEQ | exp.LT | exp.LTE | exp.GT | exp.GTE):
            return _comparison(type(node), build(node.this), build(node.expression))
        if isinstance(node, exp.And | exp.Or):
            return _logic(isinstance(node, exp.And), build(node.this), build(node.expression))
        if isinstance(node, exp.Not):
            inner = build(node.this)
            return lambda row: None if (v := inner(row)) is None else not v
        if isinstance(node, exp.Like):
            return _like(node, _Scope(columns, where, build))
        if isinstance(node, exp.Substring):
            return _substring(node, _Scope(columns, where, build))
        if type(node) in JSON_PATHS:
            return _json_path(node, _Scope(columns, where, build))
        if isinstance(node, exp.Extract):
            field = node.this.name.upper()
            if field not in _EXTRACT:
                raise ConfigError(f"{where}: extract of {field} (year, month or day only)")
            attr = _EXTRACT[field]
            inner = build(node.expression)
            return lambda row: None if (v := inner(row)) is None else Decimal(getattr(v, attr))
        raise ConfigError(f"{where}: {node.sql(dialect='postgres')!r} cannot be precomputed")

    evaluate = build(tree)
    if not inputs:
        raise ConfigError(f"{where}: the expression reads no column of the row")
    return Expression(canonical(tree), tree, tuple(inputs), evaluate)


def _number(text: str) -> int | Decimal:
    return Decimal(text) if any(c in text for c in ".eE") else int(text)


def _arithmetic(kind: type, left: Evaluator, right: Evaluator) -> Evaluator:
    def apply(a: Any, b: Any) -> Any:
        if isinstance(a, Decimal) or isinstance(b, Decimal):
            a, b = Decimal(a), Decimal(b)
            if kind is exp.Add:
                return _EXACT.add(a, b)
            if kind is exp.Sub:
                return _EXACT.subtract(a, b)
            return _EXACT.multiply(a, b)
        if kind is exp.Add:
            return a + b
        if kind is exp.Sub:
            return a - b
        return a * b

    def evaluate(row: Row) -> Any:
        a, b = left(row), right(row)
        return None if a is None or b is None else apply(a, b)

    return evaluate


_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    exp.EQ: lambda a, b: a == b,
    exp.NEQ: lambda a, b: a != b,
    exp.LT: lambda a, b: a < b,
    exp.LTE: lambda a, b: a <= b,
    exp.GT: lambda a, b: a > b,
    exp.GTE: lambda a, b: a >= b,
}


def _comparison(kind: type, left: Evaluator, right: Evaluator) -> Evaluator:
    compare = _COMPARE[kind]

    def evaluate(row: Row) -> Any:
        a, b = left(row), right(row)
        if a is None or b is None:
            return None
        if isinstance(a, str) != isinstance(b, str):
            raise EncodingError("a precomputed comparison of text with a non-text value")
        if isinstance(a, str):
            raise EncodingError("a precomputed comparison of text depends on the collation")
        return compare(a, b)

    return evaluate


def _logic(conjunction: bool, left: Evaluator, right: Evaluator) -> Evaluator:
    def evaluate(row: Row) -> Any:
        a, b = left(row), right(row)
        if conjunction:
            if a is False or b is False:
                return False
            return None if a is None or b is None else True
        if a is True or b is True:
            return True
        return None if a is None or b is None else False

    return evaluate


def like_regex(pattern: str) -> re.Pattern[str]:
    """PostgreSQL's LIKE (escape character backslash) as an anchored regular expression."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
        i += 1
    return re.compile("".join(out), re.DOTALL)


def _text_column(
    subject: exp.Expression,
    columns: Mapping[str, ColumnMeta],
    types: set[str],
    what: str,
    named: str,
) -> str:
    """The type name of ``subject``, a column of the row of one of ``types``, or a
    ConfigError naming ``what`` (the place and the operator)."""
    if not isinstance(subject, exp.Column) or subject.name.lower() not in columns:
        raise ConfigError(f"{what} applies to a column of the row")
    type_name = columns[subject.name.lower()].type.name
    if type_name not in types:
        raise ConfigError(f"{what} on a {named} column only")
    return type_name


def _like(node: exp.Like, scope: _Scope) -> Evaluator:
    build, columns, where = scope.build, scope.columns, scope.where
    subject, pattern = node.this, node.expression
    if not isinstance(pattern, exp.Literal) or not pattern.is_string:
        raise ConfigError(f"{where}: LIKE needs a constant pattern")
    _text_column(subject, columns, _TEXT, f"{where}: LIKE", "text or varchar")
    regex, negate = like_regex(pattern.this), bool(node.args.get("negate"))
    value = build(subject)
    return lambda row: None if (v := value(row)) is None else (regex.fullmatch(v) is None) == negate


def _substring(node: exp.Substring, scope: _Scope) -> Evaluator:
    """``substring(col FROM start [FOR count])`` with constant integer bounds, as
    PostgreSQL computes it: characters ``start`` to ``start + count - 1`` counted from 1
    (a start before 1 shortens the result), of a char(n) value without its padding."""
    build, columns, where = scope.build, scope.columns, scope.where
    subject = node.this
    type_name = _text_column(
        subject, columns, _TEXT | {"char"}, f"{where}: substring", "text, varchar or char"
    )
    bounds: list[int | None] = []
    for key in ("start", "length"):
        bound = node.args.get(key)
        if bound is None:
            bounds.append(None)
            continue
        negative = isinstance(bound, exp.Neg)
        literal = bound.this if negative else bound
        if not (isinstance(literal, exp.Literal) and not literal.is_string):
            raise ConfigError(f"{where}: substring bounds are integer constants")
        try:
            number = int(literal.this)
        except ValueError:
            raise ConfigError(f"{where}: substring bounds are integer constants") from None
        bounds.append(-number if negative else number)
    start, count = bounds
    if start is None and count is None:
        raise ConfigError(f"{where}: substring needs FROM <start> or FOR <count>")
    start = 1 if start is None else start
    if count is not None and count < 0:
        raise ConfigError(f"{where}: negative substring length not allowed")
    first = max(start, 1) - 1
    end = None if count is None else max(start + count, 1) - 1
    char = type_name == "char"
    value = build(subject)

    def evaluate(row: Row) -> Any:
        v = value(row)
        if v is None:
            return None
        text = v.rstrip(" ") if char else v  # char(n) -> text drops the padding
        return text[first:end]  # (an end before the first character: empty)

    return evaluate


# ``->`` / ``->>`` (one key or index), ``#>`` / ``#>>`` (a text[] path); whether the
# result is the part's text
JSON_PATHS: dict[type[exp.Expression], bool] = {
    exp.JSONExtract: False,
    exp.JSONExtractScalar: True,
    exp.JSONBExtract: False,
    exp.JSONBExtractScalar: True,
}


def json_steps(node: exp.Expression) -> tuple[list[str | int], bool] | None:
    """(the steps, whether they are ``#>``'s text[] elements) of a jsonb path operator
    with a constant path, else None."""
    arg = node.expression
    if isinstance(node, exp.JSONBExtract | exp.JSONBExtractScalar):
        if not (isinstance(arg, exp.Literal) and arg.is_string):
            return None
        try:
            _, _, texts = parse_array(str(arg.this))
        except InvalidTextInput:
            return None
        if any(t is None for t in texts):
            return None
        return [str(t) for t in texts], True
    if isinstance(arg, exp.Neg) and isinstance(arg.this, exp.Literal) and not arg.this.is_string:
        return ([-int(arg.this.this)], False) if str(arg.this.this).isdigit() else None
    if not isinstance(arg, exp.JSONPath) or len(arg.expressions) != 2:
        return None
    step = arg.expressions[1]
    if isinstance(step, exp.JSONPathKey) and isinstance(step.this, str):
        return [step.this], False
    if isinstance(step, exp.JSONPathSubscript) and isinstance(step.this, int):
        return [step.this], False
    return None


# the path operators' readers, by operator and kind of step (a key, an index, a text[])
_PATH_READERS: dict[tuple[type[exp.Expression], str], Callable[..., Any]] = {
    (exp.JSONExtract, "key"): jsonb_paths.object_field,
    (exp.JSONExtract, "index"): jsonb_paths.array_element,
    (exp.JSONExtractScalar, "key"): jsonb_paths.object_field_text,
    (exp.JSONExtractScalar, "index"): jsonb_paths.array_element_text,
    (exp.JSONBExtract, "path"): jsonb_paths.extract_path,
    (exp.JSONBExtractScalar, "path"): jsonb_paths.extract_path_text,
}


def _json_path(node: exp.Expression, scope: _Scope) -> Evaluator:
    """A part of a jsonb column of the row, by a constant path, as the client engine
    reads it (values/jsonb_paths.py): its text (``->>``, ``#>>``) or jsonb (``->``,
    ``#>``)."""
    where = scope.where
    steps = json_steps(node)
    if steps is None:
        raise ConfigError(f"{where}: a jsonb path operator needs a constant path")
    path, text_path = steps
    subject = node.this
    if not (type(subject) in JSON_PATHS and not JSON_PATHS[type(subject)]):
        # (a chain, ``attrs -> 'a' ->> 'b'``, reads the part its subject gives)
        _text_column(subject, scope.columns, {"jsonb"}, f"{where}: {node.key}", "jsonb")
    value = scope.build(subject)
    arg: Any = list(path)
    if text_path:
        read = _PATH_READERS[(type(node), "path")]
    else:
        arg = path[0]
        read = _PATH_READERS[(type(node), "key" if isinstance(arg, str) else "index")]

    def evaluate(row: Row) -> Any:
        doc = value(row)
        return None if doc is None else read(doc.encoding, doc, arg)

    return evaluate


class PrecomputedUnfit(ValueOutOfDomain):
    """A row's value of a precomputed column that its onions cannot hold (a product past
    ASHE's 96 bits, or past the 38 digits the column is typed with), where PostgreSQL,
    which has no such column, writes the row.  Never reaches the application: the
    statement that computed it retires the column (adapt/designed.py ``retire``) and runs
    again without it."""

    def __init__(self, table: TableMeta, col: ColumnMeta, reason: str) -> None:
        super().__init__(f"precomputed {table.name}.{col.name}: {reason}")
        self.table, self.column, self.expression = table.name, col.name, col.expression
        self.done = 0  # (executemany: the parameter sets run before this one)
        self.rowcount = 0  # (and the rows they counted)


def _ashe_holds(col: ColumnMeta, value: Any) -> bool:
    return -ASHE_BOUND < col.encoding.to_hom(value) < ASHE_BOUND


def _ope_holds(col: ColumnMeta, value: Any) -> bool:
    col.encoding.to_ope(value)  # (raises ValueOutOfDomain past the order encoding)
    return True


# per innermost layer, whether a (coerced) value is one the layer can encrypt; a layer
# not named holds every value of its column's type (DET, RND, HOM's Paillier domain)
_HOLDS: dict[str, Callable[[ColumnMeta, Any], bool]] = {"ASHE": _ashe_holds, "OPE": _ope_holds}


def _held(table: TableMeta, col: ColumnMeta, values: list[Any]) -> list[Any]:
    """``values`` of ``col``, raising :class:`PrecomputedUnfit` where an onion of the
    column cannot hold one of them."""
    checks = [_HOLDS[oc.innermost] for oc in col.onions.values() if oc.innermost in _HOLDS]
    try:
        if all(v is None or all(c(col, v) for c in checks) for v in values):
            return values
    except ValueOutOfDomain as exc:
        raise PrecomputedUnfit(table, col, str(exc)) from None
    raise PrecomputedUnfit(table, col, "a value beyond its onions' domain")


def checked_value(table: TableMeta, col: ColumnMeta, expression: Expression, row: Row) -> Any:
    """:func:`value_of`, raising :class:`PrecomputedUnfit` where the value (or its
    computation within the column's type) is one the column's onions cannot hold."""
    try:
        value = value_of(col, expression, row)
    except ValueOutOfDomain as exc:
        raise PrecomputedUnfit(table, col, str(exc)) from None
    return _held(table, col, [value])[0]


def value_of(col: ColumnMeta, expression: Expression, row: Row) -> Any:
    """The precomputed column's value for ``row`` (plain values of its inputs), checked
    to be what PostgreSQL computes: a numeric keeps the declared scale exactly."""
    value = expression.evaluate(row)
    if value is None:
        return None
    if isinstance(value, Decimal) and col.type.name == "numeric" and col.type.precision:
        scale = col.type.scale or 0
        exponent = value.as_tuple().exponent
        if isinstance(exponent, int) and -exponent != scale:
            raise EncodingError(
                f"precomputed {col.name} ({expression.text}) has scale {-exponent} "
                f"but is declared {col.type.sql()}: declare the expression's own scale"
            )
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    return col.encoding.coerce(value)


def build_columns(
    config: Config,
    spec: TableSpec,
    columns: Mapping[str, ColumnMeta],
    build: Callable[[str], ColumnMeta],
) -> dict[str, ColumnMeta]:
    """The precomputed columns the configuration declares for a table being created
    (``build`` makes a column's onions and keys, as for a declared column)."""
    out: dict[str, ColumnMeta] = {}
    for name, declared in config.precomputed.get(spec.name, {}).items():
        where = f"precomputed.{spec.name}.{name}"
        if name in columns:
            raise ConfigError(f"{where}: the table has a column of that name")
        expression = compile_expression(declared.expression, columns, where)
        try:
            spec.types[name] = parse_sql_type(declared.type)
        except ValueError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        spec.nullable[name] = True
        col = build(name)
        col.expression = expression.text
        out[name] = col
    return out


_COMPILED: dict[tuple[str, str, str], Expression] = {}


def expression_of(table: TableMeta, col: ColumnMeta) -> Expression:
    """The compiled expression of one of ``table``'s precomputed columns (cached)."""
    assert col.expression is not None
    key = (table.anon, col.name, col.expression)
    found = _COMPILED.get(key)
    if found is None:
        where = f"precomputed {table.name}.{col.name}"
        found = _COMPILED[key] = compile_expression(col.expression, table.columns, where)
    return found


def values_of(table: TableMeta, col: ColumnMeta, rows: Mapping[str, list[Any]]) -> list[Any]:
    """The precomputed column over a batch: ``rows`` maps each input to its column of
    (coerced, plain) values.  Arithmetic over numbers of fixed scale is computed a column
    at a time on scaled integers (:func:`_scaled_arithmetic`: the same exact values, a
    fraction of the time of a Decimal operation per row and node); the rest row by row."""
    expression = expression_of(table, col)
    n = len(next(iter(rows.values()))) if rows else 0
    batch = _scaled_arithmetic(expression.tree, table.columns, rows, n)
    inputs = expression.inputs
    if batch is None or col.type.name != "numeric" or col.type.scale != batch[1]:
        return [
            checked_value(table, col, expression, {c: rows[c][i] for c in inputs}) for i in range(n)
        ]
    coerce = col.encoding.coerce
    scale = -batch[1]
    try:
        out = [None if x is None else coerce(_EXACT.scaleb(Decimal(x), scale)) for x in batch[0]]
    except ValueOutOfDomain as exc:
        raise PrecomputedUnfit(table, col, str(exc)) from None
    return _held(table, col, out)


def _scaled_arithmetic(
    node: exp.Expression, columns: Mapping[str, ColumnMeta], rows: Mapping[str, list[Any]], n: int
) -> tuple[list[int | None], int] | None:
    """``node`` over the batch as scaled integers and their scale (a product's is the
    sum of its factors', a sum's the larger, as PostgreSQL's numeric arithmetic has it),
    or None where ``node`` is not arithmetic over numbers of a fixed scale."""
    if isinstance(node, exp.Paren):
        return _scaled_arithmetic(node.this, columns, rows, n)
    if isinstance(node, exp.Column):
        col = columns.get(node.name.lower())
        if col is None or col.type.name not in _FIXED_SCALE:
            return None
        if col.type.name == "numeric" and col.type.precision is None:
            return None  # (each value its own scale)
        scale = col.type.scale or 0
        return [
            None if v is None else int(_EXACT.scaleb(Decimal(v), scale)) for v in rows[col.name]
        ], scale
    if isinstance(node, exp.Literal) and not node.is_string:
        d = Decimal(node.this)
        exponent = d.as_tuple().exponent
        if not isinstance(exponent, int):
            return None
        scale = max(0, -exponent)
        return [int(_EXACT.scaleb(d, scale))] * n, scale
    if isinstance(node, exp.Neg):
        inner = _scaled_arithmetic(node.this, columns, rows, n)
        if inner is None:
            return None
        return [None if x is None else -x for x in inner[0]], inner[1]
    if isinstance(node, exp.Add | exp.Sub | exp.Mul):
        a = _scaled_arithmetic(node.this, columns, rows, n)
        b = _scaled_arithmetic(node.expression, columns, rows, n)
        if a is None or b is None:
            return None
        (xs, sa), (ys, sb) = a, b
        if isinstance(node, exp.Mul):
            return [
                None if x is None or y is None else x * y for x, y in zip(xs, ys, strict=True)
            ], sa + sb
        scale = max(sa, sb)
        fa, fb = 10 ** (scale - sa), 10 ** (scale - sb)
        sign = 1 if isinstance(node, exp.Add) else -1
        return [
            None if x is None or y is None else x * fa + sign * y * fb
            for x, y in zip(xs, ys, strict=True)
        ], scale
    return None


_FIXED_SCALE = ("smallint", "integer", "bigint", "numeric")


def refuse_written(table: TableMeta, names: list[str]) -> None:
    """A precomputed column is the client's to write: naming one in INSERT, COPY or
    UPDATE is an error, as writing a generated column is in PostgreSQL."""
    for name in names:
        if name.lower() in table.precomputed and name.lower() not in table.columns:
            raise UndefinedColumn(
                f'column "{name}" of relation "{table.name}" does not exist '
                "(it is a precomputed onion, computed by the client)"
            )


def refuse_alter(table: TableMeta, actions: list[exp.Expression]) -> None:
    """An ALTER TABLE that drops, renames or retypes a precomputed column's input would
    leave the stored values (or the expression) stale: refused."""
    for action in actions:
        targets: list[Any] = []
        if isinstance(action, exp.Drop) and str(action.args.get("kind")).upper() == "COLUMN":
            targets = list(action.args.get("tables") or [])
        elif isinstance(action, exp.RenameColumn | exp.AlterColumn):
            targets = [action.this]
        for target in targets:
            name = target.name.lower() if isinstance(target, exp.Expression) else ""
            for col in table.precomputed.values():
                if name in expression_of(table, col).inputs or name == col.name:
                    raise UnsupportedQuery(
                        f"ALTER TABLE {table.name}: {name} is an input of precomputed "
                        f"{col.name} ({col.expression})",
                        "ALTER TABLE of a precomputed onion's input",
                    )
