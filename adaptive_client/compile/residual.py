"""Split execution: a SELECT the server cannot evaluate over ciphertexts, finished exactly
on the client.

When the direct compilation of a SELECT (or UNION / INTERSECT / EXCEPT, or WITH) raises
:class:`UnsupportedQuery`, the statement is planned as a *residual*:

1. its names are qualified (sqlglot's ``qualify``) and typed against the plain catalog
   (engine/engine_types.py), its constants folded and the conjuncts common to an OR's
   branches factored out (compile/fold.py);
2. it is checked against the allowlist of constructs whose client evaluation was checked
   against PostgreSQL's, and against PostgreSQL's own rules that the client engine does
   not keep (compile/allowed.py);
3. its base tables are grouped into *relations* (compile/split.py): server SELECTs,
   compiled by the existing rewrite (so their onion needs become peels), that join what
   the server can join, filter by what compiles over ciphertexts, and reduce by run-time
   semi-joins -- only filters: the residual applies the whole statement again;
4. the statement, pointed at the relations, is written in the client engine's dialect
   (engine/engine_sql.py and engine/transforms.py; text order under collations:
   engine/text_order.py), its parameters bound as DuckDB parameters, and bound once on
   empty tables for its result's types; its output names are PostgreSQL's
   (compile/output_names.py);
5. the plan is data (:class:`ClientPlan`): at execution :func:`run` loads the relations'
   decrypted rows, in dependency order, into the client engine (engine/runtime.py: an
   in-process DuckDB), runs the statement there and decodes its outputs.

* text is ordered under the collation of the columns it reads; the connection checks
  the collations before anything is peeled (:attr:`Compiled.text_orders`).  Case mapping
  (``lower``, ``upper``, ``ILIKE``) is the database's (``collation.CaseMapping``: ASCII
  under the C ctype, ICU's or libc's otherwise), for text of its default collation;
* columns of types DuckDB has none for with PostgreSQL's semantics (inet, cidr, macaddr,
  jsonb, bit, money, interval, time, timetz, enums, arrays) are held by their order keys
  (engine/held.py): compared, ordered, grouped, counted, min/max'd and copied, and
  mapped back to their values on the way out; a string or parameter compared with one
  read as PostgreSQL reads it there;
* jsonb's and arrays' operators, functions, set-returning functions (in the select list
  and in FROM) and aggregates are calls of engine functions with PostgreSQL's semantics
  (engine/row_lowering.py, engine/row_calls.py, engine/set_functions.py).

Anything else is refused with :class:`UnsupportedQuery` naming the construct, at compile
time (before any peel) wherever it can be decided there.
"""

from __future__ import annotations

import contextvars
import datetime as dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, cast

import duckdb
from psycopg import errors as pg_errors
from sqlglot import exp
from sqlglot.expressions.datatypes import DType
from sqlglot.optimizer.annotate_types import annotate_types

