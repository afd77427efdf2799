"""The relations of split execution: the server SELECTs whose decrypted rows the client
engine reads in their tables' place, and the run-time semi-join filters between them.

A :class:`Relation` is FROM items of one scope the server joins and filters, projected
to the columns the client's statement reads; a :class:`Semi` is a filter on one of its
columns by the values another relation fetched first.  Also the small walks over a
statement's scopes that planning them shares (:func:`conjuncts`, :func:`source_of`,
:func:`exists_scope`).
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Any, cast

from sqlglot import exp
from sqlglot.optimizer.scope import Scope as GlotScope

from ..catalog.metadata import Catalog
from .plan import Compiled

# the values of each run-time semi-join filter of the statement being fetched


SEMI_VALUES: ContextVar[dict[str, list[Any]]] = ContextVar("SEMI_VALUES")


@dataclass
class Semi:
    """A run-time filter of a relation: its column ``target`` (alias, column) equals one
    of the distinct values of ``source_column`` in the rows of the relation ``source``
    (fetched before it) that pass ``client_filter`` -- an exact semi-join reduction,
    sent to the server as ``target = ANY(<those values, encrypted>)``."""

    name: str
    target: tuple[str, str]
    source: Relation | None
    source_column: tuple[str, str]
    client_filter: list[exp.Expression]
    # or: the values an uncorrelated ``IN (subquery)`` gives, once its relations are in
    query: exp.Expression | None = None
    after: list[Relation] = field(default_factory=list)
    # ``target <op> (uncorrelated scalar subquery)``: ``op`` (GT, GTE, LT, LTE) against
    # the one value the subquery gives (none: no row passes, as against NULL)
    op: type[exp.Binary] = exp.EQ
    scalar: bool = False
    # (scale, largest value) of the integer or numeric column a scalar is compared with
    domain: tuple[int, Decimal] | None = None

    def sources(self) -> list[Relation]:
        return [self.source] if self.source is not None else self.after

    def scalar_bound(self, value: Any) -> list[Any]:
        """The server's bound for the subquery's value: rounded outwards to the column's
        scale (an average has more digits than the column) under ``>=`` / ``<=``, a
        superset of the rows the exact comparison keeps, which the client applies after;
        none (no row passes) for NULL."""
        if value is None or self.domain is None:
            return []
        scale, largest = self.domain
        lower = self.op in (exp.GT, exp.GTE)
        step = Decimal(1).scaleb(-scale)
        bound = Decimal(value).quantize(step, rounding=ROUND_FLOOR if lower else ROUND_CEILING)
        if bound > largest:  # past every value the column holds
            if lower:
                return []  # no value passes
            bound = largest
        elif bound < -largest:
            if not lower:
                return []
            bound = -largest
        return [int(bound) if scale == 0 else bound]

    def conjunct(self) -> exp.Expression:
        alias, column = self.target
        op = self.op
        if self.scalar:  # the bound rounded outwards: not strict
            op = exp.GTE if op in (exp.GT, exp.GTE) else exp.LTE
        node = op(
            this=exp.column(column, table=alias, quoted=False),
            expression=exp.Any(this=exp.Paren(this=exp.Placeholder(this=self.name))),
        )
        return cast(exp.Expression, node)


@dataclass
class Relation:
    """One server SELECT: the FROM items ``members`` (aliases in their scope) joined and
    filtered by ``conjuncts``, projected to ``columns``."""

    name: str
    scope: GlotScope
    members: dict[str, exp.Table]
    conjuncts: list[exp.Expression] = field(default_factory=list)
    columns: list[tuple[str, str]] = field(default_factory=list)  # (alias, column)
    semis: list[Semi] = field(default_factory=list)
    # a SELECT the server aggregates (aggregate.py): its own query, and the columns
    # (name, client engine type) of its rows
    query: exp.Select | None = None
    outputs: list[tuple[str, str]] = field(default_factory=list)
    # read only as a set (the tables of an EXISTS or IN subquery): the server may ship
    # each distinct row once (see compile_relation)
    as_set: bool = False
    # its WHERE / ON conjuncts may leave the client's statement once the server applies
    # them exactly (a SELECT of inner joins: see drop_applied)
    inner: bool = False
    pushed: list[exp.Expression] = field(default_factory=list)  # of ``conjuncts``
    # [NOT] EXISTS conjuncts the server evaluates (server_exists): out of the client's
    # statement, their tables never fetched -- the server SELECT must apply them
    required: list[exp.Expression] = field(default_factory=list)

    @property
    def merged(self) -> bool:
        return len(self.members) > 1

    def describe(self) -> str:
        """The server SELECT in the application's terms: its tables (and aliases)."""
        names = [t.name if t.name == a else f"{t.name} {a}" for a, t in self.members.items()]
        grouped = ", grouped and aggregated by the server" if self.query is not None else ""
        return "the rows of " + " joined with ".join(names) + grouped

    def column_name(self, alias: str, column: str) -> str:
        """The column's name in the client engine's table."""
        return f"{alias}__{column}" if self.merged else column

    def select(
        self, catalog: Catalog, conjuncts: list[exp.Expression], distinct: bool = False
    ) -> exp.Select:
        """The server SELECT over plain names (before the rewrite to ciphertexts)."""
        columns = self.columns or [
            (alias, next(iter(catalog.table(t.name).columns)))
            for alias, t in list(self.members.items())[:1]
        ]
        sel = exp.Select(expressions=[exp.column(c, table=a, quoted=False) for a, c in columns])
        items = [
            exp.Table(
                this=exp.to_identifier(t.name),
                alias=exp.TableAlias(this=exp.to_identifier(alias)),
            )
            for alias, t in self.members.items()
        ]
        sel.set("from_", exp.From(this=items[0]))
        if len(items) > 1:
            sel.set("joins", [exp.Join(this=item) for item in items[1:]])
        if conjuncts:
            sel.set("where", exp.Where(this=exp.and_(*[c.copy() for c in conjuncts])))
        if distinct:
            sel.set("distinct", exp.Distinct())
        return sel


