"""Split execution: a SELECT the server cannot evaluate over ciphertexts, finished exactly
on the client.

When the direct compilation of a SELECT (or UNION / INTERSECT / EXCEPT, or WITH) raises
:class:`UnsupportedQuery`, the statement is planned as a *residual*:

1. its names are qualified (sqlglot's ``qualify``) and typed against the plain catalog,
   its constants folded and the conjuncts common to an OR's branches factored out
   (rewrite/fold.py);
2. its base tables are grouped into *relations* (rewrite/split.py): server SELECTs,
   compiled by the existing rewrite (so their onion needs become peels), that join what
   the server can join, filter by what compiles over ciphertexts, and reduce by run-time
   semi-joins -- only filters: the residual applies the whole statement again;
3. the relations' decrypted rows are loaded, in dependency order, into the client
   engine (rewrite/engine.py: an in-process DuckDB), and the statement, pointed at them
   and transpiled to DuckDB with the rewrites below, runs there with its parameters
   bound as DuckDB parameters.

Exactness with PostgreSQL's semantics is the point, so the residual accepts only an
allowlist of constructs whose DuckDB evaluation was checked against PostgreSQL's, and
rewrites those whose semantics differ:

* integer ``+ - * / %`` and negation are computed in the type PostgreSQL gives them
  (the wider operand's: both operands cast to it), so that the client engine raises
  where PostgreSQL raises "integer out of range" (DuckDB widens ``int + constant`` to
  bigint); integer ``/`` truncates (DuckDB ``//``); double precision ``+ - * /`` go
  through the ``pg_float8_*`` macros (PostgreSQL's overflow, underflow and division by
  zero); numeric ``/`` gives PostgreSQL's quotient (its result scale: an output is
  divided on the client, inside the statement a UDF computes it or refuses); text cast
  to an integer type or double precision is read by PostgreSQL's input rules
  (``pg_int_in``, ``pg_float8_text``);
* ``sum`` is typed as PostgreSQL types it (bigint of smallint/integer, numeric of
  bigint); ``avg`` of integers/numerics is the exact sum and count, divided with
  PostgreSQL's numeric division (:func:`pg_avg`); ``round`` / ``trunc`` of numerics
  have the scale asked for;
* ``sum`` / ``avg`` of real and double precision: PostgreSQL adds the values one by one
  in its plan's order, each addition rounded, and that order is not the client's to
  know.  The client answers only where every order gives the same value -- all values
  finite multiples of one power of two whose magnitudes' sum the type holds exactly --
  and refuses at run time otherwise (:func:`_float_sum`): a float sum is never answered
  with other last bits than PostgreSQL's;
* interval results (``timestamp - timestamp``, ``age()``) come back as psycopg loads
  PostgreSQL's intervals (years 365 days, months 30: ``pg_interval_out``); the casts of
  text and floats to numeric in the select list keep each value's display scale,
  converted on the client (:func:`numeric_outputs`); real outputs print as PostgreSQL
  prints a real;
* NULLs sort last ascending and first descending, as in PostgreSQL (sqlglot writes the
  NULLS FIRST / LAST of every ORDER BY for the DuckDB default it assumes, which is set);
* ``lower`` / ``upper`` / ``ILIKE`` map case as the database does (below), ``LIKE``
  escapes with a backslash by default, ``substr`` follows PostgreSQL for starts below 1;
* ``extract`` gives numeric, ``date_part`` double precision (integral fields only);
  ``date_trunc`` of a timestamp (of a date PostgreSQL answers a timestamptz: refused);
* text is ordered under the collation of the columns it reads (:func:`text_order`):
  ORDER BY keys, ranges, BETWEEN and min/max of text go through ``pg_collation_key``,
  the collation key the Ord onion's prefix comes from (``collation``); under an explicit
  ``COLLATE "name"`` through that collation's key (``"C"``: bytewise); the connection
  checks the collations before anything is peeled (:attr:`Compiled.text_orders`).  Case
  mapping (``lower``, ``upper``, ``ILIKE``) is the database's (``collation.CaseMapping``:
  ASCII under the C ctype, ICU's or libc's otherwise), for text of its default collation.

* columns of types DuckDB has none for with PostgreSQL's semantics (inet, cidr, macaddr,
  jsonb, bit, money, interval, time, timetz, enums, arrays) are held by their order keys
  (rewrite/held.py): compared, ordered, grouped, counted, min/max'd and copied, and
  mapped back to their values on the way out; a string or parameter compared with one
  read as PostgreSQL reads it there.

Anything else is refused with :class:`UnsupportedQuery` naming the construct, at compile
time (before any peel) wherever it can be decided there.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from decimal import Decimal
from typing import Any, cast

import duckdb
from psycopg import errors as pg_errors
from sqlglot import exp
from sqlglot.errors import OptimizeError, SqlglotError
from sqlglot.expressions.datatypes import DType
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.pushdown_projections import pushdown_projections
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import traverse_scope

from ..clock import clock_parameters, is_clock_cast, session_zone
from ..collation import (
    C_COLLATION,
    COLLATION_NAMED,
    DATABASE_CASE_MAPPING,
    DATABASE_COLLATION,
    Collation,
)
from ..encodings import TEXT_TYPES, encoding_for, session_datestyle
from ..errors import CollationUnavailable, UndefinedColumn, UnsupportedQuery
from ..json_encoding import operator_refusal as json_operator_refusal
from ..metadata import Catalog, ColumnMeta, TableMeta
from .aggregate import apply as apply_pushdown
from .aggregate import compiles_exactly, plan_pushdowns
from .engine import (  # noqa: F401  (pg_*: the engine's functions, tested from here)
    QUOTIENT_SCALE,
    REFUSAL_MARKER,
    engine,
    load,
    pg_lower,
    pg_quotient,
    pg_substr,
    pg_substr_from,
    pg_upper,
    release,
    storage_type,
    translate,
)
from .engine import (
    refusal as _refuse,
)
from .fold import factor_disjunctions, fold_constants
from .held import Shown, check_uses, comparand_reader, held_type, held_types, unbounded_range
from .late import plan_late
from .nested_joins import joins_as_derived_tables
from .numeric import float4_out, float_numeric, numeric_div, numeric_in, pg_avg
from .plan import Compiled, Output, ParamBuilder, Params, Residual
from .precomputed import extend_schema, substitute
from .split import (
    SEMI_VALUES,
    Relation,
    Semi,
    compile_relation,
    conjuncts,
    drop_applied,
    plan_relations,
    rewrite_to_relations,
    source_of,
    try_compile,
)

# -- types ---------------------------------------------------------------------------------

_INT_DUCK = {"smallint": "SMALLINT", "integer": "INTEGER", "bigint": "BIGINT"}
_SIMPLE_DUCK = {
    **_INT_DUCK,
    "text": "VARCHAR",
    "varchar": "VARCHAR",
    "date": "DATE",
    "timestamp": "TIMESTAMP",
    "timestamptz": "TIMESTAMPTZ",  # (an instant; shown in the session's zone, see finish)
    "boolean": "BOOLEAN",
    "real": "FLOAT",
    "double precision": "DOUBLE",
    # (compared bytewise, as PostgreSQL compares it; its input forms are PostgreSQL's)
    "uuid": "UUID",
    "bytea": "BLOB",  # (compared bytewise, a prefix first, as PostgreSQL compares it)
}


def duck_type(table: TableMeta, col: ColumnMeta) -> str:
    """The DuckDB type holding ``col``'s values exactly, or a refusal."""
    t = col.type
    if t.name == "numeric":
        if t.precision is None or t.precision > 38:
            raise UnsupportedQuery(
                f"{table.name}.{col.name} ({t.sql()}): the client engine holds numerics "
                "of at most 38 digits with a declared precision",
                "numeric precision",
            )
        return f"DECIMAL({t.precision},{t.scale or 0})"
    if t.name in _SIMPLE_DUCK:
        return _SIMPLE_DUCK[t.name]
    if t.name == "char":
        # held without its trailing spaces (stored as VARCHAR, see :func:`storage_type`):
        # char(n) compares, concatenates and measures that way; typed CHAR(n) for the
        # annotation, so that LIKE and the outputs get the padding back
        return f"CHAR({t.precision or 1})"
    held = held_type(col)
    if held is not None:  # (by its order keys: rewrite/held.py)
        return held
    raise UnsupportedQuery(
        f"{table.name}.{col.name} ({t.sql()}) in a client-evaluated query", f"{t.name} column"
    )


# DuckDB result types -> PostgreSQL type OIDs
_OIDS = {
    "BOOLEAN": 16,
    "SMALLINT": 21,
    "INTEGER": 23,
    "BIGINT": 20,
    "FLOAT": 700,
    "DOUBLE": 701,
    "VARCHAR": 25,
    "DATE": 1082,
    "TIMESTAMP": 1114,
    "TIMESTAMP WITH TIME ZONE": 1184,
    # (timestamp - timestamp, age(): values as psycopg loads PostgreSQL's, see
    # :func:`_interval_out`)
    "INTERVAL": 1186,
    "UUID": 2950,
    "BLOB": 17,
    '"NULL"': 25,
    "NULL": 25,
}


# one-dimensional arrays (array_agg): DuckDB's lists come back as Python lists, as
# psycopg returns PostgreSQL's arrays
_ARRAY_OIDS = {16: 1000, 21: 1005, 23: 1007, 20: 1016, 700: 1021, 701: 1022, 25: 1009,
               1082: 1182, 1114: 1115, 1700: 1231}  # fmt: skip


def result_oid(duck: str) -> int:
    if duck.endswith("[]") and not duck[:-2].endswith("]"):
        element = _ARRAY_OIDS.get(result_oid(duck[:-2]))
        if element is None:
            raise _refuse(f"a result of type {duck}")
        return element
    if duck.startswith("DECIMAL"):
        return 1700
    oid = _OIDS.get(duck)
    if oid is None:
        raise _refuse(f"a result of type {duck}")
    return oid


# -- finding what the statement reads ----------------------------------------------------


def cte_names(stmt: exp.Expression) -> set[str]:
    return {cte.alias_or_name.lower() for cte in stmt.find_all(exp.CTE)}


def schema_of(catalog: Catalog, stmt: exp.Expression) -> dict[str, dict[str, str]]:
    """sqlglot schema (plain names, DuckDB types) of every base table the statement names."""
    ctes = cte_names(stmt)
    schema: dict[str, dict[str, str]] = {}
    for t in stmt.find_all(exp.Table):
        if t.args.get("db") or t.args.get("catalog"):
            raise _refuse("schema-qualified table", t)
        if not isinstance(t.this, exp.Identifier):
            raise _refuse("FROM item", t)
        name = t.name.lower()
        if name in ctes or name in schema:
            continue
        meta = catalog.table(name)
        schema[name] = {c.name: _held_type(meta, c) for c in meta.columns.values()}
    return schema


# a column the client engine cannot hold: named in the schema (a star expands to it, a
# name resolves), refused only where the statement reads it (:func:`compile_residual`)
_NOT_HELD = "UNKNOWN"


def _held_type(table: TableMeta, col: ColumnMeta) -> str:
    try:
        return duck_type(table, col)
    except UnsupportedQuery:
        return _NOT_HELD


def qualified(stmt: exp.Expression, schema: dict[str, dict[str, str]]) -> exp.Expression:
    try:
        return qualify(
            stmt.copy(),
            schema=cast(dict[str, object], schema),
            dialect="postgres",
            quote_identifiers=False,
            identify=False,
        )
    except OptimizeError as exc:
        msg = str(exc)
        if "could not be resolved" in msg or "Unknown column" in msg:
            raise UndefinedColumn(msg) from None
        raise _refuse(f"statement the client cannot resolve ({msg})") from None
    except SqlglotError as exc:
        raise _refuse(f"statement the client cannot resolve ({exc})") from None


def unused_columns_dropped(tree: exp.Expression) -> exp.Expression:
    """The columns of derived tables and CTEs nothing reads, dropped (sqlglot's
    ``pushdown_projections``, which keeps what decides a subquery's rows): a column
    dropped is one the server does not ship and the client does not decrypt."""
    try:
        return pushdown_projections(tree)
    except OptimizeError:  # an unexpanded star, raised before any change: nothing dropped
        return tree


# -- the allowlist ----------------------------------------------------------------------

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
    exp.WindowSpec, exp.RowNumber, exp.Rank, exp.DenseRank, exp.Extract, exp.Var,
    exp.TimestampTrunc, exp.Filter, exp.Tuple, exp.Collate,
    # text functions DuckDB computes as PostgreSQL does on text (char(n) arrives unpadded,
    # as PostgreSQL's cast of char(n) to text leaves it)
    exp.Left, exp.Right, exp.Replace, exp.Pad, exp.SplitPart, exp.Concat, exp.MD5,
    exp.Repeat, exp.Trim, exp.StartsWith,
    # aggregates and window functions with PostgreSQL's semantics in DuckDB
    exp.LogicalAnd, exp.LogicalOr, exp.GroupConcat, exp.ArrayAgg, exp.Lag, exp.Lead,
    exp.FirstValue, exp.LastValue, exp.NthValue, exp.Ntile, exp.PercentRank, exp.CumeDist,
    exp.NullSafeEQ, exp.NullSafeNEQ, exp.Interval, exp.Fetch, exp.LimitOptions,
    # op ANY / ALL (subquery): the SQL standard's NULL semantics in both engines
    exp.Any, exp.All,
    # typed as PostgreSQL types them where the engines differ (rewritten below)
    exp.Reverse, exp.Sign, exp.Ceil, exp.Floor,
)  # fmt: skip

_EXTRACT_FIELDS = {"YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND", "EPOCH", "QUARTER", "DOW",
                   "DOY", "ISODOW"}  # fmt: skip
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
    exp.DataType.Type.DOUBLE,
    exp.DataType.Type.BOOLEAN,
}


# functions sqlglot leaves unparsed, with DuckDB's equivalent (checked against PostgreSQL)
_ANONYMOUS = {
    "octet_length": "strlen",  # bytes of the UTF-8 text (the database's encoding)
    "to_char": "pg_to_char",  # of a date or timestamp, its format's patterns (to_char.py)
}


