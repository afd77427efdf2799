"""Onions built on first use (ondemand.py).

A table created with ``on_demand = ["Ord", "Search"]`` stores no Ord onion for its
columns (its primary key's included) and no Search onion for its text: ``adaptive-db layers`` lists them
``(on first use)`` and the table has no column for them.  The first range, ORDER BY,
MIN/MAX (or word search) over such a column builds the onion (audited, mode ``build``),
and every answer, before and after, equals plain PostgreSQL's.  Refusals (peel mode
``off``), a build that fails half-way (nothing changed), a client whose metadata
predates the build (its write is retried, its row gets the new onion) and two clients
building at once (one build) are shown.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.adapt import designed
from adaptive_client.admin.controls import layers_report
from adaptive_client.catalog.onions import STACKS, Onion
from adaptive_client.errors import OnionBuildDisabled, StaleMetadata

DDL = (
    "CREATE TABLE item (id integer PRIMARY KEY, name text, price numeric(8,2), "
    "added date, qty integer)"
)
ROWS = [
    (
        i,
        None
        if i % 9 == 0
        else ["pear", "Apple", "fig", "kiwi", "", "Zoë", "date"][i % 7] + str(i % 4),
        None if i % 11 == 0 else Decimal(i * 37 % 200) - Decimal("50.25"),
        dt.date(2024, 1, 1) + dt.timedelta(days=(i * 13) % 90),
        (i * 7) % 10 - 3,
    )
    for i in range(1, 61)
]
QUERIES = [
    ("SELECT id FROM item WHERE qty > 2 ORDER BY id", True),
    ("SELECT id, name FROM item WHERE name >= 'fig' AND name < 'pear' ORDER BY name, id", True),
    ("SELECT name FROM item ORDER BY name NULLS FIRST, id", True),
    ("SELECT min(price), max(price), min(added), max(name) FROM item", True),
    ("SELECT id FROM item WHERE price BETWEEN -10 AND 40.5 ORDER BY price DESC, id", True),
    ("SELECT id FROM item WHERE added < DATE '2024-02-01' ORDER BY added, id LIMIT 5", True),
    ("SELECT qty, count(*) FROM item GROUP BY qty ORDER BY qty", True),
    ("SELECT id FROM item WHERE name ~ '\\mfig1\\M' ORDER BY id", True),
]
CONFIG = {"defaults": {"on_demand": ["Ord", "Search"]}}


def _norm(rows: list[tuple[Any, ...]]) -> list[tuple[str, ...]]:
    return [tuple(f"{type(v).__name__}:{v}" for v in r) for r in rows]


class Pair:
    def __init__(self, plain: psycopg.Connection[Any], enc: Any, dsn: str) -> None:
        self.plain, self.enc, self.dsn = plain, enc, dsn

    def check(self, query: str, ordered: bool = True) -> None:
        expected = _norm(self.plain.execute(query).fetchall())
        got = _norm(self.enc.execute(query).fetchall())
        assert (got if ordered else sorted(got)) == (expected if ordered else sorted(expected))

    def close(self) -> None:
        self.plain.close()
        self.enc.close()


def _make(new_database: Any, master_key: Any, peel: str = "server", config: Any = CONFIG) -> Pair:
    plain_dsn, enc_dsn = new_database("odplain"), new_database("odenc")
    plain = psycopg.connect(plain_dsn, autocommit=True)
    enc = adaptive_client.connect(
        enc_dsn, master_key=master_key, peel=peel, autocommit=True, config=config
    )
    for conn in (plain, enc):
        conn.execute(DDL)
        conn.execute("CREATE TABLE note (id integer)")
        conn.cursor().executemany("INSERT INTO item VALUES (%s, %s, %s, %s, %s)", ROWS)
    return Pair(plain, enc, enc_dsn)


@pytest.fixture(params=["server", "client"])
def pair(request: Any, new_database: Any, master_key: Any) -> Iterator[Pair]:
    p = _make(new_database, master_key, request.param)
    yield p
    p.close()


def _stored_columns(p: Pair) -> list[str]:
    anon = p.enc.catalog.table("item").anon
    rows = p.enc.control.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = %s", (anon,)
    ).fetchall()
    return sorted(r[0] for r in rows)


def _builds(p: Pair) -> list[tuple[Any, ...]]:
    return p.enc.control.execute(
        "SELECT onion, from_layer, to_layer, rows FROM adaptive.peel_log "
        "WHERE mode = 'build' ORDER BY id"
    ).fetchall()


def test_pending_onions_are_not_stored(pair: Pair, master_key: Any) -> None:
    item = pair.enc.catalog.table("item")
    for name in ("id", "name", "price", "added", "qty"):
        assert Onion.ORD not in item.column(name).onions
        assert Onion.ORD in item.column(name).on_demand
    assert not any(c.endswith(("_ord", "_search")) for c in _stored_columns(pair))
    pending = [
        r
        for r in layers_report(pair.enc.control, master_key)
        if r.table == "item" and r.layer == "(on first use)"
    ]
    # (and the numbers' Sum onions: the online design's, built when a sum wants one)
    assert sorted((r.column, r.onion) for r in pending) == [
        ("added", "Ord"),
        ("id", "Ord"),
        ("id", "Sum"),
        ("name", "Ord"),
        ("name", "Search"),
        ("price", "Ord"),
        ("price", "Sum"),
        ("qty", "Ord"),
        ("qty", "Sum"),
    ]
    assert all(r.stored_as == "-" and r.provider_learns.startswith("nothing") for r in pending)
    # equality and reads need no Ord onion: nothing is built
    pair.check("SELECT id, name, price, added FROM item WHERE qty = 2", ordered=False)
    assert _builds(pair) == []


@pytest.mark.parametrize("case", range(len(QUERIES)))
def test_first_use_builds_and_answers_as_plain(pair: Pair, case: int) -> None:
    query, _ = QUERIES[case]
    pair.check(query)
    built = _builds(pair)
    # built at the layer the statement needs (it would peel it there at once), or at the
    # start layer where the plan it runs by needs no peel of it (min/max: by the client)
    needed = {"Ord": "OPE", "Search": STACKS[Onion.SEARCH][-1]}
    assert built and all(b[1] == "-" and b[3] > 0 for b in built), built
    assert all(b[2] == needed[b[0]] for b in built) or case == 3, built
    # writes after the build carry the new onion, and the answers stay equal
    for conn in (pair.plain, pair.enc):
        conn.execute("INSERT INTO item VALUES (100, 'fig9', 12.50, DATE '2024-01-15', 5)")
        conn.execute("UPDATE item SET name = 'apple0', price = -1, qty = 4 WHERE id = 3")
    pair.check(query)
    assert len(_builds(pair)) == len(built)  # built once


def test_all_queries_build_each_onion_once(new_database: Any, master_key: Any) -> None:
    p = _make(new_database, master_key)
    try:
        for query, _ in QUERIES:
            p.check(query)
        assert sorted(b[0] for b in _builds(p)) == ["Ord"] * 5 + ["Search"]
        assert sum(c.endswith("_ord") for c in _stored_columns(p)) == 5
        assert sum(c.endswith("_search") for c in _stored_columns(p)) == 1
        assert p.enc.catalog.table("item").column("name").on_demand == {}
    finally:
        p.close()


def test_peel_mode_off_refuses(new_database: Any, master_key: Any) -> None:
    p = _make(new_database, master_key, "off")
    try:
        with pytest.raises(OnionBuildDisabled, match=r"item\.qty's Ord onion"):
            p.enc.execute("SELECT id FROM item WHERE qty > 2")
        assert _builds(p) == []
        assert Onion.ORD in p.enc.catalog.table("item").column("qty").on_demand
    finally:
        p.close()


def test_a_build_that_fails_changes_nothing(
    new_database: Any, master_key: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = _make(new_database, master_key)
    try:
        before = _stored_columns(p)

        def killed(*args: Any) -> None:
            raise RuntimeError("killed in the middle of the build")

        monkeypatch.setattr(designed, "rename_onion", killed)
        with pytest.raises(RuntimeError, match="killed"):
            p.enc.execute("SELECT id FROM item WHERE qty > 2")
        assert _stored_columns(p) == before
        assert _builds(p) == []
        p.enc.catalog.reload(p.enc.control)
        assert Onion.ORD in p.enc.catalog.table("item").column("qty").on_demand
        monkeypatch.undo()
        p.check("SELECT id FROM item WHERE qty > 2", ordered=False)
        assert len(_builds(p)) == 1
    finally:
        p.close()


def test_a_stale_client_write_is_retried_with_the_new_onion(
    new_database: Any, master_key: Any
) -> None:
    p = _make(new_database, master_key)
    stale = adaptive_client.connect(p.dsn, master_key=master_key, peel="server", config=CONFIG)
    try:
        # metadata cached, then a transaction open (no refresh) that has written, holding
        # no lock on the table the build rewrites: it cannot be started again
        stale.execute("INSERT INTO note VALUES (1)")
        p.check("SELECT id FROM item WHERE qty > 2 ORDER BY id")  # builds qty's Ord
        with pytest.raises(StaleMetadata, match="another client changed the onions"):
            stale.execute("INSERT INTO item VALUES (300, 'stale', 1, NULL, 9)")
        stale.rollback()
        assert p.enc.execute("SELECT count(*) FROM note").fetchall() == [(0,)]
        stale.execute("INSERT INTO item VALUES (300, 'stale', 1, NULL, 9)")
        stale.execute("UPDATE item SET qty = 8 WHERE id = 1")
        stale.commit()
        p.plain.execute("INSERT INTO item VALUES (300, 'stale', 1, NULL, 9)")
        p.plain.execute("UPDATE item SET qty = 8 WHERE id = 1")
        p.check("SELECT id, qty FROM item WHERE qty > 2 ORDER BY qty, id")
    finally:
        stale.close()
        p.close()


def test_two_clients_building_at_once_build_once(new_database: Any, master_key: Any) -> None:
    p = _make(new_database, master_key)
    expected = p.plain.execute("SELECT id FROM item WHERE price > 0 ORDER BY price").fetchall()
    others = [
        adaptive_client.connect(p.dsn, master_key=master_key, autocommit=True, config=CONFIG)
        for _ in range(2)
    ]
    got: list[Any] = []
    start = threading.Barrier(len(others))

    def run(conn: Any) -> None:
        start.wait()
        got.append(conn.execute("SELECT id FROM item WHERE price > 0 ORDER BY price").fetchall())

    try:
        threads = [threading.Thread(target=run, args=(c,)) for c in others]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert got == [expected, expected]
        assert [b[0] for b in _builds(p)] == ["Ord"]
    finally:
        for c in others:
            c.close()
        p.close()


def test_checks_and_the_dbas_peel_build_what_they_need(new_database: Any, master_key: Any) -> None:
    """A CHECK comparing a column keeps its Ord onion from CREATE TABLE; one added later
    builds it first; a DBA's ``adaptive-db peel`` of a pending onion builds it, then
    peels it.  PostgreSQL's answers (and its refusal of a violating row) throughout."""
    from adaptive_client.admin.controls import peel_column

    p = _make(new_database, master_key)
    try:
        for conn in (p.plain, p.enc):
            conn.execute(
                "CREATE TABLE rated (id integer, stars integer CHECK (stars BETWEEN 0 AND 5), note text)"
            )
        rated = p.enc.catalog.table("rated")
        assert Onion.ORD in rated.column("stars").onions
        assert Onion.ORD in rated.column("id").on_demand
        for conn in (p.plain, p.enc):
            conn.execute("ALTER TABLE item ADD CONSTRAINT qty_floor CHECK (qty >= -3)")
        assert Onion.ORD in p.enc.catalog.table("item").column("qty").onions
        assert [b[0] for b in _builds(p)] == ["Ord"]
        for conn in (p.plain, p.enc):
            with pytest.raises(psycopg.errors.CheckViolation):
                conn.execute("INSERT INTO item (id, qty) VALUES (500, -4)")
        p.check("SELECT id FROM item WHERE qty >= 5 ORDER BY id")

        with psycopg.connect(p.dsn) as dba:
            rows = peel_column(dba, master_key, "item", "added", "Ord", "OPE", "client")
        assert rows == len(ROWS)
        p.enc.catalog.reload(p.enc.control)
        added = p.enc.catalog.table("item").column("added")
        assert added.onions[Onion.ORD].layer == "OPE" and not added.on_demand
        p.check("SELECT id, added FROM item WHERE added > DATE '2024-03-01' ORDER BY added, id")
    finally:
        p.close()