from ..catalog.metadata import Catalog
from ..engine import session_settings
from ..engine.engine_sql import (
    STRING_READERS,
    engine_sql,
    numeric_out,
    pg_divide,
    prepare_outputs,
    rescale,
    typed_strings,
)
from ..engine.engine_types import (
    NOT_HELD,
    duck_type,
    qualified,
    result_oid,
    schema_of,
    unused_columns_dropped,
)
from ..engine.held import Shown, check_uses, comparand_reader, held_types, unbounded_range
from ..engine.numeric import float4_out
from ..engine.row_calls import CallContext, CallSpec, constant_bytes, engine_functions
from ..engine.row_lowering import annotate_lowered, lower_calls, printed_outputs
from ..engine.runtime import engine, far_value, load, release, translate
from ..engine.runtime import refusal as _refuse
from ..engine.set_functions import arrows_as_written, from_functions
from ..engine.sums import VALUES_ONLY
from ..engine.text_order import KEY_FUNCTION, ExplicitCollations, text_order
from ..engine.time_zones import mark_zone_parameters, zone_named
from ..errors import CollationUnavailable, UnsupportedQuery
from ..values.clock import clock_parameters
from ..values.collation import (
    COLLATION_NAMED,
    DATABASE_CASE_MAPPING,
    DATABASE_COLLATION,
    CaseMapping,
    Collation,
)
from ..values.encodings import TEXT_TYPES, Encoding
from ..values.interval_encoding import intervals_as_written
from ..values.jsonb_paths import PARAMETER_INDEX
from .aggregate import Pushdown, compiles_exactly, plan_pushdowns
from .aggregate import apply as apply_pushdown
from .allowed import (
    check_allowed,
    check_boolean_arguments,
    check_chained_using,
    check_choice_types,
    check_distinct_order,
    check_full_joins,
    check_order_names,
    check_outer_aggregates,
    check_real_arithmetic,
    check_set_operation_order,
    refuse_json_comparisons,
)
from .constants import value_of
from .distinct_aggregates import distinct_aggregates_ordered
from .fold import factor_disjunctions, fold_constants
from .frame_offsets import frame_offsets_as_intervals
from .late import LatePlan, plan_late
from .nested_joins import joins_as_derived_tables
from .output_names import (
    char_outputs,
    column_outputs,
    output_names,
    stored_typmod,
    varchar_casts,
)
from .plan import Compiled, Output, ParamBuilder, Params, Residual
from .precomputed_pass import extend_schema, substitute
from .recursive_ctes import check_recursive
from .relations import SEMI_VALUES, Relation, Semi
from .residual_inputs import age_of_today, exists_select_one, literal_regexes
from .split import compile_relation, drop_applied, plan_relations, rewrite_to_relations, try_compile

# -- the plan --------------------------------------------------------------------------------

# the engine's tables: (name, [(column, engine type)]) per relation
Tables = list[tuple[str, list[tuple[str, str]]]]


@dataclass
class _Bound:
    """A statement bound to the catalog and checked for client evaluation."""

    stmt: exp.Expression  # as written, its clock values and literal regexes made parameters
    tree: exp.Expression  # qualified, folded, annotated
    schema: dict[str, dict[str, str]]
    held: dict[str, Encoding]  # the columns held by their order keys, by engine type
    reals: frozenset[tuple[str, str]]  # the real columns, by the alias they are read under
    ages_today: bool  # it reads age(x): the server's date
    calls: list[CallSpec]  # its jsonb and array functions (engine/row_calls.py)


