"""Join adjustment: joins of columns that no configuration declared related.

A blog schema and TPC-C's StockLevel join, created with no ``join_group`` at all and
every onion at its strongest layer: each join's first run peels the Eq onions to DET and
brings the two columns under one key (joins.py), then runs on the server.  Every query
is compared with plain PostgreSQL (rows; order where ordered); the server's plan is a
join over ciphertexts; the sealed metadata records the key groups and who moved; the
audit log has one ``join`` row per moved column; refusals are typed.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.admin.controls import layers_report
from adaptive_client.catalog.onions import Onion
from adaptive_client.errors import (
    JoinAdjustmentDisabled,
    JoinForbidden,
    StaleMetadata,
    StaleSnapshot,
)

DDL = [
    "CREATE TABLE author (id integer PRIMARY KEY, name varchar(40) NOT NULL, email text)",
    "CREATE TABLE post (id integer PRIMARY KEY, author_id integer, title text, "
    "editor_id integer, published date)",
    "CREATE TABLE comment (id integer PRIMARY KEY, post_id integer, author_id integer, body text)",
    "CREATE TABLE staff (id integer PRIMARY KEY, name text, manager integer)",
    "CREATE TABLE order_line (ol_o_id integer, ol_w_id integer, ol_i_id integer, "
    "ol_quantity integer)",
    "CREATE TABLE stock (s_i_id integer, s_w_id integer, s_quantity integer)",
]

AUTHORS = [(i, f"author{i}", None if i % 4 == 0 else f"a{i}@example.org") for i in range(1, 9)]
POSTS = [
    (p, None if p % 7 == 0 else 1 + p % 6, f"post {p}", 1 + p % 3, dt.date(2024, 1, 1 + p % 20))
    for p in range(1, 31)
]
COMMENTS = [(c, 1 + c % 33, None if c % 9 == 0 else 1 + c % 10, f"c{c}") for c in range(1, 61)]
STAFF = [(1, "boss", None), (2, "ann", 1), (3, "bob", 1), (4, "cid", 2), (5, "dee", 9)]
ORDER_LINES = [(o, 1, 1 + (o * 7) % 15, o % 5) for o in range(1, 41)]
STOCK = [(i, 1, (i * 13) % 25) for i in range(1, 13)]

INSERTS = {
    "author": ("INSERT INTO author VALUES (%s, %s, %s)", AUTHORS),
    "post": ("INSERT INTO post VALUES (%s, %s, %s, %s, %s)", POSTS),
    "comment": ("INSERT INTO comment VALUES (%s, %s, %s, %s)", COMMENTS),
    "staff": ("INSERT INTO staff VALUES (%s, %s, %s)", STAFF),
    "order_line": ("INSERT INTO order_line VALUES (%s, %s, %s, %s)", ORDER_LINES),
    "stock": ("INSERT INTO stock VALUES (%s, %s, %s)", STOCK),
}

# (sql, params, ordered)
QUERIES: list[tuple[str, tuple[Any, ...], bool]] = [
    # the first join of a blog schema
    ("SELECT a.name, p.title FROM author a JOIN post p ON p.author_id = a.id", (), False),
    (
        "SELECT a.name, p.title FROM author a JOIN post p ON a.id = p.author_id WHERE a.id = %s",
        (3,),
        False,
    ),
    ("SELECT a.name, p.id FROM author a LEFT JOIN post p ON p.author_id = a.id", (), False),
    (
        "SELECT p.id, a.name FROM post p LEFT JOIN author a ON a.id = p.author_id ORDER BY p.id",
        (),
        True,
    ),
    (
        "SELECT a.name, p.title FROM author a, post p WHERE a.id = p.author_id AND p.id < %s",
        (12,),
        False,
    ),
    # three-way: comment -> post -> author (post.id joins comment.post_id)
    (
        "SELECT a.name, p.title, c.body FROM comment c JOIN post p ON c.post_id = p.id "
        "JOIN author a ON a.id = p.author_id",
        (),
        False,
    ),
    # a column joined with two others: transitive key groups
    ("SELECT c.id, a.name FROM comment c JOIN author a ON c.author_id = a.id", (), False),
    (
        "SELECT c.id, p.id FROM comment c, post p WHERE c.author_id = p.author_id AND c.id < 20",
        (),
        False,
    ),
    ("SELECT p.id, e.name FROM post p JOIN author e ON e.id = p.editor_id ORDER BY p.id", (), True),
    # self-join
    ("SELECT s.name, m.name FROM staff s JOIN staff m ON s.manager = m.id", (), False),
    (
        "SELECT s.name, m.name FROM staff s LEFT JOIN staff m ON m.id = s.manager ORDER BY s.id",
        (),
        True,
    ),
    # columns never declared related, and a count over the join
    ("SELECT count(*) FROM post p, comment c WHERE p.editor_id = c.author_id", (), False),
    (
        "SELECT a.id, count(p.id) FROM author a LEFT JOIN post p ON p.author_id = a.id "
        "GROUP BY a.id",
        (),
        False,
    ),
    # TPC-C StockLevel as a published driver writes it
    (
        "SELECT COUNT(DISTINCT (S_I_ID)) AS STOCK_COUNT FROM ORDER_LINE, STOCK "
        "WHERE OL_W_ID = %s AND OL_O_ID < %s AND OL_O_ID >= %s AND S_W_ID = %s "
        "AND S_I_ID = OL_I_ID AND S_QUANTITY < %s",
        (1, 30, 10, 1, 15),
        False,
    ),
    # a join, then writes and reads of the adjusted columns by value
    (
        "SELECT p.title FROM post p JOIN author a ON a.id = p.author_id WHERE p.author_id = %s",
        (2,),
        False,
    ),
]


def _norm(rows: list[tuple[Any, ...]], ordered: bool) -> list[tuple[Any, ...]]:
    def one(v: Any) -> Any:
        if isinstance(v, Decimal | dt.date):
            return (type(v).__name__, str(v))
        return (type(v).__name__, repr(v))

    out = [tuple(one(v) for v in r) for r in rows]
    return out if ordered else sorted(out)


class Pair:
    def __init__(
        self, plain: psycopg.Connection[Any], enc: adaptive_client.Connection, dsn: str
    ) -> None:
        self.plain, self.enc, self.dsn = plain, enc, dsn

    def check(self, query: str, params: tuple[Any, ...] = (), ordered: bool = False) -> None:
        expected = self.plain.execute(query, params or None).fetchall()
        got = self.enc.execute(query, params or None).fetchall()
        assert _norm(got, ordered) == _norm(expected, ordered), query


def _make(new_database: Any, master_key: Any, peel: str, config: Any = None) -> Pair:
    plain_dsn, enc_dsn = new_database("jplain"), new_database("jenc")
    plain = psycopg.connect(plain_dsn, autocommit=True)
    enc = adaptive_client.connect(
        enc_dsn, master_key=master_key, peel=peel, autocommit=True, config=config
    )
    for stmt in DDL:
        plain.execute(stmt)
        enc.execute(stmt)
    for query, rows in INSERTS.values():
        plain.cursor().executemany(query, rows)
        enc.cursor().executemany(query, rows)
    return Pair(plain, enc, enc_dsn)


@pytest.fixture(scope="module", params=["server", "client"])
def pair(request: Any, new_database: Any, master_key: Any) -> Iterator[Pair]:
    p = _make(new_database, master_key, request.param)
    yield p
    p.plain.close()
    p.enc.close()


@pytest.mark.parametrize("case", range(len(QUERIES)))
def test_join_equals_plain(pair: Pair, case: int) -> None:
    query, params, ordered = QUERIES[case]
    pair.check(query, params, ordered)


def test_writes_and_reads_after_adjustment(pair: Pair) -> None:
    pair.check("SELECT a.name, p.title FROM author a JOIN post p ON p.author_id = a.id")
    for conn in (pair.plain, pair.enc):
        conn.execute("INSERT INTO post VALUES (100, 5, 'new', 2, NULL)")
        conn.execute("UPDATE post SET author_id = 4 WHERE id = 3")
        conn.execute("INSERT INTO author VALUES (50, 'late', NULL)")
        conn.execute("INSERT INTO post VALUES (101, 50, 'late post', 50, NULL)")
    pair.check("SELECT a.name, p.title FROM author a JOIN post p ON p.author_id = a.id")
    pair.check("SELECT id, author_id FROM post WHERE author_id IN (4, 5, 50)")
    pair.check("SELECT author_id, count(*) FROM post GROUP BY author_id")
    pair.check("SELECT id, author_id, editor_id FROM post ORDER BY id", ordered=True)


def test_plan_is_a_join_over_ciphertexts(pair: Pair) -> None:
    pair.enc.execute("SELECT 1 FROM author a JOIN post p ON p.author_id = a.id").fetchall()
    plan = "\n".join(
        r[0]
        for r in pair.enc.execute(
            "EXPLAIN SELECT a.name, p.title FROM author a JOIN post p ON p.author_id = a.id"
        ).fetchall()
    )
    assert any(j in plan for j in ("Hash Join", "Merge Join", "Nested Loop")), plan
    assert "Join Filter" not in plan, plan  # the join condition is the join's own key


# a self-join, a three-way join, an outer join and an implicit comma join; their joins
PLANNED_JOINS = [
    ("SELECT s.name, m.name FROM staff s JOIN staff m ON s.manager = m.id", 1),
    (
        "SELECT a.name, p.title, c.body FROM author a JOIN post p ON p.author_id = a.id "
        "JOIN comment c ON c.post_id = p.id",
        2,
    ),
    ("SELECT a.name, p.id FROM author a LEFT JOIN post p ON p.author_id = a.id", 1),
    ("SELECT o.ol_o_id, s.s_quantity FROM order_line o, stock s WHERE s.s_i_id = o.ol_i_id", 1),
]


_JOIN_NODE = re.compile(r"(Hash|Merge)( (Left|Right|Full|Semi|Anti))? Join|Nested Loop")


@pytest.mark.parametrize(("query", "joins"), PLANNED_JOINS)
def test_each_join_shape_plans_a_join_over_ciphertexts(pair: Pair, query: str, joins: int) -> None:
    pair.check(query)  # (adjusts the columns the first time)
    lines = [r[0] for r in pair.enc.execute("EXPLAIN " + query).fetchall()]
    plan = "\n".join(lines)
    nodes = [x for x in lines if _JOIN_NODE.search(x)]
    # one join node per join of the query, each on its own key (a hash or merge
    # condition, or an index nested loop): no cross product filtered afterwards
    assert len(nodes) == joins, plan
    assert "Join Filter" not in plan, plan
    for node in nodes:
        if "Nested Loop" in node:
            assert "Index" in plan, plan


def test_metadata_records_groups_and_log(pair: Pair, master_key: Any) -> None:
    pair.check("SELECT s.name, m.name FROM staff s JOIN staff m ON s.manager = m.id")
    pair.check("SELECT c.id, a.name FROM comment c JOIN author a ON c.author_id = a.id")
    pair.check("SELECT a.name, p.title FROM author a JOIN post p ON p.author_id = a.id")
    catalog = pair.enc.catalog
    eq = {
        f"{t}.{c}": catalog.table(t).column(c).onions[Onion.EQ]
        for t, c in [
            ("author", "id"),
            ("post", "author_id"),
            ("comment", "author_id"),
            ("staff", "id"),
            ("staff", "manager"),
        ]
    }
    group = {n for n in ("author.id", "post.author_id", "comment.author_id")}
    keys = {eq[n].keys["DET"] for n in group}
    assert len(keys) == 1  # one key for the transitive group
    assert eq["staff.id"].keys["DET"] == eq["staff.manager"].keys["DET"]
    assert eq["staff.id"].keys["DET"] not in keys
    labels = {eq[n].key_group for n in group}
    assert len(labels) == 1 and None not in labels
    moved = [n for n in group if any(a["moved"] for a in eq[n].adjustments)]
    stayed = [n for n in group if any(not a["moved"] for a in eq[n].adjustments)]
    assert moved and stayed
    log = pair.enc.control.execute(
        "SELECT anon_column, onion, from_layer, to_layer FROM adaptive.peel_log WHERE mode = 'join'"
    ).fetchall()
    anon = {oc.anon for oc in eq.values()}
    assert {r[0] for r in log} & anon
    assert all(r[1] == "Eq" and r[2] == r[3] == "DET" for r in log)
    with psycopg.connect(pair.dsn) as conn:
        report = layers_report(conn, master_key)
    row = next(r for r in report if (r.table, r.column, r.onion) == ("post", "author_id", "Eq"))
    assert "author.id" in row.provider_learns and "comment.author_id" in row.provider_learns


def test_stale_client_cannot_write_under_the_old_key(new_database: Any, master_key: Any) -> None:
    p = _make(new_database, master_key, "server")
    stale = adaptive_client.connect(p.dsn, master_key=master_key, peel="server")
    try:
        # metadata cached, then a transaction open (no refresh) holding no lock on the
        # tables the join re-keys, which has written (nothing): not started again
        stale.execute("DELETE FROM staff WHERE id = -1")
        p.check("SELECT a.name, p.title FROM author a JOIN post p ON p.author_id = a.id")
        with pytest.raises(StaleMetadata):
            stale.execute("INSERT INTO post VALUES (200, 2, 'stale', 1, NULL)")
        stale.rollback()
        stale.execute("INSERT INTO post VALUES (200, 2, 'stale', 1, NULL)")
        stale.execute("INSERT INTO author VALUES (201, 'stale author', NULL)")
        stale.commit()
        p.plain.execute("INSERT INTO post VALUES (200, 2, 'stale', 1, NULL)")
        p.plain.execute("INSERT INTO author VALUES (201, 'stale author', NULL)")
        p.check("SELECT a.name, p.title FROM author a JOIN post p ON p.author_id = a.id")
        p.check("SELECT id, author_id FROM post")
    finally:
        stale.close()
        p.enc.close()
        p.plain.close()


def test_peel_mode_off_refuses(new_database: Any, master_key: Any) -> None:
    at_det = {"start": {"Eq": "DET"}}
    cfg = {"tables": {"author": {"id": at_det}, "post": {"author_id": at_det}}}
    p = _make(new_database, master_key, "off", cfg)
    try:
        with pytest.raises(JoinAdjustmentDisabled, match=r"author\.id|post\.author_id"):
            p.enc.execute("SELECT a.name FROM author a JOIN post p ON p.author_id = a.id")
        log = p.enc.control.execute("SELECT count(*) FROM adaptive.peel_log").fetchone()
        assert log == (0,)
    finally:
        p.enc.close()
        p.plain.close()


def test_joins_false_forbids_moving(new_database: Any, master_key: Any) -> None:
    fixed = {"joins": False}
    cfg = {
        "tables": {"author": {"id": fixed}, "post": {"author_id": fixed}, "staff": {"id": fixed}}
    }
    p = _make(new_database, master_key, "client", cfg)
    try:
        with pytest.raises(JoinForbidden, match="joins = false"):
            p.enc.execute("SELECT a.name FROM author a JOIN post p ON p.author_id = a.id")
        # one side fixed: the other side moves, whatever the sizes
        p.check("SELECT s.name, m.name FROM staff s JOIN staff m ON s.manager = m.id")
        staff = p.enc.catalog.table("staff")
        assert not staff.column("id").onions[Onion.EQ].adjustments[0]["moved"]
        assert staff.column("manager").onions[Onion.EQ].adjustments[0]["moved"]
    finally:
        p.enc.close()
        p.plain.close()


ORD_QUERIES = [
    "SELECT p.id, a.id FROM post p JOIN author a ON p.editor_id < a.id",
    "SELECT p.id, c.id FROM post p, comment c WHERE p.id >= c.post_id AND c.id < 6",
    "SELECT s.id, m.id FROM staff s JOIN staff m ON s.manager > m.id",
    "SELECT a.id, p.id FROM author a JOIN post p ON p.author_id <= a.id AND p.id = 5",
    "SELECT ol.ol_o_id, s.s_i_id FROM order_line ol, stock s "
    "WHERE ol.ol_quantity > s.s_quantity AND ol.ol_o_id < 8",
    # text ranges compare a prefix only: answered by split execution, still exact
    "SELECT a.id, p.id FROM author a, post p WHERE a.name < p.title",
]


@pytest.mark.parametrize("case", range(len(ORD_QUERIES)))
def test_range_join_equals_plain(pair: Pair, case: int) -> None:
    pair.check(ORD_QUERIES[case])


def test_range_join_moves_ord_onions(pair: Pair) -> None:
    pair.check(ORD_QUERIES[0])
    post = pair.enc.catalog.table("post").column("editor_id").onions[Onion.ORD]
    author = pair.enc.catalog.table("author").column("id").onions[Onion.ORD]
    assert post.layer == author.layer == "OPE"
    assert post.keys["OPE"] == author.keys["OPE"]
    log = pair.enc.control.execute(
        "SELECT count(*) FROM adaptive.peel_log WHERE mode = 'join' AND onion = 'Ord'"
    ).fetchone()
    assert log is not None and log[0] >= 1


def test_declared_group_moves_whole_with_a_member_not_peeled(
    new_database: Any, master_key: Any
) -> None:
    """A declared join group moves as a whole, a member still at RND included (its RND
    layer kept, re-wrapped around the re-keyed DET value)."""
    cfg = {
        "tables": {
            "author": {"id": {"joins": False}},
            "post": {"editor_id": {"join_group": "g"}},
            "comment": {"author_id": {"join_group": "g"}},
        }
    }
    p = _make(new_database, master_key, "client", cfg)
    try:
        p.check("SELECT p.id, a.name FROM post p JOIN author a ON a.id = p.editor_id")
        catalog = p.enc.catalog
        comment = catalog.table("comment").column("author_id").onions[Onion.EQ]
        author = catalog.table("author").column("id").onions[Onion.EQ]
        assert comment.layer == "RND"  # never compared: still at RND, but re-keyed
        assert comment.keys["DET"] == author.keys["DET"]
        p.check("SELECT id, author_id FROM comment")
        p.check("SELECT c.id, a.name FROM comment c JOIN author a ON c.author_id = a.id")
        p.check("SELECT c.id, p.id FROM comment c JOIN post p ON c.author_id = p.editor_id")
        log = p.enc.control.execute(
            "SELECT count(*) FROM adaptive.peel_log WHERE mode = 'join'"
        ).fetchone()
        assert log == (2,)  # the group's two members, once
    finally:
        p.enc.close()
        p.plain.close()


def test_adjustments_inside_transactions(new_database: Any, master_key: Any) -> None:
    """Where an adjustment runs when the statement is in a transaction: READ COMMITTED
    holding no lock (beside it, committed at once), READ COMMITTED holding a lock on the
    table (inside it: undone with a rollback, the catalog read again), REPEATABLE READ
    (beside it, then StaleSnapshot: the retry sees the adjusted columns)."""
    p = _make(new_database, master_key, "server")
    conn = adaptive_client.connect(p.dsn, master_key=master_key)
    q = "SELECT a.name, p.title FROM author a JOIN post p ON p.author_id = a.id"
    expected = _norm(p.plain.execute(q).fetchall(), False)
    try:
        # READ COMMITTED, holding a lock on post: inside the transaction, rolled back
        conn.execute("SELECT count(*) FROM post").fetchall()
        assert _norm(conn.execute(q).fetchall(), False) == expected
        conn.rollback()
        eq = conn.catalog.table("post").column("author_id").onions[Onion.EQ]
        assert (
            eq.keys["DET"] != conn.catalog.table("author").column("id").onions[Onion.EQ].keys["DET"]
        )
        assert conn.control.execute(
            "SELECT count(*) FROM adaptive.peel_log WHERE mode = 'join'"
        ).fetchone() == (0,)
        # REPEATABLE READ: adjusted beside the transaction, which must retry
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        conn.execute("SELECT count(*) FROM staff").fetchall()
        with pytest.raises(StaleSnapshot):
            conn.execute(q)
        conn.rollback()
        assert _norm(conn.execute(q).fetchall(), False) == expected
        conn.commit()
        # READ COMMITTED holding no lock: beside it, the statement answers at once
        conn.isolation_level = psycopg.IsolationLevel.READ_COMMITTED
        conn.execute("SELECT count(*) FROM staff").fetchall()
        q2 = "SELECT s.name, m.name FROM staff s JOIN staff m ON s.manager = m.id"
        assert _norm(conn.execute(q2).fetchall(), False) == _norm(
            p.plain.execute(q2).fetchall(), False
        )
        conn.commit()
        assert conn.control.execute(
            "SELECT count(*) FROM adaptive.peel_log WHERE mode = 'join'"
        ).fetchone() == (2,)
    finally:
        conn.close()
        p.enc.close()
        p.plain.close()
