"""Statements about the database's objects rather than its rows, as a dump writes them.

* **Passed to the server** as written (they name no table and carry no value):
  ``CREATE/ALTER/DROP EXTENSION``, ``COMMENT ON EXTENSION``, ``ALTER SCHEMA public OWNER
  TO``, ``GRANT``/``REVOKE`` on a schema.
* **Passed with the server's names**: ``ALTER TABLE | SEQUENCE | VIEW name OWNER TO role``
  -- the table's or sequence's keyed name on the server; a view has no server object
  (views.py), so only the role is checked, as PostgreSQL checks it.
* **Refused by name** (``UnsupportedQuery``, 0A000): code the server would run --
  functions, procedures, aggregates, triggers, rules, event triggers, operators, casts --
  since the server holds only ciphertexts and cannot compute over the application's
  columns; comments on tables and columns (application text the client keeps none of).

Each statement is recognised by its leading words (comments skipped), before it is
parsed: a function's body is in no dialect the parser reads.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql

from ..catalog.metadata import Catalog
from ..errors import UndefinedTable, UnsupportedQuery
from ..syntax.sqltext import first_token_start, leading_words

# code the server would run over the application's columns
_SERVER_CODE: Final = {
    "FUNCTION": "functions",
    "PROCEDURE": "procedures",
    "AGGREGATE": "aggregates",
    "TRIGGER": "triggers",
    "RULE": "rules",
    "OPERATOR": "operators",
    "CAST": "casts",
}
_CODE_REASON: Final = (
    "{what} run on the server, which holds only ciphertexts of the application's columns: "
    "the client cannot run them (PL/pgSQL and SQL functions over encrypted columns, "
    "triggers, rules); compute in the application or in the statements it sends"
)
_OWNER_RE = re.compile(
    r"(?is)ALTER\s+(TABLE|SEQUENCE|VIEW|MATERIALIZED\s+VIEW)\s+(?:ONLY\s+)?"
    r"((?:\"(?:[^\"]|\"\")+\"|[\w$]+)(?:\s*\.\s*(?:\"(?:[^\"]|\"\")+\"|[\w$]+))?)\s+"
    r"OWNER\s+TO\s+(\"(?:[^\"]|\"\")+\"|[\w$]+)\s*;?\s*\Z"
)
_SCHEMA_OWNER_RE = re.compile(r"(?is)ALTER\s+SCHEMA\s+\"?public\"?\s+OWNER\s+TO\s+")
# the dot between a schema and a name (not one inside a quoted name)
_PARTS_RE = re.compile(r"\s*\.\s*(?=(?:[^\"]*\"[^\"]*\")*[^\"]*\Z)")
_ROLE_WORDS: Final = frozenset({"CURRENT_USER", "SESSION_USER", "CURRENT_ROLE"})

Action = Callable[[psycopg.Connection[Any]], None]


def _unquoted(name: str) -> str:
    name = name.strip()
    if name.startswith('"'):
        return name[1:-1].replace('""', '"')
    return name.lower()


def check_role(conn: psycopg.Connection[Any], role: str) -> None:
    if role.upper() in _ROLE_WORDS and not role.startswith('"'):
        return
    name = _unquoted(role)
    if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone() is None:
        raise pg_errors.UndefinedObject(f'role "{name}" does not exist')


def _owner_action(catalog: Catalog, text: str) -> Action | None:
    m = _OWNER_RE.match(text)
    if m is None:
        return None
    kind = " ".join(m.group(1).upper().split())
    qualified = [
        _unquoted(p) for p in re.split(r"\s*\.\s*(?=(?:[^\"]*\"[^\"]*\")*[^\"]*\Z)", m.group(2))
    ]
    if len(qualified) == 2 and qualified[0] != "public":  # (the client's tables are there)
        raise pg_errors.InvalidSchemaName(f'schema "{qualified[0]}" does not exist')
    name, role = qualified[-1], m.group(3)
    table, sequence = catalog.tables.get(name), catalog.sequences.get(name)
    if table is not None or sequence is not None:
        anon = table.anon if table is not None else sequence.anon  # type: ignore[union-attr]
        server_kind = "TABLE" if table is not None else "SEQUENCE"
        role_sql = sql.SQL(role) if role.upper() in _ROLE_WORDS else sql.Identifier(_unquoted(role))

        def run(conn: psycopg.Connection[Any]) -> None:
            check_role(conn, role)
            conn.execute(
                sql.SQL("ALTER {} {} OWNER TO {}").format(
                    sql.SQL(server_kind), sql.Identifier(anon), role_sql
                )
            )

        return run
    if name in catalog.views and kind != "SEQUENCE":
        return lambda conn: check_role(conn, role)
    raise UndefinedTable(f'relation "{name}" does not exist')


def _passed(text: str) -> Action:
    statement = text

    def run(conn: psycopg.Connection[Any]) -> None:
        conn.execute(statement.encode())

    return run


def route(text: str, catalog: Catalog) -> Action | None:
    """What to do with a statement about objects (see the module's docstring), or None
    for any other statement; a refused one raises."""
    words = leading_words(text, 4)
    if not words or words[0] not in ("CREATE", "ALTER", "DROP", "COMMENT", "GRANT", "REVOKE"):
        return None
    body = text[first_token_start(text) :]
    head = words[1:]
    if head[:2] == ["OR", "REPLACE"]:
        head = head[2:]
    if head[:1] == ["CONSTRAINT"] or head[:1] == ["EVENT"]:
        head = ["TRIGGER"]
    if words[0] in ("CREATE", "ALTER", "DROP") and head[:1] and head[0] in _SERVER_CODE:
        what = _SERVER_CODE[head[0]]
        raise UnsupportedQuery(
            f"{words[0]} {head[0]}: " + _CODE_REASON.format(what=what.capitalize()),
            f"{words[0]} {head[0]}",
        )
    if head[:1] == ["EXTENSION"] or (words[0] == "COMMENT" and words[2:3] == ["EXTENSION"]):
        return _passed(body)
    if words[0] == "COMMENT":
        raise UnsupportedQuery(
            "COMMENT ON: comments are application text, and the client keeps none",
            "COMMENT ON",
        )
    if words[0] in ("GRANT", "REVOKE"):
        if re.search(r"(?is)\bON\s+SCHEMA\b", body):
            return _passed(body)
        raise UnsupportedQuery(
            f"{words[0]} on tables: privileges are not mapped to the server's tables yet",
            words[0],
        )
    if words[0] == "ALTER" and _SCHEMA_OWNER_RE.match(body):
        return _passed(body)
    if words[0] == "ALTER" and re.search(r"(?is)\bOWNER\s+TO\b", body):
        return _owner_action(catalog, body)
    return None


__all__ = ["Action", "check_role", "route"]