def test_a_view_and_the_layers_summary_with_pending_onions(
    new_database: Any, master_key: Any
) -> None:
    """A view whose query orders by a column with a pending Ord onion is created (the
    onion built for it) and answers as PostgreSQL's; the per-column summary of
    ``adaptive-db layers`` skips onions not stored."""
    from adaptive_client.admin.controls import column_summary

    p = _make(new_database, master_key)
    try:
        summary = dict(
            (c, w) for c, w, _ in column_summary(layers_report(p.enc.control, master_key))
        )
        assert summary["item.qty"] == "Eq at RND"
        view = "CREATE VIEW cheap AS SELECT id, price FROM item WHERE price < 10 ORDER BY price"
        for conn in (p.plain, p.enc):
            conn.execute(view)
        p.check("SELECT id, price FROM cheap")
    finally:
        p.close()


def test_one_statement_builds_many_onions(new_database: Any, master_key: Any) -> None:
    """An ORDER BY over five columns whose Ord onions are all pending builds and peels
    them all in one statement, and answers as PostgreSQL does."""
    p = _make(new_database, master_key)
    try:
        p.check("SELECT * FROM item ORDER BY qty, added, price, name, id")
        assert [b[0] for b in _builds(p)] == ["Ord"] * 5
    finally:
        p.close()


