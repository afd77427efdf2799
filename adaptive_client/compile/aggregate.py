"""Grouped aggregation pushed to the server: a pass of the split execution.

A SELECT of the statement whose FROM items are base tables joined by inner joins,
whose every WHERE / ON conjunct and join the server evaluates exactly, grouped by
columns the server can group (Eq onions), with aggregates ``sum``, ``avg``, ``count``,
``min`` and ``max`` of columns the server can aggregate (Sum onions, Ord onions of exact
types, ``count`` of anything), is computed in two steps, as a parallel database computes
an aggregate from partial ones:

* the server runs ``SELECT keys, partials FROM ... WHERE ... GROUP BY keys`` over the
  ciphertexts -- one row per group, a ``sum`` as its Sum onion's sum (for ASHE: its
  halves and the nonces of the rows summed), an ``avg`` as a sum and a count;
* the client engine reads that relation in the SELECT's place and combines the partial
  rows: ``sum`` of the sums, ``sum`` of the counts, ``min`` of the minima, ... and an
  ``avg`` as PostgreSQL computes it, the numeric quotient of the sum and the count.

HAVING, ORDER BY, DISTINCT, LIMIT and everything the SELECT computes from the keys and
the aggregates stay on the client, unchanged.  The combination is exact whatever the
server's groups (finer groups only add rows), so the pass is correct even where the
server's grouping of ciphertexts splits a group.  Each replacement node carries the
type of the expression it replaces: the client engine's typing (``sum`` of integers is
``bigint``, of numerics keeps the scale) is decided as for the original statement.

Anything else -- an expression aggregated (unless a precomputed onion stores it), a
DISTINCT or FILTERed aggregate, a window, a conjunct only the client evaluates, a
correlated subquery reading the SELECT's tables -- leaves the SELECT to the other
passes: its tables are fetched row by row as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_FLOOR, Decimal
from typing import Any

import psycopg
from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

from ..catalog.metadata import Catalog
from ..engine.engine_types import NOT_HELD
from ..engine.runtime import decimal_scale
from ..errors import AdaptiveError
from .compiler import Compiler
from .plan import Compiled
from .relations import Relation, conjuncts, exists_scope, peels_of, source_of
from .select import compile_select

_AGGREGATES = (exp.Sum, exp.Avg, exp.Count, exp.Min, exp.Max)
_INT_TYPES = {exp.DataType.Type.SMALLINT, exp.DataType.Type.INT, exp.DataType.Type.TINYINT}


@dataclass
class Pushdown:
    """One SELECT aggregated on the server: its relation and the rewrite that makes the
    SELECT read it."""

    relation: Relation
    select: exp.Select
    aliases: set[str]
    alias: str  # the relation's alias in the rewritten SELECT
    keys: list[tuple[str, str]]  # (table alias, column) per key column __k<i>
    key_types: list[exp.DataType | None]
    # per aggregate node of the SELECT: its replacement (built at apply time)
    aggregates: list[tuple[exp.Expression, exp.Expression]] = field(default_factory=list)
    # keys the statement does not group by (columns of a GROUP BY expression or of a
    # CASE condition): used only where they are groupable without a further peel
    extra: set[tuple[str, str]] = field(default_factory=set)
    # the server's query carries a HAVING implied by the statement's (_sum_bound)
    bounded: bool = False
    # WHERE conjuncts over the statement's own grouping columns only, which the server
    # cannot evaluate: each group's keys are its rows' values, so the client filters the
    # groups the server returns (_without_client_conjuncts)
    client_where: list[exp.Expression] = field(default_factory=list)
    # a count(DISTINCT col): right only where the server's groups are the statement's
    distinct: bool = False


def _own_nodes(select: exp.Select, kind: type[Any]) -> list[exp.Expression]:
    """Nodes of ``kind`` of ``select`` itself, not of its subqueries."""
    return [n for n in select.find_all(kind) if n.find_ancestor(exp.Select) is select]


def _own_columns(select: exp.Select) -> list[exp.Column]:
    return [c for c in select.find_all(exp.Column) if c.find_ancestor(exp.Select) is select]


def _named(node: exp.Expression, name: str) -> exp.Alias:
    return exp.Alias(this=node, alias=exp.to_identifier(name))


def _column(alias: str, name: str, dtype: exp.DataType | None) -> exp.Column:
    col = exp.column(name, table=alias, quoted=False)
    if dtype is not None:
        col.type = dtype.copy()
    return col


def plan_pushdowns(
    catalog: Catalog, tree: exp.Expression, schema: dict[str, dict[str, str]], compiles: object
) -> list[Pushdown]:
    """The SELECTs of the (qualified, annotated) statement the server can aggregate,
    each with its relation (``query`` compiled by ``compiles(query)``, a callable giving
    a plan or None)."""
    found: list[Pushdown] = []
    for scope in traverse_scope(tree):
        push = _plan_one(catalog, scope, schema, len(found))
        if push is None:
            continue
        assert callable(compiles)
        plan = compiles(push.relation)
        if not plan:
            plan = _without_client_conjuncts(push, compiles)
        if push.bounded:  # kept only where it compiles and peels nothing more
            query = push.relation.query
            assert query is not None
            having = query.args.get("having")
            query.set("having", None)
            unbounded = compiles(push.relation)
            if (
                isinstance(plan, Compiled)
                and isinstance(unbounded, Compiled)
                and peels_of(plan) <= peels_of(unbounded)
            ):
                query.set("having", having)
            else:
                plan, push.bounded = unbounded, False
        if not plan:
            continue
        extra = {(push.relation.members[a].name.lower(), c) for a, c in push.extra}
        needs = getattr(plan, "needs", [])
        if any((n.table.name.lower(), n.column.name.lower()) in extra for n in needs):
            continue  # grouping by a column the statement does not group by: no peel
        found.append(push)
    return found


def _plan_one(
    catalog: Catalog, scope: Scope, schema: dict[str, dict[str, str]], n: int
) -> Pushdown | None:
    select = scope.expression
    if not isinstance(select, exp.Select) or not _joins_on(select):
        return None
    tables = {a: s for a, s in scope.sources.items() if isinstance(s, exp.Table)}
    if not tables or len(tables) != len(scope.sources):
        return None
    group = select.args.get("group")
    aggs = _own_nodes(select, exp.AggFunc)
    if group is None and not aggs:
        return None
    if _own_nodes(select, exp.Window) or select.args.get("qualify"):
        return None
    if group is not None and set(group.args) - {"expressions"}:
        return None  # GROUPING SETS, ROLLUP, CUBE
    keys: list[tuple[str, str]] = []
    key_types: list[exp.DataType | None] = []
    extra: set[tuple[str, str]] = set()

    def add_key(col: exp.Column, is_extra: bool) -> None:
        key = (col.table, col.name.lower())
        if key not in keys:
            keys.append(key)
            key_types.append(col.type)
            if is_extra:
                extra.add(key)
        elif not is_extra:  # the statement groups by it after all
            extra.discard(key)

    # the server groups by columns; an expression of columns (extract(year from d)) is
    # grouped by its columns, and the client groups their values by the expression
    for g in group.expressions if group is not None else []:
        if isinstance(g, exp.Column) and g.table in tables:
            add_key(g, False)
        elif _over_keys(g, tables):
            for c in g.find_all(exp.Column):
                add_key(c, True)
        else:
            return None
    # sum(CASE WHEN <condition> THEN a ELSE b END): grouped also by the condition's
    # columns, each group's sum is its a's or its b's (Q12, Q14)
    for agg in aggs:
        if isinstance(agg, exp.Sum) and isinstance(agg.this, exp.Case):
            conditions = _case_conditions(agg.this, tables)
            if conditions is None:
                return None
            columns = [c for cond in conditions for c in cond.find_all(exp.Column)]
            for c in columns:
                if (c.table, c.name.lower()) not in keys:
                    # a column the conditions only compare with constants for equality
                    # is one the server would compare over DET anyway
                    add_key(
                        c,
                        not all(
                            _equality_operand(o)
                            for o in columns
                            if (o.table, o.name.lower()) == (c.table, c.name.lower())
                        ),
                    )
    if any(schema[tables[a].name.lower()][c] == NOT_HELD for a, c in keys):
        return None  # (a key the client engine cannot hold: refused naming the column)
    # every aggregate: of a bare column of these tables (or count(*)), nothing else
    partial_items: list[exp.Expression] = []
    outputs: list[tuple[str, str]] = []
    push = Pushdown(
        Relation(f"__a{n}", scope, {}), select, set(tables), f"__pa{n}", keys, key_types
    )
    push.extra = extra
    count_all: list[str] = []  # the partial count(*), made once

    def count_column() -> str:
        if not count_all:
            j = len(outputs)
            partial_items.append(_named(exp.Count(this=exp.Star()), f"__a{j}"))
            outputs.append((f"__a{j}", "BIGINT"))
            count_all.append(f"__a{j}")
        return count_all[0]

    for i, (alias, name) in enumerate(keys):
        partial_items.append(_named(exp.column(name, table=alias, quoted=False), f"__k{i}"))
        outputs.append((f"__k{i}", schema[tables[alias].name.lower()][name]))
    # an aggregate the statement writes twice (in its outputs and its HAVING or ORDER
    # BY) is the server's once and decrypted once: the repeats read the first's partials
    first: dict[str, exp.Expression] = {}
    repeats: list[tuple[exp.Expression, exp.Expression]] = []
    for agg in aggs:
        text = agg.sql()
        if text in first and not isinstance(agg.parent, exp.Filter):
            repeats.append((agg, first[text]))
        else:
            first.setdefault(text, agg)
    repeated = {id(a) for a, _ in repeats}
    for agg in aggs:
        if id(agg) in repeated:
            continue
        if not isinstance(agg, _AGGREGATES) or isinstance(agg.parent, exp.Filter):
            return None
        arg = agg.this
        if isinstance(agg, exp.Sum) and isinstance(arg, exp.Case):
            case = arg.copy()
            branches = [i.args.get("true") for i in case.args.get("ifs") or []]
            for v in [*branches, case.args.get("default")]:
                if v is None or isinstance(v, exp.Null):
                    continue
                if isinstance(v, exp.Column) and v.table in tables:
                    wide = _sum_storage(
                        schema[tables[v.table].name.lower()][v.name.lower()], v.type
                    )
                    if wide is None:
                        return None
                    j = len(outputs)
                    plain_v = exp.column(v.name, table=v.table, quoted=False)
                    partial_items.append(_named(exp.Sum(this=plain_v), f"__a{j}"))
                    outputs.append((f"__a{j}", wide))
                    v.replace(_column(push.alias, f"__a{j}", v.type))
                elif _number(v):
                    # a constant per row: the group's count times it
                    times = exp.Mul(
                        this=exp.Paren(this=v.copy()),
                        expression=_column(push.alias, count_column(), _INT),
                    )
                    times.type = _constant_type(v)
                    v.replace(times)
                else:
                    return None
            replacement = exp.Sum(this=case)
            if agg.type is not None:
                replacement.type = agg.type.copy()
            push.aggregates.append((agg, replacement))
            continue
        if isinstance(agg, exp.Count) and (arg is None or isinstance(arg, exp.Star)):
            j = len(outputs)
            partial_items.append(_named(exp.Count(this=exp.Star()), f"__a{j}"))
            outputs.append((f"__a{j}", "BIGINT"))
            push.aggregates.append((agg, _count_combined(push.alias, f"__a{j}", agg)))
            continue
        if (
            isinstance(agg, exp.Count)
            and isinstance(arg, exp.Distinct)
            and len(arg.expressions) == 1
            and isinstance(arg.expressions[0], exp.Column)
            and arg.expressions[0].table in tables
        ):
            # each group's own count, made by the server (push.distinct: only where its
            # groups are the statement's); the client's sum of one row per group is it
            distinct_col = arg.expressions[0]
            j = len(outputs)
            counted_distinct = exp.Count(
                this=exp.Distinct(
                    expressions=[exp.column(distinct_col.name, table=distinct_col.table)]
                )
            )
            partial_items.append(_named(counted_distinct, f"__a{j}"))
            outputs.append((f"__a{j}", "BIGINT"))
            push.aggregates.append((agg, _count_combined(push.alias, f"__a{j}", agg)))
            push.distinct = True
            continue
        if not (isinstance(arg, exp.Column) and arg.table in tables):
            return None
        source = schema[tables[arg.table].name.lower()][arg.name.lower()]
        plain = exp.column(arg.name, table=arg.table, quoted=False)
        if isinstance(agg, exp.Min | exp.Max):
            j = len(outputs)
            partial_items.append(_named(type(agg)(this=plain), f"__a{j}"))
            outputs.append((f"__a{j}", source))
            push.aggregates.append(
                (agg, _combined(type(agg), push.alias, f"__a{j}", arg.type, agg))
            )
            continue
        if isinstance(agg, exp.Count):
            j = len(outputs)
            partial_items.append(_named(exp.Count(this=plain), f"__a{j}"))
            outputs.append((f"__a{j}", "BIGINT"))
            push.aggregates.append((agg, _count_combined(push.alias, f"__a{j}", agg)))
            continue
        # sum / avg: the server's sum, stored wide enough for any sum of the column
        wide = _sum_storage(source, arg.type)
        if wide is None:
            return None
        j = len(outputs)
        partial_items.append(_named(exp.Sum(this=plain.copy()), f"__a{j}"))
        outputs.append((f"__a{j}", wide))
        summed = _combined(exp.Sum, push.alias, f"__a{j}", arg.type, agg)
        if isinstance(agg, exp.Avg):
            summed.type = None  # (the quotient below is typed; its parts are not read)
        if isinstance(agg, exp.Sum):
            push.aggregates.append((agg, summed))
            continue
        c = len(outputs)
        partial_items.append(_named(exp.Count(this=plain.copy()), f"__a{c}"))
        outputs.append((f"__a{c}", "BIGINT"))
        counted = _combined(exp.Sum, push.alias, f"__a{c}", _INT, None)
        # PostgreSQL's avg is the numeric quotient of the sum and the count
        quotient = exp.Div(this=summed, expression=counted)
        quotient.meta["avg"] = True
        quotient.type = agg.type.copy() if agg.type is not None else None
        push.aggregates.append((agg, quotient))
    replacements = {id(a): r for a, r in push.aggregates}
    for agg, original in repeats:
        push.aggregates.append((agg, replacements[id(original)].copy()))
    # what the SELECT reads outside its aggregates, WHERE and joins (the server's part)
    # must be a key (PostgreSQL's rule, short of a primary key's functional dependency)
    inside = {id(c) for a in aggs for c in a.find_all(exp.Column)}
    for part in [select.args.get("where"), *(select.args.get("joins") or [])]:
        if part is not None:
            inside.update(id(c) for c in part.find_all(exp.Column))
    for col in _own_columns(select):
        if id(col) in inside or col.table not in tables:
            if col.table not in tables and id(col) not in inside and col.table:
                return None  # a column of an outer query: correlated
            continue
        if (col.table, col.name.lower()) not in keys:
            return None
    # a subquery reading this SELECT's tables (correlated to it) -- but for a [NOT]
    # EXISTS of its WHERE the compiler evaluates (or refuses, leaving the SELECT)
    where = select.args.get("where")
    exists = [
        found[0]
        for c in conjuncts(where.this if where is not None else None)
        if (found := exists_scope(c, scope)) is not None
    ]
    for sub in scope.traverse():
        if sub is scope or any(sub is e for e in exists):
            continue
        for col in sub.columns:
            src = source_of(sub, col.table) if col.table else None
            if col.table not in sub.sources and any(src is t for t in tables.values()):
                return None
    if push.distinct and not _statement_groups(group, extra, keys, tables, schema):
        return None  # a group the server split would count its distinct values twice
    query = exp.Select(expressions=partial_items)
    query.set("from_", select.args["from_"].copy())
    if select.args.get("joins"):
        query.set("joins", [j.copy() for j in select.args["joins"]])
    if where is not None:
        query.set("where", where.copy())
    if keys:
        query.set(
            "group",
            exp.Group(expressions=[exp.column(c, table=a, quoted=False) for a, c in keys]),
        )
    bound = _sum_bound(select, tables, keys, extra, schema)
    if bound is not None:
        query.set("having", exp.Having(this=bound))
        push.bounded = True
    push.relation.query = query
    push.relation.outputs = outputs
    push.relation.members = dict(tables)
    return push


def _without_client_conjuncts(push: Pushdown, compiles: Any) -> object:
    """The relation's plan with the WHERE conjuncts that read only the statement's own
    grouping columns left to the client (``push.client_where``), where the rest
    compiles exactly; None otherwise (the query restored).  Filtering a group by its
    keys is filtering its rows by them: every row of a group the server makes has the
    group's key values (its ciphertexts are injective)."""
    query = push.relation.query
    group = push.select.args.get("group")
    where = query.args.get("where") if query is not None else None
    if query is None or where is None or group is None:
        return None
    own = {(g.table, g.name.lower()) for g in group.expressions if isinstance(g, exp.Column)}
    own -= push.extra
    kept, moved = [], []
    for c in conjuncts(where.this):
        cols = list(c.find_all(exp.Column))
        over_keys = bool(cols) and all((col.table, col.name.lower()) in own for col in cols)
        if over_keys and not c.find(exp.AggFunc, exp.Window, exp.Select, exp.Subquery):
            moved.append(c)
        else:
            kept.append(c)
    if not moved:
        return None

    def attempt(server: list[exp.Expression]) -> object:
        query.set("where", exp.Where(this=exp.and_(*server)) if server else None)
        return compiles(push.relation)

    plan = attempt(kept)
    if not plan:
        query.set("where", where)
        return None
    # each moved conjunct the server can evaluate after all goes back to it
    for c in list(moved):
        again = attempt([*kept, c])
        if again:
            kept.append(c)
            moved.remove(c)
            plan = again
    query.set("where", exp.Where(this=exp.and_(*kept)) if kept else None)  # (plan's)
    push.client_where = [c.copy() for c in moved]
    return plan


