"""The plain engine types of row functions' values (results, array elements) and the
operands sqlglot reads otherwise than PostgreSQL writes them (engine/row_lowering.py)."""

from __future__ import annotations

from typing import Final, cast

from sqlglot import exp

from ..values.encoding_base import Encoding
from .runtime import refusal as _refuse

# engine types of the results that are not held
PLAIN_RESULTS: Final = {
    "text": "VARCHAR",
    "integer": "INTEGER",
    "bigint": "BIGINT",
    "boolean": "BOOLEAN",
    "smallint": "SMALLINT",
    "double precision": "DOUBLE",
    "timestamptz": "TIMESTAMPTZ",
    "timestamp": "TIMESTAMP",
    "date": "DATE",
}

# array element types given to and taken from row functions as the engine's values
PLAIN_ELEMENT: Final = {
    "text": "VARCHAR",
    "varchar": "VARCHAR",
    "integer": "INTEGER",
    "smallint": "SMALLINT",
    "bigint": "BIGINT",
    "boolean": "BOOLEAN",
}


# PostgreSQL's functions sqlglot parses into classes of its own: their names
FUNCTION_CLASSES: Final[dict[type[exp.Expression], str]] = {
    exp.ArraySize: "array_length",
    exp.Explode: "unnest",
    exp.ArrayToString: "array_to_string",
    exp.ArrayConcat: "array_cat",
    exp.ArrayAppend: "array_append",
    exp.ArrayPrepend: "array_prepend",
    exp.ArrayRemove: "array_remove",
    exp.ArrayPosition: "array_position",
    exp.StringToArray: "string_to_array",
    exp.JustifyHours: "justify_hours",
    exp.JustifyDays: "justify_days",
    exp.JustifyInterval: "justify_interval",
}
# arithmetic that is a row function's where an operand is a held interval or numeric
INTERVAL_OPERATORS: Final[dict[type[exp.Expression], str]] = {
    exp.Add: "+",
    exp.Sub: "-",
    exp.Mul: "*",
    exp.Div: "/",
    exp.Mod: "%",  # (a numeric's; an interval has none: 42883, as PostgreSQL's)
    exp.Neg: "u-",
}
# the numbers PostgreSQL casts to float8 where an interval is scaled by one
_FLOAT8_SOURCES: Final = frozenset(
    {"integer", "bigint", "smallint", "numeric", "double", "real", "float", "decimal"}
)


def scales_interval(pg: str) -> bool:
    """Whether a value of type ``pg`` (``decimal(10, 2)`` as the engine names it) is a
    number an interval is multiplied or divided by: PostgreSQL's float8 of it."""
    return pg.split("(")[0] in _FLOAT8_SOURCES


def element_encoding(encoding: Encoding | None) -> Encoding | None:
    """An array encoding's element encoding."""
    return cast(Encoding | None, getattr(encoding, "element", None))


def json_path_operand(node: exp.Expression) -> exp.Expression:
    """The right operand of ``->`` / ``->>`` as written (sqlglot reads a constant key
    or index into a JSON path)."""
    if not isinstance(node, exp.JSONPath):
        return node
    parts = node.expressions[1:]
    if len(parts) != 1:
        raise _refuse("a JSON path operand", node)
    part = parts[0]
    if isinstance(part, exp.JSONPathKey):
        return exp.Literal.string(str(part.this))
    if isinstance(part, exp.JSONPathSubscript):
        return exp.Literal.number(int(part.this))
    raise _refuse("a JSON path operand", node)


__all__ = [
    "FUNCTION_CLASSES",
    "INTERVAL_OPERATORS",
    "PLAIN_ELEMENT",
    "PLAIN_RESULTS",
    "element_encoding",
    "json_path_operand",
    "scales_interval",
]
