"""The DB-API 2.0 surface, session commands, scripts, and server errors in plain names."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
import sqlglot

import adaptive_client
from adaptive_client.catalog.config import load_config
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.errors import ConfigError, UnsupportedQuery


@pytest.fixture()
def conn(new_database: Any, master_key: MasterKey) -> Iterator[adaptive_client.Connection]:
    c = adaptive_client.connect(new_database("dbapi"), master_key=master_key, autocommit=True)
    c.execute("CREATE TABLE acct (id integer PRIMARY KEY, name text NOT NULL, email text UNIQUE)")
    c.execute("INSERT INTO acct VALUES (1, 'ann', 'a@x'), (2, 'bob', 'b@x')")
    yield c
    c.close()


def test_module_globals_and_exception_hierarchy() -> None:
    assert adaptive_client.apilevel == "2.0"
    assert adaptive_client.paramstyle == "pyformat"
    assert adaptive_client.threadsafety == 2
    assert adaptive_client.Error is psycopg.Error
    assert issubclass(adaptive_client.AdaptiveError, psycopg.Error)
    assert issubclass(adaptive_client.UnsupportedQuery, psycopg.NotSupportedError)
    assert issubclass(adaptive_client.RetryableError, psycopg.errors.SerializationFailure)
    assert issubclass(adaptive_client.errors.UndefinedTable, psycopg.errors.UndefinedTable)
    assert issubclass(adaptive_client.errors.EncodingError, psycopg.DataError)
    assert adaptive_client.RetryableError("x").sqlstate == "40001"


def test_unknown_table_is_psycopgs_class(conn: adaptive_client.Connection) -> None:
    with pytest.raises(psycopg.errors.UndefinedTable):
        conn.execute("SELECT * FROM nowhere")


def test_cursor_extensions(conn: adaptive_client.Connection) -> None:
    cur = conn.execute("SELECT id FROM acct ORDER BY id")
    assert cur.rownumber == 0 and cur.lastrowid is None
    cur.scroll(1)
    assert cur.fetchone() == (2,)
    cur.scroll(0, mode="absolute")
    assert cur.fetchall() == [(1,), (2,)]
    with pytest.raises(IndexError):
        cur.scroll(5)
    with pytest.raises(psycopg.ProgrammingError):
        cur.scroll(0, mode="sideways")
    assert cur.nextset() is None


def test_unique_violation_in_plain_names_without_ciphertexts(
    conn: adaptive_client.Connection,
) -> None:
    with pytest.raises(psycopg.errors.UniqueViolation) as info:
        conn.execute("INSERT INTO acct VALUES (3, 'cid', 'a@x')")
    err = info.value
    assert err.diag.constraint_name == "acct_email_key"
    assert err.diag.table_name == "acct"
    assert err.diag.message_detail == "Key (email)=(a@x) already exists."
    assert "\\x" not in str(err)
    assert not re.search(r"\b[tci]_[0-9a-f]{8}", str(err))
    with pytest.raises(psycopg.errors.UniqueViolation) as info:
        conn.execute("INSERT INTO acct VALUES (1, 'dup', 'z@x')")
    assert info.value.diag.constraint_name == "acct_pkey"


def test_not_null_violation_names_the_column(conn: adaptive_client.Connection) -> None:
    with pytest.raises(psycopg.errors.NotNullViolation) as info:
        conn.execute("INSERT INTO acct VALUES (3, NULL, 'c@x')")
    assert info.value.diag.column_name == "name"
    assert str(info.value) == (
        'null value in column "name" of relation "acct" violates not-null constraint'
    )


def test_every_result_of_a_script_is_reached_by_nextset(
    conn: adaptive_client.Connection,
) -> None:
    """As psycopg 3 on the same script: each statement's result in turn, then None."""
    cur = conn.execute(
        "INSERT INTO acct VALUES (5, 'eve', 'e@x'); SELECT name FROM acct WHERE id = 5; "
        "SELECT email FROM acct WHERE id = 5"
    )
    assert cur.description is None and cur.rowcount == 1
    assert cur.nextset() is True
    assert [d.name for d in cur.description] == ["name"]
    assert cur.fetchall() == [("eve",)]
    assert cur.nextset() is True
    assert [d.name for d in cur.description] == ["email"]
    assert cur.fetchall() == [("e@x",)]
    assert cur.nextset() is None


