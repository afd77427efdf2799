"""Names as PostgreSQL tells them apart (syntax/names.py), judged against PostgreSQL one
statement at a time: ``"Foo"`` and ``foo`` are two tables, ``"A"`` and ``a`` two
columns, an unquoted ``ÄPFEL`` folds only its ASCII capitals.  The client folded every
name to lower case: ``CREATE TABLE foo`` after ``CREATE TABLE "Foo"`` was 42P07,
``SELECT * FROM foo`` answered with ``"Foo"``'s rows, ``SELECT * FROM "Foo" ORDER BY id``
could not resolve ``id``.  Result column names, error messages (server and client made)
and the sequence names of ``nextval('"Acct_Id_seq"')`` are the names as written.

Also judged here, found beside them: a qualifier naming no FROM item (``nope.*`` answered
empty rows, ``t.x`` was 42703), an ambiguous column and a repeated alias (0A000), and a
correlated scalar subquery under ``ORDER BY 1`` (an AssertionError)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

from adaptive_client.catalog.keys import MasterKey
from adaptive_client.syntax.names import MARK, folded, relation_named, shown

from .pairs import Pair, plain_and_encrypted, script_differences
from .test_engine_gaps import ICU

SCRIPT = [
    'CREATE TABLE "Foo" (id integer PRIMARY KEY, "Name" text, val integer)',
    "CREATE TABLE foo (id integer PRIMARY KEY, name text)",
    "INSERT INTO \"Foo\" VALUES (1, 'a', 10), (2, 'b', 20)",
    "INSERT INTO foo VALUES (1, 'x')",
    'SELECT * FROM "Foo" ORDER BY id',
    "SELECT * FROM foo",
    "SELECT * FROM FOO",
    'SELECT "Name" FROM "Foo" WHERE id = 1',
    'SELECT name FROM "Foo"',
    'SELECT "Name" AS "NN", val AS "Val" FROM "Foo" ORDER BY "Name"',
    'SELECT f."Name", g.name FROM "Foo" f JOIN foo g ON f.id = g.id',
    'UPDATE "Foo" SET "Name" = \'c\' WHERE id = 2',
    'SELECT "Name", val FROM "Foo" WHERE "Name" = \'c\'',
    'SELECT "Nope" FROM "Foo"',
    'SELECT * FROM "NoTable"',
    'CREATE TABLE "MiXed" ("A" integer, a integer)',
    'INSERT INTO "MiXed" VALUES (1, 2)',
    'SELECT "A", a, "A" + a AS "Sum" FROM "MiXed"',
    "SELECT * FROM mixed",
    'CREATE TABLE "Acct" ("Id" serial PRIMARY KEY, "Owner" text NOT NULL, '
    '"Bal" integer CHECK ("Bal" >= 0), UNIQUE ("Owner"))',
    'CREATE TABLE "Tx" (id serial PRIMARY KEY, "AcctId" integer REFERENCES "Acct" ("Id"), '
    "amount numeric(8,2))",
    'INSERT INTO "Acct" ("Owner", "Bal") VALUES (\'ann\', 10), (\'bob\', 20) RETURNING "Id", "Owner"',
    'INSERT INTO "Tx" ("AcctId", amount) VALUES (1, 5.5), (1, 2.25), (2, 1)',
    'INSERT INTO "Tx" ("AcctId", amount) VALUES (9, 1)',
    'INSERT INTO "Acct" ("Owner", "Bal") VALUES (\'cy\', -1)',
    'INSERT INTO "Acct" ("Owner", "Bal") VALUES (\'ann\', 1)',
    'SELECT "Owner", sum(amount) AS "Total" FROM "Acct" a JOIN "Tx" t ON t."AcctId" = a."Id" '
    'GROUP BY "Owner" ORDER BY "Total" DESC',
    'SELECT "S"."X" FROM (SELECT "Owner" AS "X" FROM "Acct") "S" ORDER BY 1',
    'WITH "C" AS (SELECT "Id" FROM "Acct") SELECT count(*) FROM "C"',
    "SELECT nextval('\"Acct_Id_seq\"')",
    "SELECT currval('\"Acct_Id_seq\"')",
    "SELECT nextval('acct_id_seq')",
    'CREATE INDEX "IxBal" ON "Acct" ("Bal")',
    'SELECT "Owner" FROM "Acct" WHERE "Bal" > 5 ORDER BY "Bal"',
    'DROP INDEX "IxBal"',
    'CREATE VIEW "V" AS SELECT "Owner", "Bal" FROM "Acct"',
    'SELECT * FROM "V" ORDER BY "Bal"',
    "SELECT * FROM v",
    'ALTER TABLE "Acct" RENAME TO "Account"',
    'SELECT "Owner" FROM "Account" ORDER BY 1',
    'SELECT "Owner" FROM "Acct"',
    'ALTER TABLE "Account" ADD COLUMN "Note" text DEFAULT \'n\'',
    'SELECT "Note", "Id" FROM "Account" ORDER BY "Id"',
    f'CREATE TABLE "{MARK}" ("{MARK}1" integer, "{MARK}65{MARK}" integer)',
    f'INSERT INTO "{MARK}" VALUES (4, 5)',
    f'SELECT * FROM "{MARK}"',
    'CREATE TABLE "Äpfel" (Größe integer, "Größe" integer)',
    "INSERT INTO ÄPFEL VALUES (1, 2)",
    'INSERT INTO "Äpfel" VALUES (1, 2)',
    'SELECT Größe, "Größe" FROM "Äpfel"',
    # a qualifier naming no FROM item, an ambiguous column, a repeated alias
    'SELECT "Acct"."Owner" FROM "Account"',
    "SELECT nope.* FROM foo",
    'SELECT t.name FROM foo, "Foo" t WHERE t.id = 1',
    'SELECT id FROM foo, "Foo"',
    'SELECT * FROM foo t, "Foo" t',
    # statements the client runs as several (their text written again from the parse)
    'CREATE TABLE "People" ("Id" integer PRIMARY KEY, "Name" text, n integer)',
    "INSERT INTO \"People\" VALUES (1, 'ann', 1), (2, 'bob', 2)",
    'UPDATE "People" SET "Name" = upper("Name") WHERE "Id" = 1',
    'UPDATE "People" SET n = n * 3 + length("Name")',
    'INSERT INTO "People" VALUES (1, \'x\', 5) ON CONFLICT ("Id") '
    'DO UPDATE SET n = "People".n + EXCLUDED.n RETURNING "Id", n',
    'SELECT * FROM "People" ORDER BY "Id"',
    # a correlated scalar subquery, ordered by its position
    'SELECT (SELECT max(val) FROM "Foo" WHERE "Foo".id >= foo.id) FROM foo ORDER BY 1',
    'SELECT id, (SELECT count(*) FROM "Foo" f WHERE f.id >= foo.id) FROM foo ORDER BY 2, 1',
]


def _outcome(conn: Any, sql: str) -> tuple[Any, ...]:
    cur = conn.cursor()
    try:
        cur.execute(sql)
    except psycopg.Error as exc:
        return ("error", exc.sqlstate, str(exc).splitlines()[0] if exc.sqlstate != "0A000" else "")
    rows = cur.fetchall() if cur.description is not None else None
    return ("ok", rows, [d.name for d in cur.description or []])


@pytest.fixture(scope="module", params=["", ICU], ids=["C", "ICU"])
def pair(
    request: pytest.FixtureRequest, new_database: Callable[..., str], master_key: MasterKey
) -> Iterator[Pair]:
    with plain_and_encrypted(
        new_database, master_key, "quoted_names", {}, [], {}, locale=request.param
    ) as pair:
        yield pair


def test_names_are_told_apart_as_postgresql_tells_them(pair: Pair) -> None:
    assert script_differences(pair, SCRIPT, judged=_outcome) == []


def test_names_as_written_reach_row_factories_and_errors(pair: Pair) -> None:
    plain, enc = pair
    for conn in (plain, enc):
        conn.execute('CREATE TABLE "Person" ("FirstName" text, "lastName" text)')
        conn.execute("INSERT INTO \"Person\" VALUES ('Ann', 'Lee')")
    for conn in (plain, enc):
        cur = conn.cursor(row_factory=dict_row)
        cur.execute('SELECT "FirstName", "lastName" AS "Last" FROM "Person"')
        assert cur.fetchall() == [{"FirstName": "Ann", "Last": "Lee"}]
    # a server error's fields, not only its message
    for conn in (plain, enc):
        conn.execute('ALTER TABLE "Person" ADD CONSTRAINT "NameKey" UNIQUE ("FirstName")')
    with pytest.raises(psycopg.errors.UniqueViolation) as dup:
        enc.execute("INSERT INTO \"Person\" VALUES ('Ann', 'Other')")
    assert dup.value.diag.constraint_name == "NameKey"
    assert MARK not in str(dup.value)
    assert "NameKey" in str(dup.value)


def test_folded_forms() -> None:
    """The form's promises (names.py): its own lower case, one per name, names without
    capitals unchanged, and the name as written shown again."""
    names = ["foo", "Foo", "FOO", "a", "A", MARK, f"{MARK}65{MARK}", "Äpfel", "ǅ", "x y", ""]
    forms = {n: folded(n, True) for n in names}
    assert len(set(forms.values())) == len(names)
    for name, form in forms.items():
        assert form == form.lower()
        assert shown(form) == name
    assert folded("foo", True) == "foo" and folded("FOO", False) == "foo"
    assert folded("ÄPFEL", False) == folded("Äpfel", True)
    assert relation_named('public."Acct_Id_seq"') == folded("Acct_Id_seq", True)
    assert relation_named("T_ID_SEQ") == "t_id_seq"
    assert relation_named('"a""b"') == 'a"b'


def test_copy_names_as_written(pair: Pair) -> None:
    plain, enc = pair
    for conn in (plain, enc):
        conn.execute('CREATE TABLE "Sheet" ("Col" integer, col text)')
        conn.execute("INSERT INTO \"Sheet\" VALUES (1, 'a')")
    out = []
    for conn in (plain, enc):
        with conn.cursor().copy(
            'COPY "Sheet" ("Col", col) TO STDOUT WITH (FORMAT csv, HEADER)'
        ) as copy:
            out.append(b"".join(bytes(chunk) for chunk in copy))
    assert out[0] == out[1] == b"Col,col\n1,a\n"


# names an ORDER BY or a WHERE resolves: an output column's name first (ORDER BY), a name
# two FROM items share is 42702 (the server path refused them and the client's engine
# said 42703)
RESOLVED = [
    "CREATE TABLE ra (id integer PRIMARY KEY, x integer, s text)",
    "CREATE TABLE rb (id integer PRIMARY KEY, aid integer, y integer, s text)",
    "INSERT INTO ra VALUES (1, 10, 'p'), (2, 20, 'q'), (3, NULL, NULL)",
    "INSERT INTO rb VALUES (1, 1, 5, 'p'), (2, 1, 6, 'z'), (3, 4, 7, NULL), (4, NULL, 8, 'q')",
    "SELECT a.id FROM ra a JOIN rb b ON a.id = b.aid ORDER BY id",
    "SELECT a.id, b.s FROM ra a JOIN rb b ON a.id = b.aid ORDER BY s",
    "SELECT b.id AS id FROM ra a JOIN rb b ON a.id = b.aid ORDER BY id DESC",
    "SELECT a.s FROM ra a JOIN rb b ON a.id = b.aid GROUP BY a.s ORDER BY s",
    "SELECT a.id, count(*) FROM ra a JOIN rb b ON a.id = b.aid GROUP BY a.id ORDER BY id",
    "SELECT id FROM ra a JOIN rb b USING (id) ORDER BY id",
    "SELECT id FROM ra a, rb b",
    "SELECT a.id FROM ra a, rb b WHERE s = 'p'",
    "SELECT a.id AS k FROM ra a JOIN rb b ON a.id = b.aid ORDER BY k, id",
    "SELECT a.id FROM ra a JOIN rb b ON a.id = b.aid WHERE id > 0",
    "SELECT s FROM ra a JOIN rb b ON a.id = b.aid GROUP BY s",
]


def test_names_resolved_as_postgresql_resolves_them(pair: Pair) -> None:
    assert script_differences(pair, RESOLVED, judged=_outcome) == []
