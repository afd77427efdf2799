"""PostgreSQL 15's jsonb operators and functions that read a document, over the client's
values, with PostgreSQL's results, NULLs and errors.

A document (:class:`JsonbText`) is read into a tree of Python values: ``None`` (null),
``bool``, ``Decimal`` (numbers, as written: ``1.0`` stays ``1.0``), ``str``, ``list``
and ``dict``; a result is printed back by :func:`jsonb_text` exactly as ``jsonb_out``
prints it (keys by length then bytewise, ``{"a": 1, "b": [1, 2]}`` spacing, strings as
``escape_json`` writes them).  A top-level scalar is PostgreSQL's raw scalar (stored as a
one-element pseudo-array): some functions treat it as an array (``?``, ``@>``, ``->``
with an integer), others refuse it with their own message.

The trees are shared through a cache: no function here mutates a tree it was given.

Every function takes the statement's :class:`JsonbEncoding` first (it builds results);
paths and key lists (``text[]``) arrive as the array encoding gives them (lists, nested
for several dimensions, ``None`` for NULL).  Errors are typed as PostgreSQL's SQLSTATE
with its message.

What changes documents (``jsonb_set``, ``||``, ``-``, ``jsonb_build_object``, ...) is in
:mod:`.jsonb_build`.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from functools import lru_cache
from typing import Any

from psycopg import errors as pg_errors

from ..errors import AdaptiveError
from ..values.array_encoding import shape
from ..values.json_encoding import JsonbEncoding, JsonbText


class JsonbParameterError(AdaptiveError, pg_errors.InvalidParameterValue):
    """A document of the wrong shape for the function (22023)."""


class JsonbNullNotAllowed(AdaptiveError, pg_errors.NullValueNotAllowed):
    """A NULL where PostgreSQL refuses one: a path element, a key (22004)."""


class JsonbPathNotInteger(AdaptiveError, pg_errors.InvalidTextRepresentation):
    """A path element that should index an array but is not an integer (22P02)."""


class JsonbSubscriptError(AdaptiveError, pg_errors.ArraySubscriptError):
    """A path of more than one dimension (2202E)."""


# --- the tree --------------------------------------------------------------------------

Json = Any  # None | bool | Decimal | str | list[Json] | dict[str, Json]

# jsonb's kinds of values (the order of JsonbValue's enum)
NULL, STRING, NUMBER, BOOL, ARRAY, OBJECT = "null", "string", "number", "boolean", "array", "object"
_KINDS: dict[type, str] = {
    type(None): NULL, str: STRING, Decimal: NUMBER, bool: BOOL, list: ARRAY, dict: OBJECT,
}  # fmt: skip


def kind(v: Json) -> str:
    """The jsonb kind of a tree (what jsonb_typeof names)."""
    return _KINDS[type(v)]


def is_container(v: Json) -> bool:
    return isinstance(v, list | dict)


@lru_cache(maxsize=4096)
def _parsed(text: str) -> Json:
    return json.loads(text, parse_float=Decimal, parse_int=Decimal)


def tree(doc: JsonbText) -> Json:
    """The tree of a document (shared: never mutate it)."""
    return _parsed(doc.text)


_OUT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r"}
_OUT_ESCAPES["\t"] = "\\t"
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f]')


def escaped(s: str) -> str:
    """A string as escape_json writes it."""
    if not _NEEDS_ESCAPE.search(s):
        return f'"{s}"'
    body = _NEEDS_ESCAPE.sub(lambda m: _OUT_ESCAPES.get(m[0]) or f"\\u{ord(m[0]):04x}", s)
    return f'"{body}"'


def storage_order(key: str) -> tuple[int, bytes]:
    """jsonb's order of an object's keys: by length in bytes, then bytewise."""
    b = key.encode("utf-8")
    return len(b), b


def number_text(d: Decimal) -> str:
    """A number as numeric_out prints it."""
    if d.is_zero():
        d = d.copy_abs()
    return format(d, "f")


def scalar_text(v: Json) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, str):
        return escaped(v)
    return number_text(v)


def jsonb_text(v: Json) -> str:
    """A tree printed as jsonb_out prints it."""
    if isinstance(v, dict):
        keys = sorted(v, key=storage_order)
        return "{" + ", ".join(f"{escaped(k)}: {jsonb_text(v[k])}" for k in keys) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(jsonb_text(x) for x in v) + "]"
    return scalar_text(v)


def document(enc: JsonbEncoding, v: Json) -> JsonbText:
    """A tree as a jsonb value of the statement's encoding."""
    return JsonbText(jsonb_text(v), enc)


