"""PostgreSQL 15's jsonb operators and functions that read a document, over the client's
values, with PostgreSQL's results, NULLs and errors.

A document (:class:`JsonbText`) is read into a tree of Python values and a result
printed back exactly as ``jsonb_out`` prints it (values/jsonb_tree.py); the path
operators (``->``, ``#>``, ...) are values/jsonb_paths.py's.  A top-level
scalar is PostgreSQL's raw scalar (stored as a one-element pseudo-array): some functions
treat it as an array (``?``, ``@>``, ``->`` with an integer), others refuse it with their
own message.  Containment compares numbers numerically and strings bytewise, whatever
the database's collation, as jsonb does.

The trees are shared through a cache: no function here mutates a tree it was given, and
none recurses over a document's depth (PostgreSQL's documents nest far deeper than
Python's recursion goes).

Every function takes the statement's :class:`JsonbEncoding` first (it builds results);
paths and key lists (``text[]``) arrive as the array encoding gives them (lists, nested
for several dimensions, ``None`` for NULL).  Errors are typed as PostgreSQL's SQLSTATE
with its message.

What changes documents (``jsonb_set``, ``||``, ``-``, ``jsonb_build_object``, ...) is in
:mod:`.jsonb_build`.
"""

from __future__ import annotations

from typing import Any, cast

from psycopg import errors as pg_errors

from ..errors import AdaptiveError
from ..values.array_encoding import shape
from ..values.json_encoding import JsonbEncoding, JsonbText, JsonText, escape_json
from ..values.jsonb_paths import (
    extract_path,
    extract_path_text,
    flat_texts,
)
from ..values.jsonb_tree import (
    Json,
    Step,
    as_text,
    document,
    is_container,
    kind,
    run,
    same_scalar,
    scalar_text,
    sorted_keys,
    tree,
)


class JsonbParameterError(AdaptiveError, pg_errors.InvalidParameterValue):
    """A document of the wrong shape for the function (22023)."""


class JsonbNullNotAllowed(AdaptiveError, pg_errors.NullValueNotAllowed):
    """A NULL where PostgreSQL refuses one: a path element, a key (22004)."""


class JsonbPathNotInteger(AdaptiveError, pg_errors.InvalidTextRepresentation):
    """A path element that should index an array but is not an integer (22P02)."""


class JsonbSubscriptError(AdaptiveError, pg_errors.ArraySubscriptError):
    """A path of more than one dimension (2202E)."""


def one_dimensional(path: list[Any]) -> list[str | None]:
    """A path for jsonb_set, jsonb_insert and ``#-``: more than one dimension is 2202E."""
    if len(shape(path)[0]) > 1:
        raise JsonbSubscriptError("wrong number of array subscripts")
    return flat_texts(path)


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
        return bool(run(_contains_object(val, tmpl)))
    if not isinstance(val, list):  # a raw scalar
        return not isinstance(tmpl, list) and same_scalar(val, tmpl)
    return bool(run(_contains_array(val, tmpl if isinstance(tmpl, list) else [tmpl])))


def _contains_object(val: dict[str, Json], tmpl: dict[str, Json]) -> Step:
    for key, want in tmpl.items():
        if key not in val:
            return False
        have = val[key]
        if is_container(want) or is_container(have):
            if type(have) is not type(want):
                return False
            sub = _contains_object if isinstance(want, dict) else _contains_array
            if not (yield sub(have, want)):
                return False
        elif not same_scalar(have, want):
            return False
    return True


def _contains_array(val: list[Json], tmpl: list[Json]) -> Step:
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
        sub = _contains_object if isinstance(want, dict) else _contains_array
        for x in containers:
            if type(x) is type(want) and (yield sub(x, want)):
                break
        else:
            return False
    return True


def contains(enc: JsonbEncoding, a: JsonbText, b: JsonbText) -> bool:
    """``a @> b``."""
    return deep_contains(tree(a), tree(b))


def contained(enc: JsonbEncoding, a: JsonbText, b: JsonbText) -> bool:
    """``a <@ b``."""
    return deep_contains(tree(b), tree(a))


# --- functions of one document ----------------------------------------------------------


def jsonb_value(enc: JsonbEncoding, doc: JsonbText) -> JsonbText:
    """A document as it is (a constant read as jsonb where a choice gives jsonb)."""
    return doc


def jsonb_from_text(enc: JsonbEncoding, text: str) -> JsonbText:
    """``text::jsonb`` of a text computed per row (22P02 where it is not JSON)."""
    return cast(JsonbText, enc.coerce(text))


def jsonb_from_json(enc: JsonbEncoding, doc: JsonText) -> JsonbText:
    """``json::jsonb``: the document read as jsonb reads it (keys sorted, the last of
    duplicate keys kept)."""
    return cast(JsonbText, enc.coerce(doc))


def json_text(enc: Any, doc: JsonText) -> str:
    """``json::text``: the document as written."""
    return doc.text


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
        return sorted_keys(t)
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
    return [(k, t[k]) for k in sorted_keys(t)]


def jsonb_each(enc: JsonbEncoding, doc: JsonbText) -> list[tuple[str, JsonbText]]:
    return [(k, document(enc, v)) for k, v in _pairs(tree(doc), "jsonb_each")]


def jsonb_each_text(enc: JsonbEncoding, doc: JsonbText) -> list[tuple[str, str | None]]:
    return [(k, as_text(v)) for k, v in _pairs(tree(doc), "jsonb_each_text")]


def _stripped(t: Json) -> Step:
    if isinstance(t, dict):
        out: dict[str, Json] = {}
        for k, v in t.items():
            if v is not None:
                out[k] = (yield _stripped(v)) if is_container(v) else v
        return out
    items: list[Json] = []
    for x in t:
        items.append((yield _stripped(x)) if is_container(x) else x)
    return items


def jsonb_strip_nulls(enc: JsonbEncoding, doc: JsonbText) -> JsonbText:
    """Object fields whose value is null removed, at every level (array nulls stay)."""
    t = tree(doc)
    return document(enc, run(_stripped(t)) if is_container(t) else t)


def jsonb_pretty(enc: JsonbEncoding, doc: JsonbText) -> str:
    """JsonbToCStringIndent: four spaces a level, the first item not indented, a
    container after its key on the key's line, ``[]`` as ``[`` newline ``]``."""
    t = tree(doc)
    if not is_container(t):
        return scalar_text(t)
    out: list[str] = []
    # texts to write, and (container, level, whether it follows its key), last first
    todo: list[Any] = [(t, 0, True)]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        v, level, after_key = item
        inner = "\n" + " " * (4 * (level + 1))
        parts: list[Any] = ["" if after_key else "\n" + " " * (4 * level)]
        if isinstance(v, dict):
            parts.append("{")
            for i, k in enumerate(sorted_keys(v)):
                parts.append(f"{',' if i else ''}{inner}{escape_json(k)}: ")
                x = v[k]
                parts.append((x, level + 1, True) if is_container(x) else scalar_text(x))
            closer = "}"
        else:
            parts.append("[")
            for i, x in enumerate(v):
                if i:
                    parts.append(",")
                parts.append((x, level + 1, False) if is_container(x) else inner + scalar_text(x))
            closer = "]"
        parts.append("\n" + " " * (4 * level) + closer)
        todo.extend(reversed(parts))
    return "".join(out)


def jsonb_exists(enc: JsonbEncoding, doc: JsonbText, key: str) -> bool:
    return exists(enc, doc, key)
