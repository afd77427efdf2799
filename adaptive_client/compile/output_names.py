"""The output columns of a client-evaluated statement as PostgreSQL describes them: their
names (FigureColname, :func:`pg_name`), and which are char(n) or a varchar column
(their type OIDs)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlglot import exp
from sqlglot.optimizer.scope import traverse_scope

from ..catalog.metadata import Catalog, ColumnMeta
from ..engine.kinds import by_type, char_length, is_star, leftmost
from ..engine.set_operations import branch_selects
from .relations import source_of

_FUNC_NAMES: dict[type[exp.Expression], str] = {
    exp.Count: "count", exp.Sum: "sum", exp.Min: "min", exp.Max: "max", exp.Avg: "avg",
    exp.Lower: "lower", exp.Upper: "upper", exp.Length: "length", exp.Coalesce: "coalesce",
    exp.Nullif: "nullif", exp.Greatest: "greatest", exp.Least: "least", exp.Abs: "abs",
    exp.Round: "round", exp.Trunc: "trunc", exp.Substring: "substring", exp.StrPosition: "position",
    exp.Case: "case", exp.Extract: "extract", exp.TimestampTrunc: "date_trunc",
    exp.RowNumber: "row_number", exp.Rank: "rank", exp.DenseRank: "dense_rank",
    exp.Exists: "exists", exp.Left: "left", exp.Right: "right", exp.Replace: "replace",
    exp.SplitPart: "split_part", exp.Concat: "concat", exp.MD5: "md5", exp.Repeat: "repeat",
    exp.StartsWith: "starts_with", exp.Trim: "btrim", exp.LogicalAnd: "bool_and",
    exp.LogicalOr: "bool_or", exp.GroupConcat: "string_agg", exp.ArrayAgg: "array_agg",
    exp.Lag: "lag", exp.Lead: "lead", exp.FirstValue: "first_value",
    exp.LastValue: "last_value", exp.NthValue: "nth_value", exp.Ntile: "ntile",
    exp.PercentRank: "percent_rank", exp.CumeDist: "cume_dist", exp.Reverse: "reverse",
    exp.Sign: "sign", exp.Ceil: "ceil", exp.Floor: "floor", exp.AtTimeZone: "timezone",
    exp.Array: "array", exp.PercentileDisc: "percentile_disc",
    exp.PercentileCont: "percentile_cont", exp.Initcap: "initcap", exp.Chr: "chr",
    exp.Overlay: "overlay", exp.Translate: "translate", exp.Ascii: "ascii", exp.Mode: "mode",
    exp.RegexpReplace: "regexp_replace",
}  # fmt: skip


_TYPE_NAMES = {
    exp.DataType.Type.INT: "int4",
    exp.DataType.Type.BIGINT: "int8",
    exp.DataType.Type.SMALLINT: "int2",
    exp.DataType.Type.DECIMAL: "numeric",
    exp.DataType.Type.TEXT: "text",
    exp.DataType.Type.VARCHAR: "varchar",
    exp.DataType.Type.DATE: "date",
    exp.DataType.Type.TIMESTAMP: "timestamp",
    exp.DataType.Type.DOUBLE: "float8",
    exp.DataType.Type.BOOLEAN: "bool",
    exp.DataType.Type.TIME: "time",
    exp.DataType.Type.TIMESTAMPTZ: "timestamptz",
    exp.DataType.Type.INTERVAL: "interval",
    exp.DataType.Type.FLOAT: "float4",
    exp.DataType.Type.CHAR: "bpchar",
    exp.DataType.Type.UUID: "uuid",
    exp.DataType.Type.JSONB: "jsonb",
    exp.DataType.Type.JSON: "json",
    exp.DataType.Type.VARBINARY: "bytea",
    exp.DataType.Type.TIMETZ: "timetz",
}


def _subquery_name(node: exp.Subquery) -> str | None:
    inner = node.this
    while isinstance(inner, exp.Subquery):
        inner = inner.this
    if isinstance(inner, exp.Select) and len(inner.expressions) == 1:
        return pg_name(inner.expressions[0])
    return None


# the names FigureColname gives by the node's form, before any function's own name
_FORM_NAMES: dict[type[exp.Expression], Callable[[Any], str | None]] = {
    exp.Alias: lambda node: node.alias,
    exp.Paren: lambda node: pg_name(node.this),
    exp.Column: lambda node: node.name,
    # (a subscript is named after what it subscripts: tags[1] is "tags")
    exp.Bracket: lambda node: pg_name(node.this),
    exp.Window: lambda node: pg_name(node.this),
    exp.Filter: lambda node: pg_name(node.this),
    exp.WithinGroup: lambda node: pg_name(node.this),
    exp.Cast: lambda node: pg_name(node.this) or _TYPE_NAMES.get(node.to.this),
    exp.Subquery: _subquery_name,
    exp.Case: lambda node: _strong_name(node.args.get("default")) or "case",
}

# functions whose name is in their arguments
_WRITTEN_NAMES: dict[type[exp.Expression], Callable[[Any], str]] = {
    exp.Pad: lambda node: "lpad" if node.args.get("is_left") else "rpad",
    exp.Anonymous: lambda node: node.name.lower(),
}


def pg_name(node: exp.Expression) -> str | None:
    """PostgreSQL's FigureColname: None where it would say ``?column?``."""
    if node.meta.get("pg_function"):  # a function's name as written (syntax/sqltext.py)
        return str(node.meta["pg_function"])
    named = by_type(_FORM_NAMES, node)
    if named is not None:
        return named(node)
    written = by_type(_WRITTEN_NAMES, node)
    if written is not None:
        return written(node)
    return _FUNC_NAMES.get(type(node))