def as_text(v: Json) -> str | None:
    """A value as ``->>`` gives it: NULL for null, a string unquoted, else its text."""
    if v is None:
        return None
    if isinstance(v, str):
        return v
    return jsonb_text(v)


def flat_texts(a: list[Any]) -> list[str | None]:
    """The elements of a text[] in storage order, whatever its dimensions."""
    return list(shape(a)[2])


def one_dimensional(path: list[Any]) -> list[str | None]:
    """A path for jsonb_set, jsonb_insert and ``#-``: more than one dimension is 2202E."""
    if len(shape(path)[0]) > 1:
        raise JsonbSubscriptError("wrong number of array subscripts")
    return flat_texts(path)


def same_scalar(a: Json, b: Json) -> bool:
    """equalsJsonbScalarValue: same kind, and equal (numbers numerically, strings
    bytewise)."""
    return type(a) is type(b) and (a is None or a == b)


# --- strtol / strtoint as the path functions read an array index ------------------------

_C_SPACE = " \t\n\v\f\r"
_INTEGER = re.compile(r"[+-]?[0-9]+")
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


def c_integer(text: str) -> int | None:
    """The whole of ``text`` read by C's strtol (leading whitespace, a sign, digits) as
    an int, or None where PostgreSQL's check refuses it (nothing read, junk after it, out
    of int's range)."""
    body = text.lstrip(_C_SPACE)
    if not _INTEGER.fullmatch(body):
        return None
    n = int(body)
    return n if _INT_MIN <= n <= _INT_MAX else None


# --- reading ----------------------------------------------------------------------------


def object_field(enc: JsonbEncoding, doc: JsonbText, key: str) -> JsonbText | None:
    """``doc -> key``: the field's value; NULL on anything but an object."""
    v = _field(tree(doc), key)
    return None if v is _MISSING else document(enc, v)


def object_field_text(enc: JsonbEncoding, doc: JsonbText, key: str) -> str | None:
    """``doc ->> key``."""
    v = _field(tree(doc), key)
    return None if v is _MISSING else as_text(v)


_MISSING = object()


def _field(t: Json, key: str) -> Any:
    if isinstance(t, dict):
        return t.get(key, _MISSING)
    return _MISSING


def _element(t: Json, index: int) -> Any:
    """jsonb_array_element: an array's element (negative from the end); a raw scalar is
    its one-element pseudo-array; NULL on an object."""
    items = t if isinstance(t, list) else [t] if not isinstance(t, dict) else None
    if items is None:
        return _MISSING
    if index < 0:
        if -index > len(items):
            return _MISSING
        index += len(items)
    return items[index] if index < len(items) else _MISSING


def array_element(enc: JsonbEncoding, doc: JsonbText, index: int) -> JsonbText | None:
    """``doc -> n``."""
    v = _element(tree(doc), index)
    return None if v is _MISSING else document(enc, v)


def array_element_text(enc: JsonbEncoding, doc: JsonbText, index: int) -> str | None:
    """``doc ->> n``."""
    v = _element(tree(doc), index)
    return None if v is _MISSING else as_text(v)


def _path(t: Json, path: list[str | None]) -> Any:
    """get_jsonb_path_all: follow ``path`` (keys in objects, integers in arrays); any
    NULL element, a missing step or a step into a scalar is NULL."""
    if any(p is None for p in path):
        return _MISSING
    if not path:
        return t
    current = t
    for p in path:
        assert p is not None
        if isinstance(current, dict):
            current = current.get(p, _MISSING)
        elif isinstance(current, list):
            n = c_integer(p)
            if n is None:
                return _MISSING
            if n < 0:
                if n == _INT_MIN or -n > len(current):
                    return _MISSING
                n += len(current)
            current = current[n] if n < len(current) else _MISSING
        else:
            return _MISSING
        if current is _MISSING:
            return _MISSING
    return current


