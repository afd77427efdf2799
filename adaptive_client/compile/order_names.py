"""An ORDER BY item that is a bare name resolves, in PostgreSQL, to the select item whose
output name it is -- the name FigureColname gives it where it has no alias, so in
``SELECT j::text FROM t ORDER BY j`` the order is the text's, and ``ORDER BY count`` names
``count(*)`` -- and only where no output has that name to the input column (SQL92 before
SQL99, findTargetlistEntrySQL92).  Two outputs of that name that are different
expressions make it 42702.

The client's passes resolve ORDER BY names only to explicit aliases: this pass gives the
item an ORDER BY names by its implicit name that name as an explicit alias, which changes
nothing PostgreSQL sees (the output's name is the same) and lets every later pass resolve
it as an alias.  The same resolution checks DISTINCT ON against ORDER BY (42P10)."""

from __future__ import annotations

from psycopg import errors as pg_errors
from sqlglot import exp

from ..engine.kinds import is_star
from ..syntax.names import shown
from .output_names import pg_name


def _output_name(item: exp.Expression) -> str | None:
    """An output's name (names arrive in their folded forms: syntax/names.py)."""
    if isinstance(item, exp.Alias):
        return item.alias
    if isinstance(item, exp.Column):
        return item.name if isinstance(item.this, exp.Identifier) else None
    return pg_name(item)


def _outputs_named(select: exp.Select, name: str) -> list[int]:
    """The positions of the select items whose output name is ``name``."""
    return [i for i, item in enumerate(select.expressions) if _output_name(item) == name]


def _unqualified(item: exp.Expression) -> str:
    """An output's expression with its columns' tables left out (``j`` and ``t.j`` are
    one output to PostgreSQL)."""

    def bare(node: exp.Expression) -> exp.Expression:
        return exp.column(node.this.copy()) if isinstance(node, exp.Column) else node

    return item.unalias().transform(bare).sql("postgres")


def _bare_names(select: exp.Select) -> list[exp.Column]:
    order = select.args.get("order")
    if order is None:
        return []
    return [
        o.this
        for o in order.expressions
        if isinstance(o.this, exp.Column)
        and not o.this.table
        and isinstance(o.this.this, exp.Identifier)
    ]


def _target(select: exp.Select, key: exp.Expression) -> str:
    """The output or the expression an ORDER BY or DISTINCT ON key is, as text."""
    items = select.expressions
    if isinstance(key, exp.Literal) and key.is_int and 1 <= int(key.name) <= len(items):
        return _unqualified(items[int(key.name) - 1])
    if isinstance(key, exp.Column) and not key.table and isinstance(key.this, exp.Identifier):
        named = _outputs_named(select, key.name)
        if named:
            return _unqualified(items[named[0]])
    return _unqualified(key)


def _check_distinct_on(select: exp.Select) -> None:
    """PostgreSQL's rule: once an ORDER BY key is not a DISTINCT ON key, no later one is
    (42P10).  The engine would answer, ordering as written."""
    distinct = select.args.get("distinct")
    on = distinct.args.get("on") if isinstance(distinct, exp.Distinct) else None
    order = select.args.get("order")
    if not isinstance(on, exp.Tuple) or order is None or any(map(is_star, select.expressions)):
        return
    keys = {_target(select, key) for key in on.expressions}
    skipped = False
    for ordered in order.expressions:
        if _target(select, ordered.this) not in keys:
            skipped = True
        elif skipped:
            raise pg_errors.InvalidColumnReference(
                "SELECT DISTINCT ON expressions must match initial ORDER BY expressions"
            )


def with_named_order_items(tree: exp.Expression) -> exp.Expression:
    """``tree`` with each select item an ORDER BY names by its implicit output name
    aliased by that name (a copy where there is any); 42702 where the name is two
    different outputs', 42P10 where DISTINCT ON and ORDER BY disagree."""
    for select in tree.find_all(exp.Select):
        _check_distinct_on(select)
    wanted = [
        s
        for s in tree.find_all(exp.Select)
        if _bare_names(s) and not any(is_star(i) for i in s.expressions)
    ]
    if not wanted:
        return tree
    changes: list[tuple[exp.Select, int, str]] = []
    for select in wanted:
        for key in _bare_names(select):
            at = _outputs_named(select, key.name)
            distinct = {_unqualified(select.expressions[i]) for i in at}
            if len(distinct) > 1:
                raise pg_errors.AmbiguousColumn(f'ORDER BY "{shown(key.name)}" is ambiguous')
            if at and not isinstance(select.expressions[at[0]], exp.Alias | exp.Column):
                changes.append((select, at[0], key.name))
    if not changes:
        return tree
    copied = tree.copy()
    selects = {
        id(s): c
        for s, c in zip(tree.find_all(exp.Select), copied.find_all(exp.Select), strict=True)
    }
    for select, position, name in changes:
        item = selects[id(select)].expressions[position]
        if not isinstance(item, exp.Alias):
            item.replace(exp.alias_(item.copy(), name, quoted=True))
    return copied


__all__ = ["with_named_order_items"]
