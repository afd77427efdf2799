"""Sequences created on their own: ``CREATE SEQUENCE``, ``ALTER SEQUENCE`` (its numbers
and keywords), ``DROP SEQUENCE``, and columns whose default is
``nextval('name'::regclass)`` -- how ``pg_dump`` writes a serial column.

The server holds the sequence under a keyed name (its values are what a serial column's
are: the count of rows drawn, nothing of the data); the name and the columns that draw
from it live in the sealed metadata (``SequenceMeta``).  A column defaulting to it draws
its values as a serial column does (``defaults``: the client draws, then encrypts).
"""

from __future__ import annotations

import re
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql
from sqlglot import exp

from ..adapt.onion_storage import bump_epoch
from ..catalog.defaults import Runtime
from ..catalog.keys import new_key
from ..catalog.metadata import Catalog, SequenceMeta
from ..catalog.sequences import named as sequence_named
from ..catalog.tablespec import numbered_options
from ..errors import DuplicateTable, UndefinedTable, UnsupportedQuery
from ..syntax.names import relation_named
from ..syntax.sqltext import tokenize

# CREATE SEQUENCE options sqlglot reads into SequenceProperties: (argument, SQL words)
_NUMBERED = (
    ("increment", "INCREMENT BY"),
    ("minvalue", "MINVALUE"),
    ("maxvalue", "MAXVALUE"),
    ("start", "START WITH"),
    ("cache", "CACHE"),
)
_WORDS = frozenset({"NO MINVALUE", "NO MAXVALUE", "CYCLE", "NO CYCLE", "NO CACHE"})
_TYPES = {"SMALLINT": "smallint", "INT": "integer", "BIGINT": "bigint"}


def _options(catalog: Catalog, stmt: exp.Create) -> list[str]:
    """The sequence's options as SQL of numbers and keywords only (nothing else reaches
    the server)."""
    out = []
    as_type = stmt.args.get("expression")
    if isinstance(as_type, exp.DataType):
        name = _TYPES.get(as_type.this.name)
        written = as_type.args.get("kind")
        if (
            as_type.this is exp.DataType.Type.USERDEFINED
            and isinstance(written, exp.Identifier)
            and catalog.user_type(written.name) is None
        ):
            raise pg_errors.UndefinedObject(f'type "{written.name}" does not exist')
        if name is None:
            raise pg_errors.InvalidParameterValue(
                "sequence type must be smallint, integer, or bigint"
            )
        out.append(f"AS {name}")
    props = stmt.args.get("properties")
    for prop in props.expressions if props is not None else []:
        if not isinstance(prop, exp.SequenceProperties):
            raise UnsupportedQuery(f"sequence option {prop.sql('postgres')}", "CREATE SEQUENCE")
        out += numbered_options(prop, _NUMBERED, "sequence")
        for option in prop.args.get("options") or []:
            word = " ".join(option.name.upper().split())
            if word not in _WORDS:
                raise UnsupportedQuery(f"sequence option {word}", "CREATE SEQUENCE")
            out.append(word)
        if prop.args.get("owned") is not None:
            raise UnsupportedQuery("CREATE SEQUENCE ... OWNED BY", "OWNED BY")
    return out


def create(conn: psycopg.Connection[Any], catalog: Catalog, stmt: exp.Create) -> None:
    name = stmt.this.name.lower()
    if catalog.has_relation(name):
        if stmt.args.get("exists"):
            return
        raise DuplicateTable(f'relation "{name}" already exists')
    # a name of its own for each sequence ever created (as for a serial column's)
    anon = catalog.root.anonymize("sequence", name, new_key(8).hex())
    conn.execute(
        sql.SQL("CREATE SEQUENCE {} {}").format(
            sql.Identifier(anon), sql.SQL(" ".join(_options(catalog, stmt)))
        )
    )
    meta = SequenceMeta(name, anon)
    catalog.write_table(conn, meta, new=True)
    catalog.sequences[name] = meta
    bump_epoch(conn)  # (other sessions read the catalog again: a new name)


def drop(conn: psycopg.Connection[Any], catalog: Catalog, stmt: exp.Drop, runtime: Runtime) -> None:
    named = stmt.args.get("tables") or [stmt.this]
    for table in named:
        _drop_one(conn, catalog, table.name.lower(), stmt, runtime)


def _drop_one(
    conn: psycopg.Connection[Any], catalog: Catalog, name: str, stmt: exp.Drop, runtime: Runtime
) -> None:
    meta = catalog.sequences.get(name)
    if meta is None:
        if stmt.args.get("exists"):
            return
        owner = next(
            (
                (table.name, col.name)
                for table in catalog.tables.values()
                for col in table.columns.values()
                if col.sequence == name
            ),
            None,
        )
        if owner is not None:  # a serial column's own sequence
            raise pg_errors.DependentObjectsStillExist(
                f"cannot drop sequence {name} because other objects depend on it\n"
                f"DETAIL:  default value for column {owner[1]} of table {owner[0]} depends "
                f"on sequence {name}"
            )
        if catalog.has_relation(name):
            raise pg_errors.WrongObjectType(f'"{name}" is not a sequence')
        raise UndefinedTable(f'sequence "{name}" does not exist')
    users = [
        f"default value for column {col.name} of table {table.name}"
        for table in catalog.tables.values()
        for col in table.columns.values()
        if col.sequence_anon == meta.anon
    ]
    if users:
        if stmt.args.get("cascade"):
            raise UnsupportedQuery("DROP SEQUENCE ... CASCADE of a column's default", "CASCADE")
        raise pg_errors.DependentObjectsStillExist(
            f"cannot drop sequence {name} because other objects depend on it\n"
            f"DETAIL:  {users[0]} depends on sequence {name}"
        )
    conn.execute(sql.SQL("DROP SEQUENCE {}").format(sql.Identifier(meta.anon)))
    catalog.delete_table(conn, meta)
    del catalog.sequences[name]
    bump_epoch(conn)
    runtime.reset(meta.anon)
    runtime.dropped(name)