def check_allowed(tree: exp.Expression) -> None:
    """Refuse any node outside the checked allowlist, naming it."""
    for node in tree.walk():
        if (
            not isinstance(node, _ALLOWED)
            and not (
                isinstance(node, exp.Anonymous)
                and (node.name.lower() in _ANONYMOUS or node.name.lower() == "age")
            )
            and not (isinstance(node, exp.RegexpLike) and node.meta.get("portable"))
        ):
            raise _refuse(_construct_name(node), node)
        if isinstance(node, exp.With) and node.args.get("recursive"):
            raise _refuse("WITH RECURSIVE", node)
        if isinstance(node, exp.Select) and node.args.get("locks"):
            raise _refuse("FOR UPDATE/SHARE", node)
        if isinstance(node, exp.Join) and node.args.get("method"):
            raise _refuse("NATURAL JOIN", node)
        if isinstance(node, exp.Extract):
            field = node.this.name.upper()
            if field not in _EXTRACT_FIELDS:
                raise _refuse(f"extract/date_part of {field.lower()}", node)
        if isinstance(node, exp.TimestampTrunc):
            unit = node.args.get("unit")
            if not isinstance(unit, exp.Var) or unit.name.upper() not in _TRUNC_UNITS:
                raise _refuse("date_trunc unit", node)
        if (
            isinstance(node, exp.Window)
            and isinstance(node.this, exp.AggFunc)
            and isinstance(node.this.this, exp.Order)
        ):
            raise pg_errors.FeatureNotSupported(
                "aggregate ORDER BY is not implemented for window functions"
            )
        if isinstance(node, exp.GroupConcat | exp.ArrayAgg) and not node.find(exp.Order):
            raise _refuse(f"{_construct_name(node)} without ORDER BY (order of aggregation)", node)
        if isinstance(node, exp.SplitPart):
            index = node.args.get("part_index")
            if not (isinstance(index, exp.Literal) and str(index.this).isdigit()):
                raise _refuse("split_part with other than a positive constant index", node)
        if isinstance(node, exp.Interval) and (
            not isinstance(node.this, exp.Literal)
            or not (isinstance(node.parent, exp.Add | exp.Sub) or _interval_compared(node))
        ):
            raise _refuse("an interval other than a constant added to a date or time", node)
        if (
            isinstance(node, exp.Interval)
            and isinstance(node.parent, exp.Add | exp.Sub)
            and _has_months(node)
        ):
            sides = (node.parent.this, node.parent.expression)
            other = sides[1] if sides[0] is node else sides[0]
            if _is_interval(other) or _kind(other) not in ("date", "timestamp", "timestamptz"):
                # (an interval with months beside another interval: DuckDB counts its
                # months 30 days where psycopg loads PostgreSQL's years as 365)
                raise _refuse("an interval of months or years added to an interval", node)
        if isinstance(node, exp.LimitOptions) and (
            node.args.get("percent") or node.args.get("with_ties")
        ):
            raise _refuse("FETCH ... PERCENT / WITH TIES", node)
        if isinstance(node, exp.Cast) and not _clock_cast(node):
            to = node.to
            if to.this not in _CAST_TARGETS or (
                to.this is exp.DataType.Type.VARCHAR and to.expressions and not _varchar_length(to)
            ):
                raise _refuse(f"cast to {to.sql('postgres')}", node)
            if node.args.get("safe") or node.args.get("format"):
                raise _refuse("cast", node)


# the name PostgreSQL's errors give a value's type, by its kind (integers by width)
_KIND_NAMES = {
    "decimal": "numeric",
    "float": "double precision",
    "text": "text",
    "date": "date",
    "timestamp": "timestamp without time zone",
    "timestamptz": "timestamp with time zone",
}
_INT_NAMES = {2: "smallint", 4: "integer", 8: "bigint"}


def _conditions(tree: exp.Expression) -> list[tuple[str, exp.Expression]]:
    """Where PostgreSQL requires a boolean, each with the name its error gives the place."""
    out: list[tuple[str, exp.Expression]] = []
    for node in tree.walk():
        if isinstance(node, exp.Where):
            out.append(("FILTER" if isinstance(node.parent, exp.Filter) else "WHERE", node.this))
        elif isinstance(node, exp.Having):
            out.append(("HAVING", node.this))
        elif isinstance(node, exp.Join) and node.args.get("on") is not None:
            out.append(("JOIN/ON", node.args["on"]))
        elif (
            isinstance(node, exp.If)
            and isinstance(node.parent, exp.Case)
            and node.parent.args.get("this") is None  # (CASE x WHEN 1: compared values)
        ):
            out.append(("CASE/WHEN", node.this))
        elif isinstance(node, exp.Not):
            out.append(("NOT", node.this))
        elif isinstance(node, exp.And | exp.Or):
            word = "AND" if isinstance(node, exp.And) else "OR"
            out += [(word, node.this), (word, node.expression)]
    return out


def check_boolean_arguments(tree: exp.Expression) -> None:
    """PostgreSQL's rule that a condition is a boolean (DuckDB casts a number or a
    string to one and answers): ``WHERE i``, ``FILTER (WHERE i)``, ``CASE WHEN i``,
    ``NOT i``, ``i AND c`` raise 42804 as PostgreSQL raises it, before anything is
    fetched."""
    for place, value in _conditions(tree):
        kind = _kind(value)
        if kind == "int":
            name = _INT_NAMES.get(_int_width(value) or 4, "integer")
        elif (
            kind == "float"
            and value.type is not None
            and value.type.is_type(exp.DataType.Type.FLOAT)
        ):
            name = "real"
        else:
            name = _KIND_NAMES.get(kind, "")
        if name:
            raise pg_errors.DatatypeMismatch(
                f"argument of {place} must be type boolean, not type {name}"
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


def _is_star(item: exp.Expression) -> bool:
    """A select list's ``*`` or ``alias.*``."""
    return isinstance(item, exp.Star) or (
        isinstance(item, exp.Column) and isinstance(item.this, exp.Star)
    )


def _folded_outputs(select: exp.Select) -> list[tuple[str, object]] | None:
    """(name as PostgreSQL folds it, what the column is) per output column; None where
    a ``*``'s names are not known here."""
    outputs: list[tuple[str, object]] = []
    for i, item in enumerate(select.expressions):
        if _is_star(item):
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
        if isinstance(inner, exp.Select) and not any(_is_star(e) for e in inner.expressions):
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


def _construct_name(node: Any) -> str:
    if isinstance(node, exp.Anonymous):
        return f"function {node.name}()"
    if isinstance(node, exp.Func):  # as the application spells it, not sqlglot's name
        return f"function {node.sql('postgres').split('(')[0].lower()}()"
    return type(node).__name__


# -- rewriting for DuckDB ------------------------------------------------------------------

_INTS = (exp.DataType.Type.INT, exp.DataType.Type.SMALLINT, exp.DataType.Type.BIGINT,
         exp.DataType.Type.TINYINT)  # fmt: skip
_FLOATS = (exp.DataType.Type.DOUBLE, exp.DataType.Type.FLOAT)


def _choice_values(node: exp.Expression) -> list[exp.Expression]:
    """The expressions whose values a CASE, COALESCE, GREATEST, LEAST or NULLIF gives
    (NULL constants left out: they take the others' type)."""
    if isinstance(node, exp.Case):
        values = [i.args.get("true") for i in node.args.get("ifs") or []]
        values.append(node.args.get("default"))
    elif isinstance(node, exp.Nullif):
        values = [node.this]
    else:
        values = [node.this, *node.expressions]
    return [v for v in values if v is not None and not isinstance(v, exp.Null)]


def _kind(node: exp.Expression) -> str:
    """int | decimal | float | text | date | timestamp | bool | other, as annotated
    (a numeric constant as PostgreSQL types it: with a point or exponent, numeric)."""
    while isinstance(node, exp.Paren | exp.Neg):
        node = node.this
    if isinstance(node, exp.Literal) and not node.is_string:
        text = str(node.this)
        return "decimal" if any(ch in text for ch in ".eE") or abs(int(text)) >= 2**63 else "int"
    if isinstance(node, exp.Abs):
        return _kind(node.this)
    if isinstance(node, exp.Column):
        # a derived table's (or CTE's) column has its select item's kind as PostgreSQL
        # types it (sqlglot types extract() an integer, PostgreSQL numeric)
        inner = _derived_item(node)
        kind = _kind(inner) if inner is not None else "other"
        if kind != "other":  # (an item already rewritten, a // of integers, is typed here)
            return kind
    if isinstance(node, exp.Ceil | exp.Floor) and _kind(node.this) == "decimal":
        return "decimal"  # ceil/floor(numeric) is numeric (sqlglot: double)
    if isinstance(node, exp.Round | exp.Trunc) and _kind(node.this) == "decimal":
        return "decimal"  # round/trunc(numeric[, n]) is numeric (sqlglot types it double)
    if node.meta.get("scale") is not None:
        return "decimal"  # a rounded numeric, rewritten (_at_scale)
    if isinstance(node, exp.Anonymous) and node.name.lower() == "pg_numeric_div":
        return "decimal"  # a quotient already rewritten (sqlglot typed the division double)
    if isinstance(node, exp.Avg) and _kind(node.this) in ("int", "decimal"):
        return "decimal"  # avg of integers or numerics is numeric (sqlglot: double)
    if isinstance(node, exp.Div) and node.meta.get("avg"):
        return "decimal"  # an avg computed in parts (aggregate.py)
    sides: set[str] = set()
    if isinstance(node, exp.Case | exp.Coalesce | exp.Greatest | exp.Least):
        sides = {_kind(b) for b in _choice_values(node)}
    elif isinstance(node, exp.Nullif):  # the = operator's common type (nullif(1, 2.2) is numeric)
        sides = {_kind(node.this), _kind(node.expression)}
    elif isinstance(node, exp.Add | exp.Sub | exp.Mul | exp.Div | exp.Mod):
        # sqlglot types a numeric constant (2.5) double, and arithmetic over it too
        sides = {_kind(node.this), _kind(node.expression)}
    if sides and sides <= {"int", "decimal", "float"}:
        for k in ("float", "decimal", "int"):
            if k in sides:
                return k
    t = node.type
    if t is None:
        return "other"
    if t.is_type(*_INTS):
        return "int"
    if t.is_type(exp.DataType.Type.DECIMAL):
        return "decimal"
    if t.is_type(*_FLOATS):
        return "float"
    if t.is_type(*exp.DataType.TEXT_TYPES):
        return "text"
    if t.is_type(exp.DataType.Type.DATE):
        return "date"
    if t.is_type(exp.DataType.Type.TIMESTAMP):
        return "timestamp"
    if t.is_type(exp.DataType.Type.TIMESTAMPTZ):
        return "timestamptz"  # now(): compared and shifted in the session's time zone
    if t.is_type(exp.DataType.Type.BOOLEAN):
        return "bool"
    return "other"


def _udf(name: str, *args: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=list(args))


def _cast(node: exp.Expression, to: str) -> exp.Cast:
    return exp.Cast(this=node, to=exp.DataType.build(to, dialect="duckdb"))


def _rewrite(node: exp.Expression) -> exp.Expression:
    """One node of the annotated, qualified tree, as DuckDB must compute it to answer
    what PostgreSQL answers (see the module's docstring)."""
    if isinstance(node, exp.Div) and node.meta.get("avg"):  # aggregate.py's avg parts
        return _numeric_div(node.this, node.expression, node)
    if isinstance(node, exp.Div):
        a, b = _kind(node.this), _kind(node.expression)
        if node.this.find(exp.Placeholder) or node.expression.find(exp.Placeholder):
            raise _refuse("division by a parameter (its type decides the division)", node)
        if a == "int" and b == "int":
            # truncated toward zero, in the operands' common type (INT_MIN / -1 overflows)
            return _int_typed(exp.IntDiv(this=node.this, expression=node.expression))
        if _float8(node):
            return _udf("pg_float8_div", *_doubles(node))
        if (
            "float" in (a, b)
            and a in ("int", "decimal", "float")
            and b in ("int", "decimal", "float")
        ):
            divisor = exp.Case(
                ifs=[
                    exp.If(
                        this=exp.EQ(this=node.expression.copy(), expression=exp.Literal.number(0)),
                        true=_udf("error", exp.Literal.string("division by zero")),
                    )
                ],
                default=node.expression,
            )
            return exp.Div(this=node.this, expression=divisor)
        if a in ("int", "decimal") and b in ("int", "decimal"):
            return _numeric_div(node.this, node.expression, node)
        raise _refuse(f"division of {a} by {b}", node)
    if isinstance(node, exp.Mod):
        # exact in both engines, the dividend's sign, the larger scale of the two (a
        # zero divisor raises in both); a float's is refused (PostgreSQL has none)
        if _kind(node.this) in ("int", "decimal") and _kind(node.expression) in ("int", "decimal"):
            return _int_typed(node)
        raise _refuse("modulo of other than integers and numerics", node)
    if isinstance(node, exp.Add | exp.Sub | exp.Mul):
        if _float8(node):
            op = {exp.Add: "add", exp.Sub: "sub", exp.Mul: "mul"}[type(node)]
            return _udf(f"pg_float8_{op}", *_doubles(node))
        return _int_typed(node)
    if isinstance(node, exp.Neg) and _kind(node.this) == "int" and not _constant_int(node):
        width = _int_width(node.this)
        if width is not None:  # DuckDB widens -x; PostgreSQL's -x of INT_MIN overflows
            zero = _cast(exp.Literal.number(0), _INT_DUCK_WIDTH[width])
            return exp.Sub(this=zero, expression=_cast(node.this, _INT_DUCK_WIDTH[width]))
    # (each node is rewritten once, children first: a wrapper built here is not revisited)
    if isinstance(node, exp.Window | exp.Filter) and isinstance(node.this, exp.Sum):
        # the sum's typing wraps the window or filtered sum, not the sum alone
        return _sum_typed(node.this, node)
    if isinstance(node, exp.Sum):
        if isinstance(node.parent, exp.Window | exp.Filter):
            return node  # typed with its wrapper
        return _sum_typed(node, node)
    if isinstance(node, exp.Avg) and isinstance(node.parent, exp.Window | exp.Filter):
        return node  # divided with its wrapper
    if isinstance(node, exp.Avg) and _kind(node.this) == "float":
        # PostgreSQL's float avg is its float8 sum (float8_accum: in double precision,
        # of a real too) divided by the count, in double precision
        arg = node.this
        total = exp.Add(
            this=exp.Sum(this=_cast(arg.copy(), "DOUBLE")), expression=exp.Literal.number(0.0)
        )
        quotient = exp.Div(
            this=exp.Paren(this=total), expression=_cast(exp.Count(this=arg.copy()), "DOUBLE")
        )
        # (its accumulator of squared deviations raises an overflow PostgreSQL's
        # values near the double's limit meet: such an avg is refused)
        small = exp.or_(
            exp.LTE(this=exp.Count(this=arg.copy()), expression=exp.Literal.number(1)),
            exp.LT(
                this=exp.Max(this=exp.Abs(this=_cast(arg.copy(), "DOUBLE"))),
                expression=exp.Literal.number("1e145"),
            ),
        )
        reason = exp.Literal.string(REFUSAL_MARKER + "an avg of floats near the overflow")
        guarded = exp.Case(
            ifs=[exp.If(this=exp.Not(this=exp.Paren(this=small)), true=_udf("error", reason))],
            default=quotient,
        )
        return _float_sum(_cast(arg.copy(), "DOUBLE"), guarded, node, real=False)
    if isinstance(node, exp.Avg) or (
        isinstance(node, exp.Window | exp.Filter) and isinstance(node.this, exp.Avg)
    ):
        return _numeric_div(*_avg_parts(node), node)
    if isinstance(node, exp.Nullif):
        # PostgreSQL returns the first argument promoted to the comparison's common
        # type; DuckDB keeps the first argument's own
        first, wider = _kind(node.this), _kind(node)
        if first != wider and first in ("int", "decimal"):
            node.set("this", _cast(node.this, "DOUBLE" if wider == "float" else "DECIMAL(38,0)"))
    if isinstance(node, exp.ArrayAgg):
        arg = node.this.this if isinstance(node.this, exp.Order) else node.this
        kind = _kind(arg)
        if char_length(arg) is not None:
            raise _refuse("array_agg() of char(n) (its elements are padded)", node)
        if kind == "decimal" and not (isinstance(arg, exp.Column) and _declared_scale(arg)):
            # (an element keeps its own display scale; a column's is its declared one)
            raise _refuse("array_agg() of numerics other than a numeric(p,s) column", node)
        if kind not in ("int", "decimal", "text", "date", "timestamp", "bool"):
            raise _refuse(f"array_agg() of a {kind} value", node)
    if isinstance(node, exp.Case | exp.Coalesce | exp.Greatest | exp.Least):
        _check_uniform_scale(node)
    if isinstance(node, exp.SetOperation):
        _check_set_operation_scales(node)
    text_functions = (exp.Left, exp.Right, exp.Pad, exp.Replace, exp.SplitPart, exp.Repeat,
                      exp.Trim, exp.StartsWith, exp.MD5)  # fmt: skip
    if isinstance(node, text_functions) and _kind(node.this) != "text":
        raise _refuse(f"{_construct_name(node)} of a non-text value", node)
    if isinstance(node, exp.Anonymous) and node.name.lower() == "age":
        return _age(node)
    if isinstance(node, exp.Interval) and node.unit is not None:
        # INTERVAL '1' MON is how sqlglot writes PostgreSQL's '1 mon', a unit DuckDB's
        # syntax lacks and its interval input reads
        text = exp.Literal.string(f"{node.this.name} {node.unit.name}")
        return _cast(text, "INTERVAL")
    if isinstance(node, exp.Anonymous) and node.name.lower() == "to_char":
        return _to_char(node)
    if isinstance(node, exp.Anonymous) and node.name.lower() in _ANONYMOUS:
        args = node.expressions
        if len(args) != 1 or _kind(args[0]) != "text" or char_length(args[0]) is not None:
            # (char(n) arrives unpadded; PostgreSQL counts its padding's bytes)
            raise _refuse(f"{node.name.lower()}() of other than one text value", node)
        return _cast(_udf(_ANONYMOUS[node.name.lower()], args[0]), "INTEGER")
    if isinstance(node, exp.Concat):
        for arg in node.expressions:
            if _kind(arg) not in ("text", "int") and not isinstance(arg, exp.Null):
                raise _refuse("concat() of other than text or integers", node)
    if isinstance(node, exp.Lower | exp.Upper):
        return _udf("pg_" + type(node).__name__.lower(), node.this)
    if isinstance(node, exp.RegexpLike):  # a portable one (_literal_regexes)
        if _kind(node.this) != "text":
            raise _refuse("~ of a non-text value", node)
        # 's': '.' matches a newline too, as in PostgreSQL's default (not newline-
        # sensitive) mode
        return _udf("regexp_matches", node.this, node.expression, exp.Literal.string("s"))
    if isinstance(node, exp.Reverse):
        if _kind(node.this) != "text":
            raise _refuse("reverse() of a non-text value", node)
        return _udf("pg_reverse", node.this)  # code points (DuckDB's: graphemes)
    if isinstance(node, exp.Sign | exp.Ceil | exp.Floor):
        kind = _kind(node.this)
        if len([a for a in node.args.values() if a is not None]) != 1:
            raise _refuse(f"{_construct_name(node)} with more than one argument", node)
        # PostgreSQL: sign/ceil/floor of a numeric are numeric (scale 0), of an integer
        # or a double precision double precision (DuckDB keeps an integer's type).
        # DuckDB's ceil/floor of a DECIMAL(p,s) are DECIMAL(p,0) already; its sign a
        # TINYINT.  (Not DECIMAL(38,0): beside a scaled value in a choice, no digit would
        # be left for its fraction.)
        if kind == "decimal":
            return _cast(node, "DECIMAL(1,0)") if isinstance(node, exp.Sign) else node
        if kind in ("int", "float"):
            return _cast(node, "DOUBLE")
        raise _refuse(f"{_construct_name(node)} of a non-number", node)
    if isinstance(node, exp.Like | exp.ILike):
        n = char_length(node.this)
        if n is not None:  # char(n) LIKE matches the padded value, as PostgreSQL does
            pad = (exp.Literal.number(n), exp.Literal.string(" "))
            node.set("this", _udf("rpad", node.this, *pad))
    if isinstance(node, exp.ILike):
        return exp.Like(  # NOT ILIKE's negation kept (it is an argument, not a node)
            this=_udf("pg_lower", node.this),
            expression=_udf("pg_lower", node.expression),
            negate=node.args.get("negate"),
        )
    if isinstance(node, exp.Substring):
        args = [node.this, node.args.get("start") or exp.Literal.number(1)]
        if node.args.get("length") is not None:
            args.append(node.args["length"])
        return _udf(f"pg_substr{len(args)}", *args)
    if isinstance(node, exp.Extract):
        field = node.this.name.upper()
        if _kind(node.expression) not in ("date", "timestamp"):
            raise _refuse("extract of other than a date or timestamp", node)
        if field in ("HOUR", "MINUTE", "SECOND") and _kind(node.expression) == "date":
            raise pg_errors.FeatureNotSupported(  # as PostgreSQL raises it
                f'unit "{field.lower()}" not supported for type date'
            )
        if field in ("EPOCH", "SECOND"):
            return _micro_field(field, node)
        part = exp.Anonymous(
            this="date_part", expressions=[exp.Literal.string(field.lower()), node.expression]
        )
        if node.meta.get("pg_function") == "date_part":
            return _cast(part, "DOUBLE")
        return _cast(part, "DECIMAL(18,0)")
    if isinstance(node, exp.TimestampTrunc):
        if _kind(node.this) == "date":
            # PostgreSQL's date_trunc(unit, date) is the timestamptz one, of the date's
            # midnight in the session's time zone: so computed in the engine, its time
            # zone set to the session's (see finish)
            local = _cast(_cast(node.this, "TIMESTAMP"), "TIMESTAMPTZ")
            return exp.TimestampTrunc(this=local, unit=node.args["unit"])
        if _kind(node.this) != "timestamp":
            raise _refuse("date_trunc of other than a date or timestamp", node)
        return node
    if isinstance(node, exp.Round | exp.Trunc):
        digits = node.args.get("decimals")
        name = "round" if isinstance(node, exp.Round) else "trunc"
        if _kind(node.this) == "float" and digits is None:
            # round: half to even, as rint() (DuckDB's: away); trunc: the same in both
            return _udf("pg_rint", node.this) if name == "round" else node
        if _kind(node.this) != "decimal":
            raise _refuse(f"{name} of other than a numeric", node)
        if digits is not None and not _constant_int(digits):
            raise _refuse(f"{name} to other than a constant scale", node)
        # half away from zero (round), toward zero (trunc), a negative scale to tens,
        # hundreds...: the same in both engines.  PostgreSQL's result has the scale
        # asked for, DuckDB's keeps a smaller one of its argument
        scale = 0 if digits is None else int(digits.sql())
        return _at_scale(node, scale) if scale > 0 else node
    if isinstance(node, exp.DPipe):
        kinds = [_kind(node.this), _kind(node.expression)]
        for key, other in (("this", kinds[1]), ("expression", kinds[0])):
            if isinstance(node.args[key], exp.Placeholder) and other == "text":
                # a parameter beside text is text, its value printed as PostgreSQL
                # prints it ('%%' || %s || '%%': a LIKE pattern built around a value)
                node.set(key, _cast(node.args[key], "VARCHAR"))
                kinds = ["text", "text"]
        if "text" not in kinds or any(k not in ("text", "int") for k in kinds):
            raise _refuse("|| of other than text and integers", node)
        for key, kind in zip(("this", "expression"), kinds, strict=True):
            if kind == "int":  # text || 5 is text || '5' (integers print alike in both)
                node.set(key, _cast(node.args[key], "VARCHAR"))
        return node
    if isinstance(node, exp.Cast):
        return _check_cast(node)
    if isinstance(node, exp.Literal) and not node.is_string and "e" in node.name.lower():
        return _exponent_literal(node)
    if isinstance(node, exp.Abs) and _kind(node.this) not in ("int", "decimal", "float"):
        raise _refuse("abs of a non-number", node)
    if isinstance(node, exp.Length | exp.StrPosition):
        if _kind(node.this) != "text":
            raise _refuse(f"{node.sql_name().lower()} of a non-text value", node)
        return _cast(node, "INTEGER")  # PostgreSQL's are integer, DuckDB's bigint
    return node


def _exponent_literal(node: exp.Literal) -> exp.Expression:
    """A numeric constant written with an exponent (``1e30``, ``2.5E-3``): numeric in
    PostgreSQL, with the display scale its digits and exponent give; DuckDB reads it as
    a double."""
    parent = node.parent
    while isinstance(parent, exp.Paren | exp.Neg):
        parent = parent.parent
    if isinstance(parent, exp.Binary) and "float" in (_kind(parent.this), _kind(parent.expression)):
        return node  # beside a double precision it is one (the same double in both)
    value = Decimal(node.name)
    exponent = value.as_tuple().exponent
    assert isinstance(exponent, int)
    scale = max(0, -exponent)
    digits = max(value.adjusted() + 1, 0) + scale
    if digits > 38:
        raise _refuse("a numeric constant of more than 38 digits", node)
    plain = exp.Literal.string(format(value, "f"))
    return _cast(plain, f"DECIMAL({max(digits, 1)},{scale})")


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
    scaled = exp.Case(ifs=[exp.If(this=lost, true=_udf("error", message))], default=_cast(node, to))
    scaled.meta["scale"] = scale  # (a numeric of this scale: _kind, _scale)
    return scaled


_ISO_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}( \d{2}:\d{2}:\d{2}(\.\d{1,6})?)?")
_MONTH_UNITS = ("MON", "YEAR", "DECADE", "CENTUR", "MILLEN")


