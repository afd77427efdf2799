"""The type a parameter reaches PostgreSQL as: psycopg's dumper of the Python value
chooses it (a list of small ints is a ``smallint[]``, a ``Jsonb`` a ``jsonb``, a ``str``
or a list of them is of unknown type, read as what it is compared with).

Operators PostgreSQL defines over two operands of one type (an array's ``@>``, ``<@``
and ``&&``, jsonb's ``@>``) exist only where the parameter is sent as the column's
type: ``integer[] && smallint[]`` does not (42883).  :func:`mismatched` names the type
of such a parameter, where it differs."""

from __future__ import annotations

from typing import Any, Final

import psycopg
from psycopg.adapt import PyFormat

from .encoding_base import SqlType

# psycopg's type names that PostgreSQL's messages spell otherwise
PG_TYPE_NAMES: Final = {
    "int2": "smallint",
    "int4": "integer",
    "int8": "bigint",
    "float4": "real",
    "float8": "double precision",
    "bool": "boolean",
    "varchar": "character varying",
    "bpchar": "character",
    "timestamptz": "timestamp with time zone",
    "timestamp": "timestamp without time zone",
}


def sent_type(v: Any) -> tuple[int, str] | None:
    """(oid, PostgreSQL's name) of the type psycopg sends ``v`` as; None where it is sent
    of unknown type (a str, a list of them, NULL, an empty list) or not known here."""
    if v is None:
        return None
    try:
        dumper = psycopg.adapters.get_dumper(type(v), PyFormat.AUTO)(type(v))
        oid = dumper.upgrade(v, PyFormat.AUTO).oid
    except (psycopg.ProgrammingError, TypeError, ValueError):
        return None
    info = psycopg.postgres.types.get(oid) if oid else None
    if info is None:
        return None
    name = PG_TYPE_NAMES.get(info.name, info.name)
    return oid, name + "[]" if oid == info.array_oid else name


def mismatched(column: SqlType, v: Any) -> str | None:
    """The type ``v`` is sent as where it is not ``column``'s (None: the same, or
    unknown: read as the column's type)."""
    sent = sent_type(v)
    if sent is None:
        return None
    try:
        oid = column.oid
    except KeyError:
        return None
    return None if sent[0] == oid else sent[1]


__all__ = ["PG_TYPE_NAMES", "mismatched", "sent_type"]
