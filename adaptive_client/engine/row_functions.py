"""The jsonb, array and interval functions and operators the client engine evaluates row
by row: by PostgreSQL's name (or operator symbol; ``u-`` the unary minus), each overload
with its argument and result types, its strictness and whether its result depends on
how an input's numbers are printed (an interval's, on its fields).

``impl(enc, *sql_args)``: ``enc`` is the statement's jsonb encoding for a jsonb
function, the (first) array argument's encoding for an array function.  A
set-returning function (``result`` starting ``setof``) returns a list (of tuples for a
record result).  ``strict``: a NULL argument gives NULL (no rows for a set-returning
function) without calling ``impl``.  Operators are keyed by symbol with their operand
types; ``= ANY`` / ``<> ALL`` (and ``= ALL`` / ``<> ANY``) take the scalar then the
array; ``[]`` is a subscript (one integer per dimension given), ``[:]`` a slice (bounds
flat, :data:`~.array_functions.OMITTED` for one left out).

:data:`AGGREGATES` has the same shape: ``impl(enc, values[, values2])`` over a group's
values in order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from ..values import jsonb_paths as paths
from . import array_functions as arr
from . import interval_functions as iv
from . import jsonb_build as build
from . import jsonb_casts as casts
from . import jsonb_functions as js
from . import numeric_functions as num
from .series import generate_series


@dataclass(frozen=True)
class RowFunction:
    impl: Callable[..., Any]  # impl(enc, *sql_args)
    args: tuple[str, ...]  # PostgreSQL's argument types
    result: str  # PostgreSQL's result type, "setof ..." where set-returning
    strict: bool = True  # a NULL argument gives NULL without calling impl
    text_sensitive: bool = False  # the result shows how an input's numbers are printed


def _f(
    impl: Callable[..., Any], args: str, result: str, *, strict: bool = True, text: bool = False
) -> RowFunction:
    return RowFunction(impl, tuple(a.strip() for a in args.split(",") if a.strip()), result,
                       strict, text)  # fmt: skip


def _iv(impl: Callable[..., Any], args: str, result: str) -> RowFunction:
    """Interval arithmetic: its result depends on the fields ('1 mon' is not '30 days'
    added to a date), as a jsonb function's on how a number is printed."""
    return RowFunction(impl, tuple(a.strip() for a in args.split(",")), result, True, True)


J, T, INT, B, IV, N = "jsonb", "text", "integer", "boolean", "interval", "numeric"
RECORD = "record(key text, value jsonb)"
TEXT_RECORD = "record(key text, value text)"