def _statement_groups(
    group: exp.Group | None,
    extra: set[tuple[str, str]],
    keys: list[tuple[str, str]],
    tables: dict[str, exp.Table],
    schema: dict[str, dict[str, str]],
) -> bool:
    """Whether the server's groups are the statement's: grouped by plain columns only,
    no key the statement does not group by, each key's type one whose ciphertexts are
    equal exactly when its values are (:func:`_exact_key`)."""
    return (
        group is not None
        and not extra
        and all(isinstance(g, exp.Column) for g in group.expressions)
        and all(_exact_key(schema[tables[a].name.lower()][c]) for a, c in keys)
    )


def _exact_key(source: str) -> bool:
    """Whether grouping by the column's ciphertexts makes PostgreSQL's groups: integers,
    dates, booleans, and text (a deterministic collation's equality is the bytes', the
    only kind the client accepts; char(n)'s padding is not encrypted)."""
    return source in _EXACT_KEYS or source == "VARCHAR" or source.startswith("CHAR(")


# a group of up to this many rows is kept by the server only if its largest value could
# reach the HAVING's bound (see _sum_bound)
_BOUND_ROWS = 16
# key types whose DET equality is SQL equality: the server's groups are the statement's
_EXACT_KEYS = {"SMALLINT", "INTEGER", "BIGINT", "DATE", "BOOLEAN"}