def extract_path(enc: JsonbEncoding, doc: JsonbText, path: list[Any]) -> JsonbText | None:
    """``doc #> path``."""
    v = _path(tree(doc), flat_texts(path))
    return None if v is _MISSING else document(enc, v)


def extract_path_text(enc: JsonbEncoding, doc: JsonbText, path: list[Any]) -> str | None:
    """``doc #>> path``."""
    v = _path(tree(doc), flat_texts(path))
    return None if v is _MISSING else as_text(v)


def jsonb_extract_path(enc: JsonbEncoding, doc: JsonbText, *path: str | None) -> JsonbText | None:
    """jsonb_extract_path(doc, VARIADIC path)."""
    return extract_path(enc, doc, list(path))


def jsonb_extract_path_text(enc: JsonbEncoding, doc: JsonbText, *path: str | None) -> str | None:
    """jsonb_extract_path_text(doc, VARIADIC path)."""
    return extract_path_text(enc, doc, list(path))


# --- existence and containment ----------------------------------------------------------


def _exists(t: Json, key: str) -> bool:
    """findJsonbValueFromContainer over keys and array elements: an object's key, or a
    string element of an array (or the raw scalar string itself)."""
    if isinstance(t, dict):
        return key in t
    items = t if isinstance(t, list) else [t]
    return any(isinstance(x, str) and x == key for x in items)


def exists(enc: JsonbEncoding, doc: JsonbText, key: str) -> bool:
    """``doc ? key`` and jsonb_exists."""
    return _exists(tree(doc), key)


def exists_any(enc: JsonbEncoding, doc: JsonbText, keys: list[Any]) -> bool:
    """``doc ?| keys`` (NULL keys ignored)."""
    t = tree(doc)
    return any(_exists(t, k) for k in flat_texts(keys) if k is not None)


def exists_all(enc: JsonbEncoding, doc: JsonbText, keys: list[Any]) -> bool:
    """``doc ?& keys`` (NULL keys ignored)."""
    t = tree(doc)
    return all(_exists(t, k) for k in flat_texts(keys) if k is not None)


def deep_contains(val: Json, tmpl: Json) -> bool:
    """JsonbDeepContains at the top: objects contain objects; an array contains an array
    (or a raw scalar, as its pseudo-array); a raw scalar contains only a raw scalar."""
    if isinstance(val, dict) != isinstance(tmpl, dict):
        return False
    if isinstance(val, dict):
        return _contains_object(val, tmpl)
    if not isinstance(val, list):  # a raw scalar
        return not isinstance(tmpl, list) and same_scalar(val, tmpl)
    return _contains_array(val, tmpl if isinstance(tmpl, list) else [tmpl])


def _contains_object(val: dict[str, Json], tmpl: dict[str, Json]) -> bool:
    for key, want in tmpl.items():
        if key not in val:
            return False
        have = val[key]
        if is_container(want) or is_container(have):
            if type(have) is not type(want):
                return False
            if isinstance(want, dict):
                if not _contains_object(have, want):
                    return False
            elif not _contains_array(have, want):
                return False
        elif not same_scalar(have, want):
            return False
    return True


def _contains_array(val: list[Json], tmpl: list[Json]) -> bool:
    """Each element of ``tmpl``: a scalar equal to some scalar element of ``val``, a
    container contained by some container element of the same kind (order and
    duplicates do not matter)."""
    containers: list[Json] | None = None
    for want in tmpl:
        if not is_container(want):
            if not any(not is_container(x) and same_scalar(x, want) for x in val):
                return False
            continue
        if containers is None:
            containers = [x for x in val if is_container(x)]
        if not any(
            type(x) is type(want)
            and (_contains_object(x, want) if isinstance(want, dict) else _contains_array(x, want))
            for x in containers
        ):
            return False
    return True


def contains(enc: JsonbEncoding, a: JsonbText, b: JsonbText) -> bool:
    """``a @> b``."""
    return deep_contains(tree(a), tree(b))


