"""The differential run behind the conformance suite: one column type, its literal
cases, one session setting; a plain database (psycopg) and an encrypted one (the
client) side by side.

Each literal is inserted into a ``(id integer, v <type>)`` table of each database.
Both store it, or both refuse it with the same SQLSTATE; where PostgreSQL stores it and
the client refuses, the case is a *refusal* (its row is deleted from the plain table so
that both hold the same rows).  Then the stored values are compared in few round
trips: compared to the probes (``=``, ``<``, ``>``, many in one statement), read back
(Python type and value as psycopg's loaders give them), ordered and grouped.
Anything else that differs is *wrong*."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import math
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, ClassVar

import psycopg
from psycopg.adapt import Loader
from psycopg.conninfo import make_conninfo

import adaptive_client
from adaptive_client.catalog.keys import MasterKey

CASES = Path(__file__).parent / "cases"
STATEMENT_TIMEOUT_MS = 60_000
# probes compared in one statement (three comparisons each)
PROBES_PER_QUERY = 40
# literals whose value is the moment they are read: the two databases read them at
# different instants, so only their acceptance is compared
VOLATILE = frozenset({"now"})
OPERATORS = ("=", "<", ">")
# stored literals (besides the file's probes) compared in a WHERE, per run
WHERE_SAMPLE = 32


@dataclass(frozen=True)
class Cases:
    """A case file: its literals in order and those marked ``probe``."""

    literals: tuple[str, ...]
    probes: frozenset[str]


def read_cases(name: str) -> Cases:
    literals: list[str] = []
    probes: set[str] = set()
    for line in (CASES / f"{name}.txt").read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        probe = line.startswith("probe ")
        value = json.loads(line.removeprefix("probe "))
        literals.append(value)
        if probe:
            probes.add(value)
    return Cases(tuple(literals), frozenset(probes))


@dataclass
class Pair:
    plain: psycopg.Connection[Any]
    enc: adaptive_client.Connection
    created: set[str] = field(default_factory=set)  # the setup statements run

    def both(self, sql: str) -> None:
        self.plain.execute(sql)
        self.enc.execute(sql)

    def setup(self, statements: Sequence[str]) -> None:
        """Run each statement (CREATE TYPE, CREATE DOMAIN) once on both databases."""
        for sql in statements:
            if sql not in self.created:
                self.both(sql)
                self.created.add(sql)


def open_pair(
    new_database: Callable[..., str], master_key: MasterKey, name: str, locale: str = ""
) -> Iterator[Pair]:
    # every statement bounded: a hang fails the test instead of stalling the run
    bounded = {"options": f"-c statement_timeout={STATEMENT_TIMEOUT_MS}"}
    plain = psycopg.connect(
        make_conninfo(new_database(f"{name}_p", locale=locale), **bounded), autocommit=True
    )
    _lenient_datetimes(plain)
    enc = adaptive_client.connect(
        make_conninfo(new_database(f"{name}_e", locale=locale), **bounded),
        master_key=master_key.hex(),
        autocommit=True,
    )
    # (the client hands a value out through the session's loaders, as psycopg: a BC
    # date reads as Unloadable on both sides)
    _lenient_datetimes(enc.pg)
    try:
        yield Pair(plain, enc)
    finally:
        plain.close()
        enc.close()


@dataclass(frozen=True)
class Unloadable:
    """A plain value psycopg's loader refuses (``infinity`` dates): its text."""

    text: str


class _Lenient(Loader):
    """psycopg's loader of a type (``wrapped``), but a value it refuses (an
    ``infinity`` date) read as :class:`Unloadable` instead of raising."""

    wrapped: ClassVar[Any]

    def __init__(self, oid: int, context: Any = None) -> None:
        super().__init__(oid, context)
        self._loader = self.wrapped(oid, context)

    def load(self, data: Any) -> Any:
        try:
            return self._loader.load(data)
        except psycopg.DataError:
            return Unloadable(bytes(data).decode())


