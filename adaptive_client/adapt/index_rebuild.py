"""A table's indexes dropped for the time of a rewrite of every row, and built again once.

An adaptation that sets a column in every row (a build, a precomputed column's fill) makes
PostgreSQL write each row again and insert it into every index of the table, row by row:
on a large table that costs more than the rewrite itself.  As the server-side peel does
(sql/udf/30_peel_layer.sql), the client drops the indexes worth it first, in the
adaptation's transaction (under its ``ACCESS EXCLUSIVE`` lock: no one sees the table
without them), and builds each again, under its own name, once the rows are written --
a rollback brings them back with the rest.  Left alone (maintained row by row): indexes a
foreign key, the replica identity or CLUSTER depend on, exclusion constraints, and
indexes not valid or not ready; and every index of a table smaller than
:data:`REBUILD_FROM_BYTES`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import psycopg
from psycopg import sql

# below this size maintaining the indexes row by row is as cheap as rebuilding them
REBUILD_FROM_BYTES = 2 * 1024 * 1024

_DROPPABLE = (
    "SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid), c.conname, "
    "       pg_get_constraintdef(c.oid) "
    "FROM pg_index i "
    "LEFT JOIN pg_constraint c ON c.conindid = i.indexrelid "
    "     AND c.conrelid = i.indrelid AND c.contype IN ('p', 'u') "
    "WHERE i.indrelid = %s::regclass AND i.indisvalid AND i.indisready "
    "  AND i.indislive AND NOT i.indisreplident AND NOT i.indisclustered "
    "  AND NOT EXISTS (SELECT 1 FROM pg_constraint x WHERE x.conindid = i.indexrelid "
    "                  AND (x.contype IN ('f', 'x') OR x.conrelid <> i.indrelid)) "
    "ORDER BY i.indexrelid"
)


@contextlib.contextmanager
def indexes_dropped(conn: psycopg.Connection[Any], anon: str) -> Iterator[None]:
    """Within: the table ``anon`` (locked by the caller's transaction) without the
    indexes worth rebuilding; after: each built again as it was."""
    table = sql.Identifier(anon)
    name = table.as_string(conn)
    row = conn.execute("SELECT pg_relation_size(%s::regclass)", (name,)).fetchone()
    dropped: list[tuple[str, str, str | None, str | None]] = []
    if row is not None and int(row[0]) >= REBUILD_FROM_BYTES:
        dropped = conn.execute(_DROPPABLE, (name,)).fetchall()
        for index, _, constraint, _ in dropped:
            if constraint is not None:
                conn.execute(
                    sql.SQL("ALTER TABLE {} DROP CONSTRAINT {}").format(
                        table, sql.Identifier(constraint)
                    )
                )
            else:
                conn.execute(sql.SQL("DROP INDEX {}").format(sql.SQL(index)))
    yield
    for _, definition, constraint, constraint_def in dropped:
        if constraint is not None and constraint_def is not None:
            conn.execute(
                sql.SQL("ALTER TABLE {} ADD CONSTRAINT {} {}").format(
                    table, sql.Identifier(constraint), sql.SQL(constraint_def)
                )
            )
        else:
            conn.execute(sql.SQL(definition))


__all__ = ["REBUILD_FROM_BYTES", "indexes_dropped"]