def _sum_bound(
    select: exp.Select,
    tables: dict[str, exp.Table],
    keys: list[tuple[str, str]],
    extra: set[tuple[str, str]],
    schema: dict[str, dict[str, str]],
) -> exp.Expression | None:
    """A HAVING for the server's grouped query implied by ``HAVING sum(col) > c`` (or
    ``>=``), which the server cannot decide over a Sum onion: a sum of ``n`` values is at
    most ``n`` times their largest, so a group can pass only if ``count(col) = n`` and
    ``max(col) >= c / n`` (rounded down to the column's scale) for some ``n``, or it has
    more than _BOUND_ROWS values.  The server compares the maximum over the Ord onion and
    drops the groups that cannot pass (TPC-H Q18: each order of fewer than seven lines,
    and most of the others); the client decides the HAVING itself over the rest.  Only
    where the server's groups are the statement's (plain columns of exact key types, no
    extra key): a group split on the server would be dropped for a part's sum."""
    having, group = select.args.get("having"), select.args.get("group")
    if having is None or not _statement_groups(group, extra, keys, tables, schema):
        return None
    for c in conjuncts(having.this):
        if not isinstance(c, exp.GT | exp.GTE) or not _number(c.expression):
            continue
        summed = c.this
        if not (isinstance(summed, exp.Sum) and isinstance(summed.this, exp.Column)):
            continue
        col = summed.this
        if col.table not in tables:
            continue
        source = schema[tables[col.table].name.lower()][col.name.lower()]
        if source.startswith("DECIMAL("):
            scale = decimal_scale(source)
        elif source in ("SMALLINT", "INTEGER", "BIGINT"):
            scale = 0
        else:
            continue
        literal = c.expression
        value = Decimal(literal.this.this if isinstance(literal, exp.Neg) else literal.this)
        value = -value if isinstance(literal, exp.Neg) else value
        step = Decimal(1).scaleb(-scale)
        plain = exp.column(col.name, table=col.table, quoted=False)
        clauses: list[exp.Expression] = [
            exp.GT(this=exp.Count(this=plain.copy()), expression=exp.Literal.number(_BOUND_ROWS))
        ]
        for n in range(1, _BOUND_ROWS + 1):
            floor = (value / n).quantize(step, rounding=ROUND_FLOOR)
            number = exp.Literal.number(str(abs(floor)))
            clauses.append(
                exp.And(
                    this=exp.EQ(
                        this=exp.Count(this=plain.copy()), expression=exp.Literal.number(n)
                    ),
                    expression=exp.GTE(
                        this=exp.Max(this=plain.copy()),
                        expression=exp.Neg(this=number) if floor < 0 else number,
                    ),
                )
            )
        bound = clauses[0]
        for clause in clauses[1:]:
            bound = exp.Or(this=bound, expression=clause)
        return bound
    return None