def _lenient_datetimes(conn: psycopg.Connection[Any]) -> None:
    """Read the plain database's dates and timestamps leniently (the client returns its
    own ``Infinite`` value where psycopg's loaders raise)."""
    for name in ("date", "timestamp", "timestamptz"):
        info = conn.adapters.types[name]
        assert info is not None
        base = psycopg.adapters.get_loader(info.oid, psycopg.pq.Format.TEXT)
        conn.adapters.register_loader(
            info.oid, type(f"Lenient_{name}", (_Lenient,), {"wrapped": base})
        )


def norm(v: Any) -> Any:
    """A value comparable across the two databases: its type and value (NaN equal to
    itself, a Decimal with its scale, a datetime with its zone, ``infinity`` as text, a
    list element by element)."""
    if isinstance(v, float):
        return ("float", "nan" if math.isnan(v) else repr(v))
    if isinstance(v, Decimal):
        return ("Decimal", str(v))
    if isinstance(v, dt.datetime):
        return ("datetime", v.isoformat(), str(v.tzinfo) if v.tzinfo else None)
    if isinstance(v, dt.date | dt.time | uuid.UUID | bytes):
        return (type(v).__name__, str(v))
    if isinstance(v, Unloadable) or type(v).__name__ == "Infinite":
        return ("infinite", str(v.text if isinstance(v, Unloadable) else v))
    if isinstance(v, list):  # (an array: its elements so compared)
        return ("list", tuple(norm(x) for x in v))
    return (type(v).__name__, repr(v))


