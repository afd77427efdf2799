"""A qualified, annotated statement written in the client engine's dialect: its nodes
rewritten (engine/transforms.py), its outputs prepared for the decoders that give them
PostgreSQL's values on the way out, and the places the two dialects read alike SQL
differently made explicit.

* outputs PostgreSQL computes by numeric division (``avg`` of integers and numerics,
  ``a / b`` of numerics) are divided on the client (:func:`quotient_outputs`,
  :func:`pg_divide`); casts of text and floats to numeric keep each value's display
  scale (:func:`numeric_outputs`, :func:`numeric_out`); choices between numerics of
  different scales get the chosen value's (:func:`scale_outputs`, :func:`rescale`);
  intervals of ``age()`` come back as psycopg loads PostgreSQL's
  (:func:`interval_outputs`);
* ``LIKE`` escapes with a backslash by default, as PostgreSQL's does; a constant key of
  ORDER BY / GROUP BY / DISTINCT ON orders nothing; output names differing only in case
  stay two; a string compared with a bytea, char(n) or boolean column is read as
  PostgreSQL reads it there (:func:`typed_strings`);
* a regular expression is matched by the engine only where both engines' syntaxes read
  it alike (:func:`regexes.portable_regex`).

Parameters are the caller's: placeholders arrive numbered ($p0, ...), the held ones'
types named (:func:`engine_sql`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

from psycopg import errors as pg_errors
from sqlglot import exp
from sqlglot.expressions.datatypes import DType

from ..values.encodings import encoding_for
from .kinds import (
    COMPARISONS,
    by_type,
    char_length,
    derived_item,
    duck_cast,
    has_age,
    is_interval,
    kind_of,
    position_of,
    scale_of,
    udf,
    unparen,
)
from .numeric import float_numeric, numeric_div, numeric_in, pg_avg, pg_variance
from .runtime import refusal as _refuse
from .sums import REALS, VARIANCES, avg_parts, variance_parts
from .transforms import rewrite_bottom_up


def _bytea_value(text: str) -> bytes:
    return bytes(encoding_for("bytea").coerce(text))


def _unpadded(text: str) -> str:
    return text.rstrip(" ")


# How a string compared with a column of each type is read, as PostgreSQL reads it: its
# value (a parameter's, when bound) and the node a literal becomes.  bytea: the input
# function's reading (hex or escape format), not the engine's; char(n): without trailing
# spaces, which a bpchar comparison ignores.
def _time_literal(value: Any) -> exp.Expression:
    if not isinstance(value, dt.time):  # (24:00:00, which the engine's time has not)
        raise _refuse(f"the time {value!r} in the client engine")
    return exp.cast(exp.Literal.string(value.isoformat()), exp.DataType.Type.TIME)


STRING_READERS: dict[DType, tuple[Callable[[str], Any], Callable[[Any], exp.Expression]]] = {
    exp.DataType.Type.VARBINARY: (
        _bytea_value,
        lambda b: exp.Anonymous(this="from_hex", expressions=[exp.Literal.string(b.hex())]),
    ),
    exp.DataType.Type.CHAR: (_unpadded, exp.Literal.string),
    # (PostgreSQL's time input: '2:00', 'allballs', '1:30 PM')
    exp.DataType.Type.TIME: (lambda text: encoding_for("time").coerce(text), _time_literal),
    # (PostgreSQL's boolean spellings: 'of', '   f  ', 'yes', '1', ...)
    exp.DataType.Type.BOOLEAN: (
        lambda text: encoding_for("boolean").coerce(text),
        lambda b: exp.Boolean(this=b),
    ),
}


def typed_strings(tree: exp.Expression) -> None:
    """Each string literal or parameter compared with a bytea or char(n) column read as
    PostgreSQL reads it there (``STRING_READERS``), not as the client engine would."""

    def reading(node: exp.Expression) -> DType | None:
        typed = unparen(node).type
        return typed.this if typed is not None and typed.this in STRING_READERS else None

    def read(node: exp.Expression, kind: DType) -> None:
        inner = unparen(node)
        if isinstance(inner, exp.Placeholder):
            inner.meta["read_as"] = kind  # (its value read so when bound: to_duckdb)
        elif isinstance(inner, exp.Literal) and inner.is_string:
            value, literal = STRING_READERS[kind]
            inner.replace(literal(value(inner.this)))

    for node in list(tree.find_all(*COMPARISONS, exp.Between, exp.In)):
        if isinstance(node, exp.Between | exp.In):
            kind = reading(node.this)
            if kind is not None:
                for arg in [node.args.get("low"), node.args.get("high"), *node.expressions]:
                    if arg is not None:
                        read(arg, kind)
            continue
        for this, other in ((node.this, node.expression), (node.expression, node.this)):
            kind = reading(this)
            if kind is not None:
                read(other, kind)
                break


_LIKES = (exp.Like,)


def escape_likes(tree: exp.Expression) -> None:
    """PostgreSQL's LIKE escapes with a backslash unless told otherwise; DuckDB's does not."""
    # innermost first: wrapping a LIKE copies it, and a LIKE nested in its operand (in a
    # CASE) must be wrapped in the copy, not in the node the copy replaced
    for like in reversed(list(tree.find_all(*_LIKES))):
        if not isinstance(like.parent, exp.Escape):
            like.replace(exp.Escape(this=like.copy(), expression=exp.Literal.string("\\")))


def quotient_outputs(tree: exp.Expression) -> dict[int, tuple[str, int]]:
    """Rewrite the outermost SELECT's items that PostgreSQL computes by numeric division
    -- ``avg(x)`` of integers/numerics, ``a / b`` of numerics, variances and standard
    deviations of integers/numerics -- into their dividend, with the divisor appended as
    a hidden item (a variance's sum of squares another, after it): {item index: (kind,
    index of its divisor)}.  The client divides them with PostgreSQL's numeric division, whose
    result scale depends on the values (one output column may hold several scales)."""
    if not isinstance(tree, exp.Select):
        return {}
    items = tree.expressions
    out: dict[int, tuple[str, int]] = {}
    for i, item in enumerate(list(items)):
        node = item.this if isinstance(item, exp.Alias) else item
        while isinstance(node, exp.Paren):
            node = node.this
        if isinstance(node, exp.Div) and node.meta.get("avg"):
            # an avg the server computed in parts (aggregate.py): sum / count
            kind, dividend, divisor = "avg", node.this.copy(), node.expression.copy()
        elif (isinstance(node, exp.Avg) and kind_of(node.this) != "float") or (
            isinstance(node, exp.Window | exp.Filter) and isinstance(node.this, exp.Avg)
        ):
            kind = "avg"
            dividend, divisor = avg_parts(node)
        elif type(node) in VARIANCES or (
            isinstance(node, exp.Filter) and type(node.this) in VARIANCES
        ):
            # (its sum of squares a second hidden item, after the count)
            kind = VARIANCES[type(node.this if isinstance(node, exp.Filter) else node)]
            dividend, divisor, squares = variance_parts(node)
        elif isinstance(node, exp.Div):
            a, b = kind_of(node.this), kind_of(node.expression)
            if not (a in ("int", "decimal") and b in ("int", "decimal") and "decimal" in (a, b)):
                continue
            if node.find(exp.Placeholder):
                continue  # refused by the rewrite: a parameter's type decides the division
            kind, dividend, divisor = "div", node.this.copy(), node.expression.copy()
        else:
            continue
        if tree.args.get("distinct") is not None:
            raise _refuse(f"{kind} with DISTINCT rows", node)
        order = tree.args.get("order")
        if order is not None:
            alias = item.alias if isinstance(item, exp.Alias) else None
            for o in order.expressions:
                key = o.this
                if (
                    key.find(exp.Avg, exp.Div, *VARIANCES)
                    or (isinstance(key, exp.Column) and not key.table and key.name == alias)
                    or (
                        isinstance(key, exp.Literal)
                        and not key.is_string
                        and key.name == str(i + 1)
                    )
                ):
                    raise _refuse("ORDER BY an output computed by numeric division", o)
        node.replace(dividend)
        tree.append("expressions", exp.Alias(this=divisor, alias=exp.to_identifier(f"__n{i}")))
        out[i] = (kind, len(tree.expressions) - 1)
        if kind in _VARIANCE_KINDS:
            tree.append("expressions", exp.Alias(this=squares, alias=exp.to_identifier(f"__q{i}")))
    return out


def _numeric_cast(node: exp.Expression) -> bool:
    """A cast of a column or expression to numeric without a precision."""
    return (
        isinstance(node, exp.Cast)
        and node.to.is_type(exp.DataType.Type.DECIMAL)
        and not node.to.expressions
        and not isinstance(node.this, exp.Literal | exp.Placeholder)
    )


def _summed_text_numeric(node: exp.Expression) -> exp.Cast | None:
    """The cast of ``sum(text::numeric)`` (an avg's, split by quotient_outputs): summed
    exactly on its texts (runtime.numeric_text_sum), its value's size unbounded."""
    if not isinstance(node, exp.Sum):
        return None
    arg = node.this
    while isinstance(arg, exp.Paren):
        arg = arg.this
    if _numeric_cast(arg) and kind_of(arg.this) == "text" and char_length(arg.this) is None:
        assert isinstance(arg, exp.Cast)
        return arg
    return None


def numeric_outputs(tree: exp.Expression, reals: frozenset[tuple[str, str]]) -> dict[int, int]:
    """The outermost SELECT's items that cast text, double precision or real to numeric
    without a precision: PostgreSQL keeps each value's own display scale (text's as
    written, a float's 15 or 6 significant digits), which no DECIMAL type of the client
    engine holds.  Each is computed as the text or the float and converted on the client
    (numeric.numeric_in / float_numeric); {item index: the source's type oid (25, 700,
    701)}; ``reals``: the (table alias, column) pairs that are real (sqlglot reads both
    float types as double).  Ordered by, or made DISTINCT, the converted value would not
    be compared: refused there by the cast's check."""
    if not isinstance(tree, exp.Select) or tree.args.get("distinct") is not None:
        return {}
    out: dict[int, int] = {}
    names: set[str] = set()
    for i, item in enumerate(tree.expressions):
        node = item.unalias()
        while isinstance(node, exp.Paren):
            node = node.this
        if not _numeric_cast(node) and _summed_text_numeric(node) is None:
            continue
        summed = _summed_text_numeric(node)
        if summed is not None:  # sum(text::numeric), exact whatever its size: its text
            node.meta["text_sum"] = True
            node = summed
        src = kind_of(node.this) if isinstance(node, exp.Cast) else None
        if src == "text" and char_length(node.this) is None:
            oid = 25
        elif src == "float":
            column = node.this
            read = {(c.table, c.name) for c in column.find_all(exp.Column)}
            if isinstance(column, exp.Column) and (column.table, column.name) in reals:
                oid = 700
            elif isinstance(column, exp.Column) and derived_item(column) is None:
                oid = 701
            elif read & reals or column.find(exp.Column) is None:
                continue  # (a real computed, or a derived table's column: not known here)
            else:
                oid = 701
        else:
            continue
        order = tree.args.get("order")
        alias = item.alias if isinstance(item, exp.Alias) else None
        if order is not None and any(
            o.this.find(exp.Cast)
            or (isinstance(o.this, exp.Column) and not o.this.table and o.this.name == alias)
            or position_of(o.this) == i + 1
            for o in order.expressions
        ):
            continue  # (refused by the cast's check)
        node.meta["numeric_out"] = True
        out[i] = oid
        if alias:
            names.add(alias)
    return out


def numeric_out(value: Any, oid: int) -> Any:
    """An item of :func:`numeric_outputs` as PostgreSQL's cast gives it."""
    if value is None:
        return None
    return numeric_in(value) if oid == 25 else float_numeric(value, oid)


def _static_scale(node: exp.Expression) -> exp.Expression | None:
    """The scale the type alone gives (None where a choice inside would vary it)."""
    if node.find(exp.Case, exp.Coalesce, exp.Greatest, exp.Least):
        return None  # (a static scale would hide a choice inside)
    scale = scale_of(node)
    return None if scale is None else exp.Literal.number(scale)


def _operands_scale(node: exp.Add | exp.Sub | exp.Mul) -> exp.Expression | None:
    a, b = _display_scale(node.this), _display_scale(node.expression)
    if a is None or b is None:
        return None
    if isinstance(node, exp.Mul):
        return exp.Add(this=a, expression=b)
    return exp.Case(
        ifs=[exp.If(this=exp.GTE(this=a.copy(), expression=b.copy()), true=a)], default=b
    )


def _case_scale(node: exp.Case) -> exp.Expression | None:
    if node.this is not None:
        return None
    ifs = []
    for branch in node.args.get("ifs") or []:
        ds = _display_scale(branch.args["true"])
        if ds is None:
            return None
        ifs.append(exp.If(this=branch.this.copy(), true=ds))
    default = node.args.get("default")
    ds_default = _display_scale(default) if default is not None else exp.Null()
    if ds_default is None:
        return None
    return exp.Case(ifs=ifs, default=ds_default)


def _coalesce_scale(node: exp.Coalesce) -> exp.Expression | None:
    ifs = []
    for arg in [node.this, *node.expressions]:
        ds = _display_scale(arg)
        if ds is None:
            return None
        present = exp.Not(this=exp.Is(this=arg.copy(), expression=exp.Null()))
        ifs.append(exp.If(this=present, true=ds))
    return exp.Case(ifs=ifs)


def _filtered_scale(node: exp.Filter) -> exp.Expression | None:
    if not isinstance(node.this, exp.Sum):
        return _static_scale(node)
    widest = _display_scale(node.this)
    if widest is None:
        return None
    return exp.Filter(this=widest, expression=node.expression.copy())


def _sum_scale(node: exp.Sum) -> exp.Expression | None:
    if isinstance(node.this, exp.Distinct):
        return _static_scale(node)
    # a sum's display scale: the widest of the values summed
    arg = node.this
    ds = _display_scale(arg)
    if ds is None:
        return None
    node.meta["rescaled"] = True
    return exp.Max(
        this=exp.Case(
            ifs=[exp.If(this=exp.Is(this=arg.copy(), expression=exp.Null()), true=exp.Null())],
            default=ds,
        )
    )


def _extreme_scale(node: exp.Greatest | exp.Least) -> exp.Expression | None:
    # the value kept is the first non-NULL one equal to the result (PostgreSQL keeps the
    # first of equals), with its own scale
    ifs = []
    for arg in [node.this, *node.expressions]:
        ds = _display_scale(arg)
        if ds is None:
            return None
        ifs.append(exp.If(this=exp.EQ(this=arg.copy(), expression=node.copy()), true=ds))
    return exp.Case(ifs=ifs)


def _column_scale(node: exp.Column) -> exp.Expression | None:
    inner = derived_item(node)
    derived = _display_scale(inner) if inner is not None else None
    # (its annotated type is the expression's as sqlglot derives it; a scale that reads
    # the derived table's own columns cannot be computed out here)
    if derived is not None and derived.find(exp.Column) is None:
        return derived
    return _static_scale(node)


# the display scale of a node, by its type (:func:`kinds.by_type`); other nodes have the
# scale their type gives (:func:`_static_scale`)
_DISPLAY_SCALES: dict[type[exp.Expression], Callable[[Any], exp.Expression | None]] = {
    exp.Null: lambda node: exp.Null(),
    exp.Neg: lambda node: _display_scale(node.this),
    exp.Abs: lambda node: _display_scale(node.this),
    exp.Add: _operands_scale,
    exp.Sub: _operands_scale,
    exp.Mul: _operands_scale,
    exp.Case: _case_scale,
    exp.Coalesce: _coalesce_scale,
    exp.Filter: _filtered_scale,
    exp.Sum: _sum_scale,
    exp.Greatest: _extreme_scale,
    exp.Least: _extreme_scale,
    exp.Nullif: lambda node: None,
    exp.Column: _column_scale,
}


def _display_scale(node: exp.Expression) -> exp.Expression | None:
    """An expression giving, per row, the display scale PostgreSQL gives ``node``'s
    numeric value (None: not derivable here)."""
    while isinstance(node, exp.Paren):
        node = node.this
    scale = by_type(_DISPLAY_SCALES, node)
    return _static_scale(node) if scale is None else scale(node)


# the choices between values, each keeping its own display scale in PostgreSQL
_CHOICES = (exp.Case, exp.Coalesce, exp.Greatest, exp.Least)


def scale_outputs(tree: exp.Expression) -> dict[int, int]:
    """The outermost SELECT's items (hidden divisors included) that choose between
    numerics of different scales (CASE, COALESCE), directly in a statement without
    grouping or through ``sum(x)``: PostgreSQL keeps each value's display scale (a sum's:
    the widest value summed), DuckDB gives the widest branch's.  A
    hidden item gives the item's display scale as PostgreSQL derives it (a choice's: the
    chosen branch's; a sum's: the max of x's per-row display scale; a product's: the sum
    of its factors'); {item index: index of its hidden item}."""
    if not isinstance(tree, exp.Select) or tree.args.get("distinct") is not None:
        return {}  # (with DISTINCT a hidden item would change which rows are distinct)
    grouped = tree.args.get("group") is not None or any(
        isinstance(a, exp.AggFunc) and not isinstance(a.parent, exp.Window)
        for e in tree.expressions
        for a in e.find_all(exp.AggFunc)
    )
    out: dict[int, int] = {}
    for i, item in enumerate(list(tree.expressions)):
        node = item.this if isinstance(item, exp.Alias) else item
        summed = any(
            kind_of(s.this) == "decimal" and s.this.find(*_CHOICES)
            for s in node.find_all(exp.Sum)
            if not isinstance(s.parent, exp.Window)
        )
        # a row's own choice (no grouping), or a group's between aggregates and
        # constants (coalesce(sum(x), 0)): its display scale per row, beside it
        choices = list(node.find_all(*_CHOICES))
        chosen = bool(choices) and (not grouped or all(map(_of_aggregates, choices)))
        if kind_of(node) != "decimal" or not (summed or chosen):
            continue
        if node.find(exp.Window, exp.Div, exp.Subquery):
            continue  # not derivable here: refused where the choice is
        widest = _display_scale(node)
        if widest is None:
            continue
        for choice in node.find_all(*_CHOICES):
            choice.meta["rescaled"] = True
        tree.append("expressions", exp.Alias(this=widest, alias=exp.to_identifier(f"__s{i}")))
        out[i] = len(tree.expressions) - 1
    return out


def _of_aggregates(choice: exp.Expression) -> bool:
    """A choice whose columns are all read inside aggregates (one value per group)."""
    for col in choice.find_all(exp.Column):
        agg = col.find_ancestor(exp.AggFunc, exp.Filter)  # (an aggregate's FILTER too)
        if agg is None or isinstance(agg.parent, exp.Window) or not _within(agg, choice):
            return False
    return True


def _within(node: exp.Expr, ancestor: exp.Expr) -> bool:
    found: exp.Expr | None = node
    while found is not None and found is not ancestor:
        found = found.parent
    return found is ancestor


def rescale(value: Any, scale: Any) -> Any:
    """An item of :func:`scale_outputs` at PostgreSQL's display scale (exact: the digits
    dropped are zeros)."""
    if value is None or scale is None:
        return value
    return Decimal(value).quantize(Decimal(1).scaleb(-int(scale)))


_VARIANCE_KINDS = frozenset(VARIANCES.values())


def pg_divide(kind: str, dividend: Any, divisor: Any, squares: Any = None) -> Any:
    """An output of :func:`quotient_outputs`, divided as PostgreSQL divides it (a
    variance's or standard deviation's: its sum, its count and its sum of squares)."""
    if kind in _VARIANCE_KINDS:
        return pg_variance(kind, dividend, divisor, squares)
    if kind == "avg":
        return pg_avg(dividend, divisor, None)
    if dividend is None or divisor is None:
        return None
    if divisor == 0:
        raise pg_errors.DivisionByZero("division by zero")
    return numeric_div(Decimal(dividend), Decimal(divisor))


def interval_outputs(tree: exp.Expression) -> set[int]:
    """The outermost SELECT's items that are intervals with months (of age()): each
    converted by ``pg_interval_out`` to what psycopg loads (engine.py).  Ordered by,
    or made DISTINCT, such an output would be compared converted: refused."""
    if not isinstance(tree, exp.Select):
        return set()
    out: set[int] = set()
    names: set[str] = set()
    for i, item in enumerate(tree.expressions):
        node = item.unalias()
        if is_interval(node) and has_age(node):
            out.add(i)
            if isinstance(item, exp.Alias):
                names.add(item.alias)
    if not out:
        return out
    if tree.args.get("distinct") is not None:
        raise _refuse("DISTINCT over an interval of age()", tree)
    order = tree.args.get("order")
    for o in order.expressions if order is not None else []:
        key = o.this
        position = position_of(key)
        if (
            has_age(key)
            or (isinstance(key, exp.Column) and not key.table and key.name in names)
            or (position is not None and position - 1 in out)
        ):
            raise _refuse("ORDER BY an interval of age()", o)
    for i in out:
        item = tree.expressions[i]
        node = item.unalias()
        wrapped = udf("pg_interval_out", node.copy())
        if isinstance(item, exp.Alias):
            item.set("this", wrapped)
        else:
            # (the output keeps the name PostgreSQL gives it: output_names reads the
            # original statement)
            tree.expressions[i].replace(wrapped)
    return out


def constant_keys(tree: exp.Expression) -> None:
    """A constant key of ORDER BY, GROUP BY or DISTINCT ON orders or groups nothing in
    PostgreSQL, unless it is an integer written bare (a column's position): ``(2)``,
    ``1 + 1`` (folded to 2), ``2.5``.  DuckDB reads an integer constant as a position and
    ignores any other constant in DISTINCT ON (keeping every row): each such constant
    goes in a cast, an expression DuckDB keeps as one."""
    keys: list[exp.Expression] = []
    for node in tree.find_all(exp.Order, exp.Group, exp.Distinct):
        if isinstance(node, exp.Order):
            keys += [o.this for o in node.expressions if isinstance(o, exp.Ordered)]
        elif isinstance(node, exp.Group):
            keys += list(node.expressions)
        elif isinstance(node.args.get("on"), exp.Tuple):
            keys += list(node.args["on"].expressions)
    for key in keys:
        inner = key
        while isinstance(inner, exp.Paren):
            inner = inner.this
        # (a negative number is a constant too: ``0 + -0.25`` folds to ``-0.25``)
        const = inner.this if isinstance(inner, exp.Neg) else inner
        if isinstance(const, exp.Literal) and position_of(key) is None:
            inner.replace(duck_cast(inner.copy(), "VARCHAR" if const.is_string else "DOUBLE"))


def case_distinct_names(tree: exp.Expression) -> None:
    """Output names that differ only in case (``id`` and ``"ID"``) are two names in
    PostgreSQL, one in DuckDB (its identifiers ignore case, quoted or not): the later
    ones of the statement's own SELECT are renamed, with the ORDER BY keys naming them
    (the application's column names are taken from the statement, not from the engine).
    Inside a subquery, whose outer references would need the same care, refused."""
    for select in tree.find_all(exp.Select):
        seen: dict[str, str] = {}
        for i, item in enumerate(select.expressions):
            if not isinstance(item, exp.Alias):
                continue
            name = item.alias
            if seen.setdefault(name.lower(), name) == name:
                continue
            if select is not tree:
                raise _refuse("output names differing only in case in a subquery", select)
            renamed = f"{name}__{i}"
            order = select.args.get("order")
            for col in order.find_all(exp.Column) if order is not None else ():
                if not col.table and col.name == name:
                    col.set("this", exp.to_identifier(renamed, quoted=True))
            item.set("alias", exp.to_identifier(renamed, quoted=True))


# what each output of a statement needs on the way out of the engine:
# {item: ("avg" | "div", its divisor's item)}, {item: its display scale's item},
# {item: the numeric's source type oid}
OutputConversions = tuple[dict[int, tuple[str, int]], dict[int, int], dict[int, int]]


def prepare_outputs(tree: exp.Expression, reals: frozenset[tuple[str, str]]) -> OutputConversions:
    """The outermost SELECT's items that the client converts after the engine has run
    (quotients, display scales, numerics of text or floats), rewritten for it; before
    the parameters are numbered and the nodes rewritten."""
    return quotient_outputs(tree), scale_outputs(tree), numeric_outputs(tree, reals)


def engine_sql(
    tree: exp.Expression, reals: frozenset[tuple[str, str]], held_params: Mapping[str, str]
) -> str:
    """The DuckDB SQL of the annotated, qualified tree, its parameters numbered
    ($p0, ...); ``held_params``: the engine type of each parameter compared with a column
    held by its order keys (engine/held.py); ``reals``: the (table alias, column) pairs
    that are real (sqlglot reads both float types as double)."""
    token = REALS.set(reals)
    try:
        tree = rewrite_bottom_up(tree)
    finally:
        REALS.reset(token)
    for ph in list(tree.find_all(exp.Placeholder)):
        if ph.name in held_params:
            ph.replace(duck_cast(ph.copy(), held_params[ph.name]))
    interval_outputs(tree)
    escape_likes(tree)
    case_distinct_names(tree)
    constant_keys(tree)
    return tree.sql("duckdb")
