"""Parenthesized joins as derived tables, for the client engine.

``a LEFT JOIN (b JOIN c ON p) ON q`` (SQLAlchemy's ``joinedload`` of a many-to-many
relationship writes it) is a join of ``a`` with the rows of ``b JOIN c``; sqlglot reads
the parenthesis as a subquery whose table carries the inner joins.  The split planner
knows FROM items that are base tables and derived tables, so the parenthesized join
becomes the derived table it means::

    a LEFT JOIN (SELECT b.x AS __nj0_0, c.y AS __nj0_1 FROM b JOIN c ON p) AS __nj0
           ON q'          -- q and the statement read __nj0.__nj0_0 for b.x ...

with one output per column of ``b`` and ``c`` the statement reads outside the
parenthesis.  Same rows, same NULL extension of the outer join, same duplicates: the
derived table is the parenthesized join's result, and its tables are planned inside it
(their inner join run by the server where it compiles).
"""

from __future__ import annotations

from sqlglot import exp

from ..errors import UnsupportedQuery
from .flat_joins import parenthesized_join


def _joined(sub: exp.Expression) -> exp.Table | exp.Subquery | None:
    """The first FROM item of a parenthesized join that is a FROM item, which carries its
    joins (through redundant parentheses: ``((b JOIN c ON p))``); None for anything
    else."""
    if not isinstance(sub.parent, exp.From | exp.Join):
        return None
    return parenthesized_join(sub)


def _depth(node: exp.Expression) -> int:
    n = 0
    parent = node.parent
    while parent is not None:
        n, parent = n + 1, parent.parent
    return n


def _sources(select: exp.Expression) -> set[str]:
    """The names a SELECT's FROM items (and WITH) bind, as the statement spells them."""
    names: set[str] = set()
    from_ = select.args.get("from_")
    items = [from_.this] if from_ is not None else []
    items += [j.this for j in select.args.get("joins") or []]
    while items:
        item = items.pop()
        if isinstance(item, exp.Subquery) and not item.alias and isinstance(item.this, exp.Table):
            item = item.this
        if isinstance(item, exp.Table | exp.Subquery):
            names.add(item.alias_or_name)
        if isinstance(item, exp.Table):
            items += [j.this for j in item.args.get("joins") or []]
    with_ = select.args.get("with_")
    if with_ is not None:
        names.update(cte.alias_or_name for cte in with_.expressions)
    return names


def _reads(col: exp.Column, alias: str, select: exp.Expression) -> bool:
    """Whether ``col`` (inside ``select``) names the FROM item ``alias`` of ``select``,
    not a source of the same name in a subquery between them."""
    node = col.parent
    while node is not None and node is not select:
        if isinstance(node, exp.Select) and alias in _sources(node):
            return False
        node = node.parent
    return node is select


def joins_as_derived_tables(tree: exp.Expression) -> exp.Expression:
    """Every parenthesized join of the (qualified) statement as a derived table, innermost
    first (see the module docstring); the statement changed in place."""
    nested = sorted(
        (s for s in tree.find_all(exp.Subquery) if _joined(s) is not None),
        key=_depth,
        reverse=True,
    )
    for n, sub in enumerate(nested):
        holder = sub.parent
        if isinstance(holder, exp.Join) and (
            holder.args.get("using") or (holder.args.get("method") or "").upper() == "NATURAL"
        ):
            raise UnsupportedQuery(
                "not supported in a client-evaluated query: a parenthesized join joined "
                "with USING or NATURAL",
                "parenthesized join",
            )
        select = holder.parent if holder is not None else None
        while isinstance(select, exp.Table | exp.Join | exp.Subquery | exp.From):
            select = select.parent  # (inside another parenthesized join)
        if not isinstance(select, exp.Select):
            raise UnsupportedQuery(
                "not supported in a client-evaluated query: a parenthesized join outside "
                "a SELECT's FROM",
                "parenthesized join",
            )
        inner = _joined(sub)
        assert inner is not None
        aliases = {inner.alias_or_name} | {
            j.this.alias_or_name for j in inner.args["joins"] if j.this.alias_or_name
        }
        name = f"__nj{n}"
        outputs: dict[tuple[str, str], tuple[str, exp.Column]] = {}
        for col in list(select.find_all(exp.Column)):
            if col.table not in aliases or not col.name:
                continue
            if _within(col, sub) or not _reads(col, col.table, select):
                continue
            key = (col.table, col.name)
            if key not in outputs:
                outputs[key] = (f"{name}_{len(outputs)}", col.copy())
            col.replace(exp.column(outputs[key][0], table=name))
        joins = inner.args["joins"]
        base = inner.copy()
        base.set("joins", None)
        projections: list[exp.Expr] = [
            exp.alias_(original, out) for out, original in outputs.values()
        ] or [exp.alias_(exp.Literal.number(1), f"{name}_0")]
        derived = exp.Select(expressions=projections)
        derived.set("from_", exp.From(this=base))
        derived.set("joins", joins)
        sub.replace(exp.Subquery(this=derived, alias=exp.TableAlias(this=exp.to_identifier(name))))
    return tree


def _within(node: exp.Expression, ancestor: exp.Expression) -> bool:
    parent = node.parent
    while parent is not None:
        if parent is ancestor:
            return True
        parent = parent.parent
    return False
