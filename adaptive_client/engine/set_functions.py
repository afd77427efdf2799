"""Set-returning jsonb and array functions in FROM (``FROM d, jsonb_array_elements(d.attrs)
AS e``, ``CROSS JOIN LATERAL jsonb_each(attrs) AS kv(k, v)``, ``unnest(tags) WITH
ORDINALITY``): each rewritten, before the statement is qualified, into the lateral
subquery PostgreSQL's semantics make of it -- one select item per output column, each
the function's rows of that column (a record's field, or the row number), zipped by the
client engine as a select list's set-returning functions are -- named as PostgreSQL
names the columns: the column aliases given, else the function's output names
(``value``; ``key``, ``value``), else the FROM item's alias, else the function's name,
and ``ordinality`` (:func:`from_functions`).  The select items are then evaluated as
any select list's calls (engine/row_lowering.py).

Before that too, ``x -> 'k'`` in a function's arguments, which sqlglot reads as a lambda,
is made PostgreSQL's operator again (:func:`arrows_as_written`)."""

from __future__ import annotations

from typing import Final

from sqlglot import exp

from .row_calls import record_columns
from .row_functions import ROW_FUNCTIONS
from .runtime import refusal as _refuse

# the name of the one output column of the functions that declare it (OUT value)
_OUTPUT_NAMES: Final = {
    "jsonb_array_elements": "value",
    "jsonb_array_elements_text": "value",
}


def _set_function(item: exp.Expression) -> tuple[str, list[exp.Expression], bool] | None:
    """(name, arguments, with ordinality) of a FROM item that calls a set-returning
    row function, else None."""
    if isinstance(item, exp.Lateral) and isinstance(item.this, exp.Unnest):
        item = item.this  # (CROSS JOIN LATERAL unnest(...): the lateral's alias names it)
    if isinstance(item, exp.Unnest):
        offset = item.args.get("offset")
        return "unnest", list(item.expressions), bool(offset)
    call = item.this if isinstance(item, exp.Table | exp.Lateral) else None
    if not isinstance(call, exp.Anonymous):
        return None
    name = call.name.lower()
    functions = ROW_FUNCTIONS.get(name)
    if not functions or not all(f.result.startswith("setof ") for f in functions):
        return None
    return name, list(call.expressions), bool(item.args.get("ordinality"))


def _columns(name: str, alias: str | None) -> list[tuple[str, int | None]]:
    """The function's output columns: (PostgreSQL's name, record field index)."""
    result = ROW_FUNCTIONS[name][0].result.removeprefix("setof ")
    if result.startswith("record("):
        return [(n, i) for i, (n, _) in enumerate(record_columns(result))]
    return [(_OUTPUT_NAMES.get(name) or alias or name, None)]


def _lateral(item: exp.Expression) -> exp.Expression:
    found = _set_function(item)
    if found is None:
        return item
    name, args, ordinality = found
    table_alias = item.args.get("alias")
    alias = table_alias.name if table_alias is not None and table_alias.name else None
    given = [c.name for c in table_alias.columns] if table_alias is not None else []
    unnest = item.this if isinstance(item, exp.Lateral) else item
    several = False
    if isinstance(unnest, exp.Unnest):
        offset = unnest.args.get("offset")
        if isinstance(offset, exp.Identifier):
            given.append(offset.name)
        # unnest(a, b): the arrays' elements side by side, the shorter padded with NULLs
        # -- as a select list's set-returning functions are zipped (each named)
        several = len(args) > 1
        if several and (ordinality or len(given) < len(args)):
            raise _refuse("unnest of several arrays without a name for each", item)
    columns = _columns(name, alias)
    if several:
        return _zipped(args, given, alias or name)
    items: list[exp.Expr] = []
    for i, (default, field) in enumerate(
        [*columns, ("ordinality", None)][: len(columns) + ordinality]
    ):
        call = exp.Anonymous(this=name, expressions=[a.copy() for a in args])
        if i < len(columns):
            if field is not None:
                call.meta["srf_column"] = field
        else:
            call.meta["ordinality"] = True
        items.append(exp.alias_(call, given[i] if i < len(given) else default))
    if len(given) > len(items):
        raise _refuse("more column aliases than the function has columns", item)
    out = items[0].alias_or_name
    # (the FROM item's alias names its one column too: jsonb_array_elements(x) AS e
    # reads as e.value and as e; unless the statement takes all columns)
    starred = any(True for _ in item.root().find_all(exp.Star))
    if (
        alias
        and not given
        and len(columns) == 1
        and out != alias
        and not ordinality
        and not starred
    ):
        items.append(exp.alias_(items[0].this.copy(), alias))
    lateral = exp.Lateral(
        this=exp.Subquery(this=exp.Select(expressions=items)),
        alias=exp.TableAlias(this=exp.to_identifier(alias or name)),
    )
    lateral.meta["set_function"] = True  # (allowed: compile/allowed.py)
    return lateral


def from_functions(stmt: exp.Expression) -> exp.Expression:
    """``stmt`` with its FROM items that call set-returning row functions made lateral
    subqueries (see the module docstring)."""
    for series in list(stmt.find_all(exp.ExplodingGenerateSeries, exp.GenerateSeries)):
        # (sqlglot's class for PostgreSQL's generate_series: the row function's call)
        bounds = [series.args.get(k) for k in ("start", "end", "step")]
        series.replace(
            exp.Anonymous(
                this="generate_series", expressions=[b.copy() for b in bounds if b is not None]
            )
        )
    for node in list(stmt.find_all(exp.From, exp.Join)):
        item = node.this
        new = _lateral(item)
        if new is not item:
            item.replace(new)
    return stmt


def _zipped(arrays: list[exp.Expression], names: list[str], alias: str) -> exp.Expression:
    """``unnest(a, b, ...) AS alias(x, y, ...)``: one select item per array."""
    items: list[exp.Expr] = [
        exp.alias_(exp.Anonymous(this="unnest", expressions=[a.copy()]), n)
        for a, n in zip(arrays, names, strict=False)
    ]
    lateral = exp.Lateral(
        this=exp.Subquery(this=exp.Select(expressions=items)),
        alias=exp.TableAlias(this=exp.to_identifier(alias)),
    )
    lateral.meta["set_function"] = True
    return lateral


_ARROWS = (exp.JSONExtract, exp.JSONExtractScalar)


def _arrow(lam: exp.Lambda) -> exp.Expression:
    """``x -> 'k'`` as PostgreSQL reads it: sqlglot reads a function argument
    ``x -> 'a' ->> 'b'`` as a lambda of ``x`` whose body starts with ``'a'``."""
    (name,) = lam.expressions
    base = exp.column(name.name, quoted=name.quoted)
    body = lam.this
    if not isinstance(body, _ARROWS):
        return exp.JSONExtract(this=base, expression=body)
    inner = body
    while isinstance(inner.this, _ARROWS):
        inner = inner.this
    inner.set("this", exp.JSONExtract(this=base, expression=inner.this))
    return body


def arrows_as_written(stmt: exp.Expression) -> exp.Expression:
    """``stmt`` with the ``->`` operators sqlglot read as lambdas (in a function's
    arguments) made the operators PostgreSQL reads (it has no lambdas)."""
    for lam in list(stmt.find_all(exp.Lambda)):
        if len(lam.expressions) == 1 and isinstance(lam.expressions[0], exp.Identifier):
            lam.replace(_arrow(lam))
    return stmt


__all__ = ["arrows_as_written", "from_functions"]
