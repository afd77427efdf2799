"""What PostgreSQL makes of an expression of a qualified, annotated statement, where the
annotation (sqlglot's, for its own type rules) differs: the kind of value it is (int,
decimal, float, text, ...), an integer's width, a numeric's scale, a char(n)'s length,
whether it is an interval; and the small builders of client-engine nodes (``udf``,
``duck_cast``) and the lookup of a per-node-type table (:func:`by_type`) that the
rewrites share.  Reads only the tree."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar

from sqlglot import exp
from sqlglot.expressions.datatypes import DType

from ..values.clock import is_clock_cast
from .runtime import refusal as _refuse

_Entry = TypeVar("_Entry")


def by_type(table: Mapping[type[exp.Expression], _Entry], node: exp.Expr) -> _Entry | None:
    """The entry of ``table`` for ``node``'s class, or for its nearest base class that has
    one (as ``isinstance`` would match it: a UNION is a SetOperation); None if none has."""
    for cls in type(node).__mro__:
        entry = table.get(cls)
        if entry is not None:
            return entry
    return None


INT_TYPES = (exp.DataType.Type.INT, exp.DataType.Type.SMALLINT, exp.DataType.Type.BIGINT,
         exp.DataType.Type.TINYINT)  # fmt: skip


FLOAT_TYPES = (exp.DataType.Type.DOUBLE, exp.DataType.Type.FLOAT)


def choice_values(node: exp.Expression) -> list[exp.Expression]:
    """The expressions whose values a CASE, COALESCE, GREATEST, LEAST or NULLIF gives
    (NULL constants left out: they take the others' type)."""
    if isinstance(node, exp.Case):
        values = [i.args.get("true") for i in node.args.get("ifs") or []]
        values.append(node.args.get("default"))
    elif isinstance(node, exp.Nullif):
        values = [node.this]
    else:
        values = [node.this, *node.expressions]
    return [v for v in values if v is not None and not isinstance(v, exp.Null)]


def _constant_kind(node: exp.Literal) -> str | None:
    if node.is_string:
        return None
    text = str(node.this)
    return "decimal" if any(ch in text for ch in ".eE") or abs(int(text)) >= 2**63 else "int"


def _column_kind(node: exp.Column) -> str | None:
    # a derived table's (or CTE's) column has its select item's kind as PostgreSQL types
    # it (sqlglot types extract() an integer, PostgreSQL numeric)
    inner = derived_item(node)
    kind = kind_of(inner) if inner is not None else "other"
    return kind if kind != "other" else None  # (an item already rewritten is typed here)


def _numeric_of_numeric(node: exp.Expression) -> str | None:
    # ceil/floor/round/trunc(numeric[, n]) is numeric (sqlglot: double)
    return "decimal" if kind_of(node.this) == "decimal" else None


def _widest(sides: set[str]) -> str | None:
    """The kind of a choice or arithmetic between numbers of these kinds."""
    if sides and sides <= {"int", "decimal", "float"}:
        for k in ("float", "decimal", "int"):
            if k in sides:
                return k
    return None


def _operands_kind(node: exp.Binary) -> str | None:
    # sqlglot types a numeric constant (2.5) double, and arithmetic over it too; nullif
    # has the = operator's common type (nullif(1, 2.2) is numeric); date - date is an
    # integer, the days between (sqlglot: a date)
    sides = {kind_of(node.this), kind_of(node.expression)}
    if isinstance(node, exp.Sub) and sides == {"date"}:
        return "int"
    return _widest(sides)


def _division_kind(node: exp.Div) -> str | None:
    if node.meta.get("avg"):
        return "decimal"  # an avg computed in parts (aggregate.py)
    return _operands_kind(node)


# functions sqlglot leaves untyped, of a result kind the client engine computes
_FUNCTION_KINDS: Final = {"make_date": "date", "isfinite": "bool"}


def _anonymous_kind(node: exp.Anonymous) -> str | None:
    name = node.name.lower()
    if name in _FUNCTION_KINDS:
        return _FUNCTION_KINDS[name]
    if name == "pg_numeric_div":
        return "decimal"  # a quotient already rewritten (sqlglot typed the division double)
    if name in ("arg_min", "arg_max") and node.expressions:
        return kind_of(node.expressions[0])  # a text min/max by its collation key
    return None


# the kind PostgreSQL gives a node of these types where sqlglot's annotation differs
# (None: the annotation's), by :func:`by_type`
_KINDS: dict[type[exp.Expression], Callable[[Any], str | None]] = {
    exp.Literal: _constant_kind,
    exp.Abs: lambda node: kind_of(node.this),
    exp.Column: _column_kind,
    **dict.fromkeys((exp.Ceil, exp.Floor, exp.Round, exp.Trunc), _numeric_of_numeric),
    exp.Anonymous: _anonymous_kind,
    # avg of integers or numerics is numeric (sqlglot: double)
    exp.Avg: lambda node: "decimal" if kind_of(node.this) in ("int", "decimal") else None,
    exp.Div: _division_kind,
    **dict.fromkeys((exp.Add, exp.Sub, exp.Mul, exp.Mod, exp.Nullif), _operands_kind),
    **dict.fromkeys(
        (exp.Case, exp.Coalesce, exp.Greatest, exp.Least),
        lambda node: _widest({kind_of(b) for b in choice_values(node)}),
    ),
}

# the kinds of the annotated types
_ANNOTATED_KINDS: tuple[tuple[tuple[DType, ...], str], ...] = (
    (INT_TYPES, "int"),
    ((exp.DataType.Type.DECIMAL,), "decimal"),
    (FLOAT_TYPES, "float"),
    (tuple(exp.DataType.TEXT_TYPES), "text"),
    ((exp.DataType.Type.DATE,), "date"),
    ((exp.DataType.Type.TIMESTAMP,), "timestamp"),
    # now(): compared and shifted in the session's time zone
    ((exp.DataType.Type.TIMESTAMPTZ,), "timestamptz"),
    ((exp.DataType.Type.BOOLEAN,), "bool"),
)


def kind_of(node: exp.Expression) -> str:
    """int | decimal | float | text | date | timestamp | bool | other, as annotated
    (a numeric constant as PostgreSQL types it: with a point or exponent, numeric)."""
    while isinstance(node, exp.Paren | exp.Neg):
        node = node.this
    if node.meta.get("scale") is not None:
        return "decimal"  # a rounded numeric, rewritten (transforms._at_scale)
    rule = by_type(_KINDS, node)
    kind = rule(node) if rule is not None else None
    if kind is not None:
        return kind
    t = node.type
    if t is None:
        return "other"
    return next((k for types, k in _ANNOTATED_KINDS if t.is_type(*types)), "other")


def derived_item(column: exp.Column) -> exp.Expression | None:
    """The select item of a derived table (or CTE) that ``column`` reads, if it reads
    one: the scale of ``x * y`` is not its annotated type's (sqlglot types a product of
    numerics with one factor's scale, PostgreSQL adds them)."""
    select = column.find_ancestor(exp.Select)
    while select is not None:
        sources = [select.args.get("from_"), *(select.args.get("joins") or [])]
        for source in sources:
            item = source.this if isinstance(source, exp.From | exp.Join) else None
            if isinstance(item, exp.Lateral) and item.alias_or_name == column.table:
                inner = item.this.this if isinstance(item.this, exp.Subquery) else item.this
                return _named_select_item(inner, column.name)
            if isinstance(item, exp.Subquery) and item.alias_or_name == column.table:
                return _named_select_item(item.this, column.name)
        with_ = select.args.get("with_")
        for cte in with_.expressions if with_ is not None else []:
            if cte.alias_or_name == column.table:
                return _named_select_item(cte.this, column.name)
        select = select.find_ancestor(exp.Select)
    return None


def _named_select_item(query: Any, name: str) -> exp.Expression | None:
    if not isinstance(query, exp.Select):
        return None
    for e in query.selects:
        if e.alias_or_name == name:
            inner = e.unalias()
            return inner if isinstance(inner, exp.Expression) else None
    return None


def char_length(node: exp.Expression) -> int | None:
    """n, where ``node`` is annotated char(n).  A choice (COALESCE, CASE, ...) is char(n)
    only when every branch is; with a varchar or text branch PostgreSQL resolves it to
    text, unpadded."""
    while isinstance(node, exp.Alias | exp.Paren):
        node = node.this
    if isinstance(node, exp.Case | exp.Coalesce | exp.Greatest | exp.Least | exp.Nullif):
        # a string constant makes it char without a length: its own values print as
        # they are (the columns' values too -- exact for values that fill n, which is
        # what a char(n) column usually holds)
        lengths = {
            None if isinstance(b, exp.Literal) else char_length(b) for b in choice_values(node)
        }
        return lengths.pop() if len(lengths) == 1 else None
    if isinstance(node, exp.Min | exp.Max) and isinstance(node.this, exp.Expression):
        return char_length(node.this)  # (one of the values: printed padded, as stored)
    if isinstance(node, exp.Anonymous) and node.name.lower() in ("arg_min", "arg_max"):
        return char_length(node.expressions[0])  # (a min/max by its collation key)
    if isinstance(node, exp.Column):
        # a derived table's (or CTE's) column is char(n) when its select item is: a
        # choice between char(n) and varchar there is text (sqlglot types it char(n))
        inner = derived_item(node)
        if inner is not None:
            return char_length(inner)
    t = node.type
    if t is None or not t.is_type(exp.DataType.Type.CHAR) or not t.expressions:
        return None
    try:
        return int(t.expressions[0].name)
    except ValueError:
        return None


def udf(name: str, *args: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=list(args))


def is_bytea(node: exp.Expression) -> bool:
    """Whether ``node`` is a bytea value (the engine's BLOB)."""
    typed = unparen(node).type
    return typed is not None and typed.is_type("varbinary", "blob")


def duck_cast(node: exp.Expression, to: str) -> exp.Cast:
    return exp.Cast(this=node, to=exp.DataType.build(to, dialect="duckdb"))


def numeric_float8(node: exp.Expression) -> exp.Expression:
    """A numeric as double precision, as numeric_float8 makes it: its text read as
    float8in reads it (correctly rounded; the engine's own cast divides by a power of
    ten, an ulp off past 2**53)."""
    return duck_cast(udf("pg_float8_text", duck_cast(node, "VARCHAR")), "DOUBLE")


def float8_arithmetic(node: exp.Expression) -> bool:
    """Arithmetic PostgreSQL computes in double precision: a float8 operand, the other
    a number (a real beside a real, or beside an integer, stays real: not here)."""
    kinds = (kind_of(node.this), kind_of(node.expression))
    if "float" not in kinds or not all(k in ("int", "decimal", "float") for k in kinds):
        return False
    return not any(
        k == "float" and side.type is not None and side.type.is_type(exp.DataType.Type.FLOAT)
        for k, side in zip(kinds, (node.this, node.expression), strict=True)
    )


def as_doubles(node: exp.Expression) -> tuple[exp.Expression, exp.Expression]:
    """Both operands as double precision (a numeric one as numeric_float8 makes it)."""
    return _as_double(node.this), _as_double(node.expression)


def _as_double(side: exp.Expression) -> exp.Expression:
    return numeric_float8(side) if kind_of(side) == "decimal" else duck_cast(side, "DOUBLE")


COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)


