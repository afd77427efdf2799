"""VACUUM, ANALYZE, CLUSTER, REINDEX and LOCK through the client: the application's
names, the server's tables.

``VACUUM [(options) | FULL FREEZE VERBOSE ANALYZE] [table [(columns)], ...]`` and
``ANALYZE [(options) | VERBOSE] [table [(columns)], ...]`` run as written with each table
named by its anonymized name and each column by its stored onion columns (a column's
statistics are its onions').  Without a table they run over the whole database, as
written.  ``CLUSTER [(options) | VERBOSE] [table [USING index]]`` orders the stored table
by one of the server's indexes of the application's index (its Ord onions' where it has
one); ``REINDEX [(options)] {INDEX | TABLE | SCHEMA | DATABASE | SYSTEM} [CONCURRENTLY]
[name]`` rebuilds the server's indexes of the index or table named (several commands
where one application index is several server indexes, one per onion); ``LOCK [TABLE]
[ONLY] name [*] [, ...] [IN mode MODE] [NOWAIT]`` locks the stored tables.  They reveal
nothing: the server already holds every table, column and index they name.
"""

from __future__ import annotations

import re
from typing import Any

import psycopg
from psycopg import sql

from ..catalog.metadata import Catalog
from ..errors import UndefinedTable, UnsupportedQuery
from .indexes import server_index_names

_COMMAND = re.compile(r"\s*(VACUUM|ANALY[SZ]E|CLUSTER|REINDEX|LOCK)\b", re.IGNORECASE)
_WORDS = {"FULL", "FREEZE", "VERBOSE", "ANALYZE", "ANALYSE", "SKIP_LOCKED"}
_TOKEN = re.compile(r'\s*("(?:[^"]|"")*"|[A-Za-z_][A-Za-z0-9_$]*|[(),.;]|\S)')


def is_maintenance(text: str) -> bool:
    return _COMMAND.match(text) is not None


def server_commands(text: str, catalog: Catalog, pg: psycopg.Connection[Any]) -> list[sql.Composed]:
    """The command with the application's tables, columns and indexes replaced by the
    server's: one command, or (REINDEX INDEX) one per server index, to run in order."""
    tokens = [t for t in _TOKEN.findall(text) if t]
    while tokens and tokens[-1] == ";":
        tokens.pop()
    head = [tokens.pop(0).upper()]
    if tokens and tokens[0] == "(":  # (options): copied as written
        close = tokens.index(")") if ")" in tokens else len(tokens)
        head.append(" ".join(tokens[: close + 1]))
        del tokens[: close + 1]
    if head[0] == "CLUSTER":
        return [_cluster(head, tokens, catalog, pg)]
    if head[0] == "REINDEX":
        return _reindex(head, tokens, catalog, pg)
    if head[0] == "LOCK":
        return [_lock(head, tokens, catalog)]
    return [_vacuum_or_analyze(head, tokens, catalog)]


def _vacuum_or_analyze(head: list[str], tokens: list[str], catalog: Catalog) -> sql.Composed:
    while tokens and tokens[0].upper() in _WORDS:
        head.append(tokens.pop(0).upper())
    targets: list[sql.Composable] = []
    while tokens:
        meta = catalog.table(_qualified_name(tokens))
        target: sql.Composable = sql.Identifier(meta.anon)
        if tokens[:1] == ["("]:
            tokens.pop(0)
            stored: list[sql.Composable] = []
            while tokens and tokens[0] != ")":
                col = meta.column(_name(tokens))
                stored += [sql.Identifier(oc.anon) for oc in col.onions.values()]
                if tokens[:1] == [","]:
                    tokens.pop(0)
            if not tokens:
                raise UnsupportedQuery("unbalanced column list", head[0])
            tokens.pop(0)
            target = sql.SQL("{} ({})").format(target, sql.SQL(", ").join(stored))
        targets.append(target)
        if tokens[:1] == [","]:
            tokens.pop(0)
        elif tokens:
            raise UnsupportedQuery(f"{head[0]} {' '.join(tokens)}", head[0])
    command = sql.SQL(" ".join(head))
    if not targets:
        return sql.Composed([command])
    return sql.SQL("{} {}").format(command, sql.SQL(", ").join(targets))


