"""A jsonb value's parts by path, as PostgreSQL's ``->``, ``->>``, ``#>`` and ``#>>`` give them.

A path is a list of steps: a ``str`` is an object key (``attrs -> 'k'``, or an element of
``#>``'s ``text[]``), an ``int`` an array index (``attrs -> 0``; negative counts from the
end).  As in PostgreSQL:

* ``->`` with a key on an array, or an index on an object or a scalar, gives NULL;
* ``#>`` reads each ``text[]`` element as a key on an object and as an integer index on
  an array (an element that is not an integer gives NULL there); a raw scalar has no
  parts (``'1'::jsonb #> '{}'`` is the scalar itself, any longer path NULL);
* ``->>`` / ``#>>`` give the part's text: a string unquoted, JSON ``null`` as SQL NULL,
  numbers and booleans as printed, objects and arrays in jsonb's normal form.

Values are read from jsonb's normal form (the text :class:`JsonbText` holds), so a
number keeps the text PostgreSQL prints for it (``1.0`` stays ``1.0``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from .json_encoding import JsonbEncoding, JsonbText, escape_json

Step = str | int


class _Object(list[tuple[str, Any]]):
    """A jsonb object: its pairs in stored order (the normal form's)."""


def parse(text: str) -> Any:
    """jsonb normal-form text as Python values: dict-like :class:`_Object` pair lists,
    lists, str, Decimal (numbers as written), bool and None."""
    return json.loads(text, parse_float=Decimal, parse_int=Decimal, object_pairs_hook=_Object)


def normal_form(value: Any) -> str:
    """The text jsonb_out prints for a value :func:`parse` gave."""
    if isinstance(value, _Object):
        return "{" + ", ".join(f"{escape_json(k)}: {normal_form(v)}" for k, v in value) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(normal_form(v) for v in value) + "]"
    if isinstance(value, str):
        return escape_json(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return format(value, "f")


def _step(value: Any, step: Step) -> tuple[bool, Any]:
    """(found, part) of one step into ``value``."""
    if isinstance(value, _Object):
        if not isinstance(step, str):
            return False, None
        for k, v in reversed(value):  # (the normal form keeps one pair per key)
            if k == step:
                return True, v
        return False, None
    if isinstance(value, list) and isinstance(step, int):
        n = len(value)
        i = step + n if step < 0 else step
        return (True, value[i]) if 0 <= i < n else (False, None)
    return False, None


def _array_index(element: str) -> int | None:
    """A ``#>`` path element read as an array index (PostgreSQL's strtoint: optional
    whitespace and sign, digits only), else None."""
    text = element.strip(" \t\n\r\v\f")
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body.isascii() or not body.isdigit():
        return None
    return int(text)


def part(doc: JsonbText, path: Sequence[Step], *, text_path: bool = False) -> tuple[bool, Any]:
    """(found, the part of ``doc`` at ``path``).  ``text_path``: the steps are ``#>``'s
    ``text[]`` elements (keys on objects, integers on arrays)."""
    value = parse(doc.text)
    if text_path and path and not isinstance(value, _Object | list):
        return False, None  # a raw scalar has no parts
    for step in path:
        if text_path and isinstance(value, list) and not isinstance(value, _Object):
            index = _array_index(str(step))
            if index is None:
                return False, None
            step = index
        found, value = _step(value, step)
        if not found:
            return False, None
    return True, value


def part_jsonb(
    doc: JsonbText, path: Sequence[Step], *, text_path: bool = False
) -> JsonbText | None:
    """``doc -> step`` / ``doc #> path``: the part as jsonb, NULL where there is none."""
    found, value = part(doc, path, text_path=text_path)
    if not found:
        return None
    encoding = doc.encoding
    assert isinstance(encoding, JsonbEncoding)
    return JsonbText(normal_form(value), encoding)


def part_text(doc: JsonbText, path: Sequence[Step], *, text_path: bool = False) -> str | None:
    """``doc ->> step`` / ``doc #>> path``: the part's text (a string unquoted), NULL
    where there is none or it is JSON null."""
    found, value = part(doc, path, text_path=text_path)
    if not found or value is None:
        return None
    if isinstance(value, str) and not isinstance(value, _Object):
        return value
    return normal_form(value)