_ALTER_RE = re.compile(
    r"(?is)\s*ALTER\s+SEQUENCE\s+(IF\s+EXISTS\s+)?"
    r"((?:\"(?:[^\"]|\"\")+\"|[\w$]+)(?:\s*\.\s*(?:\"(?:[^\"]|\"\")+\"|[\w$]+))?)\s+(.*?)\s*;?\s*\Z"
)
# the words of ALTER SEQUENCE's options that take numbers or nothing (the server reads
# them; AS names one of the sequence types)
_ALTER_WORDS = frozenset(
    {"AS", "INCREMENT", "BY", "MINVALUE", "MAXVALUE", "NO", "START", "WITH", "RESTART",
     "CACHE", "CYCLE", "SMALLINT", "INTEGER", "INT", "BIGINT", "INT2", "INT4", "INT8"}
)  # fmt: skip


def is_alter(text: str) -> bool:
    """``ALTER SEQUENCE name <options>`` (an ``OWNER TO`` is server_commands')."""
    m = _ALTER_RE.match(text)
    return m is not None and not re.match(r"(?is)OWNER\s+TO\b", m.group(3))


_RENAME_RE = re.compile(r"(?is)RENAME\s+TO\s+(\"(?:[^\"]|\"\")+\"|[\w$]+)")


def alter(conn: psycopg.Connection[Any], catalog: Catalog, text: str, runtime: Runtime) -> None:
    """``ALTER SEQUENCE`` of the numbers and keywords of its options (RESTART [WITH n],
    INCREMENT BY n, MINVALUE, MAXVALUE, START, CACHE, [NO] CYCLE, AS type): run on the
    sequence's server name, the values the session drew ahead given back first
    (``Runtime.give_back``); ``RENAME TO``: in the sealed metadata only.  OWNED BY and SET
    SCHEMA are refused."""
    m = _ALTER_RE.match(text)
    assert m is not None
    options = m.group(3)
    renamed = _RENAME_RE.fullmatch(options)
    words = []
    for token in tokenize(options) if renamed is None else ():
        word = token.text.upper()
        if not (word in _ALTER_WORDS or token.text.isdigit() or word in ("-", "+")):
            raise UnsupportedQuery(f"ALTER SEQUENCE ... {options}", "ALTER SEQUENCE")
        words.append(token.text)
    name = relation_named(m.group(2))
    try:
        plain, anon = sequence_named(catalog, name)
    except pg_errors.UndefinedTable:
        if m.group(1):
            return
        raise
    if anon is None:
        raise UndefinedTable(f'relation "{name}" does not exist')
    if renamed is not None:
        _rename(conn, catalog, plain, relation_named(renamed.group(1)), runtime)
        return
    alter_server_sequence(conn, runtime, anon, " ".join(words))


def alter_server_sequence(
    conn: psycopg.Connection[Any], runtime: Runtime, anon: str, options: str
) -> None:
    """``ALTER SEQUENCE`` of the server's sequence ``anon`` with ``options`` (numbers and
    keywords only): the values this session drew ahead given back first, so that the
    options apply from the last value handed out, and its drawn block void after."""
    runtime.give_back(anon)
    conn.execute(sql.SQL("ALTER SEQUENCE {} {}").format(sql.Identifier(anon), sql.SQL(options)))
    runtime.reset(anon)


def _rename(
    conn: psycopg.Connection[Any], catalog: Catalog, old: str, new: str, runtime: Runtime
) -> None:
    """The sequence ``old`` (one of its own, or a serial or identity column's) known as
    ``new`` from now on: the columns drawing from it name it so; the server's sequence
    keeps its name."""
    if catalog.has_relation(new):
        raise DuplicateTable(f'relation "{new}" already exists')
    own = catalog.sequences.pop(old, None)
    if own is not None:
        own.name = new
        catalog.write_table(conn, own, new=False)
        catalog.sequences[new] = own
    for table in catalog.tables.values():
        drawing = [col for col in table.columns.values() if col.sequence == old]
        for col in drawing:
            col.sequence = new
        if drawing:
            catalog.write_table(conn, table, new=False)
    runtime.renamed(old, new)
    bump_epoch(conn)


def named(catalog: Catalog, name: str) -> SequenceMeta:
    """The sequence a column's ``DEFAULT nextval('name')`` draws from (42P01 if none)."""
    meta = catalog.sequences.get(name.lower().removeprefix("public."))
    if meta is None:
        raise UndefinedTable(f'relation "{name}" does not exist')
    return meta


__all__ = ["alter", "alter_server_sequence", "create", "drop", "is_alter", "named"]
