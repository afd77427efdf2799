"""``cursor.description``'s entries: the seven DB-API fields by position, and by name
(``.name``, ``.type_code``, ...) as psycopg's ``Column`` objects have them.

:func:`described` gives an entry the sizes psycopg gives the same result column: the
internal size of a fixed-size type (PostgreSQL's ``typlen``), and the display size,
precision and scale psycopg's type information reads from the column's type modifier
(``varchar(12)``: 12; ``numeric(10,2)``: 10 and 2) -- for a stored column, the modifier
of its declared type."""

from __future__ import annotations

from typing import Any, NamedTuple

import psycopg

# PostgreSQL's typlen of its fixed-size base types by OID (pg_type), as a result's
# ``fsize`` reports them; every other type is of variable size (None)
FIXED_SIZES: dict[int, int] = {
    16: 1, 18: 1, 19: 64, 20: 8, 21: 2, 23: 4, 24: 4, 26: 4, 27: 6, 28: 4, 29: 4,
    600: 16, 601: 32, 603: 32, 628: 24, 700: 4, 701: 8, 718: 24, 774: 8, 790: 8,
    829: 6, 1033: 12, 1082: 4, 1083: 8, 1114: 8, 1184: 8, 1186: 16, 1266: 12,
    2202: 4, 2203: 4, 2204: 4, 2205: 4, 2206: 4, 2950: 16, 3220: 8, 3734: 4, 3769: 4,
    4089: 4, 4096: 4, 4191: 4, 5069: 8,
}  # fmt: skip


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


def described(name: str, oid: int, typmod: int = -1) -> Column:
    """The entry of a result column of type ``oid`` with the type modifier ``typmod``
    (-1: none), sized as psycopg sizes it (see the module)."""
    info = psycopg.adapters.types.get(oid)
    return Column(
        name,
        oid,
        info.get_display_size(typmod) if info is not None else None,
        FIXED_SIZES.get(oid),
        info.get_precision(typmod) if info is not None else None,
        info.get_scale(typmod) if info is not None else None,
        None,
    )


class ResultShape:
    """What psycopg's row factories (``psycopg.rows``) read of a cursor's result --
    ``pgresult``'s field count, field names and status -- for a result the client holds
    decrypted: ``dict_row`` and the others then make its rows as psycopg's would."""

    __slots__ = ("_names",)
    status = psycopg.pq.ExecStatus.TUPLES_OK

    def __init__(self, names: list[str]) -> None:
        self._names = [n.encode() for n in names]

    @property
    def nfields(self) -> int:
        return len(self._names)

    def fname(self, index: int) -> bytes:
        return self._names[index]


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


__all__ = ["FIXED_SIZES", "Column", "ResultShape", "described", "from_psycopg"]
