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

Strict syntax (``sqlsyntax``): a statement PostgreSQL's parser refuses fails here as
PostgreSQL fails it, ``psycopg.errors.SyntaxError`` (42601) in PostgreSQL's words and at
its position; ``check_syntax``, ``syntax_error`` and ``tokenize_error`` are re-exported
from there.
"""

from __future__ import annotations

import contextvars
import itertools
import logging
from collections.abc import Callable
from typing import Any, ClassVar, Final

import sqlglot
from psycopg import errors as pg_errors
from sqlglot import exp
from sqlglot.dialects.postgres import Postgres, PostgresGenerator, PostgresParser
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from ..errors import UnsupportedQuery
from .identity_actions import AlterIdentity, identity_sql, parse_identity_action
from .names import fold_names
from .sqlsyntax import (
    check_syntax,
    check_tree,
    parse_error,
    syntax_error,
    token_word,
    tokenize,
    tokenize_error,
)


def split_statements(text: str) -> list[str]:
    """The statements of ``text`` in order, each without its terminating semicolon;
    empty statements (``;;``, a trailing comment) are dropped."""
    if ";" not in text:
        return [text]
    try:
        tokens = tokenize(text)
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
        tokens = tokenize(text)
    except Exception:
        return []
    return [t.text.upper() for t in tokens[:n]]


def leading_words(text: str, n: int) -> list[str]:
    """The statement's first ``n`` words (upper-cased), comments skipped."""
    return _words(text, n)


def first_token_start(text: str) -> int:
    """Where the statement's first token starts (after leading comments)."""
    try:
        tokens = tokenize(text)
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


def prepares_transaction(text: str) -> bool:
    """Is ``text`` ``PREPARE TRANSACTION`` (two-phase commit's first step)?  Decided from
    the text's start as :func:`session_command` decides, the statement tokenized only
    where it may be one."""
    head = text.lstrip()[:7].upper()
    if head[:1].isalpha() and head != "PREPARE":
        return False
    words = _words(text, 2)  # (the tokenizer keeps PREPARE's rest as one word)
    return words[:1] == ["PREPARE"] and " ".join(words[1:]).split()[:1] == ["TRANSACTION"]


# -- parsing ---------------------------------------------------------------------------


def _marking(name: str, build: Any) -> Any:
    """A function builder that marks its node with the function's name as written."""

    def marked(*args: Any, **kwargs: Any) -> Any:
        node = build(*args, **kwargs)  # (sqlglot passes dialect= to a builder that takes it)
        node.meta["pg_function"] = name
        return node

    return marked


# the type names PostgreSQL reads called as a function of one argument as a cast to them
# (called with another number of arguments, a function that does not exist: 42883)
FUNCTION_CASTS: Final = ("int2", "int4", "int8", "float4", "float8", "text", "bool")


def _function_cast(name: str) -> Any:
    def build(args: list[exp.Expression]) -> exp.Expression:
        if len(args) != 1:
            return exp.Anonymous(this=name, expressions=args)
        return exp.Cast(this=args[0], to=exp.DataType.build(name, dialect="postgres"))

    return build


