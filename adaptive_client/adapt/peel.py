"""Peeling: strip an onion's outer layer in place, atomically, when a query needs it.

Modes (``Config.peel`` or ``connect(..., peel=...)``):

* ``server`` -- call the PL/Python stored procedure ``adaptive.peel_layer`` with the
  layer's key; the database rewrites the column (set-based, through pgcrypto).
* ``client`` -- for hosted PostgreSQL without untrusted PL/Python: the client streams
  the onion out, strips the layer itself and writes it back in batches, in one
  transaction with the same locks, constraint swap, layer record and audit row.
* ``off`` -- no adaptivity: a query needing a lower layer fails with :class:`PeelDisabled`.

Peels run on the connection's *control* connection, in their own transaction, never in
the application's: a peel commits or vanishes as a whole.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import psycopg
from psycopg import sql

from ..catalog.metadata import OnionColumn, TableMeta
from ..catalog.onions import TOKEN_ONIONS
from ..compile.plan import Need
from ..errors import LayerFloorViolation, PeelDisabled

BATCH = 5000

# A token onion (Search, Substr, Contain) at RND stores one RND value (its tokens, concatenated)
# in a one-element array; peeled, the array holds the 16-byte tokens.  The same expressions as the
# server-side peel (sql/udf/30_peel_layer.sql).
SEARCH_AT_RND = sql.SQL("{col} IS NOT NULL AND octet_length({col}[1]) <> 16")
SEARCH_SPLIT = sql.SQL(
    "ARRAY(SELECT substring({blob} FROM 1 + 16 * i FOR 16) "
    "FROM generate_series(0, octet_length({blob}) / 16 - 1) AS i ORDER BY i)::bytea[]"
)
# after the peel, a stale client's RND value (13 + 16k bytes, never 16) is refused
SEARCH_PEELED = sql.SQL("coalesce(octet_length({col}[1]), 16) = 16")
CLIENT_CHECK_MS = 100


def plan_peels(needs: list[Need]) -> list[Need]:
    """One peel per onion column, to the lowest layer any need asks for."""
    best: dict[str, Need] = {}
    for n in needs:
        cur = best.get(n.onion.anon)
        if cur is None or n.onion.stack.index(n.layer) > n.onion.stack.index(cur.layer):
            best[n.onion.anon] = n
    return list(best.values())


def check_allowed(need: Need, mode: str) -> None:
    oc = need.onion
    if oc.floor is not None and oc.stack.index(need.layer) > oc.stack.index(oc.floor):
        raise LayerFloorViolation(
            f"{need.table.name}.{need.column.name}: {need.cap.value} needs the {oc.onion} onion "
            f"at {need.layer}, below its floor {oc.floor}"
        )
    if mode == "off":
        raise PeelDisabled(
            f"{need.table.name}.{need.column.name}: {need.cap.value} needs the {oc.onion} onion "
            f"peeled {oc.layer} -> {need.layer}, and peeling is off"
        )


def peel(
    control: psycopg.Connection[Any], table: TableMeta, oc: OnionColumn, to_layer: str, mode: str
) -> int:
    """Peel one step at a time down to ``to_layer``; return rows rewritten (-1: no-op)."""
    total = -1
    while oc.layer != to_layer:
        nxt = oc.stack[oc.stack.index(oc.layer) + 1]
        if oc.layer != "RND":  # only RND layers are peelable (DET/OPE are innermost)
            raise PeelDisabled(f"cannot peel {oc.layer}")
        if mode == "server":
            with _watched(control):
                row = control.execute(
                    "SELECT adaptive.peel_layer(%s, %s, %s, %s, %s, %s)",
                    (table.anon, oc.anon, oc.layer, nxt, oc.keys["RND"], oc.layer_tag(nxt)),
                ).fetchone()
            rows = int(row[0]) if row else -1
        else:
            rows = _client_peel(control, table, oc, nxt)
        total = max(total, rows)
        oc.layer = nxt
    return total


def peel_together(
    control: psycopg.Connection[Any], table: TableMeta, todo: list[tuple[OnionColumn, str]]
) -> int:
    """Peel the RND layer of several onion columns of ``table`` in one server UPDATE
    (``adaptive.peel_layers``): each ``(onion, layer)`` one step from RND.  Return the
    rows rewritten (-1: every one was peeled already)."""
    assert all(oc.layer == "RND" and oc.stack[1] == layer for oc, layer in todo)
    with _watched(control):
        row = control.execute(
            "SELECT adaptive.peel_layers(%s, %s, 'RND', %s, %s, %s)",
            (
                table.anon,
                [oc.anon for oc, _ in todo],
                [layer for _, layer in todo],
                [oc.keys["RND"] for oc, _ in todo],
                [oc.layer_tag(layer) for oc, layer in todo],
            ),
        ).fetchone()
    for oc, layer in todo:
        oc.layer = layer
    return int(row[0]) if row else -1


def can_peel_together(control: psycopg.Connection[Any]) -> bool:
    """Whether the database has ``adaptive.peel_layers`` (installed or migrated since it
    came: a database of before has only the one-column peel)."""
    row = control.execute(
        "SELECT to_regprocedure('adaptive.peel_layers(text,text[],text,text[],bytea[],integer[])')"
        " IS NOT NULL"
    ).fetchone()
    return bool(row and row[0])


@contextlib.contextmanager
def _watched(conn: psycopg.Connection[Any]) -> Iterator[None]:
    """Make the peeling backend poll its client's socket during the peel run inside.

    A client that dies mid-peel would otherwise leave its backend peeling, holding the
    table's lock, until the statement ends -- and then committing, since the request
    was complete.  Polled every 100 ms, a vanished client ends the peel rolled back.
    The setting takes effect from the next statement, hence its own round trip, in the
    peel's transaction: opened here where ``conn`` has none (a session setting would
    stay on a server session a transaction pooler lends to others, and be missing on
    the one the peel runs on); inside the application's transaction (READ COMMITTED
    peels) it lasts until that ends.
    """
    watch = f"SET LOCAL client_connection_check_interval = '{CLIENT_CHECK_MS}ms'"
    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        conn.execute(watch)
        yield
        return
    with conn.transaction():
        conn.execute(watch)
        yield


def _client_peel(
    control: psycopg.Connection[Any], table: TableMeta, oc: OnionColumn, to: str
) -> int:
    t0 = time.monotonic()
    tbl, col = sql.Identifier(table.anon), sql.Identifier(oc.anon)
    con = sql.Identifier("k_" + oc.anon)
    search = oc.onion in TOKEN_ONIONS
    with control.transaction():
        row = control.execute(
            "SELECT onion, layer FROM adaptive.layers WHERE anon_table = %s AND anon_column = %s "
            "FOR UPDATE",
            (table.anon, oc.anon),
        ).fetchone()
        if row is None or row[1] != oc.layer:
            return -1
        control.execute(sql.SQL("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE").format(tbl))
        control.execute(sql.SQL("ALTER TABLE {} DROP CONSTRAINT IF EXISTS {}").format(tbl, con))
        if search:  # the GIN index serving `@>`, built before the UPDATE as the UDF does
            control.execute(
                sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} USING gin ({})").format(
                    sql.Identifier("g_" + oc.anon), tbl, col
                )
            )
        rows = 0
        with control.cursor(name=f"peel_{oc.anon}") as src, control.cursor() as dst:
            if search:  # one RND value holding the row's tokens, split on the way back
                src.execute(
                    sql.SQL("SELECT ctid, {}[1] FROM {} WHERE {}").format(
                        col, tbl, SEARCH_AT_RND.format(col=col)
                    )
                )
                update = sql.SQL(
                    "UPDATE {} AS t SET {} = {} FROM unnest(%s::tid[], %s::bytea[]) "
                    "AS v(id, c) WHERE t.ctid = v.id"
                ).format(tbl, col, SEARCH_SPLIT.format(blob=sql.SQL("v.c")))
            else:
                src.execute(
                    sql.SQL(
                        "SELECT ctid, {}::bytea FROM {} "
                        "WHERE {} IS NOT NULL AND get_byte({}::bytea, 0) = 1"
                    ).format(col, tbl, col, col)
                )
                update = sql.SQL(
                    "UPDATE {} AS t SET {} = v.c FROM unnest(%s::tid[], %s::bytea[]) "
                    "AS v(id, c) WHERE t.ctid = v.id"
                ).format(tbl, col)
            while True:
                batch = src.fetchmany(BATCH)
                if not batch:
                    break
                ids = [r[0] for r in batch]
                stripped = oc.rnd.decrypt_many([bytes(r[1]) for r in batch])
                dst.execute(update, (ids, stripped))
                rows += len(batch)
        check = (
            SEARCH_PEELED.format(col=col)
            if search
            else sql.SQL("get_byte({}::bytea, 0) = {}").format(col, sql.Literal(oc.layer_tag(to)))
        )
        control.execute(
            sql.SQL("ALTER TABLE {} ADD CONSTRAINT {} CHECK ({}) NOT VALID").format(tbl, con, check)
        )
        control.execute(
            "UPDATE adaptive.layers SET layer = %s, changed_at = now() "
            "WHERE anon_table = %s AND anon_column = %s",
            (to, table.anon, oc.anon),
        )
        control.execute("UPDATE adaptive.epoch SET value = value + 1 WHERE id = 1")
        control.execute(
            "INSERT INTO adaptive.peel_log (anon_table, anon_column, onion, from_layer, to_layer, "
            "mode, rows, duration_ms) VALUES (%s, %s, %s, %s, %s, 'client', %s, %s)",
            (table.anon, oc.anon, row[0], oc.layer, to, rows, (time.monotonic() - t0) * 1000),
        )
        control.execute("NOTIFY adaptive_epoch")
    return rows
