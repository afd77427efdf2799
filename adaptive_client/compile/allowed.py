"""What a client-evaluated statement may contain: the allowlist of constructs whose
evaluation by the client engine was checked against PostgreSQL's (:func:`check_allowed`),
and PostgreSQL's own rules that the client engine does not keep -- a condition is a
boolean, SELECT DISTINCT orders by selected expressions, an ORDER BY name is not
ambiguous, a FULL JOIN has a hashable condition, json has no comparisons -- raised as
PostgreSQL raises them, before anything is fetched or peeled."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from psycopg import errors as pg_errors
from sqlglot import exp
from sqlglot.optimizer.scope import traverse_scope

from ..catalog.metadata import Catalog
from ..engine.date_constructors import FUNCTIONS as DATE_CONSTRUCTORS
from ..engine.function_types import undefined_function
from ..engine.kinds import (
    by_type,
    choice_values,
    construct_name,
    has_months,
    interval_compared,
    is_clock_param,
    is_constant_int,
    is_interval,
    is_star,
    kind_of,
    pg_type_name,
    unparen,
    varchar_length,
)
from ..engine.runtime import refusal as _refuse
from ..engine.scalar_functions import FUNCTIONS as SCALAR_FUNCTIONS
from ..engine.scalar_udfs import MODE_TYPES
from ..engine.sums import real_valued
from ..engine.transforms import ENGINE_FUNCTIONS
from ..errors import UndefinedColumn, UndefinedTable, UnsupportedQuery
from ..syntax.sqltext import FUNCTION_CASTS
from ..values.json_encoding import operator_refusal as json_operator_refusal
from .relations import conjuncts

_ALLOWED: tuple[type[exp.Expression], ...] = (
    exp.Select, exp.Union, exp.Intersect, exp.Except, exp.With, exp.CTE, exp.TableAlias,
    exp.Subquery, exp.From, exp.Join, exp.Where, exp.Group, exp.Having, exp.Order,
    exp.Ordered, exp.Limit, exp.Offset, exp.Distinct, exp.Table, exp.Identifier,
    exp.Column, exp.Star, exp.Alias, exp.Paren, exp.Literal, exp.Null, exp.Boolean,
    exp.Placeholder, exp.And, exp.Or, exp.Not, exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT,
    exp.LTE, exp.Is, exp.In, exp.Between, exp.Exists, exp.Like, exp.ILike, exp.Escape,
    exp.Neg, exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.DPipe, exp.Case, exp.If,
    exp.Coalesce, exp.Nullif, exp.Greatest, exp.Least, exp.Abs, exp.Round, exp.Trunc, exp.Lower,
    exp.Upper, exp.Length, exp.Substring, exp.StrPosition, exp.Cast, exp.DataType,
    exp.DataTypeParam, exp.Count, exp.Sum, exp.Min, exp.Max, exp.Avg, exp.Window,
    exp.WindowSpec, exp.RowNumber, exp.Rank, exp.DenseRank, exp.Extract, exp.Var, exp.UnixToTime,
    exp.TimestampTrunc, exp.Filter, exp.Tuple, exp.Collate, exp.AtTimeZone,
    # text functions DuckDB computes as PostgreSQL does on text (char(n) arrives unpadded,
    # as PostgreSQL's cast of char(n) to text leaves it)
    exp.Left, exp.Right, exp.Replace, exp.Pad, exp.SplitPart, exp.Concat, exp.Format, exp.MD5,
    exp.Repeat, exp.Trim, exp.StartsWith, exp.Translate, exp.Ascii,
    # initcap, chr and overlay as PostgreSQL computes them (engine/scalar_functions.py)
    exp.Initcap, exp.Chr, exp.Overlay, exp.Hex, exp.Encode,
    # regexp_replace of a pattern both engines match alike (engine/regexes.py)
    exp.RegexpReplace, exp.SimilarTo,
    # aggregates and window functions with PostgreSQL's semantics in DuckDB
    exp.LogicalAnd, exp.LogicalOr, exp.GroupConcat, exp.ArrayAgg, exp.Lag, exp.Lead,
    exp.FirstValue, exp.LastValue, exp.NthValue, exp.Ntile, exp.PercentRank, exp.CumeDist,
    exp.NullSafeEQ, exp.NullSafeNEQ, exp.Interval, exp.Fetch, exp.LimitOptions,
    exp.BitwiseAndAgg, exp.BitwiseOrAgg, exp.BitwiseXorAgg,
    exp.WithinGroup, exp.PercentileDisc, exp.PercentileCont, exp.Mode,
    # op ANY / ALL (subquery): the SQL standard's NULL semantics in both engines
    exp.Any, exp.All,
    # typed as PostgreSQL types them where the engines differ (rewritten below)
    exp.Reverse, exp.Sign, exp.Ceil, exp.Floor,
    # double precision's sqrt, cbrt, exp, ln and log10 (engine/transforms.py)
    exp.Sqrt, exp.Cbrt, exp.Exp, exp.Ln, exp.Log, exp.Pow,
    # random(): a double precision in [0, 1) drawn per row in both (the engine's draws
    # are its own: setseed() on the session does not reach them)
    exp.Rand,
    # pi(): M_PI in both
    exp.Pi,
    # variances and standard deviations of integers and numerics, as outputs
    # (engine/sums.py's VARIANCES: computed by the client from exact sums)
    exp.Stddev, exp.StddevSamp, exp.StddevPop, exp.Variance, exp.VariancePop,
    # integers' bitwise operators (engine/transforms.py: of integers only)
    exp.BitwiseAnd, exp.BitwiseOr, exp.BitwiseXor, exp.BitwiseNot, exp.BitwiseLeftShift,
    exp.BitwiseRightShift,
)  # fmt: skip


_EXTRACT_FIELDS = {"YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND", "EPOCH", "QUARTER", "DOW",
                   "DOY", "ISODOW", "WEEK", "ISOYEAR", "DECADE", "CENTURY", "MILLENNIUM",
                   "MILLISECONDS", "MICROSECONDS"}  # fmt: skip


_TRUNC_UNITS = {"YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND"}


_CAST_TARGETS = {
    exp.DataType.Type.INT,
    exp.DataType.Type.BIGINT,
    exp.DataType.Type.SMALLINT,
    exp.DataType.Type.DECIMAL,
    exp.DataType.Type.TEXT,
    exp.DataType.Type.VARCHAR,
    exp.DataType.Type.DATE,
    exp.DataType.Type.TIMESTAMP,
    exp.DataType.Type.TIMESTAMPTZ,
    exp.DataType.Type.TIME,
    exp.DataType.Type.DOUBLE,
    exp.DataType.Type.BOOLEAN,
}


# -- the checks of allowed nodes, one per node type --------------------------------------


def _check_select(node: exp.Select) -> None:
    if node.args.get("locks"):
        raise _refuse("FOR UPDATE/SHARE", node)


def _check_join(node: exp.Join) -> None:
    if node.args.get("method"):
        raise _refuse("NATURAL JOIN", node)


def _check_extract(node: exp.Extract) -> None:
    field = node.this.name.upper()
    if field not in _EXTRACT_FIELDS:
        raise _refuse(f"extract/date_part of {field.lower()}", node)


def _check_date_trunc(node: exp.TimestampTrunc) -> None:
    unit = node.args.get("unit")
    if not isinstance(unit, exp.Var) or unit.name.upper() not in _TRUNC_UNITS:
        raise _refuse("date_trunc unit", node)


def _check_window(node: exp.Window) -> None:
    if isinstance(node.this, exp.AggFunc) and isinstance(node.this.this, exp.Order):
        raise pg_errors.FeatureNotSupported(
            "aggregate ORDER BY is not implemented for window functions"
        )


def _check_ordered_aggregate(node: exp.GroupConcat | exp.ArrayAgg) -> None:
    if "row_call" in node.meta:
        return  # (a jsonb aggregate's rows: its order checked when run, engine/row_calls.py)
    if not node.find(exp.Order):
        raise _refuse(f"{construct_name(node)} without ORDER BY (order of aggregation)", node)


def _check_bit_aggregate(node: exp.Expression) -> None:
    if kind_of(node.this) != "int":  # (PostgreSQL's bit(n) forms are not the engine's)
        raise _refuse(f"{construct_name(node)} of other than integers", node)


def _check_within_group(node: exp.WithinGroup) -> None:
    """percentile_disc / percentile_cont of a constant fraction and one key
    (engine/ordered_sets.py); percentile_cont of integers or floats (PostgreSQL's cast
    of a numeric to float8 is not DuckDB's)."""
    function, order = node.this, node.expression
    keys = order.expressions if isinstance(order, exp.Order) else []
    if isinstance(node.parent, exp.Filter | exp.Window):
        raise _refuse(f"{construct_name(function)} WITHIN GROUP with FILTER or OVER", node)
    if isinstance(function, exp.Mode) and len(keys) == 1:
        if kind_of(keys[0].this) not in MODE_TYPES:
            raise _refuse(
                "mode() of other than integers, text, dates, timestamps or booleans", node
            )
        return
    if not isinstance(function, exp.PercentileDisc | exp.PercentileCont) or len(keys) != 1:
        raise _refuse(f"{construct_name(function)} WITHIN GROUP", node)
    fraction = function.this
    if not (isinstance(fraction, exp.Literal) and fraction.is_number):
        raise _refuse("a percentile of other than a constant fraction", node)
    if not 0 <= float(fraction.name) <= 1:
        raise pg_errors.NumericValueOutOfRange(
            f"percentile value {fraction.name} is not between 0 and 1"
        )
    if isinstance(function, exp.PercentileCont) and kind_of(keys[0].this) not in ("int", "float"):
        raise _refuse("percentile_cont of other than integers or floats", node)


def _check_split_part(node: exp.SplitPart) -> None:
    index = node.args.get("part_index")
    if index is None or not is_constant_int(index):
        raise _refuse("split_part with other than a constant index", node)
    if index.sql() in ("0", "-0"):  # (PostgreSQL's check, whatever the rows)
        raise pg_errors.InvalidParameterValue("field position must not be zero")


def _check_interval(node: exp.Interval) -> None:
    if isinstance(node.parent, exp.WindowSpec) and isinstance(node.this, exp.Literal):
        return  # a RANGE frame's offset over a date or time (compile/frame_offsets.py)
    if not isinstance(node.this, exp.Literal) or not (
        isinstance(node.parent, exp.Add | exp.Sub) or interval_compared(node)
    ):
        raise _refuse("an interval other than a constant added to a date or time", node)
    if isinstance(node.parent, exp.Add | exp.Sub) and has_months(node):
        sides = (node.parent.this, node.parent.expression)
        other = sides[1] if sides[0] is node else sides[0]
        if is_interval(other) or kind_of(other) not in ("date", "timestamp", "timestamptz"):
            # (an interval with months beside another interval: DuckDB counts its months
            # 30 days where psycopg loads PostgreSQL's years as 365)
            raise _refuse("an interval of months or years added to an interval", node)


def _check_limit_options(node: exp.LimitOptions) -> None:
    if node.args.get("percent") or node.args.get("with_ties"):
        raise _refuse("FETCH ... PERCENT / WITH TIES", node)


def castable(to: exp.DataType) -> bool:
    """Whether the client engine casts to ``to``."""
    return to.this in _CAST_TARGETS and not (
        to.this is exp.DataType.Type.VARCHAR and to.expressions and not varchar_length(to)
    )


def _check_cast_target(node: exp.Cast) -> None:
    if is_clock_param(node):
        return
    to = node.to
    if not castable(to):
        raise _refuse(f"cast to {to.sql('postgres')}", node)
    if node.args.get("safe") or node.args.get("format"):
        raise _refuse("cast", node)


# The checks of the allowed nodes whose arguments decide whether the client answers
# exactly, by node type (:func:`kinds.by_type`: a TryCast is checked as a Cast).
_CHECKS: dict[type[exp.Expression], Callable[[Any], None]] = {
    exp.Select: _check_select,
    exp.Join: _check_join,
    exp.Extract: _check_extract,
    exp.TimestampTrunc: _check_date_trunc,
    exp.Window: _check_window,
    exp.GroupConcat: _check_ordered_aggregate,
    exp.ArrayAgg: _check_ordered_aggregate,
    exp.SplitPart: _check_split_part,
    exp.Interval: _check_interval,
    exp.LimitOptions: _check_limit_options,
    exp.Cast: _check_cast_target,
    exp.WithinGroup: _check_within_group,
    **dict.fromkeys((exp.BitwiseAndAgg, exp.BitwiseOrAgg, exp.BitwiseXorAgg), _check_bit_aggregate),
}


def _allowed(node: exp.Expr) -> bool:
    if isinstance(node, _ALLOWED):
        return True
    if isinstance(node, exp.Array):
        # (read by a jsonb or array function; else a list of integers, text or booleans,
        # which the client engine holds as PostgreSQL's array of them)
        parent_call = node.parent is not None and "row_call" in node.parent.meta
        return parent_call or _simple_array(node)
    if isinstance(node, exp.Rollup | exp.Cube | exp.GroupingSets | exp.Grouping):
        return True  # (DuckDB's grouping sets and grouping() are the standard's, as PostgreSQL's)
    if isinstance(node, exp.Tuple) and isinstance(node.parent, exp.GroupingSets):
        return True  # (a set of the list: () the grand total)
    if isinstance(node, exp.Lateral) and isinstance(node.this, exp.Subquery):
        return True  # (a LATERAL subquery: DuckDB's lateral join reads it as PostgreSQL)
    if "row_call" in node.meta or node.meta.get("set_function"):
        return True  # (a jsonb or array function: engine/row_calls.py, set_functions.py)
    if isinstance(node, exp.Anonymous):
        name = node.name.lower()
        return (
            name in ENGINE_FUNCTIONS
            or name in SCALAR_FUNCTIONS
            or name in DATE_CONSTRUCTORS
            or name == "age"
        )
    return isinstance(node, exp.RegexpLike) and bool(node.meta.get("portable"))


def _simple_array(node: exp.Array) -> bool:
    kinds = {kind_of(e) for e in node.expressions}
    return (
        bool(kinds)
        and kinds <= {"int", "text", "bool"}
        and not any(isinstance(e, exp.Null | exp.Placeholder) for e in node.expressions)
    )


def check_allowed(tree: exp.Expression) -> None:
    """Refuse any node outside the checked allowlist, naming it, and any allowed node
    whose arguments the client would not answer exactly (:data:`_CHECKS`)."""
    for node in tree.walk():
        if isinstance(node, exp.Anonymous) and node.name.lower() in FUNCTION_CASTS:
            raise undefined_function(node.name.lower(), node.expressions)
        if not _allowed(node):
            raise _refuse(construct_name(node), node)
        check = by_type(_CHECKS, node)
        if check is not None:
            check(node)


def _case_condition(node: exp.If) -> list[tuple[str, exp.Expression]]:
    parent = node.parent
    if isinstance(parent, exp.Case) and parent.args.get("this") is None:
        return [("CASE/WHEN", node.this)]
    return []  # (CASE x WHEN 1: compared values)


def _truth_test(node: exp.Is) -> str:
    """``IS [NOT] TRUE | FALSE``, as PostgreSQL's error names it."""
    negated = " NOT" if isinstance(node.parent, exp.Not) else ""
    return f"IS{negated} {'TRUE' if node.expression.this else 'FALSE'}"


def _join_condition(node: exp.Join) -> list[tuple[str, exp.Expression]]:
    on = node.args.get("on")
    return [] if on is None else [("JOIN/ON", on)]


# where each node type requires a boolean, with the name PostgreSQL's error gives the place
_CONDITIONS: dict[type[exp.Expression], Callable[[Any], list[tuple[str, exp.Expression]]]] = {
    exp.Where: lambda node: [
        ("FILTER" if isinstance(node.parent, exp.Filter) else "WHERE", node.this)
    ],
    exp.Having: lambda node: [("HAVING", node.this)],
    exp.Join: _join_condition,
    exp.If: _case_condition,
    exp.Not: lambda node: [("NOT", node.this)],
    exp.Is: lambda node: (
        [(_truth_test(node), node.this)] if isinstance(node.expression, exp.Boolean) else []
    ),
    exp.And: lambda node: [("AND", node.this), ("AND", node.expression)],
    exp.Or: lambda node: [("OR", node.this), ("OR", node.expression)],
}


def _conditions(tree: exp.Expression) -> list[tuple[str, exp.Expression]]:
    """Where PostgreSQL requires a boolean, each with the name its error gives the place."""
    out: list[tuple[str, exp.Expression]] = []
    for node in tree.walk():
        conditions = by_type(_CONDITIONS, node)
        if conditions is not None:
            out += conditions(node)
    return out


def check_boolean_arguments(tree: exp.Expression) -> None:
    """PostgreSQL's rule that a condition is a boolean (DuckDB casts a number or a
    string to one and answers): ``WHERE i``, ``FILTER (WHERE i)``, ``CASE WHEN i``,
    ``NOT i``, ``i AND c`` raise 42804 as PostgreSQL raises it, before anything is
    fetched."""
    for place, value in _conditions(tree):
        name = pg_type_name(value)
        if name is not None and name not in ("boolean", "unknown"):
            raise pg_errors.DatatypeMismatch(
                f"argument of {place} must be type boolean, not type {name}"
            )


# the type categories PostgreSQL resolves a choice's branches within (an implicit cast
# joins two types of one category; none joins two categories)
_CATEGORIES = {
    **dict.fromkeys(
        ("smallint", "integer", "bigint", "numeric", "real", "double precision"), "number"
    ),
    "boolean": "boolean",
    "text": "string",
    **dict.fromkeys(
        ("date", "timestamp without time zone", "timestamp with time zone"), "datetime"
    ),
}

_CHOICES: dict[type[exp.Expression], str] = {
    exp.Coalesce: "COALESCE",
    exp.Case: "CASE",
    exp.Greatest: "GREATEST",
    exp.Least: "LEAST",
}


def check_choice_types(tree: exp.Expression) -> None:
    """PostgreSQL's rule that a COALESCE, CASE, GREATEST or LEAST chooses between values
    of one type category (DuckDB casts a boolean to a number and answers):
    ``coalesce(flag, 1)`` is 42804, raised before anything is fetched."""
    for node in tree.find_all(*_CHOICES):
        seen: tuple[str, str] | None = None
        for value in choice_values(node):
            name = pg_type_name(value)
            category = _CATEGORIES.get(name or "")
            if name is None or category is None:
                continue
            if seen is None:
                seen = (name, category)
            elif category != seen[1]:
                raise pg_errors.DatatypeMismatch(
                    f"{_CHOICES[type(node)]} types {seen[0]} and {name} cannot be matched"
                )


def check_distinct_order(tree: exp.Expression) -> None:
    """PostgreSQL's rule that DuckDB does not keep: with SELECT DISTINCT, every ORDER BY
    expression is one of the selected ones (an output name, a position or the same
    expression).  Raised as PostgreSQL raises it, before anything is fetched."""
    for select in tree.find_all(exp.Select):
        distinct, order = select.args.get("distinct"), select.args.get("order")
        if distinct is None or distinct.args.get("on") is not None or order is None:
            continue
        outputs = {p.alias_or_name.lower() for p in select.expressions}
        selected = [p.unalias() for p in select.expressions]
        for o in order.expressions:
            key = o.this
            if isinstance(key, exp.Literal) and not key.is_string:
                continue
            if isinstance(key, exp.Column) and not key.table and key.name.lower() in outputs:
                continue
            if any(key == p for p in selected):
                continue
            raise pg_errors.InvalidColumnReference(
                "for SELECT DISTINCT, ORDER BY expressions must appear in select list"
            )


def check_order_names(stmt: exp.Expression) -> None:
    """PostgreSQL's rule for ``ORDER BY name``: a name that two different output columns
    carry is ambiguous (the same expression twice is not; the columns of ``*`` over a
    CTE or derived table naming two columns alike are different ones).  Checked on the
    statement as written, before names are qualified."""
    for select in stmt.find_all(exp.Select):
        order = select.args.get("order")
        outputs = _folded_outputs(select) if order is not None else None
        if order is None or outputs is None:
            continue
        for o in order.expressions:
            key = o.this
            if not isinstance(key, exp.Column) or key.table:
                continue
            name = key.name if key.this.args.get("quoted") else key.name.lower()
            matches = [e for n, e in outputs if n == name]
            if len(matches) > 1 and any(m != matches[0] for m in matches[1:]):
                raise pg_errors.AmbiguousColumn(f'ORDER BY "{key.name}" is ambiguous')


def check_set_operation_order(stmt: exp.Expression) -> None:
    """The ORDER BY of a UNION, INTERSECT or EXCEPT names its result's columns (or their
    positions) only: another name is PostgreSQL's 42703 (the client's engine ordered by
    a column of the left query that the result does not have), an expression its 0A000
    (the client's engine ordered by it)."""
    for node in stmt.find_all(exp.SetOperation):
        order = node.args.get("order")
        left = node.this
        while isinstance(left, exp.SetOperation | exp.Subquery):
            left = left.this
        if order is None or not isinstance(left, exp.Select):
            continue
        names = {e.alias_or_name for e in left.expressions}
        if any(isinstance(e, exp.Star) or e.is_star for e in left.expressions):
            continue  # (the star's names: known only once qualified)
        for o in order.expressions:
            key = unparen(o.this)  # (PostgreSQL's grammar drops parentheses: Django's (2))
            if not isinstance(key, exp.Column) and not (
                isinstance(key, exp.Literal) and key.is_int
            ):
                raise pg_errors.FeatureNotSupported(
                    "invalid UNION/INTERSECT/EXCEPT ORDER BY clause\nDETAIL:  Only result "
                    "column names can be used, not expressions or functions."
                )
            if isinstance(key, exp.Column) and key.table:
                raise UndefinedTable(f'missing FROM-clause entry for table "{key.table}"')
            if isinstance(key, exp.Column) and key.name not in names:
                raise UndefinedColumn(f'column "{key.name}" does not exist')


def _folded_outputs(select: exp.Select) -> list[tuple[str, object]] | None:
    """(name as PostgreSQL folds it, what the column is) per output column; None where
    a ``*``'s names are not known here."""
    outputs: list[tuple[str, object]] = []
    for i, item in enumerate(select.expressions):
        if is_star(item):
            source = _star_source(select, item)
            if source is None:
                return None
            outputs += [(n, (i, j)) for j, n in enumerate(source)]
            continue
        ident = item.args.get("alias") if isinstance(item, exp.Alias) else None
        ident = ident or (item.this if isinstance(item, exp.Column) else None)
        quoted = isinstance(ident, exp.Identifier) and bool(ident.args.get("quoted"))
        name = item.alias_or_name
        outputs.append((name if quoted else name.lower(), item.unalias()))
    return outputs


def _star_source(select: exp.Select, star: exp.Expression) -> list[str] | None:
    """The output names of the one CTE or derived table ``star`` expands, if known."""
    sources = [select.args.get("from_"), *(select.args.get("joins") or [])]
    items = [s.this for s in sources if isinstance(s, exp.From | exp.Join)]
    if len(items) != 1 and not (isinstance(star, exp.Column) and star.table):
        return None
    for item in items:
        if isinstance(star, exp.Column) and star.table and item.alias_or_name != star.table:
            continue
        if isinstance(item, exp.Subquery) and isinstance(item.this, exp.Select):
            inner: exp.Expression | None = item.this
        elif isinstance(item, exp.Table) and not item.db:
            inner = _cte_select(select, item.name)
        else:
            inner = None
        if isinstance(inner, exp.Select) and not any(is_star(e) for e in inner.expressions):
            return [e.alias_or_name.lower() for e in inner.expressions]
        return None
    return None


def _cte_select(select: exp.Select, name: str) -> exp.Expression | None:
    node: Any = select
    while node is not None:
        with_ = node.args.get("with_")
        for cte in with_.expressions if with_ is not None else []:
            if cte.alias_or_name == name:
                return cte.this
        node = node.parent
    return None


def check_real_arithmetic(tree: exp.Expression, reals: frozenset[tuple[str, str]]) -> None:
    """Arithmetic between two reals is real in PostgreSQL (float4pl...), which the client
    engine would compute in double precision (sqlglot types a real column double):
    refused -- a string literal beside a real is one (PostgreSQL reads ``'-10'`` as the
    other operand's type).  A real beside any other number is computed in double
    precision in both."""

    def real(node: exp.Expression, other: exp.Expression) -> bool:
        if isinstance(node, exp.Literal) and node.is_string:
            return real_valued(other, reals)
        return real_valued(node, reals)

    for node in tree.find_all(exp.Add, exp.Sub, exp.Mul, exp.Div):
        if real(node.this, node.expression) and real(node.expression, node.this):
            raise _refuse("arithmetic between two real values", node)


_COMPARISON_SYMBOLS = {
    exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<", exp.GT: ">", exp.LTE: "<=", exp.GTE: ">=",
    # jsonb's containment and existence operators, which json has not either
    exp.ArrayContainsAll: "@>", exp.ArrayContainedBy: "<@", exp.JSONBContainsTopKey: "?",
    exp.JSONBContainsAnyTopKeys: "?|", exp.JSONBContainsAllTopKeys: "?&",
}  # fmt: skip


def refuse_json_comparisons(catalog: Catalog, tree: exp.Expression) -> None:
    """A json column compared, anywhere in the statement: PostgreSQL's error (json has no
    comparison, containment or existence operators, 42883), as the server path raises
    it, not a refusal."""
    tables = {
        t.alias_or_name: t.name.lower()
        for t in tree.find_all(exp.Table)
        if catalog.has_table(t.name.lower())
    }

    def is_json(node: exp.Expression) -> bool:
        node = unparen(node)
        if not isinstance(node, exp.Column) or node.table not in tables:
            return False
        meta = catalog.table(tables[node.table])
        return node.name in meta.columns and meta.column(node.name).type.name == "json"

    for node in tree.find_all(*_COMPARISON_SYMBOLS):
        left, right = is_json(node.this), is_json(node.expression)
        if left or right:
            raise json_operator_refusal(
                _COMPARISON_SYMBOLS[type(node)], "json" if left and right else "unknown"
            )


def check_full_joins(tree: exp.Expression) -> None:
    """PostgreSQL runs a FULL JOIN only as a hash or merge join: its ON needs an
    equality conjunct between an expression of the left side and one of the right (or
    no join condition at all, a constant); otherwise it raises, and so do we."""
    for select in tree.find_all(exp.Select):
        left: set[str] = set()
        from_ = select.args.get("from_")
        if from_ is not None:
            left.add(from_.this.alias_or_name)
        for join in select.args.get("joins") or []:
            right = {join.this.alias_or_name}
            on = join.args.get("on")
            if (
                (join.side or "").upper() == "FULL"
                and on is not None
                and not _hashable(on, left, right)
            ):
                if select.args.get("where") is not None:
                    # PostgreSQL turns a FULL JOIN that a WHERE condition rejects the NULL
                    # rows of into a one-sided join, which it runs: it may answer this
                    raise UnsupportedQuery(
                        "not supported in a client-evaluated query: a FULL JOIN without an "
                        "equality between its sides, under a WHERE",
                        "FULL JOIN",
                    )
                raise pg_errors.FeatureNotSupported(
                    "FULL JOIN is only supported with merge-joinable or hash-joinable "
                    "join conditions"
                )
            left |= right


def check_chained_using(stmt: exp.Expression) -> None:
    """A USING join after a RIGHT or FULL USING join on the same column: PostgreSQL joins
    on the merged column (``COALESCE(t1.c, t2.c)``), the SQL parser's expansion on the
    first table's column alone (``t1.c = t3.c``, which drops the rows only ``t2`` had):
    refused, not answered differently.  Checked on the statement as written."""
    for select in stmt.find_all(exp.Select):
        merged_outer: set[str] = set()
        for join in select.args.get("joins") or []:
            names = {u.name.lower() for u in join.args.get("using") or []}
            if names & merged_outer:
                raise _refuse("a USING join on a column an earlier RIGHT or FULL join merged", join)
            if (join.side or "").upper() in ("RIGHT", "FULL"):
                merged_outer |= names


def check_outer_aggregates(tree: exp.Expression) -> None:
    """An aggregate in a subquery whose argument is a subquery reading only an outer
    query's columns belongs, in SQL, to that outer query (``SELECT (SELECT max((SELECT
    ... WHERE i.u = o.u))) FROM o`` is one row); the client's engine computes it per row
    of the outer query: refused.  (Without the inner subquery, ``(SELECT max(o.u))``,
    the engine places it as PostgreSQL does.)  Checked on the qualified tree."""
    for scope in traverse_scope(tree):
        if scope.parent is None:
            continue
        local = set(scope.sources)
        for agg in scope.expression.find_all(exp.AggFunc):
            if agg.find(exp.Subquery, exp.Select) is None:
                continue
            columns = [c for c in agg.find_all(exp.Column) if c.table]
            if columns and not any(c.table in local for c in columns):
                raise _refuse("an aggregate of an outer query's values in a subquery", agg)


def _hashable(on: exp.Expression, left: set[str], right: set[str]) -> bool:
    if on.find(exp.Column) is None:
        return True  # a constant: no join clause
    for c in conjuncts(on):
        if isinstance(c, exp.EQ):
            a = {col.table for col in c.this.find_all(exp.Column)}
            b = {col.table for col in c.expression.find_all(exp.Column)}
            if a and b and ((a <= left and b <= right) or (a <= right and b <= left)):
                return True
    return False