def _group_key(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A GROUP BY row compared up to the value shown for its group: PostgreSQL shows one
    of the group's equal values, which one depending on the plan (``1.12`` or ``1.120``,
    ``0`` or ``-0``, jsonb's ``1`` or ``1.0``)."""
    value, *rest = row
    if value[0] in ("int", "float") and value[1] not in ("nan", "inf", "-inf"):
        # (a jsonb number, loaded as an int or a float: 1 and 1.0 group together)
        value = ("Decimal", str(Decimal(value[1]).normalize() + 0))
    if value[0] == "Decimal":
        d = Decimal(value[1])
        value = ("Decimal", "0" if d.is_zero() else str(d.normalize()) if d.is_finite() else str(d))
    elif value == ("float", "-0.0"):
        value = ("float", "0.0")
    return (value, *rest)


def outcome(conn: Any, sql: str) -> tuple[str, Any]:
    """``("ok", rows)`` or ``("error", sqlstate or class name)``."""
    try:
        cur = conn.execute(sql)
        rows = cur.fetchall() if cur.description else None
    except psycopg.Error as exc:
        return ("error", exc.sqlstate or f"{type(exc).__name__}: {exc}"[:160])
    except Exception as exc:  # (a client's internal error: a refusal of its own kind)
        return ("error", f"{type(exc).__name__}: {exc}"[:120])
    return ("ok", None if rows is None else [tuple(norm(v) for v in r) for r in rows])


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@dataclass
class Findings:
    """What a run found: the refusals (literal -> the client's error),
    the checks the client refuses where PostgreSQL answers (check -> error: ``=``,
    ``<``, ``>`` in a WHERE, ``select-list`` comparisons, ``read``, ``order``,
    ``group``, ``distinct``), and the differences that are wrong answers."""

    refused: dict[str, str] = field(default_factory=dict)
    refused_checks: dict[str, str] = field(default_factory=dict)
    wrong: list[tuple[str, str]] = field(default_factory=list)  # (check, what differs)


_SEQ = itertools.count()


def run(
    pair: Pair, sql_type: str, cases: Cases, settings: Sequence[str], setup: Sequence[str] = ()
) -> Findings:
    """Insert every case under ``settings`` (SET statements run on both connections)
    and compare everything (see the module docstring); ``setup`` creates the column's
    type first (once a pair)."""
    found = Findings()
    pair.setup(setup)
    for s in settings:
        pair.both(s)
    table = f"conf_{next(_SEQ)}"
    pair.both(f"CREATE TABLE {table} (id integer PRIMARY KEY, v {sql_type})")
    stored: dict[int, str] = {}
    for i, text in enumerate(cases.literals):
        sql = f"INSERT INTO {table} VALUES ({i}, {literal(text)})"
        plain, enc = outcome(pair.plain, sql), outcome(pair.enc, sql)
        if plain == enc:
            if plain[0] == "ok":
                stored[i] = text
        elif plain[0] == "ok" and enc[0] == "error":
            found.refused[text] = enc[1]
            pair.plain.execute(f"DELETE FROM {table} WHERE id = {i}")
        else:
            found.wrong.append(("insert", f"INSERT {text!r}: PostgreSQL {plain}, client {enc}"))
            _delete_both(pair, table, i)
    for i, text in list(stored.items()):
        if text.strip().lower() in VOLATILE:
            _delete_both(pair, table, i)
            del stored[i]
    _compare_probes(pair, table, cases, stored, found)
    # the values read back, ordered and grouped (DateStyle ISO and IntervalStyle postgres:
    # psycopg's loaders read them; what is stored no longer depends on them)
    pair.both("SET DateStyle = 'ISO, MDY'")
    pair.both("SET IntervalStyle = 'postgres'")
    # values psycopg cannot load (an interval past timedelta's range) are read alone: a
    # statement reading them fails, on either side, at whichever such row comes first
    alone = _unloadable(pair.plain, table)
    loadable = f"WHERE id NOT IN ({', '.join(map(str, alone))})" if alone else ""
    queries = {
        "read": f"SELECT id, v FROM {table} {loadable} ORDER BY id",
        **{f"read {i}": f"SELECT v FROM {table} WHERE id = {i}" for i in alone},
        "order": f"SELECT id FROM {table} ORDER BY v, id",
        "order desc": f"SELECT id FROM {table} ORDER BY v DESC, id",
        "group": f"SELECT v, count(*) FROM {table} {loadable} GROUP BY v",
        "group ids": f"SELECT min(id), count(*) FROM {table} GROUP BY v",
        "distinct": f"SELECT count(DISTINCT v) FROM {table}",
    }
    for check, sql in queries.items():
        got = [outcome(pair.plain, sql), outcome(pair.enc, sql)]
        if "GROUP BY" in sql:
            got = [(k, sorted(map(_group_key, r)) if k == "ok" else r) for k, r in got]
        if got[0] == got[1]:
            continue
        if got[0][0] == "ok" and got[1][0] == "error":
            found.refused_checks[check] = got[1][1]
        else:
            found.wrong.append((check, f"{sql}: " + _difference(got[0], got[1])))
    return found


# the types whose values psycopg's loader may refuse with no lenient reading here
# (dates and timestamps: read as :class:`Unloadable`, the client returns ``Infinite``)
_STRICT_LOADS = frozenset({"interval"})


def _unloadable(plain: psycopg.Connection[Any], table: str) -> list[int]:
    """The ids of the rows whose value psycopg's loader refuses (of a type of
    ``_STRICT_LOADS``), read from the plain database as text."""
    rows = plain.execute(f"SELECT id, v::text, pg_typeof(v)::text FROM {table}").fetchall()
    out = []
    for i, text, type_name in rows:
        info = plain.adapters.types.get(type_name)
        if text is None or type_name not in _STRICT_LOADS or info is None:
            continue
        loader = psycopg.adapters.get_loader(info.oid, psycopg.pq.Format.TEXT)
        try:
            loader(info.oid).load(text.encode())  # type: ignore[misc]
        except psycopg.DataError:
            out.append(i)
    return sorted(out)


def _delete_both(pair: Pair, table: str, i: int) -> None:
    pair.both(f"DELETE FROM {table} WHERE id = {i}")


def _compare_probes(
    pair: Pair, table: str, cases: Cases, stored: dict[int, str], found: Findings
) -> None:
    """The stored values compared to each probe: the file's probes and every stored
    literal, many probes a statement (comparisons in the select list); then each
    operator alone in a WHERE with the file's probes, a sample of the others and those
    with leading or trailing spaces.  A probe PostgreSQL refuses is checked alone (the
    same SQLSTATE)."""
    good = list(dict.fromkeys(t for t in stored.values() if t.strip().lower() not in VOLATILE))
    for p in sorted(cases.probes - set(good) - set(found.refused)):
        sql = f"SELECT id FROM {table} WHERE v < {literal(p)} ORDER BY id"
        got = [outcome(pair.plain, sql), outcome(pair.enc, sql)]
        if got[0] != got[1]:
            found.wrong.append(("probe", f"probe {p!r}: PostgreSQL {got[0]}, client {got[1]}"))
    for start in range(0, len(good), PROBES_PER_QUERY):
        chunk = good[start : start + PROBES_PER_QUERY]
        columns = ", ".join(f"v {op} {literal(p)}" for p in chunk for op in OPERATORS)
        sql = f"SELECT id, {columns} FROM {table} ORDER BY id"
        got = [outcome(pair.plain, sql), outcome(pair.enc, sql)]
        if got[0] == got[1]:
            continue
        if got[0][0] != "ok" or got[1][0] == "ok":
            found.wrong.append(("select-list", _probe_difference(got[0], got[1], chunk, stored)))
        else:
            found.refused_checks["select-list"] = got[1][1]
    # each operator alone in a WHERE (what the server answers) with the file's probes, a
    # sample of the stored literals and those with leading or trailing spaces: a round
    # trip each
    step = max(1, len(good) // WHERE_SAMPLE)
    padded = [t for t in good if t != t.strip()]  # (what a type trims, or char(n) pads)
    for p in dict.fromkeys([*sorted(cases.probes & set(good)), *good[::step], *padded]):
        for op in OPERATORS:
            sql = f"SELECT id FROM {table} WHERE v {op} {literal(p)} ORDER BY id"
            one = [outcome(pair.plain, sql), outcome(pair.enc, sql)]
            if one[0] == one[1]:
                continue
            if one[0][0] == "ok" and one[1][0] == "error":
                found.refused_checks[op] = one[1][1]
            else:
                found.wrong.append((op, f"v {op} {p!r}: PostgreSQL {one[0]}, client {one[1]}"))


def _probe_difference(
    plain: tuple[str, Any], enc: tuple[str, Any], chunk: list[str], stored: dict[int, str]
) -> str:
    if plain[0] != "ok" or enc[0] != "ok" or len(plain[1]) != len(enc[1]):
        return f"probes {chunk[:3]!r}...: PostgreSQL {str(plain)[:200]}, client {str(enc)[:200]}"
    out = []
    for prow, erow in zip(plain[1], enc[1], strict=True):
        for k, (a, b) in enumerate(zip(prow[1:], erow[1:], strict=True)):
            if a != b:
                p, op = chunk[k // 3], OPERATORS[k % 3]
                row = stored.get(int(prow[0][1]))
                out.append(f"{row!r} {op} {p!r}: PostgreSQL {a}, client {b}")
    return f"{len(out)} comparisons differ: " + "; ".join(out[:5])


def _difference(plain: tuple[str, Any], enc: tuple[str, Any]) -> str:
    """The first rows that differ."""
    if plain[0] != "ok" or enc[0] != "ok":
        return f"PostgreSQL {str(plain)[:300]}, client {str(enc)[:300]}"
    rows = [(a, b) for a, b in itertools.zip_longest(plain[1], enc[1]) if a != b]
    shown = "; ".join(f"PostgreSQL {a} client {b}" for a, b in rows[:4])
    return f"{len(rows)} rows differ: {shown}"
