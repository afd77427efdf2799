"""``WITH RECURSIVE`` in a client-evaluated query: evaluated by the client engine where
PostgreSQL's rules for a recursive query are known to hold, refused (0A000) where the
engine would answer a query PostgreSQL rejects.

PostgreSQL types a recursive CTE's columns by its non-recursive term and requires the
recursive term's columns to be of exactly those types (42804 otherwise: an integer column
fed a bigint, a varchar(10) fed text, a numeric(6,2) fed a product); it rejects a
recursive reference in a subquery, in an outer join or twice, and aggregates, window
functions, ORDER BY and LIMIT in the recursive term (42P19, 0A000).  The client engine
checks none of these.  So a recursive CTE is evaluated only in PostgreSQL's simple form
-- ``non-recursive term UNION [ALL] recursive term`` -- where its recursive term reads the
CTE once, in its FROM or an inner join, holds no aggregate, window, DISTINCT, GROUP BY,
ORDER BY, LIMIT or subquery, and each of its columns is of a type this module can tell
equal to the non-recursive term's (:func:`_type_of`): a stored column's type (its
modifier included), a constant's, a cast's, integer arithmetic's, concatenation's text.
"""

from __future__ import annotations

from collections.abc import Mapping

from psycopg import errors as pg_errors
from sqlglot import exp

from ..catalog.metadata import Catalog
from ..engine.runtime import refusal as _refuse
from ..values.encodings import parse_sql_type

# PostgreSQL's integer types, narrowest first: the type of their arithmetic is the wider
_INTEGERS = ("smallint", "integer", "bigint")
# a NULL constant takes the other term's type
_ANY = "any"


def check_recursive(catalog: Catalog, tree: exp.Expression) -> None:
    """Refuse each recursive CTE of ``tree`` (qualified) the client engine would not
    evaluate as PostgreSQL does (see the module)."""
    for with_ in tree.find_all(exp.With):
        if not with_.args.get("recursive"):
            continue
        for cte in with_.expressions:
            name = cte.alias_or_name
            if any(t.name == name for t in cte.this.find_all(exp.Table)):
                _check_recursive_cte(catalog, cte, name)


def _check_recursive_cte(catalog: Catalog, cte: exp.CTE, name: str) -> None:
    body = cte.this
    if not isinstance(body, exp.Union) or not isinstance(body.expression, exp.Select):
        raise _refuse("a recursive query other than non-recursive UNION [ALL] recursive", cte)
    anchor, recursive = body.this, body.expression
    if any(t.name == name for t in anchor.find_all(exp.Table)):
        raise _refuse("a recursive reference in the non-recursive term", cte)
    _check_recursive_term(recursive, name)
    anchor_items = _items(anchor)
    if anchor_items is None:
        raise _refuse("a recursive query whose non-recursive term is not one SELECT", cte)
    if len(anchor_items) != len(recursive.expressions):
        raise pg_errors.SyntaxError("each UNION query must have the same number of columns")
    anchor_types = [_type_of(catalog, anchor, e, name, {}) for e in anchor_items]
    columns = [c.name for c in cte.args["alias"].columns] if cte.args.get("alias") else []
    names = [
        columns[i] if i < len(columns) else e.alias_or_name for i, e in enumerate(anchor_items)
    ]
    own = dict(zip(names, anchor_types, strict=True))
    for i, (want, item) in enumerate(zip(anchor_types, recursive.expressions, strict=True)):
        got = _type_of(catalog, recursive, item, name, own)
        if want is None or want == _ANY or got is None or (got != want and got != _ANY):
            raise _refuse(
                f"a recursive query's column {i + 1} whose type the client cannot tell "
                "equal to the non-recursive term's (PostgreSQL requires it)",
                cte,
            )


def _items(query: exp.Expression) -> list[exp.Expression] | None:
    return query.expressions if isinstance(query, exp.Select) else None


def _check_recursive_term(term: exp.Select, name: str) -> None:
    for arg in ("group", "having", "order", "limit", "offset", "distinct", "qualify"):
        if term.args.get(arg):
            raise _refuse(f"{arg.upper()} in a recursive query's recursive term", term)
    if any(True for _ in term.find_all(exp.AggFunc, exp.Window)):
        raise _refuse("an aggregate or window function in a recursive term", term)
    if any(True for _ in term.find_all(exp.Subquery, exp.Exists)) or any(
        s is not term for s in term.find_all(exp.Select)
    ):
        raise _refuse("a subquery in a recursive query's recursive term", term)
    references = [t for t in term.find_all(exp.Table) if t.name == name]
    if len(references) != 1:
        raise _refuse("a recursive term that reads its query other than once", term)
    for join in term.args.get("joins") or []:
        if join.args.get("side") or join.args.get("kind") in ("FULL", "OUTER"):
            raise _refuse("an outer join in a recursive query's recursive term", term)