_MONTH_UNITS = ("MON", "YEAR", "DECADE", "CENTUR", "MILLEN")


def interval_compared(node: exp.Interval) -> bool:
    """An interval constant compared with an interval (age(), a difference of
    timestamps), of one sign throughout: DuckDB compares intervals as PostgreSQL does
    (months of 30 days, days of 24 hours) where each one's parts share a sign."""
    parent = node.parent
    if not isinstance(parent, COMPARISONS) or "-" in node.this.name:
        return False
    other = parent.expression if parent.this is node else parent.this
    return is_interval(other) and not isinstance(other, exp.Interval)


def has_months(node: exp.Interval) -> bool:
    """Whether an interval constant has a month or year part."""
    text = f"{node.this.name} {node.unit.name if node.unit is not None else ''}".upper()
    return any(unit in text for unit in _MONTH_UNITS)


_INSTANTS = frozenset({"timestamp", "timestamptz"})


def is_interval(node: exp.Expression) -> bool:
    """Whether PostgreSQL types ``node`` interval: age(), an interval constant, a
    difference of timestamps, a sum or difference of intervals."""
    while isinstance(node, exp.Paren | exp.Neg):
        node = node.this
    if isinstance(node, exp.Anonymous) and node.name.lower() == "age":
        return True
    if isinstance(node, exp.Interval) or (
        isinstance(node, exp.Cast) and node.to.is_type(exp.DataType.Type.INTERVAL)
    ):
        return True
    if isinstance(node, exp.Sub) and {kind_of(node.this), kind_of(node.expression)} <= _INSTANTS:
        return True  # (a timestamp beside a timestamptz is read in the session's zone)
    if isinstance(node, exp.Add | exp.Sub):
        return is_interval(node.this) and is_interval(node.expression)
    return False


