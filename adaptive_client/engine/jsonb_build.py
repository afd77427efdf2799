"""PostgreSQL 15's jsonb functions that make or change documents: ``to_jsonb``,
``jsonb_build_object`` / ``jsonb_build_array``, ``jsonb_agg`` / ``jsonb_object_agg``,
``jsonb_set``, ``jsonb_insert``, ``||``, ``-`` and ``#-``, with PostgreSQL's results
and errors (the trees and the printer are :mod:`.jsonb_functions`').

A SQL value becomes jsonb as ``to_jsonb`` makes it from its type, told here by its
client value: ``str`` a string, ``int`` / ``Decimal`` / ``float`` a number (``NaN`` and
the infinities a string), ``bool``, a ``date`` / ``datetime`` a string as ``to_json``
prints it (``2020-01-01T10:00:00+02:00``, the zone the session's), a list an array,
jsonb and json their own documents.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from ..values import far_datetime
from ..values.array_encoding import shape
from ..values.datetime_output import fraction_text, offset_text
from ..values.encoding_base import SqlType
from ..values.encodings import encoding_for, pg_text
from ..values.far_datetime import PgDate, PgTimestamp
from ..values.json_encoding import JsonbEncoding, JsonbText, JsonText
from ..values.jsonb_tree import Json, Step, c_integer, document, is_container, run, tree
from ..values.session import time_zone
from ..values.text_output import float8_text
from .jsonb_functions import (
    JsonbNullNotAllowed,
    JsonbParameterError,
    JsonbPathNotInteger,
    one_dimensional,
)

# --- to_jsonb ---------------------------------------------------------------------------

_ENCODING = JsonbEncoding(SqlType("jsonb"))  # (reads json, prints keys)
_NUMERIC = encoding_for(SqlType("numeric"))


def _number(d: Decimal) -> Json:
    if not d.is_finite():  # (NaN, Infinity: numeric prints them with an N or an n)
        return "NaN" if d.is_nan() else ("-Infinity" if d < 0 else "Infinity")
    return _NUMERIC.coerce(d)  # (as numeric_in reads numeric_out's text)


def _float(f: float) -> Json:
    text = float8_text(f, 1) if math.isfinite(f) else None
    if text is None or "n" in text.lower():
        return "NaN" if math.isnan(f) else ("-Infinity" if f < 0 else "Infinity")
    return _number(Decimal(text))


def _date(d: dt.date) -> str:
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"


def _datetime(v: dt.datetime) -> str:
    """A timestamp as to_json prints it: ISO 8601 with a T, a timestamptz in the
    session's zone with its offset (minutes always shown)."""
    if v.tzinfo is not None:
        v = v.astimezone(time_zone())
        offset = offset_text(v.utcoffset())
        zone = offset if ":" in offset else offset + ":00"
    else:
        zone = ""
    clock = f"{v.hour:02d}:{v.minute:02d}:{v.second:02d}{fraction_text(v.microsecond)}"
    return f"{_date(v)}T{clock}{zone}"


def _array(v: list[Any]) -> Json:
    dims, _, flat = shape(v)
    items = [to_tree(x) for x in flat]
    for d in reversed(dims[1:]):
        items = [items[i : i + d] for i in range(0, len(items), d)]
    return items


_CONVERTERS: dict[type, Callable[[Any], Json]] = {
    type(None): lambda v: None,
    bool: lambda v: v,
    int: Decimal,
    Decimal: _number,
    float: _float,
    str: lambda v: v,
    dt.date: _date,
    dt.datetime: _datetime,
    JsonbText: tree,
    JsonText: lambda v: tree(_ENCODING.coerce(v.text)),
    # (outside Python's years: ISO whatever the DateStyle, as to_json prints them)
    PgDate: lambda v: far_datetime.date_text(v.julian, "ISO"),
    PgTimestamp: lambda v: _far_text(far_datetime.timestamp_text(v, "ISO", time_zone())),
}


def to_tree(v: Any) -> Json:
    """A SQL value as to_jsonb makes it (see the module docstring)."""
    convert = _CONVERTERS.get(type(v))
    if convert is not None:
        return convert(v)
    if isinstance(v, list):
        return _array(v)
    for kind, conv in _CONVERTERS.items():
        if isinstance(v, kind):
            return conv(v)
    return _far_text(pg_text(v) or "")


_ISO_TIMESTAMP = re.compile(
    r"(?P<date>\S+) (?P<clock>\d\d:\d\d:\d\d(?:\.\d+)?)"
    r"(?P<zone>[+-]\d\d(?::\d\d){0,2})?(?P<bc> BC)?"
)


