"""Field onions built on first use: a jsonb field a statement compares, orders or groups
by (compile/field_onions.py) gets onions of its own, so that the server does it.

A field onion is a precomputed expression (catalog/precomputed.py) that the client adds
itself: a hidden ``text`` column of the table holding ``attrs ->> 'sku'`` (or ``#>>``,
a chain of ``->``), in an Eq and an Ord onion, both at RND -- the provider learns nothing
of the field until a statement peels one, as for any column's onions.  From then on the
client computes it on every INSERT, COPY and UPDATE of the jsonb column, and the
precomputed pass gives the statements naming the field to the server.

The build is a precomputed column's (designed.py: an onion build's guarantees, every
row's field computed by the client from the jsonb column's readable onion); refused by
peel mode ``off`` (the statement then runs as compiled, extracting the field on the
client).
"""

from __future__ import annotations

import re
from typing import Any

import psycopg

from ..catalog.metadata import Catalog
from ..catalog.onions import Onion
from ..compile.needs import FieldNeed
from .designed import Precomputed, add_precomputed

# the onions of a field: equality and grouping, order and ranges
FIELD_ONIONS = (Onion.EQ, Onion.ORD)


def build(conn: psycopg.Connection[Any], catalog: Catalog, need: FieldNeed) -> int:
    """Build one field onion in its own transaction (a savepoint inside an open one) on
    ``conn``; return the rows written (-1: the table has it already).

    Raises :class:`StaleMetadata` when the catalog changed since it was loaded: the
    caller reloads it and plans again."""
    meta = catalog.table(need.table)
    wanted = Precomputed(_stem(need), need.expression, "text", FIELD_ONIONS)
    return add_precomputed(conn, catalog, meta, wanted)


def _stem(need: FieldNeed) -> str:
    """A name for the hidden column: the column and the path's words (``attrs_sku``)."""
    words = re.findall(r"[a-z0-9]+", need.expression.lower())
    return "_".join(words)[:48] or need.column