_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)


def _interval_compared(node: exp.Interval) -> bool:
    """An interval constant compared with an interval (age(), a difference of
    timestamps), of one sign throughout: DuckDB compares intervals as PostgreSQL does
    (months of 30 days, days of 24 hours) where each one's parts share a sign."""
    parent = node.parent
    if not isinstance(parent, _COMPARISONS) or "-" in node.this.name:
        return False
    other = parent.expression if parent.this is node else parent.this
    return _is_interval(other) and not isinstance(other, exp.Interval)


def _has_months(node: exp.Interval) -> bool:
    """Whether an interval constant has a month or year part."""
    text = f"{node.this.name} {node.unit.name if node.unit is not None else ''}".upper()
    return any(unit in text for unit in _MONTH_UNITS)


def _age(node: exp.Anonymous) -> exp.Expression:
    """``age(a, b)`` of timestamps (a string constant in ISO form read as one): DuckDB's
    age() subtracts field by field, borrowing from the month before as PostgreSQL's does
    (checked against it); ``age(b)`` was made ``age(CURRENT_DATE::timestamp, b)``
    before (:func:`_age_of_today`).  Of a date PostgreSQL's age is the timestamptz one,
    in the session's time zone: refused."""
    args = node.expressions
    if len(args) != 2:
        raise _refuse("age() with other than two arguments", node)
    typed = []
    for arg in args:
        if isinstance(arg, exp.Literal) and arg.is_string:
            text = arg.name
            if not _ISO_TIMESTAMP.fullmatch(text):
                raise _refuse("age() of a string other than an ISO timestamp", node)
            try:
                dt.datetime.fromisoformat(text)
            except ValueError:
                raise _refuse("age() of a string other than an ISO timestamp", node) from None
            typed.append(_cast(arg, "TIMESTAMP"))
        elif _kind(arg) == "timestamp":
            typed.append(arg)
        else:
            raise _refuse(f"age() of a {_kind(arg)} value", node)
    return exp.Anonymous(this="age", expressions=typed)


def _age_of_today(stmt: exp.Expression) -> tuple[exp.Expression, bool]:
    """``age(x)``: PostgreSQL's ``age(CURRENT_DATE::timestamp, x)`` (the server's date,
    read as clock.py reads it); whether there was one."""
    found = False

    def swap(node: exp.Expression) -> exp.Expression:
        nonlocal found
        if (
            isinstance(node, exp.Anonymous)
            and node.name.lower() == "age"
            and len(node.expressions) == 1
        ):
            found = True
            today = exp.Cast(this=exp.CurrentDate(), to=exp.DataType.build("TIMESTAMP"))
            return exp.Anonymous(this="age", expressions=[today, node.expressions[0]])
        return node

    return stmt.transform(swap), found


def _is_interval(node: exp.Expression) -> bool:
    """Whether PostgreSQL types ``node`` interval: age(), an interval constant, a
    difference of timestamps, a sum or difference of intervals."""
    while isinstance(node, exp.Paren | exp.Neg):
        node = node.this
    if isinstance(node, exp.Anonymous) and node.name.lower() == "age":
        return True
    if isinstance(node, exp.Interval) or (
        isinstance(node, exp.Cast) and node.to.is_type(exp.DataType.Type.INTERVAL)
    ):
        return True
    if isinstance(node, exp.Sub) and _kind(node.this) == _kind(node.expression) == "timestamp":
        return True
    if isinstance(node, exp.Add | exp.Sub):
        return _is_interval(node.this) and _is_interval(node.expression)
    return False


def _has_age(node: exp.Expression) -> bool:
    return any(isinstance(n, exp.Anonymous) and n.name.lower() == "age" for n in node.walk())


def interval_outputs(tree: exp.Expression) -> set[int]:
    """The outermost SELECT's items that are intervals with months (of age()): each
    converted by ``pg_interval_out`` to what psycopg loads (engine.py).  Ordered by,
    or made DISTINCT, such an output would be compared converted: refused."""
    if not isinstance(tree, exp.Select):
        return set()
    out: set[int] = set()
    names: set[str] = set()
    for i, item in enumerate(tree.expressions):
        node = item.unalias()
        if _is_interval(node) and _has_age(node):
            out.add(i)
            if isinstance(item, exp.Alias):
                names.add(item.alias)
    if not out:
        return out
    if tree.args.get("distinct") is not None:
        raise _refuse("DISTINCT over an interval of age()", tree)
    order = tree.args.get("order")
    for o in order.expressions if order is not None else []:
        key = o.this
        position = _position(key)
        if (
            _has_age(key)
            or (isinstance(key, exp.Column) and not key.table and key.name in names)
            or (position is not None and position - 1 in out)
        ):
            raise _refuse("ORDER BY an interval of age()", o)
    for i in out:
        item = tree.expressions[i]
        node = item.unalias()
        wrapped = _udf("pg_interval_out", node.copy())
        if isinstance(item, exp.Alias):
            item.set("this", wrapped)
        else:
            # (the output keeps the name PostgreSQL gives it: output_names reads the
            # original statement)
            tree.expressions[i].replace(wrapped)
    return out


