"""After an error, a transaction is where PostgreSQL leaves it -- whoever detected it.

For each class of error (a syntax error, an unknown name, a value its column's type
refuses, an integer overflow, a division by zero, a server constraint, a construct the
client refuses) the same steps run on a plain database through psycopg and on an
encrypted one through the client: what each step did (its rows or its SQLSTATE) and the
rows the table holds at the end are compared.  The steps: the statements after the
error, ``commit()``, a savepoint's rollback, the same in autocommit mode, and the error
as a transaction's first statement."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.keys import MasterKey

SCHEMA = "CREATE TABLE t (id integer PRIMARY KEY, v integer, s varchar(5), d date)"
SEED = "INSERT INTO t VALUES (1, 10, 'one', '2024-01-01'), (2, 20, 'two', '2024-02-01')"

# class of error -> (statement, parameters)
ERRORS: dict[str, tuple[str, tuple[Any, ...] | None]] = {
    "syntax": ("SELECT id, FROM t", None),
    "syntax_parameters": ("SELECT id FROM t WHERE v = = %s", (10,)),
    "unknown_table": ("SELECT id FROM nowhere", None),
    "unknown_column": ("SELECT nothing FROM t", None),
    "string_too_long": ("INSERT INTO t VALUES (%s, %s, %s, %s)", (7, 1, "toolong", "2024-01-01")),
    "bad_date": ("INSERT INTO t VALUES (%s, %s, %s, %s)", (7, 1, "x", "2024-13-01")),
    "bad_integer_text": ("INSERT INTO t VALUES (7, 'seven', 'x', '2024-01-01')", None),
    "integer_overflow_insert": ("INSERT INTO t VALUES (7, 3000000000, 'x', '2024-01-01')", None),
    "integer_overflow_expression": ("SELECT v * 1000000000 FROM t WHERE id = 1", None),
    "division_by_zero": ("SELECT v / 0 FROM t WHERE id = 1", None),
    "unique_violation": ("INSERT INTO t VALUES (1, 1, 'x', '2024-01-01')", None),
    "not_null_violation": ("INSERT INTO t (v) VALUES (1)", None),
}

# a construct PostgreSQL runs and the client refuses: plain gets a statement that fails
# there instead, and the comparison reads only "failed" at that step
REFUSED = "SELECT id, regexp_matches(s, 'a') FROM t"
FAILS_ON_PLAIN = "SELECT 1 / 0"

Outcome = tuple[Any, ...]
Connect = Callable[[bool], Any]


def step(conn: Any, sql: str, params: tuple[Any, ...] | None = None) -> Outcome:
    """What one statement did: ("ok", rows or rowcount) or ("error", SQLSTATE)."""
    try:
        cur = conn.execute(sql, params)
        return ("ok", cur.fetchall() if cur.description else cur.rowcount)
    except psycopg.Error as exc:
        return ("error", exc.sqlstate)


def rows(conn: Any) -> Outcome:
    return ("rows", conn.execute("SELECT id, v, s FROM t ORDER BY id").fetchall())


def scenario(
    connect: Connect, kind: str, error: tuple[str, tuple[Any, ...] | None]
) -> list[Outcome]:
    """The steps of ``kind`` around ``error``, on a fresh table state each time."""
    out: list[Outcome] = []
    conn = connect(False)
    try:
        conn.execute("DELETE FROM t")  # (the state the last scenario left, whatever it was)
        conn.execute(SEED)
        conn.commit()
        if kind == "after_error":
            out.append(step(conn, "INSERT INTO t VALUES (3, 30, 'three', '2024-03-01')"))
            out.append(step(conn, *error))
            out.append(step(conn, "SELECT id FROM t WHERE id = 3"))
            out.append(step(conn, "INSERT INTO t VALUES (4, 40, 'four', '2024-04-01')"))
            conn.rollback()
            out.append(step(conn, "SELECT count(*) FROM t"))
        elif kind == "commit":
            out.append(step(conn, "INSERT INTO t VALUES (3, 30, 'three', '2024-03-01')"))
            out.append(step(conn, "UPDATE t SET v = v + 1 WHERE id = 1"))
            out.append(step(conn, *error))
            conn.commit()  # a failed transaction's commit rolls it back
            out.append(rows(conn))
            conn.commit()
        elif kind == "savepoint":
            out.append(step(conn, "INSERT INTO t VALUES (3, 30, 'three', '2024-03-01')"))
            out.append(step(conn, "SAVEPOINT before_error"))
            out.append(step(conn, "INSERT INTO t VALUES (4, 40, 'four', '2024-04-01')"))
            out.append(step(conn, *error))
            out.append(step(conn, "SELECT 1"))
            out.append(step(conn, "ROLLBACK TO SAVEPOINT before_error"))
            out.append(step(conn, "INSERT INTO t VALUES (5, 50, 'five', '2024-05-01')"))
            conn.commit()
            out.append(rows(conn))
            conn.commit()
        elif kind == "first_statement":
            out.append(step(conn, *error))  # opens the transaction, and fails it
            out.append(step(conn, "SELECT count(*) FROM t"))
            conn.commit()
            out.append(step(conn, "SELECT count(*) FROM t"))
            conn.commit()
        elif kind == "autocommit":
            conn.autocommit = True
            out.append(step(conn, "INSERT INTO t VALUES (3, 30, 'three', '2024-03-01')"))
            out.append(step(conn, *error))
            out.append(step(conn, "INSERT INTO t VALUES (4, 40, 'four', '2024-04-01')"))
            out.append(rows(conn))
        elif kind == "transaction_block":
            conn.autocommit = True
            out.append(step(conn, "BEGIN"))
            out.append(step(conn, "INSERT INTO t VALUES (3, 30, 'three', '2024-03-01')"))
            out.append(step(conn, *error))
            out.append(step(conn, "SELECT 1"))
            out.append(step(conn, "COMMIT"))
            out.append(rows(conn))
    finally:
        conn.close()
    return out


KINDS = ["after_error", "commit", "savepoint", "first_statement", "autocommit", "transaction_block"]


@pytest.fixture(scope="module")
def databases(new_database: Callable[..., str]) -> Iterator[tuple[Connect, Connect]]:
    plain_dsn, enc_dsn = new_database("txplain"), new_database("txenc")
    key = MasterKey.generate()

    def plain(autocommit: bool) -> Any:
        return psycopg.connect(plain_dsn, autocommit=autocommit)

    def enc(autocommit: bool) -> Any:
        return adaptive_client.connect(enc_dsn, master_key=key, autocommit=autocommit)

    for connect in (plain, enc):
        with connect(True) as c:
            c.execute(SCHEMA)
            c.execute(SEED)
    with enc(True) as c:  # every onion the steps compare by already at its layer
        c.execute("SELECT id FROM t WHERE id = 3 AND v = 1 AND s = 'x' ORDER BY v, s")
    yield plain, enc


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("error", sorted(ERRORS))
def test_after_an_error_as_postgresql(
    databases: tuple[Connect, Connect], error: str, kind: str
) -> None:
    plain, enc = databases
    expected = scenario(plain, kind, ERRORS[error])
    got = scenario(enc, kind, ERRORS[error])
    assert ("error", None) not in got  # every error carries a SQLSTATE
    assert got == expected


@pytest.mark.parametrize("kind", KINDS)
def test_a_refused_construct_fails_the_transaction_as_an_error(
    databases: tuple[Connect, Connect], kind: str
) -> None:
    plain, enc = databases
    expected = scenario(plain, kind, (FAILS_ON_PLAIN, None))
    got = scenario(enc, kind, (REFUSED, None))

    def failed(outcomes: list[Outcome]) -> list[Outcome]:
        return [
            ("error", "failed") if o in (("error", "22012"), ("error", "0A000")) else o
            for o in outcomes
        ]

    assert ("error", "0A000") in got
    assert failed(got) == failed(expected)


@pytest.mark.parametrize(
    ("sql", "params"),
    [
        ("SELECT id FROM t WHERE id = %s", (1, 2)),  # one parameter too many
        ("SELECT id FROM t WHERE id = %(k)s", {"j": 1}),  # a name missing
        ("SELECT id FROM t WHERE id = %s", (object(),)),  # a value psycopg cannot adapt
        ("INSERT INTO t VALUES (4, 40, %s, '2024-04-01')", ({1, 2},)),
    ],
)
def test_a_parameter_mismatch_leaves_the_transaction_as_psycopg_does(
    databases: tuple[Connect, Connect], sql: str, params: Any
) -> None:
    """A mistake psycopg refuses before sending anything (the parameters do not fit the
    placeholders, a value it cannot adapt): the transaction goes on; so does the
    client's."""
    plain, enc = databases
    outcomes = []
    for connect in (plain, enc):
        conn = connect(False)
        try:
            conn.execute("DELETE FROM t WHERE id > 2")
            conn.commit()
            conn.execute("INSERT INTO t VALUES (3, 30, 'three', '2024-03-01')")
            with pytest.raises(psycopg.ProgrammingError) as info:
                conn.execute(sql, params)
            assert info.value.sqlstate is None
            conn.commit()
            outcomes.append(rows(conn))
            conn.execute("DELETE FROM t WHERE id > 2")
            conn.commit()
        finally:
            conn.close()
    assert outcomes[0] == outcomes[1]
    assert [r[0] for r in outcomes[1][1]] == [1, 2, 3]
