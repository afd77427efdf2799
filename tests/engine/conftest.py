"""The judge of the engine's function suites: PostgreSQL evaluating the same call over the
same literals, on a C database and on an ICU one.

A case is a function or operator name (a key of ``ROW_FUNCTIONS``) and its arguments as
typed literals (``lit('{"a": 1}', "jsonb")``).  ``judge.check(name, *args)`` evaluates
``SELECT <call>`` on the server (results as text) and the registered Python function over
the client values the literals read as, and asserts the same outcome: the same printed
result (rows, for a set-returning function), or the same SQLSTATE and message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest

from adaptive_client.engine import array_functions
from adaptive_client.engine.row_functions import AGGREGATES, ROW_FUNCTIONS, RowFunction
from adaptive_client.values.array_encoding import array_text
from adaptive_client.values.encodings import encoding_for, pg_text
from adaptive_client.values.json_encoding import JsonbText

ICU = "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"


@dataclass(frozen=True)
class Lit:
    """A typed SQL literal (``text`` None: NULL of that type; ``omitted``: a slice
    bound left out)."""

    text: str | None
    type: str
    omitted: bool = False

    def sql(self) -> str:
        if self.omitted:
            return ""
        if self.text is None:
            return f"NULL::{self.type}"
        return "'" + self.text.replace("'", "''") + f"'::{self.type}"

    def value(self) -> Any:
        if self.omitted:
            return array_functions.OMITTED
        return encoding_for(self.type).coerce(self.text)


def lit(text: str | None, type_: str = "jsonb") -> Lit:
    return Lit(text, type_)


OMIT = Lit(None, "integer", omitted=True)

_BINARY = frozenset({"->", "->>", "#>", "#>>", "@>", "<@", "?", "?|", "?&", "&&", "||", "-", "#-"})


def _matches(pattern: Sequence[str], types: Sequence[str]) -> bool:
    i = 0
    for k, p in enumerate(pattern):
        if p.startswith("variadic "):
            return all(_fits(p.removeprefix("variadic "), t) for t in types[k:])
        if k >= len(types) or not _fits(p, types[k]):
            return False
        i = k + 1
    return i == len(types)


def _fits(pattern: str, type_: str) -> bool:
    if pattern in ("any", "anyelement"):
        return True
    if pattern == "anyarray" or pattern.endswith("[]"):
        return type_.endswith("[]") and (pattern == "anyarray" or pattern == type_)
    return pattern == type_


def pick(name: str, args: Sequence[Lit], table: dict[str, tuple[RowFunction, ...]]) -> RowFunction:
    types = [a.type for a in args]
    for fn in table[name]:
        if _matches(fn.args, types):
            return fn
    raise AssertionError(f"no overload of {name} for {types}")


def call_sql(name: str, args: Sequence[Lit]) -> str:
    s = [a.sql() for a in args]
    if name in _BINARY:
        return f"({s[0]} {name} {s[1]})"
    if name in ("= ANY", "<> ALL", "= ALL", "<> ANY"):
        return f"({s[0]} {name}({s[1]}))"
    if name == "[]":
        return f"({s[0]})" + "".join(f"[{x}]" for x in s[1:])
    if name == "[:]":
        return f"({s[0]})" + "".join(f"[{s[k]}:{s[k + 1]}]" for k in range(1, len(s), 2))
    return f"{name}({', '.join(s)})"


def _text(v: Any, result: str) -> str | None:
    """A client result printed as ``::text`` prints the server's."""
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, JsonbText):
        return v.text
    if isinstance(v, list):
        return array_text(v, _element_text)
    return pg_text(v)


def _element_text(v: Any) -> str | None:
    return pg_text(v)


def _encoding(fn: RowFunction, args: Sequence[Lit]) -> Any:
    if fn.impl.__module__.endswith("array_functions"):
        arrays = [a.type for a in args if a.type.endswith("[]")]
        return encoding_for(arrays[0] if arrays else "text[]")
    return encoding_for("jsonb")


Outcome = tuple[Any, ...]


class Judge:
    def __init__(self, conn: psycopg.Connection[Any], name: str) -> None:
        self.conn = conn
        self.name = name

    def server(self, sql: str) -> Outcome:
        try:
            with self.conn.transaction():
                rows = self.conn.execute(sql).fetchall()
        except psycopg.Error as e:
            assert e.diag.sqlstate is not None, e
            return ("error", e.diag.sqlstate, e.diag.message_primary)
        return ("ok", rows)

    def client(self, compute: Callable[[], Any]) -> Outcome:
        try:
            return ("ok", compute())
        except psycopg.Error as e:
            return ("error", e.sqlstate, str(e).split("\n")[0])

    def check(self, name: str, *args: Lit) -> None:
        fn = pick(name, args, ROW_FUNCTIONS)
        call = call_sql(name, args)
        setof = fn.result.startswith("setof ")
        if not setof:
            expected = self.server(f"SELECT ({call})::text")
        elif fn.result.startswith("setof record"):
            expected = self.server(f"SELECT key::text, value::text FROM {call} AS t")
        else:
            expected = self.server(f"SELECT x::text FROM {call} AS t(x)")

        def compute() -> Any:
            values = [a.value() for a in args]
            if fn.strict and any(v is None for v in values):
                return [] if setof else [(None,)]
            out = fn.impl(_encoding(fn, args), *values)
            if not setof:
                return [(_text(out, fn.result),)]
            if fn.result.startswith("setof record"):
                return [(k, _text(v, "")) for k, v in out]
            return [(_text(x, ""),) for x in out]

        got = self.client(compute)
        assert got == expected, f"{call} on {self.name}: client {got}, server {expected}"

    def check_aggregate(self, name: str, type_: str, *columns: Sequence[str | None]) -> None:
        """``name`` over rows of literals (one sequence per argument) of ``type_``."""
        fn = pick(name, [Lit(None, type_)] * len(columns), AGGREGATES)
        n = len(columns[0])
        cols = ", ".join(f"c{k}" for k in range(len(columns)))
        if n:
            rows = ", ".join(
                "(" + ", ".join([str(i)] + [Lit(c[i], type_).sql() for c in columns]) + ")"
                for i in range(n)
            )
            source = f"(VALUES {rows}) AS v(i, {cols})"
        else:
            source = f"(SELECT 1 AS i, {', '.join(f'NULL::{type_} AS c{k}' for k in range(len(columns)))} WHERE false) AS v"
        expected = self.server(f"SELECT {name}({cols} ORDER BY i)::text FROM {source}")

        def compute() -> Any:
            lists = [[Lit(x, type_).value() for x in c] for c in columns]
            return [(_text(fn.impl(encoding_for("jsonb"), *lists), fn.result),)]

        got = self.client(compute)
        assert got == expected, (
            f"{name} over {columns} on {self.name}: client {got}, server {expected}"
        )


@pytest.fixture(scope="session", params=["C", "ICU"])
def judge(request: pytest.FixtureRequest, new_database: Callable[..., str]) -> Iterator[Judge]:
    dsn = new_database(f"engine_{request.param}", locale=ICU if request.param == "ICU" else "")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET TimeZone = 'UTC'")
        yield Judge(conn, request.param)
