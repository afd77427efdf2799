"""UPDATE x = x + k (read, compute on the client, write back) and the rows it may reuse.

A row this transaction already read by primary key -- locked with SELECT ... FOR UPDATE,
or, under REPEATABLE READ / SERIALIZABLE, read from the transaction's snapshot from a
table the session updates so -- serves the read of the read-modify-write, saving a round
trip.  These tests show the saving is
taken only where it is correct, and that a concurrent change still ends in the same
serialization failure the plain UPDATE would raise, never in a lost update.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.dbapi import server_errors
from adaptive_client.stats import STATS

RR = psycopg.IsolationLevel.REPEATABLE_READ
RC = psycopg.IsolationLevel.READ_COMMITTED


@pytest.fixture()
def accounts(new_database: Any, master_key: Any) -> Iterator[tuple[str, Any]]:
    dsn = new_database("rmw")
    with adaptive_client.connect(dsn, master_key=master_key, autocommit=True) as setup:
        setup.execute("CREATE TABLE acct (id integer PRIMARY KEY, name text, bal numeric(12,2))")
        setup.execute("INSERT INTO acct VALUES (1, 'a', 100.00), (2, 'b', 200.00)")
        setup.execute("SELECT id FROM acct WHERE id = 1")  # peels Eq(id) before the tests
    yield dsn, master_key


def _client(dsn: str, key: Any, level: psycopg.IsolationLevel) -> Any:
    """A connection at ``level`` that has updated ``acct`` by read-modify-write once
    (rolled back): its reads by key of ``acct`` keep their rows from then on."""
    conn = adaptive_client.connect(dsn, master_key=key)
    conn.pg.isolation_level = level
    conn.execute("UPDATE acct SET bal = bal + 0 WHERE id = 1")
    conn.rollback()
    return conn


def test_reads_keep_rows_only_of_tables_the_session_updates_so(
    accounts: tuple[str, Any],
) -> None:
    """A read by key fetches the whole row only for a table this session has updated by
    read-modify-write: until its first such UPDATE the read fetches what it names, and
    that UPDATE reads the row itself."""
    dsn, key = accounts
    conn = adaptive_client.connect(dsn, master_key=key)
    conn.pg.isolation_level = RR
    before = STATS.locked_reuse
    assert conn.execute("SELECT name FROM acct WHERE id = %s", (1,)).fetchone() == ("a",)
    assert conn.locked_rows == {}
    conn.execute("UPDATE acct SET bal = bal + %s WHERE id = %s", (5, 1))
    assert STATS.locked_reuse == before
    assert conn.kept_rows().columns("acct") == {"bal"}  # (what such an UPDATE reads)
    assert conn.execute("SELECT name FROM acct WHERE id = %s", (2,)).fetchone() == ("b",)
    assert len(conn.locked_rows) == 1
    conn.execute("UPDATE acct SET bal = bal + %s WHERE id = %s", (5, 2))
    assert STATS.locked_reuse == before + 1
    # the read's repeat, made before the rule changed, is made again under the new one
    assert conn.execute("SELECT name FROM acct WHERE id = %s", (2,)).fetchone() == ("b",)
    assert conn.repeats["SELECT name FROM acct WHERE id = %s"].current(conn)
    conn.commit()
    conn.close()
    assert (_balance(dsn, key, 1), _balance(dsn, key, 2)) == (105, 205)


def test_an_update_of_another_table_keeps_the_plans(accounts: tuple[str, Any]) -> None:
    """Learning that the session updates one table by read-modify-write changes only
    the plans that read that table's rows by key: the others stay compiled and their
    repeats current (an application's first transactions compiled every statement
    again for each table it learned, five times over in TPC-C's mix)."""
    dsn, key = accounts
    with adaptive_client.connect(dsn, master_key=key, autocommit=True) as setup:
        setup.execute("CREATE TABLE branch (id integer PRIMARY KEY, total numeric(12,2))")
        setup.execute("INSERT INTO branch VALUES (1, 0)")
    conn = _client(dsn, key, RR)  # (it has updated acct's bal)
    acct_read = "SELECT name FROM acct WHERE id = %s"
    branch_read = "SELECT id FROM branch WHERE id = %s"
    for q in (acct_read, branch_read, acct_read, branch_read):
        conn.execute(q, (1,)).fetchall()
    conn.rollback()
    acct_plan, branch_plan = conn.cached_plan(acct_read), conn.cached_plan(branch_read)
    assert acct_plan is not None and branch_plan is not None
    conn.execute("UPDATE branch SET total = total + %s WHERE id = %s", (5, 1))
    assert conn.kept_rows().columns("branch") == {"total"}
    # acct's read is the same plan, its repeat current without the dispatcher
    assert conn.cached_plan(acct_read) is acct_plan
    assert conn.repeats[acct_read].current(conn)
    # branch's read now keeps its row (total beside what it names): compiled again
    assert conn.cached_plan(branch_read) is None
    assert not conn.repeats[branch_read].current(conn)
    compiled = conn.stats.compilations
    assert conn.execute(acct_read, (1,)).fetchone() == ("a",)
    assert conn.stats.compilations == compiled  # (its repeat: nothing compiled)
    assert conn.execute(branch_read, (1,)).fetchone() == (1,)
    assert conn.stats.compilations == compiled + 1
    conn.commit()
    conn.close()
    with adaptive_client.connect(dsn, master_key=key) as check:
        assert check.execute("SELECT total FROM branch").fetchone()[0] == 5


def _balance(dsn: str, key: Any, acct: int) -> Any:
    with adaptive_client.connect(dsn, master_key=key) as c:
        return c.execute("SELECT bal FROM acct WHERE id = %s", (acct,)).fetchone()[0]


@pytest.mark.parametrize("level", [RR, psycopg.IsolationLevel.SERIALIZABLE])
def test_snapshot_read_serves_the_update(accounts: tuple[str, Any], level: Any) -> None:
    dsn, key = accounts
    conn = _client(dsn, key, level)
    before = STATS.locked_reuse
    assert conn.execute("SELECT name FROM acct WHERE id = %s", (1,)).fetchone() == ("a",)
    conn.execute("UPDATE acct SET bal = bal + %s WHERE id = %s", (5, 1))
    assert STATS.locked_reuse == before + 1  # no SELECT FOR UPDATE round trip
    assert conn.execute("SELECT bal FROM acct WHERE id = 1").fetchone()[0] == 105
    conn.commit()
    conn.close()
    assert _balance(dsn, key, 1) == 105


def test_kept_rows_hold_the_columns_the_updates_read(accounts: tuple[str, Any]) -> None:
    """A kept row holds the values of the columns the session's updates of its table
    read (NULL in the others' places); an update reading one more column reads the row
    itself, and from then on the rows kept hold that column too."""
    dsn, key = accounts
    conn = _client(dsn, key, RR)  # (it has updated acct's bal)
    assert conn.execute("SELECT name FROM acct WHERE id = %s", (1,)).fetchone() == ("a",)
    ((columns, row),) = conn.locked_rows.values()
    assert columns == {"bal"}
    assert row[1] is None and row[2] is None and isinstance(row[3], bytes)  # ctid, id, name, bal
    before = STATS.locked_reuse
    conn.execute("UPDATE acct SET name = name || %s WHERE id = %s", ("!", 1))
    assert STATS.locked_reuse == before  # (name was not kept: read with the update)
    assert conn.execute("SELECT id FROM acct WHERE id = %s", (2,)).fetchone() == (2,)
    conn.execute("UPDATE acct SET bal = bal + 1, name = name || %s WHERE id = %s", ("?", 2))
    assert STATS.locked_reuse == before + 1
    conn.commit()
    assert conn.execute("SELECT id, name, bal FROM acct ORDER BY id").fetchall() == [
        (1, "a!", 100),
        (2, "b?", 201),
    ]
    conn.close()


def test_read_only_snapshot_reads_fetch_only_what_they_ask(accounts: tuple[str, Any]) -> None:
    """A READ ONLY transaction writes nothing: its reads by key fetch the columns they
    name, not the whole row a later read-modify-write would reuse; read-write again, the
    same text keeps its row."""
    dsn, key = accounts
    conn = _client(dsn, key, RR)
    conn.read_only = True
    assert conn.execute("SELECT name FROM acct WHERE id = %s", (1,)).fetchone() == ("a",)
    assert conn.locked_rows == {}
    with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
        conn.execute("UPDATE acct SET bal = bal + %s WHERE id = %s", (5, 1))
    conn.rollback()
    conn.read_only = False
    before = STATS.locked_reuse
    assert conn.execute("SELECT name FROM acct WHERE id = %s", (1,)).fetchone() == ("a",)
    assert len(conn.locked_rows) == 1
    conn.execute("UPDATE acct SET bal = bal + %s WHERE id = %s", (5, 1))
    assert STATS.locked_reuse == before + 1
    conn.commit()
    conn.close()
    assert _balance(dsn, key, 1) == 105


def test_read_committed_never_reuses_an_unlocked_read(accounts: tuple[str, Any]) -> None:
    dsn, key = accounts
    conn = _client(dsn, key, RC)
    before = STATS.locked_reuse
    conn.execute("SELECT name FROM acct WHERE id = %s", (1,))
    # another client changes the row in between: READ COMMITTED must see its change
    with adaptive_client.connect(dsn, master_key=key, autocommit=True) as other:
        other.execute("UPDATE acct SET bal = bal + 1 WHERE id = 1")
    conn.execute("UPDATE acct SET bal = bal + %s WHERE id = %s", (5, 1))
    assert STATS.locked_reuse == before
    conn.commit()
    conn.close()
    assert _balance(dsn, key, 1) == 106  # both increments kept


def test_concurrent_change_fails_like_the_plain_update(
    accounts: tuple[str, Any], monkeypatch: Any
) -> None:
    dsn, key = accounts
    conn = _client(dsn, key, RR)
    conn.execute("SELECT name FROM acct WHERE id = %s", (2,))  # snapshot read, cached
    with adaptive_client.connect(dsn, master_key=key, autocommit=True) as other:
        other.execute("UPDATE acct SET bal = bal + 1 WHERE id = 2")

    def no_lookup(*_: Any) -> Any:
        raise AssertionError("a report naming nothing encrypted was looked up")

    # the server's report goes as it is: nothing in it names the encrypted database
    monkeypatch.setattr(server_errors, "_names", no_lookup)
    monkeypatch.setattr(server_errors, "constraint_name", no_lookup)
    with pytest.raises(psycopg.errors.SerializationFailure) as failed:
        conn.execute("UPDATE acct SET bal = bal + %s WHERE id = %s", (5, 2))
    assert failed.value.sqlstate == "40001"
    assert (
        failed.value.diag.message_primary == "could not serialize access due to concurrent update"
    )
    monkeypatch.undo()
    conn.rollback()
    # the retry, in a fresh snapshot, applies on top of the other client's change
    conn.execute("SELECT name FROM acct WHERE id = %s", (2,))
    conn.execute("UPDATE acct SET bal = bal + %s WHERE id = %s", (5, 2))
    conn.commit()
    conn.close()
    assert _balance(dsn, key, 2) == 206


def test_own_write_invalidates_the_cached_row(accounts: tuple[str, Any]) -> None:
    dsn, key = accounts
    conn = _client(dsn, key, RR)
    conn.execute("SELECT name FROM acct WHERE id = %s", (1,))
    conn.execute("UPDATE acct SET bal = %s WHERE id = %s", (50, 1))  # our own write
    conn.execute("UPDATE acct SET bal = bal + %s WHERE id = %s", (5, 1))  # must read 50
    conn.commit()
    conn.close()
    assert _balance(dsn, key, 1) == 55
