"""Text ordered under its collation in the client engine, which compares strings
bytewise: ORDER BY keys, window orders, ``<`` ``<=`` ``>`` ``>=``, BETWEEN and min/max of
text go through ``pg_collation_key``, the collation key the Ord onion's prefix comes from
(``collation``); under an explicit ``COLLATE "name"`` through that collation's key
(``"C"``: bytewise).  The caller checks the collations before anything is peeled."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from sqlglot import exp

from ..values.collation import C_COLLATION, Collation
from .kinds import by_type, is_uuid, kind_of, leftmost, position_of, udf, unparen
from .runtime import refusal as _refuse

KEY_FUNCTION = "pg_collation_key"


_RANGE_OPS = (exp.LT, exp.LTE, exp.GT, exp.GTE)


_BYTEWISE_NAMES = ("c", "posix")

# the functions that map case, by their argument's collation (transforms._case_mapped)
_CASE_MAPPED = (exp.Lower, exp.Upper, exp.Initcap, exp.ILike)


def _explicit(node: exp.Expression) -> exp.Collate | None:
    """The ``x COLLATE "name"`` an operand is, if it is one."""
    inner = unparen(node)
    return inner if isinstance(inner, exp.Collate) else None


def _text_kind(node: exp.Expression) -> str:
    """:func:`kind_of`, seeing through ``x COLLATE "name"`` (typed as nothing)."""
    collate = _explicit(node)
    return kind_of(collate.this if collate is not None else node)


def _keyed(node: exp.Expression, function: str = KEY_FUNCTION) -> exp.Expression:
    return udf(function, node)


def _order_items(ordered: exp.Ordered) -> list[exp.Expression] | None:
    """The select items an ORDER BY item may name by position or output name (None for
    a window's ORDER BY, which names none)."""
    order = ordered.parent
    owner = order.parent if isinstance(order, exp.Order) else None
    if isinstance(owner, exp.SetOperation):
        return list(leftmost(owner).expressions)
    if isinstance(owner, exp.Select):
        return list(owner.expressions)
    return None


def _named_item(ordered: exp.Ordered) -> exp.Expression | None:
    """The select item an ORDER BY item names by position or output name, if any."""
    items = _order_items(ordered)
    key = ordered.this
    if not items:
        return None
    i = position_of(key)
    if i is not None:
        return items[i - 1] if 1 <= i <= len(items) else None
    if isinstance(key, exp.Column) and not key.table:
        for item in items:
            if isinstance(item, exp.Alias) and item.alias == key.name:
                return item
        if isinstance(ordered.parent.parent if ordered.parent else None, exp.SetOperation):
            for item in items:
                if item.alias_or_name == key.name:
                    return item
    return None


class ExplicitCollations:
    """The collations a statement names in ``COLLATE "name"``, each with the key function
    ordering by it in the client engine (``pg_collation_key_<n>``)."""

    def __init__(self, resolve: Callable[[str], Collation] | None) -> None:
        self._resolve = resolve
        self.functions: dict[str, Collation] = {}
        self._by_name: dict[str, tuple[Collation, str | None]] = {}

    def of(self, collate: exp.Collate) -> tuple[Collation, str | None]:
        """(the collation, its key function -- None where the order is bytewise)."""
        target = collate.expression
        name = target.name if isinstance(target, exp.Expression) else ""
        if name not in self._by_name:
            if name.lower() in _BYTEWISE_NAMES:
                coll = C_COLLATION
            elif self._resolve is None:
                raise _refuse(f'COLLATE "{name}" (only "C" and "POSIX" here)', collate)
            else:
                coll = self._resolve(name)
            function = None
            if not coll.bytewise:
                function = next(
                    (f for f, c in self.functions.items() if c == coll),
                    f"{KEY_FUNCTION}_{len(self.functions)}",
                )
                self.functions[function] = coll
            self._by_name[name] = (coll, function)
        return self._by_name[name]


@dataclass
class _Comparison:
    """A node that orders or compares values: the operands it orders by, whether they
    are text, and (an ORDER BY naming a select item) the item."""

    operands: list[exp.Expression]
    text: bool
    item: exp.Expression | None = None


def _ordered(node: exp.Ordered) -> _Comparison:
    item = _named_item(node)
    target = cast(exp.Expression, item.unalias()) if item is not None else node.this
    return _Comparison([target, node.this], _text_kind(target) == "text", item)


def _between(node: exp.Between) -> _Comparison:
    operands = [node.this, node.args["low"], node.args["high"]]
    return _Comparison(operands, _text_kind(node.this) == "text")


def _aggregated(node: exp.Min | exp.Max) -> _Comparison:
    arg = node.this
    operand = arg.expressions[0] if isinstance(arg, exp.Distinct) else arg
    return _Comparison([operand], _text_kind(operand) == "text")


def _extremes(node: exp.Greatest | exp.Least) -> _Comparison:
    operands = [node.this, *node.expressions]
    return _Comparison(operands, any(_text_kind(x) == "text" for x in operands))


def _range(node: exp.Binary) -> _Comparison:  # < <= > >=
    operands = [node.this, node.expression]
    types = [_text_kind(x) for x in operands]
    text = (
        "text" in types
        and all(t in ("text", "other") for t in types)
        and not any(is_uuid(x) for x in operands)  # (a string compared with one)
    )
    return _Comparison(operands, text)


# what each node type that orders values orders by (:func:`kinds.by_type`)
_ORDERINGS: dict[type[exp.Expression], Callable[[Any], _Comparison]] = {
    exp.Ordered: _ordered,
    exp.Between: _between,
    exp.Min: _aggregated,
    exp.Max: _aggregated,
    exp.Greatest: _extremes,
    exp.Least: _extremes,
    **dict.fromkeys(_RANGE_OPS, _range),
}


def _key_ordered(node: exp.Ordered, function: str, item: exp.Expression | None) -> None:
    if item is None:
        node.set("this", _keyed(node.this, function))
        return
    in_set_op = isinstance(node.parent.parent if node.parent else None, exp.SetOperation)
    node.set("this", _keyed(_output_ref(item, in_set_op), function))


def _key_between(node: exp.Between, function: str, item: exp.Expression | None) -> None:
    for arg in ("this", "low", "high"):
        node.set(arg, _keyed(node.args[arg], function))


def _key_range(node: exp.Binary, function: str, item: exp.Expression | None) -> None:
    node.set("this", _keyed(node.this, function))
    node.set("expression", _keyed(node.expression, function))


def _key_aggregated(node: exp.Min | exp.Max, function: str, item: exp.Expression | None) -> None:
    arg = node.this
    inner = arg.expressions[0] if isinstance(arg, exp.Distinct) else arg
    fn = "arg_min" if isinstance(node, exp.Min) else "arg_max"
    node.replace(udf(fn, inner.copy(), _keyed(inner.copy(), function)))


# how each node type is made to order by a key function: its sides moved under it
_KEYED_SIDES: dict[type[exp.Expression], Callable[[Any, str, Any], None]] = {
    exp.Ordered: _key_ordered,
    exp.Between: _key_between,
    **dict.fromkeys(_RANGE_OPS, _key_range),
}
# and the aggregates, replaced whole, last (what they aggregate carries the other rewrites)
_KEYED_AGGREGATES: dict[type[exp.Expression], Callable[[Any, str, Any], None]] = {
    exp.Min: _key_aggregated,
    exp.Max: _key_aggregated,
}


def text_order(
    tree: exp.Expression, keyed: bool, explicit: ExplicitCollations | None = None
) -> bool:
    """Find what orders text in the (annotated) tree -- ORDER BY keys, window orders,
    ``<`` ``<=`` ``>`` ``>=`` BETWEEN, min/max, greatest/least -- and make DuckDB order it
    by the collation key (``pg_collation_key(x)``; min/max become ``arg_min`` /
    ``arg_max`` by the key): under the column collation if ``keyed``, under an explicit
    ``COLLATE "name"`` always (``explicit``: its key function; ``COLLATE "C"`` orders
    bytewise, as DuckDB compares strings).  Equality, grouping and DISTINCT need nothing:
    a deterministic collation's equality is the bytes'.  Returns whether the statement
    orders text under the column collation.

    Every decision is taken on the annotated tree first (a rewritten node has no type),
    then applied: sides moved under the key function, not copied, and min/max last, so
    that what they aggregate carries the other rewrites."""
    explicit = explicit or ExplicitCollations(None)
    # (node, its key function, the select item an ORDER BY names)
    todo: list[tuple[exp.Expression, str, exp.Expression | None]] = []
    found = False
    for node in tree.find_all(*_ORDERINGS):
        comparison = _ordering(node)
        if not comparison.text:
            continue
        collate = next((c for c in map(_explicit, comparison.operands) if c is not None), None)
        if collate is not None:
            function = explicit.of(collate)[1]
        else:
            found = True
            function = KEY_FUNCTION if keyed else None
        if function is None:
            continue
        if isinstance(node, exp.Greatest | exp.Least):
            raise _refuse(f"{node.sql_name().lower()} of text under a collation", node)
        todo.append((node, function, comparison.item))
    for table in (_KEYED_SIDES, _KEYED_AGGREGATES):
        for node, function, item in todo:
            key = by_type(table, node)
            if key is not None:
                key(node, function, item)
    for collate in list(tree.find_all(exp.Collate)):
        user = collate.parent
        while isinstance(user, exp.Paren):
            user = user.parent
        if isinstance(user, _CASE_MAPPED):  # (its case mapping is the collation's)
            user.meta["collation"] = collate.expression.name
        collate.replace(collate.this)  # the order is in the key functions now
    return found


def _ordering(node: exp.Expression) -> _Comparison:
    what = by_type(_ORDERINGS, node)
    assert what is not None  # (found by its type)
    return what(node)


def _output_ref(item: exp.Expression, in_set_op: bool) -> exp.Expression:
    """What an ORDER BY naming a select item orders by: in a SELECT the (qualified) column
    itself, when the item is one (aliased or not); else an output name that names it alone
    -- its alias or column name, or a name given to it here (the application's output
    names are taken before, from the statement itself)."""
    inner = item.unalias()
    if isinstance(inner, exp.Column) and not in_set_op:
        return inner.copy()
    owner = item.parent
    siblings = list(owner.expressions) if owner is not None else [item]
    name = item.alias_or_name
    # (an output name that is also an input column's names the input column inside the
    # key function's call in DuckDB: ``SELECT j::text AS j ... ORDER BY j``)
    shadowed = owner is not None and any(
        c.table and c.name == name for c in owner.find_all(exp.Column)
    )
    if shadowed and not in_set_op:
        return cast(exp.Expression, inner.copy())  # (a renamed output would hide it)
    if name and not shadowed and sum(1 for x in siblings if x.alias_or_name == name) == 1:
        return exp.column(name)
    name = f"__ordered_{siblings.index(item)}"
    item.replace(exp.alias_(inner.copy(), name))
    return exp.column(name)