def compile_residual(catalog: Catalog, stmt: exp.Expression, reason: str = "") -> Compiled:
    """The residual plan of a SELECT / set operation (see the module docstring);
    ``reason``: why the server cannot run it whole (the direct compilation's refusal)."""
    bound = _bound(catalog, stmt)
    tree, by_key = bound.tree, bound.held
    printed = printed_outputs(tree, bound.calls) if bound.calls else {}
    pushdowns, relations, fetches = _relations(catalog, bound)
    tables, collations = _engine_tables(catalog, bound.schema, relations, pushdowns)
    needs_c, case_mapping = _case_mapping(tree, collations)
    names = output_names(bound.stmt, tree)
    ordering, orders_text, explicit = _text_order(tree, collations)
    keys: dict[str, Collation] = dict(explicit.functions)
    if ordering is not None and not ordering.bytewise:
        keys[KEY_FUNCTION] = ordering
    width = len(names)
    char_widths = char_outputs(tree, width)
    stored = column_outputs(catalog, tree, width)
    varchar_cols = {i for i, col in stored.items() if col.type.name == "varchar"}
    varchar_cols |= varchar_casts(tree, width)
    for push in pushdowns:
        apply_pushdown(push)
    rewrite_to_relations(tree, relations)
    late = plan_late(tree, relations, tables, fetches, width)
    builders: dict[str, ParamBuilder] = {}
    semi_sql = {semi.name: semi_select(semi, builders) for rel in relations for semi in rel.semis}
    mark_zone_parameters(tree)
    sql, avgs, scales, numerics = to_duckdb(tree, builders, bound.reals)
    settings = session_settings.needed(sql, [duck for _, cols in tables for _, duck in cols])
    described = _result_types(tree, sql, tables, keys, case_mapping, bound.calls, by_key)
    oids = []
    held_outputs: dict[int, str] = {}
    for i, duck in enumerate(described[:width]):
        if i in printed:  # (a computed jsonb or array: its exact bytes)
            oids.append(printed[i].sql_type.oid)
            continue
        if duck in by_key:
            held_outputs[i] = duck
            oids.append(by_key[duck].sql_type.oid)
            continue
        oids.append(1700 if i in avgs or i in numerics else result_oid(duck))
        if duck == "INTERVAL" and "AGE(" in sql.upper() and "PG_INTERVAL_OUT(" not in sql.upper():
            # (an interval of age() read through a derived table or a set operation: its
            # months would be counted 30 days, where psycopg loads years as 365)
            raise _refuse("an interval of age() other than a select item", bound.stmt)
    oids = [1043 if i in varchar_cols and o == 25 else o for i, o in enumerate(oids)]
    padded = {i: n for i, n in enumerate(char_widths) if n is not None}
    reals_out = {i for i, o in enumerate(oids) if o == 700}
    oids = [1042 if i in padded else o for i, o in enumerate(oids)]

    plan = Compiled(kind="select", returns_rows=True, statement_type="SELECT")
    # (the session's zone is read with the clock)
    plan.uses_clock = settings.zone or bound.ages_today
    plan.outputs = [
        # (a stored column's modifier where the output is that column, of its type)
        Output(n, _no_row_fn, oid, stored_typmod(stored.get(i), oid))
        for i, (n, oid) in enumerate(zip(names, oids, strict=True))
    ]
    client = ClientPlan(
        relations=relations,
        late=late,
        keys=keys,
        case_mapping=case_mapping,
        held=by_key,
        params=builders,
        semi_sql=semi_sql,
        sql=sql,
        settings=settings,
        calls=bound.calls,
        decoders=OutputDecoders(
            width=width,
            # the engine's date and timestamp outputs (see _refuse_infinite_outputs)
            dated={i: o for i, o in enumerate(oids) if o in (1082, 1114, 1184)},
            held=held_outputs,
            printed=printed,
            padded=padded,
            scales=scales,
            reals=reals_out,
            numerics=numerics,
            quotients=avgs,
        ),
    )
    plan.residual = Residual(
        fetches,
        client.finish,
        needs_c_locale=needs_c,
        reason=reason,
        parts=[rel.describe() for rel in relations],
    )
    plan.text_orders = ([ordering] if orders_text else []) + list(explicit.functions.values())
    plan.needs = [n for f in fetches for n in f.needs]
    plan.joins = [j for f in fetches for j in f.joins]
    plan.tables = [t for f in fetches for t in f.tables]
    return plan


