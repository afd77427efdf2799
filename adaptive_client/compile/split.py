"""What of a client-evaluated statement the server runs: its *relations*.

Each FROM item that is a base table belongs to one relation, a server SELECT whose
decrypted rows the client engine reads in the table's place.  Within one SELECT of the
statement (a scope) whose FROM items are joined by commas or inner joins only, the
tables that the server can join -- an equality of two columns that compiles over
ciphertexts, as foreign keys and join groups allow -- form one relation: the server
runs the join and the filters over its tables (the conjuncts of WHERE and ON that read
only them and compile), and ships only the joined rows' used columns.  Tables it cannot
join, and every table of a scope with an outer join, are relations of their own,
filtered by the conjuncts that read only them (where filtering first cannot change an
outer join).

Every conjunct stays in the statement the client engine runs: what the server applied
is a filter the rows already pass, so applying it again changes nothing, and the
statement keeps its meaning whatever was pushed down.

The statement is rewritten to read the relations: a single-table relation replaces the
table under the same alias (its columns keep their names); a relation of several tables
becomes one FROM item, its columns named ``<alias>__<column>``, the scope's ON
conditions moved to its WHERE (equivalent for inner joins).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal

import psycopg
from sqlglot import exp
from sqlglot.optimizer.scope import Scope as GlotScope
from sqlglot.optimizer.scope import traverse_scope

from ..catalog.metadata import Catalog
from ..errors import AdaptiveError, UnsupportedQuery
from .aggregate import compiles_exactly
from .compiler import CompileMode, Compiler
from .plan import Compiled

# the values of each run-time semi-join filter of the statement being fetched
from .relations import SEMI_VALUES, Relation, Semi, conjuncts, exists_scope, peels_of, source_of
from .select import compile_select

# A relation's server SELECT: every conjunct is applied again by the client engine, so a
# text range may pass a superset (the Ord prefix's closed range), and so may LIKE /
# ILIKE / regex over a Substr onion (trigram candidates); the semi-join filters' values
# are read when the fetch is bound.
FETCHING = CompileMode(candidate_filters=True, widen_inexact_ranges=True, semi_values=SEMI_VALUES)


def _inner_only(select: exp.Select) -> bool:
    for j in select.args.get("joins") or []:
        if (j.side or "") or (j.kind or "").upper() not in ("", "INNER", "CROSS"):
            return False
        if j.args.get("using") or j.args.get("method"):
            return False
    return True


def _local(c: exp.Expression, scope: GlotScope, tables: dict[str, exp.Table]) -> set[str] | None:
    """The aliases a conjunct reads, if it reads only base tables of ``scope`` and holds
    no subquery, aggregate or window; else None."""
    if c.find(exp.Select, exp.Subquery, exp.AggFunc, exp.Window, exp.Star):
        return None
    aliases = set()
    for col in c.find_all(exp.Column):
        if col.table not in tables or scope.sources.get(col.table) is not tables[col.table]:
            return None
        aliases.add(col.table)
    return aliases or None


def _outer_safe(scope: GlotScope, alias: str) -> list[exp.Expression]:
    """Conjuncts that may filter ``alias`` in a scope with outer joins: the WHERE's, where
    it is not on the nullable side of one; where it is (``LEFT JOIN alias ON ...``), the
    conjuncts of that ON clause (``A LEFT JOIN B ON c AND p(B)`` is ``A LEFT JOIN (B
    WHERE p(B)) ON c``: Q13's comment filter)."""
    select = scope.expression
    joins = select.args.get("joins") or []
    if any((j.side or "").upper() in ("RIGHT", "FULL") for j in joins):
        return []
    nullable = [
        j for j in joins if j.this.alias_or_name == alias and (j.side or "").upper() == "LEFT"
    ]
    if nullable:
        return [c for j in nullable for c in conjuncts(j.args.get("on"))]
    where = select.args.get("where")
    return list(conjuncts(where.this if where is not None else None))


Compiles = Callable[[Relation, list[exp.Expression]], bool]


def _column_pair(c: exp.Expression) -> tuple[exp.Column, exp.Column] | None:
    """The two columns of ``a = b`` between bare columns."""
    if (
        isinstance(c, exp.EQ)
        and isinstance(c.this, exp.Column)
        and isinstance(c.expression, exp.Column)
    ):
        return c.this, c.expression
    return None


def plan_relations(
    catalog: Catalog,
    tree: exp.Expression,
    compiles: Compiles,
    aggregated: list[Relation] | None = None,
) -> list[Relation]:
    """The relations of the (qualified) statement, with their columns, pushed-down
    conjuncts and run-time semi-join filters, in the order they are fetched (each after
    the relations its filters read); ``compiles(relation, conjuncts)`` says whether the
    server SELECT of a relation with those conjuncts compiles over ciphertexts.
    ``aggregated``: the relations of SELECTs the server aggregates (their tables are
    theirs)."""
    relations: list[Relation] = list(aggregated or [])
    claimed = {id(t) for rel in relations for t in rel.members.values()}
    by_table: dict[int, tuple[Relation, str]] = {}

    def add(scope: GlotScope, members: dict[str, exp.Table]) -> Relation:
        rel = Relation(f"__r{len(relations)}", scope, members)
        relations.append(rel)
        for alias, table in members.items():
            by_table[id(table)] = (rel, alias)
        return rel

    inside = {id(rel.scope.expression) for rel in relations}  # (pushed SELECTs)
    absorbed = _server_exists(tree, compiles)
    required = {id(c) for c, _ in absorbed.values()}
    for scope in traverse_scope(tree):
        # (a LATERAL item's scope sees the FROM items before it: they are its parent's)
        tables = {
            a: s
            for a, s in scope.sources.items()
            if isinstance(s, exp.Table) and a not in scope.lateral_sources
        }
        if not tables or any(id(t) in claimed for t in tables.values()):
            continue
        if _within_any(scope.expression, inside | set(absorbed)):
            continue  # a subquery the server evaluates inside another relation's SELECT
        select = scope.expression
        if not (isinstance(select, exp.Select) and _inner_only(select)):
            for alias, table in tables.items():
                rel = add(scope, {alias: table})
                rel.conjuncts = [
                    c for c in _outer_safe(scope, alias) if _local(c, scope, tables) == {alias}
                ]
            continue
        where = select.args.get("where")
        found = conjuncts(where.this if where is not None else None)
        for j in select.args.get("joins") or []:
            found += conjuncts(j.args.get("on"))
        local = [(c, r) for c in found if (r := _local(c, scope, tables)) is not None]
        local += [(c, a) for c, a in absorbed.values() if any(c is f for f in found)]
        # the equalities the server can join on
        edges: list[tuple[exp.Expression, str, str]] = []
        for c, aliases in local:
            if len(aliases) == 2:
                a, b = sorted(aliases)
                probe = Relation("", scope, {x: tables[x] for x in (a, b)})
                if compiles(probe, [c]):
                    edges.append((c, a, b))
        # a table with a filter only the client can apply, joined to others by an
        # equality of two columns, is fetched apart first: the client applies its filter,
        # and the others are fetched only where they join one of its remaining rows
        # -- where it is a leaf of the joins: a table joining the others together (a
        # hub) is better reduced by them on the server than apart
        client_only: dict[str, list[exp.Expression]] = {}
        for alias in tables:
            own = [c for c, r in local if r == {alias}]
            probe = Relation("", scope, {alias: tables[alias]})
            rest = [c for c in own if not compiles(probe, [c])]
            joinable = any(_column_pair(c) is not None and alias in (a, b) for c, a, b in edges)
            apart = set(client_only) | {alias}
            if rest and joinable and _connected(tables, edges, apart):
                client_only[alias] = rest
        groups = {alias: {alias} for alias in tables}
        for _, a, b in edges:
            if a in client_only or b in client_only or groups[a] is groups[b]:
                continue
            merged = groups[a] | groups[b]
            for x in merged:
                groups[x] = merged
        seen: list[set[str]] = []
        for g in groups.values():
            if not any(g is x for x in seen):
                seen.append(g)
        of_alias: dict[str, Relation] = {}
        for g in sorted(seen, key=lambda g: not (g & set(client_only))):  # filters first
            rel = add(scope, {a: tables[a] for a in tables if a in g})
            rel.conjuncts = [c for c, aliases in local if aliases <= g]
            rel.required = [c for c in rel.conjuncts if id(c) in required]
            rel.inner = True
            for a in g:
                of_alias[a] = rel
        for c, a, b in edges:
            pair = _column_pair(c)
            if pair is None:
                continue
            for src, dst in ((a, b), (b, a)):
                if src in client_only and dst not in client_only:
                    src_col, dst_col = pair if pair[0].table == src else pair[::-1]
                    of_alias[dst].semis.append(
                        Semi(
                            f"semi{sum(len(r.semis) for r in relations)}",
                            (dst, dst_col.name.lower()),
                            of_alias[src],
                            (src, src_col.name.lower()),
                            [x.copy() for x in client_only[src]],
                        )
                    )
    for rel in relations:  # applied by the server: out of the client's statement
        for c in rel.required:
            c.replace(exp.true())
    _correlated_semis(tree, relations, by_table)
    _in_subquery_semis(catalog, tree, relations, by_table)
    _gather_columns(catalog, tree, relations)
    for rel in relations:
        rel.as_set = rel.query is None and _read_as_set(rel.scope)
    return _fetch_order(relations)


def _within_any(node: exp.Expr, ids: set[int]) -> bool:
    parent: exp.Expr | None = node
    while parent is not None:
        if id(parent) in ids:
            return True
        parent = parent.parent
    return False


def _server_exists(
    tree: exp.Expression, compiles: Compiles
) -> dict[int, tuple[exp.Expression, set[str]]]:
    """The ``[NOT] EXISTS`` conjuncts of WHEREs of inner joins that the server SELECT
    of the one table they correlate with evaluates exactly, by their subquery's id: that
    table's relation applies them, the client's statement drops them, and their own
    tables are never fetched (Q21's two subqueries over lineitem, Q4's)."""
    out: dict[int, tuple[exp.Expression, set[str]]] = {}
    for scope in traverse_scope(tree):
        select = scope.expression
        if not (isinstance(select, exp.Select) and _inner_only(select)):
            continue
        where = select.args.get("where")
        tables = {a: t for a, t in scope.sources.items() if isinstance(t, exp.Table)}
        for c in conjuncts(where.this if where is not None else None):
            found = exists_scope(c, scope)
            if found is None:
                continue
            child, aliases = found
            if len(aliases) != 1:
                # (its tables might land in relations the server does not join: the
                # subquery is then fetched, as any other)
                continue
            probe = Relation("", scope, {a: tables[a] for a in aliases})
            if compiles(probe, [c]):
                out[id(child.expression)] = (c, aliases)
    return out


def _gather_columns(catalog: Catalog, tree: exp.Expression, relations: list[Relation]) -> None:
    """The columns each relation ships: every column any scope of the statement reads
    from its tables, and those its semi-joins' client filters and values read."""
    by_table = {
        id(t): (rel, alias)
        for rel in relations
        if rel.query is None
        for alias, t in rel.members.items()
    }
    for rel, _ in by_table.values():
        rel.columns = []
    for scope in traverse_scope(tree):
        for col in scope.columns:
            if not col.table:
                continue
            hit = by_table.get(id(source_of(scope, col.table)))
            if hit is None:
                continue
            rel, alias = hit
            key = (alias, col.name.lower())
            if key not in rel.columns:
                rel.columns.append(key)
    for rel in relations:
        for semi in rel.semis:  # the semi-joins read these
            source = semi.source
            if source is None:
                continue
            wanted = [semi.source_column] + [
                (c.table, c.name.lower())
                for f in semi.client_filter
                for c in f.find_all(exp.Column)
                if c.table in source.members
            ]
            for key in wanted:
                if key not in source.columns:
                    source.columns.append(key)
    for rel in relations:
        if not rel.columns and rel.query is None:  # e.g. count(*): the rows matter
            alias, table = next(iter(rel.members.items()))
            rel.columns.append((alias, next(iter(catalog.table(table.name).columns))))


def drop_applied(catalog: Catalog, tree: exp.Expression, relations: list[Relation]) -> bool:
    """Take out of the client's statement the conjuncts the server applied exactly to
    a relation of inner joins (its rows all pass them), and ship only the columns the
    rest reads: a range on ``l_shipdate`` over OPE, an equality over DET, a join of two
    keys no longer bring their columns to the client to be checked again.  True if any
    was taken out (the relations' columns are then gathered anew and their SELECTs
    must be compiled again)."""
    dropped: dict[int, set[str]] = {}  # per relation, the conjuncts taken out
    for rel in relations:
        if not rel.inner or rel.query is not None:
            continue
        for c in rel.pushed:
            if c.parent is not None and _applied_exactly(catalog, rel, c):
                dropped.setdefault(id(rel), set()).add(c.sql())
                c.replace(exp.true())
    if not dropped:
        return False
    for rel in relations:  # a semi-join's source rows pass them too
        for semi in rel.semis:
            if semi.source is not None and id(semi.source) in dropped:
                done = dropped[id(semi.source)]
                semi.client_filter = [f for f in semi.client_filter if f.sql() not in done]
    _gather_columns(catalog, tree, relations)
    return True


def _applied_exactly(catalog: Catalog, rel: Relation, c: exp.Expression) -> bool:
    """Whether the server SELECT applies ``c`` exactly: compiled alone, the fetch's
    translation (ranges widened, candidate filters allowed) is the exact one."""
    exact = Compiler(catalog)
    try:
        strict = compile_select(exact, rel.select(catalog, [c]))
        split = _compile(catalog, rel, [c])
    # (compiling is the test, a refusal the answer: see try_compile)
    except (AdaptiveError, psycopg.Error):
        return False
    return strict.residual is None and split.residual is None and strict.sql == split.sql


def _read_as_set(scope: GlotScope) -> bool:
    """Whether the rows of ``scope``'s FROM items matter only as a set: the SELECT of an
    ``EXISTS`` or ``IN`` subquery, with nothing that counts rows (aggregates, grouping,
    windows, LIMIT / OFFSET).  Repeated rows of its tables then change neither whether a
    row exists nor the set of values (NULLs included) the subquery gives."""
    select = scope.expression
    if not isinstance(select, exp.Select):
        return False
    parent = select.parent
    if not (
        isinstance(parent, exp.Exists)
        or (isinstance(parent, exp.Subquery) and isinstance(parent.parent, exp.In))
    ):
        return False
    if any(select.args.get(k) for k in ("group", "having", "limit", "offset", "qualify")):
        return False
    if isinstance(select.args.get("distinct"), exp.Distinct) and select.args["distinct"].args.get(
        "on"
    ):
        return False
    own = [
        n for n in select.find_all(exp.AggFunc, exp.Window) if n.find_ancestor(exp.Select) is select
    ]
    return not own


def _connected(
    tables: dict[str, exp.Table], edges: list[tuple[exp.Expression, str, str]], apart: set[str]
) -> bool:
    """Without the tables ``apart``, are the others still joined as they were (no set
    of joined tables falls in two)?"""

    def roots(skip: set[str]) -> dict[str, str]:
        parent = {a: a for a in tables if a not in skip}

        def root(x: str) -> str:
            while parent[x] != x:
                x = parent[x]
            return x

        for _, a, b in edges:
            if a in parent and b in parent:
                parent[root(a)] = root(b)
        return {a: root(a) for a in parent}

    before, after = roots(set()), roots(apart)
    pieces: dict[str, set[str]] = {}
    for a, r in after.items():
        pieces.setdefault(before[a], set()).add(r)
    return all(len(p) == 1 for p in pieces.values())


def _correlated_semis(
    tree: exp.Expression, relations: list[Relation], by_table: dict[int, tuple[Relation, str]]
) -> None:
    """A subquery correlated by an equality ``inner = outer`` in its WHERE reads, for any
    outer row, only inner rows equal to that row's column: its relation is fetched only
    where the inner column equals a value of the outer column among the outer relation's
    rows (which hold every outer row the statement can see)."""
    for scope in traverse_scope(tree):
        select = scope.expression
        if scope.parent is None or not isinstance(select, exp.Select) or not _inner_only(select):
            continue
        if not scope.is_subquery:
            continue
        tables = {a: s for a, s in scope.sources.items() if isinstance(s, exp.Table)}
        where = select.args.get("where")
        for c in conjuncts(where.this if where is not None else None):
            pair = _column_pair(c)
            if pair is None:
                continue
            for inner, outer in (pair, pair[::-1]):
                if inner.table not in tables or outer.table in scope.sources:
                    continue
                dst = by_table.get(id(tables[inner.table]))
                src = by_table.get(id(source_of(scope.parent, outer.table)))
                if dst is None or src is None or dst[0] is src[0]:
                    continue
                dst[0].semis.append(
                    Semi(
                        f"semi{sum(len(r.semis) for r in relations)}",
                        (dst[1], inner.name.lower()),
                        src[0],
                        (src[1], outer.name.lower()),
                        _own_filter(src[0], src[1]),
                    )
                )
                break


def _own_filter(rel: Relation, alias: str) -> list[exp.Expression]:
    """The WHERE conjuncts reading only ``alias`` in the scope of a single-table
    relation of inner joins: every row of it that matters to the statement passes them
    (copies, for the client's query of a semi-join's values)."""
    select = rel.scope.expression
    if rel.merged or not isinstance(select, exp.Select) or not _inner_only(select):
        return []
    tables = {a: s for a, s in rel.scope.sources.items() if isinstance(s, exp.Table)}
    where = select.args.get("where")
    return [
        c.copy()
        for c in conjuncts(where.this if where is not None else None)
        if _local(c, rel.scope, tables) == {alias}
    ]


def _in_subquery_semis(
    catalog: Catalog,
    tree: exp.Expression,
    relations: list[Relation],
    by_table: dict[int, tuple[Relation, str]],
) -> None:
    """``col IN (uncorrelated subquery)`` or ``col <op> (uncorrelated scalar subquery)``
    (``op`` a range comparison), a conjunct of a WHERE: the subquery is evaluated on the
    client as soon as its own relations are in, and ``col``'s relation is fetched only
    where ``col`` equals one of its values, or compares with its value (a row that does
    not fails the WHERE; Q22's customers above the average balance)."""
    scopes = {id(s.expression): s for s in traverse_scope(tree)}
    for scope in traverse_scope(tree):
        select = scope.expression
        if not isinstance(select, exp.Select) or not _inner_only(select):
            continue
        where = select.args.get("where")
        for c in conjuncts(where.this if where is not None else None):
            query, column, op, scalar = _subquery_operand(c)
            if query is None or not isinstance(column, exp.Column):
                continue
            inner = query.this if isinstance(query, exp.Subquery) else query
            sub = scopes.get(id(inner))
            if sub is None or not isinstance(inner, exp.Select) or len(inner.expressions) != 1:
                continue
            within = {id(x.expression) for x in sub.traverse()}
            if _reads_outside(sub, within):  # correlated
                continue
            dst = by_table.get(id(source_of(scope, column.table)))
            if dst is None:
                continue
            after = [r for r in relations if id(r.scope.expression) in within]
            if not after or dst[0] in after:
                continue
            domain = None
            if scalar:
                domain = _numeric_domain(catalog, dst[0].members[dst[1]].name, column.name)
                if domain is None:
                    continue
            dst[0].semis.append(
                Semi(
                    f"semi{sum(len(r.semis) for r in relations)}",
                    (dst[1], column.name.lower()),
                    None,
                    ("", ""),
                    [],
                    query=inner,
                    after=after,
                    op=op,
                    scalar=scalar,
                    domain=domain,
                )
            )


_INTEGER_LIMITS = {"smallint": 2**15 - 1, "integer": 2**31 - 1, "bigint": 2**63 - 1}


def _numeric_domain(catalog: Catalog, table: str, column: str) -> tuple[int, Decimal] | None:
    """(scale, largest value) of an integer or numeric(p, s) column, else None."""
    meta = catalog.tables.get(table.lower())
    col = meta.columns.get(column.lower()) if meta is not None else None
    if col is None:
        return None
    if col.type.name in _INTEGER_LIMITS:
        return 0, Decimal(_INTEGER_LIMITS[col.type.name])
    if col.type.name == "numeric" and col.type.precision is not None:
        scale = col.type.scale or 0
        return scale, Decimal(10) ** (col.type.precision - scale) - Decimal(1).scaleb(-scale)
    return None


_FLIPPED: dict[type, type[exp.Binary]] = {
    exp.GT: exp.LT, exp.GTE: exp.LTE, exp.LT: exp.GT, exp.LTE: exp.GTE,
}  # fmt: skip


def _subquery_operand(
    c: exp.Expression,
) -> tuple[exp.Expression | None, exp.Expression | None, type[exp.Binary], bool]:
    """The subquery of a conjunct ``col IN (subquery)`` or ``col <op> (subquery)`` (a
    range comparison, either side), its column, the operator with the column on the left,
    and whether the subquery is a scalar one."""
    if isinstance(c, exp.In):
        return c.args.get("query"), c.this, exp.EQ, False
    if isinstance(c, exp.GT | exp.GTE | exp.LT | exp.LTE):
        if isinstance(c.expression, exp.Subquery):
            return c.expression, c.this, type(c), True
        if isinstance(c.this, exp.Subquery):
            return c.this, c.expression, _FLIPPED[type(c)], True
    return None, None, exp.EQ, False


def _reads_outside(sub: GlotScope, within: set[int]) -> bool:
    """Does any scope of the subquery ``sub`` read a column of a scope outside it?"""
    for x in sub.traverse():
        for col in x.columns:
            if not col.table:
                continue
            s: GlotScope | None = x
            while s is not None and col.table not in s.sources:
                s = s.parent
            if s is None or id(s.expression) not in within:
                return True
    return False


def _fetch_order(relations: list[Relation]) -> list[Relation]:
    """The relations, each after those its semi-joins read."""
    out: list[Relation] = []
    placed: set[int] = set()

    def place(rel: Relation, path: frozenset[int]) -> None:
        if id(rel) in placed:
            return
        if id(rel) in path:  # a cycle: not built by the planner, dropped to be safe
            rel.semis.clear()
            return
        for semi in list(rel.semis):
            for src in semi.sources():
                place(src, path | {id(rel)})
        if id(rel) not in placed:
            placed.add(id(rel))
            out.append(rel)

    for rel in relations:
        place(rel, frozenset())
    return out


def rewrite_to_relations(tree: exp.Expression, relations: list[Relation]) -> None:
    """Point the statement at the relations' tables (see the module docstring)."""
    relations = [rel for rel in relations if rel.query is None]  # (aggregate.apply)
    by_table = {id(t): (rel, alias) for rel in relations for alias, t in rel.members.items()}
    renames: dict[int, tuple[exp.Column, Relation, str]] = {}
    for scope in traverse_scope(tree):
        for col in scope.columns:
            if not col.table or id(col) in renames:  # a correlated column: seen already
                continue
            hit = by_table.get(id(source_of(scope, col.table)))
            if hit is not None and hit[0].merged:
                renames[id(col)] = (col, hit[0], hit[1])
    for col, rel, alias in renames.values():
        col.set("this", exp.to_identifier(rel.column_name(alias, col.name.lower())))
        col.set("table", exp.to_identifier(f"__g{rel.name}"))
    scopes: dict[int, list[Relation]] = {}
    for rel in relations:
        scopes.setdefault(id(rel.scope), []).append(rel)
    for rels in scopes.values():
        select = rels[0].scope.expression
        if not any(r.merged for r in rels):
            for rel in rels:
                ((alias, table),) = rel.members.items()
                table.replace(_table(rel.name, alias))
            continue
        # all inner joins: ON conditions join the WHERE, the FROM lists the relations
        ons = [j.args["on"] for j in select.args.get("joins") or [] if j.args.get("on")]
        items: list[exp.Expression] = [
            _table(rel.name, f"__g{rel.name}" if rel.merged else next(iter(rel.members)))
            for rel in rels
        ]
        # the scope's other FROM items (a CTE's name, a derived table) stay as they are
        from_ = select.args.get("from_")
        listed = [from_.this] if from_ is not None else []
        listed += [j.this for j in select.args.get("joins") or []]
        items += [item for item in listed if id(item) not in by_table]
        select.set("from_", exp.From(this=items[0]))
        select.set("joins", [exp.Join(this=item) for item in items[1:]] or None)
        where = select.args.get("where")
        parts = ([where.this] if where is not None else []) + ons
        if parts:
            select.set("where", exp.Where(this=exp.and_(*parts, copy=False)))


def _table(name: str, alias: str) -> exp.Table:
    return exp.Table(
        this=exp.to_identifier(name), alias=exp.TableAlias(this=exp.to_identifier(alias))
    )


def compile_relation(catalog: Catalog, rel: Relation) -> Compiled:
    """The server SELECT of a relation, with the conjuncts and semi-join filters that
    compile over ciphertexts pushed down (each tried alone, then all together); the
    semi-joins that do not are dropped from the relation."""
    if rel.query is not None:
        plan = compiles_exactly(catalog, rel)
        assert isinstance(plan, Compiled)  # (planned only where it compiled)
        return plan
    nodes = {id(semi): semi.conjunct() for semi in rel.semis}
    candidates = rel.conjuncts + _prefix_ranges(catalog, rel) + list(nodes.values())
    kept = [c for c in candidates if try_compile(catalog, rel, [c]) is not None]
    if kept:
        plan = try_compile(catalog, rel, kept)
        if plan is not None and all(any(r is k for k in kept) for r in rel.required):
            rel.semis = [semi for semi in rel.semis if any(nodes[id(semi)] is c for c in kept)]
            rel.pushed = [c for c in rel.conjuncts if any(c is k for k in kept)]
            return _distinct(catalog, rel, kept, plan)
    if rel.required:  # (each compiled with its tables when planned; not with the rest)
        raise UnsupportedQuery(
            f"a [NOT] EXISTS the server evaluates alone, but not with the rest of {rel.describe()}",
            "EXISTS",
        )
    rel.semis = []
    plan = try_compile(catalog, rel, [])
    if plan is None:  # raise what stops it
        return _compile(catalog, rel, [])
    return _distinct(catalog, rel, [], plan)


def _prefix_ranges(catalog: Catalog, rel: Relation) -> list[exp.Expression]:
    """For each ``col LIKE 'abc%...'`` among the relation's conjuncts, the range
    ``col >= 'abc' AND col < 'abd'`` that every matching value lies in, as a filter for
    the server (over the Ord onion, a candidate range: the LIKE itself stays in the
    client's statement).  Only where text order is byte order (C collation, where the
    values starting with a prefix are contiguous) and for text / varchar (char(n) pads)."""
    out: list[exp.Expression] = []
    for c in rel.conjuncts:
        if not (
            isinstance(c, exp.Like)
            and isinstance(c.this, exp.Column)
            and isinstance(c.expression, exp.Literal)
            and c.expression.is_string
            and not c.args.get("escape")
            and not c.args.get("negate")  # NOT LIKE: its rows are not in one range
            and c.this.table in rel.members
        ):
            continue
        pattern = str(c.expression.this)
        cut = min((i for i in (pattern.find("%"), pattern.find("_")) if i >= 0), default=-1)
        prefix = pattern[:cut] if cut > 0 else ""
        if not prefix or "\\" in prefix or ord(prefix[-1]) >= 0x10FFFF:
            continue
        last = ord(prefix[-1]) + 1
        if 0xD800 <= last <= 0xDFFF:  # no string holds a surrogate
            last = 0xE000
        meta = catalog.table(rel.members[c.this.table].name)
        try:
            column = meta.column(c.this.name)
        except AdaptiveError:
            continue
        if column.type.name not in ("text", "varchar") or not (
            column.collation is None or column.collation.bytewise
        ):
            continue
        col = c.this.copy()
        out.append(
            exp.And(
                this=exp.GTE(this=col, expression=exp.Literal.string(prefix)),
                expression=exp.LT(
                    this=col.copy(), expression=exp.Literal.string(prefix[:-1] + chr(last))
                ),
            )
        )
    return out


def _distinct(
    catalog: Catalog, rel: Relation, conj: list[exp.Expression], plan: Compiled
) -> Compiled:
    """A relation read as a set: its server SELECT with DISTINCT (Q4's and Q21's
    EXISTS ship each order key once, not once per line), where that needs no onion
    peeled further than the SELECT without it (DISTINCT over ciphertexts is exact at any
    layer: equal ciphertexts are equal values) -- else ``plan``."""
    if not rel.as_set:
        return plan
    try:
        deduplicated = _compile(catalog, rel, conj, distinct=True)
    # (compiling is the test, a refusal the answer: see try_compile)
    except (AdaptiveError, psycopg.Error):
        return plan

    if not peels_of(deduplicated) <= peels_of(plan) or deduplicated.joins != plan.joins:
        return plan
    return deduplicated


def try_compile(catalog: Catalog, rel: Relation, conj: list[exp.Expression]) -> Compiled | None:
    """The relation's server SELECT with the conjuncts ``conj``, or None where it does not
    compile.  Compiling is the test: whether a conjunct compiles over ciphertexts
    depends on the onions its columns have, their layers and floors, the types compared
    and the keys shared -- what compiling it finds out, a refusal (or a PostgreSQL error
    a constant raises, e.g. a malformed date) saying no.  An onion to build is not a
    refusal (:class:`~.scope.OnionNotBuilt`): it ends the whole compilation."""
    try:
        return _compile(catalog, rel, conj)
    except (AdaptiveError, psycopg.Error):
        return None


def _compile(
    catalog: Catalog, rel: Relation, conj: list[exp.Expression], distinct: bool = False
) -> Compiled:
    c = Compiler(catalog, FETCHING)
    plan = compile_select(c, rel.select(catalog, conj, distinct))
    # a join of columns under different keys: the connection adjusts them (joins.py),
    # then compiles the statement again
    plan.needs, plan.joins, plan.tables = c.needs, c.joins, c.tables
    return plan
