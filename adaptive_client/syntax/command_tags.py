"""The command tag PostgreSQL gives a statement (``INSERT 0 2``, ``UPDATE 1``, ``CREATE
TABLE``): psycopg's ``cursor.statusmessage``.

The client may run a statement as several of its own (a read and a write, the DDL of a
table's onions), so the tag of the application's statement is derived from the
statement itself, as PostgreSQL's ``CreateCommandTag`` names it, and from its row
count: its leading keywords, past a ``WITH`` clause's queries.
"""

from __future__ import annotations

from typing import Final

from sqlglot.tokens import TokenType

from .sqlsyntax import tokenize

# statements whose tag carries the rows they processed, by their first keyword
_COUNTED: Final = {
    "SELECT": "SELECT {}",
    "VALUES": "SELECT {}",
    "TABLE": "SELECT {}",
    "INSERT": "INSERT 0 {}",
    "UPDATE": "UPDATE {}",
    "DELETE": "DELETE {}",
    "MERGE": "MERGE {}",
    "COPY": "COPY {}",
    "FETCH": "FETCH {}",
    "MOVE": "MOVE {}",
}
# one-word tags where the first keyword alone does not give the tag
_RENAMED: Final = {
    "END": "COMMIT",
    "ABORT": "ROLLBACK",
    "START": "START TRANSACTION",
    "ANALYSE": "ANALYZE",
}
# words between CREATE and the object's kind that the tag leaves out
_CREATE_MODIFIERS: Final = frozenset(
    {"OR", "REPLACE", "TEMP", "TEMPORARY", "UNLOGGED", "UNIQUE", "GLOBAL", "LOCAL",
     "MATERIALIZED", "RECURSIVE", "TRUSTED", "PROCEDURAL", "DEFAULT"}
)  # fmt: skip
# object kinds whose name is two words
_TWO_WORD_KINDS: Final = frozenset({"MATERIALIZED", "FOREIGN", "EVENT", "TEXT", "ACCESS"})


def command_tag(text: str, rowcount: int) -> str | None:
    """PostgreSQL's command tag of the statement ``text`` that processed ``rowcount``
    rows; None where it cannot be read (an empty statement)."""
    try:
        words = [t.text.upper() for t in tokenize(text) if t.token_type is not TokenType.SEMICOLON]
    except Exception:  # (an unterminated string: no tag)
        return None
    if not words:
        return None
    first = _main_keyword(text) if words[0] == "WITH" else words[0]
    if first in _COUNTED:  # (SELECT ... INTO too: PostgreSQL tags it SELECT n)
        return _COUNTED[first].format(max(rowcount, 0))
    if first in ("CREATE", "ALTER", "DROP"):
        rest = [w for w in words[1:] if w not in _CREATE_MODIFIERS or first != "CREATE"]
        if first == "CREATE" and "AS" in words and rest[:1] == ["TABLE"]:
            return f"SELECT {max(rowcount, 0)}"  # CREATE TABLE ... AS counts its rows
        kind = rest[:2] if rest[:1] and rest[0] in _TWO_WORD_KINDS else rest[:1]
        if words[1:2] == ["MATERIALIZED"]:
            kind = ["MATERIALIZED", "VIEW"]
        return " ".join([first, *kind])
    if first == "TRUNCATE":
        return "TRUNCATE TABLE"
    if first == "LOCK":
        return "LOCK TABLE"
    if first == "ROLLBACK" and words[1:2] == ["PREPARED"]:
        return "ROLLBACK PREPARED"
    if first == "COMMIT" and words[1:2] == ["PREPARED"]:
        return "COMMIT PREPARED"
    if first == "PREPARE" and words[1:2] == ["TRANSACTION"]:
        return "PREPARE TRANSACTION"
    if first == "COMMENT":
        return "COMMENT"
    return _RENAMED.get(first, first)


def _main_keyword(text: str) -> str:
    """The keyword of the statement a ``WITH`` clause is in front of: the first of
    SELECT, INSERT, UPDATE, DELETE, VALUES, TABLE or MERGE outside the queries'
    parentheses."""
    depth = 0
    for token in tokenize(text)[1:]:
        if token.token_type is TokenType.L_PAREN:
            depth += 1
        elif token.token_type is TokenType.R_PAREN:
            depth -= 1
        elif depth == 0 and token.text.upper() in _COUNTED:
            return token.text.upper()
    return "SELECT"


__all__ = ["command_tag"]
