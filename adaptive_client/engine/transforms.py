"""The client engine's dialect of a PostgreSQL expression: each node of a qualified,
annotated statement rewritten so that the client engine (DuckDB) computes what
PostgreSQL computes, or refused where it would not.

The rewrites are a table, :data:`TRANSFORMS`, of one function per node type, applied
children first by :func:`rewrite_bottom_up`:

* integer ``+ - * / %`` and negation are computed in the type PostgreSQL gives them
  (the wider operand's: both operands cast to it), so that the client engine raises
  where PostgreSQL raises "integer out of range" (DuckDB widens ``int + constant`` to
  bigint); integer ``/`` truncates (DuckDB ``//``); double precision ``+ - * /`` go
  through the ``pg_float8_*`` macros (PostgreSQL's overflow, underflow and division by
  zero); numeric ``/`` gives PostgreSQL's quotient (its result scale: an output is
  divided on the client, inside the statement a UDF computes it or refuses); text cast
  to an integer type or double precision is read by PostgreSQL's input rules
  (``pg_int_in``, ``pg_float8_text``);
* ``sum`` and ``avg`` are typed and computed as PostgreSQL does (engine/sums.py);
  ``round`` / ``trunc`` of numerics have the scale asked for;
* ``lower`` / ``upper`` / ``ILIKE`` map case as the database does, ``substr`` follows
  PostgreSQL for starts below 1, ``length`` and ``position`` are integers;
* ``extract``, ``date_part``, ``date_trunc``, ``age()``, ``to_char()``, timestamptz
  differences and intervals: engine/time_functions.py; ``octet_length()`` is the
  engine's ``strlen``;
* choices and set operations between numerics of different scales are refused (PostgreSQL
  keeps each value's display scale, DuckDB gives every row the widest).

The rest of the statement's translation (its outputs, LIKE's escape, constant keys,
names differing in case) is engine/engine_sql.py; text order under collations,
engine/text_order.py.  Nothing here reads the catalog or compiles for the server.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from psycopg import errors as pg_errors
from sqlglot import exp

from . import date_constructors, format_text, scalar_functions, time_functions
from .function_types import is_not_text, not_text_error, not_text_operand
from .kinds import (
    INT_DUCK_WIDTH,
    TYPE_WIDTH,
    as_doubles,
    by_type,
    char_length,
    choice_values,
    construct_name,
    derived_item,
    duck_cast,
    float8_arithmetic,
    has_declared_scale,
    int_typed,
    int_width,
    is_bytea,
    is_clock_param,
    is_constant_int,
    kind_of,
    numeric_float8,
    pg_type_name,
    scale_of,
    udf,
    unparen,
    varchar_length,
)
from .math_operators import (
    BITWISE_OPERATORS,
    FLOAT8_FUNCTIONS,
    bitwise,
    float8_function,
    float8_power,
    negation,
    random_value,
    shift,
)
from .numeric_keys import keyed_cast, keyed_comparison
from .ordered_sets import percentile
from .regexes import regexp_replace, similar_to
from .runtime import refusal as _refuse
from .session_settings import DATESTYLE, FLOAT_DIGITS
from .set_operations import set_operation
from .sums import (
    REALS,
    VARIANCES,
    avg_parts,
    exact_quotient,
    float_avg,
    real_valued,
    sum_typed,
    variance_elsewhere,
)
from .time_zones import at_time_zone

# functions sqlglot leaves unparsed, with DuckDB's equivalent (checked against PostgreSQL)
ENGINE_FUNCTIONS = {
    "octet_length": "strlen",  # bytes of the UTF-8 text (the database's encoding)
    "to_char": "pg_to_char",  # of a date or timestamp, its format's patterns (to_char.py)
}


def _exponent_literal(node: exp.Literal) -> exp.Expression:
    """A numeric constant written with an exponent (``1e30``, ``2.5E-3``): numeric in
    PostgreSQL, with the display scale its digits and exponent give; DuckDB reads it as
    a double."""
    parent = node.parent
    while isinstance(parent, exp.Paren | exp.Neg):
        parent = parent.parent
    if isinstance(parent, exp.Binary) and "float" in (
        kind_of(parent.this),
        kind_of(parent.expression),
    ):
        return node  # beside a double precision it is one (the same double in both)
    value = Decimal(node.name)
    exponent = value.as_tuple().exponent
    assert isinstance(exponent, int)
    scale = max(0, -exponent)
    digits = max(value.adjusted() + 1, 0) + scale
    if digits > 38:
        raise _refuse("a numeric constant of more than 38 digits", node)
    plain = exp.Literal.string(format(value, "f"))
    return duck_cast(plain, f"DECIMAL({max(digits, 1)},{scale})")


_ROUND_SCALE_MAX = 30  # digits left for the integer part: at least 8


def _at_scale(node: exp.Expression, scale: int) -> exp.Expression:
    """``node``'s numeric value at ``scale`` decimals exactly (a refusal at run time where
    the client engine's 38 digits cannot hold it at that scale)."""
    if scale > _ROUND_SCALE_MAX:
        raise _refuse(f"a numeric rounded to more than {_ROUND_SCALE_MAX} decimals", node)
    # (20 integer digits where that fits in 38: beside another scale in a choice, DuckDB's
    # common type of two DECIMAL(38, s) would round the wider scale away)
    to = f"DECIMAL({min(38, scale + 20)},{scale})"
    wide = exp.TryCast(this=node.copy(), to=exp.DataType.build(to, dialect="duckdb"))
    lost = exp.and_(exp.Not(this=exp.Is(this=node.copy(), expression=exp.Null())),
                    exp.Is(this=wide, expression=exp.Null()))  # fmt: skip
    message = exp.Literal.string("a numeric beyond the client engine's 38 digits")
    scaled = exp.Case(
        ifs=[exp.If(this=lost, true=udf("error", message))], default=duck_cast(node, to)
    )
    scaled.meta["scale"] = scale  # (a numeric of this scale: kind_of, scale_of)
    return scaled


