"""Schema features beyond the differential suite (tests/app): what the provider is told
about foreign keys, refusals at DDL time, atomic schema changes, sequences with COPY,
executemany and rolled-back tables."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.admin.controls import foreign_key_report, layers_report
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.catalog.metadata import Catalog
from adaptive_client.catalog.onions import Onion

BLOG = """
CREATE TABLE author (id serial PRIMARY KEY, name text NOT NULL);
CREATE TABLE post (
    id bigserial PRIMARY KEY,
    author_id integer NOT NULL REFERENCES author (id) ON DELETE CASCADE,
    title text
);
CREATE TABLE comment (
    id bigserial PRIMARY KEY,
    post_id bigint REFERENCES post (id) ON DELETE SET NULL,
    author_id integer REFERENCES author (id)
);
"""


@pytest.fixture
def enc(new_database: Callable[..., str], master_key: MasterKey) -> Any:
    conn = adaptive_client.connect(new_database("schema"), master_key=master_key, autocommit=True)
    yield conn
    conn.close()


def _server_tables(conn: Any) -> set[str]:
    rows = conn.control.execute(
        "SELECT relname FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace"
    ).fetchall()
    return {r[0] for r in rows}


def test_layers_show_each_foreign_keys_implied_join_group(enc: Any, master_key: MasterKey) -> None:
    enc.execute(BLOG)
    catalog = Catalog.open(enc.control, master_key)
    report = {(name, cols, ref): learns for name, cols, ref, learns in foreign_key_report(catalog)}
    group = "{author.id, comment.author_id, post.author_id}"
    learns = report[("post_author_id_fkey", "post (author_id)", "author (id)")]
    assert group in learns and "equal keys" in learns
    rows = layers_report(enc.control, master_key)
    eq = {(r.table, r.column): r for r in rows if r.onion == "Eq"}
    assert eq[("post", "author_id")].layer == "DET"  # at DET from the first insert
    assert group in eq[("post", "author_id")].provider_learns
    assert group in eq[("author", "id")].provider_learns
    assert "join group" not in eq[("post", "title")].provider_learns


def test_a_check_the_server_cannot_enforce_is_refused_by_name_and_nothing_is_created(
    enc: Any,
) -> None:
    before = _server_tables(enc)
    with pytest.raises(adaptive_client.UnsupportedQuery, match='"t_name_check"'):
        enc.execute("CREATE TABLE t (id int PRIMARY KEY, name text CHECK (length(name) > 2))")
    with pytest.raises(adaptive_client.UnsupportedQuery, match='"long_enough"'):
        enc.execute(
            "CREATE TABLE t (id int, name text, CONSTRAINT long_enough CHECK (length(name) > 2))"
        )
    assert _server_tables(enc) == before
    assert not enc.catalog.has_table("t")
    enc.execute("CREATE TABLE t (id int PRIMARY KEY, n int CHECK (n > 0))")  # enforceable
    with pytest.raises(psycopg.errors.CheckViolation, match='"t_n_check"'):
        enc.execute("INSERT INTO t VALUES (1, 0)")


def test_a_failed_schema_change_leaves_metadata_and_table_as_they_were(enc: Any) -> None:
    enc.execute(BLOG)
    enc.execute("INSERT INTO author (name) VALUES ('a'), ('b')")
    enc.execute("INSERT INTO post (author_id, title) VALUES (1, 'x'), (2, 'y')")
    enc.execute("ALTER TABLE post ADD COLUMN editor integer")
    enc.execute("UPDATE post SET editor = 7 WHERE id = 1")  # no author 7
    before = enc.catalog.table("post").column("editor").onions
    keys = {o: oc.keys for o, oc in before.items()}
    with pytest.raises(psycopg.errors.ForeignKeyViolation) as err:
        enc.execute(
            "ALTER TABLE post ADD CONSTRAINT ed FOREIGN KEY (editor) REFERENCES author (id)"
        )
    assert "\\x" not in str(err.value)  # no ciphertext in the message
    after = enc.catalog.table("post")
    assert not after.foreign_keys[1:]  # only author_id's
    assert {o: oc.keys for o, oc in after.column("editor").onions.items()} == keys
    assert enc.execute("SELECT editor FROM post ORDER BY id").fetchall() == [(7,), (None,)]
    with pytest.raises(psycopg.errors.UndefinedColumn):
        enc.execute("ALTER TABLE post DROP COLUMN nope")
    assert enc.execute("SELECT count(*) FROM post WHERE editor = 7").fetchone() == (1,)


def test_copy_and_executemany_draw_serial_values(enc: Any) -> None:
    enc.execute(BLOG)
    enc.cursor().executemany(
        "INSERT INTO author (name) VALUES (%s)", [(f"n{i}",) for i in range(40)]
    )
    with enc.cursor() as cur, cur.copy("COPY author (name) FROM STDIN") as copy:
        for i in range(25):
            copy.write_row((f"c{i}",))
    ids = [r[0] for r in enc.execute("SELECT id FROM author ORDER BY id").fetchall()]
    assert len(ids) == len(set(ids)) == 65
    assert ids[:40] == list(range(1, 41))  # one connection: PostgreSQL's own numbers
    assert enc.execute("SELECT currval('author_id_seq')").fetchone() == (40,)


def test_a_rolled_back_table_and_its_sequence_start_over(enc: Any) -> None:
    enc.autocommit = False
    enc.execute("CREATE TABLE t (id serial PRIMARY KEY, v text)")
    enc.execute("INSERT INTO t (v) VALUES ('a'), ('b')")
    enc.rollback()
    enc.execute("CREATE TABLE t (id serial PRIMARY KEY, v text)")
    assert enc.execute("INSERT INTO t (v) VALUES ('c') RETURNING id").fetchall() == [(1,)]
    enc.commit()


def test_identity_options_and_always(enc: Any) -> None:
    enc.execute(
        "CREATE TABLE t (id int GENERATED ALWAYS AS IDENTITY (START WITH 10 INCREMENT BY 5), v text)"
    )
    got = enc.execute("INSERT INTO t (v) VALUES ('a'), ('b') RETURNING id").fetchall()
    assert got == [(10,), (15,)]
    with pytest.raises(psycopg.errors.GeneratedAlways):
        enc.execute("INSERT INTO t (id, v) VALUES (1, 'c')")
    assert enc.execute("SELECT count(*) FROM t").fetchone() == (2,)


def test_currval_before_nextval_is_postgresql_s_error(enc: Any) -> None:
    enc.execute("CREATE TABLE t (id serial PRIMARY KEY)")
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState):
        enc.execute("SELECT currval('t_id_seq')")
    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState):
        enc.execute("SELECT lastval()")


def test_a_foreign_key_group_moved_by_a_join_adjustment_keeps_its_constraints(
    new_database: Callable[..., str], master_key: MasterKey
) -> None:
    """A join of a foreign-key column with an unrelated one re-keys the whole key group
    (the referenced and referencing columns together): the foreign key, its ON DELETE
    SET NULL and a CHECK with a ciphertext constant still hold after it."""
    plain = psycopg.connect(new_database("fkjoin_plain"), autocommit=True)
    enc = adaptive_client.connect(new_database("fkjoin"), master_key=master_key, autocommit=True)
    ddl = """
    CREATE TABLE author (id serial PRIMARY KEY, name text);
    CREATE TABLE post (
        id serial PRIMARY KEY,
        author_id integer REFERENCES author (id) ON DELETE SET NULL CHECK (author_id <> 0),
        title text
    );
    CREATE TABLE category (id serial PRIMARY KEY, name text);
    CREATE TABLE item (id serial PRIMARY KEY, category_id integer REFERENCES category (id), what text);
    """
    for c in (plain, enc):
        c.execute(ddl)
        c.execute("INSERT INTO author (name) VALUES ('a'), ('b'), ('c')")
        c.execute(
            "INSERT INTO post (author_id, title) VALUES (1, 'p1'), (2, 'p2'), (1, 'p3'), (3, 'p4')"
        )
        c.execute("INSERT INTO category (name) VALUES ('c1'), ('c2'), ('c3'), ('c4'), ('c5')")
        c.cursor().executemany(
            "INSERT INTO item (category_id, what) VALUES (%s, %s)",
            [(1 + i % 5, f"w{i}") for i in range(400)],
        )
    enc.control.execute("ANALYZE")  # the items' group is the larger: the authors' moves
    before = bytes(enc.catalog.table("author").column("id").onions[Onion.EQ].keys["DET"])
    query = (
        "SELECT p.title, count(*) FROM post p JOIN item i ON i.category_id = p.author_id GROUP BY 1"
    )
    assert sorted(enc.execute(query).fetchall()) == sorted(plain.execute(query).fetchall())
    author_key = enc.catalog.table("author").column("id").onions
    assert author_key[Onion.EQ].keys["DET"] != before  # it moved
    assert (
        enc.catalog.table("post").column("author_id").onions[Onion.EQ].keys["DET"]
        == author_key[Onion.EQ].keys["DET"]
        == enc.catalog.table("item").column("category_id").onions[Onion.EQ].keys["DET"]
    )
    for sql, error in [
        ("INSERT INTO post (author_id, title) VALUES (9, 'x')", psycopg.errors.ForeignKeyViolation),
        ("INSERT INTO post (author_id, title) VALUES (0, 'x')", psycopg.errors.CheckViolation),
    ]:
        with pytest.raises(error):
            enc.execute(sql)
    for c in (plain, enc):
        c.execute("DELETE FROM author WHERE id = 1")
    for q in [
        "SELECT id, author_id, title FROM post ORDER BY id",
        "SELECT count(*) FROM post WHERE author_id > 1",
        "SELECT p.title, a.name FROM post p JOIN author a ON a.id = p.author_id ORDER BY 1",
    ]:
        assert enc.execute(q).fetchall() == plain.execute(q).fetchall(), q
    plain.close()
    enc.close()


def test_storage_clauses_reach_the_stored_table_and_placement_clauses_are_refused(
    enc: Any,
) -> None:
    """UNLOGGED, WITH (storage parameters) and TABLESPACE are carried to the server's
    table as written (a bad parameter is PostgreSQL's own error); PARTITION BY, PARTITION
    OF and INHERITS, which place rows by a column's value, are refused by name and
    nothing is created -- never a table made without them."""
    enc.execute(
        "CREATE UNLOGGED TABLE u (a integer PRIMARY KEY, b text) "
        "WITH (fillfactor = 70, autovacuum_enabled = false) TABLESPACE pg_default"
    )
    enc.execute("INSERT INTO u VALUES (1, 'x')")
    assert enc.execute("SELECT b FROM u").fetchall() == [("x",)]
    stored = enc.control.execute(
        "SELECT relpersistence, reloptions FROM pg_class WHERE relname = %s",
        (enc.catalog.table("u").anon,),
    ).fetchone()
    assert stored == ("u", ["fillfactor=70", "autovacuum_enabled=false"])
    with pytest.raises(psycopg.errors.InvalidParameterValue):
        enc.execute("CREATE TABLE w (a integer) WITH (fillfactor = 5)")
    before = _server_tables(enc)
    for ddl, clause in [
        ("CREATE TABLE p (id integer, k text) PARTITION BY LIST (k)", "PARTITION BY"),
        ("CREATE TABLE p_a PARTITION OF u FOR VALUES IN (1)", "PARTITION OF"),
        ("CREATE TABLE i (c integer) INHERITS (u)", "INHERITS"),
    ]:
        with pytest.raises(adaptive_client.NotSupportedError, match=clause):
            enc.execute(ddl)
    assert _server_tables(enc) == before
    assert not enc.catalog.has_table("p") and not enc.catalog.has_table("i")
