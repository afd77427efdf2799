"""PostgreSQL's reading of a constant in a statement's own ORDER BY or GROUP BY: an integer
is an output column's position, any other constant an error.  Checked before either
execution path sees the statement, so both raise what PostgreSQL raises (neither sqlglot
nor the client engine keeps the rule: they would order by the constant)."""

from __future__ import annotations

from psycopg import errors as pg_errors
from sqlglot import exp


def _outputs(query: exp.Expression | exp.Query) -> int | None:
    """The number of output columns, None where a star leaves it to the catalog."""
    while isinstance(query, exp.SetOperation | exp.Subquery):
        query = query.this
    if not isinstance(query, exp.Select):
        return None
    if any(
        isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
        for e in query.expressions
    ):
        return None
    return len(query.expressions)


def _position(key: exp.Expression) -> int | str | None:
    """The integer a constant key names, the constant's text if it is another constant,
    None for an expression."""
    negative = isinstance(key, exp.Neg)
    inner = key.this if negative else key
    if isinstance(inner, exp.Paren):
        return None  # (1) is an expression in PostgreSQL, not a position
    if not isinstance(inner, exp.Literal):
        return None
    text = str(inner.this)
    if inner.is_string or not text.isdigit():
        return text
    return -int(text) if negative else int(text)


def _check(items: list[exp.Expression], clause: str, outputs: int | None) -> None:
    for key in items:
        position = _position(key)
        if isinstance(position, str):
            raise pg_errors.SyntaxError(f"non-integer constant in {clause}")
        if position is not None and outputs is not None and not 1 <= position <= outputs:
            raise pg_errors.InvalidColumnReference(
                f"{clause} position {position} is not in select list"
            )


def check_positions(stmt: exp.Expression) -> None:
    """Raise as PostgreSQL does for a constant ORDER BY or GROUP BY key of any query level
    (windows and aggregates' own ORDER BY take constants as constants)."""
    for query in stmt.find_all(exp.Select, exp.SetOperation):
        outputs = _outputs(query)
        order = query.args.get("order")
        if order is not None:
            _check([o.this for o in order.expressions], "ORDER BY", outputs)
        group = query.args.get("group")
        if isinstance(query, exp.Select) and group is not None:
            _check(list(group.expressions), "GROUP BY", outputs)