def has_age(node: exp.Expression) -> bool:
    return any(isinstance(n, exp.Anonymous) and n.name.lower() == "age" for n in node.walk())


def scale_of(node: exp.Expression) -> int | None:
    """The scale PostgreSQL gives a numeric or integer value of ``node``, where the type
    alone decides it (None: it does not, or it is not known)."""
    k = kind_of(node)
    if k == "int":
        return 0
    if k != "decimal":
        return None
    while isinstance(node, exp.Paren | exp.Neg):
        node = node.this
    if isinstance(node, exp.Literal):
        text = str(node.this)
        return None if "e" in text.lower() else len(text.partition(".")[2])
    if isinstance(node, exp.Ceil | exp.Floor | exp.Sign):  # of a numeric: scale 0
        return 0
    if node.meta.get("scale") is not None:  # rewritten by _at_scale
        return int(node.meta["scale"])
    if isinstance(node, exp.Round | exp.Trunc):  # round(numeric, n) has scale n exactly
        digits = node.args.get("decimals")
        if digits is None:
            return 0
        return int(digits.this) if isinstance(digits, exp.Literal) and digits.is_int else None
    params = node.type.expressions if node.type is not None else []
    if len(params) == 2:
        return int(params[1].name)
    return None


def is_bigint(node: exp.Expression) -> bool:
    """Whether PostgreSQL types an integer expression bigint: integer arithmetic stays
    integer unless a side is bigint (sqlglot types a quotient of integers bigint), and a
    derived table's column is its select item."""
    while isinstance(node, exp.Paren | exp.Neg | exp.Abs):
        node = node.this
    if isinstance(node, exp.Column):
        inner = derived_item(node)
        if inner is not None:
            return is_bigint(inner)
    if isinstance(node, exp.Add | exp.Sub | exp.Mul | exp.Div | exp.IntDiv | exp.Mod):
        return is_bigint(node.this) or is_bigint(node.expression)
    if isinstance(node, exp.Literal) and not node.is_string:
        return abs(int(str(node.this))) >= 2**31
    return node.type is not None and node.type.is_type(exp.DataType.Type.BIGINT)


