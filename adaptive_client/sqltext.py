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
* :func:`parse` is sqlglot's parse, strict as PostgreSQL's grammar is (below), with
  sqlglot's warnings kept out of the application's logs: they quote whole statements,
  plaintext values included.

Strict syntax.  A statement PostgreSQL's parser refuses fails here as PostgreSQL fails
it: ``psycopg.errors.SyntaxError`` (42601), its message in PostgreSQL's words
(``syntax error at or near "FROM"``, ``syntax error at end of input``, ``unterminated
quoted string at or near "'abc"``) and its diagnostics' ``statement_position`` where
PostgreSQL's cursor would point (1-based characters, one past the end at end of
input).  sqlglot is lenient: it drops empty list items (``SELECT id, FROM t``,
``SELECT id,, x``, ``IN (1,)``, ``GROUP BY a,``), reads ``IN ()``, ``DELETE t``, ``JOIN
u`` without ``ON``, ``SELECT 1 AS`` and a derived table without an alias; and where it
does fail, its error shows its own internals and terminal escape codes.  Two checks
close the gap:

* :func:`check_syntax` reads the token stream for the forms sqlglot accepts but
  PostgreSQL's grammar does not (each rule below names one) -- before sqlglot parses;
* a failure of sqlglot's is turned into PostgreSQL's message at the token where
  sqlglot stopped (or at end of input where it ran out of tokens).

