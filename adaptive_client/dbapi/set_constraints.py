"""``SET CONSTRAINTS name [, ...] {DEFERRED | IMMEDIATE}`` with the application's
constraint names: sent with the server's (keyed) names of those constraints.

The server knows a table's constraints only by the keyed names the client gave them;
``SET CONSTRAINTS ALL`` passes as written, a name is looked up in the catalog (every
constraint of that name, as PostgreSQL's ``SET CONSTRAINTS`` affects every one it
finds on the path) and a name no table has is PostgreSQL's 42704.
"""

from __future__ import annotations

import re
from typing import Final

from psycopg import errors as pg_errors
from psycopg import sql

from ..catalog.metadata import Catalog
from ..syntax.names import folded

_SET_CONSTRAINTS: Final = re.compile(
    r"(?is)\A\s*SET\s+CONSTRAINTS\s+(.*?)\s+(DEFERRED|IMMEDIATE)\s*;?\s*\Z"
)
_NAME: Final = re.compile(r'\s*(?:"((?:[^"]|"")*)"|([\w$]+))\s*(?:,|\Z)')


def server_form(query: str, catalog: Catalog) -> str | sql.Composable:
    """``query`` with its constraint names the server's; any other statement as it is."""
    m = _SET_CONSTRAINTS.match(query)
    if m is None or m.group(1).strip().upper() == "ALL":
        return query
    wanted = []
    for quoted, bare in _NAME.findall(m.group(1)):
        name = folded(quoted.replace('""', '"'), True) if quoted else folded(bare, False)
        wanted.append((quoted or bare, name))
    by_name: dict[str, list[str]] = {}
    for anon, plain in catalog.constraint_names.items():
        by_name.setdefault(plain, []).append(anon)
    anons = []
    for written, name in wanted:
        if name not in by_name:
            raise pg_errors.UndefinedObject(f'constraint "{written}" does not exist')
        anons += by_name[name]
    return sql.SQL("SET CONSTRAINTS {} {}").format(
        sql.SQL(", ").join(sql.Identifier(a) for a in anons), sql.SQL(m.group(2).upper())
    )


__all__ = ["server_form"]
