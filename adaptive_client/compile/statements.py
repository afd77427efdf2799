"""Compile one parsed statement (SELECT, INSERT, UPDATE, DELETE) for the encrypted schema.

The entry of the compiler, :func:`compile_statement`, is a pure function of the
statement, a catalog snapshot and the session's :class:`~.settings.Settings`: it reads
nothing from the database and changes nothing.  It normalises the statement (views
expanded, NATURAL joins and parenthesized joins made explicit, keys that decide other
columns named), then compiles it:

* a query by the first of :data:`STRATEGIES` that applies to it and compiles it --
  the server evaluating it over ciphertexts (:mod:`.select`), the client aggregating
  the rows the server filtered (:mod:`.client_aggregate`), or split execution, the
  server fetching relations and the client engine finishing the statement
  (:mod:`.residual`);
* a write by its statement's compiler (:data:`WRITES`).

What the statement needs before it can run is in the plan: ``needs`` (peels),
``joins`` (column pairs to bring under one key) and ``builds`` (onions built on first
use: the plan is then only that, to be compiled again once built).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from sqlglot import exp

from ..catalog import domains, views
from ..catalog.metadata import Catalog
from ..errors import UnsupportedQuery
from . import design_wants, field_onions
from .aggregate_types import check_aggregate_types
from .as_if_built import as_if_built, without_pending
from .client_aggregate import client_aggregable, compile_client_aggregate
from .column_aliases import with_column_aliases
from .compiler import Compiler
from .dependent_keys import with_dependent_keys
from .derived_names import with_derived_names
from .expansions import with_expansions
from .flat_joins import with_flat_joins
from .insert import compile_insert
from .natural_joins import with_natural_joins
from .order_names import with_named_order_items
from .plan import Compiled
from .positions import check_positions
from .precomputed_pass import with_precomputed
from .residual import compile_residual
from .scope import OnionNotBuilt, unsupported
from .select import compile_select
from .settings import DEFAULT_SETTINGS, NO_KEPT_ROWS, KeptRows, Settings, applied
from .string_literals import with_plain_strings
from .update_delete import compile_delete, compile_update
from .values_lists import with_values_as_selects
from .write_ctes import refuse_data_modifying_ctes, with_write_ctes


def compile_statement(
    catalog: Catalog, stmt: exp.Expression, settings: Settings = DEFAULT_SETTINGS
) -> Compiled:
    """The plan of one parsed statement against the catalog snapshot ``catalog`` under
    ``settings``: a pure function -- it reads nothing from the database and changes
    nothing; what the statement needs first (peels, join adjustments, onions built on
    first use) is in the plan's ``needs``, ``joins`` and ``builds``."""
    written = stmt
    try:
        with applied(settings):
            stmt = with_values_as_selects(with_plain_strings(stmt))
            stmt = with_named_order_items(with_column_aliases(catalog, stmt))
            stmt = with_derived_names(stmt)
            check_aggregate_types(catalog, stmt)
            stmt = with_natural_joins(catalog, views.expand(catalog, stmt))
            stmt = with_flat_joins(stmt)
            stmt = with_dependent_keys(catalog, stmt)
            with domains.using(catalog):  # (casts to its enums)
                try:
                    plan = _compile_tree(catalog, stmt, settings.kept_rows)
                except UnsupportedQuery as refusal:
                    # a statement refused over a jsonb field: the field's onion would
                    # let the server answer it (refused still where it cannot be built)
                    wants = field_onions.wanted(catalog, stmt, settings.json_fields)
                    if not wants:
                        raise
                    return Compiled(kind="build", fields=wants, refusal=refusal)
            if plan.residual is not None:
                plan.fields = field_onions.wanted(catalog, stmt, settings.json_fields)
            if settings.design_budget is not None and (
                plan.residual is not None or plan.reduce is not None
            ):
                plan.designs = design_wants.wanted(catalog, stmt, settings.design_budget)
            return plan
    except OnionNotBuilt as first:
        # (refused for another reason: refused before anything is built)
        as_if = compile_statement(as_if_built(catalog), written, settings)
        try:
            without: Compiled | None = compile_statement(
                without_pending(catalog), written, settings
            )
        except UnsupportedQuery:
            without = None
        return Compiled(kind="build", builds=[first.need], as_if=as_if, without_builds=without)
    except RecursionError:  # e.g. thousands of ANDs: the rewrite recurses on the tree
        raise UnsupportedQuery("the statement nests too deeply to rewrite", "nesting") from None


def _with_needs(out: Compiled, c: Compiler) -> Compiled:
    """The plan, with what compiling it found the statement needs and reads, and what it
    assumes of its parameters."""
    out.needs = c.needs
    out.joins = c.joins
    out.tables = c.tables
    if c.assumptions:
        assumed = tuple(c.assumptions)
        out.serves = lambda p: all(holds(p) for holds in assumed)
    return out