_INT = exp.DataType.build("int")


def _over_keys(node: exp.Expression, tables: dict[str, exp.Table]) -> bool:
    """An expression of columns of ``tables`` only, which the client can compute from
    their values (no aggregate, window, subquery)."""
    if node.find(exp.AggFunc, exp.Window, exp.Select, exp.Subquery, exp.Star):
        return False
    cols = list(node.find_all(exp.Column))
    return bool(cols) and all(c.table in tables for c in cols)


def _case_conditions(case: exp.Case, tables: dict[str, exp.Table]) -> list[exp.Expression] | None:
    """The WHEN conditions of a searched CASE, if each reads only columns of
    ``tables`` (None otherwise, or for a simple CASE x WHEN ...)."""
    if case.this is not None:
        return None
    conditions = [i.this for i in case.args.get("ifs") or []]
    if not conditions or not all(_over_keys(c, tables) for c in conditions):
        return None
    return conditions


def _equality_operand(col: exp.Column) -> bool:
    """``col = 'x'``, ``col <> 'x'``, ``col IN ('x', 'y')``: compared with constants."""
    parent = col.parent
    if isinstance(parent, exp.EQ | exp.NEQ):
        other = parent.expression if parent.this is col else parent.this
        return isinstance(other, exp.Literal | exp.Boolean)
    if isinstance(parent, exp.In) and parent.this is col and not parent.args.get("query"):
        return bool(parent.expressions) and all(
            isinstance(e, exp.Literal) for e in parent.expressions
        )
    return False


