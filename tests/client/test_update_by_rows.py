"""UPDATEs whose values or rows need the client (a correlated subquery in SET, a
comparison with a subquery's value, upper(), numeric arithmetic on an integer column):
run as a read and a write per row, compared with plain PostgreSQL -- rowcount, the
rows, the errors and what a rollback leaves."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.errors import UnsupportedQuery

SCHEMA = [
    "CREATE TABLE item (id integer PRIMARY KEY, name text, qty integer, price numeric(8,2), "
    "grp integer)",
    "CREATE TABLE grp (id integer PRIMARY KEY, label text, bonus integer)",
    "CREATE TABLE loose (a integer, b text)",
]
ROWS = [
    "INSERT INTO item VALUES (1, 'apple', 10, 1.50, 1), (2, 'pear', 20, 2.25, 2), "
    "(3, 'fig', 35, 0.10, 1), (4, 'kiwi', NULL, 3.00, NULL)",
    "INSERT INTO grp VALUES (1, 'one', 5), (2, 'two', 7)",
    "INSERT INTO loose VALUES (1, 'x')",
]
UPDATES: list[tuple[str, tuple[Any, ...] | None]] = [
    ("UPDATE item SET name = upper(name)", None),
    ("UPDATE item SET qty = (SELECT count(*) FROM grp g WHERE g.id = item.grp)", None),
    ("UPDATE item SET qty = qty * 1.1 WHERE grp = (SELECT id FROM grp WHERE label = %s)", ("one",)),
    ("UPDATE item SET price = price * %s, name = lower(name) || '!' WHERE qty > %s", (2, 15)),
    ("UPDATE item i SET qty = i.qty + (SELECT bonus FROM grp WHERE grp.id = i.grp)", None),
    ("UPDATE item SET name = upper(name) WHERE id IN (SELECT id FROM item WHERE qty < 30)", None),
    ("UPDATE item SET name = upper(name) WHERE grp = 99", None),
    ("UPDATE item SET qty = qty * 100000000 WHERE name = upper(name) OR id = 2", None),
    # SET c = DEFAULT beside a value the client computes (was refused)
    ("UPDATE item SET name = upper(name), qty = DEFAULT WHERE id < 3", None),
    # a DELETE whose predicate needs the client: by its keys (was refused)
    ("DELETE FROM item WHERE lower(name) || 'x' = 'figx' OR qty > 30", None),
]

# RETURNING items the server cannot compute over ciphertexts: computed by the read, over
# the row as written (UPDATE) or as it was (DELETE); each compared with PostgreSQL's rows,
# names and errors, then the table
RETURNING: list[tuple[str, tuple[Any, ...] | None]] = [
    ("UPDATE item SET name = name || %s RETURNING id, name, length(name)", ("!",)),
    ("UPDATE item SET qty = qty + 1, name = upper(name) RETURNING *, least(id, qty) AS l", None),
    ("UPDATE item i SET name = lower(name) WHERE id > 2 RETURNING i.*, upper(i.name)", None),
    ("UPDATE item SET name = upper(name) WHERE id = 99 RETURNING length(name)", None),
    (
        "UPDATE item SET name = upper(name) RETURNING id, "
        "(SELECT label FROM grp WHERE grp.id = item.grp) AS g, length(name) AS n",
        None,
    ),
    ("DELETE FROM item WHERE id > 2 RETURNING qty, name, id, least(id, qty)", None),
    ("DELETE FROM item WHERE length(name) > 3 RETURNING *, length(name) AS n", None),
    ("DELETE FROM item WHERE id < 3 RETURNING 10 / (id - id)", None),
]


@pytest.fixture()
def pair(new_database: Callable[..., str]) -> Iterator[tuple[Any, Any]]:
    plain = psycopg.connect(new_database("updplain"))
    enc = adaptive_client.connect(new_database("updenc"), master_key=MasterKey.generate())
    for conn in (plain, enc):
        for sql in SCHEMA + ROWS:
            conn.execute(sql)
        conn.commit()
    yield plain, enc
    plain.close()
    enc.close()


def _apply(conn: Any, sql: str, params: tuple[Any, ...] | None) -> tuple[Any, ...]:
    try:
        outcome: Any = conn.execute(sql, params).rowcount
    except psycopg.Error as exc:
        outcome = exc.sqlstate
    conn.rollback() if outcome is None or isinstance(outcome, str) else conn.commit()
    table = conn.execute("SELECT id, name, qty, price, grp FROM item ORDER BY id").fetchall()
    conn.commit()
    return outcome, table


@pytest.mark.parametrize(("sql", "params"), UPDATES)
def test_update_as_postgresql(pair: tuple[Any, Any], sql: str, params: Any) -> None:
    plain, enc = pair
    expected = _apply(plain, sql, params)
    assert _apply(enc, sql, params) == expected


@pytest.mark.parametrize(("sql", "params"), RETURNING)
def test_returning_as_postgresql(pair: tuple[Any, Any], sql: str, params: Any) -> None:
    outcomes = []
    for conn in pair:
        try:
            cur = conn.execute(sql, params)
            got: Any = (cur.fetchall(), [d.name for d in cur.description])
            conn.commit()
        except psycopg.Error as exc:
            got = exc.sqlstate
            conn.rollback()
        table = conn.execute("SELECT id, name, qty, price, grp FROM item ORDER BY id").fetchall()
        conn.commit()
        outcomes.append((got, table))
    assert outcomes[1] == outcomes[0]


def test_autocommit_executemany_and_rollback(pair: tuple[Any, Any]) -> None:
    plain, enc = pair
    sql = "UPDATE item SET name = upper(name) || %s WHERE id = (SELECT min(id) FROM item) + %s"
    for conn in (plain, enc):
        conn.autocommit = True
        conn.cursor().executemany(sql, [("-a", 0), ("-b", 1)])
        conn.autocommit = False
        conn.execute("UPDATE item SET name = upper(name) WHERE id > 2")
        conn.rollback()  # the row-by-row writes go with the transaction
    q = "SELECT id, name FROM item ORDER BY id"
    assert enc.execute(q).fetchall() == plain.execute(q).fetchall()
    assert enc.execute(q).fetchall()[0][1] == "APPLE-a"


def test_a_table_without_a_key_keeps_the_refusal(pair: tuple[Any, Any]) -> None:
    _, enc = pair
    with pytest.raises(UnsupportedQuery):
        enc.execute("UPDATE loose SET b = upper(b)")


def test_no_update_is_lost_to_a_concurrent_writer(new_database: Callable[..., str]) -> None:
    """Another connection's UPDATE of the same rows waits for the row-by-row UPDATE's
    transaction, then applies on top of it: both effects stay, as in PostgreSQL."""
    key = MasterKey.generate()
    finals = []
    for name, connect in (
        ("raceplain", psycopg.connect),
        ("raceenc", lambda dsn: adaptive_client.connect(dsn, master_key=key)),
    ):
        dsn = new_database(name)
        first, second = connect(dsn), connect(dsn)
        for sql in SCHEMA + ROWS:
            first.execute(sql)
        first.commit()
        second.execute("UPDATE item SET qty = qty + 1 WHERE id = 1")  # (prepared, peeled)
        second.rollback()
        first.execute(
            "UPDATE item i SET qty = i.qty + (SELECT bonus FROM grp WHERE grp.id = i.grp)"
        )
        done = threading.Event()

        def write(second: Any = second, done: threading.Event = done) -> None:
            second.execute("UPDATE item SET qty = qty + 1 WHERE id = 1")
            second.commit()
            done.set()

        thread = threading.Thread(target=write, daemon=True)
        thread.start()
        assert not done.wait(0.5)  # it waits for the first transaction
        first.commit()
        thread.join(30)
        assert done.is_set()
        finals.append(first.execute("SELECT id, qty FROM item ORDER BY id").fetchall())
        first.close()
        second.close()
    assert finals[0] == finals[1]
    assert finals[1][0] == (1, 16)  # 10, + 5 by the first, + 1 by the second
