"""Range indexes (range_indexes.py): a key's leading Eq onions, then a column's Ord onion.

TPC-C's shapes: equality on a key's first columns and a range or an order on the next
(``w = ? AND d = ? AND o >= ? AND o < ?``, ``... ORDER BY o LIMIT 1``).  With Ord onions
built on first use, the first such statement builds the onion and its range index; the
server's plan then reads the range from the index (no sort, no filter over the prefix's
rows), and every answer equals plain PostgreSQL's.  Dropping the key drops its range
index; ``adaptive-db migrate`` creates the ones a database made before them lacks.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.adapt import range_indexes
from adaptive_client.admin.migrate import migrate
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.catalog.onions import Onion

DDL = [
    "CREATE TABLE line (w integer, d integer, o integer, n integer, item integer, "
    "amount numeric(8,2), PRIMARY KEY (w, d, o, n))",
    "CREATE TABLE queue (w integer, d integer, o integer, note text, PRIMARY KEY (w, d, o))",
    "CREATE INDEX line_item ON line (w, item)",
]
LINES = [
    (w, d, o, n, (w * 7 + o * 13 + n * 5) % 50, (o * n) % 97 + 0.25)
    for w in (1, 2, 3)
    for d in (1, 2, 3, 4)
    for o in range(1, 61)
    for n in range(1, 6)
]
QUEUE = [(w, d, o, f"n{o % 7}") for w in (1, 2, 3) for d in (1, 2, 3, 4) for o in range(20, 80)]
CONFIG = {"defaults": {"on_demand": ["Ord", "Search"]}}


class Pair:
    def __init__(self, plain: psycopg.Connection[Any], enc: Any, dsn: str) -> None:
        self.plain, self.enc, self.dsn = plain, enc, dsn

    def same(self, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        expected = self.plain.execute(query, params).fetchall()
        got = self.enc.execute(query, params).fetchall()
        assert got == expected
        return got

    def plan(self, query: str, params: tuple[Any, ...] = ()) -> str:
        """The server's plan for the rewritten statement (sequential scans off: the test
        tables are small enough for the planner to read them whole otherwise)."""
        self.enc.execute("SET enable_seqscan = off")
        try:
            return "\n".join(r[0] for r in self.enc.execute("EXPLAIN " + query, params))
        finally:
            self.enc.execute("RESET enable_seqscan")

    def range_indexes(self) -> dict[str, str]:
        """Server name -> definition of every range index."""
        rows = self.enc.control.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE indexname LIKE 'r\\_%%'"
        ).fetchall()
        return dict(rows)


@pytest.fixture
def pair(new_database: Any, master_key: MasterKey) -> Iterator[Pair]:
    plain_dsn, enc_dsn = new_database("riplain"), new_database("rienc")
    plain = psycopg.connect(plain_dsn, autocommit=True)
    enc = adaptive_client.connect(enc_dsn, master_key=master_key, autocommit=True, config=CONFIG)
    for conn in (plain, enc):
        for ddl in DDL:
            conn.execute(ddl)
        conn.cursor().executemany("INSERT INTO line VALUES (%s, %s, %s, %s, %s, %s)", LINES)
        conn.cursor().executemany("INSERT INTO queue VALUES (%s, %s, %s, %s)", QUEUE)
    for table in ("line", "queue"):
        enc.execute(f"ANALYZE {table}")
    p = Pair(plain, enc, enc_dsn)
    yield p
    plain.close()
    enc.close()


def _anon(p: Pair, table: str, *onions: tuple[str, str]) -> list[str]:
    meta = p.enc.catalog.table(table)
    from adaptive_client.catalog.onions import Onion

    return [meta.column(c).onions[Onion(o)].anon for c, o in onions]


def test_no_ord_onion_no_range_index(pair: Pair) -> None:
    assert pair.range_indexes() == {}
    # equality on the whole key needs no Ord onion: nothing is built
    pair.same("SELECT amount FROM line WHERE w = 2 AND d = 3 AND o = 17 AND n = 4")
    assert pair.range_indexes() == {}


def test_a_range_after_the_keys_prefix_reads_its_range_index(pair: Pair) -> None:
    query = (
        "SELECT count(DISTINCT item), sum(amount) FROM line "
        "WHERE w = %s AND d = %s AND o >= %s AND o < %s"
    )
    assert pair.same(query, (2, 3, 20, 40))[0][0] > 0  # builds o's Ord onion
    (name, definition), *others = pair.range_indexes().items()
    assert others == []
    w, d, o = _anon(pair, "line", ("w", "Eq"), ("d", "Eq"), ("o", "Ord"))
    assert definition.endswith(f"({w}, {d}, {o})")
    plan = pair.plan(query, (2, 3, 20, 40))
    assert f"Index Scan using {name}" in plan or f"Bitmap Index Scan on {name}" in plan
    for params in [(1, 1, 1, 61), (3, 4, 59, 100), (2, 2, 30, 30)]:
        pair.same(query, params)


def test_the_first_row_in_order_after_the_prefix_is_read_without_a_sort(pair: Pair) -> None:
    query = "SELECT o, note FROM queue WHERE w = %s AND d = %s ORDER BY o LIMIT 1"
    pair.same(query, (1, 2))
    (name,) = pair.range_indexes()
    plan = pair.plan(query, (3, 4))
    assert f"Index Scan using {name}" in plan and "Sort" not in plan
    pair.enc.execute("DELETE FROM queue WHERE w = 3 AND d = 4 AND o < 25")
    pair.plain.execute("DELETE FROM queue WHERE w = 3 AND d = 4 AND o < 25")
    assert pair.same(query, (3, 4)) == [(25, "n4")]
    pair.same("SELECT o FROM queue WHERE w = 1 AND d = 2 ORDER BY o DESC LIMIT 3")


def test_a_secondary_index_and_dropping_keys(pair: Pair) -> None:
    pair.same("SELECT count(*) FROM line WHERE w = %s AND item BETWEEN %s AND %s", (1, 10, 20))
    pair.same("SELECT o FROM queue WHERE w = 1 AND d = 1 AND o > 70 ORDER BY o")
    w, item = _anon(pair, "line", ("w", "Eq"), ("item", "Ord"))
    definitions = pair.range_indexes()
    assert any(d.endswith(f"({w}, {item})") for d in definitions.values())
    assert len(definitions) == 2  # (w, item) for line_item, (w, d, o) for queue's key
    pair.enc.execute("DROP INDEX line_item")
    assert not any(d.endswith(f"({w}, {item})") for d in pair.range_indexes().values())
    pair.enc.execute("ALTER TABLE queue DROP CONSTRAINT queue_pkey")
    assert pair.range_indexes() == {}
    pair.same("SELECT o FROM queue WHERE w = 1 AND d = 1 AND o > 70 ORDER BY o")


def test_migrate_creates_the_range_indexes_a_database_lacks(
    pair: Pair, master_key: MasterKey
) -> None:
    pair.same("SELECT o FROM queue WHERE w = 2 AND d = 1 ORDER BY o LIMIT 2")
    pair.same("SELECT count(*) FROM line WHERE w = 1 AND d = 1 AND o < 9")
    made = pair.range_indexes()
    assert len(made) == 2
    with psycopg.connect(pair.dsn, autocommit=True) as conn:
        for name in made:
            conn.execute(f'DROP INDEX "{name}"')  # as a database made before them
        report = migrate(conn, master_key)
        assert report.range_indexes == 2 and "2 range index(es) created" in report.summary()
        again = migrate(conn, master_key)
        assert again.range_indexes == 0 and "nothing to do" in again.summary()
    assert pair.range_indexes() == made
    meta = pair.enc.catalog.table("queue")
    assert list(range_indexes.wanted(pair.enc.catalog, meta)) == [
        n for n, d in made.items() if meta.anon in d
    ]


def test_an_ord_onion_at_rnd_gets_its_range_index_when_peeled(
    new_database: Any, master_key: MasterKey
) -> None:
    """Ord onions made with the table (no ``on_demand``) start at RND, where an index
    orders nothing: the range index comes with the peel to OPE -- a statement's, or the
    DBA's ``adaptive-db peel``."""
    from adaptive_client.admin.controls import peel_column

    dsn = new_database("riup")
    with adaptive_client.connect(dsn, master_key=master_key, autocommit=True) as enc:
        enc.execute(DDL[1])
        enc.execute("CREATE TABLE other (k integer, v integer, PRIMARY KEY (k, v))")
        enc.cursor().executemany("INSERT INTO queue VALUES (%s, %s, %s, %s)", QUEUE)
        p = Pair(enc, enc, dsn)  # (only the server's side is looked at here)
        assert p.range_indexes() == {}
        enc.execute("SELECT o FROM queue WHERE w = 1 AND d = 1 AND o < 30 ORDER BY o")
        (definition,) = p.range_indexes().values()
        w, d, o = _anon(p, "queue", ("w", "Eq"), ("d", "Eq"), ("o", "Ord"))
        assert definition.endswith(f"({w}, {d}, {o})")
        with psycopg.connect(dsn, autocommit=True) as dba:
            assert peel_column(dba, master_key, "other", "v", "Ord", "OPE") >= 0
        assert len(p.range_indexes()) == 2


def test_a_client_with_older_layers_never_drops_a_range_index(
    pair: Pair, master_key: MasterKey
) -> None:
    """Another client's catalog may say the Ord onion is still at RND after this one
    peeled it: its DDL on the table keeps the range index (and makes none it does not
    know of)."""
    with adaptive_client.connect(pair.dsn, master_key=master_key, autocommit=True) as other:
        # (the build on first use renames the table's columns: the other client must know
        # of the Ord onion already, at RND, as after a build by a third client)
        other.execute("SELECT o FROM queue WHERE w = 1 AND d = 1 ORDER BY o LIMIT 1")
        made = pair.range_indexes()
        assert len(made) == 1
        stale = other.catalog.table("queue")
        stale.column("o").onions[Onion.ORD].layer = "RND"  # as before the peel
        assert range_indexes.sync(other.control, other.catalog, stale) == []
        assert pair.range_indexes() == made
