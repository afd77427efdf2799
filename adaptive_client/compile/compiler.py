"""SQL over plain names → SQL over onion columns, in passes over sqlglot expressions.

For every use of a column the compiler asks for a *capability* (:class:`Cap`): decrypt
it, compare it for equality, order it, sum it, search it.  :meth:`Compiler.require`
picks the onion that offers the capability at its actual layer or, failing that, the
onion that would offer it once peeled, and records a :class:`Need`.  Constants and
parameters compared with a column are encrypted for that onion at that layer, as
parameters.  Results are decrypted from the cheapest onion.  What the server cannot do
over ciphertexts but the client can do exactly after decryption (arithmetic in the
projection, ``SET x = x + 1``, finishing a sort on string-prefix ties) is done on the
client; anything else raises :class:`UnsupportedQuery` naming the construct.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, replace
from itertools import count
from typing import Any

from sqlglot import exp

from ..catalog import recipes
from ..catalog.metadata import Catalog, OnionColumn, TableMeta
from ..catalog.onions import Cap, Onion, capabilities
from ..errors import LayerFloorViolation, UnsupportedQuery
from ..syntax.params import escape_percent
from ..values.json_encoding import operator_refusal as json_operator_refusal
from ..values.json_encoding import refusal as json_refusal
from .bounded_subqueries import BOUNDING, add_bounds, bounded
from .comparands import comparand_builder, comparand_list_builder
from .constants import (
    interval_constant,
    like_runs,
    number_constant,
    range_constant,
    range_truth,
    regex_runs,
    value_of,
)
from .containment import PREDICATES as CONTAINMENT_PREDICATES
from .containment import candidate_filter as containment_filter
from .containment import exact_filter as exact_containment
from .needs import BuildNeed, JoinNeed, pending_below_floor, pending_offering
from .plan import ColumnValue, Need, OpenedValue, ParamBuilder, Params, RowFn
from .scope import ColumnRef, NestedScope, OnionNotBuilt, Scope, unsupported


def _plain_subquery(
    node: exp.Expression, query: exp.Expression, what: str, allowed: tuple[str, ...] = ()
) -> exp.Select:
    """The SELECT of an EXISTS or IN the server's statement can hold: FROM, joins and
    WHERE only (and the clauses ``allowed``), no aggregate, window or further subquery."""
    inner = query
    while isinstance(inner, exp.Subquery):
        inner = inner.this
    if not isinstance(inner, exp.Select):
        raise unsupported(node, f"{what} of other than a SELECT")
    extra = {k for k, v in inner.args.items() if v} - {
        "expressions",
        "from_",
        "joins",
        "where",
        *allowed,
    }
    if extra or inner.args.get("from_") is None:
        raise unsupported(node, f"{what} of a SELECT with " + ", ".join(sorted(extra)).upper())
    if inner.find(exp.AggFunc, exp.Window) or any(
        isinstance(n, exp.Select) and n is not inner for n in inner.walk()
    ):
        raise unsupported(node, f"{what} with aggregates, windows or subqueries")
    return inner


def _one_row(node: exp.Expression) -> bool:
    """A scalar subquery with LIMIT 1 (its one row or none)."""
    inner = node.this if isinstance(node, exp.Subquery) else None
    limit = inner.args.get("limit") if isinstance(inner, exp.Select) else None
    count = limit.expression if isinstance(limit, exp.Limit) else None
    return isinstance(count, exp.Literal) and count.name == "1"


def _quantified(node: exp.Expression) -> tuple[str, exp.Expression] | None:
    """("ANY" | "ALL", the array) for ``ANY(...)`` / ``SOME(...)`` / ``ALL(...)``."""
    if isinstance(node, exp.Any):
        inner = node.this
        while isinstance(inner, exp.Paren):
            inner = inner.this
        return "ANY", inner
    if isinstance(node, exp.All):
        return "ALL", node.this
    if isinstance(node, exp.Anonymous) and node.name.upper() in ("ALL", "SOME"):
        if len(node.expressions) != 1:
            raise unsupported(node, node.name.upper())
        return ("ALL" if node.name.upper() == "ALL" else "ANY"), node.expressions[0]
    return None


@dataclass(frozen=True)
class CompileMode:
    """How exactly a filter compiles.  A server statement whose rows the client filters
    again (split execution's fetches: every conjunct is applied again by the client
    engine) may return a superset of its rows: then ``candidate_filters`` lets LIKE /
    ILIKE / regex compile to a trigram filter over the Substr onion and containment /
    membership (``@>``, ``?``, ``&&``, ``= ANY(col)``) to a token filter over the Contain
    onion (``containment.py``), and
    ``widen_inexact_ranges`` lets a range on a string's prefix-only Ord onion compile to
    the prefix's range, bounds included -- both never under NOT.  ``semi_values``: the
    run-time semi-join filters' values (``%(semiN)s``, a list when the fetch is bound)."""

    candidate_filters: bool = False
    widen_inexact_ranges: bool = False
    semi_values: ContextVar[dict[str, list[Any]]] | None = None


