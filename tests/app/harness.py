"""The application suite's judge: one statement on plain PostgreSQL (psycopg) and through
the client, results, order, errors and whole-table contents compared.

Each case runs inside a transaction of each connection, under a savepoint, and is
rolled back at its end, so cases are independent of one another and of their order.
A statement that fails on the plain database must fail through the client with the
same psycopg class, and leave every table as it was; one that succeeds must give the
same rows (in the same order when the statement orders them).  After every write, each
table's contents are compared.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import psycopg

import adaptive_client

# Values a default computed at run time gives (now(), CURRENT_DATE) differ between the
# two databases by the time between the two statements: within this window of the
# suite's run they compare as "recent".
_RECENT = dt.timedelta(minutes=10)


@dataclass(frozen=True)
class Case:
    """One or more statements run in order in one transaction; ``ordered`` says that the
    last statement's rows are compared in order (else as a multiset)."""

    id: str
    statements: Sequence[tuple[str, Any]]
    ordered: bool = False
    gap: str | None = None  # a known gap: the case is expected to fail, strictly

    @staticmethod
    def of(
        id: str, sql: str, params: Any = None, *, ordered: bool = False, gap: str | None = None
    ) -> Case:
        return Case(id, [(sql, params)], ordered, gap)


@dataclass
class Outcome:
    rows: list[tuple[Any, ...]] | None = None
    names: list[str] | None = None
    rowcount: int = -1
    error: BaseException | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def norm(v: Any, now: dt.datetime) -> Any:
    if isinstance(v, Decimal):
        return ("D", str(v.normalize()) if v == v else "NaN")
    if isinstance(v, float):
        return ("F", repr(v))
    if isinstance(v, dt.datetime):
        if abs(v - now) < _RECENT:
            return ("T", "recent")
        return ("T", v.isoformat())
    if isinstance(v, dt.date):
        return ("T", "today" if v == now.date() else v.isoformat())
    return (type(v).__name__, repr(v))


def rows_of(rows: list[tuple[Any, ...]], ordered: bool, now: dt.datetime) -> list[Any]:
    out = [tuple(norm(v, now) for v in r) for r in rows]
    return out if ordered else sorted(out)


def run(conn: Any, sql: str, params: Any) -> Outcome:
    try:
        cur = conn.execute(sql, params)
    except (psycopg.Error, adaptive_client.AdaptiveError) as exc:
        return Outcome(error=exc)
    if cur.description is None:
        return Outcome(rowcount=cur.rowcount)
    return Outcome(cur.fetchall(), [d[0] for d in cur.description], cur.rowcount)


class Pair:
    """A plain database and an encrypted one with the same schema and data."""

    def __init__(
        self,
        plain: psycopg.Connection[Any],
        enc: adaptive_client.Connection,
        tables: list[str],
        *,
        refusals_ok: bool = False,
    ) -> None:
        """``refusals_ok``: a typed refusal (UnsupportedQuery) counts as a pass -- for a
        database whose collation the client cannot reproduce, where refusing an ordered
        operation is the right answer; a different answer never does."""
        self.plain, self.enc, self.tables = plain, enc, tables
        self.refusals_ok = refusals_ok
        self.refused: list[str] = []
        self.now = dt.datetime.now()

    def contents(self, conn: Any) -> dict[str, list[Any]]:
        """Every table's rows (those a schema change in the case renamed or dropped on
        the plain database are left out on both)."""
        out = {}
        present = self.plain.execute(
            "SELECT t FROM unnest(%s::text[]) t WHERE to_regclass(t) IS NOT NULL", (self.tables,)
        ).fetchall()
        for (t,) in present:
            rows = conn.execute(f"SELECT * FROM {t}").fetchall()
            out[t] = rows_of(rows, False, self.now)
        return out

    def check(self, case: Case) -> None:
        """Run ``case`` on both databases and assert equal outcomes; roll both back."""
        for conn in (self.plain, self.enc):
            conn.execute("SAVEPOINT app_case")
        try:
            for i, (sql, params) in enumerate(case.statements):
                last = i == len(case.statements) - 1
                self._statement(sql, params, case.ordered and last)
        except _Refused:
            pass
        finally:
            for conn in (self.plain, self.enc):
                conn.execute("ROLLBACK TO SAVEPOINT app_case")
                conn.execute("RELEASE SAVEPOINT app_case")

    def _statement(self, sql: str, params: Any, ordered: bool) -> None:
        before = None
        expected = run(self.plain, sql, params)
        if expected.error is not None:
            self.plain.execute("ROLLBACK TO SAVEPOINT app_case")
            self.plain.execute("SAVEPOINT app_case")
            before = self.contents(self.plain)
        got = run(self.enc, sql, params)
        if expected.error is not None:
            assert got.error is not None, (
                f"plain PostgreSQL raised {type(expected.error).__name__} "
                f"({str(expected.error).strip()}) but the client succeeded: {sql}"
            )
            assert isinstance(got.error, type(expected.error)), (
                f"plain raised {type(expected.error).__name__}, the client "
                f"{type(got.error).__name__}: {got.error}"
            )
            self.enc.execute("ROLLBACK TO SAVEPOINT app_case")
            self.enc.execute("SAVEPOINT app_case")
            assert self.contents(self.enc) == before, "the failed statement changed the data"
            return
        if self.refusals_ok and isinstance(got.error, adaptive_client.UnsupportedQuery):
            self.refused.append(sql)
            raise _Refused  # the rest of the case is skipped; both roll back
        if got.error is not None:
            raise AssertionError(
                f"the client raised {type(got.error).__name__} where PostgreSQL answers: "
                f"{got.error}"
            ) from got.error
        assert (expected.rows is None) == (got.rows is None), sql
        if expected.rows is not None and got.rows is not None:
            assert got.names == expected.names, (sql, got.names, expected.names)
            assert rows_of(got.rows, ordered, self.now) == rows_of(
                expected.rows, ordered, self.now
            ), sql
        if expected.rows is None or _writes(sql):
            assert got.rowcount == expected.rowcount, (sql, got.rowcount, expected.rowcount)
            assert self.contents(self.enc) == self.contents(self.plain), (
                f"table contents differ after: {sql}"
            )


class _Refused(Exception):
    """The client refused a statement, typed, where refusals are accepted."""


def _writes(sql: str) -> bool:
    head = sql.lstrip().split(None, 1)[0].upper()
    return head in ("INSERT", "UPDATE", "DELETE", "WITH", "MERGE")
