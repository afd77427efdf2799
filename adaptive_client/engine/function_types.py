"""PostgreSQL's 42883 for a call of a text function with a value of another type.

PostgreSQL has no implicit cast of an integer, a number, a date or a boolean to text for
a function's argument: ``left(n, 1)``, ``upper(d)``, ``length(x)`` are "function ...
does not exist" (42883), and ``n LIKE 'x'``, ``n ~ 'x'`` "operator does not exist",
raised before the statement runs.  The client engine's rewrites check the kinds they
need; where a kind is one PostgreSQL would refuse, the error is PostgreSQL's, and where
it is one the client does not know (bytea, arrays, json, which have some of these
functions), the refusal stays a refusal (0A000)."""

from __future__ import annotations

from psycopg import errors as pg_errors
from sqlglot import exp

from .kinds import construct_name, pg_type_name
from .runtime import refusal

# the types named by :func:`kinds.pg_type_name` that have none of the text functions
_NOT_TEXT = frozenset({"smallint", "integer", "bigint", "numeric", "real",
                       "double precision", "date", "timestamp without time zone",
                       "timestamp with time zone", "boolean"})  # fmt: skip


# the operator PostgreSQL's 42883 names, by node (a ~ read as a LIKE keeps its own, in
# ``meta["operator"]``; SIMILAR TO is a ~ of its translated pattern)
_OPERATORS: dict[type[exp.Expression], str] = {exp.Like: "~~", exp.ILike: "~~*"}


def _written_name(node: exp.Expression) -> str:
    """The function's name as the statement wrote it (``strpos``, ``btrim``)."""
    name = node.meta.get("pg_function")
    if name:
        return str(name)
    if isinstance(node, exp.Anonymous):
        return node.name.lower()
    return str(node.key).lower()


def undefined_function(name: str, args: list[exp.Expression]) -> pg_errors.UndefinedFunction:
    """PostgreSQL's error for a call of ``name`` with arguments of these types."""
    types = ", ".join(pg_type_name(a) or "unknown" for a in args)
    return pg_errors.UndefinedFunction(f"function {name}({types}) does not exist")


def is_not_text(value: exp.Expression) -> bool:
    """Whether ``value`` is of a type PostgreSQL has no text function of."""
    return pg_type_name(value) in _NOT_TEXT


def not_text_operand(node: exp.Like | exp.ILike | exp.RegexpLike | exp.SimilarTo) -> None:
    """42883 where a LIKE, ILIKE or ``~`` (read as a LIKE where it can be: the operator
    written is in ``meta["operator"]``) has a left operand of a type without it."""
    left = pg_type_name(node.this)
    if left in _NOT_TEXT:
        operator = node.meta.get("operator", _OPERATORS.get(type(node), "~"))
        right = pg_type_name(node.expression) or "unknown"
        raise pg_errors.UndefinedFunction(f"operator does not exist: {left} {operator} {right}")


def not_text_error(node: exp.Expression, value: exp.Expression, what: str = "") -> Exception:
    """The error for ``node``, a text function given the non-text ``value``: 42883 where
    PostgreSQL has no such function of ``value``'s type, else a refusal naming ``what``
    (by default the construct) as of a non-text value."""
    if is_not_text(value):
        args = [a for a in (node.this, *node.expressions) if isinstance(a, exp.Expression)]
        args += [
            a
            for key, a in node.args.items()
            if key not in ("this", "expressions") and isinstance(a, exp.Expression)
        ]
        return undefined_function(_written_name(node), args)
    return refusal(f"{what or construct_name(node)} of a non-text value", node)


__all__ = [
    "is_not_text",
    "not_text_error",
    "not_text_operand",
    "undefined_function",
]