# nodes that use only an operand's value: its display scale is not shown
_COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.Between, exp.In)
_VALUE_USES = (*_COMPARISONS, exp.Ordered, exp.Count)  # (a count: only whether it is NULL)


def _value_only(node: exp.Expression) -> bool:
    parent = node.parent
    while isinstance(parent, exp.Paren):
        parent = parent.parent
    return isinstance(parent, _VALUE_USES)


def _check_cast(node: exp.Cast) -> exp.Expression:
    if is_clock_param(node):
        return node
    src = kind_of(node.this)
    # a string literal, or a parameter the cast types (psycopg's %s::integer, the way
    # SQLAlchemy sends every value): its value is given in the type cast to
    literal = (isinstance(node.this, exp.Literal) and node.this.is_string) or isinstance(
        node.this, exp.Placeholder
    )
    to = node.to
    T = exp.DataType.Type
    if src == "text" and not isinstance(node.this, exp.Placeholder):
        # text read as PostgreSQL's input functions read it (DuckDB's casts take other
        # spellings: '1e3', ' 0x10', '1_000')
        width = TYPE_WIDTH.get(to.this)
        if width is not None:
            value = udf("pg_int_in", node.this, exp.Literal.number(width))
            return duck_cast(value, INT_DUCK_WIDTH[width])
        if to.this is T.DOUBLE:
            return duck_cast(udf("pg_float8_text", node.this), "DOUBLE")
        if to.this is T.BOOLEAN:
            return udf("pg_bool_in", node.this)
        if to.this in (T.DATE, T.TIMESTAMP) and not literal:
            # (text_casts.py: PostgreSQL's date and timestamp input, in the DateStyle)
            kind = "date" if to.this is T.DATE else "timestamp"
            style = udf("getvariable", exp.Literal.string(DATESTYLE))
            return duck_cast(udf(f"pg_{kind}_in", node.this, style), kind.upper())
        if to.this is T.DECIMAL and not to.expressions and _value_only(node):
            # compared or ordered by, only its value counts (not its display scale)
            return keyed_cast(node.this)
    if src == "float" and to.this is T.DECIMAL and len(to.expressions) == 2 and not literal:
        # (scalar_udfs.float_numeric: the float's shortest digits, then the typmod)
        p, s = (int(e.name) for e in to.expressions)
        if not 0 <= s <= p <= 38:
            raise _refuse("cast to numeric without a precision of at most 38", node)
        digits = 6 if _is_real(node.this, node) else 15
        args = [exp.Literal.number(n) for n in (digits, p, s)]
        value = udf("pg_float_numeric", duck_cast(node.this, "DOUBLE"), *args)
        return duck_cast(value, f"DECIMAL({p},{s})")
    if src == "decimal" and to.this is T.DOUBLE and not literal:
        return numeric_float8(node.this)
    ok = {
        # numeric to integer rounds half away from zero in both engines, double
        # precision half to even (rint) in both
        T.INT: ("int", "decimal", "float", "bool"),  # (true::int is 1: int4's cast only)
        T.BIGINT: ("int", "decimal", "float"),
        T.SMALLINT: ("int", "decimal", "float"),
        T.DECIMAL: ("int", "decimal"),
        T.TEXT: ("text", "int", "date", "float"),
        T.VARCHAR: ("text", "int", "date", "float"),
        # (a timestamptz's date and local time are those in the session's time zone:
        # the engine computes in it)
        T.DATE: ("date", "timestamp", "timestamptz"),
        T.TIMESTAMP: ("date", "timestamp", "timestamptz"),
        # (a local time in the session's zone and back: the engine computes in it)
        T.TIMESTAMPTZ: ("date", "timestamp", "timestamptz"),
        T.TIME: ("timestamp", "timestamptz"),
        T.DOUBLE: ("int", "float"),
        T.BOOLEAN: ("bool",),
    }[to.this]
    if (
        to.this in (T.TIME, T.TIMESTAMPTZ)
        and literal
        and not time_functions.iso_constant(node.this, to)
    ):
        # (PostgreSQL's input reads zone names, abbreviations, 'allballs', AM/PM... which
        # the engine's does not, or otherwise: the ISO forms alone)
        raise _refuse(f"cast of other than an ISO constant to {to.sql('postgres')}", node)
    if node.meta.get("numeric_out"):  # an output converted on the client (numeric_outputs)
        return duck_cast(node.this, "VARCHAR") if src == "text" else node.this
    if src == "bool" and to.this in (T.BIGINT, T.SMALLINT):
        raise pg_errors.CannotCoerce(f"cannot cast type boolean to {to.sql('postgres').lower()}")
    if not literal and src not in ok and not _printed_alike(node.this, to):
        raise _refuse(f"cast of a {src} value to {to.sql('postgres')}", node)
    if to.this is T.TIME and to.expressions:
        raise _refuse("cast to time(p)", node)
    if to.this is T.TIME and src == "timestamptz":
        return duck_cast(duck_cast(node.this, "TIMESTAMP"), "TIME")  # (its local time)
    if to.this is T.DECIMAL and not to.expressions and not literal:
        # numeric without a precision keeps every value as it is: an integer's at scale
        # 0 (38 digits hold any bigint), a numeric's unchanged
        if src == "int":
            return duck_cast(node.this, "DECIMAL(38,0)")
        if src == "decimal":
            return node.this
    if to.this is T.DECIMAL:
        params = to.expressions
        if not params or int(params[0].name) > 38:
            raise _refuse("cast to numeric without a precision of at most 38", node)
    n = varchar_length(to) if to.this is T.VARCHAR else None
    source: exp.Expression = node.this
    if src == "date" and to.this in (T.TEXT, T.VARCHAR):
        # printed in the session's DateStyle (set on the engine by residual.run), not ISO
        source = udf("pg_date_text", node.this, udf("getvariable", exp.Literal.string(DATESTYLE)))
        if n is None:
            return source
    if src == "float" and to.this in (T.TEXT, T.VARCHAR):
        # float8out / float4out, under the session's extra_float_digits (residual.run)
        out = "pg_float4_out" if _is_real(node.this, node) else "pg_float8_out"
        setting = udf("getvariable", exp.Literal.string(FLOAT_DIGITS))
        source = udf(out, duck_cast(node.this, "DOUBLE"), setting)
        if n is None:
            return source
    if n is not None:
        # an explicit cast to varchar(n) keeps the first n characters (DuckDB's
        # VARCHAR has no length); code points, as PostgreSQL counts them
        unsized = duck_cast(source, "VARCHAR")
        return udf("pg_substr3", unsized, exp.Literal.number(1), exp.Literal.number(n))
    return node