# -- queries -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Query:
    """A query to compile: as ``written`` (what split execution evaluates) and as the
    server strategies compile it (``tree``: precomputed columns substituted)."""

    catalog: Catalog
    written: exp.Expression
    tree: exp.Expression
    kept_rows: KeptRows


def _plain_select(tree: exp.Expression) -> bool:
    """A SELECT without WITH: what the server strategies compile."""
    return isinstance(tree, exp.Select) and not tree.args.get("with_")


def _client_aggregated(tree: exp.Expression) -> bool:
    return isinstance(tree, exp.Select) and _plain_select(tree) and client_aggregable(tree)


def _direct(query: Query, reason: str) -> Compiled:
    assert isinstance(query.tree, exp.Select)  # (as the strategy's predicate says)
    c = Compiler(query.catalog)
    out = compile_select(c, query.tree, kept_rows=query.kept_rows)
    return _with_fallback(_with_needs(out, c), query)


def _client_aggregate(query: Query, reason: str) -> Compiled:
    assert isinstance(query.tree, exp.Select)  # (as the strategy's predicate says)
    c = Compiler(query.catalog)
    return _with_fallback(_with_needs(compile_client_aggregate(c, query.tree), c), query)


# why a plan exact for some parameters only runs others by split execution
_UNDECIDED = "a containment its tokens do not decide for every document"


def _with_fallback(out: Compiled, query: Query) -> Compiled:
    """A plan exact only for some parameters (``serves``), given split execution's plan
    for the others; what that plan needs first, the statement needs."""
    if out.serves is None:
        return out
    try:
        other = compile_residual(query.catalog, query.written, _UNDECIDED)
    except UnsupportedQuery:
        return out  # (refused when bound with a parameter the plan does not serve)
    out.otherwise = other
    out.needs += other.needs
    out.joins += other.joins
    out.text_orders += other.text_orders
    return out


def _split(query: Query, reason: str) -> Compiled:
    return compile_residual(query.catalog, query.written, reason)


@dataclass(frozen=True)
class Strategy:
    """One way to compile a query: ``applies`` says from the statement's shape whether it
    can; ``compile`` compiles it (given why the strategies before refused, if any) or
    refuses with :class:`UnsupportedQuery`."""

    name: str
    applies: Callable[[exp.Expression], bool]
    compile: Callable[[Query, str], Compiled]


def _always(tree: exp.Expression) -> bool:
    return True


# In order of preference: the first that applies and compiles the query is its plan.
STRATEGIES: tuple[Strategy, ...] = (
    Strategy("direct", _plain_select, _direct),
    Strategy("client aggregate", _client_aggregated, _client_aggregate),
    Strategy("split execution", _always, _split),
)

# why split execution evaluates a query no other strategy applies to
_NOT_APPLICABLE = "a set operation or WITH query"


def _compile_query(catalog: Catalog, tree: exp.Expression, kept_rows: KeptRows) -> Compiled:
    written = tree
    if isinstance(tree, exp.Select) and _plain_select(tree):
        tree = with_precomputed(catalog, tree)
    query = Query(catalog, written, tree, kept_rows)
    refusal: UnsupportedQuery | None = None
    *tried, last = STRATEGIES
    for strategy in tried:
        if not strategy.applies(tree):
            continue
        # A refusal, not a predicate, decides here: whether the server can evaluate a
        # query over ciphertexts depends on the onion each use of a column finds at
        # its layer and floor, the types compared and the keys shared -- known only
        # by compiling it.  The first refusal is the reason split execution is given.
        try:
            return strategy.compile(query, "")
        except UnsupportedQuery as refused:
            refusal = refusal or refused
    return last.compile(query, str(refusal) if refusal is not None else _NOT_APPLICABLE)


# -- writes ------------------------------------------------------------------------------


def _source_query(catalog: Catalog, tree: exp.Expression) -> Compiled:
    """The SELECT of an INSERT ... SELECT, compiled as a statement of its own."""
    return _compile_tree(catalog, tree, NO_KEPT_ROWS)


# each write statement's compiler
WRITES: dict[type[exp.Expression], Callable[[Compiler, exp.Expression], Compiled]] = {
    exp.Insert: partial(compile_insert, compile_source=_source_query),
    exp.Update: compile_update,  # type: ignore[dict-item]
    exp.Delete: compile_delete,  # type: ignore[dict-item]
}


def _compile_tree(catalog: Catalog, stmt: exp.Expression, kept_rows: KeptRows) -> Compiled:
    check_positions(stmt)
    refuse_data_modifying_ctes(stmt)
    stmt = with_expansions(with_write_ctes(stmt))
    if isinstance(stmt, exp.Select | exp.SetOperation):
        return _compile_query(catalog, stmt, kept_rows)
    for kind, write in WRITES.items():
        if isinstance(stmt, kind):
            c = Compiler(catalog)
            return _with_needs(write(c, stmt), c)
    raise unsupported(stmt, f"{type(stmt).__name__} statement")


__all__ = ["STRATEGIES", "WRITES", "Query", "Strategy", "compile_statement"]
