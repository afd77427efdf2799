"""VACUUM and ANALYZE through the client: the application's names, the server's tables.

``VACUUM [(options) | FULL FREEZE VERBOSE ANALYZE] [table [(columns)], ...]`` and
``ANALYZE [(options) | VERBOSE] [table [(columns)], ...]`` run as written with each table
named by its anonymized name and each column by its stored onion columns (a column's
statistics are its onions').  Without a table they run over the whole database, as
written.  They reveal nothing: the server already holds every table and column it names.
"""

from __future__ import annotations

import re

from psycopg import sql

from ..catalog.metadata import Catalog
from ..errors import UnsupportedQuery

_COMMAND = re.compile(r"\s*(VACUUM|ANALY[SZ]E)\b", re.IGNORECASE)
_WORDS = {"FULL", "FREEZE", "VERBOSE", "ANALYZE", "ANALYSE", "SKIP_LOCKED"}
_TOKEN = re.compile(r'\s*("(?:[^"]|"")*"|[A-Za-z_][A-Za-z0-9_$]*|[(),.;]|\S)')


def is_maintenance(text: str) -> bool:
    return _COMMAND.match(text) is not None


def server_command(text: str, catalog: Catalog) -> sql.Composed:
    """The command with the application's tables and columns replaced by the server's."""
    tokens = [t for t in _TOKEN.findall(text) if t]
    while tokens and tokens[-1] == ";":
        tokens.pop()
    head = [tokens.pop(0).upper()]
    if tokens and tokens[0] == "(":  # (options): copied as written
        close = tokens.index(")") if ")" in tokens else len(tokens)
        head.append(" ".join(tokens[: close + 1]))
        del tokens[: close + 1]
    while tokens and tokens[0].upper() in _WORDS:
        head.append(tokens.pop(0).upper())
    targets: list[sql.Composable] = []
    while tokens:
        name = _name(tokens)
        if "." in tokens[:1]:  # schema-qualified: the tables are in the connection's schema
            tokens.pop(0)
            name = _name(tokens)
        meta = catalog.table(name)
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


def _name(tokens: list[str]) -> str:
    if not tokens or not (tokens[0][0].isalpha() or tokens[0][0] in '_"'):
        raise UnsupportedQuery(f"a table or column name expected: {' '.join(tokens)}", "VACUUM")
    word = tokens.pop(0)
    return word[1:-1].replace('""', '"') if word.startswith('"') else word.lower()


__all__ = ["is_maintenance", "server_command"]
