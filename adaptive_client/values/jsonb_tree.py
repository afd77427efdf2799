"""A jsonb document as a tree of Python values, read from and printed as ``jsonb_out``'s
text, at any depth PostgreSQL accepts.

The tree: ``None`` (null), ``bool``, ``Decimal`` (numbers as written: ``1.0`` stays
``1.0``), ``str``, ``list`` and ``dict``.  :func:`jsonb_text` prints it as ``jsonb_out``
does: keys by length then bytewise, ``{"a": 1, "b": [1, 2]}`` spacing, strings as
``escape_json`` writes them, numbers as ``numeric_out``.

PostgreSQL nests documents some 14,000 levels deep; Python's recursion stops near 1,000.
So nothing here recurses over a document's depth: reading falls back to an iterative
reader when ``json.loads`` runs out of depth, printing keeps its own stack, and what
must descend into two documents at once (containment, rebuilding) is written as
generators driven by :func:`run`, whose stack is a list.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator
from decimal import Decimal
from functools import lru_cache
from typing import Any

from .json_encoding import JsonbEncoding, JsonbText, escape_json, storage_order

Json = Any  # None | bool | Decimal | str | list[Json] | dict[str, Json]

# jsonb's kinds of values, as jsonb_typeof names them
NULL, STRING, NUMBER, BOOL, ARRAY, OBJECT = "null", "string", "number", "boolean", "array", "object"
_KINDS: dict[type, str] = {
    type(None): NULL, str: STRING, Decimal: NUMBER, bool: BOOL, list: ARRAY, dict: OBJECT,
}  # fmt: skip


def kind(v: Json) -> str:
    """The jsonb kind of a tree (what jsonb_typeof names)."""
    return _KINDS[type(v)]


def is_container(v: Json) -> bool:
    return isinstance(v, list | dict)


# --- the trampoline ---------------------------------------------------------------------

Step = Generator[Any, Any, Any]  # yields sub-steps, receives their results, returns its own


def run(step: Step) -> Any:
    """The result of a step whose recursion is written as ``yield sub_step`` (the value of
    the yield is the sub-step's result), on a stack of its own."""
    stack = [step]
    value: Any = None
    while stack:
        try:
            sub = stack[-1].send(value)
        except StopIteration as done:
            stack.pop()
            value = done.value
            continue
        stack.append(sub)
        value = None
    return value


# --- reading ----------------------------------------------------------------------------

_TOKEN = re.compile(
    r'[ \t\n\r]*(?:(?P<punct>[\[\]{},:])|(?P<str>"(?:[^"\\]|\\.)*")|(?P<word>true|false|null)'
    r"|(?P<num>-?[0-9][0-9.eE+-]*))"
)
_WORDS: dict[str, Json] = {"true": True, "false": False, "null": None}


@lru_cache(maxsize=256)  # (the documents of the rows being evaluated)
def _parsed(text: str) -> Json:
    try:
        return json.loads(text, parse_float=Decimal, parse_int=Decimal)
    except RecursionError:
        return _read_deep(text)


def _read_deep(text: str) -> Json:
    """The tree of a normal-form text too deep for ``json.loads``, read token by token."""
    stack: list[Any] = []  # open containers; an object's pending key after it
    keys: list[str | None] = []
    result: Json = None
    for m in _TOKEN.finditer(text):
        punct = m["punct"]
        if punct in ("{", "["):
            stack.append({} if punct == "{" else [])
            keys.append(None)
            continue
        if punct in (",", ":"):
            continue
        if punct in ("}", "]"):
            value = stack.pop()
            keys.pop()
        elif m["str"] is not None:
            s = m["str"]
            value = json.loads(s) if "\\" in s else s[1:-1]
            top = stack[-1] if stack else None
            if isinstance(top, dict) and keys[-1] is None:
                keys[-1] = value  # a key: its value follows
                continue
        elif m["word"] is not None:
            value = _WORDS[m["word"]]
        else:
            value = Decimal(m["num"])
        if not stack:
            result = value
            continue
        top = stack[-1]
        if isinstance(top, dict):
            top[keys[-1]] = value
            keys[-1] = None
        else:
            top.append(value)
    return result


def tree(doc: JsonbText) -> Json:
    """The tree of a document (shared between callers: never mutate it)."""
    return _parsed(doc.text)


# --- printing ---------------------------------------------------------------------------


def sorted_keys(v: dict[str, Json]) -> list[str]:
    return sorted(v, key=storage_order)


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
        return escape_json(v)
    return number_text(v)


def jsonb_text(v: Json) -> str:
    """A tree printed as jsonb_out prints it."""
    if not is_container(v):
        return scalar_text(v)
    out: list[str] = []
    todo: list[Any] = [v]  # texts to write and containers to print, last first
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        parts: list[Any] = []
        if isinstance(item, dict):
            parts.append("{")
            for i, k in enumerate(sorted_keys(item)):
                parts.append(f"{', ' if i else ''}{escape_json(k)}: ")
                x = item[k]
                parts.append(x if is_container(x) else scalar_text(x))
            parts.append("}")
        else:
            parts.append("[")
            for i, x in enumerate(item):
                if i:
                    parts.append(", ")
                parts.append(x if is_container(x) else scalar_text(x))
            parts.append("]")
        todo.extend(reversed(parts))
    return "".join(out)


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


def same_scalar(a: Json, b: Json) -> bool:
    """equalsJsonbScalarValue: same kind, and equal (numbers numerically, strings
    bytewise)."""
    return type(a) is type(b) and (a is None or a == b)


# --- strtol / strtoint as the path functions read an array index ------------------------

_C_SPACE = " \t\n\v\f\r"
_INTEGER = re.compile(r"[+-]?[0-9]+")
INT_MIN, INT_MAX = -(2**31), 2**31 - 1


def c_integer(text: str) -> int | None:
    """The whole of ``text`` read by C's strtol (leading whitespace, a sign, digits) as
    an int, or None where PostgreSQL's check refuses it (nothing read, junk after it, out
    of int's range)."""
    body = text.lstrip(_C_SPACE)
    if not _INTEGER.fullmatch(body):
        return None
    n = int(body)
    return n if INT_MIN <= n <= INT_MAX else None