def _is_real(value: exp.Expression, node: exp.Expression) -> bool:
    """Whether a float ``value`` is a real, not a double precision (sqlglot types both
    double): a real column, read directly or through a derived table, or a cast to real;
    another expression over a real column is refused, its type not known here."""
    bare = unparen(value)
    while isinstance(bare, exp.Neg | exp.Abs):
        bare = unparen(bare.this)
    item = derived_item(bare) if isinstance(bare, exp.Column) else None
    if item is not None:
        inner = item.unalias()
        assert isinstance(inner, exp.Expression)
        return _is_real(inner, node)
    if pg_type_name(value) == "real" or real_valued(value, REALS.get()):
        return True
    if any((c.table, c.name) in REALS.get() for c in value.find_all(exp.Column)):
        raise _refuse("a float expression over a real column, printed or made numeric", node)
    return False


def _printed_alike(value: exp.Expression, to: exp.DataType) -> bool:
    """A cast the engine prints as PostgreSQL's output function does: NULL to anything;
    to text, a boolean (``true``), a uuid (lower-case, hyphenated) and a numeric column
    of declared scale (its digits at that scale: an expression's display scale may be
    another in PostgreSQL)."""
    if isinstance(value, exp.Null):
        return True
    if not to.is_type(exp.DataType.Type.TEXT, exp.DataType.Type.VARCHAR):
        return False
    kind = kind_of(value)
    if kind == "bool":
        return True
    if kind == "decimal":
        return isinstance(value, exp.Column) and has_declared_scale(value)
    typed = value.type
    return typed is not None and typed.is_type(exp.DataType.Type.UUID)


