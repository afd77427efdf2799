"""How some of the values the client makes are sent to the server.

A Search onion stores a ``bytea[]`` of word tokens.  psycopg sends a Python list in
PostgreSQL's text array syntax, escaping every byte of every element (a regular
expression per element); loading a table spends more time there than on the tokens'
HMACs.  :class:`WordTokens` marks a token list, and its dumper writes the binary array
format instead: a fixed header and each token behind its length, nothing escaped.  The
same for :class:`CiphertextArray`, the comparands of ``col = ANY(%s)`` (a split
statement's semi-join sends tens of thousands: 0.17 s in text, 0.03 s so).

An Ord onion at ORE is stored in a column of type ``adaptive.ore`` (bytea's forms under
another name, sql/udf/26_ore.sql): :func:`register_ore` has its values (a MIN/MAX the
server computes) read as bytea's are.
"""

from __future__ import annotations

import struct
from typing import Any

import psycopg
from psycopg.abc import AdaptContext
from psycopg.adapt import Dumper
from psycopg.pq import Format
from psycopg.types.string import ByteaBinaryLoader, ByteaLoader

BYTEA_OID = 17
BYTEA_ARRAY_OID = 1001
INT8_OID = 20
INT8_ARRAY_OID = 1016
_HEADER = struct.Struct("!iiiii")  # ndim, has-nulls flag, element type, length, lower bound
_EMPTY = struct.pack("!iii", 0, 0, BYTEA_OID)  # zero dimensions: '{}'


class WordTokens(list[bytes]):
    """The tokens of one text's words, as stored in a Search onion (a ``bytea[]``)."""


class CiphertextArray(list[bytes | None]):
    """Ciphertexts (or NULLs) a ``bytea[]`` parameter compares a column with."""


_NULL = (-1).to_bytes(4, "big", signed=True)


class ByteaArrayDumper(Dumper):
    format = Format.BINARY
    oid = BYTEA_ARRAY_OID

    def dump(self, obj: Any) -> bytes:
        if not obj:
            return _EMPTY
        parts = [_HEADER.pack(1, int(None in obj), BYTEA_OID, len(obj), 1)]
        for value in obj:
            if value is None:
                parts.append(_NULL)
            else:
                parts.append(len(value).to_bytes(4, "big"))
                parts.append(value)
        return b"".join(parts)


class SumValue(list[int]):
    """An ASHE Sum onion's stored value ``[nonce, hi, lo]`` (an ``int8[]``)."""


_INT8_ELEMENT = struct.Struct("!iq")  # length 8, value


class SumValueDumper(Dumper):
    format = Format.BINARY
    oid = INT8_ARRAY_OID

    def dump(self, obj: Any) -> bytes:
        head = _HEADER.pack(1, 0, INT8_OID, len(obj), 1)
        return head + b"".join(_INT8_ELEMENT.pack(8, v) for v in obj)


def register(context: AdaptContext) -> None:
    """Send :class:`WordTokens`, :class:`CiphertextArray` and :class:`SumValue` in binary
    on this connection (or context)."""
    context.adapters.register_dumper(WordTokens, ByteaArrayDumper)
    context.adapters.register_dumper(CiphertextArray, ByteaArrayDumper)
    context.adapters.register_dumper(SumValue, SumValueDumper)


#: the OID of the database's ``adaptive.ore`` type (None: not installed)
ORE_OID_SQL = "SELECT to_regtype('adaptive.ore')::oid"


def register_ore(context: AdaptContext, conn: psycopg.Connection[Any]) -> None:
    """Read ``adaptive.ore`` values as bytea on this connection (or context), the type's
    OID looked up on ``conn`` (a connection in autocommit mode)."""
    row = conn.execute(ORE_OID_SQL).fetchone()
    if row is not None and row[0] is not None:
        context.adapters.register_loader(int(row[0]), ByteaLoader)
        context.adapters.register_loader(int(row[0]), ByteaBinaryLoader)