ROW_FUNCTIONS: dict[str, tuple[RowFunction, ...]] = {
    # -- jsonb operators --------------------------------------------------------------------
    "->": (
        _f(paths.object_field, "jsonb, text", J, text=True),
        _f(paths.array_element, "jsonb, integer", J, text=True),
    ),
    "->>": (
        _f(paths.object_field_text, "jsonb, text", T, text=True),
        _f(paths.array_element_text, "jsonb, integer", T, text=True),
    ),
    # (-> / ->> of a parameter: the overload its value's type chooses, when bound)
    "->?": (_f(paths.field_or_element, "jsonb, text", J, text=True),),
    "->>?": (_f(paths.field_or_element_text, "jsonb, text", T, text=True),),
    "#>": (_f(paths.extract_path, "jsonb, text[]", J, text=True),),
    "#>>": (_f(paths.extract_path_text, "jsonb, text[]", T, text=True),),
    "@>": (
        _f(js.contains, "jsonb, jsonb", B),
        _f(arr.contains, "anyarray, anyarray", B),
    ),
    "<@": (
        _f(js.contained, "jsonb, jsonb", B),
        _f(arr.contained, "anyarray, anyarray", B),
    ),
    "?": (_f(js.exists, "jsonb, text", B),),
    "?|": (_f(js.exists_any, "jsonb, text[]", B),),
    "?&": (_f(js.exists_all, "jsonb, text[]", B),),
    "&&": (_f(arr.overlap, "anyarray, anyarray", B),),
    "||": (
        _f(build.concat, "jsonb, jsonb", J, text=True),
        _f(arr.array_cat, "anyarray, anyarray", "anyarray", strict=False, text=True),
        _f(arr.array_append, "anyarray, anyelement", "anyarray", strict=False, text=True),
        _f(arr.array_prepend, "anyelement, anyarray", "anyarray", strict=False, text=True),
    ),
    "-": (
        _f(build.delete_key, "jsonb, text", J, text=True),
        _f(build.delete_keys, "jsonb, text[]", J, text=True),
        _f(build.delete_index, "jsonb, integer", J, text=True),
        _iv(iv.minus, "interval, interval", IV),
        _iv(iv.moment_minus, "timestamptz, interval", "timestamptz"),
        _iv(iv.moment_minus, "timestamp, interval", "timestamp"),
        _iv(iv.moment_minus, "date, interval", "timestamp"),
    ),
    # -- interval arithmetic (over a held interval) -----------------------------------------
    "+": (
        _iv(iv.plus, "interval, interval", IV),
        _iv(iv.moment_plus, "timestamptz, interval", "timestamptz"),
        _iv(iv.plus_moment, "interval, timestamptz", "timestamptz"),
        _iv(iv.moment_plus, "timestamp, interval", "timestamp"),
        _iv(iv.plus_moment, "interval, timestamp", "timestamp"),
        _iv(iv.moment_plus, "date, interval", "timestamp"),
        _iv(iv.plus_moment, "interval, date", "timestamp"),
    ),
    "*": (
        _iv(iv.times, "interval, double precision", IV),
        _iv(iv.times_left, "double precision, interval", IV),
    ),
    "/": (_iv(iv.divided, "interval, double precision", IV),),
    "u-": (_iv(iv.negated, "interval", IV),),
    "justify_hours": (_iv(iv.justify_hours, "interval", IV),),
    "justify_days": (_iv(iv.justify_days, "interval", IV),),
    "justify_interval": (_iv(iv.justify_interval, "interval", IV),),
    "interval_out": (_iv(iv.text, "interval", T),),
    "#-": (_f(build.delete_path, "jsonb, text[]", J, text=True),),
    "= ANY": (_f(arr.eq_any, "anyelement, anyarray", B, strict=False),),
    "<> ALL": (_f(arr.ne_all, "anyelement, anyarray", B, strict=False),),
    "= ALL": (_f(arr.eq_all, "anyelement, anyarray", B, strict=False),),
    "<> ANY": (_f(arr.ne_any, "anyelement, anyarray", B, strict=False),),
    **{
        f"{op} {q}": (
            _f(
                partial(arr.ordered_quantified, op=op, any_=q == "ANY"),
                "anyelement, anyarray",
                B,
                strict=False,
            ),
        )
        for op in ("<", "<=", ">", ">=")
        for q in ("ANY", "ALL")
    },
    "[]": (_f(arr.subscript, "anyarray, variadic integer", "anyelement", text=True),),
    "[:]": (_f(arr.slice_, "anyarray, variadic integer", "anyarray", strict=False, text=True),),
    # -- jsonb functions --------------------------------------------------------------------
    "jsonb_typeof": (_f(js.jsonb_typeof, "jsonb", T),),
    "jsonb_array_length": (_f(js.jsonb_array_length, "jsonb", INT),),
    "jsonb_build_object": (
        _f(build.jsonb_build_object, "variadic any", J, strict=False, text=True),
    ),
    "jsonb_build_array": (_f(build.jsonb_build_array, "variadic any", J, strict=False, text=True),),
    "to_jsonb": (_f(build.to_jsonb, "anyelement", J, text=True),),
    "jsonb_set": (
        _f(build.jsonb_set, "jsonb, text[], jsonb", J, text=True),
        _f(build.jsonb_set, "jsonb, text[], jsonb, boolean", J, text=True),
    ),
    "jsonb_insert": (
        _f(build.jsonb_insert, "jsonb, text[], jsonb", J, text=True),
        _f(build.jsonb_insert, "jsonb, text[], jsonb, boolean", J, text=True),
    ),
    "jsonb_strip_nulls": (_f(js.jsonb_strip_nulls, "jsonb", J, text=True),),
    "jsonb_extract_path": (_f(js.jsonb_extract_path, "jsonb, variadic text", J, text=True),),
    "jsonb_extract_path_text": (
        _f(js.jsonb_extract_path_text, "jsonb, variadic text", T, text=True),
    ),
    "jsonb_object_keys": (_f(js.jsonb_object_keys, "jsonb", "setof text"),),
    "jsonb_array_elements": (_f(js.jsonb_array_elements, "jsonb", "setof jsonb", text=True),),
    "jsonb_array_elements_text": (
        _f(js.jsonb_array_elements_text, "jsonb", "setof text", text=True),
    ),
    "jsonb_each": (_f(js.jsonb_each, "jsonb", f"setof {RECORD}", text=True),),
    "jsonb_each_text": (_f(js.jsonb_each_text, "jsonb", f"setof {TEXT_RECORD}", text=True),),
    "jsonb_pretty": (_f(js.jsonb_pretty, "jsonb", T, text=True),),
    "jsonb_exists": (_f(js.jsonb_exists, "jsonb, text", B),),
    "jsonb_exists_any": (_f(js.exists_any, "jsonb, text[]", B),),
    "jsonb_exists_all": (_f(js.exists_all, "jsonb, text[]", B),),
    "jsonb_contains": (_f(js.contains, "jsonb, jsonb", B),),
    "jsonb_contained": (_f(js.contained, "jsonb, jsonb", B),),
    "jsonb_concat": (_f(build.concat, "jsonb, jsonb", J, text=True),),
    "jsonb_delete_path": (_f(build.delete_path, "jsonb, text[]", J, text=True),),
    # -- array functions --------------------------------------------------------------------
    "array_length": (_f(arr.array_length, "anyarray, integer", INT),),
    "array_lower": (_f(arr.array_lower, "anyarray, integer", INT),),
    "array_upper": (_f(arr.array_upper, "anyarray, integer", INT),),
    "array_ndims": (_f(arr.array_ndims, "anyarray", INT),),
    "array_dims": (_f(arr.array_dims, "anyarray", T),),
    "cardinality": (_f(arr.cardinality, "anyarray", INT),),
    "array_append": (
        _f(arr.array_append, "anyarray, anyelement", "anyarray", strict=False, text=True),
    ),
    "array_prepend": (
        _f(arr.array_prepend, "anyelement, anyarray", "anyarray", strict=False, text=True),
    ),
    "array_cat": (_f(arr.array_cat, "anyarray, anyarray", "anyarray", strict=False, text=True),),
    "array_remove": (
        _f(arr.array_remove, "anyarray, anyelement", "anyarray", strict=False, text=True),
    ),
    "array_replace": (
        _f(
            arr.array_replace,
            "anyarray, anyelement, anyelement",
            "anyarray",
            strict=False,
            text=True,
        ),
    ),
    "array_position": (
        _f(arr.array_position, "anyarray, anyelement", INT, strict=False),
        _f(arr.array_position, "anyarray, anyelement, integer", INT, strict=False),
    ),
    "array_positions": (
        _f(arr.array_positions, "anyarray, anyelement", "integer[]", strict=False),
    ),
    "array_to_string": (
        _f(arr.array_to_string, "anyarray, text", T, text=True),
        _f(arr.array_to_string, "anyarray, text, text", T, strict=False, text=True),
    ),
    "unnest": (_f(arr.unnest, "anyarray", "setof anyelement", text=True),),
    "generate_series": (
        _f(generate_series, "integer, integer", "setof integer"),
        _f(generate_series, "integer, integer, integer", "setof integer"),
        _f(generate_series, "bigint, bigint", "setof bigint"),
        _f(generate_series, "bigint, bigint, bigint", "setof bigint"),
    ),
    "string_to_array": (
        _f(arr.string_to_array, "text, text", "text[]", strict=False),
        _f(arr.string_to_array, "text, text, text", "text[]", strict=False),
    ),
}