# PostgreSQL's integer types by width in bytes, as the client engine names them
INT_DUCK_WIDTH = {2: "SMALLINT", 4: "INTEGER", 8: "BIGINT"}


TYPE_WIDTH = {
    exp.DataType.Type.SMALLINT: 2,
    exp.DataType.Type.TINYINT: 2,
    exp.DataType.Type.INT: 4,
    exp.DataType.Type.BIGINT: 8,
}


_INT_ARITHMETIC = (
    exp.Add, exp.Sub, exp.Mul, exp.Div, exp.IntDiv, exp.Mod,
    exp.BitwiseAnd, exp.BitwiseOr, exp.BitwiseXor,
)  # fmt: skip
# a shift's and a complement's type is their (left) operand's
_INT_SHIFTS = (exp.BitwiseLeftShift, exp.BitwiseRightShift, exp.BitwiseNot)
# integer-valued functions and aggregates whose type PostgreSQL fixes: bigint, integer
_BIGINT_VALUED = (exp.Count, exp.RowNumber, exp.Rank, exp.DenseRank)
_INTEGER_VALUED = (exp.Length, exp.StrPosition, exp.Ntile)


def _literal_width(node: exp.Literal) -> int | None:
    if node.is_string:
        return None
    text = str(node.this)
    return (4 if int(text) < 2**31 else 8) if text.isdigit() else None


