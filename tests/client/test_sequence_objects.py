"""Sequences created on their own and columns defaulting to ``nextval('name'::regclass)``,
as a dump writes a serial column: the same values, errors and dependencies as PostgreSQL,
and nothing of the sequence's name on the server."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted

STEPS = [
    "CREATE SEQUENCE public.actor_actor_id_seq START WITH 1 INCREMENT BY 1 NO MINVALUE "
    "NO MAXVALUE CACHE 1",
    "CREATE TABLE public.actor (actor_id integer DEFAULT "
    "nextval('public.actor_actor_id_seq'::regclass) NOT NULL, name text NOT NULL)",
    "INSERT INTO actor (name) VALUES ('a'), ('b') RETURNING actor_id",
    "SELECT nextval('actor_actor_id_seq'), currval('public.actor_actor_id_seq')",
    "INSERT INTO actor (name) VALUES ('c') RETURNING actor_id, name",
    "SELECT actor_id, name FROM actor ORDER BY actor_id",
    "CREATE SEQUENCE actor_actor_id_seq",
    "CREATE SEQUENCE IF NOT EXISTS actor_actor_id_seq",
    "CREATE SEQUENCE actor",
    "DROP SEQUENCE actor_actor_id_seq",
    "DROP SEQUENCE actor",
    "CREATE SEQUENCE short AS smallint START 2 MAXVALUE 4",
    "SELECT nextval('short'), nextval('short'), nextval('short')",
    "SELECT nextval('short')",
    "CREATE SEQUENCE down INCREMENT BY -5 MINVALUE -12 MAXVALUE 0 START 0",
    "SELECT nextval('down'), nextval('down'), nextval('down')",
    "SELECT nextval('down')",
    "CREATE SEQUENCE bad AS text",
    "CREATE SEQUENCE bad AS nosuchtype",
    "CREATE TABLE other (id integer DEFAULT nextval('nosuch'::regclass))",
    "CREATE TABLE shared (id bigint DEFAULT nextval('actor_actor_id_seq') PRIMARY KEY)",
    "INSERT INTO shared DEFAULT VALUES RETURNING id",
    "DROP TABLE actor",
    "DROP SEQUENCE actor_actor_id_seq",
    "DROP TABLE shared",
    "DROP SEQUENCE actor_actor_id_seq",
    "DROP SEQUENCE IF EXISTS actor_actor_id_seq",
    "SELECT nextval('actor_actor_id_seq')",
    # setval sets the session's current value (currval, lastval); a dropped sequence's
    # is gone; a descending sequence from its default start draws (was 22003)
    "CREATE SEQUENCE s",
    "SELECT nextval('s')",
    "SELECT setval('s', 99)",
    "SELECT lastval(), currval('s')",
    "SELECT setval('s', 7, false)",
    "SELECT lastval(), currval('s'), nextval('s')",
    "DROP SEQUENCE s",
    "SELECT lastval()",
    "CREATE SEQUENCE s4 INCREMENT BY -1",
    "SELECT nextval('s4'), nextval('s4')",
    # a serial column's own sequence is its default's: not dropped alone (2BP01)
    "CREATE TABLE ser (id serial, v text)",
    "DROP SEQUENCE ser_id_seq",
    "INSERT INTO ser (v) VALUES ('x') RETURNING id",
    "DROP TABLE ser",
    "SELECT lastval()",
    # serial2/serial4/serial8: the serial types' other names (were 42704)
    "CREATE TABLE st2 (f1 text, f4 serial2, f5 SERIAL4, f6 serial8)",
    "INSERT INTO st2 (f1) VALUES ('x'), ('y') RETURNING f4, f5, f6",
    # ALTER SEQUENCE of its numbers and keywords (was refused)
    "CREATE SEQUENCE a1",
    "SELECT nextval('a1')",
    "ALTER SEQUENCE a1 RESTART WITH 100",
    "SELECT nextval('a1'), nextval('a1')",
    "ALTER SEQUENCE a1 RESTART",
    "SELECT nextval('a1')",
    "ALTER SEQUENCE IF EXISTS nosuch RESTART",
    "ALTER SEQUENCE nosuch RESTART",
    "ALTER SEQUENCE a1 MAXVALUE 5 MINVALUE 10",
    "ALTER SEQUENCE a1 AS smallint MAXVALUE 30000 RESTART WITH 7 NO CYCLE CACHE 1",
    "SELECT nextval('a1')",
    "CREATE TABLE ra (id serial, v text)",
    "INSERT INTO ra (v) VALUES ('a') RETURNING id",
    "ALTER SEQUENCE ra_id_seq RESTART WITH 50",
    "INSERT INTO ra (v) VALUES ('b') RETURNING id",
    # an alteration applies from the last value handed out, not after the values the
    # session drew ahead (were 26, then a MAXVALUE below them refused, then no 2200H)
    "CREATE SEQUENCE inc1",
    "SELECT nextval('inc1')",
    "ALTER SEQUENCE inc1 INCREMENT BY 10",
    "SELECT nextval('inc1'), nextval('inc1')",
    "ALTER SEQUENCE inc1 MAXVALUE 35",
    "SELECT nextval('inc1')",
    "SELECT nextval('inc1')",
    "ALTER SEQUENCE inc1 CYCLE",
    "SELECT nextval('inc1')",
    "CREATE TABLE inc2 (id serial PRIMARY KEY, v int)",
    "INSERT INTO inc2 (v) VALUES (1), (2)",
    "ALTER SEQUENCE inc2_id_seq INCREMENT BY 5",
    "INSERT INTO inc2 (v) VALUES (3), (4) RETURNING id",
    "ALTER SEQUENCE inc2_id_seq RESTART",
    "INSERT INTO inc2 (v) VALUES (5)",
    "CREATE TABLE inc3 (id int GENERATED ALWAYS AS IDENTITY, v int)",
    "INSERT INTO inc3 (v) VALUES (1) RETURNING id",
    "ALTER TABLE inc3 ALTER COLUMN id SET INCREMENT BY 100",
    "INSERT INTO inc3 (v) VALUES (2) RETURNING id",
    # RENAME TO (was refused): the columns drawing from it follow; currval is the
    # sequence's, whatever its name
    "CREATE SEQUENCE rn1",
    "CREATE TABLE rn_t (id bigint DEFAULT nextval('rn1'::regclass), v text)",
    "INSERT INTO rn_t (v) VALUES ('a') RETURNING id",
    "ALTER SEQUENCE rn1 RENAME TO rn2",
    "SELECT currval('rn2')",
    "SELECT nextval('rn1')",
    "INSERT INTO rn_t (v) VALUES ('b') RETURNING id",
    "SELECT nextval('rn2')",
    "ALTER SEQUENCE rn2 RENAME TO rn_t",
    "ALTER SEQUENCE IF EXISTS rn1 RENAME TO rn3",
    "ALTER SEQUENCE rn1 RENAME TO rn3",
    "CREATE TABLE rn_s (id serial, v text)",
    "ALTER SEQUENCE rn_s_id_seq RENAME TO rn_s_renamed",
    "INSERT INTO rn_s (v) VALUES ('a') RETURNING id",
    "SELECT pg_get_serial_sequence('rn_s', 'id'), currval('rn_s_renamed')",
    "SELECT currval('rn_s_id_seq')",
    "BEGIN",
    "ALTER SEQUENCE rn2 RENAME TO rn4",
    "SELECT nextval('rn4')",
    "ROLLBACK",
    "SELECT nextval('rn4')",
    "SELECT currval('rn2')",
    "INSERT INTO rn_t (v) VALUES ('c') RETURNING id",
    "DROP TABLE rn_t",
    "DROP SEQUENCE rn2",
    # RETURNING t.* of a table written under an alias: 42P01 before a value is drawn
    "CREATE TABLE foo (f1 serial, f2 text, f3 int DEFAULT 42)",
    "INSERT INTO foo AS bar DEFAULT VALUES RETURNING *",
    "INSERT INTO foo AS bar DEFAULT VALUES RETURNING foo.*",
    "INSERT INTO foo AS bar DEFAULT VALUES RETURNING nosuch.*",
    "INSERT INTO foo AS bar DEFAULT VALUES RETURNING bar.*",
]


KEY = MasterKey.generate()


def _outcome(conn: Any, sql: str) -> tuple[str, Any]:
    try:
        cur = conn.execute(sql)
        return ("ok", cur.fetchall() if cur.description else None)
    except psycopg.Error as exc:
        return ("error", exc.sqlstate)


@pytest.fixture(scope="module")
def pair(new_database: Callable[..., str]) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, KEY, "seqobj", {}, [], {}) as both:
        yield both


def test_sequences_as_postgresql(pair: Pair) -> None:
    plain, enc = pair
    outcomes = []
    for sql in STEPS:
        expected, got = _outcome(plain, sql), _outcome(enc, sql)
        assert got == expected, f"{sql}: PostgreSQL {expected}, the client {got}"
        outcomes.append(expected[0])
    assert outcomes.count("error") >= 8  # (the steps meant to fail did)


def test_the_sequence_name_stays_off_the_server(pair: Pair) -> None:
    _, enc = pair
    enc.execute("CREATE SEQUENCE invoice_number_seq")
    enc.execute("SELECT nextval('invoice_number_seq')")
    enc.execute("ALTER SEQUENCE invoice_number_seq RENAME TO receipt_number_seq")
    assert enc.execute("SELECT nextval('receipt_number_seq')").fetchone() == (2,)
    names = enc.pg.execute("SELECT relname FROM pg_class WHERE relkind = 'S'").fetchall()
    assert names and not any("invoice" in n or "receipt" in n for (n,) in names)


def test_alter_sequence_beyond_its_numbers_is_refused(pair: Pair) -> None:
    plain, enc = pair
    for conn in pair:
        conn.execute("CREATE SEQUENCE IF NOT EXISTS own1")
    for sql in ("ALTER SEQUENCE own1 OWNED BY NONE", "ALTER SEQUENCE own1 SET SCHEMA public"):
        assert _outcome(plain, sql)[0] == "ok"
        assert _outcome(enc, sql) == ("error", "0A000")


def test_an_alteration_never_hands_a_value_out_twice(pair: Pair) -> None:
    """Two sessions drawing from one sequence: the values one drew ahead go back to the
    sequence at its ALTER only where the other did not draw after them, so no value is
    handed out twice, whichever session alters it."""
    _, first = pair
    second = adaptive_client.connect(first.pg.info.dsn, master_key=KEY.hex(), autocommit=True)
    try:
        first.execute("CREATE SEQUENCE twice")
        seen = [first.execute("SELECT nextval('twice')").fetchone()[0]]
        seen.append(second.execute("SELECT nextval('twice')").fetchone()[0])
        first.execute("ALTER SEQUENCE twice INCREMENT BY 3")  # (the second drew after)
        after = [first.execute("SELECT nextval('twice')").fetchone()[0] for _ in range(8)]
        assert all(b - a == 3 for a, b in itertools.pairwise(after)), after
        seen += after
        seen += [second.execute("SELECT nextval('twice')").fetchone()[0] for _ in range(3)]
        second.execute("ALTER SEQUENCE twice INCREMENT BY 2")
        for conn in (second, first, second, first):
            seen.append(conn.execute("SELECT nextval('twice')").fetchone()[0])
        assert len(set(seen)) == len(seen), seen
    finally:
        second.close()


def test_an_alteration_holds_other_sessions_draws_until_it_commits(pair: Pair) -> None:
    """The values given back at an ALTER SEQUENCE inside a transaction: another
    session's nextval waits for that transaction (in another thread, which the wait
    does not block: this one keeps running statements), then draws after the last value
    the first handed out, by the new increment."""
    _, first = pair
    second = adaptive_client.connect(first.pg.info.dsn, master_key=KEY.hex(), autocommit=True)
    drawn: list[int] = []
    try:
        first.execute("CREATE SEQUENCE held")
        second.execute("SELECT 1")  # (connected before the ALTER's lock is taken)
        first.execute("BEGIN")
        handed = first.execute("SELECT nextval('held')").fetchone()[0]
        first.execute("ALTER SEQUENCE held INCREMENT BY 5")
        thread = threading.Thread(
            target=lambda: drawn.append(second.execute("SELECT nextval('held')").fetchone()[0]),
            daemon=True,
        )
        thread.start()
        thread.join(0.5)
        assert thread.is_alive() and not drawn  # (it waits for the first's transaction)
        assert first.execute("SELECT 2").fetchone() == (2,)  # (and this thread runs)
        first.execute("COMMIT")
        thread.join(30)  # (the watchdog: a wait that never ends fails here)
        assert not thread.is_alive()
        assert drawn == [handed + 5]
    finally:
        second.close()


def test_a_rolled_back_drop_keeps_the_sessions_values(pair: Pair) -> None:
    """DROP TABLE of a serial column's table, rolled back: the next value follows the
    last one (the values drawn ahead were not thrown away), and currval is kept."""
    results = []
    for conn in pair:
        conn.execute("CREATE TABLE kept_ser (id serial, v text)")
        conn.execute("INSERT INTO kept_ser (v) VALUES ('a')")
        conn.execute("BEGIN")
        conn.execute("DROP TABLE kept_ser")
        conn.execute("ROLLBACK")
        got = [_outcome(conn, "SELECT currval('kept_ser_id_seq')")]
        got.append(_outcome(conn, "INSERT INTO kept_ser (v) VALUES ('b') RETURNING id"))
        results.append(got)
    assert results[0] == results[1] == [("ok", [(1,)]), ("ok", [(2,)])]
