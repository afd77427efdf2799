"""The application's SQL text before any rewrite: statements split, session commands
recognized, statements parsed.

* :func:`split_statements` cuts a script at its top-level semicolons (found by sqlglot's
  tokenizer, so a ``;`` inside a string, a dollar-quoted body or a comment is left
  alone), as PostgreSQL runs a multi-statement simple query: in order.
* :func:`session_command` recognizes the statements that act on the session rather than
  on data (transaction control, savepoints, ``SET``/``SHOW``): they go to the server as
  written -- they name no table or value -- and the connection keeps its own state in
  step with them.  sqlglot misreads several (``SAVEPOINT s1`` parses as an alias), so
  they are recognized by their leading keywords, before any parse.
* :func:`parse` is sqlglot's parse with every failure an ``UnsupportedQuery`` and
  sqlglot's warnings kept out of the application's logs: they quote whole statements,
  plaintext values included.
"""

from __future__ import annotations

import contextvars
import logging
from typing import Any, ClassVar, Final

import sqlglot
from sqlglot import exp
from sqlglot.dialects.postgres import Postgres, PostgresParser
from sqlglot.tokens import TokenType

from .errors import UnsupportedQuery

_TOKENIZER: Final = Postgres.Tokenizer()


def split_statements(text: str) -> list[str]:
    """The statements of ``text`` in order, each without its terminating semicolon;
    empty statements (``;;``, a trailing comment) are dropped."""
    if ";" not in text:
        return [text]
    try:
        tokens = _TOKENIZER.tokenize(text)
    except Exception as exc:  # sqlglot raises TokenError on an unterminated string
        raise UnsupportedQuery(f"cannot tokenize the statement: {exc}", "syntax") from None
    out: list[str] = []
    start = 0
    seen = False  # a token other than ';' since the last cut
    for tok in tokens:
        if tok.token_type is TokenType.SEMICOLON:
            if seen:
                out.append(text[start : tok.start])
            start, seen = tok.end + 1, False
        else:
            seen = True
    if seen:
        out.append(text[start:])
    return out or [text]


# Leading keywords -> the kind of session command.  ``ROLLBACK TO`` and ``ROLLBACK
# PREPARED`` are told apart from a plain ROLLBACK by their second word.
_FIRST_WORD: Final = {
    "BEGIN": "begin",
    "START": "begin",
    "COMMIT": "commit",
    "END": "commit",
    "ROLLBACK": "rollback",
    "ABORT": "rollback",
    "SAVEPOINT": "savepoint",
    "RELEASE": "release",
    "SET": "set",
    "SHOW": "show",
    "RESET": "set",
    "LISTEN": "notify",
    "UNLISTEN": "notify",
    "NOTIFY": "notify",
}


def _words(text: str, n: int) -> list[str]:
    """The first ``n`` words of the statement, upper-cased, comments skipped."""
    try:
        tokens = _TOKENIZER.tokenize(text)
    except Exception:
        return []
    return [t.text.upper() for t in tokens[:n]]


def session_command(text: str) -> str | None:
    """``begin``, ``commit``, ``rollback``, ``rollback_to``, ``savepoint``, ``release``,
    ``set``, ``show``, ``notify`` -- or None for any other statement.

    ``SET`` of a session variable passes through, but ``SET TRANSACTION``/``SET
    SESSION CHARACTERISTICS`` too: they change isolation, which the connection reads
    back from the server when it needs it."""
    head = text.lstrip()[:16].upper()
    if not head or not head[0].isalpha():
        head = " ".join(_words(text, 1))
    first = head.split(None, 1)[0] if head.split() else ""
    kind = _FIRST_WORD.get(first)
    if kind == "rollback":
        words = _words(text, 3)
        if len(words) > 1 and words[1] == "TO":
            return "rollback_to"
        if len(words) > 1 and words[1] == "PREPARED":
            return "commit"  # ends a prepared transaction, not this session's
    if kind == "commit" and first == "COMMIT":
        words = _words(text, 2)
        if len(words) > 1 and words[1] == "PREPARED":
            return "commit"
    return kind


# -- parsing ---------------------------------------------------------------------------


def _marking(name: str, build: Any) -> Any:
    """A function builder that marks its node with the function's name as written."""

    def marked(*args: Any) -> Any:
        node = build(*args)
        node.meta["pg_function"] = name
        return node

    return marked


class PostgresSource(Postgres):
    """PostgreSQL as applications write it.  sqlglot reads ``date_part``/``extract``,
    ``substr``/``substring``, ``char_length``/``length``, ``strpos``/``position`` and
    ``trim``/``btrim``/``ltrim``/``rtrim``, ``mod``/``%`` into one node each, while
    PostgreSQL types or names their results differently; this dialect's parse marks the
    node with the name written (``node.meta["pg_function"]``), for the client-side
    evaluation to tell them apart.  Nothing else differs from sqlglot's PostgreSQL, whose
    own parser is left as it is for the application's use."""

    class Parser(PostgresParser):
        FUNCTION_PARSERS: ClassVar[dict[str, Any]] = {
            **PostgresParser.FUNCTION_PARSERS,
            "DATE_PART": _marking("date_part", PostgresParser.FUNCTION_PARSERS["DATE_PART"]),
        }
        FUNCTIONS: ClassVar[dict[str, Any]] = {
            **PostgresParser.FUNCTIONS,
            **{
                name: _marking(name.lower(), PostgresParser.FUNCTIONS[name])
                for name in (
                    "SUBSTR",
                    "CHAR_LENGTH",
                    "CHARACTER_LENGTH",
                    "STRPOS",
                    "LTRIM",
                    "RTRIM",
                    "BTRIM",
                    "MOD",
                    "CEILING",
                    "NOW",
                )
                if name in PostgresParser.FUNCTIONS
            },
            # every() is the SQL standard's bool_and()
            "EVERY": _marking("every", lambda args: exp.LogicalAnd(this=args[0])),
            # to_char() kept as written: sqlglot turns its format into strftime's, which
            # loses what PostgreSQL's patterns say (rewrite/to_char.py reads them)
            "TO_CHAR": lambda args: exp.Anonymous(this="to_char", expressions=args),
        }


_PARSING: contextvars.ContextVar[bool] = contextvars.ContextVar("adaptive_parsing", default=False)


class _QuietWhileParsing(logging.Filter):
    """Drops sqlglot's records emitted while this library parses an application's SQL."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not _PARSING.get()


_QUIET = _QuietWhileParsing()
for _name in ("sqlglot", "sqlglot.parser", "sqlglot.generator", "sqlglot.optimizer"):
    logging.getLogger(_name).addFilter(_QUIET)


def parse(text: str) -> list[exp.Expression]:
    """sqlglot's parse of ``text``, each failure of it an UnsupportedQuery.  Besides its
    own ParseError and TokenError, sqlglot lets builtin errors escape on some malformed
    input (found by fuzzing: RecursionError on deep nesting, ValueError on a placeholder
    where a name belongs); every one means the statement cannot be parsed."""
    token = _PARSING.set(True)
    try:
        stmts = sqlglot.parse(text, read=PostgresSource)
    except Exception as exc:
        raise UnsupportedQuery(f"cannot parse the statement: {exc}", "syntax") from None
    finally:
        _PARSING.reset(token)
    return [s for s in stmts if isinstance(s, exp.Expression)]


__all__ = ["parse", "session_command", "split_statements"]