def _check_uniform_scale(node: exp.Expression) -> None:
    """CASE / COALESCE / GREATEST / LEAST over numerics of different scales: PostgreSQL
    keeps each value's own scale (``CASE WHEN c THEN 1.50 ELSE 0 END`` prints ``1.50`` or
    ``0``), DuckDB gives every row the widest.  Refused rather than answered differently."""
    values = choice_values(node)
    kinds = {kind_of(b) for b in values}
    # (a numeric constant such as 2.5 is annotated double: the branches tell the type)
    if "decimal" not in kinds or not kinds <= {"int", "decimal"}:
        return
    if node.meta.get("rescaled"):
        return  # an output whose display scale is computed beside it (scale_outputs)
    parent = node.parent
    while parent is not None:  # compared or ordered by, only the value counts
        if isinstance(parent, exp.Predicate | exp.Ordered) or parent.meta.get("rescaled"):
            return  # (a rescaled sum: its display scale is computed, see scale_outputs)
        parent = parent.parent
    scales = {scale_of(b) for b in values}
    if len(scales) > 1 or None in scales:
        raise _refuse("a choice between numerics of different scales", node)


# -- the rewrites, one per node type -----------------------------------------------------
# Each takes one node of the annotated, qualified tree (its children already rewritten)
# and gives what DuckDB must compute to answer what PostgreSQL answers: the node itself,
# changed in place or checked, or a replacement.  A check that refuses raises.


def _untyped_parameter(operand: exp.Expression) -> bool:
    """A parameter in ``operand`` whose value's own type decides the operand's (no cast
    to a type between them): its division is integer or exact by the value given."""
    for p in operand.find_all(exp.Placeholder):
        node: exp.Expr | None = p
        while node is not None and node is not operand and not isinstance(node, exp.Cast):
            node = node.parent
        if not isinstance(node, exp.Cast):
            return True
    return False


def _division(node: exp.Div) -> exp.Expression:
    if node.meta.get("avg"):  # aggregate.py's avg parts
        return exact_quotient(node.this, node.expression, node)
    a, b = kind_of(node.this), kind_of(node.expression)
    if _untyped_parameter(node.this) or _untyped_parameter(node.expression):
        raise _refuse("division by a parameter (its type decides the division)", node)
    if a == "int" and b == "int":
        # truncated toward zero, in the operands' common type (INT_MIN / -1 overflows)
        return int_typed(exp.IntDiv(this=node.this, expression=node.expression))
    if float8_arithmetic(node):
        return udf("pg_float8_div", *as_doubles(node))
    if "float" in (a, b) and a in ("int", "decimal", "float") and b in ("int", "decimal", "float"):
        divisor = exp.Case(
            ifs=[
                exp.If(
                    this=exp.EQ(this=node.expression.copy(), expression=exp.Literal.number(0)),
                    true=udf("error", exp.Literal.string("division by zero")),
                )
            ],
            default=node.expression,
        )
        return exp.Div(this=node.this, expression=divisor)
    if a in ("int", "decimal") and b in ("int", "decimal"):
        return exact_quotient(node.this, node.expression, node)
    raise _refuse(f"division of {a} by {b}", node)


def _modulo(node: exp.Mod) -> exp.Expression:
    # exact in both engines, the dividend's sign, the larger scale of the two (a zero
    # divisor raises in both); a float's is refused (PostgreSQL has none)
    if kind_of(node.this) in ("int", "decimal") and kind_of(node.expression) in ("int", "decimal"):
        return int_typed(node)
    raise _refuse("modulo of other than integers and numerics", node)


_FLOAT8_OPERATORS: dict[type[exp.Expression], str] = {
    exp.Add: "add",
    exp.Sub: "sub",
    exp.Mul: "mul",
}