def _bound(catalog: Catalog, stmt: exp.Expression) -> _Bound:
    """``stmt`` normalised (age(x), literal regexes, clock values, EXISTS (SELECT *)),
    qualified and typed against the catalog, its constants folded and precomputed
    expressions substituted; refused or raised as PostgreSQL raises where it is not
    evaluated exactly by the client (compile/allowed.py, engine/held.py)."""
    if not isinstance(stmt, exp.Select | exp.SetOperation):
        raise _refuse(f"{type(stmt).__name__} statement", stmt)
    stmt, ages_today = age_of_today(stmt)
    stmt = clock_parameters(literal_regexes(stmt))
    check_order_names(stmt)
    check_set_operation_order(stmt)
    check_chained_using(stmt)
    # (jsonb arrows sqlglot read as lambdas; set-returning functions in FROM: lateral)
    stmt = from_functions(arrows_as_written(stmt.copy()))
    schema = schema_of(catalog, stmt)
    tree = qualified(exists_select_one(stmt), schema)
    check_recursive(catalog, tree)
    refuse_json_comparisons(catalog, tree)
    tree = unused_columns_dropped(joins_as_derived_tables(tree))
    annotate_types(tree, schema=cast(dict[str, object], schema), dialect="postgres")
    tree = fold_constants(tree)
    extend_schema(catalog, schema, substitute(catalog, tree))
    factor_disjunctions(tree)
    annotate_types(tree, schema=cast(dict[str, object], schema), dialect="postgres")
    by_key = held_types(
        col
        for name in schema
        if name in catalog.tables
        for col in catalog.table(name).columns.values()
    )
    distinct_aggregates_ordered(tree)
    frame_offsets_as_intervals(tree)
    calls = lower_calls(tree, by_key)  # (jsonb and array functions: engine/row_calls.py)
    if calls:
        annotate_lowered(tree, schema)
    check_allowed(tree)
    typed_strings(tree)  # (after the check: from_hex is the client's, not the statement's)
    check_uses(tree, by_key)
    # (before the relations' rewrite renames the tables)
    reals = frozenset(
        (t.alias_or_name, c)
        for t in tree.find_all(exp.Table)
        for c, duck in schema.get(t.name, {}).items()
        if duck == "FLOAT"
    )
    check_boolean_arguments(tree)
    check_choice_types(tree)
    check_real_arithmetic(tree, reals)
    check_distinct_order(tree)
    check_full_joins(tree)
    check_outer_aggregates(tree)
    return _Bound(stmt, tree, schema, by_key, reals, ages_today, calls)


def _relations(
    catalog: Catalog, bound: _Bound
) -> tuple[list[Pushdown], list[Relation], list[Compiled]]:
    """The aggregations the server computes, the relations it fetches (compile/split.py)
    and their compiled SELECTs."""
    tree, by_key = bound.tree, bound.held

    def compiles(rel: Relation, conj: list[exp.Expression]) -> bool:
        if any(unbounded_range(c, by_key) for c in conj):
            return False
        return try_compile(catalog, rel, conj) is not None

    pushdowns = plan_pushdowns(
        catalog, tree, bound.schema, lambda rel: compiles_exactly(catalog, rel)
    )
    relations = plan_relations(catalog, tree, compiles, [p.relation for p in pushdowns])
    for rel in relations:  # (left to the client engine: engine/held.py)
        rel.conjuncts = [c for c in rel.conjuncts if not unbounded_range(c, by_key)]
    fetches = [compile_relation(catalog, rel) for rel in relations]
    if drop_applied(catalog, tree, relations):  # fewer columns to ship: compiled again
        fetches = [compile_relation(catalog, rel) for rel in relations]
    return pushdowns, relations, fetches


def _engine_tables(
    catalog: Catalog,
    schema: dict[str, dict[str, str]],
    relations: list[Relation],
    pushdowns: list[Pushdown],
) -> tuple[Tables, set[Collation | None]]:
    """The engine's table of each relation, and the collations of the text columns the
    statement reads (an aggregated SELECT's keys too)."""
    tables: Tables = []
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
            if held == NOT_HELD:
                duck_type(meta, meta.column(c))  # (its refusal, naming the column)
            cols.append((rel.column_name(alias, c), held))
            if meta.column(c).type.name in TEXT_TYPES:
                collations.add(meta.column(c).collation)
        tables.append((rel.name, cols))
    return tables, collations