def _negated_width(node: exp.Neg) -> int | None:
    inner = node.this
    while isinstance(inner, exp.Paren):
        inner = inner.this
    if isinstance(inner, exp.Literal) and not inner.is_string:
        text = str(inner.this)  # (one constant: -2147483648 is an integer)
        return (4 if int(text) <= 2**31 else 8) if text.isdigit() else None
    return int_width(inner)


def _wider_operand(node: exp.Binary) -> int | None:
    a, b = int_width(node.this), int_width(node.expression)
    return None if a is None or b is None else max(a, b)


def _column_width(node: exp.Column) -> int | None:
    inner = derived_item(node)
    if inner is not None:
        return int_width(inner)
    return TYPE_WIDTH.get(node.type.this) if node.type is not None else None


def _choice_width(node: exp.Expression) -> int | None:
    # a CASE / COALESCE / GREATEST / LEAST of integers: the widest branch's type (a
    # constant's integer: least(smallint_col, 0) is an integer)
    widths = [int_width(v) for v in choice_values(node)]
    return None if not widths or None in widths else max(w for w in widths if w is not None)


# the width of an integer-valued node, by its type (:func:`by_type`)
_INT_WIDTHS: dict[type[exp.Expression], Callable[[Any], int | None]] = {
    exp.Literal: _literal_width,
    exp.Neg: _negated_width,
    exp.Cast: lambda node: TYPE_WIDTH.get(node.to.this),
    **dict.fromkeys(_INT_ARITHMETIC, _wider_operand),
    **dict.fromkeys(_INT_SHIFTS, lambda node: int_width(node.this)),
    # (min/max/abs keep their argument's type; a window its function's)
    **dict.fromkeys((exp.Abs, exp.Min, exp.Max, exp.Window), lambda node: int_width(node.this)),
    **dict.fromkeys(_BIGINT_VALUED, lambda node: 8),
    **dict.fromkeys(_INTEGER_VALUED, lambda node: 4),
    exp.Column: _column_width,
    **dict.fromkeys((exp.Case, exp.Coalesce, exp.Greatest, exp.Least), _choice_width),
}


def int_width(node: exp.Expression) -> int | None:
    """The width (2, 4, 8) of the integer type PostgreSQL gives the integer-valued
    ``node``, or None where it is not known here (a parameter: its value's type).

    A constant is integer if it fits, else bigint; a negative constant is one constant
    (``-2147483648`` is an integer); arithmetic is in the wider operand's type;
    ``count``, ``row_number``, ``rank`` are bigint; sums were cast to bigint already
    (:func:`sums.sum_typed`); min/max/abs keep their argument's type."""
    while isinstance(node, exp.Paren):
        node = node.this
    width = by_type(_INT_WIDTHS, node)
    return None if width is None else width(node)


# the name PostgreSQL's errors give a value's type, by its kind (integers by width)
_KIND_NAMES = {
    "decimal": "numeric",
    "float": "double precision",
    "text": "text",
    "date": "date",
    "timestamp": "timestamp without time zone",
    "timestamptz": "timestamp with time zone",
    "bool": "boolean",
}

_INT_NAMES = {2: "smallint", 4: "integer", 8: "bigint"}