def _avg_parts(node: exp.Expression) -> tuple[exp.Expression, exp.Expression]:
    """``avg(x)``, ``avg(x) FILTER (...)`` or ``avg(x) OVER (...)`` as the sum and the
    count of x, wrapped alike: PostgreSQL's avg is their numeric quotient."""
    avg = node.this if isinstance(node, exp.Window | exp.Filter) else node
    arg = avg.this
    if isinstance(arg, exp.Distinct) or _kind(arg) not in ("int", "decimal"):
        raise _refuse("avg of other than integers or numerics", avg)
    parts: list[exp.Expression] = []
    for agg in (exp.Sum(this=arg.copy()), exp.Count(this=arg.copy())):
        if node is avg:
            parts.append(agg)
        else:
            wrapped = node.copy()
            wrapped.set("this", agg)
            parts.append(wrapped)
    return parts[0], parts[1]


def _scale(node: exp.Expression) -> int | None:
    """The scale PostgreSQL gives a numeric or integer value of ``node``, where the type
    alone decides it (None: it does not, or it is not known)."""
    k = _kind(node)
    if k == "int":
        return 0
    if k != "decimal":
        return None
    while isinstance(node, exp.Paren | exp.Neg):
        node = node.this
    if isinstance(node, exp.Literal):
        text = str(node.this)
        return None if "e" in text.lower() else len(text.partition(".")[2])
    if isinstance(node, exp.Ceil | exp.Floor | exp.Sign):  # of a numeric: scale 0
        return 0
    if node.meta.get("scale") is not None:  # rewritten by _at_scale
        return int(node.meta["scale"])
    if isinstance(node, exp.Round | exp.Trunc):  # round(numeric, n) has scale n exactly
        digits = node.args.get("decimals")
        if digits is None:
            return 0
        return int(digits.this) if isinstance(digits, exp.Literal) and digits.is_int else None
    params = node.type.expressions if node.type is not None else []
    if len(params) == 2:
        return int(params[1].name)
    return None


def _check_uniform_scale(node: exp.Expression) -> None:
    """CASE / COALESCE / GREATEST / LEAST over numerics of different scales: PostgreSQL
    keeps each value's own scale (``CASE WHEN c THEN 1.50 ELSE 0 END`` prints ``1.50`` or
    ``0``), DuckDB gives every row the widest.  Refused rather than answered differently."""
    values = _choice_values(node)
    kinds = {_kind(b) for b in values}
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
    scales = {_scale(b) for b in values}
    if len(scales) > 1 or None in scales:
        raise _refuse("a choice between numerics of different scales", node)


def _branch_selects(node: exp.Expression) -> list[exp.Select]:
    while isinstance(node, exp.Subquery):
        node = node.this
    if isinstance(node, exp.SetOperation):
        return _branch_selects(node.this) + _branch_selects(node.expression)
    return [node] if isinstance(node, exp.Select) else []


def _check_set_operation_scales(node: exp.SetOperation) -> None:
    """A set operation's column of integers and numerics, or of numerics of different
    scales: PostgreSQL keeps each value's own scale (``SELECT 5 UNION SELECT 1.50``
    prints ``5`` and ``1.50``), DuckDB gives every row the widest.  Refused rather than
    answered differently, unless only compared (IN, EXISTS, ...)."""
    parent = node.parent
    while parent is not None:
        if isinstance(parent, exp.Predicate):
            return
        parent = parent.parent
    selects = _branch_selects(node)
    for column in zip(*(s.expressions for s in selects), strict=False):
        values = [e.unalias() for e in column if not isinstance(e.unalias(), exp.Null)]
        kinds = {_kind(v) for v in values}
        if "decimal" not in kinds or not kinds <= {"int", "decimal"}:
            continue
        scales = {_scale(v) for v in values}
        if len(scales) > 1 or None in scales:
            raise _refuse("a set operation's column of numerics of different scales", node)


def _rewrite_bottom_up(tree: exp.Expression) -> exp.Expression:
    """:func:`_rewrite` on every node, children before their parent, so that a rewritten
    node's arguments are rewritten too (``length(lower(x))``: both PostgreSQL's).  A
    replacement keeps the replaced node's type, which the parent's rewrite reads."""
    for node in reversed(list(tree.dfs())):
        assert isinstance(node, exp.Expression)
        # where it hangs, taken before the rewrite (a wrapper built around the node
        # becomes its parent)
        parent, arg_key, index = node.parent, node.arg_key, node.index
        new = _rewrite(node)
        if new is node:
            continue
        if new.type is None or new.type.is_type(exp.DataType.Type.UNKNOWN):
            new.type = node.type
        if node is tree:
            tree = new
        elif parent is not None and arg_key is not None:
            parent.set(arg_key, new, index)
    return tree


# the real columns of the statement being transpiled, as (table alias, column): sqlglot
# types both float types double
_REALS: ContextVar[frozenset[tuple[str, str]]] = ContextVar("_REALS", default=frozenset())


def _real_sum(arg: exp.Expression, node: exp.Expression) -> bool:
    """Whether PostgreSQL sums ``arg`` as a real (a real column, a cast to real, their
    negation or abs): False for a double precision value; a float expression reading a
    real column otherwise is refused (its type is not known here)."""
    reals = _REALS.get()
    if _real_valued(arg, reals):
        return True
    if any((c.table, c.name) in reals for c in arg.find_all(exp.Column)):
        raise _refuse("a float aggregate of an expression over a real column", node)
    return False


# set while transpiling a value the client only compares (a scalar subquery's value that
# bounds a fetch): its display scale does not matter
_VALUES_ONLY: ContextVar[bool] = ContextVar("_VALUES_ONLY", default=False)


def _value_only(node: exp.Expression, depth: int = 0) -> bool:
    """Whether only ``node``'s value matters, not its display scale: it is compared,
    ordered by, or rounded / cast to a scale of its own before anything prints it -- or
    it is a CTE's or derived table's column that every reference uses so."""
    if _VALUES_ONLY.get():
        return True
    parent = node.parent
    child: Any = node
    while parent is not None:
        if isinstance(parent, exp.Predicate | exp.Ordered | exp.Round | exp.Trunc):
            return True
        if isinstance(parent, exp.Cast) and (
            parent.to.this in _INTS or (parent.to.is_type(exp.DataType.Type.DECIMAL)
                                        and len(parent.to.expressions) == 2)
        ):  # fmt: skip
            return True
        if isinstance(parent, exp.Select) and isinstance(child, exp.Alias) and depth < 4:
            refs = _references(parent, child.alias)
            if refs is not None:  # a CTE's or derived table's column: how it is read
                return all(_value_only(r, depth + 1) for r in refs)
        child, parent = parent, parent.parent
    return False


def _references(select: exp.Select, name: str) -> list[exp.Column] | None:
    """The columns that read output ``name`` of ``select`` where it is a CTE's or a
    derived table's body (None where it is anything else, or a ``*`` reads it)."""
    holder = select.parent
    if isinstance(holder, exp.CTE):
        cte_name = holder.alias_or_name
        scope: Any = holder.parent.parent if holder.parent else None
        if scope is None:
            return None
        tables = [
            t for t in scope.find_all(exp.Table) if t.name == cte_name and not t.args.get("db")
        ]
        aliases = {t.alias_or_name for t in tables}
    elif isinstance(holder, exp.Subquery) and holder.alias_or_name:
        scope = holder.parent.parent if holder.parent else None
        if scope is None:
            return None
        aliases = {holder.alias_or_name}
    else:
        return None
    for sel in scope.find_all(exp.Select):
        for item in sel.expressions:
            if _is_star(item) and (
                not isinstance(item, exp.Column) or not item.table or item.table in aliases
            ):
                return None  # (read whole: printed)
    return [
        c
        for c in scope.find_all(exp.Column)
        if c.table in aliases and c.name == name and c.find_ancestor(exp.CTE) is not holder
    ]


def _numeric_div(a: exp.Expression, b: exp.Expression, at: exp.Expression) -> exp.Expression:
    """PostgreSQL's numeric division, exact (:func:`engine.pg_quotient`), for quotients
    used inside the statement; an output that is a quotient is divided on the client
    (:func:`quotient_outputs`).  A quotient otherwise reaching the output (``x + a / b``,
    ``sum(a / b)``) would have another display scale than PostgreSQL's: refused."""
    if not _value_only(at):
        raise _refuse("a numeric quotient inside an output expression", at)
    return _udf("pg_numeric_div", _cast(a, "VARCHAR"), _cast(b, "VARCHAR"))


def _sum_typed(agg: exp.Sum, node: exp.Expression) -> exp.Expression:
    """``node`` (a sum, or a window of one) typed as PostgreSQL types the sum."""
    arg = agg.this.expressions[0] if isinstance(agg.this, exp.Distinct) else agg.this
    k = _kind(arg)
    if k == "int":
        return _cast(node, "DECIMAL(38,0)" if _bigint(arg) else "BIGINT")
    if k == "decimal":
        return node
    if (
        k == "float"
        and (node is agg or isinstance(node, exp.Filter))
        and not isinstance(agg.this, exp.Distinct)
    ):
        where = node.expression if isinstance(node, exp.Filter) else None
        return _float_sum(arg, _float_typed_sum(node, arg, agg), agg, where=where)
    raise _refuse(f"sum over {k} values", node)


# float sums: mantissa bits and largest finite value of real and double precision
_FLOAT_FORMATS = {"FLOAT": (24, 3.4028234663852886e38), "DOUBLE": (53, 1.7976931348623157e308)}


def _float_sum(
    arg: exp.Expression,
    total: exp.Expression,
    node: exp.Expression,
    real: bool | None = None,
    where: exp.Expression | None = None,
) -> exp.Expression:
    """``total`` (the sum of ``arg``, or a value computed from it) where the sum does not
    depend on the order of addition, else a refusal at run time.

    PostgreSQL adds a float sum's values one by one in the order its plan feeds them
    (float8pl / float4pl, and float8_accum for avg), each addition rounded: the last
    bits of the result depend on that order, which the client does not know (its rows
    come from another statement's plan, and the client engine adds in parallel).  The
    client does not guess: it answers only when every order gives the same sum, which it
    checks exactly -- all values finite, each an integer multiple of 2**e (e the lowest
    set bit's exponent among them), and the sum of their magnitudes below 2**(p+e) (p the
    type's mantissa bits) and below the type's largest value.  Then every partial sum,
    in any order, is a multiple of 2**e below 2**(p+e), held exactly: the sum is the
    exact one, whatever the order (sums of integers, of halves, of cents stored as
    whole numbers).  Otherwise (0.1 + 0.2 + 0.3, whose order changes the last bit) it is
    refused, never answered with other last bits."""
    if real is None:  # (an avg accumulates in double precision, a real's too)
        real = _real_sum(arg, node)
    bits, largest = _FLOAT_FORMATS["FLOAT" if real else "DOUBLE"]
    x = _cast(arg.copy(), "DOUBLE")

    def filtered(aggregate: exp.Expression) -> exp.Expression:  # (sum(x) FILTER (...))
        return aggregate if where is None else exp.Filter(this=aggregate, expression=where.copy())

    magnitude = filtered(exp.Sum(this=exp.Abs(this=x.copy())))
    low = filtered(exp.Min(this=_udf("pg_float_low_exponent", x.copy())))
    bound = _udf(
        "pow",
        exp.Literal.number(2.0),
        exp.Add(
            this=exp.Literal.number(bits),
            expression=exp.Coalesce(this=low, expressions=[exp.Literal.number(0)]),
        ),
    )
    exact = exp.or_(
        exp.EQ(this=filtered(exp.Count(this=x.copy())), expression=exp.Literal.number(0)),
        exp.and_(
            filtered(_udf("bool_and", _udf("isfinite", x.copy()))),
            exp.LT(this=magnitude.copy(), expression=bound),
            exp.LTE(this=magnitude, expression=exp.Literal.number(largest)),
        ),
    )
    reason = "a float sum whose last bits depend on the order of addition"
    message = exp.Literal.string(REFUSAL_MARKER + reason)
    refused = exp.Not(this=exp.Paren(this=exact))
    return exp.Case(ifs=[exp.If(this=refused, true=_udf("error", message))], default=total)


def _float_typed_sum(total: exp.Expression, arg: exp.Expression, agg: exp.Sum) -> exp.Expression:
    """The sum of a real or double precision ``arg`` in its type (DuckDB sums a real as
    a double), plus 0.0 as PostgreSQL's sum starts from 0.0 (a sum of -0.0 is 0)."""
    real = _real_sum(arg, agg)
    return _cast(
        exp.Add(this=total, expression=exp.Literal.number(0.0)), "FLOAT" if real else "DOUBLE"
    )


def _bigint(node: exp.Expression) -> bool:
    """Whether PostgreSQL types an integer expression bigint: integer arithmetic stays
    integer unless a side is bigint (sqlglot types a quotient of integers bigint), and a
    derived table's column is its select item."""
    while isinstance(node, exp.Paren | exp.Neg | exp.Abs):
        node = node.this
    if isinstance(node, exp.Column):
        inner = _derived_item(node)
        if inner is not None:
            return _bigint(inner)
    if isinstance(node, exp.Add | exp.Sub | exp.Mul | exp.Div | exp.IntDiv | exp.Mod):
        return _bigint(node.this) or _bigint(node.expression)
    if isinstance(node, exp.Literal) and not node.is_string:
        return abs(int(str(node.this))) >= 2**31
    return node.type is not None and node.type.is_type(exp.DataType.Type.BIGINT)


# PostgreSQL's integer types by width in bytes, as the client engine names them
_INT_DUCK_WIDTH = {2: "SMALLINT", 4: "INTEGER", 8: "BIGINT"}
_TYPE_WIDTH = {
    exp.DataType.Type.SMALLINT: 2,
    exp.DataType.Type.TINYINT: 2,
    exp.DataType.Type.INT: 4,
    exp.DataType.Type.BIGINT: 8,
}
_INT_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.IntDiv, exp.Mod)
# integer-valued functions and aggregates whose type PostgreSQL fixes: bigint, integer
_BIGINT_VALUED = (exp.Count, exp.RowNumber, exp.Rank, exp.DenseRank, exp.Ntile)
_INTEGER_VALUED = (exp.Length, exp.StrPosition)