def test_script_runs_in_order_and_is_atomic_in_autocommit(
    conn: adaptive_client.Connection,
) -> None:
    cur = conn.execute(
        "INSERT INTO acct VALUES (3, 'cid', 'c@x'); SELECT name FROM acct WHERE id = 3;"
    )
    # as psycopg 3: the first statement's result, then the next by nextset()
    assert cur.description is None and cur.rowcount == 1
    assert cur.nextset() is True
    assert cur.fetchall() == [("cid",)]
    assert cur.nextset() is None
    with pytest.raises(psycopg.errors.UniqueViolation):
        conn.execute(
            "CREATE TABLE extra (id integer PRIMARY KEY); "
            "INSERT INTO acct VALUES (4, 'dee', 'd@x'); INSERT INTO acct VALUES (1, 'x', 'y')"
        )
    # the whole script was undone, metadata included
    assert conn.execute("SELECT count(*) FROM acct").fetchone() == (3,)
    with pytest.raises(psycopg.errors.UndefinedTable):
        conn.execute("SELECT * FROM extra")
    with pytest.raises(psycopg.errors.SyntaxError):
        conn.execute("SELECT 1; SELECT %s", (1,))


def test_savepoints_pass_through(conn: adaptive_client.Connection) -> None:
    conn.autocommit = False
    conn.execute("INSERT INTO acct VALUES (5, 'eve', 'e@x')")
    conn.execute("SAVEPOINT s1")
    conn.execute("INSERT INTO acct VALUES (6, 'fay', 'f@x')")
    conn.execute("ROLLBACK TO SAVEPOINT s1")
    conn.execute("RELEASE SAVEPOINT s1")
    conn.execute("COMMIT")
    assert conn.execute("SELECT id FROM acct ORDER BY id").fetchall() == [(1,), (2,), (5,)]
    conn.commit()


def test_ddl_rolled_back_in_a_transaction_leaves_the_catalog_usable(
    conn: adaptive_client.Connection,
) -> None:
    conn.autocommit = False
    conn.execute("CREATE TABLE scratch (id integer PRIMARY KEY)")
    conn.rollback()
    with pytest.raises(psycopg.errors.UndefinedTable):
        conn.execute("SELECT * FROM scratch")
    conn.rollback()
    conn.execute("CREATE TABLE scratch (id integer PRIMARY KEY)")
    conn.execute("SAVEPOINT before_t2")
    conn.execute("CREATE TABLE scratch2 (id integer PRIMARY KEY)")
    conn.execute("ROLLBACK TO SAVEPOINT before_t2")
    conn.commit()
    assert conn.execute("SELECT count(*) FROM scratch").fetchone() == (0,)
    with pytest.raises(psycopg.errors.UndefinedTable):
        conn.execute("SELECT * FROM scratch2")
    conn.rollback()
    # the catalog generation the savepoint undid is not the floor after the commit: the
    # next DDL reads the committed head without calling it rolled back
    conn.execute("CREATE TABLE scratch3 (id integer PRIMARY KEY)")
    conn.execute("ALTER TABLE scratch ADD COLUMN note text")
    conn.commit()
    conn.execute("INSERT INTO scratch3 VALUES (%s)", (1,))
    assert conn.execute("SELECT id, note FROM scratch").fetchall() == []
    conn.commit()


