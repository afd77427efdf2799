"""SCRATCH: a stand-in of the semantics library's interface (replaced on merge)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..values.json_encoding import JsonbText


@dataclass(frozen=True)
class RowFunction:
    impl: Callable[..., Any]
    args: tuple[str, ...]
    result: str
    strict: bool = True
    text_sensitive: bool = False


def _j(enc: Any, v: Any) -> JsonbText:
    return enc.coerce(json.dumps(v))


def _arrow_text(enc: Any, doc: JsonbText, key: str) -> Any:
    v = json.loads(doc.text)
    if not isinstance(v, dict) or key not in v:
        return None
    x = v[key]
    return None if x is None else x if isinstance(x, str) else json.dumps(x)


def _arrow(enc: Any, doc: JsonbText, key: str) -> Any:
    v = json.loads(doc.text)
    if not isinstance(v, dict) or key not in v:
        return None
    return _j(enc, v[key])


def _contains(enc: Any, a: JsonbText, b: JsonbText) -> bool:
    x, y = json.loads(a.text), json.loads(b.text)
    return isinstance(x, dict) and isinstance(y, dict) and all(x.get(k) == v for k, v in y.items())


def _any(enc: Any, x: Any, arr: Any) -> Any:
    return x in arr


def _overlaps(enc: Any, a: Any, b: Any) -> bool:
    return any(x in b for x in a)


def _array_contains(enc: Any, a: Any, b: Any) -> bool:
    return all(x in a for x in b)


def _concat(enc: Any, a: Any, b: Any) -> Any:
    return list(a) + list(b)


def _length(enc: Any, a: Any, dim: int) -> Any:
    return len(a) or None if dim == 1 else None


def _build(enc: Any, *args: Any) -> Any:
    return _j(enc, {str(args[i]): args[i + 1] for i in range(0, len(args), 2)})


def _elements(enc: Any, doc: JsonbText) -> Any:
    return [_j(enc, x) for x in json.loads(doc.text)]


ROW_FUNCTIONS: dict[str, tuple[RowFunction, ...]] = {
    "->>": (RowFunction(_arrow_text, ("jsonb", "text"), "text", text_sensitive=True),),
    "->": (RowFunction(_arrow, ("jsonb", "text"), "jsonb"),),
    "@>": (
        RowFunction(_contains, ("jsonb", "jsonb"), "boolean"),
        RowFunction(_array_contains, ("anyarray", "anyarray"), "boolean"),
    ),
    "= ANY": (RowFunction(_any, ("anyelement", "anyarray"), "boolean"),),
    "&&": (RowFunction(_overlaps, ("anyarray", "anyarray"), "boolean"),),
    "||": (RowFunction(_concat, ("anyarray", "anyarray"), "anyarray"),),
    "array_length": (RowFunction(_length, ("anyarray", "integer"), "integer"),),
    "jsonb_build_object": (
        RowFunction(_build, ("variadic any",), "jsonb", strict=False, text_sensitive=True),
    ),
    "jsonb_array_elements": (RowFunction(_elements, ("jsonb",), "setof jsonb"),),
}
AGGREGATES: dict[str, tuple[RowFunction, ...]] = {}
ROW_FUNCTIONS["unnest"] = (RowFunction(lambda enc, a: list(a), ("anyarray",), "setof anyelement"),)
ROW_FUNCTIONS["jsonb_each"] = (
    RowFunction(
        lambda enc, d: [(k, _j(enc, v)) for k, v in json.loads(d.text).items()],
        ("jsonb",),
        "setof record(key text, value jsonb)",
    ),
)
