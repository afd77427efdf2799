"""Domains through the client, against plain PostgreSQL (inputs of PostgreSQL 15's
domain.sql): columns declared with a domain store, read and compare as its base type;
its NOT NULL, default and checks apply as PostgreSQL applies them, with its errors
(23514 naming the domain and the constraint, 23502), nothing written; ALTER DOMAIN
and DROP DOMAIN; domains over enums and over domains."""

from __future__ import annotations

from typing import Any

import psycopg
from type_pairs import Pair, check


def report(conn: Any, sql: str, params: Any = None) -> Any:
    """Rows, or the error's SQLSTATE, message and constraint name."""
    try:
        cur = conn.execute(sql, params)
        return cur.fetchall() if cur.description else None
    except psycopg.Error as exc:
        primary = exc.diag.message_primary or str(exc).splitlines()[0]
        return (exc.sqlstate, primary, exc.diag.constraint_name)


def same(pair: Pair, sql: str, params: Any = None) -> Any:
    got = [report(c, sql, params) for c in (pair.plain, pair.enc)]
    assert got[0] == got[1], f"{sql}: plain {got[0]}, client {got[1]}"
    return got[0]


def test_domain_values(pair: Pair) -> None:
    """A domain without constraints is its base type; with checks, values that violate
    them are refused alike."""
    pair.both("CREATE DOMAIN domainvarchar varchar(5)")
    pair.both("CREATE DOMAIN domainint4 int4")
    pair.both("CREATE DOMAIN positive AS numeric(6,2) CHECK (VALUE > 0)")
    check(pair, "domainvarchar", ["abcd", "abcde", "abcdef", "a   "])
    check(pair, "domainint4", [1, -2, 2**31, "12", "x"])
    check(pair, "positive", ["1.005", "0", "-1", "9999.99", 3], probes=["1.01", "5"])


def test_checks_and_not_null(pair: Pair) -> None:
    pair.both(
        "CREATE DOMAIN score AS int CONSTRAINT pos CHECK (VALUE > 0) CHECK (VALUE < 100) "
        "NOT NULL DEFAULT 5"
    )
    pair.both("CREATE TABLE game (id int, s score)")
    for sql in [
        "INSERT INTO game VALUES (1, 0)",
        "INSERT INTO game VALUES (2, 200)",
        "INSERT INTO game VALUES (3, NULL)",
        "INSERT INTO game (id) VALUES (4)",
        "INSERT INTO game VALUES (5, 50)",
        "UPDATE game SET s = 0 WHERE id = 5",
        "SELECT id, s FROM game ORDER BY id",
        "SELECT id FROM game WHERE s = 50",
    ]:
        same(pair, sql)
    same(pair, "INSERT INTO game VALUES (%s, %s)", (6, -1))
    # checks apply in the order of their names (a_c before b_c)
    pair.both(
        "CREATE DOMAIN ab AS int CONSTRAINT b_c CHECK (VALUE > 10) "
        "CONSTRAINT a_c CHECK (VALUE > 20)"
    )
    pair.both("CREATE TABLE abt (x ab)")
    same(pair, "INSERT INTO abt VALUES (1)")
    same(pair, "INSERT INTO abt VALUES (15)")
    same(pair, "SELECT * FROM abt")


def test_alter_domain(pair: Pair) -> None:
    pair.both("CREATE DOMAIN dd AS int CHECK (VALUE > 0)")
    pair.both("CREATE TABLE v (x dd)")
    pair.both("INSERT INTO v VALUES (5)")
    for sql in [
        "ALTER DOMAIN dd ADD CONSTRAINT c2 CHECK (VALUE < 10)",
        "ALTER DOMAIN dd ADD CONSTRAINT c2 CHECK (VALUE < 10)",
        "INSERT INTO v VALUES (10)",
        "ALTER DOMAIN dd ADD CONSTRAINT c3 CHECK (VALUE < 3)",
        "INSERT INTO v VALUES (4)",
        "ALTER DOMAIN dd DROP CONSTRAINT nosuch",
        "ALTER DOMAIN dd DROP CONSTRAINT IF EXISTS nosuch",
        "ALTER DOMAIN dd DROP CONSTRAINT c2",
        "INSERT INTO v VALUES (10)",
        "INSERT INTO v VALUES (NULL)",
        "ALTER DOMAIN dd SET NOT NULL",
        "DELETE FROM v WHERE x IS NULL",
        "ALTER DOMAIN dd SET NOT NULL",
        "INSERT INTO v VALUES (NULL)",
        "ALTER DOMAIN dd DROP NOT NULL",
        "INSERT INTO v VALUES (NULL)",
        "ALTER DOMAIN dd SET DEFAULT 7",
        "CREATE TABLE v2 (id int, x dd)",
        "INSERT INTO v2 (id) VALUES (1)",
        "ALTER DOMAIN dd DROP DEFAULT",
        "INSERT INTO v2 (id) VALUES (2)",
        "SELECT id, x FROM v2 ORDER BY id",
        "SELECT x FROM v ORDER BY x",
        "ALTER DOMAIN nosuch SET NOT NULL",
    ]:
        same(pair, sql)


def test_domain_errors_and_drop(pair: Pair) -> None:
    for sql in [
        "CREATE DOMAIN dy AS int CHECK (x > 0)",
        "CREATE DOMAIN dz AS nosuchtype",
        "CREATE DOMAIN dr AS int NULL NOT NULL",
        "CREATE DOMAIN dq int",
        "CREATE DOMAIN dq int",
        "CREATE TABLE dqt (a dq)",
        "DROP DOMAIN dq",
        "DROP DOMAIN nosuch",
        "DROP DOMAIN IF EXISTS nosuch",
        "DROP DOMAIN dq CASCADE",
        "SELECT * FROM dqt",
        "CREATE TYPE en AS ENUM ('a')",
        "DROP DOMAIN en",
    ]:
        same(pair, sql)


def test_domain_over_enum_and_domain(pair: Pair) -> None:
    """domain.sql / enum.sql: a domain over an enum, a domain over a domain (the outer
    domain's name in the errors)."""
    pair.both("CREATE TYPE rainbow AS ENUM ('red', 'orange', 'yellow', 'green', 'blue')")
    pair.both("CREATE DOMAIN rgb AS rainbow CHECK (VALUE IN ('red', 'green', 'blue'))")
    pair.both("CREATE DOMAIN warm AS rgb CHECK (VALUE::rainbow <> 'blue')")
    pair.both("CREATE TABLE light (id int, c rgb, w warm)")
    for sql in [
        "INSERT INTO light VALUES (1, 'red', 'red')",
        "INSERT INTO light VALUES (2, 'orange', 'red')",
        "INSERT INTO light VALUES (3, 'green', 'blue')",
        "INSERT INTO light VALUES (4, 'green', 'orange')",
        "INSERT INTO light VALUES (5, 'mauve', 'red')",
        "INSERT INTO light VALUES (6, 'blue', 'green')",
        "SELECT id, c, w FROM light ORDER BY c, w",
        "DROP TYPE rainbow",
        "DROP DOMAIN rgb",
        "DROP TYPE rainbow CASCADE",
        "SELECT * FROM light ORDER BY id",
    ]:
        same(pair, sql)