def _case_mapping(
    tree: exp.Expression, collations: set[Collation | None]
) -> tuple[bool, CaseMapping | None]:
    """(whether the answer is exact only under the C locale, the database's case mapping
    the engine applies): case mapping (lower, upper, ILIKE) is the C ctype's, ASCII only,
    unless the database's is known and reproducible."""
    needs_case = any(True for _ in tree.find_all(exp.Lower, exp.Upper, exp.ILike, exp.Initcap))
    mapping_of, default_of = DATABASE_CASE_MAPPING.get(), DATABASE_COLLATION.get()
    if not (needs_case and mapping_of is not None and default_of is not None):
        return needs_case, None
    # the database's case mapping is that of text of its default collation
    db_default = default_of()
    if any(c is not None and c != db_default for c in collations):
        raise _refuse(
            "lower, upper, initcap or ILIKE of a column whose collation is not the default"
        )
    case_mapping = mapping_of()
    if case_mapping.kind not in ("ascii", "icu", "libc"):
        raise CollationUnavailable(
            f"the database's case mapping ({case_mapping.kind} {case_mapping.locale!r}) "
            "cannot be reproduced on the client",
            "case mapping",
        )
    return False, case_mapping


def _text_order(
    tree: exp.Expression, collations: set[Collation | None]
) -> tuple[Collation | None, bool, ExplicitCollations]:
    """(the collation text is ordered under, whether the statement orders text under it,
    the collations it names) -- the tree's text order rewritten (engine/text_order.py).

    Text is ordered under the collation of the columns read (one: several are refused),
    or without any text column the database's; a column without a recorded collation
    orders bytewise -- which the connection accepts on a C database only."""
    default_of = DATABASE_COLLATION.get()
    ordering: Collation | None = next(iter(collations)) if len(collations) == 1 else None
    if not collations and default_of is not None:
        ordering = default_of()  # text constants only: the database's default collation
    keyed = ordering is not None and not ordering.bytewise
    explicit = ExplicitCollations(COLLATION_NAMED.get())
    orders_text = text_order(tree, keyed, explicit)
    if orders_text and len(collations) > 1:
        raise _refuse("ordering text of columns with different collations")
    return ordering, orders_text, explicit


def _result_types(
    tree: exp.Expression,
    sql: str,
    tables: Tables,
    keys: dict[str, Collation],
    case_mapping: CaseMapping | None,
    calls: list[CallSpec],
    held: dict[str, Encoding],
) -> list[str]:
    """The engine types of the statement's result columns: bound on the empty tables,
    its refusals raised before anything runs."""
    context = CallContext(Shown(held))
    con = engine(tables, keys, None, case_mapping, engine_functions(calls, context))
    try:
        described = con.execute(sql, {k: None for k in sql_parameters(sql)}).description or []
    except duckdb.Error as exc:
        if context.raised:  # (a row function of constants, folded: PostgreSQL's error)
            raise context.raised[0] from None
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
    return [str(d[1]) for d in described]


# -- running the plan ------------------------------------------------------------------------

Fetch = Callable[[int], list[list[Any]]]


@dataclass
class OutputDecoders:
    """What the client does to the engine's result rows to give PostgreSQL's values, by
    output index (hidden items after the first ``width``)."""

    width: int
    dated: dict[int, int]  # date and timestamp outputs, their type OIDs
    held: dict[int, str]  # values held by their keys: their engine type
    printed: dict[int, Encoding]  # computed held values as their exact bytes: the encoding
    padded: dict[int, int]  # char(n): n
    scales: dict[int, int]  # a display scale computed beside: its item (scale_outputs)
    reals: set[int]  # printed as PostgreSQL prints a real
    numerics: dict[int, int]  # a numeric of text or a float: the source's oid
    quotients: dict[int, tuple[str, int]]  # divided on the client: (kind, divisor's item)


