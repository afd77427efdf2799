"""Counts of an outer join's right side aggregated before the join: a pass over the
server query.

``SELECT l.k, count(r.x) FROM l LEFT JOIN r ON l.k = r.fk AND <r only> GROUP BY l.k`` --
"each parent with the number of its children", the query behind every list with a
counter (TPC-H Q13) -- is planned by PostgreSQL as a join of every child row followed by
the grouping.  Over ciphertexts the children's table is two to three times wider than
the plain one and the planner, costing a hash join over that width, probes the
children's index once per parent instead: 3.8 s against plain's 1.4 s at TPC-H SF 1.
Counting the children per parent key first (eager aggregation) and joining the parents
to those counts reads the children once, in a sequential scan, and joins one row per
parent key:

    SELECT l.k, CAST(COALESCE(SUM(r.n), 0) AS BIGINT)
    FROM l LEFT JOIN (SELECT fk, COUNT(x) AS n FROM r WHERE <r only> GROUP BY fk) AS r
      ON l.k = r.fk
    GROUP BY l.k

The answer is the same row for row: a parent row joins at most one count row (the
counts are grouped by the join's columns), so each group's sum of counts is the number
of child rows its parents joined; a parent with none gets NULL from the outer join,
which ``COALESCE`` makes the 0 ``count`` gives; ``count(*)`` counts such a parent's
NULL-extended row once: ``SUM(COALESCE(r.n, 1))``.  Only where the
parents are not filtered (no WHERE): then the join reads every child of any parent
anyway, and counting them first costs no more rows read.
"""

from __future__ import annotations

from sqlglot import exp

from .relations import conjuncts


def _aliases(node: exp.Expression) -> set[str]:
    return {c.table for c in node.find_all(exp.Column)}


def _named(node: exp.Expression, name: str) -> exp.Alias:
    return exp.Alias(this=node, alias=exp.to_identifier(name))


def eager_counts(query: exp.Select) -> exp.Select:
    """``query`` with the counts of its LEFT JOIN's right side computed before the join,
    where its shape allows (the module's docstring); otherwise ``query`` itself."""
    if any(query.args.get(k) for k in ("where", "having", "distinct", "locks", "with_")):
        return query
    joins = query.args.get("joins") or []
    from_ = query.args.get("from_")
    group = query.args.get("group")
    if len(joins) != 1 or from_ is None or group is None:
        return query
    join = joins[0]
    left, right = from_.this, join.this
    if not (
        isinstance(left, exp.Table)
        and isinstance(right, exp.Table)
        and (join.side or "").upper() == "LEFT"
        and (join.kind or "").upper() in ("", "OUTER")
        and not join.args.get("using")
        and join.args.get("on") is not None
    ):
        return query
    la, ra = left.alias_or_name, right.alias_or_name
    if not la or not ra or la == ra:
        return query
    # ON: equalities of a left and a right column, and conjuncts of the right side only
    pairs: list[tuple[exp.Column, exp.Column]] = []
    right_only: list[exp.Expression] = []
    for c in conjuncts(join.args["on"]):
        seen = _aliases(c)
        if (
            isinstance(c, exp.EQ)
            and isinstance(c.this, exp.Column)
            and isinstance(c.expression, exp.Column)
        ):
            a, b = c.this, c.expression
            if (a.table, b.table) == (ra, la):
                a, b = b, a
            if (a.table, b.table) == (la, ra):
                pairs.append((a, b))
                continue
        if seen <= {ra} and not c.find(exp.Select, exp.AggFunc, exp.Window):
            right_only.append(c)
            continue
        return query
    if not pairs:
        return query
    # GROUP BY left columns; the select list: left grouped columns and counts of the right
    keys = group.expressions
    if not all(isinstance(k, exp.Column) and k.table == la for k in keys):
        return query
    grouped = {k.sql() for k in keys}
    order = query.args.get("order")
    for o in order.expressions if order is not None else []:
        # grouped columns or output positions: the same after the rewrite
        if not (o.this.sql() in grouped or isinstance(o.this, exp.Literal)):
            return query
    counted: list[tuple[int, exp.Expression | None]] = []  # (position, counted column)
    for i, item in enumerate(query.expressions):
        node = item.this if isinstance(item, exp.Alias) else item
        if isinstance(node, exp.Column) and node.sql() in grouped:
            continue
        if isinstance(node, exp.Count):
            arg = node.this
            if isinstance(arg, exp.Star):
                counted.append((i, None))
                continue
            if isinstance(arg, exp.Column) and arg.table == ra:
                counted.append((i, arg))
                continue
        return query
    if not counted:
        return query
    # the counts per join key, over the right side's rows that pass its conditions
    inner_items: list[exp.Expression] = [
        _named(b.copy(), f"__j{j}") for j, (_, b) in enumerate(pairs)
    ]
    for n, (_, arg) in enumerate(counted):
        count = exp.Count(this=exp.Star() if arg is None else arg.copy())
        inner_items.append(_named(count, f"__n{n}"))
    inner = exp.Select(expressions=inner_items)
    inner.set("from_", exp.From(this=right.copy()))
    if right_only:
        inner.set("where", exp.Where(this=exp.and_(*right_only)))
    inner.set("group", exp.Group(expressions=[b.copy() for _, b in pairs]))
    on = exp.and_(
        *[
            exp.EQ(this=a.copy(), expression=exp.column(f"__j{j}", table=ra))
            for j, (a, _) in enumerate(pairs)
        ]
    )
    out = query.copy()
    out.set(
        "joins",
        [
            exp.Join(
                this=exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier(ra))),
                side="LEFT",
                on=on,
            )
        ],
    )
    items = out.expressions
    for n, (i, arg) in enumerate(counted):
        partial = exp.column(f"__n{n}", table=ra)
        if arg is None:  # count(*): a parent without children counts its own row
            total: exp.Expression = exp.Sum(
                this=exp.Coalesce(this=partial, expressions=[exp.Literal.number(1)])
            )
        else:  # count(col): a group whose parents have no children counts 0
            total = exp.Coalesce(this=exp.Sum(this=partial), expressions=[exp.Literal.number(0)])
        value = exp.Cast(this=total, to=exp.DataType.build("bigint"))
        item = items[i]
        if isinstance(item, exp.Alias):
            item.set("this", value)
        else:
            item.replace(value)
    return out
