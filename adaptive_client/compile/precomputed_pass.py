"""The planner pass that uses precomputed onions (see :mod:`adaptive_client.catalog.precomputed`).

After names are qualified and constants folded, every occurrence of a table's
precomputed expression over one FROM item -- compared in a canonical spelling, so
``l_extendedprice*(1-l_discount)`` matches ``(l.l_extendedprice * (1 - l.l_discount))``
-- is replaced by a reference to that item's hidden column.  The rest of the rewrite
then treats it as any column: the server filters and groups over its Eq onion, orders
and compares over Ord, sums over Sum; the residual reads it decrypted.  The largest
occurrence wins (``disc_price * (1 + l_tax)`` is itself a declared expression in TPC-H's
configuration, and replaced whole).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from psycopg import errors as pg_errors
from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.scope import traverse_scope

from ..catalog import precomputed
from ..catalog.metadata import Catalog, TableMeta
from ..engine.engine_types import duck_type, qualified, schema_of
from ..engine.kinds import is_star
from ..errors import UndefinedColumn, UnsupportedQuery
from .fold import fold_constants
from .output_names import pg_name


def _patterns(table: TableMeta, alias: str) -> dict[str, str]:
    """Canonical text of each precomputed expression over ``alias`` -> its column."""
    out: dict[str, str] = {}
    for col in table.precomputed.values():
        tree = precomputed.expression_of(table, col).tree.copy()
        for column in tree.find_all(exp.Column):
            column.set("table", exp.to_identifier(alias))
        out[precomputed.canonical(tree)] = col.name
    return out


def has_precomputed(catalog: Catalog, tree: exp.Expression) -> bool:
    """Whether a table the statement names has precomputed onions (the pass is skipped
    otherwise, leaving the statement as written)."""
    for t in tree.find_all(exp.Table):
        meta = catalog.tables.get(t.name.lower())
        if meta is not None and meta.precomputed and not t.args.get("db"):
            return True
    return False


def substitute(catalog: Catalog, tree: exp.Expression) -> list[tuple[str, str]]:
    """Replace, in place, each occurrence of a precomputed expression in ``tree``
    (qualified) by its column; the (table, column) pairs used."""
    used: list[tuple[str, str]] = []
    for scope in traverse_scope(tree):
        patterns: dict[str, tuple[str, str, str]] = {}  # text -> (alias, table, column)
        booleans: dict[str, set[str]] = {}
        for alias, source in scope.sources.items():
            if not isinstance(source, exp.Table):
                continue
            meta = catalog.tables.get(source.name.lower())
            if meta is None or not meta.precomputed:
                continue
            for text, column in _patterns(meta, alias).items():
                patterns[text] = (alias, meta.name, column)
            booleans[meta.name] = {
                c.name for c in meta.precomputed.values() if c.type.name == "boolean"
            }
        if not patterns:
            continue

        def replace(
            node: exp.Expression,
            patterns: dict[str, tuple[str, str, str]] = patterns,
            booleans: dict[str, set[str]] = booleans,
        ) -> exp.Expression:
            if isinstance(node, exp.Column | exp.Literal | exp.Identifier):
                return node
            hit = patterns.get(precomputed.canonical(node))
            if hit is None:
                return node
            _refuse_number_comparison(node)
            alias, table, column = hit
            used.append((table, column))
            ref = exp.column(column, table=alias)
            if table in booleans and column in booleans[table]:
                # ``b = TRUE`` is ``b`` (NULL stays NULL), and a form the server
                # compiles as a predicate over the Eq onion
                return exp.EQ(this=ref, expression=exp.true())
            return ref

        for key in ("expressions", "where", "group", "having", "order", "joins"):
            value = scope.expression.args.get(key)
            for part in value if isinstance(value, list) else [value]:
                if isinstance(part, exp.Expression):
                    _replace_top_down(part, replace)
    return used


# comparisons PostgreSQL has no text-and-number operator for
_COMPARISONS: dict[type[exp.Expression], str] = {
    exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">=",
}  # fmt: skip


def _refuse_number_comparison(node: exp.Expression) -> None:
    """PostgreSQL's 42883 for a jsonb field's text (``attrs ->> 'sku'``) compared with a
    number literal (text = integer), which the field's onion would otherwise compare
    with the number's text."""
    if not isinstance(node, exp.JSONExtractScalar | exp.JSONBExtractScalar):
        return
    side: exp.Expression = node
    parent = node.parent
    while isinstance(parent, exp.Paren):
        side, parent = parent, parent.parent
    if not isinstance(parent, exp.Expression) or type(parent) not in _COMPARISONS:
        return
    symbol = _COMPARISONS[type(parent)]
    other = parent.expression if parent.this is side else parent.this
    while isinstance(other, exp.Paren | exp.Neg):
        other = other.this
    if not isinstance(other, exp.Literal) or other.is_string:
        return
    number = "integer" if str(other.this).isdigit() and int(other.this) < 2**31 else "numeric"
    if str(other.this).isdigit() and 2**31 <= int(other.this) < 2**63:
        number = "bigint"
    left, right = ("text", number) if parent.this is side else (number, "text")
    raise pg_errors.UndefinedFunction(f"operator does not exist: {left} {symbol} {right}")