def _cluster(
    head: list[str], tokens: list[str], catalog: Catalog, pg: psycopg.Connection[Any]
) -> sql.Composed:
    if tokens[:1] and tokens[0].upper() == "VERBOSE":
        head.append(tokens.pop(0).upper())
    command = sql.SQL(" ".join(head))
    if not tokens:  # every table clustered before, as written
        return sql.Composed([command])
    meta = catalog.table(_qualified_name(tokens))
    target = sql.SQL("{} {}").format(command, sql.Identifier(meta.anon))
    if not tokens:
        return target
    if tokens[0].upper() != "USING" or len(tokens) < 2:
        raise UnsupportedQuery(f"CLUSTER ... {' '.join(tokens)}", "CLUSTER")
    tokens.pop(0)
    index = _name(tokens)
    try:
        servers = _server_indexes(index, catalog, meta.name, pg)
    except UndefinedTable:
        raise psycopg.errors.UndefinedObject(
            f'index "{index}" for table "{meta.name}" does not exist'
        ) from None
    if tokens:
        raise UnsupportedQuery(f"CLUSTER ... {' '.join(tokens)}", "CLUSTER")
    # (of an index over several onions, the last: the Ord onions', whose order is the
    # one a CLUSTER is made for)
    return sql.SQL("{} USING {}").format(target, sql.Identifier(servers[-1]))


def _reindex(
    head: list[str], tokens: list[str], catalog: Catalog, pg: psycopg.Connection[Any]
) -> list[sql.Composed]:
    kind = tokens.pop(0).upper() if tokens else ""
    if kind not in ("INDEX", "TABLE", "SCHEMA", "DATABASE", "SYSTEM"):
        raise psycopg.errors.SyntaxError(f'syntax error at or near "{kind}"')
    head.append(kind)
    if tokens[:1] and tokens[0].upper() == "CONCURRENTLY":
        head.append(tokens.pop(0).upper())
    command = sql.SQL(" ".join(head))
    if kind in ("SCHEMA", "DATABASE", "SYSTEM"):  # (names the server's own: as written)
        return [sql.SQL("{} {}").format(command, sql.SQL(" ".join(tokens)))]
    name = _qualified_name(tokens)
    if tokens:
        raise UnsupportedQuery(f"REINDEX ... {' '.join(tokens)}", "REINDEX")
    if kind == "TABLE":
        return [sql.SQL("{} {}").format(command, sql.Identifier(catalog.table(name).anon))]
    return [
        sql.SQL("{} {}").format(command, sql.Identifier(server))
        for server in _server_indexes(name, catalog, None, pg)
    ]


def _lock(head: list[str], tokens: list[str], catalog: Catalog) -> sql.Composed:
    """LOCK [TABLE] [ONLY] name [*] [, ...] [IN mode MODE] [NOWAIT], the tables named by
    the server's names, the rest as written (a lock mode is words of the grammar)."""
    if tokens[:1] and tokens[0].upper() == "TABLE":
        head.append(tokens.pop(0).upper())
    if tokens[:1] and tokens[0].upper() == "ONLY":
        head.append(tokens.pop(0).upper())
    tables: list[sql.Composable] = []
    while tokens and tokens[0].upper() not in ("IN", "NOWAIT"):
        tables.append(sql.Identifier(catalog.table(_qualified_name(tokens)).anon))
        if tokens[:1] == ["*"]:
            tokens.pop(0)
        if tokens[:1] == [","]:
            tokens.pop(0)
    if not tables:
        raise psycopg.errors.SyntaxError("syntax error at end of input")
    rest = [t.upper() for t in tokens]
    if any(not word.isalpha() for word in rest):
        raise psycopg.errors.SyntaxError(f'syntax error at or near "{tokens[0]}"')
    return sql.SQL("{} {} {}").format(
        sql.SQL(" ".join(head)), sql.SQL(", ").join(tables), sql.SQL(" ".join(rest))
    )


def _server_indexes(
    name: str, catalog: Catalog, table: str | None, pg: psycopg.Connection[Any]
) -> list[str]:
    """The server's indexes of the application's index ``name`` (of ``table``, where
    given): a key constraint's one index, or one per onion of an index made by CREATE
    INDEX (indexes.py), in the order made."""
    for meta in catalog.tables.values():
        if table is not None and meta.name != table:
            continue
        for anon, constraint in meta.constraints.items():
            if constraint == name:
                return [anon]
        for idx in meta.indexes:
            if idx.name == name:
                return server_index_names(pg, meta, idx)
    raise UndefinedTable(f'index "{name}" does not exist')


def _qualified_name(tokens: list[str]) -> str:
    """A table or index name, schema-qualified or not (the application's relations are
    in the connection's schema)."""
    name = _name(tokens)
    if tokens[:1] == ["."]:
        tokens.pop(0)
        name = _name(tokens)
    return name


def _name(tokens: list[str]) -> str:
    if not tokens or not (tokens[0][0].isalpha() or tokens[0][0] in '_"'):
        raise UnsupportedQuery(f"a table or column name expected: {' '.join(tokens)}", "VACUUM")
    word = tokens.pop(0)
    return word[1:-1].replace('""', '"') if word.startswith('"') else word.lower()


__all__ = ["is_maintenance", "server_commands"]