@dataclass
class ClientPlan:
    """The client's part of a residual plan: the relations fetched in order and loaded
    into the client engine (as ``late`` loads them), the semi-join filters computed
    between fetches, the statement in the engine's SQL with its parameters, and the
    decoders of its outputs.  Run by :func:`run`."""

    relations: list[Relation]
    late: LatePlan  # the relations' tables as loaded, some outputs carried (late.py)
    keys: dict[str, Collation]  # the collation key functions the engine needs
    case_mapping: CaseMapping | None
    held: dict[str, Encoding]  # the engine types held by order keys (engine/held.py)
    params: dict[str, ParamBuilder]
    semi_sql: dict[str, tuple[str, list[str]]]  # per semi-join: its query, its parameters
    sql: str
    settings: session_settings.SettingsNeeded  # the session's, set on the engine
    calls: list[CallSpec]  # the engine functions of its jsonb and array calls
    decoders: OutputDecoders

    def finish(self, fetch: Fetch, params: Params) -> list[tuple[Any, ...]]:
        return run(self, fetch, params)


def run(plan: ClientPlan, fetch: Fetch, params: Params) -> list[tuple[Any, ...]]:
    """Fetch the relations in order (each semi-join filter's values computed from the
    relations fetched before it), then run the statement over them and decode its rows."""
    late = plan.late
    refusals: list[CollationUnavailable] = []
    shown = Shown(plan.held)
    context = CallContext(shown, session=contextvars.copy_context())
    functions = engine_functions(plan.calls, context)
    con = engine(late.tables, plan.keys, refusals, plan.case_mapping, functions)
    kept: dict[tuple[int, int], list[Any]] = {}  # ciphertexts carried by reference
    try:
        values = {k: b(params) for k, b in plan.params.items()}
        infinite = False
        session_settings.apply(con, plan.settings)
        found: dict[str, list[Any]] = {}
        token = SEMI_VALUES.set(found)
        try:
            for i, (rel, (name, cols)) in enumerate(zip(plan.relations, late.tables, strict=True)):
                for semi in rel.semis:
                    _semi_values(plan, con, semi, values, found, shown)
                # (intervals read as their fields: the engine's arithmetic adds a month
                # as a month; the cursor hands out psycopg's value, values/handout.py)
                with intervals_as_written():
                    columns = late.by_reference(i, fetch(i), kept)
                for j, (_, duck) in enumerate(cols):
                    if duck in plan.held and columns:
                        columns[j] = shown.load(duck, columns[j])
                infinite = load(con, name, cols, columns) or infinite
        finally:
            SEMI_VALUES.reset(token)
        # (the statement's own: a semi-join's constants are its query's)
        rows = con.execute(plan.sql, {k: values[k] for k in sql_parameters(plan.sql)}).fetchall()
        if plan.decoders.dated:
            rows = _dated_outputs(rows, plan.decoders.dated, infinite)
    except duckdb.Error as exc:
        if refusals:
            raise refusals[0] from None
        if context.raised:  # (a row function's error, PostgreSQL's)
            raise context.raised[0] from None
        raise translate(exc) from None
    finally:
        release(con, late.tables)
    return decode(plan.decoders, late.decrypt(rows, kept), shown)


def _semi_values(
    plan: ClientPlan,
    con: duckdb.DuckDBPyConnection,
    semi: Semi,
    values: dict[str, Any],
    found: dict[str, list[Any]],
    shown: Shown,
) -> None:
    """The values of one semi-join filter, from the relations loaded so far, into
    ``found`` (read by the relation's fetch when it is bound)."""
    text, used = plan.semi_sql[semi.name]
    got = con.execute(text, {k: values[k] for k in used} or None)
    found[semi.name] = [r[0] for r in got.fetchall()]
    semi_type = str(got.description[0][1]) if got.description else ""
    if semi_type in plan.held:  # (the server compares values, not keys)
        found[semi.name] = [shown.member(semi_type, v) for v in found[semi.name]]
    if semi.scalar:
        if len(found[semi.name]) > 1:
            raise pg_errors.CardinalityViolation(
                "more than one row returned by a subquery used as an expression"
            )
        found[semi.name] = semi.scalar_bound(found[semi.name][0] if found[semi.name] else None)