def _int_width(node: exp.Expression) -> int | None:
    """The width (2, 4, 8) of the integer type PostgreSQL gives the integer-valued
    ``node``, or None where it is not known here (a parameter: its value's type).

    A constant is integer if it fits, else bigint; a negative constant is one constant
    (``-2147483648`` is an integer); arithmetic is in the wider operand's type;
    ``count``, ``row_number``, ``rank`` are bigint; sums were cast to bigint already
    (:func:`_sum_typed`); min/max/abs keep their argument's type."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Neg):
        inner = node.this
        while isinstance(inner, exp.Paren):
            inner = inner.this
        if isinstance(inner, exp.Literal) and not inner.is_string:
            text = str(inner.this)
            return (4 if int(text) <= 2**31 else 8) if text.isdigit() else None
        return _int_width(inner)
    if isinstance(node, exp.Literal) and not node.is_string:
        text = str(node.this)
        return (4 if int(text) < 2**31 else 8) if text.isdigit() else None
    if isinstance(node, exp.Cast):
        return _TYPE_WIDTH.get(node.to.this)
    if isinstance(node, _INT_ARITHMETIC):
        a, b = _int_width(node.this), _int_width(node.expression)
        return None if a is None or b is None else max(a, b)
    if isinstance(node, exp.Abs | exp.Min | exp.Max):
        return _int_width(node.this)
    if isinstance(node, exp.Window):
        return _int_width(node.this)
    if isinstance(node, _BIGINT_VALUED):
        return 8
    if isinstance(node, _INTEGER_VALUED):
        return 4
    if isinstance(node, exp.Column):
        inner = _derived_item(node)
        if inner is not None:
            return _int_width(inner)
        return _TYPE_WIDTH.get(node.type.this) if node.type is not None else None
    return None


def _int_typed(node: exp.Expression) -> exp.Expression:
    """Integer arithmetic computed in the type PostgreSQL gives it: both operands cast
    to the wider one's type, so that the client engine raises where PostgreSQL raises
    "integer out of range" (DuckDB widens ``int + constant`` to bigint, and ``int *
    int`` past int4 would be answered, not refused).  Other arithmetic as it is."""
    if _kind(node.this) != "int" or _kind(node.expression) != "int":
        return node
    width = _int_width(node)
    if width is None:
        return node
    for key in ("this", "expression"):
        node.set(key, _cast(node.args[key], _INT_DUCK_WIDTH[width]))
    return node


def _float8(node: exp.Expression) -> bool:
    """Arithmetic PostgreSQL computes in double precision: a float8 operand, the other
    a number (a real beside a real, or beside an integer, stays real: not here)."""
    kinds = (_kind(node.this), _kind(node.expression))
    if "float" not in kinds or not all(k in ("int", "decimal", "float") for k in kinds):
        return False
    return not any(
        k == "float" and side.type is not None and side.type.is_type(exp.DataType.Type.FLOAT)
        for k, side in zip(kinds, (node.this, node.expression), strict=True)
    )


def _doubles(node: exp.Expression) -> tuple[exp.Expression, exp.Expression]:
    return _cast(node.this, "DOUBLE"), _cast(node.expression, "DOUBLE")


def _constant_int(node: exp.Expression) -> bool:
    """An integer constant, negative or not."""
    if isinstance(node, exp.Neg):
        node = node.this
    return isinstance(node, exp.Literal) and not node.is_string and str(node.this).isdigit()


def _declared_scale(column: exp.Column) -> bool:
    """Is the column's type numeric with a declared scale (numeric(p,s))?"""
    t = column.type
    return t is not None and t.is_type(exp.DataType.Type.DECIMAL) and len(t.expressions) == 2


def _varchar_length(to: exp.DataType) -> int | None:
    """n of varchar(n), a positive constant."""
    if len(to.expressions) != 1:
        return None
    try:
        n = int(to.expressions[0].name)
    except ValueError:
        return None
    return n if n > 0 else None


def _micro_field(field: str, node: exp.Extract) -> exp.Expression:
    """extract(epoch | second ...): PostgreSQL's numeric, exact to the microsecond (scale
    6; an epoch of a date: scale 0), or date_part()'s double precision of it."""
    value = node.expression
    if _kind(value) == "date":  # (epoch only: a second of a date is refused before)
        seconds = exp.IntDiv(
            this=_udf("epoch_us", _cast(value, "TIMESTAMP")), expression=exp.Literal.number(10**6)
        )
        micros: exp.Expression | None = None
    else:
        micros = _udf("epoch_us" if field == "EPOCH" else "microsecond", value)
    if node.meta.get("pg_function") == "date_part":
        if micros is None:
            return _cast(seconds, "DOUBLE")
        return exp.Div(this=_cast(micros, "DOUBLE"), expression=exp.Literal.number("1e6"))
    if micros is None:
        return _cast(seconds, "DECIMAL(38,0)")
    return exp.Mul(
        this=_cast(micros, "DECIMAL(38,0)"),
        expression=_cast(exp.Literal.number("0.000001"), "DECIMAL(7,6)"),
    )


def _to_char(node: exp.Anonymous) -> exp.Expression:
    """to_char(date | timestamp, 'constant format') by the client engine, as PostgreSQL
    formats it; other arguments, and formats with patterns not reproduced, refused."""
    from .to_char import compile_format

    args = node.expressions
    if len(args) != 2 or _kind(args[0]) not in ("date", "timestamp"):
        raise _refuse("to_char() of other than a date or timestamp", node)
    fmt = args[1]
    if not (isinstance(fmt, exp.Literal) and fmt.is_string):
        raise _refuse("to_char() with other than a constant format", node)
    if compile_format(str(fmt.this)) is None:
        raise _refuse("to_char() format pattern", node)
    return _udf("pg_to_char", _cast(args[0], "TIMESTAMP"), fmt)


def _clock_cast(node: exp.Cast) -> bool:
    """A clock value's parameter, typed (clock.clock_parameters): named so until
    to_duckdb numbers the parameters; the only cast of a parameter to timestamptz."""
    return is_clock_cast(node) or (
        isinstance(node.this, exp.Placeholder) and node.to.is_type(exp.DataType.Type.TIMESTAMPTZ)
    )


def _check_cast(node: exp.Cast) -> exp.Expression:
    if _clock_cast(node):
        return node
    src = _kind(node.this)
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
        width = _TYPE_WIDTH.get(to.this)
        if width is not None:
            value = _udf("pg_int_in", node.this, exp.Literal.number(width))
            return _cast(value, _INT_DUCK_WIDTH[width])
        if to.this is T.DOUBLE:
            return _cast(_udf("pg_float8_text", node.this), "DOUBLE")
    ok = {
        # numeric to integer rounds half away from zero in both engines, double
        # precision half to even (rint) in both
        T.INT: ("int", "decimal", "float"),
        T.BIGINT: ("int", "decimal", "float"),
        T.SMALLINT: ("int", "decimal", "float"),
        T.DECIMAL: ("int", "decimal"),
        T.TEXT: ("text", "int", "date"),
        T.VARCHAR: ("text", "int", "date"),
        T.DATE: ("date", "timestamp"),
        T.TIMESTAMP: ("date", "timestamp"),
        T.DOUBLE: ("int", "float"),
        T.BOOLEAN: ("bool",),
    }[to.this]
    if node.meta.get("numeric_out"):  # an output converted on the client (numeric_outputs)
        return _cast(node.this, "VARCHAR") if src == "text" else node.this
    if not literal and src not in ok and not isinstance(node.this, exp.Null):
        raise _refuse(f"cast of a {src} value to {to.sql('postgres')}", node)
    if to.this is T.DECIMAL and not to.expressions and not literal:
        # numeric without a precision keeps every value as it is: an integer's at scale
        # 0 (38 digits hold any bigint), a numeric's unchanged
        if src == "int":
            return _cast(node.this, "DECIMAL(38,0)")
        if src == "decimal":
            return node.this
    if to.this is T.DECIMAL:
        params = to.expressions
        if not params or int(params[0].name) > 38:
            raise _refuse("cast to numeric without a precision of at most 38", node)
    n = _varchar_length(to) if to.this is T.VARCHAR else None
    source: exp.Expression = node.this
    if src == "date" and to.this in (T.TEXT, T.VARCHAR):
        # printed in the session's DateStyle (set on the engine by finish), not ISO
        source = _udf("pg_date_text", node.this, _udf("getvariable", exp.Literal.string(DATESTYLE)))
        if n is None:
            return source
    if n is not None:
        # an explicit cast to varchar(n) keeps the first n characters (DuckDB's
        # VARCHAR has no length); code points, as PostgreSQL counts them
        unsized = _cast(source, "VARCHAR")
        return _udf("pg_substr3", unsized, exp.Literal.number(1), exp.Literal.number(n))
    return node


# the engine variable holding the session's DateStyle while a statement runs
DATESTYLE = "pg_datestyle"


def _bytea_value(text: str) -> bytes:
    return bytes(encoding_for("bytea").coerce(text))


def _unpadded(text: str) -> str:
    return text.rstrip(" ")


# How a string compared with a column of each type is read, as PostgreSQL reads it: its
# value (a parameter's, when bound) and the node a literal becomes.  bytea: the input
# function's reading (hex or escape format), not the engine's; char(n): without trailing
# spaces, which a bpchar comparison ignores.
_STRING_READERS: dict[DType, tuple[Callable[[str], Any], Callable[[Any], exp.Expression]]] = {
    exp.DataType.Type.VARBINARY: (
        _bytea_value,
        lambda b: exp.Anonymous(this="from_hex", expressions=[exp.Literal.string(b.hex())]),
    ),
    exp.DataType.Type.CHAR: (_unpadded, exp.Literal.string),
    # (PostgreSQL's boolean spellings: 'of', '   f  ', 'yes', '1', ...)
    exp.DataType.Type.BOOLEAN: (
        lambda text: encoding_for("boolean").coerce(text),
        lambda b: exp.Boolean(this=b),
    ),
}


def _typed_strings(tree: exp.Expression) -> None:
    """Each string literal or parameter compared with a bytea or char(n) column read as
    PostgreSQL reads it there (``_STRING_READERS``), not as the client engine would."""

    def reading(node: exp.Expression) -> DType | None:
        typed = _unparen(node).type
        return typed.this if typed is not None and typed.this in _STRING_READERS else None

    def read(node: exp.Expression, kind: DType) -> None:
        inner = _unparen(node)
        if isinstance(inner, exp.Placeholder):
            inner.meta["read_as"] = kind  # (its value read so when bound: to_duckdb)
        elif isinstance(inner, exp.Literal) and inner.is_string:
            value, literal = _STRING_READERS[kind]
            inner.replace(literal(value(inner.this)))

    for node in list(tree.find_all(*_COMPARISONS, exp.Between, exp.In)):
        if isinstance(node, exp.Between | exp.In):
            kind = reading(node.this)
            if kind is not None:
                for arg in [node.args.get("low"), node.args.get("high"), *node.expressions]:
                    if arg is not None:
                        read(arg, kind)
            continue
        for this, other in ((node.this, node.expression), (node.expression, node.this)):
            kind = reading(this)
            if kind is not None:
                read(other, kind)
                break


def _read_as(builder: ParamBuilder, kind: DType) -> ParamBuilder:
    reader = _STRING_READERS[kind][0]

    def bound(params: Params) -> Any:
        v = builder(params)
        return reader(v) if isinstance(v, str) else v

    return bound


def _constant(text: str) -> ParamBuilder:
    return lambda params: text


def _read_held(builder: ParamBuilder, reader: Callable[[Any], Any]) -> ParamBuilder:
    return lambda params: reader(builder(params))


def _literal_regexes(stmt: exp.Expression) -> exp.Expression:
    """``x ~ 'abc'`` / ``x ~* '^abc$'``: a regular expression that is a plain string
    (optionally anchored) is the LIKE / ILIKE of that string, which the client evaluates
    exactly; other regular expressions stay refused."""
    from .compiler import regex_runs

    def swap(node: exp.Expression) -> exp.Expression:
        if not isinstance(node, exp.RegexpLike | exp.RegexpILike):
            return node
        pattern = node.expression
        if not (isinstance(pattern, exp.Literal) and pattern.is_string):
            return node
        runs = regex_runs(str(pattern.this))
        if not runs:
            if isinstance(node, exp.RegexpLike) and portable_regex(str(pattern.this)):
                node.meta["portable"] = True  # the client engine matches it (see _rewrite)
            return node
        body, at_start, at_end = runs[0]
        escaped = body.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        like = ("" if at_start else "%") + escaped + ("" if at_end else "%")
        kind = exp.Like if isinstance(node, exp.RegexpLike) else exp.ILike
        return kind(this=node.this.copy(), expression=exp.Literal.string(like))

    return stmt.transform(swap)


_LIKES = (exp.Like,)

# what a regular expression may hold for PostgreSQL's ARE and the client engine's RE2 to
# match the same strings: literals, ., anchors, groups, alternation, quantifiers, bracket
# expressions of literal characters and ranges; escapes only of these metacharacters
_REGEX_META = set(".^$*+?()|[]{}")
_REGEX_ESCAPABLE = set(".^$*+?()|[]{}\\-/")


def portable_regex(pattern: str) -> bool:
    """Does ``pattern`` (for ``~``) match the same strings in both engines?  Left out:
    character classes and class escapes (``\\d``, ``[[:alpha:]]``: the locale's in
    PostgreSQL), back-references, ``(?`` constructs, and anything case-insensitive."""
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            if i + 1 >= n or pattern[i + 1] not in _REGEX_ESCAPABLE:
                return False
            i += 2
            continue
        if ch == "(" and pattern.startswith("(?", i):
            return False
        if ch == "{":
            close = pattern.find("}", i)
            body = pattern[i + 1 : close] if close > 0 else ""
            if not body or not all(part.isdigit() for part in body.split(",", 1) if part):
                return False
            i = close + 1
            continue
        if ch == "[":
            end: int | None = None
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":
                return False  # a leading ]: read alike? not relied on
            while j < n:
                if pattern[j] in "[\\":
                    return False  # classes, collating elements, escapes
                if pattern[j] == "]":
                    end = j
                    break
                j += 1
            if end is None:
                return False
            i = end + 1
            continue
        if ord(ch) < 32:
            return False
        i += 1
    return True


def _escape_likes(tree: exp.Expression) -> None:
    """PostgreSQL's LIKE escapes with a backslash unless told otherwise; DuckDB's does not."""
    # innermost first: wrapping a LIKE copies it, and a LIKE nested in its operand (in a
    # CASE) must be wrapped in the copy, not in the node the copy replaced
    for like in reversed(list(tree.find_all(*_LIKES))):
        if not isinstance(like.parent, exp.Escape):
            like.replace(exp.Escape(this=like.copy(), expression=exp.Literal.string("\\")))


def quotient_outputs(tree: exp.Expression) -> dict[int, tuple[str, int]]:
    """Rewrite the outermost SELECT's items that PostgreSQL computes by numeric division
    -- ``avg(x)`` of integers/numerics, ``a / b`` of numerics -- into their dividend,
    with the divisor appended as a hidden item: {item index: ("avg" | "div", index of
    its divisor)}.  The client divides them with PostgreSQL's numeric division, whose
    result scale depends on the values (one output column may hold several scales)."""
    if not isinstance(tree, exp.Select):
        return {}
    items = tree.expressions
    out: dict[int, tuple[str, int]] = {}
    for i, item in enumerate(list(items)):
        node = item.this if isinstance(item, exp.Alias) else item
        while isinstance(node, exp.Paren):
            node = node.this
        if isinstance(node, exp.Div) and node.meta.get("avg"):
            # an avg the server computed in parts (aggregate.py): sum / count
            kind, dividend, divisor = "avg", node.this.copy(), node.expression.copy()
        elif (isinstance(node, exp.Avg) and _kind(node.this) != "float") or (
            isinstance(node, exp.Window | exp.Filter) and isinstance(node.this, exp.Avg)
        ):
            kind = "avg"
            dividend, divisor = _avg_parts(node)
        elif isinstance(node, exp.Div):
            a, b = _kind(node.this), _kind(node.expression)
            if not (a in ("int", "decimal") and b in ("int", "decimal") and "decimal" in (a, b)):
                continue
            if node.find(exp.Placeholder):
                continue  # refused by the rewrite: a parameter's type decides the division
            kind, dividend, divisor = "div", node.this.copy(), node.expression.copy()
        else:
            continue
        if tree.args.get("distinct") is not None:
            raise _refuse(f"{kind} with DISTINCT rows", node)
        order = tree.args.get("order")
        if order is not None:
            alias = item.alias if isinstance(item, exp.Alias) else None
            for o in order.expressions:
                key = o.this
                if (
                    key.find(exp.Avg, exp.Div)
                    or (isinstance(key, exp.Column) and not key.table and key.name == alias)
                    or (
                        isinstance(key, exp.Literal)
                        and not key.is_string
                        and key.name == str(i + 1)
                    )
                ):
                    raise _refuse("ORDER BY an output computed by numeric division", o)
        node.replace(dividend)
        tree.append("expressions", exp.Alias(this=divisor, alias=exp.to_identifier(f"__n{i}")))
        out[i] = (kind, len(tree.expressions) - 1)
    return out