def contained(enc: JsonbEncoding, a: JsonbText, b: JsonbText) -> bool:
    """``a <@ b``."""
    return deep_contains(tree(b), tree(a))


# --- functions of one document ----------------------------------------------------------


def jsonb_typeof(enc: JsonbEncoding, doc: JsonbText) -> str:
    return kind(tree(doc))


def jsonb_array_length(enc: JsonbEncoding, doc: JsonbText) -> int:
    t = tree(doc)
    if isinstance(t, list):
        return len(t)
    if isinstance(t, dict):
        raise JsonbParameterError("cannot get array length of a non-array")
    raise JsonbParameterError("cannot get array length of a scalar")


def jsonb_object_keys(enc: JsonbEncoding, doc: JsonbText) -> list[str]:
    t = tree(doc)
    if isinstance(t, dict):
        return sorted(t, key=storage_order)
    what = "an array" if isinstance(t, list) else "a scalar"
    raise JsonbParameterError(f"cannot call jsonb_object_keys on {what}")


def _elements(t: Json) -> list[Json]:
    if isinstance(t, list):
        return t
    what = "an object" if isinstance(t, dict) else "a scalar"
    raise JsonbParameterError(f"cannot extract elements from {what}")


def jsonb_array_elements(enc: JsonbEncoding, doc: JsonbText) -> list[JsonbText]:
    return [document(enc, x) for x in _elements(tree(doc))]


def jsonb_array_elements_text(enc: JsonbEncoding, doc: JsonbText) -> list[str | None]:
    return [as_text(x) for x in _elements(tree(doc))]


def _pairs(t: Json, name: str) -> list[tuple[str, Json]]:
    if not isinstance(t, dict):
        raise JsonbParameterError(f"cannot call {name} on a non-object")
    return [(k, t[k]) for k in sorted(t, key=storage_order)]


def jsonb_each(enc: JsonbEncoding, doc: JsonbText) -> list[tuple[str, JsonbText]]:
    return [(k, document(enc, v)) for k, v in _pairs(tree(doc), "jsonb_each")]


def jsonb_each_text(enc: JsonbEncoding, doc: JsonbText) -> list[tuple[str, str | None]]:
    return [(k, as_text(v)) for k, v in _pairs(tree(doc), "jsonb_each_text")]


def _stripped(t: Json) -> Json:
    if isinstance(t, dict):
        return {k: _stripped(v) for k, v in t.items() if v is not None}
    if isinstance(t, list):
        return [_stripped(x) for x in t]
    return t


def jsonb_strip_nulls(enc: JsonbEncoding, doc: JsonbText) -> JsonbText:
    """Object fields whose value is null removed, at every level (array nulls stay)."""
    return document(enc, _stripped(tree(doc)))


def jsonb_pretty(enc: JsonbEncoding, doc: JsonbText) -> str:
    """JsonbToCStringIndent: four spaces a level, the first item not indented, a
    container after its key on the key's line, ``[]`` as ``[`` newline ``]``."""
    out: list[str] = []
    _pretty(tree(doc), 0, out, after_key=True)
    return "".join(out)


def _pretty(v: Json, level: int, out: list[str], after_key: bool) -> None:
    def indent(at: int) -> None:
        out.append("\n" + " " * (4 * at))

    if isinstance(v, dict):
        if not after_key:
            indent(level)
        out.append("{")
        for i, k in enumerate(sorted(v, key=storage_order)):
            if i:
                out.append(",")
            indent(level + 1)
            out.append(escaped(k) + ": ")
            _pretty(v[k], level + 1, out, after_key=True)
        indent(level)
        out.append("}")
    elif isinstance(v, list):
        if not after_key:
            indent(level)
        out.append("[")
        for i, x in enumerate(v):
            if i:
                out.append(",")
            if is_container(x):
                _pretty(x, level + 1, out, after_key=False)
            else:
                indent(level + 1)
                out.append(scalar_text(x))
        indent(level)
        out.append("]")
    else:
        out.append(scalar_text(v))


def jsonb_exists(enc: JsonbEncoding, doc: JsonbText, key: str) -> bool:
    return exists(enc, doc, key)
