"""The schema of the jsonb and array differential suite: ``docs`` (a ``jsonb`` document of
varied shape, ``text[]`` tags, ``int[]`` numbers, some of several dimensions) and
``products`` (joined on ``attrs ->> 'sku'``), with deterministic rows.

The documents hold what jsonb's semantics turn on: nested objects and arrays, numbers
written as ``1``, ``1.0``, ``-0``, ``1e2`` and long decimals (equal as jsonb numbers,
printed as written), JSON ``null`` and SQL NULL, booleans, empty objects and arrays, raw
scalars at the top level, and strings and keys that order differently under ICU than
bytewise (case, accents, ``ß``, CJK).  Numbers that Python's json module would rewrite
are sent as their JSON text (:func:`raw_json`)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from psycopg.types.json import Jsonb

DOCS_DDL = "CREATE TABLE {name} (id integer PRIMARY KEY, attrs jsonb, tags text[], nums integer[])"
DDL = [
    DOCS_DDL.format(name="docs"),
    "CREATE TABLE products (sku text PRIMARY KEY, price numeric(10,2), name text)",
]


def verbatim(text: Any) -> str:
    """A JSON text sent as written (Jsonb's ``dumps``)."""
    return str(text)


def raw_json(text: str) -> Jsonb:
    """A jsonb parameter holding ``text`` as written (``1.0``, ``1e2``, ``-0`` kept)."""
    return Jsonb(text, dumps=verbatim)


NAMES = ["apple", "Apple", "äpfel", "Zebra", "zebra", "éclair", "eclair", "straße", "strasse",
         "日本", "b", "B", "a-b", "ab", "", " lead", "Ωmega", "ñandú"]  # fmt: skip
COLORS = ["red", "green", "blue", "Red", "grün", None]
SIZES = ["S", "M", "L", "XL"]
TAGS: list[list[str | None] | None] = [
    ["sale", "new"], ["new"], [], None, ["sale", None], ["é", "e", "E"], ["Zebra", "apple"],
    ["x"], ["sale", "sale", "clearance"], [None], ["日本", "straße"], ["b", "B", "a"],
]  # fmt: skip
NUMS: list[Any] = [
    [1, 2, 3], [3], [], None, [2, None, 5], [10, 20], [[1, 2], [3, 4]], [-1, 0, 1],
    [7, 7, 7], [None], [2147483647, -2147483648], [[5], [6]],
]  # fmt: skip
# Documents written as JSON text: the numbers and shapes Python would not keep.
RAW_DOCS = [
    '{"sku": "R1", "price": 1, "qty": 1.0, "rank": -0, "score": 1e2, "name": "apple"}',
    '{"sku": "R2", "price": 1.0, "qty": 1, "rank": 0.000000000000000000001, "name": "Apple"}',
    '{"sku": "R3", "price": 123456789012345678901234567890.5, "rank": -1.5e-3, "name": "B"}',
    '{"sku": "R4", "price": 100, "score": 1E2, "rank": 100.0, "items": [1, 1.0, 1e0]}',
    '{"a": {"b": {"c": [1, 2.50, {"d": -0.0}]}}, "sku": "R5", "name": "ñandú"}',
    '[1, 1.0, "1", [1], {"a": 1}, null, true]',
    "123.4500",
    '"a string"',
    "null",
    "true",
    "[]",
    "{}",
    '[{"k": "a", "n": 1}, {"k": "b", "n": 2.0}, {"k": "a", "n": -3}]',
    '{"": "", "clé": "valeur", "Ü": [], "日本": {"東京": 1}, "sku": "R14"}',
    '{"sku": "R15", "price": "12.5", "tags": ["sale", "new"], "opt": null, "flag": false}',
    '{"sku": null, "price": 9.99, "nested": {"deep": {"deeper": {"deepest": [[], [[]], {}]}}}}',
]


def _doc(i: int) -> Any:
    """The i-th generated document: an object of fields taken from the pools by
    position, some fields absent, some null."""
    doc: dict[str, Any] = {"sku": f"S{i % 17:02d}", "name": NAMES[i % len(NAMES)]}
    color = COLORS[i % len(COLORS)]
    if i % 4 != 3:
        doc["color"] = color
    if i % 3 == 0:
        doc["price"] = round(1.25 * i + 0.5, 2)
    elif i % 3 == 1:
        doc["price"] = i * 3
    if i % 5 != 4:
        doc["size"] = SIZES[i % len(SIZES)]
    if i % 2 == 0:
        doc["tags"] = [t for t in ("sale", "new", "x") if (i // 2) % (len(t) + 1) == 0]
    if i % 6 == 1:
        doc["dims"] = {"w": i, "h": i / 4, "unit": "cm" if i % 4 else None}
    if i % 7 == 2:
        doc["items"] = [{"k": NAMES[(i + j) % len(NAMES)], "n": j} for j in range(i % 4)]
    if i % 8 == 5:
        doc["discount"] = None if i % 16 == 5 else 0.1
    if i % 9 == 0:
        doc["flag"] = i % 18 == 0
    doc["rank"] = (i * 37) % 11 - 5
    return doc


def docs_rows() -> list[tuple[Any, ...]]:
    """52 rows: 32 generated objects, the raw documents, and 4 NULL documents."""
    rows: list[tuple[Any, ...]] = []
    for i in range(32):
        rows.append((i + 1, Jsonb(_doc(i)), TAGS[i % len(TAGS)], NUMS[(i * 5) % len(NUMS)]))
    for j, text in enumerate(RAW_DOCS):
        rows.append((33 + j, raw_json(text), TAGS[(j * 7) % len(TAGS)], NUMS[j % len(NUMS)]))
    for k in range(4):
        rows.append((49 + k, None, TAGS[(k + 2) % len(TAGS)], NUMS[(k + 3) % len(NUMS)]))
    return rows


def products_rows() -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = [
        (f"S{i:02d}", Decimal(f"{(i * 7) % 23}.{(i * 13) % 100:02d}"), NAMES[i % len(NAMES)])
        for i in range(0, 17, 2)
    ]
    rows += [("R1", Decimal("1.00"), "one"), ("R3", None, "big"), ("R14", Decimal("0.50"), "é")]
    rows += [("ZZ", Decimal("99.99"), "unsold")]
    return rows