def test_sqlglot_records_stay_out_of_the_logs(
    conn: adaptive_client.Connection, caplog: pytest.LogCaptureFixture
) -> None:
    # sqlglot warns, quoting the statement, when it falls back to a bare command
    statement = "LOCK TABLE acct IN ROW EXCLUSIVE MODE NOWAIT secret_value"
    with caplog.at_level("DEBUG"):
        with pytest.raises(psycopg.Error):
            conn.execute(statement)
        sqlglot.parse(statement, read="postgres")  # the application's own use still logs
    assert caplog.text.count("secret_value") == 1


def test_named_cursor_streams_from_the_server(conn: adaptive_client.Connection) -> None:
    conn.execute("CREATE TABLE big (id integer PRIMARY KEY, label text)")
    with conn.cursor().copy("COPY big (id, label) FROM STDIN") as cp:
        for i in range(1, 1001):
            cp.write_row((i, f"label {i}"))
    conn.autocommit = False
    cur = conn.cursor("stream")
    cur.itersize = 64
    cur.execute("SELECT id, label FROM big WHERE id > %s", (10,))
    assert [d[0] for d in cur.description or []] == ["id", "label"]
    first = cur.fetchone()
    declared = conn.pg.execute("SELECT name FROM pg_cursors").fetchall()
    assert ("stream",) in declared  # the rows stay on the server until fetched
    rest = cur.fetchmany(5) + list(cur)
    got = sorted([first, *rest])  # type: ignore[list-item]
    assert got == [(i, f"label {i}") for i in range(11, 1001)]
    # an ordered statement is finished by the client: same rows, held in memory
    cur.execute("SELECT label FROM big WHERE id < 4 ORDER BY label DESC")
    assert cur.fetchall() == [("label 3",), ("label 2",), ("label 1",)]
    cur.close()
    conn.rollback()


@pytest.mark.parametrize("autocommit", [False, True])
def test_server_jit_off_for_the_clients_statements_unless_configured(
    new_database: Any, master_key: MasterKey, autocommit: bool
) -> None:
    dsn = new_database("jit")
    with adaptive_client.connect(dsn, master_key=master_key, autocommit=autocommit) as conn:
        # the SET left no transaction open behind the application
        assert not conn.in_transaction()
        assert conn.pg.execute("SHOW jit").fetchone() == ("off",)
    with psycopg.connect(dsn) as raw:
        server_default = raw.execute("SHOW jit").fetchone()
    assert server_default == ("on",)  # PostgreSQL's default: the setting is the client's
    with adaptive_client.connect(
        dsn, master_key=master_key, config={"defaults": {"server_jit": True}}
    ) as conn:
        assert conn.pg.execute("SHOW jit").fetchone() == server_default


def test_server_jit_must_be_a_flag() -> None:
    with pytest.raises(ConfigError, match="server_jit"):
        load_config({"defaults": {"server_jit": "no"}})


def test_description_entries_are_named_as_psycopgs(
    conn: adaptive_client.Connection, pg_dsn: str
) -> None:
    """Each entry reads by position and by name (``.name``, ``.type_code``), with the
    names and type OIDs psycopg reports for the same result on a plain database."""
    queries = [
        "SELECT id, name FROM acct WHERE id = 1",
        "SELECT name, count(*) AS n FROM acct GROUP BY name",
        "SELECT count(*) AS n, max(email), sum(id), avg(id), min(id) FROM acct",
        "SELECT 1 AS one, 'x' AS two, 2.5 AS three, 3000000000 AS four, true AS five",
        "SELECT -7, CAST(1 AS bigint), NULL",
    ]
    with psycopg.connect(pg_dsn) as plain:
        plain.execute("CREATE TEMP TABLE acct (id integer PRIMARY KEY, name text, email text)")
        for sql in queries:
            want = plain.execute(sql).description or []
            got = conn.execute(sql).description or []
            assert [(d.name, d.type_code) for d in got] == [(d.name, d.type_code) for d in want]
            assert [d[:2] for d in got] == [(d.name, d.type_code) for d in want]
            assert all(len(d) == 7 for d in got)
    explain = conn.execute("EXPLAIN SELECT id FROM acct WHERE id = 1").description or []
    assert [d.name for d in explain] == ["QUERY PLAN"]


