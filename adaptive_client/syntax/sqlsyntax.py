"""Strict syntax: a statement PostgreSQL's parser refuses fails here as PostgreSQL fails
it (``sqltext.parse`` runs these checks around sqlglot's parse):
``psycopg.errors.SyntaxError`` (42601), its message in PostgreSQL's words
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
  sqlglot stopped (or at end of input where it ran out of tokens): :func:`parse_error`;
  :func:`check_tree` refuses what only the parse shows.

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

import re
import threading
from typing import Final

from psycopg import errors as pg_errors
from psycopg.pq import DiagnosticField
from sqlglot import exp
from sqlglot.dialects.postgres import Postgres
from sqlglot.errors import ParseError
from sqlglot.tokens import Token, Tokenizer, TokenType


class _Tokenizers(threading.local):
    """The tokenizers of a thread: sqlglot's keeps the text it reads and its position in
    its own fields, so one shared by threads reads one thread's statement with another's
    position (cut short, or another thread's statement)."""

    def __init__(self) -> None:
        self.postgres = Postgres.Tokenizer()
        self.generic = Tokenizer()


_PER_THREAD = _Tokenizers()


def tokenize(text: str) -> list[Token]:
    """The tokens of PostgreSQL's SQL ``text`` (the client reads statements with these;
    sqltext too), by this thread's tokenizer."""
    return _PER_THREAD.postgres.tokenize(text)


def tokenize_generic(text: str) -> list[Token]:
    """The tokens of ``text`` by sqlglot's dialect-free tokenizer (this thread's): what
    finds psycopg's ``%s`` and ``%(name)s`` placeholders (syntax/params.py)."""
    return _PER_THREAD.generic.tokenize(text)


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
_EMPTY_LIST_FOLLOWERS: Final = (_CLAUSE_WORDS - {"RETURNING"}) | {"FOR", "FETCH"}

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
_FROM_END: Final = (_CLAUSE_WORDS - {"FROM", "INTO"}) | {"FOR", "FETCH"}


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

# reserved words a statement cannot end with: PostgreSQL reports "at end of input"
_WANTS_MORE: Final = _NEEDS_OPERAND | {
    "USING", "IS", "IN", "CASE", "FROM", "JOIN", "AS", "INTO", "UNION", "INTERSECT", "EXCEPT",
    "FETCH", "SET", "VALUES", "ORDER", "GROUP",
}  # fmt: skip

# what ends a CASE's expression at its depth: a CASE still open there lacks its END
_CASE_ENDERS: Final = _CLAUSE_WORDS | {"AS"}

# binary operators, and the tokens that can only follow an operand (so never an operator);
# + and - are binary operators but may also begin an operand (a sign)
_INFIX_ONLY: Final = frozenset(
    {
        TokenType.EQ,
        TokenType.NEQ,
        TokenType.LT,
        TokenType.GT,
        TokenType.LTE,
        TokenType.GTE,
        TokenType.SLASH,
        TokenType.MOD,
    }
)
_BINARY: Final = _INFIX_ONLY | {TokenType.PLUS, TokenType.DASH}
_BINARY_ONLY: Final = _INFIX_ONLY | {TokenType.R_PAREN, TokenType.COMMA}


def token_word(tok: Token | None) -> str:
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


def _sort_operator(prev: Token | None, tok: Token) -> bool:
    """``ORDER BY x USING <``: an operator naming a sort order, not taking operands."""
    return (
        prev is not None
        and token_word(prev) == "USING"
        and tok.token_type in (TokenType.LT, TokenType.GT)
    )


def check_syntax(text: str) -> None:
    """Raise PostgreSQL's SyntaxError for the malformed forms sqlglot reads without
    complaint (the module's docstring): each rule below names the form it refuses and
    points where PostgreSQL's parser stops."""
    try:
        tokens = tokenize(_PLACEHOLDER.sub(_as_name, text))
    except Exception:
        raise tokenize_error(text) from None
    if not tokens:
        return
    # an unknown statement: PostgreSQL stops at its first word
    first = tokens[0]
    if first.token_type is not TokenType.L_PAREN and token_word(first) not in _STATEMENT_WORDS:
        raise _at(text, first)
    n = len(tokens)
    depth = 0
    joins: dict[int, list[int]] = {}  # depth -> [qualified JOINs, ON/USING] of its FROM
    cases: list[int] = []  # the depth of each CASE not yet ENDed
    selects: dict[int, bool] = {}  # depth -> whether its last SELECT lists no column
    set_ops: dict[int, bool] = {}  # depth -> the left SELECT's emptiness, at a UNION ...
    set_op_word = "UNION"
    last = token_word(tokens[-1])
    # a statement that stops where more must follow: "WHERE", "i IS", "LIMIT", "ON"
    default_values = last == "VALUES" and n > 1 and token_word(tokens[-2]) == "DEFAULT"
    if (
        last in _WANTS_MORE and tokens[-1].token_type not in _QUOTED and not default_values
    ) or _fetch_unended(tokens):
        raise _at(text, None)
    scanned = _PLACEHOLDER.sub(_as_name, text)  # (the text the tokens' offsets are in)
    for i, tok in enumerate(tokens):
        prev = tokens[i - 1] if i else None
        nxt = tokens[i + 1] if i + 1 < n else None
        kind, word = tok.token_type, token_word(tok)
        if kind is TokenType.STRING and nxt is not None and nxt.token_type is TokenType.STRING:
            # 'a' 'b' is one string only across a line break, and no /* comment */
            gap = scanned[tok.end + 1 : nxt.start]
            if "\n" not in gap or "/*" in gap:
                raise _at(text, nxt)
        if kind in (TokenType.L_PAREN, TokenType.L_BRACKET):  # (ARRAY['a', 'b'] nests)
            depth += 1
        elif kind is TokenType.R_BRACKET:
            depth -= 1
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
            and not (word == "FROM" and prev is not None and token_word(prev) == "DISTINCT")
        ):  # (IS [NOT] DISTINCT FROM is an operator inside the CASE, not its FROM)
            raise _at(text, tok)
        # a binary operator without its right operand: "i = = 1", "id * * 2"
        if (
            (kind in _BINARY or _binary_star(tokens, i))
            and not _sort_operator(prev, tok)
            and nxt is not None
            and (nxt.token_type in _BINARY_ONLY or nxt.token_type is TokenType.STAR)
            and not _shift(tok, nxt)
        ):
            raise _at(text, nxt)
        # a keyword that needs an operand or a clause after it, and meets a clause
        # keyword: "BETWEEN AND 5", "WHEN THEN", "WHERE ORDER BY"
        if word in _NEEDS_OPERAND and nxt is not None and token_word(nxt) in _NOT_AN_ITEM:
            raise _at(text, nxt)
        # count(DISTINCT *); SELECT ALL DISTINCT
        if word == "DISTINCT" and prev is not None and nxt is not None:
            if prev.token_type is TokenType.L_PAREN and nxt.token_type is TokenType.STAR:
                raise _at(text, nxt)
            if token_word(prev) == "ALL":
                raise _at(text, tok)
        # ORDER / GROUP without BY (sqlglot reads "ORDER BY" as one token)
        if (
            word in ("ORDER", "GROUP")
            and kind not in (TokenType.ORDER_BY, TokenType.GROUP_BY)
            and token_word(nxt) != "BY"
            and token_word(prev) != "WITHIN"
        ):
            raise _at(text, nxt)
        # INSERT without INTO
        if i == 0 and word == "INSERT" and token_word(nxt) != "INTO":
            raise _at(text, nxt)
        # a derived table without an alias: "FROM (SELECT ...)" (PostgreSQL 15)
        if (
            kind is TokenType.L_PAREN
            and token_word(prev) in ("FROM", "JOIN", "LATERAL", "")
            and (token_word(prev) != "" or (prev is not None and prev.token_type is TokenType.COMMA
                                        and depth - 1 in joins))
            and token_word(nxt) in ("SELECT", "VALUES", "WITH")
        ):  # fmt: skip
            after = _closing(tokens, i) + 1
            if after >= n or not (
                token_word(tokens[after]) == "AS"
                or (
                    tokens[after].token_type in (TokenType.VAR, TokenType.IDENTIFIER)
                    and token_word(tokens[after]) not in _NOT_AN_ITEM | _FROM_END
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
            or (token_word(nxt) in _NOT_AN_ITEM and not _called(tokens, i + 1))
        ):
            raise _at(text, nxt)
        # a list that must have an item and has none: "GROUP BY" / "ORDER BY" at the
        # end or before the next clause, "IN ()", "VALUES ()", "UPDATE t SET WHERE"
        if kind in (TokenType.GROUP_BY, TokenType.ORDER_BY, TokenType.SET) and (
            nxt is None or nxt.token_type in _LIST_CLOSERS or token_word(nxt) in _NOT_AN_ITEM
        ):
            raise _at(text, nxt)
        if (
            kind is TokenType.R_PAREN
            and prev is not None
            and prev.token_type is TokenType.L_PAREN
            and token_word(tokens[i - 2] if i > 1 else None)
            in ("IN", "VALUES", "ANY", "SOME", "ALL")
        ):
            raise _at(text, tok)
        # a set operation of a SELECT without columns and one with: "SELECT a FROM t
        # UNION SELECT" (PostgreSQL's check after parsing, 42601 still)
        if word == "SELECT":
            empty = (
                token_word(nxt) in _EMPTY_LIST_FOLLOWERS
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
        if word == "WITHIN" and token_word(nxt) == "GROUP":
            _check_within_group(text, tokens, i)
        # "SELECT 1 AS" with no name after AS
        if word == "AS" and (nxt is None or nxt.token_type in _LIST_CLOSERS):
            raise _at(text, nxt)
        # DELETE without FROM
        if i == 0 and word == "DELETE" and token_word(nxt) != "FROM":
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


def _shift(tok: Token, nxt: Token) -> bool:
    """``<<`` or ``>>`` (the tokenizer reads two ``<`` or ``>``): one operator."""
    return (
        tok.token_type is nxt.token_type
        and tok.token_type in (TokenType.LT, TokenType.GT)
        and nxt.start == tok.end + 1
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
    words = [token_word(t) for t in tokens[-4:]]
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
        and token_word(tokens[i])
        not in ("IN", "AS", "USING", "ON", "SELECT", "WITH", "FROM", "WHERE")
    )


def _unconditioned_join(tokens: list[Token], i: int) -> bool:
    """Whether the JOIN at ``i`` needs no ON/USING: CROSS JOIN, NATURAL ... JOIN."""
    j = i - 1
    while j >= 0 and token_word(tokens[j]) in ("LEFT", "RIGHT", "FULL", "INNER", "OUTER"):
        j -= 1
    return j >= 0 and token_word(tokens[j]) in ("CROSS", "NATURAL")


def _close_from(text: str, joins: dict[int, list[int]], depth: int, at: Token | None) -> None:
    counts = joins.pop(depth, None)
    if counts is not None and counts[0] > counts[1]:
        raise _at(text, at)


def _tokens_at(text: str, line: int, col: int) -> tuple[list[Token], int | None]:
    try:
        tokens = tokenize(text)
    except Exception:
        return [], None
    for i, tok in enumerate(tokens):
        if tok.line == line and tok.col == col:
            return tokens, i
    return tokens, None


def parse_error(text: str, exc: ParseError) -> pg_errors.SyntaxError:
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
    if description.startswith("Required keyword") and token_word(tokens[i]) not in _NOT_AN_ITEM:
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


def check_tree(stmt: exp.Expression) -> None:
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
    "check_tree",
    "parse_error",
    "syntax_error",
    "token_word",
    "tokenize",
    "tokenize_error",
    "tokenize_generic",
]