def _far_text(text: str) -> str:
    """A value held in the client's own form (an infinity, a date beyond Python's
    years) as to_json prints it: its ISO text, a timestamp's clock after a T and its
    offset with minutes."""
    m = _ISO_TIMESTAMP.fullmatch(text)
    if m is None:
        return text
    zone = m["zone"] or ""
    if zone and ":" not in zone:
        zone += ":00"
    return f"{m['date']}T{m['clock']}{zone}{m['bc'] or ''}"


def to_jsonb(enc: JsonbEncoding, v: Any) -> JsonbText:
    return document(enc, to_tree(v))


def _key(v: Any, position: int) -> str:
    """An object key made of a SQL value: its text (a container refused)."""
    if v is None:
        raise JsonbParameterError(f"argument {position}: key must not be null")
    if isinstance(v, list | JsonbText | JsonText):
        raise JsonbParameterError("key value must be scalar, not array, composite, or json")
    t = to_tree(v)
    if isinstance(t, str):
        return t
    if isinstance(t, bool):
        return "true" if t else "false"
    return document(_ENCODING, t).text


def jsonb_build_object(enc: JsonbEncoding, *args: Any) -> JsonbText:
    """jsonb_build_object(VARIADIC "any"): alternating keys and values, the last of
    duplicate keys kept."""
    if len(args) % 2:
        raise JsonbParameterError(
            "argument list must have even number of elements\nHINT:  The arguments of "
            "jsonb_build_object() must consist of alternating keys and values."
        )
    out: dict[str, Json] = {}
    for i in range(0, len(args), 2):
        key = _key(args[i], i + 1)
        out.pop(key, None)
        out[key] = to_tree(args[i + 1])
    return document(enc, out)


def jsonb_build_array(enc: JsonbEncoding, *args: Any) -> JsonbText:
    return document(enc, [to_tree(a) for a in args])


def jsonb_agg(enc: JsonbEncoding, values: list[Any]) -> JsonbText | None:
    """jsonb_agg over a group's values (NULL over no rows)."""
    if not values:
        return None
    return document(enc, [to_tree(v) for v in values])


def jsonb_object_agg(enc: JsonbEncoding, keys: list[Any], values: list[Any]) -> JsonbText | None:
    """jsonb_object_agg over a group's (key, value) pairs (NULL over no rows)."""
    if not keys:
        return None
    out: dict[str, Json] = {}
    for k, v in zip(keys, values, strict=True):
        if k is None:
            raise JsonbParameterError("field name must not be null")
        key = _key(k, 1)
        out.pop(key, None)
        out[key] = to_tree(v)
    return document(enc, out)


# --- concatenation and deletion ---------------------------------------------------------


def concat(enc: JsonbEncoding, a: JsonbText, b: JsonbText) -> JsonbText:
    """``a || b``: two objects merged (``b``'s keys win); else one array of both sides'
    elements (an object or a scalar being one element)."""
    x, y = tree(a), tree(b)
    if isinstance(x, dict) and isinstance(y, dict):
        return document(enc, {**x, **y})
    return document(enc, _as_items(x) + _as_items(y))


def _as_items(t: Json) -> list[Json]:
    return list(t) if isinstance(t, list) else [t]


def _scalar_refused(t: Json) -> None:
    if not is_container(t):
        raise JsonbParameterError("cannot delete from scalar")


def delete_key(enc: JsonbEncoding, doc: JsonbText, key: str) -> JsonbText:
    """``doc - key``: an object's key, or an array's string elements equal to it."""
    t = tree(doc)
    _scalar_refused(t)
    if isinstance(t, dict):
        return document(enc, {k: v for k, v in t.items() if k != key})
    return document(enc, [x for x in t if not (isinstance(x, str) and x == key)])


def delete_keys(enc: JsonbEncoding, doc: JsonbText, keys: list[Any]) -> JsonbText:
    """``doc - keys`` (text[]: NULL elements ignored)."""
    gone = {k for k in one_dimensional(keys) if k is not None}
    t = tree(doc)
    _scalar_refused(t)
    if isinstance(t, dict):
        return document(enc, {k: v for k, v in t.items() if k not in gone})
    return document(enc, [x for x in t if not (isinstance(x, str) and x in gone)])