def _arithmetic(node: exp.Add | exp.Sub | exp.Mul) -> exp.Expression:
    kinds = {kind_of(node.this), kind_of(node.expression)}
    if (
        isinstance(node, exp.Sub)
        and "timestamptz" in kinds
        and kinds <= {"timestamp", "timestamptz"}
    ):
        return time_functions.instants_apart(node)
    if isinstance(node, exp.Sub) and kinds == {"date"}:
        days = duck_cast(node, "INTEGER")  # (DuckDB's difference of dates is a bigint)
        days.type = exp.DataType.build("INT")
        return days
    if float8_arithmetic(node):
        return udf(f"pg_float8_{_FLOAT8_OPERATORS[type(node)]}", *as_doubles(node))
    return int_typed(node)


# (each node is rewritten once, children first: a wrapper built here is not revisited)
def _wrapped_aggregate(node: exp.Window | exp.Filter) -> exp.Expression:
    if isinstance(node.this, exp.Sum):
        # the sum's typing wraps the window or filtered sum, not the sum alone
        return sum_typed(node.this, node)
    if isinstance(node.this, exp.Avg):
        return exact_quotient(*avg_parts(node), node)
    if isinstance(node.this, exp.Ntile):  # (an integer in PostgreSQL, DuckDB's a bigint)
        typed = duck_cast(node, "INTEGER")
        typed.type = exp.DataType.build("INT")
        return typed
    return node


def _sum(node: exp.Sum) -> exp.Expression:
    if node.meta.get("text_sum"):  # an output summed on its texts (numeric_outputs)
        return udf("pg_numeric_text_sum", exp.Anonymous(this="list", expressions=[node.this]))
    if isinstance(node.parent, exp.Window | exp.Filter):
        return node  # typed with its wrapper
    return sum_typed(node, node)


def _avg(node: exp.Avg) -> exp.Expression:
    if isinstance(node.parent, exp.Window | exp.Filter):
        return node  # divided with its wrapper
    if kind_of(node.this) == "float":
        return float_avg(node)
    return exact_quotient(*avg_parts(node), node)


def _nullif(node: exp.Nullif) -> exp.Expression:
    # PostgreSQL returns the first argument promoted to the comparison's common type;
    # DuckDB keeps the first argument's own
    first, wider = kind_of(node.this), kind_of(node)
    if first != wider and first in ("int", "decimal"):
        node.set("this", duck_cast(node.this, "DOUBLE" if wider == "float" else "DECIMAL(38,0)"))
    return node


def _array_agg(node: exp.ArrayAgg) -> exp.Expression:
    if "row_call" in node.meta:  # (the rows of an aggregate's call: engine/row_calls.py)
        return node
    arg = node.this.this if isinstance(node.this, exp.Order) else node.this
    kind = kind_of(arg)
    if char_length(arg) is not None:
        raise _refuse("array_agg() of char(n) (its elements are padded)", node)
    if kind == "decimal" and not (isinstance(arg, exp.Column) and has_declared_scale(arg)):
        # (an element keeps its own display scale; a column's is its declared one)
        raise _refuse("array_agg() of numerics other than a numeric(p,s) column", node)
    if kind not in ("int", "decimal", "text", "date", "timestamp", "bool"):
        raise _refuse(f"array_agg() of a {kind} value", node)
    return node


def _choice(node: exp.Expression) -> exp.Expression:
    _check_uniform_scale(node)
    width = int_width(node) if kind_of(node) == "int" else None
    if width is not None:  # (DuckDB types least(smallint_col, 0) a smallint)
        typed = duck_cast(node, INT_DUCK_WIDTH[width])
        typed.type = exp.DataType.build(INT_DUCK_WIDTH[width])
        return typed
    return node


def _shifted(node: exp.Lag | exp.Lead) -> exp.Expression:
    """lag/lead with a default of another kind than the value: PostgreSQL gives both
    their common type, each value keeping its own display scale (``lag(i, 1, 0.7)`` is
    0.7 or the integer, as numerics); DuckDB casts the default to the value's type (1).
    Refused rather than answered so."""
    default = node.args.get("default")
    if default is not None:
        kinds = {kind_of(node.this), kind_of(default)}
        if None not in kinds and len(kinds) > 1:
            raise _refuse(f"{node.key}() with a default of another type than its value", node)
    return node


def _text_function(node: exp.Expression) -> exp.Expression:
    if kind_of(node.this) != "text":
        raise not_text_error(node, node.this)
    return node


_CALL_REWRITES: dict[str, Callable[[exp.Anonymous], exp.Expression]] = {
    "age": time_functions.age, "to_char": time_functions.to_char,
    **scalar_functions.FUNCTIONS, **date_constructors.FUNCTIONS,
}  # fmt: skip