def _strong_name(node: exp.Expression | None) -> str | None:
    """The name PostgreSQL gives a CASE after its ELSE: only a column's or a function's
    (a cast's type name or a nested CASE's own "case" are weaker than "case" itself)."""
    while isinstance(node, exp.Paren | exp.Cast):
        node = node.this
    if node is None:
        return None
    if isinstance(node, exp.Case):
        return _strong_name(node.args.get("default"))
    return pg_name(node)


def output_names(original: exp.Expression, qualified_tree: exp.Expression) -> list[str]:
    """Names of the output columns: the application's items (stars from the expansion)."""
    orig = leftmost(original).expressions
    qual = leftmost(qualified_tree).expressions
    if any(is_star(e) for e in orig):
        return [e.alias_or_name for e in qual]
    return [pg_name(e) or "?column?" for e in orig]


def char_outputs(tree: exp.Expression, width: int) -> list[int | None]:
    """Per output column, n where it is char(n): in a set operation, only where every
    branch's column is char(n) (with a varchar or text branch PostgreSQL's is text)."""
    branches = branch_selects(tree) or [leftmost(tree)]
    out: list[int | None] = []
    for i in range(width):
        lengths = {
            char_length(b.expressions[i]) if i < len(b.expressions) else None for b in branches
        }
        out.append(lengths.pop() if len(lengths) == 1 else None)
    return out


def varchar_casts(tree: exp.Expression, width: int) -> set[int]:
    """The output columns that are a cast to varchar (in every branch of a set
    operation): PostgreSQL describes them by varchar's OID."""
    branches = branch_selects(tree) or [leftmost(tree)]
    out = set()
    for i in range(width):
        items = [b.expressions[i] if i < len(b.expressions) else None for b in branches]
        if all(item is not None and _is_varchar_cast(item.unalias()) for item in items):
            out.add(i)
    return out


def _is_varchar_cast(node: exp.Expression) -> bool:
    while isinstance(node, exp.Paren):
        node = node.this
    return isinstance(node, exp.Cast) and node.to.this is exp.DataType.Type.VARCHAR


def column_outputs(catalog: Catalog, tree: exp.Expression, width: int) -> dict[int, ColumnMeta]:
    """Outputs that are a stored column itself, by position: PostgreSQL describes them
    by the column's declared type (varchar's OID, a varchar(n)'s or numeric(p,s)'s
    modifier)."""
    out = {}
    items = leftmost(tree).expressions[:width]
    scopes = {id(s.expression): s for s in traverse_scope(tree)}
    scope = scopes.get(id(leftmost(tree)))
    for i, item in enumerate(items):
        node = item.this if isinstance(item, exp.Alias) else item
        if isinstance(node, exp.Column) and scope is not None:
            src = source_of(scope, node.table)
            if isinstance(src, exp.Table):
                col = catalog.table(src.name).columns.get(node.name.lower())
                if col is not None:
                    out[i] = col
    return out


def stored_typmod(col: ColumnMeta | None, oid: int) -> int:
    """The type modifier a result column describes: its stored column's, where it is one
    of that column's type; else none (-1)."""
    return col.type.typmod if col is not None and col.type.oid == oid else -1