def _real_valued(node: exp.Expression, reals: frozenset[tuple[str, str]]) -> bool:
    while isinstance(node, exp.Paren | exp.Neg | exp.Abs):
        node = node.this
    if isinstance(node, exp.Column):
        return (node.table, node.name) in reals
    return isinstance(node, exp.Cast) and node.to.this is exp.DataType.Type.FLOAT


def _check_real_arithmetic(tree: exp.Expression, reals: frozenset[tuple[str, str]]) -> None:
    """Arithmetic between two reals is real in PostgreSQL (float4pl...), which the client
    engine would compute in double precision (sqlglot types a real column double):
    refused.  A real beside any other number is computed in double precision in both."""
    for node in tree.find_all(exp.Add, exp.Sub, exp.Mul, exp.Div):
        if _real_valued(node.this, reals) and _real_valued(node.expression, reals):
            raise _refuse("arithmetic between two real values", node)


def numeric_outputs(tree: exp.Expression, reals: frozenset[tuple[str, str]]) -> dict[int, int]:
    """The outermost SELECT's items that cast text, double precision or real to numeric
    without a precision: PostgreSQL keeps each value's own display scale (text's as
    written, a float's 15 or 6 significant digits), which no DECIMAL type of the client
    engine holds.  Each is computed as the text or the float and converted on the client
    (numeric.numeric_in / float_numeric); {item index: the source's type oid (25, 700,
    701)}; ``reals``: the (table alias, column) pairs that are real (sqlglot reads both
    float types as double).  Ordered by, or made DISTINCT, the converted value would not
    be compared: refused there by the cast's check."""
    if not isinstance(tree, exp.Select) or tree.args.get("distinct") is not None:
        return {}
    out: dict[int, int] = {}
    names: set[str] = set()
    for i, item in enumerate(tree.expressions):
        node = item.unalias()
        while isinstance(node, exp.Paren):
            node = node.this
        if not (
            isinstance(node, exp.Cast)
            and node.to.is_type(exp.DataType.Type.DECIMAL)
            and not node.to.expressions
            and not isinstance(node.this, exp.Literal | exp.Placeholder)
        ):
            continue
        src = _kind(node.this)
        if src == "text" and char_length(node.this) is None:
            oid = 25
        elif src == "float":
            column = node.this
            read = {(c.table, c.name) for c in column.find_all(exp.Column)}
            if isinstance(column, exp.Column) and (column.table, column.name) in reals:
                oid = 700
            elif isinstance(column, exp.Column) and _derived_item(column) is None:
                oid = 701
            elif read & reals or column.find(exp.Column) is None:
                continue  # (a real computed, or a derived table's column: not known here)
            else:
                oid = 701
        else:
            continue
        order = tree.args.get("order")
        alias = item.alias if isinstance(item, exp.Alias) else None
        if order is not None and any(
            o.this.find(exp.Cast)
            or (isinstance(o.this, exp.Column) and not o.this.table and o.this.name == alias)
            or _position(o.this) == i + 1
            for o in order.expressions
        ):
            continue  # (refused by the cast's check)
        node.meta["numeric_out"] = True
        out[i] = oid
        if alias:
            names.add(alias)
    return out


def numeric_out(value: Any, oid: int) -> Any:
    """An item of :func:`numeric_outputs` as PostgreSQL's cast gives it."""
    if value is None:
        return None
    return numeric_in(value) if oid == 25 else float_numeric(value, oid)


def _display_scale(node: exp.Expression) -> exp.Expression | None:
    """An expression giving, per row, the display scale PostgreSQL gives ``node``'s
    numeric value (None: not derivable here)."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Null):
        return exp.Null()
    if isinstance(node, exp.Neg):
        return _display_scale(node.this)
    if isinstance(node, exp.Add | exp.Sub | exp.Mul):
        a, b = _display_scale(node.this), _display_scale(node.expression)
        if a is None or b is None:
            return None
        if isinstance(node, exp.Mul):
            return exp.Add(this=a, expression=b)
        return exp.Case(
            ifs=[exp.If(this=exp.GTE(this=a.copy(), expression=b.copy()), true=a)], default=b
        )
    if isinstance(node, exp.Case) and node.this is None:
        ifs = []
        for branch in node.args.get("ifs") or []:
            ds = _display_scale(branch.args["true"])
            if ds is None:
                return None
            ifs.append(exp.If(this=branch.this.copy(), true=ds))
        default = node.args.get("default")
        ds_default = _display_scale(default) if default is not None else exp.Null()
        if ds_default is None:
            return None
        return exp.Case(ifs=ifs, default=ds_default)
    if isinstance(node, exp.Coalesce):
        ifs = []
        for arg in [node.this, *node.expressions]:
            ds = _display_scale(arg)
            if ds is None:
                return None
            present = exp.Not(this=exp.Is(this=arg.copy(), expression=exp.Null()))
            ifs.append(exp.If(this=present, true=ds))
        return exp.Case(ifs=ifs)
    if isinstance(node, exp.Filter) and isinstance(node.this, exp.Sum):
        widest = _display_scale(node.this)
        if widest is None:
            return None
        return exp.Filter(this=widest, expression=node.expression.copy())
    if isinstance(node, exp.Sum) and not isinstance(node.this, exp.Distinct):
        # a sum's display scale: the widest of the values summed
        arg = node.this
        ds = _display_scale(arg)
        if ds is None:
            return None
        node.meta["rescaled"] = True
        return exp.Max(
            this=exp.Case(
                ifs=[exp.If(this=exp.Is(this=arg.copy(), expression=exp.Null()), true=exp.Null())],
                default=ds,
            )
        )
    if isinstance(node, exp.Abs):
        return _display_scale(node.this)
    if isinstance(node, exp.Greatest | exp.Least):
        # the value kept is the first non-NULL one equal to the result (PostgreSQL keeps
        # the first of equals), with its own scale
        ifs = []
        for arg in [node.this, *node.expressions]:
            ds = _display_scale(arg)
            if ds is None:
                return None
            ifs.append(exp.If(this=exp.EQ(this=arg.copy(), expression=node.copy()), true=ds))
        return exp.Case(ifs=ifs)
    if isinstance(node, exp.Case | exp.Greatest | exp.Least | exp.Nullif) or node.find(
        exp.Case, exp.Coalesce, exp.Greatest, exp.Least
    ):
        return None  # (a static scale would hide a choice inside)
    if isinstance(node, exp.Column):
        inner = _derived_item(node)
        derived = _display_scale(inner) if inner is not None else None
        # (its annotated type is the expression's as sqlglot derives it; a scale that
        # reads the derived table's own columns cannot be computed out here)
        if derived is not None and derived.find(exp.Column) is None:
            return derived
    scale = _scale(node)
    return None if scale is None else exp.Literal.number(scale)


def _named_select_item(query: Any, name: str) -> exp.Expression | None:
    if not isinstance(query, exp.Select):
        return None
    for e in query.selects:
        if e.alias_or_name == name:
            inner = e.unalias()
            return inner if isinstance(inner, exp.Expression) else None
    return None


def _derived_item(column: exp.Column) -> exp.Expression | None:
    """The select item of a derived table (or CTE) that ``column`` reads, if it reads
    one: the scale of ``x * y`` is not its annotated type's (sqlglot types a product of
    numerics with one factor's scale, PostgreSQL adds them)."""
    select = column.find_ancestor(exp.Select)
    while select is not None:
        sources = [select.args.get("from_"), *(select.args.get("joins") or [])]
        for source in sources:
            item = source.this if isinstance(source, exp.From | exp.Join) else None
            if isinstance(item, exp.Subquery) and item.alias_or_name == column.table:
                return _named_select_item(item.this, column.name)
        with_ = select.args.get("with_")
        for cte in with_.expressions if with_ is not None else []:
            if cte.alias_or_name == column.table:
                return _named_select_item(cte.this, column.name)
        select = select.find_ancestor(exp.Select)
    return None


# the choices between values, each keeping its own display scale in PostgreSQL
_CHOICES = (exp.Case, exp.Coalesce, exp.Greatest, exp.Least)


def scale_outputs(tree: exp.Expression) -> dict[int, int]:
    """The outermost SELECT's items (hidden divisors included) that choose between
    numerics of different scales (CASE, COALESCE), directly in a statement without
    grouping or through ``sum(x)``: PostgreSQL keeps each value's display scale (a sum's:
    the widest value summed), DuckDB gives the widest branch's.  A
    hidden item gives the item's display scale as PostgreSQL derives it (a choice's: the
    chosen branch's; a sum's: the max of x's per-row display scale; a product's: the sum
    of its factors'); {item index: index of its hidden item}."""
    if not isinstance(tree, exp.Select) or tree.args.get("distinct") is not None:
        return {}  # (with DISTINCT a hidden item would change which rows are distinct)
    grouped = tree.args.get("group") is not None or any(
        isinstance(a, exp.AggFunc) and not isinstance(a.parent, exp.Window)
        for e in tree.expressions
        for a in e.find_all(exp.AggFunc)
    )
    out: dict[int, int] = {}
    for i, item in enumerate(list(tree.expressions)):
        node = item.this if isinstance(item, exp.Alias) else item
        summed = any(
            _kind(s.this) == "decimal" and s.this.find(*_CHOICES)
            for s in node.find_all(exp.Sum)
            if not isinstance(s.parent, exp.Window)
        )
        # a row's own choice (no grouping): its display scale per row, beside it
        chosen = not grouped and node.find(*_CHOICES) is not None
        if _kind(node) != "decimal" or not (summed or chosen):
            continue
        if node.find(exp.Window, exp.Div, exp.Subquery):
            continue  # not derivable here: refused where the choice is
        widest = _display_scale(node)
        if widest is None:
            continue
        for choice in node.find_all(*_CHOICES):
            choice.meta["rescaled"] = True
        tree.append("expressions", exp.Alias(this=widest, alias=exp.to_identifier(f"__s{i}")))
        out[i] = len(tree.expressions) - 1
    return out


def rescale(value: Any, scale: Any) -> Any:
    """An item of :func:`scale_outputs` at PostgreSQL's display scale (exact: the digits
    dropped are zeros)."""
    if value is None or scale is None:
        return value
    return Decimal(value).quantize(Decimal(1).scaleb(-int(scale)))


def pg_divide(kind: str, dividend: Any, divisor: Any) -> Any:
    """An output of :func:`quotient_outputs`, divided as PostgreSQL divides it."""
    if kind == "avg":
        return pg_avg(dividend, divisor, None)
    if dividend is None or divisor is None:
        return None
    if divisor == 0:
        raise pg_errors.DivisionByZero("division by zero")
    return numeric_div(Decimal(dividend), Decimal(divisor))


def to_duckdb(
    tree: exp.Expression,
    builders: dict[str, ParamBuilder],
    reals: frozenset[tuple[str, str]] = frozenset(),
) -> tuple[str, dict[int, tuple[str, int]], dict[int, int], dict[int, int]]:
    """The DuckDB SQL of the annotated, qualified tree; fills ``builders`` with the
    parameters ($p0, ...) it takes."""
    from .compiler import Compiler

    avgs = quotient_outputs(tree)
    scales = scale_outputs(tree)
    numerics = numeric_outputs(tree, reals)
    c = Compiler.__new__(Compiler)
    held_params: dict[str, str] = {}
    # a parameter written once and copied into the statement's tree (GROUP BY 1 made the
    # select item's expression; a clock value read twice) keeps one name: the engine
    # matches a grouped expression to its select item by its text
    named: dict[tuple[str, Any, Any], str] = {}
    for ph in list(tree.find_all(exp.Placeholder, exp.Literal)):
        held = ph.meta.get("held")
        if isinstance(ph, exp.Placeholder) and ph.name:
            key = (ph.name, ph.meta.get("read_as"), repr(held))
            if key in named:
                ph.replace(exp.Placeholder(this=named[key]))
                continue
        if isinstance(ph, exp.Literal):
            if held is None:
                continue
            builder: ParamBuilder | None = _constant(str(ph.this))
        else:
            builder = Compiler.value_of(c, ph)
        if builder is None:
            raise _refuse("placeholder", ph)
        kind = ph.meta.get("read_as")
        if kind is not None:
            builder = _read_as(builder, kind)
        name = f"p{len(builders)}"
        if held is not None:  # a comparand of a held column: its key (rewrite/held.py)
            builder = _read_held(builder, comparand_reader(*held))
            held_params[name] = held[0]
        builders[name] = builder
        if isinstance(ph, exp.Placeholder) and ph.name:
            named[(ph.name, kind, repr(held))] = name
        ph.replace(exp.Placeholder(this=name))
    token = _REALS.set(reals)
    try:
        tree = _rewrite_bottom_up(tree)
    finally:
        _REALS.reset(token)
    for ph in list(tree.find_all(exp.Placeholder)):
        if ph.name in held_params:
            ph.replace(_cast(ph.copy(), held_params[ph.name]))
    interval_outputs(tree)
    _escape_likes(tree)
    _case_distinct_names(tree)
    _constant_keys(tree)
    return tree.sql("duckdb"), avgs, scales, numerics


def _position(key: exp.Expression) -> int | None:
    """The output column an ORDER BY / GROUP BY / DISTINCT ON key names by position: an
    integer written bare -- not ``(2)``, nor ``1 + 1`` folded to 2 (fold.py marks it)."""
    if (
        isinstance(key, exp.Literal)
        and not key.is_string
        and str(key.this).isdigit()
        and not key.meta.get("folded")
    ):
        return int(key.this)
    return None


def _constant_keys(tree: exp.Expression) -> None:
    """A constant key of ORDER BY, GROUP BY or DISTINCT ON orders or groups nothing in
    PostgreSQL, unless it is an integer written bare (a column's position): ``(2)``,
    ``1 + 1`` (folded to 2), ``2.5``.  DuckDB reads an integer constant as a position and
    ignores any other constant in DISTINCT ON (keeping every row): each such constant
    goes in a cast, an expression DuckDB keeps as one."""
    keys: list[exp.Expression] = []
    for node in tree.find_all(exp.Order, exp.Group, exp.Distinct):
        if isinstance(node, exp.Order):
            keys += [o.this for o in node.expressions if isinstance(o, exp.Ordered)]
        elif isinstance(node, exp.Group):
            keys += list(node.expressions)
        elif isinstance(node.args.get("on"), exp.Tuple):
            keys += list(node.args["on"].expressions)
    for key in keys:
        inner = key
        while isinstance(inner, exp.Paren):
            inner = inner.this
        # (a negative number is a constant too: ``0 + -0.25`` folds to ``-0.25``)
        const = inner.this if isinstance(inner, exp.Neg) else inner
        if isinstance(const, exp.Literal) and _position(key) is None:
            inner.replace(_cast(inner.copy(), "VARCHAR" if const.is_string else "DOUBLE"))


