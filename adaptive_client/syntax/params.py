"""Placeholders: from the application's ``%s`` / ``%(name)s`` to named ones sqlglot keeps.

Positional ``%s`` become ``%(u0)s``, ``%(u1)s``, ... in textual order (so their numbers
match the application's parameter sequence), found with sqlglot's tokenizer so that
``%s`` inside string literals, quoted identifiers and comments is left alone.  ``%%``
(psycopg's escaped percent) becomes ``%``.  The reverse, :func:`escape_percent`, is
applied to the SQL the client generates.
"""

from __future__ import annotations

import re

from sqlglot.tokens import TokenType

from ..errors import UnsupportedQuery
from .sqlsyntax import tokenize_generic
from .sqltext import tokenize_error

_GENERATED = re.compile(r"%(?!\(p\d+\)s)")
_FORMATS = frozenset({"s", "t", "b"})  # %s, and psycopg's text and binary placeholders
_QUOTED = frozenset(
    {
        TokenType.STRING,
        TokenType.NATIONAL_STRING,
        TokenType.RAW_STRING,
        TokenType.HEREDOC_STRING,
        TokenType.IDENTIFIER,
    }
)


def normalize_placeholders(sql: str, quoted_percents: bool = False) -> tuple[str, int, bool]:
    """Return (sql with named placeholders, number of positional ones, uses named ones).

    ``quoted_percents``: ``%%`` inside string literals and quoted identifiers becomes
    ``%`` too, as psycopg reads a statement run with parameters (SQLAlchemy doubles
    every ``%`` of the SQL it compiles, in literals and names alike)."""
    if "%" not in sql:
        return sql, 0, False
    try:
        tokens = tokenize_generic(sql)
    except Exception:  # sqlglot raises TokenError: an unterminated string, name or comment
        raise tokenize_error(sql) from None
    out: list[str] = []
    pos = 0
    count = 0
    named = False
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        adjacent = nxt is not None and nxt.start == tok.start + 1
        if quoted_percents and tok.token_type in _QUOTED:
            text = sql[tok.start : tok.end + 1]
            if "%%" in text:
                out.append(sql[pos : tok.start])
                out.append(text.replace("%%", "%"))
                pos = tok.end + 1
            i += 1
            continue
        if tok.token_type is TokenType.MOD and adjacent and nxt is not None:
            # (psycopg's %t and %b ask for a text or binary parameter: one format is the
            # other's value, so they are %s here)
            if nxt.token_type is TokenType.VAR and sql[nxt.start : nxt.end + 1] in _FORMATS:
                out.append(sql[pos : tok.start])
                out.append(f"%(u{count})s")
                count += 1
                pos = nxt.end + 1
                i += 2
                continue
            if nxt.token_type is TokenType.MOD:
                out.append(sql[pos : tok.start])
                out.append("%")
                pos = nxt.end + 1
                i += 2
                continue
            if nxt.token_type is TokenType.L_PAREN:
                named = True
                close = i + 3  # %(name)t, %(name)b: as %(name)s
                if (
                    close + 1 < len(tokens)
                    and tokens[close].token_type is TokenType.R_PAREN
                    and tokens[close + 1].start == tokens[close].end + 1
                    and sql[tokens[close + 1].start : tokens[close + 1].end + 1] in ("t", "b")
                ):
                    out.append(sql[pos : tokens[close + 1].start])
                    out.append("s")
                    pos = tokens[close + 1].end + 1
                    i = close + 2
                    continue
        i += 1
    out.append(sql[pos:])
    if count and named:
        raise UnsupportedQuery(
            "a statement cannot mix %s and %(name)s placeholders", "placeholders"
        )
    return "".join(out), count, named


def escape_percent(sql: str) -> str:
    """Escape every ``%`` that is not one of our generated ``%(pN)s`` placeholders."""
    return _GENERATED.sub("%%", sql)
