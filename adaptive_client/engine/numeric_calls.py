"""The numeric functions and casts the client engine calls as row functions where their
operand is a held numeric (``numeric`` without a precision: engine/held.py): ``abs``,
``ceil``, ``floor``, ``sign``, ``round``, ``trunc`` and casts to double precision, text,
the integer types and ``numeric(p,s)`` (engine/numeric_functions.py computes them).  Over
any other number they stay the engine's own."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from sqlglot import exp

# the types a numeric parameter takes as they are (PostgreSQL's implicit casts to numeric;
# a float8's is the other way: numeric + float8 is float8, not a row function here)
EXACT_NUMBERS: Final = frozenset({"smallint", "integer", "bigint", "decimal", "numeric"})

# functions of a held numeric that are row functions (over any other number they are
# the engine's own)
_NUMERIC_FUNCTIONS: Final[dict[type[exp.Expression], str]] = {
    exp.Abs: "abs", exp.Ceil: "ceil", exp.Floor: "floor", exp.Sign: "sign",
    exp.Round: "round", exp.Trunc: "trunc",
}  # fmt: skip
# a held numeric's casts: the row function of each type cast to
_NUMERIC_CASTS: Final[dict[exp.DType, str]] = {
    exp.DataType.Type.DOUBLE: "numeric_float8",
    exp.DataType.Type.TEXT: "numeric_out",
    exp.DataType.Type.VARCHAR: "numeric_out",
    exp.DataType.Type.SMALLINT: "numeric_int2",
    exp.DataType.Type.INT: "numeric_int4",
    exp.DataType.Type.BIGINT: "numeric_int8",
    exp.DataType.Type.DECIMAL: "numeric_typmod",
}


def held_numeric_call(
    node: exp.Expression, is_held_number: Callable[[exp.Expression], bool]
) -> tuple[str, list[exp.Expression]] | None:
    """(row function, operands) of a function or cast of a held numeric (an operand
    ``is_held_number`` tells), else None."""
    name = _NUMERIC_FUNCTIONS.get(type(node))
    if name is not None and is_held_number(node.this):
        if node.args.get("to") is not None:
            return None  # (floor(x TO unit): not PostgreSQL's)
        digits = node.args.get("decimals")
        return name, [node.this, *([digits] if digits is not None else [])]
    if not isinstance(node, exp.Cast) or isinstance(node, exp.TryCast):
        return None
    cast = _NUMERIC_CASTS.get(node.to.this) if isinstance(node.to.this, exp.DataType.Type) else None
    if cast is None or not is_held_number(node.this):
        return None
    params = [p.this if isinstance(p, exp.DataTypeParam) else p for p in node.to.expressions]
    if cast == "numeric_typmod":
        if not params:
            return "numeric_in", [node.this]  # (numeric to numeric: the value as it is)
        typmod = [int(p.name) for p in params] + [0]  # (numeric(p) is numeric(p,0))
        return cast, [node.this, *(exp.Literal.number(n) for n in typmod[:2])]
    return (cast, [node.this]) if not params else None


__all__ = ["EXACT_NUMBERS", "held_numeric_call"]