class PostgresSource(Postgres):
    """PostgreSQL as applications write it.  sqlglot reads ``date_part``/``extract``,
    ``substr``/``substring``, ``char_length``/``length``, ``strpos``/``position`` and
    ``trim``/``btrim``/``ltrim``/``rtrim``, ``mod``/``%`` into one node each, while
    PostgreSQL types or names their results differently; this dialect's parse marks every
    function it builds by name with the name written (``node.meta["pg_function"]``), for
    the client-side evaluation to tell them apart and to name the output column as
    PostgreSQL does.  Nothing else differs from sqlglot's PostgreSQL, whose own parser is
    left as it is for the application's use."""

    class Parser(PostgresParser):
        def _parse_ordered(
            self, parse_method: Callable[[], exp.Expr | None] | None = None
        ) -> exp.Ordered | None:
            # ``ORDER BY x USING <`` / ``USING >``: the type's default btree order,
            # ascending or descending (and its default NULLS), which sqlglot does not read
            using: list[Any] = []  # (descending, the token after the operator)

            def key() -> exp.Expr | None:
                this = parse_method() if parse_method else self._parse_disjunction()
                nxt = self._next
                if (
                    self._curr is not None
                    and self._curr.token_type is TokenType.USING
                    and nxt is not None
                    and nxt.token_type in (TokenType.LT, TokenType.GT)
                ):
                    self._advance(2)
                    using.extend((nxt.token_type is TokenType.GT, self._index))
                return this

            ordered = super()._parse_ordered(key)
            if ordered is not None and using:
                descending, after = using
                written = [t.text.upper() for t in self._tokens[after : self._index]]
                if written[:1] in (["ASC"], ["DESC"]):  # (USING or a direction, not both)
                    self.raise_error("USING with a direction", self._tokens[after])
                ordered.set("desc", descending)
                if "NULLS" not in written:
                    ordered.set("nulls_first", descending)
            return ordered

        def _parse_alter_table_alter(self) -> exp.Expr | None:
            # (ALTER COLUMN c ADD GENERATED ... AS IDENTITY, SET GENERATED, RESTART, DROP
            # IDENTITY: identity_actions.py; sqlglot reads the others)
            action = parse_identity_action(self)
            return action if action is not None else super()._parse_alter_table_alter()

        # ALTER TABLE ... ADD CHECK (...): PostgreSQL's unnamed check, which sqlglot's
        # PostgreSQL reads only named (ADD CONSTRAINT c CHECK)
        ADD_CONSTRAINT_KEYWORDS: ClassVar[set[str]] = {
            *PostgresParser.ADD_CONSTRAINT_KEYWORDS,
            "CHECK",
        }
        FUNCTION_PARSERS: ClassVar[dict[str, Any]] = {
            **PostgresParser.FUNCTION_PARSERS,
            "DATE_PART": _marking("date_part", PostgresParser.FUNCTION_PARSERS["DATE_PART"]),
        }
        FUNCTIONS: ClassVar[dict[str, Any]] = {
            # (every function sqlglot builds by its name: PostgreSQL names the output
            # column after the function as written, whichever node sqlglot makes of it)
            **{
                name: _marking(name.lower(), build)
                for name, build in PostgresParser.FUNCTIONS.items()
            },
            # every() is the SQL standard's bool_and()
            "EVERY": _marking("every", lambda args: exp.LogicalAnd(this=args[0])),
            # float8(x), int4(x)...: a cast written as a call of the type's name
            **{name.upper(): _marking(name, _function_cast(name)) for name in FUNCTION_CASTS},
            # to_char() kept as written: sqlglot turns its format into strftime's, which
            # loses what PostgreSQL's patterns say (engine/to_char.py reads them)
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

    class Generator(PostgresGenerator):
        TRANSFORMS: ClassVar[dict[type[exp.Expr], Any]] = {
            **PostgresGenerator.TRANSFORMS,
            AlterIdentity: identity_sql,
        }


_PARSING: contextvars.ContextVar[bool] = contextvars.ContextVar("adaptive_parsing", default=False)


class _QuietWhileParsing(logging.Filter):
    """Drops sqlglot's records emitted while this library parses an application's SQL."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not _PARSING.get()


_QUIET = _QuietWhileParsing()
for _name in ("sqlglot", "sqlglot.parser", "sqlglot.generator", "sqlglot.optimizer"):
    logging.getLogger(_name).addFilter(_QUIET)


def parse(text: str, *, names_folded: bool = False) -> list[exp.Expression]:
    """sqlglot's parse of ``text``, refused as PostgreSQL refuses it where its syntax is
    wrong (``psycopg.errors.SyntaxError``, see the module's docstring), its names in their
    folded forms (names.py) -- ``names_folded``: the text is the client's own, written
    from a statement already parsed (a view's or a check's as the catalog keeps it).  Besides its
    own ParseError and TokenError, sqlglot lets builtin errors escape on some malformed
    input (found by fuzzing: RecursionError on deep nesting, ValueError on a placeholder
    where a name belongs): an UnsupportedQuery, without sqlglot's text."""
    check_syntax(text)
    if _words(text, 2) == ["CREATE", "SEQUENCE"]:
        text = _sequence_defaults_dropped(text)
    text, overriding = _overriding_taken(text)
    token = _PARSING.set(True)
    try:
        stmts = sqlglot.parse(text, read=PostgresSource)
    except TokenError:
        raise tokenize_error(text) from None
    except ParseError as exc:
        raise parse_error(text, exc) from None
    except RecursionError:
        raise pg_errors.StatementTooComplex("stack depth limit exceeded") from None
    except Exception:
        raise UnsupportedQuery("cannot parse the statement", "syntax") from None
    finally:
        _PARSING.reset(token)
    out = [_positions_bare(_unqualified(s)) for s in stmts if isinstance(s, exp.Expression)]
    if not names_folded:
        out = [_named(s) for s in out]
    for stmt in out:
        check_tree(stmt)
    if overriding is not None:
        if len(out) != 1 or not isinstance(out[0], exp.Insert):
            raise syntax_error('syntax error at or near "OVERRIDING"', None)
        out[0].meta["overriding"] = overriding
    return out


def _positions_bare(stmt: exp.Expression) -> exp.Expression:
    """``ORDER BY (2)``, ``GROUP BY (1)`` as ``ORDER BY 2``, ``GROUP BY 1``: PostgreSQL's
    grammar drops the parentheses, so a parenthesized number is still a position (Django
    orders a UNION so); sqlglot keeps them, and the client would read a constant."""
    keys = [o.this for o in stmt.find_all(exp.Ordered)]
    keys += [g for group in stmt.find_all(exp.Group) for g in group.expressions]
    for key in keys:
        if not isinstance(key, exp.Paren):
            continue
        inner = key
        while isinstance(inner, exp.Paren):
            inner = inner.this
        number = inner.this if isinstance(inner, exp.Neg) else inner
        if isinstance(number, exp.Literal) and number.is_int:
            key.replace(inner)
    return stmt


def _overriding_taken(text: str) -> tuple[str, str | None]:
    """An INSERT's ``OVERRIDING SYSTEM VALUE`` or ``OVERRIDING USER VALUE`` (sqlglot does
    not read them): the statement without the clause, and which one (the INSERT keeps
    it in its ``meta``: compile/insert.py)."""
    if "overriding" not in text.lower():
        return text, None
    try:
        tokens = tokenize(text)
    except Exception:
        return text, None  # (check_syntax has judged the text)
    for i in range(len(tokens) - 2):
        word, kind, value = tokens[i : i + 3]
        if (
            word.token_type is not TokenType.STRING
            and word.text.upper() == "OVERRIDING"
            and kind.text.upper() in ("SYSTEM", "USER")
            and value.text.upper() == "VALUE"
        ):
            return text[: word.start] + text[value.end + 1 :], kind.text.lower()
    return text, None


def _sequence_defaults_dropped(text: str) -> str:
    """A CREATE SEQUENCE without its ``NO MINVALUE``, ``NO MAXVALUE`` and ``NO CYCLE``:
    they say what a new sequence has anyway, and the SQL parser misreads them side by
    side (``NO MAXVALUE NO MINVALUE`` as a maximum named ``NO``)."""
    tokens = tokenize(text)
    cuts = []
    for a, b in itertools.pairwise(tokens):
        if token_word(a) == "NO" and token_word(b) in ("MINVALUE", "MAXVALUE", "CYCLE"):
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
    if (
        isinstance(node, exp.Concat)
        and not node.args.get("safe")
        and all(isinstance(e, exp.Literal) and e.is_string for e in node.expressions)
    ):  # 'a'\n'b': one string constant, as PostgreSQL's lexer reads it (not a concat())
        return exp.Literal.string("".join(str(e.this) for e in node.expressions))
    if isinstance(node, exp.Placeholder):
        # ``%(Name)s`` is a key of the application's parameters, not a name PostgreSQL
        # folds: sqlglot's identifier normalisation (its ``qualify``) leaves it as written
        node.meta["case_sensitive"] = True
        return node
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
            try:
                return exp.DataType.build(written, dialect=PostgresSource)
            except ParseError:  # (a name the parser has no type for: pg_catalog.path)
                node.set("kind", kind.expression)
                return node
    return node


def _named(stmt: exp.Expression) -> exp.Expression:
    """``stmt`` with its names in their folded forms (names.py) -- but for a SET's or
    SHOW's setting, whose name PostgreSQL reads without case, quoted or not."""
    if isinstance(stmt, exp.Set | exp.Command | exp.Show):
        return stmt
    return stmt.transform(fold_names, copy=False)


def _unqualified(stmt: exp.Expression) -> exp.Expression:
    """``stmt`` with the ``public.`` of its tables and the ``pg_catalog.`` of its functions
    and types dropped (see ``_OWN_SCHEMA``), its named placeholders marked as written."""
    return stmt.transform(_unqualify, copy=False)


__all__ = [
    "check_syntax",
    "first_token_start",
    "leading_words",
    "parse",
    "prepares_transaction",
    "session_command",
    "split_statements",
    "syntax_error",
    "tokenize_error",
]
