"""How the client orders values the way PostgreSQL does.

Python's order of a column's values is PostgreSQL's except for text under a collation,
arrays (``array_cmp``) and the encodings that say so (inet, money): those sort by
their encoding's ``order_key``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..catalog.metadata import ColumnMeta
from ..values.encodings import TEXT_TYPES
from .plan import RowFn


def textual(col: ColumnMeta) -> bool:
    """Does the column hold text (or arrays of text), ordered by its collation?"""
    return (col.type.element or col.type).name in TEXT_TYPES


def keyed(col: ColumnMeta) -> bool:
    """Do the column's Python values sort otherwise than PostgreSQL's order (text under a
    collation, arrays by array_cmp, inet, money)?  The client then sorts by the encoding's
    ``order_key``."""
    keyed = col.type.name in TEXT_TYPES or col.type.element is not None
    return keyed or col.encoding.keyed_order


def order_key(fn: RowFn, col: ColumnMeta) -> RowFn:
    """The row's value of a sort key as its order key (text: its collation's; NULL stays
    None)."""
    key = col.encoding.order_key

    def ordered(row: Sequence[Any]) -> Any:
        v = fn(row)
        return None if v is None else key(v)

    return ordered