def pg_type_name(node: exp.Expression) -> str | None:
    """The name PostgreSQL's messages give the type of ``node``'s value (``integer``,
    ``double precision``, ``real``...), None where its kind is not one of those known
    here; a string constant is ``unknown``, as PostgreSQL types it until resolved."""
    bare = unparen(node)
    if isinstance(bare, exp.Literal) and bare.is_string:
        return "unknown"
    kind = kind_of(node)
    if kind == "int":
        return _INT_NAMES.get(int_width(node) or 4, "integer")
    if kind == "float" and node.type is not None and node.type.is_type(exp.DataType.Type.FLOAT):
        return "real"
    return _KIND_NAMES.get(kind)


def is_constant_int(node: exp.Expression) -> bool:
    """An integer constant, negative or not."""
    if isinstance(node, exp.Neg):
        node = node.this
    return isinstance(node, exp.Literal) and not node.is_string and str(node.this).isdigit()


def has_declared_scale(column: exp.Column) -> bool:
    """Is the column's type numeric with a declared scale (numeric(p,s))?"""
    t = column.type
    return t is not None and t.is_type(exp.DataType.Type.DECIMAL) and len(t.expressions) == 2


def varchar_length(to: exp.DataType) -> int | None:
    """n of varchar(n), a positive constant."""
    if len(to.expressions) != 1:
        return None
    try:
        n = int(to.expressions[0].name)
    except ValueError:
        return None
    return n if n > 0 else None


def is_clock_param(node: exp.Cast) -> bool:
    """A clock value's parameter, typed (clock.clock_parameters): named so until
    to_duckdb numbers the parameters; the only cast of a parameter to timestamptz."""
    return is_clock_cast(node) or (
        isinstance(node.this, exp.Placeholder) and node.to.is_type(exp.DataType.Type.TIMESTAMPTZ)
    )


def position_of(key: exp.Expression) -> int | None:
    """The output column an ORDER BY / GROUP BY / DISTINCT ON key names by position: an
    integer written bare -- not ``(2)``, nor ``1 + 1`` folded to 2 (fold.py marks it)."""
    if (
        isinstance(key, exp.Literal)
        and not key.is_string
        and str(key.this).isdigit()
        and not key.meta.get("folded")
    ):
        return int(key.this)
    return None


def unparen(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def is_star(item: exp.Expression) -> bool:
    """A select list's ``*`` or ``alias.*``."""
    return isinstance(item, exp.Star) or (
        isinstance(item, exp.Column) and isinstance(item.this, exp.Star)
    )


def is_uuid(node: exp.Expression) -> bool:
    """A uuid, or a value held by its order key (engine/held.py): a string compared with
    one is a value of its type, not text."""
    typed = unparen(node).type
    return typed is not None and typed.this in (exp.DataType.Type.UUID, exp.DataType.Type.STRUCT)


def leftmost(tree: exp.Expression) -> exp.Select:
    while not isinstance(tree, exp.Select):
        if isinstance(tree, exp.SetOperation | exp.Subquery):
            tree = tree.this
        else:
            raise _refuse(type(tree).__name__, tree)
    return tree


def construct_name(node: Any) -> str:
    if isinstance(node, exp.Anonymous):
        return f"function {node.name}()"
    if isinstance(node, exp.Func):  # as the application spells it, not sqlglot's name
        return f"function {node.sql('postgres').split('(')[0].lower()}()"
    return type(node).__name__


def int_typed(node: exp.Expression) -> exp.Expression:
    """Integer arithmetic computed in the type PostgreSQL gives it: both operands cast
    to the wider one's type, so that the client engine raises where PostgreSQL raises
    "integer out of range" (DuckDB widens ``int + constant`` to bigint, and ``int *
    int`` past int4 would be answered, not refused).  Other arithmetic as it is."""
    if kind_of(node.this) != "int" or kind_of(node.expression) != "int":
        return node
    width = int_width(node)
    if width is None:
        return node
    for key in ("this", "expression"):
        node.set(key, duck_cast(node.args[key], INT_DUCK_WIDTH[width]))
    return node
