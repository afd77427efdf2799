"""PostgreSQL's ``format(formatstr, VARIADIC args)`` as the client engine calls it
(engine/format_text.py): ``%s`` (a value's text, NULL as nothing), ``%L`` (quoted as a
literal, NULL as ``NULL``) and ``%%``, with positions (``%2$s``), the ``-`` flag and
widths (``%10s``, ``%-*s``, ``%*2$s``), and PostgreSQL's errors (22023) -- text_format
in varlena.c.  ``%I`` is refused (0A000): quoting an identifier needs PostgreSQL's
keyword list."""

from __future__ import annotations

import re
from typing import Final

import duckdb
from psycopg import errors as pg_errors

from .scalar_udfs import quote_literal

_SPECIFIER: Final = re.compile(
    r"%(?:(?P<pos>\d+)\$)?(?P<flags>-*)(?P<width>\*(?:\d+\$)?|\d+)?(?P<kind>.)?", re.S
)


def _invalid(message: str, hint: str | None = None) -> Exception:
    return pg_errors.InvalidParameterValue(message + (f"\nHINT:  {hint}" if hint else ""))


def pg_format(fmt: str | None, args: list[str | None]) -> str | None:
    """format(fmt, args...) of the arguments' texts (text_format in varlena.c)."""
    if fmt is None:
        return None
    out: list[str] = []
    i, next_arg = 0, 0
    while i < len(fmt):
        if fmt[i] != "%":
            out.append(fmt[i])
            i += 1
            continue
        if fmt[i + 1 : i + 2] == "%":
            out.append("%")
            i += 2
            continue
        m = _SPECIFIER.match(fmt, i)
        assert m is not None  # (every group optional)
        if m["kind"] is None:
            raise _invalid("unterminated format() type specifier", 'For a single "%" use "%%".')
        width, left = 0, bool(m["flags"])
        if m["width"] and m["width"].startswith("*"):
            taken = m["width"][1:-1]
            index = _position(taken) if taken else next_arg
            next_arg = index + 1
            raw = _argument(args, index)
            width = int(raw) if raw is not None else 0
            left = left or width < 0
            width = abs(width)
        elif m["width"]:
            width = int(m["width"])
        index = _position(m["pos"]) if m["pos"] else next_arg
        next_arg = index + 1
        value = _argument(args, index)
        kind = m["kind"]
        if kind == "s":
            text = value or ""
        elif kind == "L":
            text = "NULL" if value is None else quote_literal(value)
        elif kind == "I":
            raise pg_errors.FeatureNotSupported(  # (0A000: a refusal, as the client's)
                "format() with %I (an identifier quoted by the keyword list)"
            )
        else:
            raise _invalid(
                f'unrecognized format() type specifier "{kind}"',
                'For a single "%" use "%%".',
            )
        out.append(text.ljust(width) if left else text.rjust(width))
        i = m.end()
    return "".join(out)


def _position(digits: str) -> int:
    n = int(digits)
    if n == 0:
        raise _invalid("format specifies argument 0, but arguments are numbered from 1")
    return n - 1


def _argument(args: list[str | None], index: int) -> str | None:
    if index >= len(args):
        raise _invalid("too few arguments for format()")
    return args[index]


def register(con: duckdb.DuckDBPyConnection) -> None:
    """Add ``pg_format`` to ``con``."""
    from duckdb.func import FunctionNullHandling
    from duckdb.sqltypes import VARCHAR

    con.create_function(
        "pg_format",
        pg_format,
        [VARCHAR, duckdb.list_type(VARCHAR)],
        VARCHAR,
        null_handling=FunctionNullHandling.SPECIAL,  # (NULL arguments are formatted)
    )


__all__ = ["pg_format", "register"]