# numeric arithmetic over a held numeric (one without a precision): its display scale
# shows in the result, as an interval's fields do
for _op, _impl in (("+", num.plus), ("-", num.minus), ("*", num.times), ("/", num.divided)):
    ROW_FUNCTIONS[_op] += (_iv(_impl, "numeric, numeric", N),)
ROW_FUNCTIONS["%"] = (_iv(num.modulo, "numeric, numeric", N),)
ROW_FUNCTIONS.update(
    {
        "abs": (_iv(num.absolute, "numeric", N),),
        "ceil": (_iv(num.ceiling, "numeric", N),),
        "floor": (_iv(num.floored, "numeric", N),),
        "sign": (_iv(num.signum, "numeric", N),),
        "round": (_iv(num.rounded, "numeric", N), _iv(num.rounded, "numeric, integer", N)),
        "trunc": (_iv(num.truncated, "numeric", N), _iv(num.truncated, "numeric, integer", N)),
        # (casts of a held numeric)
        "numeric_float8": (_iv(num.to_float8, "numeric", T),),  # (its text: row_lowering)
        "numeric_out": (_iv(num.to_text, "numeric", T),),
        "numeric_int2": (_iv(num.to_int2, "numeric", "smallint"),),
        "numeric_int4": (_iv(num.to_int4, "numeric", INT),),
        "numeric_int8": (_iv(num.to_int8, "numeric", "bigint"),),
        "numeric_typmod": (_iv(num.to_typmod, "numeric, integer, integer", N),),
        "numeric_in": (_iv(num.same, "numeric", N),),
    }
)
ROW_FUNCTIONS["u-"] += (_iv(num.negated, "numeric", N),)

# a string constant beside a jsonb value in a CASE or COALESCE: read as jsonb
ROW_FUNCTIONS["jsonb_in"] = (_f(js.jsonb_value, J, J, text=True),)
# a text computed per row read as jsonb ((doc ->> 'k')::jsonb): jsonb_in's errors
ROW_FUNCTIONS["jsonb_in_text"] = (_f(js.jsonb_from_text, T, J),)
# a json column's casts: to jsonb, and to text (as written)
ROW_FUNCTIONS["jsonb_of_json"] = (_f(js.jsonb_from_json, "json", J, text=True),)
ROW_FUNCTIONS["json_out"] = (_f(js.json_text, "json", T),)

# casts of jsonb to scalar types and text (numeric's result read back from its text)
ROW_FUNCTIONS.update(
    {
        name: (_f(casts.IMPLS[name], J, result, text=result == T),)
        for name, result in casts.CASTS.values()
    }
)

AGGREGATES: dict[str, tuple[RowFunction, ...]] = {
    "array_agg": (_f(arr.array_agg_arrays, "anyarray", "anyarray", strict=False, text=True),),
    "jsonb_agg": (_f(build.jsonb_agg, "anyelement", J, strict=False, text=True),),
    "jsonb_object_agg": (_f(build.jsonb_object_agg, "any, any", J, strict=False, text=True),),
    "sum": (_iv(num.total, "numeric", N),),
    "avg": (_iv(num.mean, "numeric", N),),
}