def _case_distinct_names(tree: exp.Expression) -> None:
    """Output names that differ only in case (``id`` and ``"ID"``) are two names in
    PostgreSQL, one in DuckDB (its identifiers ignore case, quoted or not): the later
    ones of the statement's own SELECT are renamed, with the ORDER BY keys naming them
    (the application's column names are taken from the statement, not from the engine).
    Inside a subquery, whose outer references would need the same care, refused."""
    for select in tree.find_all(exp.Select):
        seen: dict[str, str] = {}
        for i, item in enumerate(select.expressions):
            if not isinstance(item, exp.Alias):
                continue
            name = item.alias
            if seen.setdefault(name.lower(), name) == name:
                continue
            if select is not tree:
                raise _refuse("output names differing only in case in a subquery", select)
            renamed = f"{name}__{i}"
            order = select.args.get("order")
            for col in order.find_all(exp.Column) if order is not None else ():
                if not col.table and col.name == name:
                    col.set("this", exp.to_identifier(renamed, quoted=True))
            item.set("alias", exp.to_identifier(renamed, quoted=True))


# -- text order under the collation ----------------------------------------------------------

KEY_FUNCTION = "pg_collation_key"
_RANGE_OPS = (exp.LT, exp.LTE, exp.GT, exp.GTE)
_BYTEWISE_NAMES = ("c", "posix")


def _unparen(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _explicit(node: exp.Expression) -> exp.Collate | None:
    """The ``x COLLATE "name"`` an operand is, if it is one."""
    inner = _unparen(node)
    return inner if isinstance(inner, exp.Collate) else None


def _text_kind(node: exp.Expression) -> str:
    """:func:`_kind`, seeing through ``x COLLATE "name"`` (typed as nothing)."""
    collate = _explicit(node)
    return _kind(collate.this if collate is not None else node)


def _keyed(node: exp.Expression, function: str = KEY_FUNCTION) -> exp.Expression:
    return _udf(function, node)


def _order_items(ordered: exp.Ordered) -> list[exp.Expression] | None:
    """The select items an ORDER BY item may name by position or output name (None for
    a window's ORDER BY, which names none)."""
    order = ordered.parent
    owner = order.parent if isinstance(order, exp.Order) else None
    if isinstance(owner, exp.SetOperation):
        return list(leftmost(owner).expressions)
    if isinstance(owner, exp.Select):
        return list(owner.expressions)
    return None


def _named_item(ordered: exp.Ordered) -> exp.Expression | None:
    """The select item an ORDER BY item names by position or output name, if any."""
    items = _order_items(ordered)
    key = ordered.this
    if not items:
        return None
    i = _position(key)
    if i is not None:
        return items[i - 1] if 1 <= i <= len(items) else None
    if isinstance(key, exp.Column) and not key.table:
        for item in items:
            if isinstance(item, exp.Alias) and item.alias == key.name:
                return item
        if isinstance(ordered.parent.parent if ordered.parent else None, exp.SetOperation):
            for item in items:
                if item.alias_or_name == key.name:
                    return item
    return None


class ExplicitCollations:
    """The collations a statement names in ``COLLATE "name"``, each with the key function
    ordering by it in the client engine (``pg_collation_key_<n>``)."""

    def __init__(self, resolve: Callable[[str], Collation] | None) -> None:
        self._resolve = resolve
        self.functions: dict[str, Collation] = {}
        self._by_name: dict[str, tuple[Collation, str | None]] = {}

    def of(self, collate: exp.Collate) -> tuple[Collation, str | None]:
        """(the collation, its key function -- None where the order is bytewise)."""
        target = collate.expression
        name = target.name if isinstance(target, exp.Expression) else ""
        if name not in self._by_name:
            if name.lower() in _BYTEWISE_NAMES:
                coll = C_COLLATION
            elif self._resolve is None:
                raise _refuse(f'COLLATE "{name}" (only "C" and "POSIX" here)', collate)
            else:
                coll = self._resolve(name)
            function = None
            if not coll.bytewise:
                function = next(
                    (f for f, c in self.functions.items() if c == coll),
                    f"{KEY_FUNCTION}_{len(self.functions)}",
                )
                self.functions[function] = coll
            self._by_name[name] = (coll, function)
        return self._by_name[name]


def text_order(
    tree: exp.Expression, keyed: bool, explicit: ExplicitCollations | None = None
) -> bool:
    """Find what orders text in the (annotated) tree -- ORDER BY keys, window orders,
    ``<`` ``<=`` ``>`` ``>=`` BETWEEN, min/max, greatest/least -- and make DuckDB order it
    by the collation key (``pg_collation_key(x)``; min/max become ``arg_min`` /
    ``arg_max`` by the key): under the column collation if ``keyed``, under an explicit
    ``COLLATE "name"`` always (``explicit``: its key function; ``COLLATE "C"`` orders
    bytewise, as DuckDB compares strings).  Equality, grouping and DISTINCT need nothing:
    a deterministic collation's equality is the bytes'.  Returns whether the statement
    orders text under the column collation.

    Every decision is taken on the annotated tree first (a rewritten node has no type),
    then applied: sides moved under the key function, not copied, and min/max last, so
    that what they aggregate carries the other rewrites."""
    explicit = explicit or ExplicitCollations(None)
    kinds = (exp.Ordered, *_RANGE_OPS, exp.Between, exp.Min, exp.Max, exp.Greatest, exp.Least)
    todo: list[tuple[exp.Expression, str]] = []  # (node, its key function)
    named: dict[int, exp.Expression] = {}  # ORDER BY items naming a select item
    found = False
    for node in tree.find_all(*kinds):
        if isinstance(node, exp.Ordered):
            item = _named_item(node)
            target = cast(exp.Expression, item.unalias()) if item is not None else node.this
            operands = [target, node.this]
            text = _text_kind(target) == "text"
            if item is not None:
                named[id(node)] = item
        elif isinstance(node, exp.Between):
            operands = [node.this, node.args["low"], node.args["high"]]
            text = _text_kind(node.this) == "text"
        elif isinstance(node, exp.Min | exp.Max):
            arg = node.this
            operands = [arg.expressions[0] if isinstance(arg, exp.Distinct) else arg]
            text = _text_kind(operands[0]) == "text"
        elif isinstance(node, exp.Greatest | exp.Least):
            operands = [node.this, *node.expressions]
            text = any(_text_kind(x) == "text" for x in operands)
        else:  # < <= > >=
            operands = [node.this, node.expression]
            types = [_text_kind(x) for x in operands]
            text = (
                "text" in types
                and all(t in ("text", "other") for t in types)
                and not any(_is_uuid(x) for x in operands)  # (a string compared with one)
            )
        if not text:
            continue
        collate = next((c for c in map(_explicit, operands) if c is not None), None)
        if collate is not None:
            function = explicit.of(collate)[1]
        else:
            found = True
            function = KEY_FUNCTION if keyed else None
        if function is None:
            continue
        if isinstance(node, exp.Greatest | exp.Least):
            raise _refuse(f"{node.sql_name().lower()} of text under a collation", node)
        todo.append((node, function))
    for node, function in todo:
        if isinstance(node, exp.Ordered):
            item = named.get(id(node))
            if item is not None:
                in_set_op = isinstance(node.parent.parent if node.parent else None,
                                       exp.SetOperation)  # fmt: skip
                node.set("this", _keyed(_output_ref(item, in_set_op), function))
            else:
                node.set("this", _keyed(node.this, function))
        elif isinstance(node, exp.Between):
            for arg in ("this", "low", "high"):
                node.set(arg, _keyed(node.args[arg], function))
        elif isinstance(node, _RANGE_OPS):
            node.set("this", _keyed(node.this, function))
            node.set("expression", _keyed(node.expression, function))
    for node, function in todo:
        if isinstance(node, exp.Min | exp.Max):
            arg = node.this
            inner = arg.expressions[0] if isinstance(arg, exp.Distinct) else arg
            fn = "arg_min" if isinstance(node, exp.Min) else "arg_max"
            node.replace(_udf(fn, inner.copy(), _keyed(inner.copy(), function)))
    for collate in list(tree.find_all(exp.Collate)):
        collate.replace(collate.this)  # the order is in the key functions now
    return found


# what the engine gives back for an infinite date or timestamp
_INFINITY_SHOWN = frozenset({dt.date.max, dt.date.min, dt.datetime.max, dt.datetime.min})


def _refuse_infinite_outputs(rows: list[tuple[Any, ...]], dated: list[int]) -> None:
    """An infinite date or timestamp the engine computed into a result is given back as
    the edge of Python's range, not as infinity: where infinities were loaded, such an
    output is refused rather than shown as a date (a value of the edge itself too: the
    two cannot be told apart there)."""
    for row in rows:
        for i in dated:
            v = row[i]
            if isinstance(v, str) or (v in _INFINITY_SHOWN and not isinstance(v, int)):
                raise _refuse(
                    "an infinite date or timestamp, or a date outside years 1 to 9999, "
                    "computed by the client engine"
                )


_COMPARISON_SYMBOLS = {
    exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<", exp.GT: ">", exp.LTE: "<=", exp.GTE: ">=",
}  # fmt: skip


def _refuse_json_comparisons(catalog: Catalog, tree: exp.Expression) -> None:
    """A json column compared, anywhere in the statement: PostgreSQL's error (json has no
    comparison operators, 42883), as the server path raises it, not a refusal."""
    tables = {
        t.alias_or_name: t.name.lower()
        for t in tree.find_all(exp.Table)
        if catalog.has_table(t.name.lower())
    }

    def is_json(node: exp.Expression) -> bool:
        node = _unparen(node)
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


def _is_uuid(node: exp.Expression) -> bool:
    """A uuid, or a value held by its order key (rewrite/held.py): a string compared with
    one is a value of its type, not text."""
    typed = _unparen(node).type
    return typed is not None and typed.this in (exp.DataType.Type.UUID, exp.DataType.Type.STRUCT)


def _output_ref(item: exp.Expression, in_set_op: bool) -> exp.Expression:
    """What an ORDER BY naming a select item orders by: in a SELECT the (qualified) column
    itself, when the item is one (aliased or not); else an output name that names it alone
    -- its alias or column name, or a name given to it here (the application's output
    names are taken before, from the statement itself)."""
    inner = item.unalias()
    if isinstance(inner, exp.Column) and not in_set_op:
        return inner.copy()
    owner = item.parent
    siblings = list(owner.expressions) if owner is not None else [item]
    name = item.alias_or_name
    if name and sum(1 for x in siblings if x.alias_or_name == name) == 1:
        return exp.column(name)
    name = f"__ordered_{siblings.index(item)}"
    item.replace(exp.alias_(inner.copy(), name))
    return exp.column(name)


# -- output names, as PostgreSQL names the columns ------------------------------------------

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
    exp.Sign: "sign", exp.Ceil: "ceil", exp.Floor: "floor",
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
}


def pg_name(node: exp.Expression) -> str | None:
    """PostgreSQL's FigureColname: None where it would say ``?column?``."""
    if isinstance(node, exp.Alias):
        return node.alias
    if isinstance(node, exp.Paren):
        return pg_name(node.this)
    if isinstance(node, exp.Column):
        return node.name
    if isinstance(node, exp.Window):
        return pg_name(node.this)
    if isinstance(node, exp.Filter):
        return pg_name(node.this)
    if isinstance(node, exp.Cast):
        return pg_name(node.this) or _TYPE_NAMES.get(node.to.this)
    if isinstance(node, exp.Subquery):
        inner = node.this
        while isinstance(inner, exp.Subquery):
            inner = inner.this
        if isinstance(inner, exp.Select) and len(inner.expressions) == 1:
            return pg_name(inner.expressions[0])
        return None
    if isinstance(node, exp.Case):
        return _strong_name(node.args.get("default")) or "case"
    if node.meta.get("pg_function"):  # the name as written, where sqlglot merges several
        return str(node.meta["pg_function"])
    if isinstance(node, exp.Pad):
        return "lpad" if node.args.get("is_left") else "rpad"
    if isinstance(node, exp.Anonymous):
        return node.name.lower()
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


def leftmost(tree: exp.Expression) -> exp.Select:
    while not isinstance(tree, exp.Select):
        if isinstance(tree, exp.SetOperation | exp.Subquery):
            tree = tree.this
        else:
            raise _refuse(type(tree).__name__, tree)
    return tree


def output_names(original: exp.Expression, qualified_tree: exp.Expression) -> list[str]:
    """Names of the output columns: the application's items (stars from the expansion)."""
    orig = leftmost(original).expressions
    qual = leftmost(qualified_tree).expressions
    if any(_is_star(e) for e in orig):
        return [e.alias_or_name for e in qual]
    return [pg_name(e) or "?column?" for e in orig]


def _char_outputs(tree: exp.Expression, width: int) -> list[int | None]:
    """Per output column, n where it is char(n): in a set operation, only where every
    branch's column is char(n) (with a varchar or text branch PostgreSQL's is text)."""

    def leaves(node: exp.Expression) -> list[exp.Select]:
        while isinstance(node, exp.Subquery):
            node = node.this
        if isinstance(node, exp.SetOperation):
            return leaves(node.this) + leaves(node.expression)
        return [node] if isinstance(node, exp.Select) else []

    branches = leaves(tree) or [leftmost(tree)]
    out: list[int | None] = []
    for i in range(width):
        lengths = {
            char_length(b.expressions[i]) if i < len(b.expressions) else None for b in branches
        }
        out.append(lengths.pop() if len(lengths) == 1 else None)
    return out


def char_length(node: exp.Expression) -> int | None:
    """n, where ``node`` is annotated char(n).  A choice (COALESCE, CASE, ...) is char(n)
    only when every branch is; with a varchar or text branch PostgreSQL resolves it to
    text, unpadded."""
    while isinstance(node, exp.Alias | exp.Paren):
        node = node.this
    if isinstance(node, exp.Case | exp.Coalesce | exp.Greatest | exp.Least | exp.Nullif):
        # a string constant makes it char without a length: its own values print as
        # they are (the columns' values too -- exact for values that fill n, which is
        # what a char(n) column usually holds)
        lengths = {
            None if isinstance(b, exp.Literal) else char_length(b) for b in _choice_values(node)
        }
        return lengths.pop() if len(lengths) == 1 else None
    if isinstance(node, exp.Column):
        # a derived table's (or CTE's) column is char(n) when its select item is: a
        # choice between char(n) and varchar there is text (sqlglot types it char(n))
        inner = _derived_item(node)
        if inner is not None:
            return char_length(inner)
    t = node.type
    if t is None or not t.is_type(exp.DataType.Type.CHAR) or not t.expressions:
        return None
    try:
        return int(t.expressions[0].name)
    except ValueError:
        return None


