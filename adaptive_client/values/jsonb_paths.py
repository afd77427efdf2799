"""A jsonb value's parts by path, as PostgreSQL's ``->``, ``->>``, ``#>`` and ``#>>`` give them.

Shared by the client engine (engine/row_functions.py: the operators) and by precomputed
expressions over a jsonb column (catalog/precomputed.py: a field onion's value), so that
a field reads the same wherever it is computed.  As in PostgreSQL:

* ``->`` with a key gives NULL on anything but an object; with an integer, an array's
  element (negative counts from the end), a raw scalar being its one-element
  pseudo-array, NULL on an object;
* ``#>`` reads each ``text[]`` element as a key on an object and, as C's ``strtol``
  reads it, an integer index on an array (an element that is not one gives NULL); a
  NULL element, a missing step or a step into a scalar gives NULL; an empty path gives
  the document;
* ``->>`` / ``#>>`` give the part's text: a string unquoted, JSON ``null`` as SQL NULL,
  numbers and booleans as printed, objects and arrays in jsonb's normal form.

Documents are read from jsonb's normal form (:mod:`.jsonb_tree`), so a number keeps the
text PostgreSQL prints for it (``1.0`` stays ``1.0``).
"""

from __future__ import annotations

from typing import Any

from .array_encoding import shape
from .json_encoding import JsonbEncoding, JsonbText
from .jsonb_tree import INT_MIN, Json, as_text, c_integer, document, tree


def flat_texts(a: list[Any]) -> list[str | None]:
    """The elements of a text[] in storage order, whatever its dimensions."""
    return list(shape(a)[2])


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


# a parameter's key, known only when bound: an integer (psycopg sends an int) tagged so,
# as a NUL never occurs in PostgreSQL's text (compile/residual.py tags it)
PARAMETER_INDEX = "\x00"


def field_or_element(enc: JsonbEncoding, doc: JsonbText, key: str) -> JsonbText | None:
    """``doc -> %s``: an array element by an integer parameter, else an object field."""
    if key.startswith(PARAMETER_INDEX):
        return array_element(enc, doc, int(key[1:]))
    return object_field(enc, doc, key)


def field_or_element_text(enc: JsonbEncoding, doc: JsonbText, key: str) -> str | None:
    """``doc ->> %s``: as :func:`field_or_element`, as text."""
    if key.startswith(PARAMETER_INDEX):
        return array_element_text(enc, doc, int(key[1:]))
    return object_field_text(enc, doc, key)


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
                if n == INT_MIN or -n > len(current):
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
