"""The outputs of a statement with jsonb and array calls that it only shows, made calls
returning their results' exact bytes (``printed``): two rows' results equal under ``=``
may print differently (``1.0`` and ``1``), and a key equal values share would print
one of them for both.  A call in the select list (``to_jsonb(1.50)``), a choice between
such calls (``CASE ... THEN attrs -> 'price' ELSE 'null' END``), a set-returning
function's rows (``jsonb_array_elements(attrs)``, or a FROM function's column read once
only).  Used by compile/residual.py through :func:`printed_outputs`, after
engine/row_lowering.py has lowered the calls."""

from __future__ import annotations

import dataclasses
from typing import Any

from sqlglot import exp

from ..values.encodings import Encoding
from .kinds import choice_values, unparen
from .row_calls import CallSpec


def printed_outputs(tree: exp.Expression, specs: list[CallSpec]) -> dict[int, Encoding]:
    """The outputs of the statement that are a call with a held result it only shows
    (not ordered, grouped or made distinct by, not used elsewhere): made calls that
    return the result's exact bytes (``printed``), so that it prints as computed -- two
    rows' results equal under ``=`` may print differently (``to_jsonb(1.50)``,
    ``to_jsonb(1.5)``).  {output index: the result's encoding}."""
    if not isinstance(tree, exp.Select) or tree.args.get("distinct"):
        return {}
    uses: dict[str, int] = {}
    for c in tree.find_all(exp.Anonymous):
        uses[c.name] = uses.get(c.name, 0) + 1
    group = tree.args.get("group")
    grouped = {g.sql() for g in group.expressions} if group is not None else set()
    order = tree.args.get("order")
    keys = [o.this for o in order.expressions] if order is not None else []
    out: dict[int, Encoding] = {}
    for i, item in enumerate(tree.expressions):
        call = item.unalias()
        ordering = [k for k in keys if _names_item(k, i, item, call)]
        if isinstance(call, exp.Column):  # (a FROM function's column: its item)
            produced = _lateral_item(tree, call)
            if produced is None or ordering or call.sql() in grouped:
                continue
            call = produced
            if _printed_rows(call, {call.this.name: 1}, set(), []):
                _add_spec(specs, call.meta["row_call"])
                out[i] = call.meta["row_call"].result_encoding
            continue
        if isinstance(call, exp.Case | exp.Coalesce) and not ordering:
            # a choice between calls' held results, shown: each row's own value
            encoding = _printed_choice(call, uses, grouped, specs)
            if encoding is not None:
                out[i] = encoding
            continue
        if isinstance(call, exp.Explode) and isinstance(call.this, exp.Anonymous):
            # a set-returning function's rows, shown: each row's own value
            if _printed_rows(call, uses, grouped, ordering):
                _add_spec(specs, call.meta["row_call"])
                out[i] = call.meta["row_call"].result_encoding
            continue
        spec = call.meta.get("row_call") if isinstance(call, exp.Anonymous) else None
        if not isinstance(spec, CallSpec) or not spec.held_result or spec.column is not None:
            continue
        if spec.result_encoding is None or uses.get(call.name, 0) != 1 or call.sql() in grouped:
            continue
        if any(_names_item(k, i, item, call) for k in keys):
            continue
        printed = dataclasses.replace(spec, udf=f"{spec.udf}_printed", result="BLOB", printed=True)
        specs.append(printed)
        call.set("this", printed.udf)
        call.meta["row_call"] = printed
        call.type = exp.DataType.build("BLOB")
        out[i] = spec.result_encoding
    return out


def _printed_choice(
    choice: exp.Expression, uses: dict[str, int], grouped: set[str], specs: list[CallSpec]
) -> Encoding | None:
    """Make a shown CASE / COALESCE whose values are all calls with a held result of one
    type give their exact bytes; the type's encoding, or None where it is not one."""
    if choice.sql() in grouped:
        return None
    calls = [unparen(b) for b in choice_values(choice) if not isinstance(unparen(b), exp.Null)]
    found: list[tuple[exp.Expression, CallSpec]] = []
    for call in calls:
        spec = call.meta.get("row_call")
        if not isinstance(call, exp.Anonymous) or not isinstance(spec, CallSpec):
            return None
        if not spec.held_result or spec.printed or spec.result_encoding is None:
            return None
        if uses.get(call.name, 0) != 1 or spec.aggregate:
            return None
        found.append((call, spec))
    encodings = {id(spec.result_encoding) for _, spec in found}
    if not found or len(encodings) != 1:
        return None
    for call, spec in found:
        printed = dataclasses.replace(spec, udf=f"{spec.udf}_printed", result="BLOB", printed=True)
        _add_spec(specs, printed)
        call.set("this", printed.udf)
        call.meta["row_call"] = printed
        call.type = exp.DataType.build("BLOB")
    choice.type = exp.DataType.build("BLOB")
    return found[0][1].result_encoding


def _add_spec(specs: list[CallSpec], spec: CallSpec) -> None:
    if all(s.udf != spec.udf for s in specs):
        specs.append(spec)


def _lateral_item(tree: exp.Select, column: exp.Column) -> exp.Explode | None:
    """The select item of a FROM function's lateral subquery (engine/set_functions.py)
    a column of the statement reads, where nothing else in it reads that column."""
    reads = [
        c for c in tree.find_all(exp.Column) if (c.table, c.name) == (column.table, column.name)
    ]
    if len(reads) != 1:
        return None
    for lateral in tree.find_all(exp.Lateral):
        sub = lateral.this
        if lateral.alias_or_name != column.table or not lateral.meta.get("set_function"):
            continue
        if not isinstance(sub, exp.Subquery) or lateral.parent_select is not tree:
            continue
        for item in sub.this.expressions:
            if item.alias_or_name == column.name:
                inner = item.unalias()
                return inner if isinstance(inner, exp.Explode) else None
    return None


def _printed_rows(
    unnested: exp.Explode, uses: dict[str, int], grouped: set[str], ordering: list[Any]
) -> bool:
    """Make a select list's set-returning call (``jsonb_array_elements(attrs)``) give
    its rows as their exact bytes, where it is only shown."""
    call = unnested.this
    spec = call.meta.get("row_call")
    if not isinstance(spec, CallSpec) or not spec.held_result:
        return False
    if spec.result_encoding is None or spec.ordinality or ordering:
        return False
    if uses.get(call.name, 0) != 1 or unnested.sql() in grouped:
        return False
    printed = dataclasses.replace(spec, udf=f"{spec.udf}_printed", result="BLOB[]", printed=True)
    call.set("this", printed.udf)
    call.meta["row_call"] = printed
    call.type = exp.DataType.build("BLOB[]", dialect="duckdb")
    unnested.meta["row_call"] = printed
    unnested.type = exp.DataType.build("BLOB")
    return True


def _names_item(key: exp.Expression, i: int, item: exp.Expression, call: exp.Expression) -> bool:
    """Whether an ORDER BY key orders by the select item (its position, name, text)."""
    if isinstance(key, exp.Literal) and not key.is_string and key.name == str(i + 1):
        return True
    if isinstance(key, exp.Column) and not key.table and key.name == item.alias_or_name:
        return True
    return key.sql() == call.sql()


__all__ = ["printed_outputs"]