# -- the plan --------------------------------------------------------------------------------


def compile_residual(catalog: Catalog, stmt: exp.Expression, reason: str = "") -> Compiled:
    """The residual plan of a SELECT / set operation (see the module docstring);
    ``reason``: why the server cannot run it whole (the direct compilation's refusal)."""
    if not isinstance(stmt, exp.Select | exp.SetOperation):
        raise _refuse(f"{type(stmt).__name__} statement", stmt)
    stmt, ages_today = _age_of_today(stmt)
    stmt = clock_parameters(_literal_regexes(stmt))
    check_order_names(stmt)
    schema = schema_of(catalog, stmt)
    tree = qualified(_exists_select_one(stmt), schema)
    _refuse_json_comparisons(catalog, tree)
    tree = unused_columns_dropped(joins_as_derived_tables(tree))
    annotate_types(tree, schema=cast(dict[str, object], schema), dialect="postgres")
    tree = fold_constants(tree)
    extend_schema(catalog, schema, substitute(catalog, tree))
    factor_disjunctions(tree)
    annotate_types(tree, schema=cast(dict[str, object], schema), dialect="postgres")
    check_allowed(tree)
    _typed_strings(tree)  # (after the check: from_hex is the client's, not the statement's)
    # the columns held by their order keys, by engine type (rewrite/held.py)
    by_key = held_types(
        col
        for name in schema
        if name in catalog.tables
        for col in catalog.table(name).columns.values()
    )
    check_uses(tree, by_key)
    # the real columns, by the alias they are read under (before the relations' rewrite
    # renames the tables)
    reals = frozenset(
        (t.alias_or_name, c)
        for t in tree.find_all(exp.Table)
        for c, duck in schema.get(t.name, {}).items()
        if duck == "FLOAT"
    )
    check_boolean_arguments(tree)
    _check_real_arithmetic(tree, reals)
    check_distinct_order(tree)
    check_full_joins(tree)

    def compiles(rel: Relation, conj: list[exp.Expression]) -> bool:
        if any(unbounded_range(c, by_key) for c in conj):
            return False
        return try_compile(catalog, rel, conj) is not None

    pushdowns = plan_pushdowns(catalog, tree, schema, lambda rel: compiles_exactly(catalog, rel))
    relations = plan_relations(catalog, tree, compiles, [p.relation for p in pushdowns])
    for rel in relations:  # (left to the client engine: rewrite/held.py)
        rel.conjuncts = [c for c in rel.conjuncts if not unbounded_range(c, by_key)]
    fetches = [compile_relation(catalog, rel) for rel in relations]
    if drop_applied(catalog, tree, relations):  # fewer columns to ship: compiled again
        fetches = [compile_relation(catalog, rel) for rel in relations]
    tables: list[tuple[str, list[tuple[str, str]]]] = []
    collations: set[Collation | None] = set()
    for rel in relations:
        cols = list(rel.outputs)
        read = rel.columns if rel.query is None else []
        for push in pushdowns:  # an aggregated SELECT's keys: their collations
            if push.relation is rel:
                for alias, c in push.keys:
                    meta = catalog.table(rel.members[alias].name)
                    if meta.column(c).type.name in TEXT_TYPES:
                        collations.add(meta.column(c).collation)
        for alias, c in read:
            meta = catalog.table(rel.members[alias].name)
            held = schema[meta.name][c]
            if held == _NOT_HELD:
                duck_type(meta, meta.column(c))  # (its refusal, naming the column)
            cols.append((rel.column_name(alias, c), held))
            if meta.column(c).type.name in TEXT_TYPES:
                collations.add(meta.column(c).collation)
        tables.append((rel.name, cols))
    # case mapping (lower, upper, ILIKE) is the C ctype's, ASCII only
    needs_case = any(True for _ in tree.find_all(exp.Lower, exp.Upper, exp.ILike))
    needs_c, case_mapping = needs_case, None
    mapping_of, default_of = DATABASE_CASE_MAPPING.get(), DATABASE_COLLATION.get()
    if needs_case and mapping_of is not None and default_of is not None:
        # the database's case mapping is that of text of its default collation
        db_default = default_of()
        if any(c is not None and c != db_default for c in collations):
            raise _refuse("lower, upper or ILIKE of a column whose collation is not the default")
        case_mapping = mapping_of()
        if case_mapping.kind not in ("ascii", "icu", "libc"):
            raise CollationUnavailable(
                f"the database's case mapping ({case_mapping.kind} {case_mapping.locale!r}) "
                "cannot be reproduced on the client",
                "case mapping",
            )
        needs_c = False

    names = output_names(stmt, tree)
    # text is ordered under the collation of the columns read (one: several are refused),
    # or without any text column the database's; a column without a recorded collation
    # orders bytewise -- which the connection accepts on a C database only
    ordering: Collation | None = next(iter(collations)) if len(collations) == 1 else None
    if not collations and default_of is not None:
        ordering = default_of()  # text constants only: the database's default collation
    keyed = ordering is not None and not ordering.bytewise
    explicit = ExplicitCollations(COLLATION_NAMED.get())
    orders_text = text_order(tree, keyed, explicit)
    if orders_text and len(collations) > 1:
        raise _refuse("ordering text of columns with different collations")
    keys: dict[str, Collation] = dict(explicit.functions)
    if keyed and ordering is not None:
        keys[KEY_FUNCTION] = ordering
    width = len(names)
    char_outputs = _char_outputs(tree, width)
    varchar_cols = _varchar_outputs(catalog, tree, width)
    for push in pushdowns:
        apply_pushdown(push)
    rewrite_to_relations(tree, relations)
    late = plan_late(tree, relations, tables, fetches, width)
    builders: dict[str, ParamBuilder] = {}
    semi_sql = {semi.name: semi_select(semi, builders) for rel in relations for semi in rel.semis}
    sql, avgs, scales, numerics = to_duckdb(tree, builders, reals)
    needs_datestyle = "PG_DATE_TEXT(" in sql.upper()
    needs_zone = (
        "TIMESTAMPTZ" in sql
        or "TIME ZONE" in sql
        or any(duck == "TIMESTAMPTZ" for _, cols in tables for _, duck in cols)
    )

    # bind on the empty tables: the result's types, and refusals, before anything runs
    con = engine(tables, keys, None, case_mapping)
    try:
        described = con.execute(sql, {k: None for k in builders}).description or []
    except duckdb.Error as exc:
        error = translate(exc)
        if isinstance(error, pg_errors.GroupingError) and tree.find(exp.Subquery, exp.Exists):
            # DuckDB's grouping rules are PostgreSQL's for plain columns, not for a
            # correlated subquery in a grouped expression (GROUP BY 1 over CASE WHEN
            # EXISTS (... outer.id ...)), which PostgreSQL takes: refused, not its error
            error = UnsupportedQuery(
                f"not supported in a client-evaluated query: grouping with a subquery ({error})",
                "grouping with a subquery",
            )
        raise error from None
    finally:
        release(con, tables)
    oids = []
    held_outputs: dict[int, str] = {}
    for i, d in enumerate(described[:width]):
        if str(d[1]) in by_key:
            held_outputs[i] = str(d[1])
            oids.append(by_key[str(d[1])].sql_type.oid)
            continue
        oids.append(1700 if i in avgs or i in numerics else result_oid(str(d[1])))
        if (
            str(d[1]) == "INTERVAL"
            and "AGE(" in sql.upper()
            and "PG_INTERVAL_OUT(" not in sql.upper()
        ):
            # (an interval of age() read through a derived table or a set operation:
            # its months would be counted 30 days, where psycopg loads years as 365)
            raise _refuse("an interval of age() other than a select item", stmt)
    oids = [1043 if i in varchar_cols and o == 25 else o for i, o in enumerate(oids)]
    padded = {i: n for i, n in enumerate(char_outputs) if n is not None}
    reals_out = {i for i, o in enumerate(oids) if o == 700}
    oids = [1042 if i in padded else o for i, o in enumerate(oids)]

    # the engine's date and timestamp outputs (see _refuse_infinite_outputs)
    dated = [i for i, o in enumerate(oids) if o in (1082, 1114, 1184)]

    def finish(fetch: Fetch, params: Params) -> list[tuple[Any, ...]]:
        """Fetch the relations in order (each semi-join filter's values computed from
        the relations fetched before it), then run the statement over them."""
        refusals: list[CollationUnavailable] = []
        con = engine(late.tables, keys, refusals, case_mapping)
        kept: dict[tuple[int, int], list[Any]] = {}  # ciphertexts carried by reference
        shown = Shown(by_key)
        try:
            values = {k: b(params) for k, b in builders.items()}
            infinite = False
            if needs_zone:  # timestamptz (now(), date_trunc of a date): the session's zone
                con.execute("SET TimeZone = $zone", {"zone": session_zone()})
            if needs_datestyle:  # a date printed as text: the session's DateStyle
                con.execute(f"SET VARIABLE {DATESTYLE} = $s", {"s": session_datestyle()})
            found: dict[str, list[Any]] = {}
            token = SEMI_VALUES.set(found)
            try:
                for i, (rel, (name, cols)) in enumerate(zip(relations, late.tables, strict=True)):
                    for semi in rel.semis:
                        text, used = semi_sql[semi.name]
                        got = con.execute(text, {k: values[k] for k in used} or None)
                        found[semi.name] = [r[0] for r in got.fetchall()]
                        semi_type = str(got.description[0][1]) if got.description else ""
                        if semi_type in by_key:  # (the server compares values, not keys)
                            found[semi.name] = [
                                shown.member(semi_type, v) for v in found[semi.name]
                            ]
                        if semi.scalar:
                            if len(found[semi.name]) > 1:
                                raise pg_errors.CardinalityViolation(
                                    "more than one row returned by a subquery used as an expression"
                                )
                            found[semi.name] = semi.scalar_bound(
                                found[semi.name][0] if found[semi.name] else None
                            )
                    columns = late.by_reference(i, fetch(i), kept)
                    for j, (_, duck) in enumerate(cols):
                        if duck in by_key and columns:
                            columns[j] = shown.load(duck, columns[j])
                    infinite = load(con, name, cols, columns) or infinite
            finally:
                SEMI_VALUES.reset(token)
            rows = con.execute(sql, values).fetchall()
            if infinite and dated:
                _refuse_infinite_outputs(rows, dated)
        except duckdb.Error as exc:
            if refusals:
                raise refusals[0] from None
            raise translate(exc) from None
        finally:
            release(con, late.tables)
        rows = late.decrypt(rows, kept)
        if held_outputs:  # values held by their keys, as loaded
            rows = [
                tuple(
                    shown.value(held_outputs[i], v) if i in held_outputs else v
                    for i, v in enumerate(r)
                )
                for r in rows
            ]
        if padded:  # char(n) values are printed with their padding
            rows = [
                tuple(
                    v.ljust(padded[i]) if i in padded and isinstance(v, str) else v
                    for i, v in enumerate(r)
                )
                for r in rows
            ]
        if scales:
            rows = [
                tuple(rescale(v, r[scales[i]]) if i in scales else v for i, v in enumerate(r))[
                    : None if avgs else width
                ]
                for r in rows
            ]
        if reals_out:  # real outputs as PostgreSQL prints them
            rows = [
                tuple(float4_out(v) if i in reals_out else v for i, v in enumerate(r)) for r in rows
            ]
        if numerics:
            rows = [
                tuple(numeric_out(v, numerics[i]) if i in numerics else v for i, v in enumerate(r))
                for r in rows
            ]
        if avgs:
            rows = [
                tuple(
                    pg_divide(avgs[i][0], r[i], r[avgs[i][1]]) if i in avgs else r[i]
                    for i in range(width)
                )
                for r in rows
            ]
        return rows

    plan = Compiled(kind="select", returns_rows=True, statement_type="SELECT")
    plan.uses_clock = needs_zone or ages_today  # (the session's zone is read with the clock)
    plan.outputs = [Output(n, _no_row_fn, oid) for n, oid in zip(names, oids, strict=True)]
    plan.residual = Residual(
        fetches,
        finish,
        needs_c_locale=needs_c,
        reason=reason,
        parts=[rel.describe() for rel in relations],
    )
    plan.text_orders = ([ordering] if orders_text else []) + list(explicit.functions.values())
    plan.needs = [n for f in fetches for n in f.needs]
    plan.joins = [j for f in fetches for j in f.joins]
    plan.tables = [t for f in fetches for t in f.tables]
    return plan


Fetch = Callable[[int], list[list[Any]]]


def semi_select(semi: Semi, builders: dict[str, ParamBuilder]) -> tuple[str, list[str]]:
    """The client engine's query of a semi-join filter's values (the distinct values of
    its source column among the source relation's rows that pass its client filter),
    and the parameters it takes."""
    src = semi.source
    if src is None:  # the values of an uncorrelated IN (or scalar) subquery
        assert semi.query is not None
        sel = exp.Select(expressions=[exp.Star()])
        if not semi.scalar:
            sel.set("distinct", exp.Distinct())
        sel.set("from_", exp.From(this=exp.Subquery(this=semi.query.copy(), alias="__s")))
    else:
        alias, column = semi.source_column
        sel = exp.Select(
            expressions=[exp.column(src.column_name(alias, column), table=alias, quoted=True)]
        )
        sel.set("distinct", exp.Distinct())
        sel.set("from_", exp.From(this=exp.to_table(src.name, alias=alias)))
        if semi.client_filter:
            sel.set("where", exp.Where(this=exp.and_(*semi.client_filter, copy=False)))
    before = set(builders)
    token = _VALUES_ONLY.set(semi.scalar)
    try:
        text, _, _, _ = to_duckdb(sel, builders)
    finally:
        _VALUES_ONLY.reset(token)
    return text, [k for k in builders if k not in before]


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


def _exists_select_one(stmt: exp.Expression) -> exp.Expression:
    """``EXISTS (SELECT * ...)`` as ``EXISTS (SELECT 1 ...)``: the same, and the star
    would otherwise count as a use of every column (each fetched)."""
    stmt = stmt.copy()
    for node in stmt.find_all(exp.Exists):
        sub = node.this
        if isinstance(sub, exp.Select) and all(isinstance(e, exp.Star) for e in sub.expressions):
            sub.set("expressions", [exp.Literal.number(1)])
    return stmt


def _no_row_fn(row: Sequence[Any]) -> Any:  # the residual's rows come whole from finish
    raise AssertionError("residual outputs are computed by the finish")


def _varchar_outputs(catalog: Catalog, tree: exp.Expression, width: int) -> set[int]:
    """Outputs that are a varchar column itself (PostgreSQL reports varchar's OID)."""
    out = set()
    items = leftmost(tree).expressions[:width]
    scopes = {id(s.expression): s for s in traverse_scope(tree)}
    scope = scopes.get(id(leftmost(tree)))
    for i, item in enumerate(items):
        node = item.this if isinstance(item, exp.Alias) else item
        if isinstance(node, exp.Column) and scope is not None:
            src = source_of(scope, node.table)
            if isinstance(src, exp.Table):
                col = catalog.table(src.name).columns.get(node.name.lower())
                if col is not None and col.type.name == "varchar":
                    out.add(i)
    return out


__all__ = ["compile_residual"]
