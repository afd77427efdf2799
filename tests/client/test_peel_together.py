"""Peels a statement needs on one table run together: one server UPDATE rewrites the
table once for all its columns (adaptive.peel_layers), with each column's constraint,
layer record and audit row as a peel of one column has them; the answers are plain
PostgreSQL's, and a column another client peeled meanwhile is left out."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.adapt import peel
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.catalog.onions import Onion

from .pairs import plain_and_encrypted

DDL = "CREATE TABLE t (id integer PRIMARY KEY, a integer, b date, c text, d numeric(8,2), e text)"
ROWS = [
    (
        i,
        None if i % 7 == 0 else i % 50,
        None if i % 11 == 0 else f"2024-01-{1 + i % 28:02d}",
        f"word{i % 13}",
        None if i % 5 == 0 else i / 4,
        f"w{i % 3} x{i % 4}",
    )
    for i in range(1, 400)
]
# ranges on a, b, d (Ord to OPE), equality and order on c (Eq to DET, Ord to OPE): five
# peels of one table
STATEMENT = (
    "SELECT c, count(*) FROM t WHERE a > 10 AND b < '2024-01-20' AND d BETWEEN 5 AND 60 "
    "AND c <> 'word3' GROUP BY c ORDER BY c"
)


@pytest.fixture
def pair(
    new_database: Callable[..., str], master_key: MasterKey
) -> Iterator[tuple[psycopg.Connection[Any], adaptive_client.Connection]]:
    # (every onion stored at CREATE TABLE: the statement's five peels, none built first)
    stored = {"defaults": {"on_demand": []}}
    with plain_and_encrypted(new_database, master_key, "together", stored, [DDL], {"t": ROWS}) as p:
        yield p


def _updated(control: psycopg.Connection[Any], anon: str) -> int:
    control.execute("SELECT pg_stat_force_next_flush()")
    row = control.execute(
        "SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = %s", (anon,)
    ).fetchone()
    return int(row[0]) if row else 0


def test_one_rewrite_for_a_statements_peels(pair: Any) -> None:
    plain, enc = pair
    anon = enc.catalog.table("t").anon
    before = _updated(enc.control, anon)
    assert enc.execute(STATEMENT).fetchall() == plain.execute(STATEMENT).fetchall()
    log = enc.control.execute(
        "SELECT anon_column, from_layer, to_layer, mode, rows, at FROM adaptive.peel_log "
        "WHERE mode = 'server' ORDER BY id"
    ).fetchall()
    # (c's Ord onion too: its groups are ordered by it)
    assert len(log) == 5 and len({r[5] for r in log}) == 1  # one transaction
    assert sorted((r[1], r[2]) for r in log) == [("RND", "DET")] + [("RND", "OPE")] * 4
    assert _updated(enc.control, anon) - before == len(ROWS)  # every row once
    t = enc.catalog.table("t")
    assert t.column("a").onions[Onion.ORD].layer == "OPE"
    assert t.column("c").onions[Onion.EQ].layer == "DET"
    # each column's layer-tag check is in place: a value at the old layer is refused
    stored = enc.control.execute(
        "SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass AND contype = 'c'",
        (anon,),
    ).fetchall()
    assert {f"k_{r[0]}" for r in log} <= {r[0] for r in stored}
    # writes and reads after the peel
    for conn in (plain, enc):
        conn.execute("INSERT INTO t VALUES (1000, 40, '2024-01-02', 'word1', 9.5, 'q')")
        conn.execute("UPDATE t SET a = 12 WHERE id < 30")
    assert enc.execute(STATEMENT).fetchall() == plain.execute(STATEMENT).fetchall()


def test_a_column_peeled_meanwhile_is_left_out(pair: Any) -> None:
    plain, enc = pair
    t = enc.catalog.table("t")
    a, b = t.column("a").onions[Onion.ORD], t.column("b").onions[Onion.ORD]
    with enc.control.transaction():
        assert peel.peel(enc.control, t, a, "OPE", "server") == 399 - 399 // 7
    enc.catalog.reload(enc.control)
    t = enc.catalog.table("t")
    a_stale = t.column("a").onions[Onion.ORD]
    a_stale.layer = "RND"  # (what a client whose metadata predates that peel holds)
    b = t.column("b").onions[Onion.ORD]
    with enc.control.transaction():
        rows = peel.peel_together(enc.control, t, [(a_stale, "OPE"), (b, "OPE")])
    assert rows == 399 - 399 // 11
    enc.catalog.reload(enc.control)
    assert enc.execute(STATEMENT).fetchall() == plain.execute(STATEMENT).fetchall()