def _tables(query: exp.Select) -> dict[str, str]:
    """The query's FROM items, by alias: their table names."""
    out = {}
    for table in query.find_all(exp.Table):
        out[table.alias_or_name] = table.name
    return out


def _values(query: exp.Select, alias: str) -> exp.Values | None:
    for values in query.find_all(exp.Values):
        if values.alias == alias:
            return values
    return None


def _derived(query: exp.Select, alias: str) -> exp.Select | None:
    for sub in query.find_all(exp.Subquery):
        if sub.alias == alias and isinstance(sub.this, exp.Select):
            return sub.this
    return None


def _values_type(
    catalog: Catalog,
    query: exp.Select,
    values: exp.Values,
    column: str,
    name: str,
    own: Mapping[str, str | None],
) -> str | None:
    columns = [c.name for c in values.args["alias"].columns]
    if column not in columns:
        return None
    i = columns.index(column)
    types = {
        _type_of(catalog, query, row.expressions[i], name, own)
        for row in values.expressions
        if isinstance(row, exp.Tuple) and i < len(row.expressions)
    }
    return types.pop() if len(types) == 1 else None


def _type_of(
    catalog: Catalog,
    query: exp.Select,
    node: exp.Expression,
    name: str,
    own: Mapping[str, str | None],
) -> str | None:
    """PostgreSQL's type of ``node`` in ``query`` (its SQL, ``varchar(10)``), where this
    module knows it; ``own``: the types of the recursive query's own columns."""
    if isinstance(node, exp.Alias | exp.Paren):
        return _type_of(catalog, query, node.this, name, own)
    if isinstance(node, exp.Null):
        return _ANY
    if isinstance(node, exp.Column):
        values = _values(query, node.table)
        if values is not None:  # (a VALUES list in FROM: its column's rows, of one type)
            return _values_type(catalog, query, values, node.name, name, own)
        derived = _derived(query, node.table)
        if derived is not None:  # (a derived table's column: its select item's type)
            item = next((e for e in derived.expressions if e.alias_or_name == node.name), None)
            return _type_of(catalog, derived, item, name, own) if item is not None else None
        table = _tables(query).get(node.table)
        if table == name:
            return own.get(node.name)
        if table is None or not catalog.has_table(table):
            return None
        col = catalog.table(table).columns.get(node.name)
        return col.type.sql() if col is not None else None
    if isinstance(node, exp.Literal):
        if node.is_string:
            return "text"
        text = str(node.this)
        if text.isdigit():
            return "integer" if int(text) < 2**31 else "bigint" if int(text) < 2**63 else "numeric"
        return "numeric"
    if isinstance(node, exp.Cast):
        try:
            return parse_sql_type(node.to.sql("postgres")).sql()
        except Exception:
            return None
    if isinstance(node, exp.Add | exp.Sub | exp.Mul):
        a = _type_of(catalog, query, node.this, name, own)
        b = _type_of(catalog, query, node.expression, name, own)
        if a in _INTEGERS and b in _INTEGERS:
            return max(a, b, key=_INTEGERS.index)
        if (
            a is not None
            and b is not None
            and {a, b} <= {*_INTEGERS, "numeric"} | {t for t in (a, b) if t.startswith("numeric(")}
        ):
            return "numeric"  # (a numeric's modifier is not its arithmetic's)
        return None
    if isinstance(node, exp.DPipe):
        sides = (node.this, node.expression)
        types = [_type_of(catalog, query, side, name, own) for side in sides]
        if any(t is not None and t.endswith("[]") for t in types):
            return None  # (an array's concatenation: an array)
        return "text"  # (PostgreSQL's || of text, or of anything with text, is text)
    if isinstance(node, exp.Neg):
        inner = _type_of(catalog, query, node.this, name, own)
        return inner if inner in _INTEGERS or inner == "numeric" else None
    return None


__all__ = ["check_recursive"]