def decode(
    decoders: OutputDecoders, rows: list[tuple[Any, ...]], shown: Shown
) -> list[tuple[Any, ...]]:
    """The engine's result rows as PostgreSQL gives them (see :class:`OutputDecoders`)."""
    width = decoders.width
    held, padded, scales = decoders.held, decoders.padded, decoders.scales
    reals, numerics, avgs = decoders.reals, decoders.numerics, decoders.quotients
    printed = decoders.printed
    if printed:
        with intervals_as_written():  # (an interval as its fields: a write stores them)
            rows = [
                tuple(
                    printed[i].from_exact_bytes(v) if i in printed and v is not None else v
                    for i, v in enumerate(r)
                )
                for r in rows
            ]
    if held:  # values held by their keys, as loaded (an interval's fields: handout.py)
        rows = [
            tuple(shown.value(held[i], v) if i in held else v for i, v in enumerate(r))
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
    if reals:  # real outputs as PostgreSQL prints them
        rows = [tuple(float4_out(v) if i in reals else v for i, v in enumerate(r)) for r in rows]
    if numerics:
        rows = [
            tuple(numeric_out(v, numerics[i]) if i in numerics else v for i, v in enumerate(r))
            for r in rows
        ]
    if avgs:
        rows = [
            tuple(
                pg_divide(avgs[i][0], r[i], *r[avgs[i][1] : avgs[i][1] + 2]) if i in avgs else r[i]
                for i in range(width)
            )
            for r in rows
        ]
    return rows


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
    token = VALUES_ONLY.set(semi.scalar)
    try:
        text, _, _, _ = to_duckdb(sel, builders)
    finally:
        VALUES_ONLY.reset(token)
    return text, [k for k in builders if k not in before]


def to_duckdb(
    tree: exp.Expression,
    builders: dict[str, ParamBuilder],
    reals: frozenset[tuple[str, str]] = frozenset(),
) -> tuple[str, dict[int, tuple[str, int]], dict[int, int], dict[int, int]]:
    """The DuckDB SQL of the annotated, qualified tree (engine/engine_sql.py) and the
    conversions of its outputs; fills ``builders`` with the parameters ($p0, ...) it
    takes, each built as the server path builds a parameter's value."""
    avgs, scales, numerics = prepare_outputs(tree, reals)
    held_params: dict[str, str] = {}
    # a parameter written once and copied into the statement's tree (GROUP BY 1 made the
    # select item's expression; a clock value read twice) keeps one name: the engine
    # matches a grouped expression to its select item by its text
    named: dict[tuple[str, Any, Any], str] = {}
    for ph in list(tree.find_all(exp.Placeholder, exp.Literal)):
        held = ph.meta.get("held")
        row_arg = ph.meta.get("row_arg")  # (a constant a row function reads as its type)
        operator = ph.meta.get("row_arg_operator")  # (its operator's, checked when bound)
        if isinstance(ph, exp.Placeholder) and ph.name:
            key = (
                ph.name,
                (ph.meta.get("read_as"), ph.meta.get("json_key")),
                (repr(held), repr(row_arg), operator),
            )
            if key in named:
                ph.replace(exp.Placeholder(this=named[key]))
                continue
        if isinstance(ph, exp.Literal):
            if held is None and row_arg is None:
                continue
            builder: ParamBuilder | None = _constant(str(ph.this))
        else:
            builder = value_of(ph)
        if builder is None:
            raise _refuse("placeholder", ph)
        kind = ph.meta.get("read_as")
        if kind is not None:
            builder = _read_as(builder, kind)
        if ph.meta.get("json_key"):
            builder = _read_held(builder, json_key)
        if ph.meta.get("time_zone"):  # (AT TIME ZONE %s: the zone's name checked)
            builder = zone_named(builder)
        name = f"p{len(builders)}"
        if held is not None:  # a comparand of a held column: its key (engine/held.py)
            builder = _read_held(builder, comparand_reader(*held))
            held_params[name] = held[0]
        elif row_arg is not None:
            builder = _read_held(builder, constant_bytes(row_arg, operator))
            held_params[name] = "BLOB"
        builders[name] = builder
        if isinstance(ph, exp.Placeholder) and ph.name:
            named[
                (ph.name, (kind, ph.meta.get("json_key")), (repr(held), repr(row_arg), operator))
            ] = name
        ph.replace(exp.Placeholder(this=name))
    return engine_sql(tree, reals, held_params), avgs, scales, numerics


_PARAMETER = re.compile(r"\$(p\d+)\b")


def sql_parameters(sql: str) -> set[str]:
    """The parameters ($p0, ...) the engine's SQL takes."""
    return set(_PARAMETER.findall(sql))


def json_key(value: Any) -> Any:
    """A parameter of ``doc -> %s`` as engine/row_functions.py's ``->?`` takes it: a key
    as it is, an integer tagged as an index -- or PostgreSQL's 42883 for a value psycopg
    sends as a type the operator has no overload for."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise pg_errors.UndefinedFunction(
            f"operator does not exist: jsonb -> {_SENT_AS.get(type(value), 'unknown')}"
        )
    if not -(2**31) <= value < 2**31:  # (sent as a bigint: no jsonb -> bigint)
        raise pg_errors.UndefinedFunction("operator does not exist: jsonb -> bigint")
    return PARAMETER_INDEX + str(value)


_SENT_AS = {bool: "boolean", float: "double precision", Decimal: "numeric"}


def _constant(text: str) -> ParamBuilder:
    return lambda params: text


def _read_as(builder: ParamBuilder, kind: DType) -> ParamBuilder:
    reader = STRING_READERS[kind][0]

    def bound(params: Params) -> Any:
        v = builder(params)
        return reader(v) if isinstance(v, str) else v

    return bound


def _read_held(builder: ParamBuilder, reader: Callable[[Any], Any]) -> ParamBuilder:
    return lambda params: reader(builder(params))


# what the engine gives back for an infinite date or timestamp
_INFINITY_SHOWN = frozenset({dt.date.max, dt.date.min, dt.datetime.max, dt.datetime.min})


_DATE_OID, _TIMESTAMP_OID = 1082, 1114


def _dated_outputs(
    rows: list[tuple[Any, ...]], dated: dict[int, int], infinite: bool
) -> list[tuple[Any, ...]]:
    """The engine's date and timestamp outputs as the client holds them: one outside
    Python's years (the engine gives its text, ``0001-12-31 (BC)``) as a ``PgDate`` or
    ``PgTimestamp``, which the application receives as psycopg gives it (by default
    psycopg's DataError: the date is too small) -- it was handed out as that text.
    An infinite one is given back as the edge of Python's range, not as infinity:
    where infinities were loaded, such an output is refused rather than shown as a
    date (a value of the edge itself too: the two cannot be told apart there)."""
    far = [i for i in dated if any(isinstance(row[i], str) for row in rows)]
    if infinite and any(row[i] in _INFINITY_SHOWN for row in rows for i in dated):
        raise _refuse(
            "an infinite date or timestamp computed by the client engine (where infinities "
            "were loaded)"
        )
    if not far:
        return rows
    oids = {i: dated[i] for i in far}
    return [
        tuple(
            _far_output(v, oids[i]) if i in oids and isinstance(v, str) else v
            for i, v in enumerate(row)
        )
        for row in rows
    ]


def _far_output(text: str, oid: int) -> Any:
    if oid not in (_DATE_OID, _TIMESTAMP_OID):
        # (a timestamptz's text would be read in the engine's zone, not the session's)
        raise _refuse("a timestamptz outside years 1 to 9999 computed by the client engine")
    return far_value(text, oid == _TIMESTAMP_OID)


def _no_row_fn(row: Sequence[Any]) -> Any:  # the residual's rows come whole from finish
    raise AssertionError("residual outputs are computed by the finish")


__all__ = ["ClientPlan", "compile_residual", "run"]
