"""The design analysis: what a workload's statements ask of a schema's onions.

Per statement scope (sqlglot's optimizer: qualified, constants folded), each use of a
column says which onion would let the server do the work:

* Eq for equality, IN, grouping, DISTINCT and joins; Ord for ranges, ORDER BY, MIN/MAX
  and ``LIKE 'prefix%'``; Sum for SUM/AVG of the column;
* for what no single column's onion offers, a precomputed onion
  (:mod:`adaptive_client.catalog.precomputed`): an aggregated expression
  (``sum(l_extendedprice * (1 - l_discount))``: Sum), a grouped expression
  (``extract(year from o_orderdate)``: Eq), an expression compared with a constant or
  ordered by (Ord), a predicate the server cannot evaluate (``o_comment NOT LIKE
  '%special%requests%'``: a boolean with an Eq onion) -- each with its type as
  PostgreSQL types it;
* columns of one table compared with each other (``l_commitdate < l_receiptdate``).

Two users read the same analysis, so that they agree: the offline designer
(``adaptive-db advise``, admin/advise.py) over a statement log, and the online design
(:mod:`.design_wants`), which builds what one statement asks for when it first runs.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import cast

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, traverse_scope

from ..catalog.metadata import ColumnMeta
from ..catalog.precomputed import canonical, compile_expression, strip_parens
from ..engine.engine_types import outputs_named
from ..errors import AdaptiveError, ConfigError
from ..syntax.names import fold_names
from ..values.encodings import SqlType
from .fold import fold_constants

Columns = Mapping[str, SqlType]  # column -> type
Tables = Mapping[str, Columns]  # table -> its columns

_NUMERIC_TYPES = {"smallint", "integer", "bigint", "numeric"}
_BOOLEAN = (exp.Not, exp.Like, exp.And, exp.Or, exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE)


@dataclass
class Proposal:
    """What the statements ask of one schema."""

    onions: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    used_by: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    # (table, canonical expression) -> onions, the expression's type, statements
    precomputed: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    precomputed_type: dict[tuple[str, str], str] = field(default_factory=dict)
    precomputed_by: dict[tuple[str, str], set[str]] = field(
        default_factory=lambda: defaultdict(set)
    )
    sums: bool = True  # propose Sum onions at all
    compared: list[tuple[str, str, str]] = field(default_factory=list)  # table, a, b
    # columns equated with another column (a join, a semi-join): their Eq onions must
    # share a key with the other side's, which only Eq onions do
    joined: set[tuple[str, str]] = field(default_factory=set)
    unread: list[tuple[str, str]] = field(default_factory=list)  # statement, why


def propose(tables: Tables, statements: Iterable[str], sums: bool = True) -> Proposal:
    """What ``statements`` (a statement log's texts, labelled ``#1``, ``#2``, ...) ask of
    the schema ``tables`` (table -> column -> type).  ``sums``: propose Sum onions at
    all -- False leaves every sum to the client."""
    proposal = Proposal(sums=sums)
    for n, text in enumerate(statements, 1):
        try:
            tree = sqlglot.parse_one(_literal_placeholders(text), read="postgres")
            tree = tree.transform(fold_names, copy=False)  # (the catalog's names: names.py)
            analyse(tables, tree, f"#{n}", proposal)
        except (SqlglotError, AdaptiveError) as exc:
            proposal.unread.append((text, str(exc).splitlines()[0]))
    return proposal


def analyse(tables: Tables, tree: exp.Expression, label: str, proposal: Proposal) -> None:
    """Add what one parsed statement asks of ``tables`` to ``proposal`` (its placeholders
    read as NULL: shapes, not values).  Raises sqlglot's errors where the statement names
    what the schema does not have."""
    tree = tree.copy()
    for placeholder in list(tree.find_all(exp.Placeholder)):
        placeholder.replace(exp.Null())
    schema = {name: {c: _glot_type(t) for c, t in types.items()} for name, types in tables.items()}
    tree = qualify(
        outputs_named(tree),
        schema=cast(dict[str, object], schema),
        dialect="postgres",
        quote_identifiers=False,
        identify=False,
    )
    _statement(tables, fold_constants(tree), label, proposal)


def _literal_placeholders(text: str) -> str:
    """The rewrite's placeholders (``%(u0)s``) as NULL: the designer reads shapes, not values."""
    return re.sub(r"%\(\w+\)s", "NULL", text)


def _glot_type(t: SqlType) -> str:
    return t.sql()


def _statement(tables: Tables, tree: exp.Expression, label: str, proposal: Proposal) -> None:
    for scope in traverse_scope(tree):
        _scope(tables, scope, label, proposal)


def _scope(tables: Tables, scope: Scope, label: str, proposal: Proposal) -> None:
    sources = {
        alias: src.name.lower()
        for alias, src in scope.sources.items()
        if isinstance(src, exp.Table) and src.name.lower() in tables
    }
    if not sources:
        return
    select = cast(exp.Expression, scope.expression)

    def own(node: exp.Expression) -> str | None:
        """The one table all of ``node``'s columns read, in this scope (or None)."""
        cols = list(node.find_all(exp.Column))
        found = {sources.get(c.table) for c in cols}
        if not cols or len(found) != 1 or None in found:
            return None
        if any(_in_subquery(c, select) for c in cols):
            return None
        return found.pop()

    def column(node: exp.Expression, sources: dict[str, str] = sources) -> tuple[str, str] | None:
        node = strip_parens(node) if isinstance(node, exp.Paren) else node
        if isinstance(node, exp.Column) and node.table in sources:
            return sources[node.table], node.name.lower()
        return None

    def need(node: exp.Expression, onion: str) -> None:
        col = column(node)
        if col is not None:
            if onion != "Sum" or proposal.sums:
                proposal.onions[col].add(onion)
            proposal.used_by[col].add(label)
            return
        if onion == "Sum" and not proposal.sums:
            return
        table = own(node)
        if table is not None and not isinstance(node, exp.Literal):
            _precompute(table, tables[table], node, onion, label, proposal)

    for node in _own_nodes(select):
        if isinstance(node, exp.Column) and node.table in sources:
            key = (sources[node.table], node.name.lower())
            proposal.onions[key]
            proposal.used_by[key].add(label)
        elif isinstance(node, exp.EQ | exp.NEQ | exp.In):
            need(node.this, "Eq")
            if isinstance(node, exp.EQ | exp.NEQ):
                need(node.expression, "Eq")
                sides = [strip_parens(e) for e in (node.this, node.expression)]
                if all(isinstance(e, exp.Column) for e in sides):
                    proposal.joined.update(c for c in map(column, sides) if c is not None)
            elif node.args.get("query") is not None:
                operand = column(node.this)
                if operand is not None:
                    proposal.joined.add(operand)
        elif isinstance(node, exp.LT | exp.LTE | exp.GT | exp.GTE | exp.Between):
            others = [node.expression] if not isinstance(node, exp.Between) else []
            need(node.this, "Ord")
            for other in others:
                need(other, "Ord")
            left, right = column(node.this), column(others[0]) if others else None
            if left and right and left[0] == right[0] and left[1] != right[1]:
                proposal.compared.append((left[0], left[1], right[1]))
        elif isinstance(node, exp.Sum | exp.Avg):
            need(node.this, "Sum")
        elif isinstance(node, exp.Min | exp.Max | exp.Ordered):
            need(node.this, "Ord")
        elif isinstance(node, exp.Like | exp.ILike):
            _like(node, column, own, tables, label, proposal)
        elif isinstance(node, exp.Count) and isinstance(node.this, exp.Distinct):
            for e in node.this.expressions:
                need(e, "Eq")
    group = select.args.get("group")
    for e in group.expressions if group is not None else []:
        need(e, "Eq")
    distinct = select.args.get("distinct")
    if distinct is not None:
        for e in select.expressions:
            need(cast(exp.Expression, e.unalias()), "Eq")


def _like(
    node: exp.Like | exp.ILike,
    column: object,
    own: object,
    tables: Tables,
    label: str,
    proposal: Proposal,
) -> None:
    pattern = node.expression
    col = column(node.this)  # type: ignore[operator]
    if isinstance(node, exp.Like) and isinstance(pattern, exp.Literal) and col is not None:
        text = pattern.this
        if re.fullmatch(r"[^%_\\]+%", text):  # a prefix: a range over Ord
            proposal.onions[col].add("Ord")
            proposal.used_by[col].add(label)
            return
        # any other pattern: the predicate itself, precomputed, where it is a WHERE
        # conjunct the server would otherwise leave to the client
        parent = node.parent
        whole: exp.Expression = parent if isinstance(parent, exp.Not) else node
        table = own(whole)  # type: ignore[operator]
        if table is not None:
            _precompute(table, tables[table], whole, "Eq", label, proposal)


def _own_nodes(select: exp.Expression) -> Iterable[exp.Expression]:
    """The nodes of one scope (nested queries are scopes of their own)."""
    stack = list(select.iter_expressions())
    while stack:
        node = stack.pop()
        if isinstance(node, exp.Query | exp.Subquery):
            continue
        yield node
        stack.extend(node.iter_expressions())


def _in_subquery(node: exp.Expression, select: exp.Expression) -> bool:
    parent = node.parent
    while parent is not None and parent is not select:
        if isinstance(parent, exp.Query | exp.Subquery):
            return True
        parent = parent.parent
    return False


def _precompute(
    table: str, types: Columns, node: exp.Expression, onion: str, label: str, proposal: Proposal
) -> None:
    """Propose ``node`` (over one table's columns) as a precomputed onion, if the client
    can compute it and its type is known."""
    bare = strip_parens(node).copy()
    for c in bare.find_all(exp.Column):
        c.set("table", None)
    text = canonical(bare)

    columns = {c: ColumnMeta(c, t, True, {}) for c, t in types.items()}
    try:
        compile_expression(text, columns, "advise")
    except ConfigError:
        return
    sql_type = type_of(bare, types)
    if sql_type is None:
        return
    if onion == "Sum" and sql_type == "boolean":
        return
    key = (table, text)
    proposal.precomputed[key].add(onion)
    proposal.precomputed_type[key] = sql_type
    proposal.precomputed_by[key].add(label)


def type_of(node: exp.Expression, types: Columns) -> str | None:
    """The SQL type of an expression the client computes, as PostgreSQL types it: a
    numeric's scale exact (a product's is the sum of its factors', a sum's the larger)."""
    if isinstance(node, _BOOLEAN):
        return "boolean"
    if isinstance(node, exp.Extract):
        return "numeric(9,0)"
    if isinstance(node, exp.Substring):
        return "text"
    shape = _numeric_shape(node, types)
    if shape is None:
        return None
    digits, scale = shape
    if scale == 0 and digits <= 18:
        return "bigint"
    # the client engine holds numerics of at most 38 digits: a wider bound (a product of
    # three numeric(15,2) has 47) is capped there -- a value past it is refused when
    # written, with its own error, rather than every statement reading the column
    return f"numeric({min(digits, max(38, scale + 1))},{scale})"


def _numeric_shape(node: exp.Expression, types: Columns) -> tuple[int, int] | None:
    """(integer digits + scale, scale) bounds of a numeric expression."""
    if isinstance(node, exp.Paren):
        return _numeric_shape(node.this, types)
    if isinstance(node, exp.Column):
        t = types.get(node.name.lower())
        if t is None or t.name not in _NUMERIC_TYPES:
            return None
        if t.name == "numeric":
            if t.precision is None:
                return None
            return t.precision, t.scale or 0
        return {"smallint": 5, "integer": 10, "bigint": 19}[t.name], 0
    if isinstance(node, exp.Literal) and not node.is_string:
        d = Decimal(node.this)
        exponent = d.as_tuple().exponent
        scale = -exponent if isinstance(exponent, int) and exponent < 0 else 0
        return max(len(d.as_tuple().digits), scale + 1), scale
    if isinstance(node, exp.Neg):
        return _numeric_shape(node.this, types)
    if isinstance(node, exp.Add | exp.Sub | exp.Mul):
        a, b = _numeric_shape(node.this, types), _numeric_shape(node.expression, types)
        if a is None or b is None:
            return None
        if isinstance(node, exp.Mul):
            return a[0] + b[0], a[1] + b[1]
        scale = max(a[1], b[1])
        return max(a[0] - a[1], b[0] - b[1]) + scale + 1, scale
    return None


__all__ = ["Columns", "Proposal", "Tables", "analyse", "propose", "type_of"]
