"""PostgreSQL's other spellings of a string constant, read as the plain constant they are.

``N'Rock'`` (a national character string: text in PostgreSQL), ``E'a\\tb'`` (escapes,
which the parser has already decoded), ``U&'d\\0061t'`` (Unicode escapes, with an optional
``UESCAPE``) and dollar quotes (``$$it's$$``, ``$tag$...$tag$``) are each a string
constant to PostgreSQL.  A bit-string constant (``B'101'``, ``X'1F'``) becomes the
string of its bits, ``'101'`` / ``'00011111'``: what bit input reads into a bit column,
and what a text column stores of it (its digits are checked here, as the lexer's
constant is read before any column's length; a cast of one to another type is refused:
``X'1F'::int`` is 31).  This pass gives the client's paths a plain string literal in
their place, so that they encrypt, compare and return it as any other.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from psycopg import errors as pg_errors
from sqlglot import exp

from ..errors import UnsupportedQuery
from ..values.bit_encodings import parse_bits


def _unicode_escapes(node: exp.Expression) -> str:
    """``U&'...'``'s text: ``<e>XXXX`` and ``<e>+XXXXXX`` code points (surrogate pairs
    joined), ``<e><e>`` the escape character itself (``<e>`` is ``\\`` or UESCAPE's)."""
    escape = node.args.get("escape")
    e = escape.name if isinstance(escape, exp.Literal) else "\\"
    if len(e) != 1 or e in "0123456789abcdefABCDEF+'\" \t\n\r":
        raise pg_errors.SyntaxError("invalid Unicode escape character")
    pattern = re.compile(
        re.escape(e) + r"(?:(\+[0-9a-fA-F]{6})|([0-9a-fA-F]{4})|(" + re.escape(e) + "))"
    )
    text = str(node.this)
    units: list[str] = []
    pos = 0
    for m in pattern.finditer(text):
        units.append(text[pos : m.start()])
        six, four, doubled = m.groups()
        units.append(e if doubled else chr(int((six or four).lstrip("+"), 16)))
        pos = m.end()
    rest = text[pos:]
    if e in rest:
        raise pg_errors.SyntaxError("invalid Unicode escape")
    units.append(rest)
    joined = "".join(units)
    try:  # (a pair of surrogate escapes is one character, as PostgreSQL joins them)
        return joined.encode("utf-16", "surrogatepass").decode("utf-16")
    except UnicodeDecodeError:
        raise pg_errors.SyntaxError("invalid Unicode surrogate pair") from None


def _bit_string(prefix: str) -> Callable[[exp.Expression], str]:
    def text(node: exp.Expression) -> str:
        cast = node.parent
        if isinstance(cast, exp.Cast) and not _is_bit_type(cast.args.get("to")):
            # (X'1F'::int is 31: the digits' string would read as 11111)
            raise UnsupportedQuery(
                f"a bit-string constant cast to {cast.args['to'].sql('postgres')}",
                "bit-string constant cast",
            )
        return parse_bits(f"{prefix}{node.this}", None, False)  # (22P02 on a bad digit)

    return text


def _is_bit_type(to: Any) -> bool:
    if not isinstance(to, exp.DataType):
        return False
    return to.this is exp.DataType.Type.BIT or to.sql("postgres").lower().startswith("varbit")


# each spelling, and the text of its constant
_TEXT: dict[type[exp.Expression], Callable[[exp.Expression], str]] = {
    exp.National: lambda node: str(node.this),
    exp.ByteString: lambda node: str(node.this),  # E'...': escapes decoded by the parser
    exp.RawString: lambda node: str(node.this),  # dollar quoting
    exp.UnicodeString: _unicode_escapes,
    exp.BitString: _bit_string("b"),
    exp.HexString: _bit_string("x"),
}
_FORMS = tuple(_TEXT)


def with_plain_strings(stmt: exp.Expression) -> exp.Expression:
    """``stmt`` with each of those constants a plain string literal; the same object
    where it has none (the parse cache's trees stay as they are)."""
    if next(stmt.find_all(*_FORMS), None) is None:
        return stmt
    stmt = stmt.copy()
    for node in list(stmt.find_all(*_FORMS)):
        node.replace(exp.Literal.string(_TEXT[type(node)](node)))
    return stmt


__all__ = ["with_plain_strings"]