def test_explain_takes_the_options_without_parentheses(
    conn: adaptive_client.Connection, pg_dsn: str
) -> None:
    """``EXPLAIN [ANALYZE | ANALYSE] [VERBOSE] statement``, PostgreSQL's older form, is
    accepted as the parenthesized one is: ANALYZE runs the statement (its plan has actual
    times), VERBOSE shows each node's output; the options in the other order are
    PostgreSQL's syntax error."""
    forms = {
        "EXPLAIN ANALYZE SELECT id FROM acct WHERE id = %s": ("actual time", None),
        "explain analyse\n  select id from acct where id = %s": ("actual time", None),
        "EXPLAIN VERBOSE SELECT id FROM acct WHERE id = %s": ("Output:", "actual time"),
        "EXPLAIN ANALYZE VERBOSE SELECT id FROM acct WHERE id = %s": ("Output:", None),
        "EXPLAIN (ANALYZE, VERBOSE) SELECT id FROM acct WHERE id = %s": ("Output:", None),
        "EXPLAIN (FORMAT YAML) SELECT id FROM acct WHERE id = %s": ("Node Type", None),
    }
    with psycopg.connect(pg_dsn) as plain:
        plain.execute("CREATE TEMP TABLE acct (id integer PRIMARY KEY, name text, email text)")
        for sql, (present, absent) in forms.items():
            for rows in (plain.execute(sql, (1,)).fetchall(), conn.execute(sql, (1,)).fetchall()):
                text = "\n".join(r[0] for r in rows)
                assert present in text, (sql, text)
                assert absent is None or absent not in text, (sql, text)
        with pytest.raises(psycopg.errors.SyntaxError):
            plain.execute("EXPLAIN VERBOSE ANALYZE SELECT id FROM acct")
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            plain.execute("SELECT 1")
    conn.autocommit = False  # (as the plain session: the error fails the transaction)
    with pytest.raises(psycopg.errors.SyntaxError):
        conn.execute("EXPLAIN VERBOSE ANALYZE SELECT id FROM acct")
    with pytest.raises(psycopg.errors.InFailedSqlTransaction):
        conn.execute("SELECT 1")
    conn.rollback()
    assert conn.execute("SELECT name FROM acct WHERE id = %s", (2,)).fetchall() == [("bob",)]


def test_explain_takes_parameters_as_the_statement_would(
    conn: adaptive_client.Connection, pg_dsn: str
) -> None:
    """EXPLAIN of a statement with several ``%s`` (and a ``%%`` in a literal) plans it
    with its parameters, as psycopg's EXPLAIN does; one parameter too many is psycopg's
    ProgrammingError, before anything is sent.  A statement the client finishes has no
    one server plan: refused, by name."""
    query = (
        "EXPLAIN SELECT id FROM acct WHERE id >= %s AND id < %s AND name = %s AND email <> '5%%'"
    )
    params = (1, 20, "ann")
    with psycopg.connect(pg_dsn) as plain:
        plain.execute("CREATE TEMP TABLE acct (id integer PRIMARY KEY, name text, email text)")
        want = plain.execute(query, params).fetchall()
        with pytest.raises(psycopg.ProgrammingError):
            plain.execute(query, (*params, 4))
    got = conn.execute(query, params).fetchall()
    assert want and got and all(len(r) == 1 and isinstance(r[0], str) for r in got)
    with pytest.raises(psycopg.ProgrammingError):
        conn.execute(query, (*params, 4))
    with pytest.raises(UnsupportedQuery, match="split execution"):
        conn.execute("EXPLAIN SELECT id FROM acct WHERE email LIKE %s", ("a%",))
    assert conn.execute("SELECT name FROM acct WHERE id = %s", (2,)).fetchall() == [("bob",)]


