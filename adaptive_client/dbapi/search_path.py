"""The application's ``search_path``, with the client's own schema kept on it.

The client's tables live on the server under keyed names in the ``public`` schema, and
the statements it writes name them unqualified.  An application (a ``pg_dump`` script
first of all) may set ``search_path`` to something without ``public`` -- ``''``, so that
every name must be qualified.  The setting is passed to the server with ``public``
appended where it is missing, so that the client's statements still find its tables;
the application's own names are resolved by the client, where ``public.t`` and ``t``
are the same table (``sqltext``).  ``SHOW search_path`` shows the path the server uses,
``public`` included.
"""

from __future__ import annotations

import re
from typing import Final

from sqlglot import exp

OWN_SCHEMA: Final = "public"

# SET [SESSION | LOCAL] search_path {TO | =} value: the value's text
_SET_RE = re.compile(
    r"(?is)\A(\s*SET\s+(?:SESSION\s+|LOCAL\s+)?search_path\s*(?:TO|=)\s*)(.*?)(\s*;?\s*)\Z"
)
_NAME_RE = re.compile(r'"((?:[^"]|"")*)"|([^\s,]+)')


def _names(value: str) -> list[str]:
    """The schema names of a search_path value as SET reads them (quoted or not)."""
    out = []
    for quoted, bare in _NAME_RE.findall(value):
        out.append(quoted.replace('""', '"') if quoted else bare.strip("'").lower())
    return out


def kept_in_set(query: str) -> str:
    """A ``SET search_path`` statement with the client's schema appended where the value
    lacks it; any other statement unchanged."""
    m = _SET_RE.match(query)
    if m is None:
        return query
    value = m.group(2)
    if value.strip().upper() == "DEFAULT" or OWN_SCHEMA in _names(value):
        return query
    return f"{m.group(1)}{value}, {OWN_SCHEMA}{m.group(3)}"


def _search_path_calls(stmt: exp.Expression) -> list[exp.Anonymous]:
    """The ``set_config('search_path', value, local)`` calls of ``stmt``."""
    return [
        call
        for call in stmt.find_all(exp.Anonymous)
        if call.name.lower() == "set_config"
        and len(call.expressions) == 3
        and isinstance(call.expressions[0], exp.Literal)
        and call.expressions[0].name.lower() == "search_path"
    ]


def kept_in_set_config(stmt: exp.Expression) -> exp.Expression | None:
    """``stmt`` with each ``set_config('search_path', value, local)`` rewritten so that
    the value keeps the client's schema (a copy: the parse cache's tree stays as it is);
    None where it sets no search_path."""
    if not _search_path_calls(stmt):
        return None
    stmt = stmt.copy()
    for call in _search_path_calls(stmt):
        value = call.expressions[1]
        # (the value's own names decide at run time: it may be a parameter)
        kept = exp.Case(
            ifs=[
                exp.If(
                    this=exp.RegexpILike(
                        this=value.copy(),
                        expression=exp.Literal.string(rf"(^|,)\s*{OWN_SCHEMA}\s*(,|$)"),
                    ),
                    true=value.copy(),
                )
            ],
            default=exp.Anonymous(  # (PostgreSQL's concat_ws, which skips a NULL)
                this="concat_ws",
                expressions=[
                    exp.Literal.string(", "),
                    exp.Nullif(this=value.copy(), expression=exp.Literal.string("")),
                    exp.Literal.string(OWN_SCHEMA),
                ],
            ),
        )
        value.replace(kept)
    return stmt