def delete_index(enc: JsonbEncoding, doc: JsonbText, index: int) -> JsonbText:
    """``doc - n``: an array's element (negative from the end; out of range: as it is)."""
    t = tree(doc)
    _scalar_refused(t)
    if isinstance(t, dict):
        raise JsonbParameterError("cannot delete from object using integer index")
    n = len(t)
    if index < 0:
        index = n if -index > n else n + index
    if index >= n:
        return doc if doc.encoding is enc else document(enc, t)
    return document(enc, t[:index] + t[index + 1 :])


# --- setPath ----------------------------------------------------------------------------

# setPath's operations (jsonfuncs.c's JB_PATH_* flags)
CREATE, DELETE, REPLACE = "create", "delete", "replace"
INSERT_BEFORE, INSERT_AFTER = "before", "after"
_CREATE_OR_INSERT = frozenset({CREATE, INSERT_BEFORE, INSERT_AFTER})


def _set_path(t: Json, path: list[str | None], level: int, new: Json, op: str) -> Step:
    """setPath: the tree with the operation done at ``path[level:]``."""
    if path[level] is None:
        raise JsonbNullNotAllowed(f"path element at position {level + 1} is null")
    if isinstance(t, dict):
        return (yield _set_object(t, path, level, new, op))
    if isinstance(t, list):
        return (yield _set_array(t, path, level, new, op))
    return t  # a scalar on the way: nothing to do


def _set_object(t: dict[str, Json], path: list[str | None], level: int, new: Json, op: str) -> Step:
    key = path[level]
    assert key is not None
    last = level == len(path) - 1
    if key not in t:
        if op in _CREATE_OR_INSERT and last:
            return {**t, key: new}
        return t
    if not last:
        return {**t, key: (yield _set_path(t[key], path, level + 1, new, op))}
    if op in (INSERT_BEFORE, INSERT_AFTER):
        raise JsonbParameterError(
            "cannot replace existing key\nHINT:  Try using the function jsonb_set to "
            "replace key value."
        )
    if op == DELETE:
        return {k: v for k, v in t.items() if k != key}
    return {**t, key: new}


def _set_array(t: list[Json], path: list[str | None], level: int, new: Json, op: str) -> Step:
    text = path[level]
    assert text is not None
    idx = c_integer(text)
    if idx is None:
        raise JsonbPathNotInteger(
            f'path element at position {level + 1} is not an integer: "{text}"'
        )
    n = len(t)
    prepend = False
    if idx < 0:
        if -idx > n:
            prepend = True
        else:
            idx += n
    elif idx > n:
        idx = n
    last = level == len(path) - 1
    if (prepend or n == 0) and last and op in _CREATE_OR_INSERT:
        return [new, *t]
    if prepend or idx >= n:
        if op in _CREATE_OR_INSERT and last:
            return [*t, new]
        return t
    if not last:
        return [*t[:idx], (yield _set_path(t[idx], path, level + 1, new, op)), *t[idx + 1 :]]
    replaced = {
        CREATE: [new], REPLACE: [new], DELETE: [], INSERT_BEFORE: [new, t[idx]],
        INSERT_AFTER: [t[idx], new],
    }[op]  # fmt: skip
    return [*t[:idx], *replaced, *t[idx + 1 :]]


def _with_path(doc: JsonbText, path: list[Any], refusal: str) -> tuple[Json, list[str | None]]:
    elements = one_dimensional(path)
    t = tree(doc)
    if not is_container(t):
        raise JsonbParameterError(refusal)
    return t, elements


def jsonb_set(
    enc: JsonbEncoding, doc: JsonbText, path: list[Any], new: JsonbText, create: bool = True
) -> JsonbText:
    """jsonb_set(target, path, new_value[, create_if_missing])."""
    t, elements = _with_path(doc, path, "cannot set path in scalar")
    if (not t and not create) or not elements:
        return document(enc, t)
    return document(enc, run(_set_path(t, elements, 0, tree(new), CREATE if create else REPLACE)))


def jsonb_insert(
    enc: JsonbEncoding, doc: JsonbText, path: list[Any], new: JsonbText, after: bool = False
) -> JsonbText:
    """jsonb_insert(target, path, new_value[, insert_after])."""
    t, elements = _with_path(doc, path, "cannot set path in scalar")
    if not elements:
        return document(enc, t)
    op = INSERT_AFTER if after else INSERT_BEFORE
    return document(enc, run(_set_path(t, elements, 0, tree(new), op)))


def delete_path(enc: JsonbEncoding, doc: JsonbText, path: list[Any]) -> JsonbText:
    """``doc #- path``."""
    t, elements = _with_path(doc, path, "cannot delete path in scalar")
    if not t or not elements:
        return document(enc, t)
    return document(enc, run(_set_path(t, elements, 0, None, DELETE)))