def _constant_type(node: exp.Expression) -> exp.DataType:
    """The type PostgreSQL gives a numeric constant, with its scale: ``int`` for
    ``1``, ``numeric(38,2)`` for ``2.50`` (a product with it keeps that scale)."""
    while isinstance(node, exp.Neg | exp.Paren):
        node = node.this
    text = str(node.this)
    if "." not in text and "e" not in text.lower():
        return exp.DataType.build("int")
    return exp.DataType.build(f"decimal(38,{len(text.partition('.')[2])})")


def _number(node: exp.Expression) -> bool:
    """A numeric constant (``1``, ``0.00``, ``-1``)."""
    if isinstance(node, exp.Neg):
        node = node.this
    return isinstance(node, exp.Literal) and node.is_number


def _joins_on(select: exp.Select) -> bool:
    """Whether every join of ``select`` is an inner, cross or outer join with its
    condition in ON: the server's query runs them as written (outer joins included --
    compiled exactly, the server's join is the statement's)."""
    for j in select.args.get("joins") or []:
        if (j.kind or "").upper() not in ("", "INNER", "CROSS", "OUTER"):
            return False  # SEMI, ANTI, LATERAL, ...
        if j.args.get("using") or j.args.get("method"):
            return False  # USING and NATURAL merge columns the keys would name
    return True