# the statement as written: every filter exact
EXACT = CompileMode()


class Compiler:
    """The state of one statement's compilation: its parameters, the peels and join
    adjustments it needs, the tables it reads; the passes above call its methods for the
    FROM items, the predicates and the onions each use of a column takes."""

    mode: CompileMode = EXACT

    def __init__(self, catalog: Catalog, mode: CompileMode = EXACT) -> None:
        self.catalog = catalog
        self.mode = mode
        self.params: dict[str, ParamBuilder] = {}
        self.needs: list[Need] = []
        self.joins: list[JoinNeed] = []  # column pairs to bring under one key first
        # compiling a value an UPDATE assigns (the column's type then takes it)
        self.assigning = False
        self._n = count()
        self.tables: list[TableMeta] = []
        self._negations = 0  # how many NOTs enclose the predicate being compiled
        # the statement groups (GROUP BY or HAVING): min / max of OPE ciphertexts per
        # group by the built-in text aggregate (see ``extreme``)
        self.grouped = False
        # what the plan assumes of the parameters it is bound with (``assume``)
        self.assumptions: list[Callable[[Params], bool]] = []
        # compiling a read-modify-write's assignments: the stored columns they read, by
        # position in the row (``row_value``)
        self.opened: dict[int, ColumnValue] | None = None

    @property
    def negated(self) -> bool:
        """Whether the predicate being compiled is under a NOT."""
        return self._negations > 0

    # -- parameters ----------------------------------------------------------------------
    def param(self, builder: ParamBuilder) -> exp.Placeholder:
        name = f"p{next(self._n)}"
        self.params[name] = builder
        return exp.Placeholder(this=name)

    def assume(self, holds: Callable[[Params], bool]) -> None:
        """The plan is exact only for parameters for which ``holds`` (a containment the
        tokens decide for some documents only): the statement's plan then carries
        another for the rest (compile/statements.py)."""
        self.assumptions.append(holds)

    def value_of(self, node: exp.Expression) -> ParamBuilder | None:
        """A builder for a constant/parameter node, or None if it is not one."""
        return value_of(node, self.mode.semi_values)

    def row_value(self, value: ColumnValue) -> RowFn:
        """The row function reading the stored column ``value`` decrypts: ``value``
        itself, or, while ``opened`` collects them, one that reads the plaintext the
        caller put at its position (an array keeps its own decryption: its internal form
        is not what a result opens)."""
        if self.opened is None:
            return value
        self.opened.setdefault(value.index, value)
        if value.column.type.element is not None:
            return value
        return OpenedValue(value.index)

    # -- choosing onions -------------------------------------------------------------------
    def require(self, ref: ColumnRef, cap: Cap, prefer: OnionColumn | None = None) -> OnionColumn:
        col = ref.column
        if cap in (Cap.EQ, Cap.ORD):
            refused = json_refusal(col.encoding, cap.value)
            if refused is not None:  # json: PostgreSQL has neither
                raise refused
        candidates = recipes.onion_order(col)
        if prefer is not None and cap in capabilities(prefer.onion, prefer.layer, prefer.ope_exact):
            return prefer
        for oc in candidates:
            if cap in capabilities(oc.onion, oc.layer, oc.ope_exact):
                return oc
        floor_hit: OnionColumn | None = None
        for oc in candidates:
            below = oc.stack[oc.stack.index(oc.layer) + 1 :]
            for layer in below:
                if cap not in capabilities(oc.onion, layer, oc.ope_exact):
                    continue
                if oc.floor is not None and oc.stack.index(layer) > oc.stack.index(oc.floor):
                    floor_hit = oc
                    break
                self.needs.append(Need(ref.table, col, oc, layer, cap))
                return oc
        if floor_hit is not None:
            raise LayerFloorViolation(
                f"{ref.table.name}.{col.name}: {cap.value} needs its {floor_hit.onion} onion "
                f"below its floor {floor_hit.floor}"
            )
        pending = pending_offering(col, cap)
        if pending is None and (held := pending_below_floor(col, cap)) is not None:
            raise LayerFloorViolation(
                f"{ref.table.name}.{col.name}: {cap.value} needs its {held} onion (built on "
                f"first use) below its floor {col.on_demand[held].get('floor')}"
            )
        if pending is not None:  # built by the caller, then compiled again
            raise OnionNotBuilt(BuildNeed(ref.table.name, col.name, pending))
        raise UnsupportedQuery(
            f"{ref.table.name}.{col.name} ({col.type.sql()}) has no onion offering {cap.value}",
            cap.value,
        )

    @staticmethod
    def target_layer(oc: OnionColumn, cap: Cap) -> str:
        """The layer ``oc`` will be at when the statement runs (after any needed peel)."""
        if cap in capabilities(oc.onion, oc.layer, oc.ope_exact):
            return oc.layer
        for layer in oc.stack[oc.stack.index(oc.layer) + 1 :]:
            if cap in capabilities(oc.onion, layer, oc.ope_exact):
                return layer
        return oc.layer

    def encrypted_param(
        self, ref: ColumnRef, oc: OnionColumn, cap: Cap, value: ParamBuilder
    ) -> exp.Placeholder:
        return self.param(comparand_builder(ref, oc, cap, self.target_layer(oc, cap), value))

    def encrypted_array_param(
        self, ref: ColumnRef, oc: OnionColumn, cap: Cap, value: ParamBuilder
    ) -> exp.Expression:
        """``col op ANY(%s)`` with a list: each element encrypted as a comparand."""
        build = comparand_list_builder(ref, oc, cap, self.target_layer(oc, cap), value)
        if oc.innermost == "PLAIN":
            return self.param(build)  # the server casts the plain array itself
        return exp.Cast(this=self.param(build), to=exp.DataType.build("bytea[]"))

    @staticmethod
    def col_expr(ref: ColumnRef, oc: OnionColumn) -> exp.Column:
        return exp.column(oc.anon, table=ref.alias, quoted=True)

    # -- FROM ------------------------------------------------------------------------------
    def table_node(self, scope: Scope, node: exp.Expression) -> exp.Expression:
        if (
            not isinstance(node, exp.Table)
            or node.args.get("db")
            or not isinstance(node.this, exp.Identifier)  # a function: generate_series(...)
        ):
            raise unsupported(node, "FROM item")
        meta = self.catalog.table(node.name)
        self.tables.append(meta)
        alias = (node.alias or node.name).lower()
        server_alias = scope.add(alias, meta)
        return exp.Table(
            this=exp.to_identifier(meta.anon, quoted=True),
            alias=exp.TableAlias(this=exp.to_identifier(server_alias)),
        )

    def from_clause(
        self, scope: Scope, stmt: exp.Expression
    ) -> tuple[exp.Expression | None, list[exp.Join]]:
        """The server query's FROM item and JOINs, each table under its anonymized name."""
        from_ = stmt.args.get("from_")
        if from_ is None:
            return None, []
        base = exp.From(this=self.table_node(scope, from_.this))
        joins: list[exp.Join] = []
        pending = []
        for j in stmt.args.get("joins") or []:
            if j.args.get("using"):
                raise unsupported(j, "JOIN ... USING")
            node = self.table_node(scope, j.this)
            pending.append((j, node))
        for j, node in pending:
            new = exp.Join(this=node)
            for key in ("side", "kind"):
                if j.args.get(key):
                    new.set(key, j.args[key])
            if j.args.get("on") is not None:
                new.set("on", self.predicate(scope, j.args["on"]))
            joins.append(new)
        return base, joins

    def from_where(self, scope: Scope, stmt: exp.Select) -> exp.Select:
        """The server query's FROM, JOINs and WHERE, over anonymized names and ciphertexts."""
        base, joins = self.from_clause(scope, stmt)
        out = exp.Select()
        if base is not None:
            out.set("from_", base)
        if joins:
            out.set("joins", joins)
        where = stmt.args.get("where")
        if where is not None:
            out.set("where", exp.Where(this=self.predicate(scope, where.this)))
        return out

    # -- predicates ------------------------------------------------------------------------
    def predicate(self, scope: Scope, node: exp.Expression) -> exp.Expression:
        out = self._predicate(scope, node)
        if node.args.get("negate") and isinstance(out, exp.Is):  # IS NOT NULL
            out.set("negate", True)
        return out

    def _predicate(self, scope: Scope, node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.And | exp.Or):
            return type(node)(
                this=self.predicate(scope, node.this),
                expression=self.predicate(scope, node.expression),
            )
        if isinstance(node, exp.Not):
            self._negations += 1
            try:
                return exp.Not(this=self.predicate(scope, node.this))
            finally:
                self._negations -= 1
        if isinstance(node, exp.Paren):
            return exp.Paren(this=self.predicate(scope, node.this))
        if isinstance(node, exp.Boolean):
            return node.copy()
        if isinstance(node, exp.Exists):
            return self.exists(scope, node)
        if isinstance(node, CONTAINMENT_PREDICATES):
            # @>, <@, ?, ?|, ?&, &&, x = ANY(col) over a Contain onion's tokens: exactly
            # where they decide it, else (split execution's fetches) a superset
            contained = exact_containment(self, scope, node)
            if contained is None and self.mode.candidate_filters:
                contained = containment_filter(self, scope, node)
            if contained is not None:
                return contained
        if isinstance(node, exp.EQ | exp.NEQ):
            return self.comparison(scope, node, Cap.EQ)
        if isinstance(node, exp.GT | exp.GTE | exp.LT | exp.LTE):
            return self.comparison(scope, node, Cap.ORD)
        if isinstance(node, exp.Between):
            return self.between(scope, node)
        if isinstance(node, exp.In):
            return self.in_list(scope, node)
        if isinstance(node, exp.Is):
            return self.is_null(scope, node)
        if self.mode.candidate_filters and isinstance(
            node, exp.Like | exp.ILike | exp.Escape | exp.RegexpLike | exp.RegexpILike
        ):
            substring = self.substring_filter(scope, node)
            if substring is not None:
                return substring
        if isinstance(node, exp.RegexpLike):
            return self.word_search(scope, node)
        if isinstance(node, exp.Like):
            return self.like(scope, node)
        if isinstance(node, exp.Column):
            ref = scope.resolve(node)
            if ref.column.type.name != "boolean":
                raise unsupported(node, "non-boolean column as a condition")
            return self.comparison(scope, exp.EQ(this=node, expression=exp.true()), Cap.EQ)
        raise unsupported(node)

    def exists(self, scope: Scope, node: exp.Exists) -> exp.Expression:
        """``EXISTS (SELECT ... FROM ... WHERE ...)``, correlated or not, as a subquery
        of the server's statement: its FROM items and WHERE over ciphertexts, names
        resolved first among its own tables.  Its WHERE is compiled exactly (no
        candidate filter, no widened range): the client cannot recheck a subquery whose
        tables it never sees, and ``NOT EXISTS`` would turn a superset into a loss."""
        inner = _plain_subquery(node, node.this, "EXISTS")
        nested = NestedScope(scope, f"x{next(self._n)}_")
        with self._exactly():
            sub = self.from_where(nested, inner)
        sub.set("expressions", [exp.Literal.number(1)])
        return exp.Exists(this=sub)

    @contextlib.contextmanager
    def _exactly(self) -> Iterator[None]:
        """Compiling a subquery of the server's statement: no candidate filter, no
        widened range (the client, which never sees its rows, could not recheck them),
        outside any NOT of the enclosing query."""
        saved = (self.mode, self._negations)
        self.mode = replace(self.mode, candidate_filters=False, widen_inexact_ranges=False)
        self._negations = 0
        try:
            yield
        finally:
            self.mode, self._negations = saved

    def in_subquery(self, scope: Scope, node: exp.In, ref: ColumnRef) -> exp.Expression:
        """``col [NOT] IN (SELECT col2 FROM ... WHERE ...)``, correlated or not, as a
        subquery of the server's statement, compiled as :meth:`exists` compiles its
        SELECT: ``col2`` compared with ``col`` over one onion (a DET key shared, as a
        join's).  ``NOT IN``'s NULL rules hold over ciphertexts: a NULL is stored NULL."""
        inner = _plain_subquery(node, node.args["query"], "IN (subquery)", BOUNDING)
        if len(inner.expressions) != 1:
            raise unsupported(node, "IN with a subquery of other than one column")
        item = inner.expressions[0]
        marks = (len(self.needs), len(self.joins))
        nested = NestedScope(scope, f"x{next(self._n)}_")
        with self._exactly():
            sub = self.from_where(nested, inner)
            inner_ref = self.column_side(nested, item.this if isinstance(item, exp.Alias) else item)
            if inner_ref is None:
                raise unsupported(node, "IN (SELECT expression)")
            left, right = self.col_vs_col(ref, inner_ref, Cap.EQ)
            if bounded(inner):  # (rows the server chooses: its order, count, locks)
                add_bounds(self, nested, inner, sub, node)
        if (len(self.needs), len(self.joins)) != marks and not bounded(inner):
            # (a bounded subquery has no other path: the client cannot lock rows)
            # the client evaluates it over the decrypted rows (split execution) without
            # a peel or a re-keying; the server does where its onions already allow
            del self.needs[marks[0] :], self.joins[marks[1] :]
            raise unsupported(node, "IN (subquery) needing a peel")
        sub.set("expressions", [right])
        return exp.In(this=left, query=exp.Subquery(this=sub))

    def column_side(self, scope: Scope, node: exp.Expression) -> ColumnRef | None:
        while isinstance(node, exp.Paren):
            node = node.this
        return scope.resolve(node) if isinstance(node, exp.Column) else None

    def comparison(self, scope: Scope, node: exp.Expression, cap: Cap) -> exp.Expression:
        left, right = node.this, node.expression
        quantified = _quantified(right)
        if quantified is not None:
            return self.quantified(scope, node, cap, *quantified)
        lref, rref = self.column_side(scope, left), self.column_side(scope, right)
        op: Any = type(node)
        if lref is None and rref is not None:
            flipped: dict[Any, Any] = {
                exp.GT: exp.LT,
                exp.LT: exp.GT,
                exp.GTE: exp.LTE,
                exp.LTE: exp.GTE,
            }
            op = flipped.get(op, op)
            left, right, lref, rref = right, left, rref, lref
        if lref is not None and json_refusal(lref.column.encoding, cap.value) is not None:
            symbol = {exp.NEQ: "<>", exp.LT: "<", exp.GT: ">", exp.LTE: "<=", exp.GTE: ">="}
            raise json_operator_refusal(symbol.get(op, "="), "json" if rref else "unknown")
        if lref is None:
            lv, rv = self.value_of(left), self.value_of(right)
            if lv is not None and rv is not None:
                return op(this=self.param(lv), expression=self.param(rv))
            raise unsupported(node, "comparison of expressions")
        if rref is not None:
            left_oc, right_oc = self.col_vs_col(lref, rref, cap)
            if cap is Cap.ORD:
                # two strings' prefixes: equal prefixes decide nothing about the order
                inexact = [(ref, self.require(ref, cap)) for ref in (lref, rref)]
                if any(not oc.ope_exact for _, oc in inexact):
                    if all(self._widened(oc) for _, oc in inexact):
                        op = {exp.LT: exp.LTE, exp.GT: exp.GTE}.get(op, op)
                    else:
                        for ref, oc in inexact:
                            self.exact_order(ref, oc, node)
            return op(this=left_oc, expression=right_oc)
        constant = number_constant(right) if cap is Cap.ORD else None
        bound = range_constant(lref.column, op, constant) if constant is not None else None
        value: ParamBuilder | None
        if isinstance(bound, bool):  # beyond the column type's range: always true / false
            return range_truth(self.col_expr(lref, self.require(lref, Cap.EQ)), bound)
        if bound is not None:  # more decimals than the type's scale: <= floor, >= ceil
            op, kept = bound
            value = lambda p: kept  # noqa: E731
        else:
            value = self.value_of(right)
        if (
            value is None
            and isinstance(right, exp.Interval)
            and lref.column.type.name == "interval"
        ):
            value = interval_constant(right)
        if value is None and op is exp.EQ and _one_row(right) and not self._negations:
            # col = (SELECT ... LIMIT 1): at most one row, as col IN (SELECT ...)
            return self.in_subquery(scope, exp.In(this=left.copy(), query=right.copy()), lref)
        if value is None:
            raise unsupported(node, "comparison with a non-constant expression")
        oc = self.require(lref, cap)
        if cap is Cap.ORD:
            if self._widened(oc):
                op = {exp.LT: exp.LTE, exp.GT: exp.GTE}.get(op, op)
            else:
                self.exact_order(lref, oc, node)
        return op(
            this=self.col_expr(lref, oc), expression=self.encrypted_param(lref, oc, cap, value)
        )

    def quantified(
        self, scope: Scope, node: exp.Expression, cap: Cap, kind: str, arg: exp.Expression
    ) -> exp.Expression:
        """``col op ANY(array)`` / ``col op ALL(array)``: the array is a list parameter or
        ``ARRAY[...]`` of constants, each element encrypted for the column's onion."""
        ref = self.column_side(scope, node.this)
        if ref is None:
            raise unsupported(node, f"{kind} over an expression")
        oc = self.require(ref, cap)
        if cap is Cap.ORD:
            self.exact_order(ref, oc, node)
        if isinstance(arg, exp.Array):
            builders = [self.value_of(e) for e in arg.expressions]
            if any(b is None for b in builders):
                raise unsupported(node, f"{kind} over a non-constant array")
            items: ParamBuilder = lambda p: [b(p) for b in builders if b is not None]  # noqa: E731
        else:
            value = self.value_of(arg)
            if value is None:
                raise unsupported(node, f"{kind} over a subquery or expression")
            items = value
        array = self.encrypted_array_param(ref, oc, cap, items)
        wrapper: exp.Expression = (
            exp.Any(this=exp.Paren(this=array))
            if kind == "ANY"
            else exp.Anonymous(this="ALL", expressions=[array])
        )
        return type(node)(this=self.col_expr(ref, oc), expression=wrapper)

    def col_vs_col(self, a: ColumnRef, b: ColumnRef, cap: Cap) -> tuple[exp.Column, exp.Column]:
        mark = len(self.needs)
        oa, ob = self.require(a, cap), self.require(b, cap)
        if oa.onion is not ob.onion:
            # each side took the onion that serves ``cap`` soonest (e.g. an Ord onion at
            # OPE on one side, an Eq onion at DET on the other); ciphertexts compare only
            # within one onion kind, so take the first kind both can reach, and drop the
            # peels asked for the onions not used
            asked = self.needs[mark:]
            del self.needs[mark:]
            common = self._common_onion(a, b, cap)
            if common is None:
                self.needs[mark:] = asked  # e.g. a Single onion vs an Eq onion, both DET
            else:
                oa, ob = common
        la, lb = self.target_layer(oa, cap), self.target_layer(ob, cap)
        if cap is Cap.ORD:
            for ref, oc in ((a, oa), (b, ob)):
                self.exact_order(ref, oc, exp.column(ref.column.name))
        inner_a = {"DET": "DET", "OPE": "OPE", "PLAIN": "PLAIN"}.get(la)
        ta, tb = a.column.type, b.column.type
        # (a date/timestamp column made before the full range encodes its own way)
        same_type = (
            ta.name == tb.name
            and (ta.element or ta).python_years == (tb.element or tb).python_years
        )
        same_key = (
            la == lb
            and inner_a is not None
            and (inner_a == "PLAIN" or oa.keys.get(inner_a) == ob.keys.get(inner_a))
            and same_type
        )
        adjustable = (
            la == lb
            and inner_a in ("DET", "OPE")
            and same_type
            and oa.onion is ob.onion
            and oa.innermost == ob.innermost == inner_a
            and oa.ope_bits == ob.ope_bits
            # (a precomputed column's onions are the client's own, never re-keyed: the
            # join is then finished by split execution)
            and a.column.expression is None
            and b.column.expression is None
        )
        if not same_key and adjustable:
            # under different keys: the connection brings them under one key (joins.py)
            # before the statement runs, as it peels
            assert inner_a is not None
            self.joins.append(
                JoinNeed(
                    oa.onion, inner_a, (a.table.name, a.column.name), (b.table.name, b.column.name)
                )
            )
        elif not same_key:
            raise UnsupportedQuery(
                f"comparing {a.table.name}.{a.column.name} ({a.column.type.sql()}) with "
                f"{b.table.name}.{b.column.name} ({b.column.type.sql()}) over ciphertexts "
                "needs both of one type and under one key",
                "column comparison across types or onions",
            )
        return self.col_expr(a, oa), self.col_expr(b, ob)

    def _common_onion(
        self, a: ColumnRef, b: ColumnRef, cap: Cap
    ) -> tuple[OnionColumn, OnionColumn] | None:
        """The first onion kind (in the client's preference) both columns have and can
        bring to ``cap`` within their floors, with the peels it takes."""
        for oa in recipes.onion_order(a.column):
            ob = b.column.onions.get(oa.onion)
            if ob is None:
                continue
            la, lb = self._reachable(oa, cap), self._reachable(ob, cap)
            if la is None or lb is None:
                continue
            for ref, oc, layer in ((a, oa, la), (b, ob, lb)):
                if layer != oc.layer:
                    self.needs.append(Need(ref.table, ref.column, oc, layer, cap))
            return oa, ob
        return None

    @staticmethod
    def _reachable(oc: OnionColumn, cap: Cap) -> str | None:
        """The outermost layer of ``oc``, not below its floor, that offers ``cap``."""
        for layer in oc.stack[oc.stack.index(oc.layer) :]:
            if oc.floor is not None and oc.stack.index(layer) > oc.stack.index(oc.floor):
                return None
            if cap in capabilities(oc.onion, layer, oc.ope_exact):
                return layer
        return None

    def between(self, scope: Scope, node: exp.Between) -> exp.Expression:
        ref = self.column_side(scope, node.this)
        lo, hi = self.value_of(node.args["low"]), self.value_of(node.args["high"])
        if ref is None or lo is None or hi is None:
            raise unsupported(node, "BETWEEN over non-constant bounds")
        oc = self.require(ref, Cap.ORD)
        if not self._widened(oc):
            self.exact_order(ref, oc, node)
        return exp.Between(
            this=self.col_expr(ref, oc),
            low=self.encrypted_param(ref, oc, Cap.ORD, lo),
            high=self.encrypted_param(ref, oc, Cap.ORD, hi),
        )

    def _widened(self, oc: OnionColumn) -> bool:
        """Does a range on ``oc`` compile to a superset (see ``widen_inexact_ranges``)?
        The Ord plaintext of a string is a weakly monotone prefix of its order key, so
        ``s < v`` implies ``prefix(s) <= prefix(v)``: the prefix's closed range keeps every
        row the range keeps."""
        return (
            self.mode.widen_inexact_ranges
            and not self._negations
            and not oc.ope_exact
            and oc.innermost != "PLAIN"
        )

    def exact_order(self, ref: ColumnRef, oc: OnionColumn, node: exp.Expression) -> None:
        if not oc.ope_exact and oc.layer != "PLAIN" and oc.innermost != "PLAIN":
            raise unsupported(node, f"range comparison on {ref.column.type.name}")

    def in_list(self, scope: Scope, node: exp.In) -> exp.Expression:
        ref = self.column_side(scope, node.this)
        if ref is not None and node.args.get("query") is not None:
            return self.in_subquery(scope, node, ref)
        if ref is None or node.args.get("query") is not None:
            raise unsupported(node, "IN with a subquery or expression")
        oc = self.require(ref, Cap.EQ)
        items = []
        for item in node.expressions:
            v = self.value_of(item)
            if v is None:
                raise unsupported(node, "IN with non-constant items")
            items.append(self.encrypted_param(ref, oc, Cap.EQ, v))
        return exp.In(this=self.col_expr(ref, oc), expressions=items)

    def is_null(self, scope: Scope, node: exp.Is) -> exp.Expression:
        ref = self.column_side(scope, node.this)
        if (
            ref is not None
            and isinstance(node.expression, exp.Boolean)
            and ref.column.type.name == "boolean"
        ):
            # b IS TRUE / b IS FALSE: (b = true|false) IS TRUE -- false, not NULL, on NULL
            eq = exp.EQ(this=node.this.copy(), expression=node.expression.copy())
            return exp.Is(
                this=exp.Paren(this=self.comparison(scope, eq, Cap.EQ)), expression=exp.true()
            )
        if ref is None or not isinstance(node.expression, exp.Null):
            raise unsupported(node, "IS over an expression")
        oc = recipes.onion_order(ref.column)[0]  # NULL stays NULL in every onion
        return exp.Is(this=self.col_expr(ref, oc), expression=exp.Null())

    def word_search(self, scope: Scope, node: exp.RegexpLike) -> exp.Expression:
        ref = self.column_side(scope, node.this)
        pattern = self.value_of(node.expression)
        if ref is None or pattern is None:
            raise unsupported(node, "regular expression")
        literal = node.expression
        if isinstance(literal, exp.Literal) and not (
            str(literal.this).startswith("\\m") and str(literal.this).endswith("\\M")
        ):
            # not a whole word: split execution (a plain string becomes a LIKE there)
            raise unsupported(node, "regular expression")
        oc = self.require(ref, Cap.WORD)

        def build(p: Params) -> Any:
            v = pattern(p)
            return None if v is None else recipes.word_token(oc, v)

        return exp.ArrayContainsAll(
            this=self.col_expr(ref, oc),
            expression=exp.Cast(this=self.param(build), to=exp.DataType.build("bytea[]")),
        )

    def substring_filter(self, scope: Scope, node: exp.Expression) -> exp.Expression | None:
        """A candidate filter for LIKE / ILIKE / ``~`` / ``~*`` over the column's Substr
        onion: the rows whose trigram tokens include every trigram of the pattern's literal
        runs (a superset of the matches; the client evaluates the pattern exactly).  None
        where the predicate is left to the exact paths (no Substr onion, NOT LIKE, an
        exact LIKE without wildcards)."""
        escape: str | None = "\\"
        if isinstance(node, exp.Escape):
            esc = self.value_of(node.expression)
            if esc is None or not isinstance(node.this, exp.Like | exp.ILike):
                return None
            value = esc(())
            if not isinstance(value, str) or len(value) > 1:
                return None
            escape = value or None
            node = node.this
        if node.args.get("negate") or self._negations:
            return None  # a superset of rows cannot be negated
        ref = self.column_side(scope, node.this)
        pattern = self.value_of(node.expression)
        if ref is None or pattern is None or Onion.SUBSTR not in ref.column.onions:
            return None
        regex = isinstance(node, exp.RegexpLike | exp.RegexpILike)
        if isinstance(node, exp.RegexpLike) and isinstance(node.expression, exp.Literal):
            text = str(node.expression.this)
            if text.startswith("\\m") and text.endswith("\\M"):
                return None  # a whole word: the Search onion answers it exactly
        oc = self.require(ref, Cap.SUBSTR)

        def build(p: Params) -> Any:
            v = pattern(p)
            if v is None:
                return None
            runs = regex_runs(str(v)) if regex else like_runs(str(v), escape)
            return oc.trigram.required(runs)

        return exp.ArrayContainsAll(
            this=self.col_expr(ref, oc),
            expression=exp.Cast(this=self.param(build), to=exp.DataType.build("bytea[]")),
        )

    def like(self, scope: Scope, node: exp.Like) -> exp.Expression:
        ref = self.column_side(scope, node.this)
        pattern = self.value_of(node.expression)
        if (
            ref is None
            or pattern is None
            or node.args.get("escape")
            # a pattern built with || ('%' || %s || '%': SQLAlchemy's contains(),
            # startswith(), endswith()) has its wildcards around the value: split
            # execution answers it, exactly
            or isinstance(node.expression, exp.DPipe)
        ):
            raise unsupported(node, "LIKE")
        if isinstance(node.expression, exp.Literal):
            text = str(node.expression.this)
            if "%" in text or "_" in text:
                raise UnsupportedQuery(
                    "LIKE with wildcards is not supported over ciphertexts; for whole words "
                    r"use col ~ '\mword\M' (Search onion)",
                    "LIKE with wildcards",
                )
        if not isinstance(node.expression, exp.Literal):
            # a pattern known only when bound (a plan serves every value, with wildcards
            # or not): split execution evaluates it exactly, its candidates filtered on
            # the server through the Substr onion where the column has one
            raise unsupported(node, "LIKE with a parameter pattern")
        oc = self.require(ref, Cap.EQ)
        col = ref.column
        layer = self.target_layer(oc, Cap.EQ)

        def build(p: Params) -> Any:  # a literal without wildcards: an equality
            v = pattern(p)
            if v is None:
                return None
            return recipes.encrypt(col, oc, col.encoding.coerce(v), layer)

        op = exp.NEQ if node.args.get("negate") else exp.EQ
        return op(this=self.col_expr(ref, oc), expression=self.param(build))


def server_sql(node: exp.Expression) -> str:
    return escape_percent(node.sql("postgres"))
