"""Integers' bitwise operators and double precision's functions of one argument, as the
client engine computes them to answer what PostgreSQL answers (transforms.py takes each
node's rewrite from here):

* ``&``, ``|``, ``#``, ``~`` of integers, in the wider operand's type; ``<<`` and ``>>``
  as PostgreSQL's C shifts (runtime.py's ``pg_shift``: the count modulo the bits, the
  result wrapped, a smallint's truncated to 16 bits); a parameter or NULL beside an
  integer typed as that integer, as PostgreSQL infers it;
* ``sqrt``, ``cbrt``, ``exp``, ``ln``, ``log`` of double precision (runtime.py's
  ``pg_*`` macros: float.c's errors, NaN and the infinities through); of a numeric
  refused, but cbrt, which has no numeric form;
* ``-x`` of an integer in its own width;
* ``power`` (``pow``) of double precision (integers included: PostgreSQL resolves
  ``power(int, int)`` to it), as float.c's ``dpow``; of a numeric refused.
"""

from __future__ import annotations

from psycopg import errors as pg_errors
from sqlglot import exp

from .kinds import (
    INT_DUCK_WIDTH,
    duck_cast,
    int_typed,
    int_width,
    is_constant_int,
    kind_of,
    udf,
    unparen,
)
from .runtime import REFUSAL_MARKER, refusal

#: the bitwise operators of integers computed as written (in the operands' type)
BITWISE_OPERATORS: tuple[type[exp.Expression], ...] = (
    exp.BitwiseAnd,
    exp.BitwiseOr,
    exp.BitwiseXor,
    exp.BitwiseNot,
)


def _parameter_typed(node: exp.Expression, key: str, width: int | None) -> None:
    """A bare parameter or NULL operand typed as PostgreSQL infers it: the integer type
    the operator's other operand gives it (``integer & %s``: an integer)."""
    operand = node.args.get(key)
    if isinstance(operand, exp.Placeholder | exp.Null) and width is not None:
        node.set(key, duck_cast(operand, INT_DUCK_WIDTH[width]))


def bitwise(node: exp.Expression) -> exp.Expression:
    # &, |, # and ~ of integers: exact in both engines, in the wider operand's type
    if "expression" in node.args:
        _parameter_typed(node, "expression", int_width(node.this))
        _parameter_typed(node, "this", int_width(node.expression))
    operands = [node.this] + ([node.expression] if "expression" in node.args else [])
    if any(kind_of(o) != "int" for o in operands):
        raise refusal("a bitwise operator over other than integers", node)
    if isinstance(node, exp.BitwiseNot):
        width = int_width(node.this)
        if width is not None:
            node.set("this", duck_cast(node.this, INT_DUCK_WIDTH[width]))
        return node
    return int_typed(node)


def shift(node: exp.BitwiseLeftShift | exp.BitwiseRightShift) -> exp.Expression:
    # PostgreSQL shifts in C: an int2 or int4 as a 32-bit int, an int8 as a 64-bit one,
    # the count taken modulo the bits and the result wrapped (no overflow error), an
    # int2's truncated back to 16 bits; a right shift keeps the sign (pg_shift, runtime.py)
    _parameter_typed(node, "expression", 4)  # (a shift's count is an integer)
    width = int_width(node.this)
    if kind_of(node.this) != "int" or kind_of(node.expression) != "int" or width is None:
        raise refusal("a shift of other than an integer of known width", node)
    left = exp.Boolean(this=isinstance(node, exp.BitwiseLeftShift))
    shifted = udf(
        "pg_shift",
        duck_cast(node.this, "BIGINT"),
        duck_cast(node.expression, "BIGINT"),
        exp.Literal.number(width),
        left,
    )
    return duck_cast(shifted, INT_DUCK_WIDTH[width])


# double precision's functions of one argument, as PostgreSQL's float.c computes them
# (runtime.py's pg_* macros: its errors for a negative square root, a logarithm of zero
# or of a negative number, an overflow or underflow); of a numeric argument refused
# (numeric's own functions choose their result's digits), but cbrt, which has none
FLOAT8_FUNCTIONS: dict[type[exp.Expression], str] = {
    exp.Sqrt: "sqrt",
    exp.Cbrt: "cbrt",
    exp.Exp: "exp",
    exp.Ln: "ln",
    exp.Log: "log10",
}


def float8_function(node: exp.Expression) -> exp.Expression:
    name = FLOAT8_FUNCTIONS[type(node)]
    if node.args.get("expression") is not None:  # (log(b, x): numeric's only)
        raise refusal("log() of a base and a number (numeric's)", node)
    kinds = ("int", "float", "decimal") if name == "cbrt" else ("int", "float")
    if kind_of(node.this) not in kinds:
        raise refusal(f"{name}() of other than double precision", node)
    return duck_cast(udf(f"pg_{name}", duck_cast(node.this, "DOUBLE")), "DOUBLE")


def _double(operand: exp.Expression, numeric_possible: bool) -> exp.Expression:
    """An operand of power() as a double precision.  Beside no double precision, a
    parameter bound to a Decimal (sent as numeric) makes it numeric's power, which the
    client does not compute: refused when the statement runs."""
    if not (numeric_possible and isinstance(unparen(operand), exp.Placeholder)):
        return duck_cast(operand, "DOUBLE")
    is_numeric = exp.Like(
        this=udf("typeof", operand.copy()), expression=exp.Literal.string("DECIMAL%")
    )
    refused = exp.Literal.string(REFUSAL_MARKER + "power() of a numeric parameter")
    return exp.Case(
        ifs=[exp.If(this=is_numeric, true=udf("error", refused))],
        default=duck_cast(operand, "DOUBLE"),
    )


def random_value(node: exp.Rand) -> exp.Expression:
    """``random()``; with arguments, PostgreSQL's 42883 (this server has none such)."""
    given = [a for a in (node.this, node.args.get("lower"), node.args.get("upper")) if a]
    if given:
        raise pg_errors.UndefinedFunction(
            f"function random({', '.join(kind_of(a) or 'unknown' for a in given)}) does not exist"
        )
    return node


def float8_power(node: exp.Pow) -> exp.Expression:
    """``power(a, b)`` of double precision (runtime.py's ``pg_power``); a parameter
    beside an integer or a double precision (or another parameter) is one, as
    PostgreSQL infers it."""
    operands = (node.this, node.expression)
    typed = [o for o in operands if not isinstance(unparen(o), exp.Placeholder)]
    for operand in typed:
        if kind_of(operand) not in ("int", "float"):
            raise refusal("power() of other than double precision", node)
    numeric_possible = not any(kind_of(o) == "float" for o in typed)
    base, exponent = (_double(o, numeric_possible) for o in operands)
    return duck_cast(udf("pg_power", base, exponent), "DOUBLE")


def negation(node: exp.Neg) -> exp.Expression:
    """``-x``: of a smallint, integer or bigint column, in its own width (INT_MIN's
    negation overflows, as PostgreSQL's)."""
    if kind_of(node.this) == "int" and not is_constant_int(node):
        width = int_width(node.this)
        if width is not None:  # DuckDB widens -x; PostgreSQL's -x of INT_MIN overflows
            zero = duck_cast(exp.Literal.number(0), INT_DUCK_WIDTH[width])
            return exp.Sub(this=zero, expression=duck_cast(node.this, INT_DUCK_WIDTH[width]))
    return node


__all__ = [
    "BITWISE_OPERATORS",
    "FLOAT8_FUNCTIONS",
    "bitwise",
    "float8_function",
    "float8_power",
    "negation",
    "random_value",
    "shift",
]