def conjuncts(node: exp.Expression | None) -> list[exp.Expression]:
    if node is None:
        return []
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.And):
        return conjuncts(node.this) + conjuncts(node.expression)
    return [node]


def source_of(scope: GlotScope, alias: str) -> object:
    s: GlotScope | None = scope
    while s is not None:
        if alias in s.sources:
            return s.sources[alias]
        s = s.parent
    return None


def exists_scope(c: exp.Expression, scope: GlotScope) -> tuple[GlotScope, set[str]] | None:
    """For a conjunct ``[NOT] EXISTS (SELECT ... FROM <tables> WHERE ...)`` of
    ``scope``'s WHERE whose SELECT reads only its own base tables and base tables of
    ``scope`` (correlated through them): its scope and the aliases of ``scope`` it
    reads.  The compiler evaluates such a subquery exactly (``Compiler.exists``)."""
    node = c
    while isinstance(node, exp.Not | exp.Paren):
        node = node.this
    if not isinstance(node, exp.Exists):
        return None
    inner = node.this
    while isinstance(inner, exp.Subquery):
        inner = inner.this
    child = next((s for s in scope.subquery_scopes if s.expression is inner), None)
    if child is None or child.subquery_scopes or child.derived_table_scopes:
        return None
    if not child.sources or not all(isinstance(t, exp.Table) for t in child.sources.values()):
        return None
    outer: set[str] = set()
    for col in child.columns:
        if not col.table:
            return None
        if col.table in child.sources:
            continue
        if not isinstance(scope.sources.get(col.table), exp.Table):
            return None  # a column of a query further out, or of a derived table
        outer.add(col.table)
    return (child, outer) if outer else None


def peels_of(plan: Compiled) -> set[tuple[str, str, str, str]]:
    """The peels compiling a plan asked for: (table, column, onion, layer)."""
    return {(n.table.name, n.column.name, n.onion.onion.value, n.layer) for n in plan.needs}
