"""ALTER TABLE's identity actions on a column, which sqlglot does not read:

* ``ALTER [COLUMN] c ADD GENERATED {ALWAYS | BY DEFAULT} AS IDENTITY [(options)]``
* ``ALTER [COLUMN] c {SET GENERATED {ALWAYS | BY DEFAULT} | SET option | RESTART [[WITH] n]} ...``
* ``ALTER [COLUMN] c DROP IDENTITY [IF EXISTS]``

each read into one :class:`AlterIdentity` action of the ``exp.Alter`` (schema/identity.py
runs it).  The sequence options are kept as SQL of keywords and integers only, in
PostgreSQL's spelling -- what reaches the server's ``ALTER SEQUENCE``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from sqlglot import exp
from sqlglot.tokens import TokenType


class AlterIdentity(exp.Expression):
    """One identity action on column ``this``: ``kind`` is ``add``, ``set`` or ``drop``;
    ``generated`` ``always`` or ``by default`` (ADD, SET GENERATED); ``options`` the
    sequence options, one ``exp.Var`` each (``INCREMENT BY 2``, ``RESTART WITH 7``);
    ``exists``: DROP IDENTITY IF EXISTS."""

    arg_types: ClassVar[dict[str, bool]] = {
        "this": True,
        "kind": True,
        "generated": False,
        "options": False,
        "exists": False,
    }


def identity_sql(generator: Any, node: AlterIdentity) -> str:
    """The action as PostgreSQL reads it."""
    column = generator.sql(node, "this")
    kind, generated = node.args["kind"], node.args.get("generated")
    options = [o.name for o in node.args.get("options") or []]
    if kind == "drop":
        return (
            f"ALTER COLUMN {column} DROP IDENTITY{' IF EXISTS' if node.args.get('exists') else ''}"
        )
    if kind == "add":
        assert generated is not None
        clause = f" ({' '.join(options)})" if options else ""
        return f"ALTER COLUMN {column} ADD GENERATED {generated.upper()} AS IDENTITY{clause}"
    words = [f"SET GENERATED {generated.upper()}"] if generated else []
    words += [o if o.startswith("RESTART") else f"SET {o}" for o in options]
    return " ".join([f"ALTER COLUMN {column}", *words])


def sequence_options(node: AlterIdentity) -> str:
    """The action's sequence options as one ALTER SEQUENCE's (keywords and integers)."""
    return " ".join(o.name for o in node.args.get("options") or [])


def _words(parser: Any, *words: str) -> bool:
    return bool(parser._match_text_seq(*words))


def _integer(parser: Any) -> int | None:
    negative = parser._match(TokenType.DASH)
    if not parser._match(TokenType.NUMBER):
        return None
    text = parser._prev.text
    if not text.isdigit():
        return None
    return -int(text) if negative else int(text)


def _option(parser: Any, restart: bool) -> str | None:
    """One sequence option (``restart``: RESTART [[WITH] n] too), or None."""
    for first, second in (("INCREMENT", "BY"), ("START", "WITH"), ("RESTART", "WITH")):
        if first == "RESTART" and not restart:
            continue
        if _words(parser, first):
            _words(parser, second)
            n = _integer(parser)
            if n is None and first != "RESTART":
                return None
            return f"{first} {second} {n}" if n is not None else first
    for word in ("MINVALUE", "MAXVALUE", "CACHE"):
        if _words(parser, word):
            n = _integer(parser)
            return None if n is None else f"{word} {n}"
    for word in ("MINVALUE", "MAXVALUE", "CYCLE"):
        if _words(parser, "NO", word):
            return f"NO {word}"
    if _words(parser, "CYCLE"):
        return "CYCLE"
    return None


def _generated(parser: Any) -> str | None:
    if _words(parser, "ALWAYS"):
        return "always"
    if _words(parser, "BY", "DEFAULT"):
        return "by default"
    return None


def parse_identity_action(parser: Any) -> AlterIdentity | None:
    """An identity action after ``ALTER`` in an ALTER TABLE, the parser past it; None
    (the parser where it was) for any other ``ALTER`` action."""
    start = parser._index
    parser._match(TokenType.COLUMN)
    column = parser._parse_field(any_token=True)
    action = _action(parser, column) if column is not None else None
    if action is None:
        parser._retreat(start)
    return action


def _action(parser: Any, column: exp.Expression) -> AlterIdentity | None:
    if _words(parser, "DROP", "IDENTITY"):
        exists = _words(parser, "IF", "EXISTS")
        return AlterIdentity(this=column, kind="drop", exists=exists)
    if _words(parser, "ADD", "GENERATED"):
        kind = _generated(parser)
        if kind is None or not _words(parser, "AS", "IDENTITY"):
            return None
        given = []
        if parser._match(TokenType.L_PAREN):
            while not parser._match(TokenType.R_PAREN):
                option = _option(parser, restart=False)
                if option is None:
                    return None
                given.append(option)
        return AlterIdentity(
            this=column, kind="add", generated=kind, options=[exp.Var(this=o) for o in given]
        )
    generated: str | None = None
    options: list[str] = []
    while True:
        if _words(parser, "SET", "GENERATED"):
            generated = _generated(parser)
            if generated is None:
                return None
        elif parser._curr is not None and parser._curr.text.upper() == "RESTART":
            option = _option(parser, restart=True)
            if option is None:
                return None
            options.append(option)
        elif parser._curr is not None and parser._curr.text.upper() == "SET":
            parser._advance()
            option = _option(parser, restart=False)
            if option is None:
                return None
            options.append(option)
        else:
            break
    if generated is None and not options:
        return None
    return AlterIdentity(
        this=column, kind="set", generated=generated, options=[exp.Var(this=o) for o in options]
    )


__all__ = ["AlterIdentity", "identity_sql", "parse_identity_action", "sequence_options"]