def _replace_top_down(
    node: exp.Expression, replace: Callable[[exp.Expression], exp.Expression]
) -> None:
    """Pre-order: a replaced node is not entered; nested scopes are left to their own."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, exp.Query | exp.Subquery):
            continue
        new = replace(current)
        if new is not current:
            current.replace(new)
            continue
        stack.extend(child for child in current.iter_expressions())


def with_precomputed(catalog: Catalog, stmt: exp.Select) -> exp.Select:
    """``stmt`` with its precomputed expressions replaced (qualified and folded), or
    ``stmt`` itself when it uses none."""
    if not has_precomputed(catalog, stmt):
        return stmt
    try:
        schema = schema_of(catalog, stmt)
        tree = qualified(stmt, schema)
        annotate_types(tree, schema=cast(dict[str, object], schema), dialect="postgres")
        tree = fold_constants(tree)
    except (UnsupportedQuery, UndefinedColumn):
        # (a name only split execution resolves -- a set-returning function's column in
        # FROM -- or a real error, raised by the strategies as they compile it)
        return stmt
    if not isinstance(tree, exp.Select) or not substitute(catalog, tree):
        return stmt
    _keep_output_names(stmt, tree)
    return tree


def _keep_output_names(original: exp.Select, tree: exp.Select) -> None:
    """The output columns named as the application's statement names them
    (``sum(price * weight)`` is ``sum``), not as qualification named them (``_col_0``)."""
    items = original.expressions
    if len(items) != len(tree.expressions) or any(is_star(e) for e in items):
        return
    renamed: dict[str, exp.Expression] = {}
    for item, new in zip(items, list(tree.expressions), strict=True):
        if isinstance(item, exp.Alias):
            continue
        name = pg_name(item)
        if name is not None and new.alias_or_name != name:
            if new.alias:
                renamed[new.alias] = new.unalias()
            new.replace(exp.alias_(new.unalias().copy(), exp.to_identifier(name, quoted=True)))
    # (qualification named ``GROUP BY 1`` / ``ORDER BY 1`` by the item's alias, which
    # two items may now share: the reference becomes the item's expression)
    for clause in ("group", "order", "having"):
        node = tree.args.get(clause)
        for col in list(node.find_all(exp.Column)) if node is not None else []:
            if not col.table and col.name in renamed:
                col.replace(renamed[col.name].copy())


def extend_schema(
    catalog: Catalog, schema: dict[str, dict[str, str]], used: list[tuple[str, str]]
) -> None:
    """Give the precomputed columns a statement now reads their residual types."""
    for table, column in used:
        meta = catalog.table(table)
        schema.setdefault(meta.name, {})[column] = duck_type(meta, meta.precomputed[column])