Why on the client and not by asking the server to parse: the provider must never see a
plaintext value or name, so the server could only be shown the statement with every
literal and identifier replaced -- and a raw parse without name resolution is not
something PostgreSQL offers as a statement (PREPARE and the extended protocol's Parse
resolve names; a failure would then also abort the application's transaction for an
error that is not the application's).  It would also cost a round trip per new
statement text.  Checking the token stream costs neither and leaks nothing; its limit
is that it knows the malformed forms listed here, not PostgreSQL's whole grammar: SQL
that both sqlglot and these rules accept but PostgreSQL's grammar refuses reaches the
rewrite, which refuses it (``UnsupportedQuery``) or sends the server a statement it
rejects.  Where sqlglot fails on SQL PostgreSQL accepts (a construct it does not know),
the error is still a SyntaxError: the client cannot tell the two apart without
PostgreSQL's grammar.  PostgreSQL's own parser compiled for the client (libpg_query)
would close both gaps, at the cost of a native dependency.

A position counts characters of the statement as parsed: with parameters, psycopg's
placeholders are in their named form (``%(u0)s``), where PostgreSQL counts them as
``$1``.  Aggregate calls PostgreSQL refuses are refused here with its SQLSTATE too:
WITHIN GROUP of an aggregate that is not ordered-set (42883, count(*)'s 42809),
``max(a, b)`` and ``sum(*)`` (42883).
"""

from __future__ import annotations

import contextvars
import itertools
import logging
import re
from typing import Any, ClassVar, Final

import sqlglot
from psycopg import errors as pg_errors
from psycopg.pq import DiagnosticField
from sqlglot import exp
from sqlglot.dialects.postgres import Postgres, PostgresParser
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from .errors import UnsupportedQuery

_TOKENIZER: Final = Postgres.Tokenizer()


def split_statements(text: str) -> list[str]:
    """The statements of ``text`` in order, each without its terminating semicolon;
    empty statements (``;;``, a trailing comment) are dropped."""
    if ";" not in text:
        return [text]
    try:
        tokens = _TOKENIZER.tokenize(text)
    except Exception:  # sqlglot raises TokenError on an unterminated string
        raise tokenize_error(text) from None
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


def leading_words(text: str, n: int) -> list[str]:
    """The statement's first ``n`` words (upper-cased), comments skipped."""
    return _words(text, n)


def first_token_start(text: str) -> int:
    """Where the statement's first token starts (after leading comments)."""
    try:
        tokens = _TOKENIZER.tokenize(text)
    except Exception:
        return 0
    if not tokens:
        return 0
    # (a token's start counts from the text's start; comments before it are skipped)
    return tokens[0].start


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

        def _parse_types(
            self,
            check_func: bool = False,
            schema: bool = False,
            allow_identifiers: bool = True,
            with_collation: bool = False,
        ) -> exp.Expr | None:
            # PostgreSQL's ``bit varying [(n)]`` (varbit), which sqlglot does not read
            nxt = self._next
            if (
                self._curr is not None
                and self._curr.token_type is TokenType.BIT
                and nxt is not None
                and nxt.text.upper() == "VARYING"
            ):
                self._advance(2)
                varbit = exp.DataType.build("varbit", dialect="postgres", udt=True)
                if self._match(TokenType.L_PAREN):
                    varbit.set("expressions", [exp.DataTypeParam(this=self._parse_number())])
                    self._match_r_paren()
                return varbit
            # interval second(p), interval day to second(p): the precision of the
            # seconds, which sqlglot's type grammar lacks
            parsed = super()._parse_types(check_func, schema, allow_identifiers, with_collation)
            if not isinstance(parsed, exp.DataType):
                return parsed
            interval = parsed.this
            if isinstance(interval, exp.Interval) and not parsed.expressions:
                unit = interval.args.get("unit")
                last = unit.expression if isinstance(unit, exp.IntervalSpan) else unit
                if isinstance(last, exp.Var) and last.name.upper() == "SECOND":
                    start = self._index
                    if self._match(TokenType.L_PAREN):
                        digits = self._parse_number()
                        if digits is not None and self._match(TokenType.R_PAREN):
                            parsed.set("expressions", [exp.DataTypeParam(this=digits)])
                        else:
                            self._retreat(start)
            return parsed

        def _parse_interval_span(
            self, this: exp.Expr, parse_function_unit: bool = True
        ) -> exp.Interval:
            # sqlglot keeps the one "<number> <unit>" pair it finds in a longer string:
            # interval '1 day 10:30' became '1' DAY.  Such a string is kept whole.
            interval = super()._parse_interval_span(this, parse_function_unit)
            if (
                isinstance(this, exp.Literal)
                and this.is_string
                and interval.args.get("unit") is not None
                and interval.this is not this
            ):
                if not exp.INTERVAL_STRING_RE.fullmatch(this.name):
                    return exp.Interval(this=this)
                # interval '1.5 day' became '1.5' DAY, which PostgreSQL reads otherwise
                # (as interval '1.5' day: one day): the string as written
                interval.meta["written"] = this.name
            return interval


_PARSING: contextvars.ContextVar[bool] = contextvars.ContextVar("adaptive_parsing", default=False)


class _QuietWhileParsing(logging.Filter):
    """Drops sqlglot's records emitted while this library parses an application's SQL."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not _PARSING.get()


_QUIET = _QuietWhileParsing()
for _name in ("sqlglot", "sqlglot.parser", "sqlglot.generator", "sqlglot.optimizer"):
    logging.getLogger(_name).addFilter(_QUIET)


def parse(text: str) -> list[exp.Expression]:
    """sqlglot's parse of ``text``, refused as PostgreSQL refuses it where its syntax is
    wrong (``psycopg.errors.SyntaxError``, see the module's docstring).  Besides its
    own ParseError and TokenError, sqlglot lets builtin errors escape on some malformed
    input (found by fuzzing: RecursionError on deep nesting, ValueError on a placeholder
    where a name belongs): an UnsupportedQuery, without sqlglot's text."""
    check_syntax(text)
    if _words(text, 2) == ["CREATE", "SEQUENCE"]:
        text = _sequence_defaults_dropped(text)
    token = _PARSING.set(True)
    try:
        stmts = sqlglot.parse(text, read=PostgresSource)
    except TokenError:
        raise tokenize_error(text) from None
    except ParseError as exc:
        raise _parse_error(text, exc) from None
    except RecursionError:
        raise pg_errors.StatementTooComplex("stack depth limit exceeded") from None
    except Exception:
        raise UnsupportedQuery("cannot parse the statement", "syntax") from None
    finally:
        _PARSING.reset(token)
    out = [_unqualified(s) for s in stmts if isinstance(s, exp.Expression)]
    for stmt in out:
        _check_tree(stmt)
    return out


def _sequence_defaults_dropped(text: str) -> str:
    """A CREATE SEQUENCE without its ``NO MINVALUE``, ``NO MAXVALUE`` and ``NO CYCLE``:
    they say what a new sequence has anyway, and the SQL parser misreads them side by
    side (``NO MAXVALUE NO MINVALUE`` as a maximum named ``NO``)."""
    tokens = _TOKENIZER.tokenize(text)
    cuts = []
    for a, b in itertools.pairwise(tokens):
        if _word(a) == "NO" and _word(b) in ("MINVALUE", "MAXVALUE", "CYCLE"):
            cuts.append((a.start, b.end + 1))
    for start, end in reversed(cuts):
        text = text[:start] + " " + text[end:]
    return text


# the schema the client's tables live in, and the one of PostgreSQL's own functions and
# types: names qualified by them are read as unqualified (a dump names every table
# ``public.t`` and calls ``pg_catalog.set_config``); other schemas stay qualified
_OWN_SCHEMA: Final = "public"
_SYSTEM_SCHEMA: Final = "pg_catalog"


def _schema_is(node: exp.Expression | None, name: str) -> bool:
    return isinstance(node, exp.Identifier) and node.name.lower() == name


def _unqualify(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.Table | exp.Column) and not node.args.get("catalog"):
        if _schema_is(node.args.get("db"), _OWN_SCHEMA):
            node.set("db", None)
        return node
    if isinstance(node, exp.Dot) and _schema_is(node.this, _SYSTEM_SCHEMA):
        call = node.expression
        if isinstance(call, exp.Func):
            # (read again on its own: sqlglot knows lower(x) as Lower, not as a call)
            return sqlglot.parse_one(
                f"SELECT {call.sql(dialect=PostgresSource)}", read=PostgresSource
            ).expressions[0]
        return node
    if isinstance(node, exp.DataType) and node.this is exp.DataType.Type.USERDEFINED:
        kind = node.args.get("kind")
        if isinstance(kind, exp.Dot) and _schema_is(kind.this, _OWN_SCHEMA):
            node.set("kind", kind.expression)  # (an enum type or a domain of the client's)
            return node
        if isinstance(kind, exp.Dot) and _schema_is(kind.this, _SYSTEM_SCHEMA):
            written = node.sql(dialect=PostgresSource).split(".", 1)[1]
            return exp.DataType.build(written, dialect=PostgresSource)
    return node


def _unqualified(stmt: exp.Expression) -> exp.Expression:
    """``stmt`` with the ``public.`` of its tables and the ``pg_catalog.`` of its functions
    and types dropped (see ``_OWN_SCHEMA``)."""
    return stmt.transform(_unqualify, copy=False)


# -- strict syntax ----------------------------------------------------------------------


def syntax_error(message: str, position: int | None) -> pg_errors.SyntaxError:
    """A SyntaxError as PostgreSQL's server reports it: SQLSTATE 42601, the primary
    message, and the 1-based character position of the offending token."""
    info: dict[int, bytes | None] = {
        DiagnosticField.SEVERITY: b"ERROR",
        DiagnosticField.SEVERITY_NONLOCALIZED: b"ERROR",
        DiagnosticField.SQLSTATE: b"42601",
        DiagnosticField.MESSAGE_PRIMARY: message.encode(),
    }
    if position is not None:
        info[DiagnosticField.STATEMENT_POSITION] = str(position).encode()
    return pg_errors.SyntaxError(message, info=info)


def _at(text: str, tok: Token | None) -> pg_errors.SyntaxError:
    """``syntax error at or near "<tok>"`` (at end of input without a token)."""
    if tok is None:
        return syntax_error("syntax error at end of input", len(text) + 1)
    written = text[tok.start : tok.end + 1]
    if tok.token_type not in _QUOTED:  # GROUP BY is one token: PostgreSQL names GROUP
        written = written.split()[0] if written.split() else written
    return syntax_error(f'syntax error at or near "{written}"', tok.start + 1)


_QUOTED: Final = frozenset(
    {
        TokenType.STRING,
        TokenType.IDENTIFIER,
        TokenType.NATIONAL_STRING,
        TokenType.BIT_STRING,
        TokenType.HEX_STRING,
        TokenType.BYTE_STRING,
        TokenType.HEREDOC_STRING,
        TokenType.RAW_STRING,
        TokenType.UNICODE_STRING,
    }
)


def tokenize_error(text: str) -> pg_errors.SyntaxError:
    """PostgreSQL's error for a statement its scanner cannot read to the end: the first
    string, quoted name, dollar-quoted string or comment left open, quoted from its
    start to the end of input as PostgreSQL quotes it."""
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if text.startswith("--", i):
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
            continue
        if text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            if depth:
                return _unterminated("/* comment", text, i)
            i = j
            continue
        if ch in "'\"":
            escapes = ch == "'" and i > 0 and text[i - 1] in "eE" and not _word_before(text, i - 1)
            j = i + 1
            while j < n:
                if escapes and text[j] == "\\":
                    j += 2
                    continue
                if text[j] == ch:
                    if text.startswith(ch * 2, j):
                        j += 2
                        continue
                    break
                j += 1
            if j >= n:
                what = "quoted string" if ch == "'" else "quoted identifier"
                return _unterminated(what, text, i)
            i = j + 1
            continue
        if ch == "$" and not _word_before(text, i):
            close = text.find("$", i + 1)
            tag = text[i : close + 1] if close > 0 else ""
            if tag and all(c.isalnum() or c == "_" for c in tag[1:-1]) and not tag[1:2].isdigit():
                end = text.find(tag, close + 1)
                if end < 0:
                    return _unterminated("dollar-quoted string", text, i)
                i = end + len(tag)
                continue
        i += 1
    return syntax_error("syntax error at end of input", n + 1)


def _word_before(text: str, i: int) -> bool:
    """Is ``text[i]`` inside a word (a name's character precedes it)?"""
    return i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")


def _unterminated(what: str, text: str, start: int) -> pg_errors.SyntaxError:
    return syntax_error(f'unterminated {what} at or near "{text[start:]}"', start + 1)


# what PostgreSQL's grammar allows to begin a statement (sqlglot reads an unknown word as
# a command to pass on)
_STATEMENT_WORDS: Final = frozenset(
    {
        "SELECT",
        "WITH",
        "INSERT",
        "UPDATE",
        "DELETE",
        "VALUES",
        "TABLE",
        "CREATE",
        "DROP",
        "ALTER",
        "TRUNCATE",
        "EXPLAIN",
        "COPY",
        "GRANT",
        "REVOKE",
        "COMMENT",
        "ANALYZE",
        "ANALYSE",
        "VACUUM",
        "LOCK",
        "PREPARE",
        "EXECUTE",
        "DEALLOCATE",
        "DO",
        "CALL",
        "MERGE",
        "DECLARE",
        "FETCH",
        "MOVE",
        "CLOSE",
        "LISTEN",
        "NOTIFY",
        "UNLISTEN",
        "SET",
        "SHOW",
        "RESET",
        "BEGIN",
        "START",
        "COMMIT",
        "END",
        "ROLLBACK",
        "ABORT",
        "SAVEPOINT",
        "RELEASE",
        "REFRESH",
        "REINDEX",
        "CLUSTER",
        "CHECKPOINT",
        "DISCARD",
        "LOAD",
        "SECURITY",
        "IMPORT",
        "REASSIGN",
    }
)

# the words that begin a statement's next clause
_CLAUSE_WORDS: Final = frozenset(
    {"FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "OFFSET", "UNION", "INTERSECT",
     "EXCEPT", "WINDOW", "RETURNING", "INTO"}
)  # fmt: skip

# PostgreSQL's reserved words that cannot begin an expression, a name or a table: a list
# item (after a comma) cannot start with one (not NOT: NOT IN, NOT LIKE)
_NOT_AN_ITEM: Final = _CLAUSE_WORDS | {
    "ON", "USING", "THEN", "ELSE", "END", "WHEN", "AS", "ASC", "DESC", "FOR", "FETCH", "AND",
    "OR", "WITH", "IN", "IS", "ILIKE", "BETWEEN",
}  # fmt: skip

# what follows a SELECT that lists no column
_EMPTY_LIST_FOLLOWERS: Final = frozenset(
    {
        "FROM",
        "WHERE",
        "GROUP",
        "HAVING",
        "ORDER",
        "LIMIT",
        "OFFSET",
        "UNION",
        "INTERSECT",
        "EXCEPT",
        "WINDOW",
        "FOR",
        "FETCH",
        "INTO",
    }
)

# tokens after which a list item must come (a comma there is an empty item)
_LIST_OPENERS: Final = frozenset(
    {
        TokenType.L_PAREN,
        TokenType.L_BRACKET,
        TokenType.COMMA,
        TokenType.SELECT,
        TokenType.DISTINCT,
        TokenType.GROUP_BY,
        TokenType.ORDER_BY,
        TokenType.SET,
        TokenType.VALUES,
        TokenType.RETURNING,
    }
)

# what ends a list: a list cannot end right before it (a trailing comma; GROUP BY with
# no key)
_LIST_CLOSERS: Final = frozenset(
    {TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.COMMA, TokenType.SEMICOLON}
)

# the clause keywords that end a FROM list's join tree at its depth
_FROM_END: Final = frozenset(
    {
        "WHERE",
        "GROUP",
        "HAVING",
        "ORDER",
        "LIMIT",
        "OFFSET",
        "UNION",
        "INTERSECT",
        "EXCEPT",
        "WINDOW",
        "RETURNING",
        "FOR",
        "FETCH",
    }
)


# reserved words a statement cannot end with: PostgreSQL reports "at end of input"
_WANTS_MORE: Final = frozenset(
    {
        "WHERE",
        "HAVING",
        "ON",
        "USING",
        "AND",
        "OR",
        "IS",
        "IN",
        "BETWEEN",
        "LIKE",
        "ILIKE",
        "WHEN",
        "THEN",
        "ELSE",
        "CASE",
        "FROM",
        "JOIN",
        "AS",
        "INTO",
        "UNION",
        "INTERSECT",
        "EXCEPT",
        "LIMIT",
        "OFFSET",
        "FETCH",
        "SET",
        "VALUES",
        "ORDER",
        "GROUP",
    }
)

# keywords after which an operand (or a clause's first item) must come
_NEEDS_OPERAND: Final = frozenset(
    {
        "WHERE",
        "HAVING",
        "ON",
        "AND",
        "OR",
        "BETWEEN",
        "LIKE",
        "ILIKE",
        "WHEN",
        "THEN",
        "ELSE",
        "LIMIT",
        "OFFSET",
    }  # (not NOT: NOT IN, NOT LIKE)
)

# what ends a CASE's expression at its depth: a CASE still open there lacks its END
_CASE_ENDERS: Final = _CLAUSE_WORDS | {"AS"}

# binary operators, and the tokens that can only follow an operand (so never an operator)
_BINARY: Final = frozenset(
    {
        TokenType.EQ,
        TokenType.NEQ,
        TokenType.LT,
        TokenType.GT,
        TokenType.LTE,
        TokenType.GTE,
        TokenType.SLASH,
        TokenType.MOD,
        TokenType.PLUS,
        TokenType.DASH,
    }
)
_BINARY_ONLY: Final = frozenset(
    {
        TokenType.EQ,
        TokenType.NEQ,
        TokenType.LT,
        TokenType.GT,
        TokenType.LTE,
        TokenType.GTE,
        TokenType.SLASH,
        TokenType.MOD,
        TokenType.R_PAREN,
        TokenType.COMMA,
    }
)


def _word(tok: Token | None) -> str:
    """The token's keyword (its first word, upper-cased); '' for a quoted token."""
    if tok is None or tok.token_type in _QUOTED:
        return ""
    words = tok.text.split()
    return words[0].upper() if words else ""


# psycopg's placeholders (%s, %(name)s: the rewrite's form, params.py): read as a name of
# the same length, an operand where the grammar has a value
_PLACEHOLDER: Final = re.compile(r"%\([^)]*\)s|%s")


def _as_name(match: re.Match[str]) -> str:
    return "_" * len(match.group(0))


def check_syntax(text: str) -> None:
    """Raise PostgreSQL's SyntaxError for the malformed forms sqlglot reads without
    complaint (the module's docstring): each rule below names the form it refuses and
    points where PostgreSQL's parser stops."""
    try:
        tokens = _TOKENIZER.tokenize(_PLACEHOLDER.sub(_as_name, text))
    except Exception:
        raise tokenize_error(text) from None
    if not tokens:
        return
    # an unknown statement: PostgreSQL stops at its first word
    first = tokens[0]
    if first.token_type is not TokenType.L_PAREN and _word(first) not in _STATEMENT_WORDS:
        raise _at(text, first)
    n = len(tokens)
    depth = 0
    joins: dict[int, list[int]] = {}  # depth -> [qualified JOINs, ON/USING] of its FROM
    cases: list[int] = []  # the depth of each CASE not yet ENDed
    selects: dict[int, bool] = {}  # depth -> whether its last SELECT lists no column
    set_ops: dict[int, bool] = {}  # depth -> the left SELECT's emptiness, at a UNION ...
    set_op_word = "UNION"
    last = _word(tokens[-1])
    # a statement that stops where more must follow: "WHERE", "i IS", "LIMIT", "ON"
    default_values = last == "VALUES" and n > 1 and _word(tokens[-2]) == "DEFAULT"
    if (
        last in _WANTS_MORE and tokens[-1].token_type not in _QUOTED and not default_values
    ) or _fetch_unended(tokens):
        raise _at(text, None)
    for i, tok in enumerate(tokens):
        prev = tokens[i - 1] if i else None
        nxt = tokens[i + 1] if i + 1 < n else None
        kind, word = tok.token_type, _word(tok)
        if kind is TokenType.L_PAREN:
            depth += 1
        elif kind is TokenType.R_PAREN:
            if cases and cases[-1] >= depth:  # CASE ... ) without END
                raise _at(text, tok)
            _close_from(text, joins, depth, tok)
            depth -= 1
        # CASE without END: a clause, a comma or the end at its depth first
        if word == "CASE":
            cases.append(depth)
        elif word == "END" and cases:
            cases.pop()
        elif (
            cases
            and cases[-1] == depth
            and (kind is TokenType.COMMA or word in _CASE_ENDERS)
            and not (word == "FROM" and prev is not None and _word(prev) == "DISTINCT")
        ):  # (IS [NOT] DISTINCT FROM is an operator inside the CASE, not its FROM)
            raise _at(text, tok)
        # a binary operator without its right operand: "i = = 1", "id * * 2"
        if (
            (kind in _BINARY or _binary_star(tokens, i))
            and nxt is not None
            and (nxt.token_type in _BINARY_ONLY or nxt.token_type is TokenType.STAR)
        ):
            raise _at(text, nxt)
        # a keyword that needs an operand or a clause after it, and meets a clause
        # keyword: "BETWEEN AND 5", "WHEN THEN", "WHERE ORDER BY"
        if word in _NEEDS_OPERAND and nxt is not None and _word(nxt) in _NOT_AN_ITEM:
            raise _at(text, nxt)
        # count(DISTINCT *); SELECT ALL DISTINCT
        if word == "DISTINCT" and prev is not None and nxt is not None:
            if prev.token_type is TokenType.L_PAREN and nxt.token_type is TokenType.STAR:
                raise _at(text, nxt)
            if _word(prev) == "ALL":
                raise _at(text, tok)
        # ORDER / GROUP without BY (sqlglot reads "ORDER BY" as one token)
        if (
            word in ("ORDER", "GROUP")
            and kind not in (TokenType.ORDER_BY, TokenType.GROUP_BY)
            and _word(nxt) != "BY"
            and _word(prev) != "WITHIN"
        ):
            raise _at(text, nxt)
        # INSERT without INTO
        if i == 0 and word == "INSERT" and _word(nxt) != "INTO":
            raise _at(text, nxt)
        # a derived table without an alias: "FROM (SELECT ...)" (PostgreSQL 15)
        if (
            kind is TokenType.L_PAREN
            and _word(prev) in ("FROM", "JOIN", "LATERAL", "")
            and (_word(prev) != "" or (prev is not None and prev.token_type is TokenType.COMMA
                                        and depth - 1 in joins))
            and _word(nxt) in ("SELECT", "VALUES", "WITH")
        ):  # fmt: skip
            after = _closing(tokens, i) + 1
            if after >= n or not (
                _word(tokens[after]) == "AS"
                or (
                    tokens[after].token_type in (TokenType.VAR, TokenType.IDENTIFIER)
                    and _word(tokens[after]) not in _NOT_AN_ITEM | _FROM_END
                )
            ):
                raise syntax_error("subquery in FROM must have an alias", tok.start + 1)
        # an empty list item: "SELECT , a", "f(, a)", "a,, b"
        if kind is TokenType.COMMA and prev is not None and prev.token_type in _LIST_OPENERS:
            raise _at(text, tok)
        # a trailing comma: "SELECT a, FROM t", "IN (1,)", "GROUP BY a," -- or a list
        # item that cannot begin with the word after the comma
        if kind is TokenType.COMMA and (
            nxt is None
            or nxt.token_type in _LIST_CLOSERS
            or (_word(nxt) in _NOT_AN_ITEM and not _called(tokens, i + 1))
        ):
            raise _at(text, nxt)
        # a list that must have an item and has none: "GROUP BY" / "ORDER BY" at the
        # end or before the next clause, "IN ()", "VALUES ()", "UPDATE t SET WHERE"
        if kind in (TokenType.GROUP_BY, TokenType.ORDER_BY, TokenType.SET) and (
            nxt is None or nxt.token_type in _LIST_CLOSERS or _word(nxt) in _NOT_AN_ITEM
        ):
            raise _at(text, nxt)
        if (
            kind is TokenType.R_PAREN
            and prev is not None
            and prev.token_type is TokenType.L_PAREN
            and _word(tokens[i - 2] if i > 1 else None) in ("IN", "VALUES", "ANY", "SOME", "ALL")
        ):
            raise _at(text, tok)
        # a set operation of a SELECT without columns and one with: "SELECT a FROM t
        # UNION SELECT" (PostgreSQL's check after parsing, 42601 still)
        if word == "SELECT":
            empty = (
                _word(nxt) in _EMPTY_LIST_FOLLOWERS
                or nxt is None
                or (nxt.token_type is TokenType.R_PAREN)
            )
            if depth in set_ops and set_ops.pop(depth) != empty:
                raise syntax_error(
                    f"each {set_op_word} query must have the same number of columns", None
                )
            selects[depth] = empty
        if word in ("UNION", "INTERSECT", "EXCEPT") and depth in selects:
            set_ops[depth], set_op_word = selects[depth], word
        # WITHIN GROUP of an aggregate that is not ordered-set
        if word == "WITHIN" and _word(nxt) == "GROUP":
            _check_within_group(text, tokens, i)
        # "SELECT 1 AS" with no name after AS
        if word == "AS" and (nxt is None or nxt.token_type in _LIST_CLOSERS):
            raise _at(text, nxt)
        # DELETE without FROM
        if i == 0 and word == "DELETE" and _word(nxt) != "FROM":
            raise _at(text, nxt)
        # a JOIN without ON / USING (neither CROSS nor NATURAL): PostgreSQL stops at the
        # word that ends the FROM list, or at the end
        if word == "FROM":
            _close_from(text, joins, depth, tok)
            joins[depth] = [0, 0]
        elif depth in joins and word in _FROM_END:
            _close_from(text, joins, depth, tok)
        elif depth in joins and kind is TokenType.JOIN:
            if not _unconditioned_join(tokens, i):
                joins[depth][0] += 1
        elif depth in joins and word in ("ON", "USING"):
            joins[depth][1] += 1
    if cases:
        raise _at(text, None)
    _close_from(text, joins, depth, None)
    for d in list(joins):
        _close_from(text, joins, d, None)


_OPERANDS: Final = frozenset(
    {TokenType.VAR, TokenType.NUMBER, TokenType.IDENTIFIER, TokenType.STRING, TokenType.R_PAREN}
)


def _binary_star(tokens: list[Token], i: int) -> bool:
    """Is the token at ``i`` a ``*`` that multiplies (after an operand, not ``t.*``)?"""
    if tokens[i].token_type is not TokenType.STAR or i == 0:
        return False
    after_dot = i > 1 and tokens[i - 1].token_type is TokenType.DOT
    return tokens[i - 1].token_type in _OPERANDS and not after_dot


def _closing(tokens: list[Token], i: int) -> int:
    """The index of the ``)`` that closes the ``(`` at ``i`` (the last token if none)."""
    depth = 0
    for j in range(i, len(tokens)):
        if tokens[j].token_type is TokenType.L_PAREN:
            depth += 1
        elif tokens[j].token_type is TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                return j
    return len(tokens) - 1


def _fetch_unended(tokens: list[Token]) -> bool:
    """``FETCH FIRST [n] ROWS`` without ONLY / WITH TIES at the end."""
    words = [_word(t) for t in tokens[-4:]]
    return bool(words) and words[-1] in ("ROW", "ROWS") and "FETCH" in words


def _check_within_group(text: str, tokens: list[Token], i: int) -> None:
    """``name(...) WITHIN GROUP (ORDER BY ...)``: only ordered-set and hypothetical-set
    aggregates take it.  PostgreSQL looks the others up with the ordering's arguments
    added (``function string_agg(text, unknown, text) does not exist``), count(*) it
    names; after OVER (...) it is a syntax error."""
    depth, j = 0, i - 1
    if j < 0 or tokens[j].token_type is not TokenType.R_PAREN:
        raise _at(text, tokens[i])
    while j >= 0:
        if tokens[j].token_type is TokenType.R_PAREN:
            depth += 1
        elif tokens[j].token_type is TokenType.L_PAREN:
            depth -= 1
            if depth == 0:
                break
        j -= 1
    name = tokens[j - 1].text.lower() if j > 0 else ""
    if name == "over" or j <= 0:
        raise _at(text, tokens[i])
    if name in _ORDERED_SET:
        return
    if name == "count" and tokens[j + 1].token_type is TokenType.STAR:
        raise pg_errors.WrongObjectType(
            "count is not an ordered-set aggregate, so it cannot have WITHIN GROUP"
        )
    raise pg_errors.UndefinedFunction(
        f"function {name}(...) with WITHIN GROUP does not exist: {name} is not an "
        "ordered-set aggregate"
    )


def _called(tokens: list[Token], i: int) -> bool:
    """A reserved word used as a function's name (``left(x, 2)``) is an item still."""
    return (
        i + 1 < len(tokens)
        and tokens[i + 1].token_type is TokenType.L_PAREN
        and _word(tokens[i]) not in ("IN", "AS", "USING", "ON", "SELECT", "WITH", "FROM", "WHERE")
    )


def _unconditioned_join(tokens: list[Token], i: int) -> bool:
    """Whether the JOIN at ``i`` needs no ON/USING: CROSS JOIN, NATURAL ... JOIN."""
    j = i - 1
    while j >= 0 and _word(tokens[j]) in ("LEFT", "RIGHT", "FULL", "INNER", "OUTER"):
        j -= 1
    return j >= 0 and _word(tokens[j]) in ("CROSS", "NATURAL")


def _close_from(text: str, joins: dict[int, list[int]], depth: int, at: Token | None) -> None:
    counts = joins.pop(depth, None)
    if counts is not None and counts[0] > counts[1]:
        raise _at(text, at)


def _tokens_at(text: str, line: int, col: int) -> tuple[list[Token], int | None]:
    try:
        tokens = _TOKENIZER.tokenize(text)
    except Exception:
        return [], None
    for i, tok in enumerate(tokens):
        if tok.line == line and tok.col == col:
            return tokens, i
    return tokens, None


def _parse_error(text: str, exc: ParseError) -> pg_errors.SyntaxError:
    """sqlglot's ParseError as PostgreSQL's: at the token sqlglot stopped at, or at
    end of input where sqlglot ran out of tokens looking for what was missing."""
    info = exc.errors[0] if exc.errors else {}
    tokens, i = _tokens_at(text, int(info.get("line") or 0), int(info.get("col") or 0))
    if i is None:
        return syntax_error("syntax error", None)
    description = str(info.get("description") or "")
    wanting = description.startswith(("Required keyword", "Expecting", "Expected"))
    if wanting and i == len(tokens) - 1:
        return _at(text, None)
    if description.startswith("Required keyword") and _word(tokens[i]) not in _NOT_AN_ITEM:
        return _at(text, tokens[i + 1] if i + 1 < len(tokens) else None)
    return _at(text, tokens[i])


# aggregates that take WITHIN GROUP: PostgreSQL's ordered-set and hypothetical-set ones
_ORDERED_SET: Final = frozenset(
    {
        "percentile_cont",
        "percentile_disc",
        "mode",
        "rank",
        "dense_rank",
        "percent_rank",
        "cume_dist",
    }
)


# the aggregates of one argument that sqlglot reads with more, or with a star
_ONE_ARGUMENT: Final = (exp.Max, exp.Min, exp.Sum, exp.Avg)


def _check_tree(stmt: exp.Expression) -> None:
    """Checks that need the parse: max/min/sum/avg with other than one argument, a
    derived table without an alias (PostgreSQL 15 requires one)."""
    for agg in stmt.find_all(*_ONE_ARGUMENT):
        # sqlglot reads max(a, b) as max with a second argument, sum(*) as sum of a star:
        # PostgreSQL has no such aggregates (greatest() is the maximum of values)
        name = agg.sql_name().lower()
        if agg.expressions:
            raise pg_errors.UndefinedFunction(
                f"function {name}() with {1 + len(agg.expressions)} arguments does not exist"
            )
        if isinstance(agg.this, exp.Star):
            raise pg_errors.UndefinedFunction(f"function {name}() does not exist")
    for sub in stmt.find_all(exp.Subquery):
        parent = sub.parent
        if isinstance(parent, exp.From | exp.Join) and not sub.alias and not _joined_table(sub):
            raise syntax_error("subquery in FROM must have an alias", None)


def _joined_table(sub: exp.Subquery) -> bool:
    """``(a JOIN b ON ...)`` in FROM, which PostgreSQL takes without an alias: sqlglot reads
    it as a subquery of its first item carrying the joins (in as many parentheses)."""
    inner = sub.this
    while isinstance(inner, exp.Subquery) and not inner.alias and not inner.args.get("joins"):
        inner = inner.this
    return isinstance(inner, exp.Table | exp.Subquery) and bool(inner.args.get("joins"))


__all__ = [
    "check_syntax",
    "first_token_start",
    "leading_words",
    "parse",
    "session_command",
    "split_statements",
    "syntax_error",
]