def _function_call(node: exp.Anonymous) -> exp.Expression:
    name = node.name.lower()
    rewrite = _CALL_REWRITES.get(name)
    if rewrite is not None:
        return rewrite(node)
    if name in ENGINE_FUNCTIONS:
        args = node.expressions
        if name == "octet_length" and len(args) == 1 and is_bytea(args[0]):
            return duck_cast(udf("octet_length", args[0]), "INTEGER")  # (a bytea's bytes)
        if len(args) == 1 and kind_of(args[0]) != "text":
            raise not_text_error(node, args[0])
        if len(args) != 1 or char_length(args[0]) is not None:
            # (char(n) arrives unpadded; PostgreSQL counts its padding's bytes)
            raise _refuse(f"{name}() of other than one text value", node)
        return duck_cast(udf(ENGINE_FUNCTIONS[name], args[0]), "INTEGER")
    return node


def _concat(node: exp.Concat) -> exp.Expression:
    """concat() and concat_ws(): each value printed by its type's output function, NULLs
    skipped (by DuckDB's too)."""
    args = [_concatenated(arg) for arg in node.expressions]
    node.set("expressions", args)
    return node


def _concatenated(arg: exp.Expression) -> exp.Expression:
    """A concat() argument as its type's output function prints it: a char(n) padded to n
    (the engine holds it unpadded; ``||`` casts it to text, which drops the padding)."""
    width = char_length(arg)
    if width is not None:
        padded = exp.Anonymous(
            this="rpad", expressions=[arg, exp.Literal.number(width), exp.Literal.string(" ")]
        )
        padded.type = exp.DataType.build("VARCHAR")
        return padded
    if kind_of(arg) in ("text", "int") or isinstance(arg, exp.Null):
        return arg
    return _output_text(arg)