def test_a_fetch_without_rows_is_psycopgs_error(
    conn: adaptive_client.Connection, pg_dsn: str
) -> None:
    """fetchone/fetchmany/fetchall/scroll after a statement that returned no rows (a
    command, an INSERT without RETURNING), before any statement, or on a closed cursor
    raise psycopg's errors, as a plain cursor does; a result of no columns (SELECT FROM)
    and an empty one are results."""
    statements = [
        "CREATE TABLE IF NOT EXISTS acct (id integer PRIMARY KEY, name text, email text)",
        "INSERT INTO acct VALUES (7, 'gus', 'g@x')",
        "UPDATE acct SET name = 'gil' WHERE id = 7",
        "SET statement_timeout = 0",
        "ANALYZE acct",
    ]
    fetches = [
        lambda c: c.fetchone(),
        lambda c: c.fetchmany(2),
        lambda c: c.fetchall(),
        lambda c: c.scroll(0),
    ]
    with psycopg.connect(pg_dsn, autocommit=True) as plain:
        for db in (plain, conn):
            fresh = db.cursor()
            with pytest.raises(psycopg.ProgrammingError, match="no result available"):
                fresh.fetchone()
            for sql in statements:
                cur = db.execute(sql)
                assert cur.description is None
                for fetch in fetches:
                    with pytest.raises(psycopg.ProgrammingError, match="didn't produce"):
                        fetch(cur)
            cur = db.execute("SELECT FROM acct WHERE id = 7")
            assert cur.description == [] and cur.fetchall() == [()]
            assert db.execute("SELECT id FROM acct WHERE id < 0").fetchall() == []
            cur.close()
            with pytest.raises(psycopg.InterfaceError, match="closed"):
                cur.fetchall()
            with pytest.raises(psycopg.InterfaceError, match="closed"):
                cur.execute("SELECT 1")


def test_the_servers_system_catalog_is_refused_by_name(conn: adaptive_client.Connection) -> None:
    """The server's catalog describes the stored, anonymized tables: a query of it, or
    of an object identifier cast, is refused (0A000), never answered with the stored
    names nor failed as a missing relation; a missing table of the application's is
    still PostgreSQL's 42P01."""
    for sql in [
        "SELECT count(*) FROM pg_stat_user_tables",
        "SELECT relname FROM pg_class WHERE relname = 'acct'",
        "SELECT count(*) FROM pg_catalog.pg_class",
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'acct'",
        "SELECT obj_description('acct'::regclass)",
    ]:
        with pytest.raises(adaptive_client.NotSupportedError):
            conn.execute(sql)
    with pytest.raises(psycopg.errors.UndefinedTable):
        conn.execute("SELECT * FROM nosuch")


def test_locking_clauses_name_the_servers_tables(
    conn: adaptive_client.Connection, pg_dsn: str
) -> None:
    """``FOR UPDATE OF t`` / ``FOR SHARE OF alias``: the rows PostgreSQL returns, the
    tables named in the server's statement by their server aliases (the application's
    table name reached the server, which then refused it as missing: 42P01), and a name
    the FROM clause lacks is PostgreSQL's 42P01."""
    from adaptive_client.compile.statements import compile_statement

    queries = [
        "SELECT id, name FROM acct WHERE name = 'ann' FOR UPDATE OF acct",
        "SELECT x.id FROM acct x WHERE x.id = 2 FOR SHARE OF x SKIP LOCKED",
        "SELECT id FROM acct WHERE id = 1 FOR NO KEY UPDATE OF acct NOWAIT",
    ]
    with psycopg.connect(pg_dsn) as plain:
        plain.execute("CREATE TEMP TABLE acct (id integer PRIMARY KEY, name text, email text)")
        plain.execute("INSERT INTO acct VALUES (1, 'ann', 'a@x'), (2, 'bob', 'b@x')")
        for sql in queries:
            assert conn.execute(sql).fetchall() == plain.execute(sql).fetchall(), sql
            server = compile_statement(conn.catalog, conn.parse(sql)[0]).sql
            assert "acct" not in server and " OF " in server, server
        missing = "SELECT id FROM acct x WHERE id = 1 FOR UPDATE OF acct"
        with pytest.raises(psycopg.errors.UndefinedTable):
            plain.execute(missing)
    with pytest.raises(psycopg.errors.UndefinedTable):
        conn.execute(missing)