def test_inside_a_transaction_the_statement_runs_without_its_build(
    new_database: Any, master_key: Any
) -> None:
    """A build the statement could do without (the client finishes the sort) is not done
    inside the application's transaction, where it could fail it: the statement runs
    with the onions stored now, equal to plain, and the build is done once the
    transaction has committed -- an application whose every statement runs in a
    transaction gets its onions too (a rolled-back one leaves it for the next commit)."""
    p = _make(new_database, master_key)
    try:
        query = "SELECT name FROM item ORDER BY name NULLS FIRST, id"
        expected = _norm(p.plain.execute(query).fetchall())
        p.enc.autocommit = False
        p.enc.execute("SELECT count(*) FROM note").fetchall()  # (the transaction is open)
        assert _norm(p.enc.execute(query).fetchall()) == expected
        assert _builds(p) == []
        p.enc.rollback()
        assert _builds(p) == []  # (left for the next commit)
        p.enc.execute("SELECT count(*) FROM note").fetchall()
        assert _norm(p.enc.execute(query).fetchall()) == expected
        assert _builds(p) == []
        p.enc.commit()
        built = _builds(p)
        assert {b[0] for b in built} == {"Ord"}
        assert Onion.ORD not in p.enc.catalog.table("item").column("name").on_demand
        assert _norm(p.enc.execute(query).fetchall()) == expected  # (over the built onion)
        p.enc.commit()
        assert _builds(p) == built  # (nothing more to build)
    finally:
        p.close()