_ASCII_CASES = ("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def explicit_case_collation(node: exp.Expression) -> str | None:
    """The collation an argument's ``COLLATE`` gives a case-mapping node (marked by
    text_order), None where it has the database's; another than C refused."""
    collation = node.meta.get("collation")
    if collation is not None and collation.lower() not in ("c", "posix"):
        raise _refuse(f"case mapping under the collation {collation!r}", node)
    return collation


def _case_mapped(node: exp.Lower | exp.Upper) -> exp.Expression:
    if kind_of(node.this) != "text" and is_not_text(node.this):
        raise not_text_error(node, node.this)  # (a parameter's text is lowered as it is)
    if explicit_case_collation(node) is not None:
        # under C, PostgreSQL maps the ASCII letters alone
        lower, upper = _ASCII_CASES
        src, dst = (lower, upper) if isinstance(node, exp.Upper) else (upper, lower)
        call = exp.Anonymous(
            this="translate",
            expressions=[node.this, exp.Literal.string(src), exp.Literal.string(dst)],
        )
        call.type = exp.DataType.build("VARCHAR")
        return call
    return udf("pg_" + type(node).__name__.lower(), node.this)


def _regex_match(node: exp.RegexpLike) -> exp.Expression:  # a portable one (literal_regexes)
    if kind_of(node.this) != "text":
        not_text_operand(node)
        raise _refuse("~ of a non-text value", node)
    # 's': '.' matches a newline too, as in PostgreSQL's default (not newline-sensitive) mode
    return udf("regexp_matches", node.this, node.expression, exp.Literal.string("s"))


def _reverse(node: exp.Reverse) -> exp.Expression:
    if kind_of(node.this) != "text":
        raise not_text_error(node, node.this, "reverse()")
    return udf("pg_reverse", node.this)  # code points (DuckDB's: graphemes)


def _sign_ceil_floor(node: exp.Sign | exp.Ceil | exp.Floor) -> exp.Expression:
    kind = kind_of(node.this)
    if len([a for a in node.args.values() if a is not None]) != 1:
        raise _refuse(f"{construct_name(node)} with more than one argument", node)
    # PostgreSQL: sign/ceil/floor of a numeric are numeric (scale 0), of an integer or a
    # double precision double precision (DuckDB keeps an integer's type).  DuckDB's
    # ceil/floor of a DECIMAL(p,s) are DECIMAL(p,0) already; its sign a TINYINT.  (Not
    # DECIMAL(38,0): beside a scaled value in a choice, no digit would be left for its
    # fraction.)
    if kind == "decimal":
        return duck_cast(node, "DECIMAL(1,0)") if isinstance(node, exp.Sign) else node
    if kind in ("int", "float"):
        return duck_cast(node, "DOUBLE")
    raise _refuse(f"{construct_name(node)} of a non-number", node)


def _like(node: exp.Like | exp.ILike) -> exp.Expression:
    not_text_operand(node)
    n = char_length(node.this)
    if n is not None:  # char(n) LIKE matches the padded value, as PostgreSQL does
        pad = (exp.Literal.number(n), exp.Literal.string(" "))
        node.set("this", udf("rpad", node.this, *pad))
    return node


def _ilike(node: exp.ILike) -> exp.Expression:
    if explicit_case_collation(node) is not None:
        raise _refuse("ILIKE under an explicit collation", node)
    _like(node)  # (the padding of char(n), as LIKE)
    return exp.Like(  # NOT ILIKE's negation kept (it is an argument, not a node)
        this=udf("pg_lower", node.this),
        expression=udf("pg_lower", node.expression),
        negate=node.args.get("negate"),
    )


def _substring(node: exp.Substring) -> exp.Expression:
    args = [node.this, node.args.get("start") or exp.Literal.number(1)]
    if node.args.get("length") is not None:
        args.append(node.args["length"])
    return udf(f"pg_substr{len(args)}", *args)


def _round_trunc(node: exp.Round | exp.Trunc) -> exp.Expression:
    digits = node.args.get("decimals")
    name = "round" if isinstance(node, exp.Round) else "trunc"
    if kind_of(node.this) == "float" and digits is None:
        # round: half to even, as rint() (DuckDB's: away); trunc: the same in both
        return udf("pg_rint", node.this) if name == "round" else node
    if kind_of(node.this) != "decimal":
        raise _refuse(f"{name} of other than a numeric", node)
    if digits is not None and not is_constant_int(digits):
        raise _refuse(f"{name} to other than a constant scale", node)
    # half away from zero (round), toward zero (trunc), a negative scale to tens,
    # hundreds...: the same in both engines.  PostgreSQL's result has the scale asked
    # for, DuckDB's keeps a smaller one of its argument
    scale = 0 if digits is None else int(digits.sql())
    return _at_scale(node, scale) if scale > 0 else node


def _text_concatenation(node: exp.DPipe) -> exp.Expression:
    kinds = [kind_of(node.this), kind_of(node.expression)]
    for key, other in (("this", kinds[1]), ("expression", kinds[0])):
        if isinstance(node.args[key], exp.Placeholder) and other == "text":
            # a parameter beside text is text, its value printed as PostgreSQL prints it
            # ('%%' || %s || '%%': a LIKE pattern built around a value)
            node.set(key, duck_cast(node.args[key], "VARCHAR"))
            kinds = ["text", "text"]
    if "text" not in kinds:
        raise _refuse("|| of other than text", node)
    for key, kind in zip(("this", "expression"), kinds, strict=True):
        if kind != "text":  # text || x is text || x::text (PostgreSQL's anytextcat)
            node.set(key, _cast_to_text(node.args[key]))
    return node


def _cast_to_text(value: exp.Expression) -> exp.Expression:
    """``value::text``, as the engine must compute it (refused where it cannot)."""
    return _check_cast(exp.Cast(this=value, to=exp.DataType.build("TEXT")))


def _output_text(value: exp.Expression) -> exp.Expression:
    """A value as its type's output function prints it (what concat() joins): its text
    cast's, but a boolean's ``t`` / ``f`` where the cast gives ``true`` / ``false``."""
    if kind_of(value) == "bool":
        letters = [
            exp.If(this=value, true=exp.Literal.string("t")),
            exp.If(this=exp.Not(this=value), true=exp.Literal.string("f")),
        ]
        return exp.Case(ifs=letters)  # (NULL: none, and concat() skips it)
    return _cast_to_text(value)


def _literal(node: exp.Literal) -> exp.Expression:
    if not node.is_string and "e" in node.name.lower():
        return _exponent_literal(node)
    return node


def _abs(node: exp.Abs) -> exp.Expression:
    if kind_of(node.this) not in ("int", "decimal", "float"):
        raise _refuse("abs of a non-number", node)
    return node


def _text_measure(node: exp.Length | exp.StrPosition) -> exp.Expression:
    if isinstance(node, exp.Length) and is_bytea(node.this):
        # (length(bytea): its bytes, as octet_length counts them)
        return duck_cast(udf("octet_length", node.this), "INTEGER")
    if kind_of(node.this) != "text":
        raise not_text_error(node, node.this, node.sql_name().lower())
    return duck_cast(node, "INTEGER")  # PostgreSQL's are integer, DuckDB's bigint


# text functions DuckDB computes as PostgreSQL does, of text only
_TEXT_FUNCTIONS = (exp.Left, exp.Right, exp.Pad, exp.Replace, exp.Repeat,
                   exp.Trim, exp.StartsWith, exp.MD5, exp.Translate, exp.Ascii)  # fmt: skip

# The rewrite of each node type, found by the node's class or its nearest base class
# listed (:func:`kinds.by_type`: a UNION is a SetOperation, a TryCast a Cast); a node of a
# type not listed is computed alike by both engines.
TRANSFORMS: dict[type[exp.Expression], Callable[[Any], exp.Expression]] = {
    exp.Div: _division,
    exp.Mod: _modulo,
    **dict.fromkeys(BITWISE_OPERATORS, bitwise),
    exp.BitwiseLeftShift: shift,
    exp.BitwiseRightShift: shift,
    **dict.fromkeys(FLOAT8_FUNCTIONS, float8_function),
    exp.Pow: float8_power,
    **dict.fromkeys(VARIANCES, variance_elsewhere),
    exp.Rand: random_value,
    exp.Add: _arithmetic,
    exp.Sub: _arithmetic,
    exp.Mul: _arithmetic,
    exp.Neg: negation,
    exp.Window: _wrapped_aggregate,
    exp.Filter: _wrapped_aggregate,
    exp.Sum: _sum,
    exp.Avg: _avg,
    exp.Nullif: _nullif,
    exp.ArrayAgg: _array_agg,
    exp.WithinGroup: percentile,
    exp.Case: _choice,
    exp.Coalesce: _choice,
    exp.Greatest: _choice,
    exp.Least: _choice,
    exp.Lag: _shifted,
    exp.Lead: _shifted,
    exp.SetOperation: set_operation,
    **dict.fromkeys(_TEXT_FUNCTIONS, _text_function),
    exp.Anonymous: _function_call,
    exp.Interval: time_functions.interval_literal,
    exp.Concat: _concat,
    exp.Format: lambda n: format_text.format_call(n, [_concatenated(a) for a in n.expressions]),
    exp.Initcap: scalar_functions.initcap,
    exp.RegexpReplace: regexp_replace,
    exp.SimilarTo: similar_to,
    exp.Chr: scalar_functions.chr_call,
    exp.Overlay: scalar_functions.overlay,
    exp.Hex: scalar_functions.to_hex,
    exp.SplitPart: scalar_functions.split_part,
    exp.Encode: scalar_functions.encode,
    exp.Lower: _case_mapped,
    exp.Upper: _case_mapped,
    exp.RegexpLike: _regex_match,
    exp.Reverse: _reverse,
    exp.Sign: _sign_ceil_floor,
    exp.Ceil: _sign_ceil_floor,
    exp.Floor: _sign_ceil_floor,
    exp.Like: _like,
    exp.ILike: _ilike,
    exp.Substring: _substring,
    exp.Extract: time_functions.extract,
    exp.UnixToTime: date_constructors.to_timestamp,
    exp.TimestampTrunc: time_functions.date_trunc,
    exp.AtTimeZone: at_time_zone,
    exp.Round: _round_trunc,
    exp.Trunc: _round_trunc,
    exp.DPipe: _text_concatenation,
    exp.Cast: _check_cast,
    exp.Literal: _literal,
    exp.Abs: _abs,
    exp.Length: _text_measure,
    exp.StrPosition: _text_measure,
    **dict.fromkeys(_COMPARISONS, keyed_comparison),
}


def rewrite_node(node: exp.Expression) -> exp.Expression:
    """One node of the annotated, qualified tree, as DuckDB must compute it to answer
    what PostgreSQL answers (see the module's docstring)."""
    transform = by_type(TRANSFORMS, node)
    return node if transform is None else transform(node)


def rewrite_bottom_up(tree: exp.Expression) -> exp.Expression:
    """:func:`rewrite_node` on every node, children before their parent, so that a rewritten
    node's arguments are rewritten too (``length(lower(x))``: both PostgreSQL's).  A
    replacement keeps the replaced node's type, which the parent's rewrite reads."""
    for node in reversed(list(tree.dfs())):
        assert isinstance(node, exp.Expression)
        # where it hangs, taken before the rewrite (a wrapper built around the node
        # becomes its parent)
        parent, arg_key, index = node.parent, node.arg_key, node.index
        new = rewrite_node(node)
        if new is node:
            continue
        if new.type is None or new.type.is_type(exp.DataType.Type.UNKNOWN):
            new.type = node.type
        if node is tree:
            tree = new
        elif parent is not None and arg_key is not None:
            parent.set(arg_key, new, index)
    return tree
