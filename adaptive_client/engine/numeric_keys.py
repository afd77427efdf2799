"""``text::numeric`` compared or ordered by in the client engine, whatever its size.

PostgreSQL's numeric holds values the client engine's DECIMAL(38, s) cannot (a document's
``123456789012345678901234567890.5``); where only the value of the cast counts -- an
operand of a comparison, BETWEEN or IN, or a sort key -- the cast is read by PostgreSQL's
numeric_in and compared as the bytes of its order key (engine/order_bytes.py: unsigned
bytewise order is numeric order, equal values have equal bytes, ``1.0`` and ``1`` too;
NaN above every number, as PostgreSQL sorts it).  The other operands of such a comparison
are turned into the same keys: numbers and parameters through their text, string
constants read as numerics (PostgreSQL types an unknown constant beside a numeric as one).
"""

from __future__ import annotations

from typing import Final

from sqlglot import exp

from .kinds import duck_cast, kind_of, udf, unparen
from .runtime import refusal as _refuse

# the engine function giving a numeric text's key (runtime.numeric_key), and the meta
# flag its calls carry (the comparison around it reads it)
KEY_FUNCTION: Final = "pg_numeric_key"
KEYED: Final = "numeric_key"


def keyed_cast(text: exp.Expression) -> exp.Expression:
    """``text::numeric`` as its order key (only its value counts where it is used)."""
    call = udf(KEY_FUNCTION, text)
    call.meta[KEYED] = True
    return call


def _is_keyed(node: exp.Expression) -> bool:
    return bool(unparen(node).meta.get(KEYED))


def _keyed_operand(node: exp.Expression, at: exp.Expression) -> exp.Expression:
    """An operand compared with a keyed cast, as the same kind of key."""
    inner = unparen(node)
    if inner.meta.get(KEYED) or isinstance(inner, exp.Null):
        return node
    if isinstance(inner, exp.Literal):
        return keyed_cast(exp.Literal.string(inner.name))
    if isinstance(inner, exp.Placeholder) or kind_of(inner) in ("int", "decimal"):
        return keyed_cast(duck_cast(node, "VARCHAR"))
    raise _refuse(f"a comparison of a numeric with a {kind_of(inner)} value", at)


def keyed_comparison(node: exp.Expression) -> exp.Expression:
    """A comparison, BETWEEN or IN of which an operand is a keyed cast: every operand
    keyed.  Others as they are."""
    keys = [k for k in ("this", "expression", "low", "high") if node.args.get(k) is not None]
    operands = [node.args[k] for k in keys] + list(node.args.get("expressions") or [])
    if not any(isinstance(o, exp.Expression) and _is_keyed(o) for o in operands):
        return node
    if node.args.get("query") is not None:
        raise _refuse("IN (subquery) of a numeric read from text", node)
    for key in keys:
        node.set(key, _keyed_operand(node.args[key], node))
    if node.args.get("expressions"):
        node.set("expressions", [_keyed_operand(e, node) for e in node.expressions])
    return node
