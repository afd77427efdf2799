r"""The Search onion's RND layer: nothing about the words until the first search.

A table with two text columns full of repeated words: before any search, no element of
any stored Search array repeats (across rows or columns); a word search on one column
peels that column alone (audited), after which its tokens repeat as the words do and
the other column's still do not.  Searches return plain PostgreSQL's rows, in both peel
modes, with the GIN index used; a stale client's RND write after the peel is refused and
retried; a table created with the one-layer stack (before the RND layer existed) keeps
working.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import psycopg
import pytest
from psycopg import sql

import adaptive_client
from adaptive_client.catalog.onions import Onion
from adaptive_client.errors import RetryableError

# every onion stored at CREATE TABLE (none built on first use): what this file examines
STORED = {"defaults": {"on_demand": []}}


WORDS = ["onion", "layer", "peel", "key", "privacy", "cipher", "token", "index"]


def _texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randrange(0, 6))) for _ in range(n)]


def _stored(dsn: str, enc: adaptive_client.Connection, table: str, col: str) -> list[Any]:
    meta = enc.catalog.table(table)
    oc = meta.column(col).onions[Onion.SEARCH]
    with psycopg.connect(dsn) as c:
        return [
            r[0]
            for r in c.execute(
                sql.SQL("SELECT {} FROM {}").format(
                    sql.Identifier(oc.anon), sql.Identifier(meta.anon)
                )
            )
        ]


def _elements(arrays: list[Any]) -> Counter[bytes]:
    return Counter(bytes(e) for a in arrays if a is not None for e in a)


@pytest.mark.parametrize("peel", ["server", "client"])
def test_search_tokens_hidden_until_first_search(
    new_database: Any, master_key: Any, peel: str
) -> None:
    plain_dsn, dsn = new_database("splain"), new_database("senc")
    a, b = _texts(300, 1), _texts(300, 2)
    rows = [(i, a[i] if i % 17 else None, b[i]) for i in range(300)]
    plain = psycopg.connect(plain_dsn, autocommit=True)
    enc = adaptive_client.connect(
        dsn, master_key=master_key, peel=peel, autocommit=True, config=STORED
    )
    try:
        for conn in (plain, enc):
            conn.execute("CREATE TABLE doc (id integer PRIMARY KEY, body text, title text)")
            conn.cursor().executemany("INSERT INTO doc VALUES (%s, %s, %s)", rows)
        before = _stored(dsn, enc, "doc", "body") + _stored(dsn, enc, "doc", "title")
        counts = _elements(before)
        assert counts and max(counts.values()) == 1  # nothing repeats before a search
        assert all(a is None or len(a) == 1 for a in before)

        query = r"SELECT id FROM doc WHERE body ~ %s ORDER BY id"
        for word in ("onion", "peel", "absent"):
            pattern = rf"\m{word}\M"
            expected = plain.execute(query, (pattern,)).fetchall()
            assert enc.execute(query, (pattern,)).fetchall() == expected
        body = _elements(_stored(dsn, enc, "doc", "body"))
        title = _elements(_stored(dsn, enc, "doc", "title"))
        assert max(body.values()) > 1  # peeled: the body's word tokens repeat
        assert len(body) <= len(WORDS)
        assert max(title.values()) == 1  # the title was never searched
        log = enc.control.execute(
            "SELECT onion, from_layer, to_layer, mode FROM adaptive.peel_log WHERE onion = 'Search'"
        ).fetchall()
        assert log == [("Search", "RND", "SEARCH", peel)]  # the body's, once

        # the GIN index serves the search after the peel
        enc.execute("SET enable_seqscan = off")
        plan = "\n".join(
            r[0] for r in enc.execute(r"EXPLAIN SELECT id FROM doc WHERE body ~ '\mkey\M'")
        )
        assert "Bitmap Index Scan" in plan, plan
        # writes after the peel are searchable
        for conn in (plain, enc):
            conn.execute("INSERT INTO doc VALUES (1000, 'a fresh onion', NULL)")
        expected = plain.execute(query, (r"\monion\M",)).fetchall()
        assert enc.execute(query, (r"\monion\M",)).fetchall() == expected
    finally:
        plain.close()
        enc.close()


@pytest.mark.parametrize("before", ["SELECT count(*) FROM other", "INSERT INTO other VALUES (1)"])
def test_stale_client_writes_after_the_search_peel(
    new_database: Any, master_key: Any, before: str
) -> None:
    """A client whose metadata predates the peel writes at the new layer: its
    transaction, which had only read, started again by the client (dbapi/restart.py); one
    that had written refused with a retryable error, then retried by the application."""
    dsn = new_database("sstale")
    enc = adaptive_client.connect(dsn, master_key=master_key, autocommit=True, config=STORED)
    stale = adaptive_client.connect(dsn, master_key=master_key)
    try:
        enc.execute("CREATE TABLE note (id integer, body text)")
        enc.execute("CREATE TABLE other (id integer)")
        enc.execute("INSERT INTO note VALUES (1, 'red fox')")
        stale.execute(before)  # cached, in a transaction
        assert enc.execute(r"SELECT id FROM note WHERE body ~ '\mfox\M'").fetchall() == [(1,)]
        if before.startswith("INSERT"):
            with pytest.raises(RetryableError):
                stale.execute("INSERT INTO note VALUES (2, 'grey fox')")
            stale.rollback()
        stale.execute("INSERT INTO note VALUES (2, 'grey fox')")
        stale.commit()
        got = enc.execute(r"SELECT id FROM note WHERE body ~ '\mfox\M' ORDER BY id").fetchall()
        assert got == [(1,), (2,)]
    finally:
        enc.close()
        stale.close()


def test_one_layer_search_onion_keeps_working(new_database: Any, master_key: Any) -> None:
    """Tables whose metadata records the one-layer Search stack (the earlier format, and
    what `start = { Search = "SEARCH" }` gives) store tokens from the first INSERT."""
    dsn = new_database("sold")
    cfg = {"tables": {"note": {"body": {"start": {"Search": "SEARCH"}}}}}
    enc = adaptive_client.connect(dsn, master_key=master_key, config=cfg, autocommit=True)
    try:
        enc.execute("CREATE TABLE note (id integer, body text)")
        # the sealed metadata of a table of the earlier format: the one-layer stack
        meta = enc.catalog.table("note")
        meta.column("body").onions[Onion.SEARCH].stack = ("SEARCH",)
        with enc.control.transaction():
            enc.catalog.write_table(enc.control, meta, new=False)
        with adaptive_client.connect(dsn, master_key=master_key, autocommit=True) as fresh:
            oc = fresh.catalog.table("note").column("body").onions[Onion.SEARCH]
            assert (oc.stack, oc.layer) == (("SEARCH",), "SEARCH")
            fresh.execute("INSERT INTO note VALUES (1, 'red fox'), (2, 'red hen')")
            assert _elements(_stored(dsn, fresh, "note", "body")).most_common(1)[0][1] == 2
            q = r"SELECT id FROM note WHERE body ~ '\mred\M' ORDER BY id"
            assert fresh.execute(q).fetchall() == [(1,), (2,)]
            searched = fresh.control.execute(
                "SELECT count(*) FROM adaptive.peel_log WHERE onion = 'Search'"
            ).fetchone()
            assert searched == (0,)
    finally:
        enc.close()
