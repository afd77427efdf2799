"""``cursor.description``'s entries: the seven DB-API fields by position, and by name
(``.name``, ``.type_code``, ...) as psycopg's ``Column`` objects have them."""

from __future__ import annotations

from typing import Any, NamedTuple


class Column(NamedTuple):
    """One result column as DB-API describes it.  A tuple, so code that unpacks or
    compares descriptions as tuples keeps working; named, so code written for psycopg
    (``d.name for d in cur.description``) does too."""

    name: str
    type_code: int
    display_size: int | None = None
    internal_size: int | None = None
    precision: int | None = None
    scale: int | None = None
    null_ok: bool | None = None


def from_psycopg(column: Any) -> Column:
    """The entry of a psycopg ``Column`` (a statement psycopg ran as it was)."""
    return Column(
        column.name,
        column.type_code,
        column.display_size,
        column.internal_size,
        column.precision,
        column.scale,
        column.null_ok,
    )


__all__ = ["Column", "from_psycopg"]
