"""Stored generated columns: ``GENERATED ALWAYS AS (expression) STORED``.

The server holds ciphertexts and cannot compute a row's expression, so the client does,
on every write of the row, from its plaintext values: an INSERT's (VALUES, DEFAULT
VALUES, INSERT ... SELECT, COPY), and an UPDATE's that assigns one of the expression's
columns -- from the values the statement gives, or from the row as read where it reads
it (the read-modify-write path: compile/update_delete.py).  The column is otherwise an
ordinary encrypted column: its onions answer queries as any other's.

The expression is evaluated by the client engine with PostgreSQL's semantics, as a
SELECT of it without FROM whose column references are parameters cast to the columns'
types (:func:`computation_of`); its value is then stored as an assignment to the column
stores it.  At CREATE TABLE the expression is checked as PostgreSQL checks it
(:func:`check_generation`): the columns it names exist and are not generated, and it
holds no aggregate, window function, subquery or function whose value can change
(``random()``, ``now()``, a cast from text to a date or time) -- PostgreSQL's errors --
and the engine must be able to evaluate it (else refused).

A precomputed column (catalog/precomputed.py) is computed the same way by its own
evaluator: :func:`computation_of` gives either, so that the write paths treat both as
one kind, a column computed from the row.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from psycopg import errors as pg_errors
from sqlglot import exp

from ..catalog import precomputed
from ..catalog.metadata import Catalog, ColumnMeta, TableMeta
from ..catalog.tablespec import SYSTEM_COLUMNS
from ..syntax.names import shown
from ..syntax.sqltext import PostgresSource, parse
from .allowed import castable
from .residual import compile_residual

Row = Mapping[str, Any]

#: functions whose value can change between two calls with the same arguments (PostgreSQL
#: marks them volatile or stable): a generated column's expression cannot call them
CHANGING_FUNCTIONS: Final = frozenset(
    {
        "random", "clock_timestamp", "statement_timestamp", "transaction_timestamp",
        "timeofday", "now", "nextval", "currval", "lastval", "setval", "gen_random_uuid",
        "uuid_generate_v4", "txid_current", "pg_backend_pid", "current_setting",
        "current_schema", "version",
    }
)  # fmt: skip
#: functions that read the clock or the session's settings with this many arguments
#: only (``age(ts)`` is from today, ``age(a, b)`` not; ``to_timestamp(text, format)``
#: reads the TimeZone, ``to_timestamp(epoch)`` does not)
_CHANGING_WITH_ARGS: Final = {"age": 1, "to_timestamp": 2}
_CHANGING_NODES: Final = (
    exp.CurrentTimestamp,
    exp.CurrentDate,
    exp.CurrentTime,
    exp.CurrentUser,
    exp.Rand,
)
#: types whose input from text reads the session's DateStyle or TimeZone (stable casts)
_SESSION_READ_TYPES: Final = frozenset(
    {"date", "timestamp", "timestamptz", "time", "timetz", "interval"}
)


@dataclass(frozen=True)
class Computation:
    """How a computed column's value comes from its row: the columns it reads, and the
    value (coerced to the column's type) for their plaintexts."""

    inputs: tuple[str, ...]
    value: Callable[[Row], Any]


def generation_tree(text: str) -> exp.Expression:
    """A generated column's expression as the catalog keeps it, parsed."""
    select = parse(f"SELECT {text}", names_folded=True)[0]
    assert isinstance(select, exp.Select)
    return select.expressions[0]


def generation_text(tree: exp.Expression) -> str:
    """The catalog's text of a generated column's expression."""
    return tree.sql(dialect=PostgresSource)


def inputs_of(text: str) -> tuple[str, ...]:
    """The columns a generated column's expression reads, in the order first named."""
    names: list[str] = []
    for col in generation_tree(text).find_all(exp.Column):
        if col.name.lower() not in names:
            names.append(col.name.lower())
    return tuple(names)


def check_generation(
    catalog: Catalog, columns: Mapping[str, ColumnMeta], cname: str, tree: exp.Expression
) -> None:
    """PostgreSQL's checks of generated column ``cname``'s expression (``columns``: the
    table's, every one already built), then the engine's: refused if it cannot
    evaluate it."""
    for node in tree.walk():
        if isinstance(node, exp.Select | exp.Subquery):
            raise pg_errors.FeatureNotSupported(
                "cannot use subquery in column generation expression"
            )
        if isinstance(node, exp.Window):
            raise pg_errors.WindowingError(
                "window functions are not allowed in column generation expressions"
            )
        if isinstance(node, exp.AggFunc):
            raise pg_errors.GroupingError(
                "aggregate functions are not allowed in column generation expressions"
            )
    for ref in tree.find_all(exp.Column):
        name = ref.name.lower()
        if name in SYSTEM_COLUMNS:
            raise pg_errors.FeatureNotSupported(
                f'cannot use system column "{name}" in column generation expression'
            )
        if name not in columns:
            raise pg_errors.UndefinedColumn(f'column "{shown(name)}" does not exist')
        if columns[name].generated is not None or name == cname:
            raise pg_errors.InvalidObjectDefinition(
                f'cannot use generated column "{shown(name)}" in column generation expression'
                "\nDETAIL:  A generated column cannot reference another generated column."
            )
    if _changing(tree, columns):
        raise pg_errors.InvalidObjectDefinition("generation expression is not immutable")
    _compiled(catalog, columns, generation_text(tree))


def _changing(tree: exp.Expression, columns: Mapping[str, ColumnMeta]) -> bool:
    for node in tree.walk():
        if isinstance(node, _CHANGING_NODES):
            return True
        if isinstance(node, exp.Func):
            name = str(node.meta.get("pg_function") or node.sql_name()).lower()
            if isinstance(node, exp.Anonymous):
                name = node.name.lower()
            if name in CHANGING_FUNCTIONS:
                return True
            arity = _CHANGING_WITH_ARGS.get(name)
            if arity is not None and len([a for a in node.iter_expressions()]) == arity:
                return True
        if isinstance(node, exp.Cast) and _stable_cast(node, columns):
            return True
    return False


def _stable_cast(node: exp.Cast, columns: Mapping[str, ColumnMeta]) -> bool:
    """A cast whose result reads the session's DateStyle or TimeZone: from text to a date
    or time type, between timestamptz and the types without a time zone (or text)."""
    target = node.to.sql(dialect=PostgresSource).lower().split("(")[0].strip()
    target = _TYPE_NAMES.get(target, target)
    source = node.this
    if isinstance(source, exp.Literal) and source.is_string:
        kind = "text"
    elif isinstance(source, exp.Column) and source.name.lower() in columns:
        kind = columns[source.name.lower()].type.name
    else:
        return False
    if kind in ("text", "varchar", "char"):
        return target in _SESSION_READ_TYPES
    zoned = {"timestamptz", "timetz"}
    return (kind in zoned) != (target in zoned) and {kind, target} <= (
        _SESSION_READ_TYPES | {"text", "varchar"}
    )


_TYPE_NAMES: Final = {
    "timestamp with time zone": "timestamptz",
    "timestamp without time zone": "timestamp",
    "time with time zone": "timetz",
    "time without time zone": "time",
    "character varying": "varchar",
}


_COMPILED: dict[tuple[Any, ...], tuple[tuple[str, ...], Callable[[Sequence[Any]], Any]]] = {}


def _compiled(
    catalog: Catalog, columns: Mapping[str, ColumnMeta], text: str
) -> tuple[tuple[str, ...], Callable[[Sequence[Any]], Any]]:
    """The engine's evaluator of ``text``: the column named by each parameter, in order,
    and the function of their values."""
    tree = generation_tree(text)
    # (the same text over columns of other types is another evaluator: its casts differ)
    read = sorted({c.name.lower() for c in tree.find_all(exp.Column)})
    key = (text, tuple((n, columns[n].type.sql()) for n in read if n in columns))
    found = _COMPILED.get(key)
    if found is not None:
        return found
    order: list[str] = []

    def parameter(node: exp.Expression) -> exp.Expression:
        if not isinstance(node, exp.Column):
            return node
        order.append(node.name.lower())
        placeholder = exp.Placeholder(this=f"u{len(order) - 1}")
        sql_type = columns[node.name.lower()].type
        to = exp.DataType.build(sql_type.sql(), dialect="postgres")
        if (sql_type.name == "numeric" and sql_type.precision is None) or not castable(to):
            # (a value the engine types by itself: a Decimal is numeric, a UUID a uuid)
            return placeholder
        return exp.Cast(this=placeholder, to=to)

    evaluated = tree.copy().transform(parameter, copy=False)
    plan = compile_residual(catalog, exp.Select(expressions=[evaluated]))
    assert plan.residual is not None
    finish = plan.residual.finish

    def evaluate(values: Sequence[Any]) -> Any:
        return finish(_no_fetch, tuple(values))[0][0]

    found = _COMPILED[key] = (tuple(order), evaluate)
    if len(_COMPILED) > 4096:  # (a catalog read again is another key: bounded)
        _COMPILED.pop(next(iter(_COMPILED)))
    return found


def _no_fetch(i: int) -> list[list[Any]]:
    raise AssertionError("a SELECT without FROM fetches nothing")


def computation_of(catalog: Catalog, table: TableMeta, col: ColumnMeta) -> Computation:
    """How ``col`` (a generated or a precomputed column of ``table``) is computed."""
    if col.generated is None:
        expression = precomputed.expression_of(table, col)
        return Computation(
            expression.inputs, lambda row: precomputed.checked_value(table, col, expression, row)
        )
    order, evaluate = _compiled(catalog, table.columns, col.generated)
    coerce = col.encoding.coerce

    def value(row: Row) -> Any:
        v = evaluate([row[name] for name in order])
        return None if v is None else coerce(v)

    return Computation(tuple(dict.fromkeys(order)), value)


def computed_columns(table: TableMeta) -> list[ColumnMeta]:
    """The table's columns computed from its row: generated ones, then precomputed."""
    return [
        *(c for c in table.columns.values() if c.generated is not None),
        *table.precomputed.values(),
    ]


def stale_after(catalog: Catalog, table: TableMeta, assigned: Sequence[str]) -> list[ColumnMeta]:
    """The computed columns an UPDATE assigning ``assigned`` changes."""
    names = {a.lower() for a in assigned}
    return [
        col
        for col in computed_columns(table)
        if names & set(computation_of(catalog, table, col).inputs)
    ]


__all__ = [
    "Computation",
    "check_generation",
    "computation_of",
    "computed_columns",
    "generation_text",
    "generation_tree",
    "inputs_of",
    "stale_after",
]