def test_prepare_transaction_is_refused_and_rolls_back_as_postgresql_does(
    conn: adaptive_client.Connection, pg_dsn: str
) -> None:
    """PREPARE TRANSACTION: PostgreSQL without prepared transactions (the default)
    refuses it and rolls the transaction back, leaving the session idle; the client
    refuses two-phase commit by name and leaves the same state: the row inserted before
    is gone, the next statement runs."""
    with psycopg.connect(pg_dsn) as plain:
        plain.execute("CREATE TABLE IF NOT EXISTS acct (id integer PRIMARY KEY, name text)")
        plain.commit()
        conn.autocommit = False
        for db, refused in (
            (plain, psycopg.errors.ObjectNotInPrerequisiteState),
            (conn, adaptive_client.NotSupportedError),
        ):
            db.execute("INSERT INTO acct (id, name) VALUES (90, 'tmp')")
            with pytest.raises(refused):
                db.execute("PREPARE TRANSACTION 'tx1'")
            session = db.pg if isinstance(db, adaptive_client.Connection) else db
            assert session.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
            assert db.execute("SELECT count(*) FROM acct WHERE id = 90").fetchall() == [(0,)]
            db.rollback()


def test_descriptions_carry_psycopgs_sizes(conn: adaptive_client.Connection, pg_dsn: str) -> None:
    """Each description entry whole -- display size, internal size, precision and scale
    -- as psycopg gives it for the same result: from the declared type of a stored
    column (varchar(12), numeric(10,2), timestamp(3), an array's element), from the
    result type for an expression; they were None."""
    table = (
        "CREATE TABLE dsc (id integer PRIMARY KEY, a varchar(12), b char(3), n numeric(10,2), "
        "m numeric, t timestamp(3), tz timestamptz, d date, f float8, r real, bo boolean, "
        "u uuid, bi bigserial, si smallint, tm time(2), arr varchar(5)[], tx text)"
    )
    queries = [
        "SELECT * FROM dsc",
        "SELECT count(*), sum(n), max(a), min(d), avg(si) FROM dsc",
        "SELECT id, a || 'x', n * 2, t FROM dsc WHERE id = 1",
        "INSERT INTO dsc (id) VALUES (2) RETURNING *",
        "SELECT nextval('dsc_bi_seq')",
    ]
    with psycopg.connect(pg_dsn, autocommit=True) as plain:
        for db in (plain, conn):
            db.execute(table)
            db.execute("INSERT INTO dsc (id) VALUES (1)")
        for sql in queries:
            want = [tuple(d) for d in plain.execute(sql).description or []]
            got = [tuple(d) for d in conn.execute(sql).description or []]
            assert got == want, sql


def test_executemany_returning_keeps_each_result(
    conn: adaptive_client.Connection, pg_dsn: str
) -> None:
    """psycopg's ``executemany(..., returning=True)``: each run's rows, the first held,
    the next reached by nextset() (it was a TypeError)."""
    sql = "INSERT INTO acct (id, name) VALUES (%s, %s) RETURNING id, name"
    with psycopg.connect(pg_dsn, autocommit=True) as plain:
        plain.execute("CREATE TEMP TABLE acct (id integer PRIMARY KEY, name text, email text)")
        results = []
        for db in (plain, conn):
            cur = db.cursor()
            cur.executemany(sql, [(30, "x"), (31, "y")], returning=True)
            sets = [cur.fetchall()]
            while cur.nextset():
                sets.append(cur.fetchall())
            results.append(sets)
        assert results[0] == results[1] == [[(30, "x")], [(31, "y")]]