def test_a_build_after_commit_does_not_wait_for_other_sessions(
    new_database: Any, master_key: Any
) -> None:
    """Another session's transaction holds the table: the build after the commit waits a
    bounded time for it, and is kept for a later commit, tried again after a pause."""
    p = _make(new_database, master_key)
    holder = psycopg.connect(p.dsn)
    try:
        anon = p.enc.catalog.table("item").anon
        holder.execute(f'SELECT count(*) FROM "{anon}"').fetchall()  # (its lock held)
        query = "SELECT name FROM item ORDER BY name NULLS FIRST, id"
        expected = _norm(p.plain.execute(query).fetchall())
        p.enc.autocommit = False
        assert _norm(p.enc.execute(query).fetchall()) == expected
        done = threading.Event()
        committer = threading.Thread(target=lambda: (p.enc.commit(), done.set()), daemon=True)
        committer.start()
        assert done.wait(30), "the commit waited for the other session's transaction"
        assert _builds(p) == []
        executor = p.enc.executor
        assert executor.deferred and executor._deferred_after > 0
        holder.rollback()
        p.enc.execute("SELECT count(*) FROM note").fetchall()
        p.enc.commit()
        assert _builds(p) == []  # (within the pause: not tried)
        executor._deferred_after = 0.0
        p.enc.execute("SELECT count(*) FROM note").fetchall()
        p.enc.commit()
        assert {b[0] for b in _builds(p)} == {"Ord"}
        assert not executor.deferred
        assert _norm(p.enc.execute(query).fetchall()) == expected
        p.enc.commit()
    finally:
        holder.close()
        p.close()


def test_a_refused_statement_builds_nothing(new_database: Any, master_key: Any) -> None:
    """Refused for another reason than its onions (a construct the client does not
    support), a statement is refused before the onions it would need are built."""
    p = _make(new_database, master_key)
    try:
        with pytest.raises(adaptive_client.UnsupportedQuery):
            p.enc.execute("SELECT string_agg(name, ',') FROM item WHERE qty > 2")
        assert _builds(p) == []
        assert Onion.ORD in p.enc.catalog.table("item").column("qty").on_demand
    finally:
        p.close()