def _combined(
    fn: type, alias: str, name: str, dtype: exp.DataType | None, replaced: exp.Expression | None
) -> exp.Expression:
    """``fn(<alias>.<name>)`` typed as the expression it replaces; its column typed
    ``dtype`` -- the source column's type, so that the client engine types a sum of
    partial sums as PostgreSQL types the sum of the column (``count``'s partials are
    typed ``int``: their sum is then ``bigint``, as a count is)."""
    node = fn(this=_column(alias, name, dtype))
    if replaced is not None and replaced.type is not None:
        node.type = replaced.type.copy()
    return node


def _count_combined(alias: str, name: str, replaced: exp.Expression) -> exp.Expression:
    """A count from its partial counts: their sum, and 0 where there are none (an
    aggregate without GROUP BY over no rows counts 0, where the sum of no partials is
    NULL)."""
    node = exp.Coalesce(
        this=_combined(exp.Sum, alias, name, _INT, replaced), expressions=[exp.Literal.number(0)]
    )
    if replaced.type is not None:
        node.type = replaced.type.copy()
    return node


def _sum_storage(source: str, dtype: exp.DataType | None) -> str | None:
    """The client engine's type for the server's sums of a column of DuckDB type
    ``source``: any sum of the column fits (None: not a summable type)."""
    if source.startswith("DECIMAL("):
        return f"DECIMAL(38,{decimal_scale(source)})"
    if source in ("SMALLINT", "INTEGER"):
        return "BIGINT"
    if source == "BIGINT":
        return "DECIMAL(38,0)"
    return None


def apply(push: Pushdown) -> None:
    """Rewrite the SELECT to read the relation: FROM the relation, no WHERE, grouped by
    its key columns, each aggregate the combination of the partials."""
    select = push.select
    select.set("joins", None)  # (the server's query applies them)
    client_where = [c.copy() for c in push.client_where]
    select.set("where", exp.Where(this=exp.and_(*client_where)) if client_where else None)
    for node, replacement in push.aggregates:
        node.replace(replacement)
    for col in _own_columns(select):
        if col.table in push.aliases:
            i = push.keys.index((col.table, col.name.lower()))
            col.replace(_column(push.alias, f"__k{i}", push.key_types[i] or col.type))
    select.set(
        "from_",
        exp.From(
            this=exp.Table(
                this=exp.to_identifier(push.relation.name),
                alias=exp.TableAlias(this=exp.to_identifier(push.alias)),
            )
        ),
    )


def compiles_exactly(catalog: Catalog, rel: Relation) -> object:
    """The relation's server query compiled with every filter exact (no candidate
    filters: a partial aggregate must see exactly the rows the statement aggregates),
    or None."""
    assert rel.query is not None
    try:
        c = Compiler(catalog)
        plan = compile_select(c, rel.query.copy())
    # (compiling is the test, a refusal the answer: see split.try_compile)
    except (AdaptiveError, psycopg.Error):
        return None
    if plan.residual is not None:
        return None
    plan.needs, plan.joins, plan.tables = c.needs, c.joins, c.tables
    return plan
