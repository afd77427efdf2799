"""Differential suite: the same SQL on plain PostgreSQL and through the client.

The encrypted database starts with every onion at its strongest layer (keys excepted:
their Eq onion starts at DET), so the suite drives real peels.  It runs once with the
peel mode ``server`` (PL/Python) and once with ``client``.
"""

from __future__ import annotations

import datetime as dt
import re
import subprocess
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.errors import AdaptiveError

from .queries import Q, client_aggregates, dml, queries
from .schema import CONFIG, DDL, MARKERS, dept_rows, emp_rows

INSERT_DEPT = "INSERT INTO dept (id, dname, budget, region) VALUES (%s, %s, %s, %s)"
INSERT_EMP = (
    "INSERT INTO emp (id, name, dept, salary, bonus, hired, updated, score, active, note) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)


def _norm(v: Any) -> Any:
    if isinstance(v, Decimal):
        return ("D", str(v.normalize()) if v == v else "NaN")
    if isinstance(v, float):
        return ("F", repr(v))
    if isinstance(v, dt.datetime | dt.date):
        return ("T", v.isoformat())
    return (type(v).__name__, repr(v))


def _rows(rows: list[tuple[Any, ...]], ordered: bool) -> list[tuple[Any, ...]]:
    out = [tuple(_norm(v) for v in r) for r in rows]
    return out if ordered else sorted(out)


def run_both(
    plain: psycopg.Connection[Any], enc: adaptive_client.Connection, q: Q
) -> tuple[Any, Any]:
    expected = plain.execute(q.sql, q.params or None).fetchall()
    got = enc.execute(q.sql, q.params or None).fetchall()
    return _rows(expected, q.ordered), _rows(got, q.ordered)


class Pair:
    def __init__(
        self, plain: psycopg.Connection[Any], enc: adaptive_client.Connection, dsn: str
    ) -> None:
        self.plain, self.enc, self.enc_dsn = plain, enc, dsn


def _load(new_database: Any, master_key: Any, peel: str) -> Iterator[Pair]:
    plain_dsn = new_database("plain")
    enc_dsn = new_database("enc")
    plain = psycopg.connect(plain_dsn, autocommit=True)
    enc = adaptive_client.connect(
        enc_dsn, master_key=master_key, config=CONFIG, peel=peel, autocommit=True
    )
    for stmt in DDL:
        plain.execute(stmt)
        enc.execute(stmt)
    depts, emps = dept_rows(), emp_rows()
    with plain.cursor() as cur:
        cur.executemany(INSERT_DEPT, depts)
        cur.executemany(INSERT_EMP, emps)
    with enc.transaction():
        cur = enc.cursor()
        cur.executemany(INSERT_DEPT, depts)
        cur.executemany(INSERT_EMP, emps)
    try:
        yield Pair(plain, enc, enc_dsn)
    finally:
        plain.close()
        enc.close()


@pytest.fixture(scope="module", params=["server", "client"])
def pair(request: Any, new_database: Any, master_key: Any) -> Iterator[Pair]:
    yield from _load(new_database, master_key, request.param)


ALL = queries() + client_aggregates()


def test_enough_statements() -> None:
    assert len({(q.sql, q.params) for q in ALL}) + len(dml()) >= 150


def test_queries_match_plain(pair: Pair) -> None:
    mismatches = []
    for q in ALL:
        try:
            expected, got = run_both(pair.plain, pair.enc, q)
        except (AdaptiveError, psycopg.Error) as exc:
            mismatches.append((q.sql, f"{type(exc).__name__}: {exc}"))
            continue
        if expected != got:
            mismatches.append((q.sql, f"expected {expected[:3]}... got {got[:3]}..."))
    assert not mismatches, "\n".join(f"{s}\n    {m}" for s, m in mismatches)


def test_peels_happened(pair: Pair) -> None:
    with psycopg.connect(pair.enc_dsn) as c:
        peels = c.execute("SELECT count(*), count(DISTINCT mode) FROM adaptive.peel_log").fetchone()
        rnd_left = c.execute("SELECT count(*) FROM adaptive.layers WHERE layer = 'RND'").fetchone()
    assert peels is not None and peels[0] >= 10
    assert rnd_left is not None and rnd_left[0] >= 1  # columns never needed stay at RND


def test_dml_matches_plain(pair: Pair) -> None:
    for q in dml():
        pair.plain.execute(q.sql, q.params or None)
        pair.enc.execute(q.sql, q.params or None)
    for table in ("emp", "dept"):
        q = Q(f"SELECT * FROM {table} ORDER BY id", (), True)
        expected, got = run_both(pair.plain, pair.enc, q)
        assert expected == got, f"{table} differs after DML"


def test_dump_has_no_plaintext(pair: Pair, pg_cluster: Any) -> None:
    from adaptive_client.admin.embedded import find_bindir

    info = psycopg.conninfo.conninfo_to_dict(pair.enc_dsn)
    dump = subprocess.run(
        [
            str(find_bindir() / "pg_dump"),
            "-h",
            str(info.get("host", "127.0.0.1")),
            "-p",
            str(info.get("port", 5432)),
            "-U",
            str(info.get("user", "postgres")),
            str(info["dbname"]),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert len(dump) > 100_000
    for needle in [*MARKERS, "emp_dept_idx", "Bobson", "Dept 0"]:
        assert needle not in dump, needle
    identifiers = [
        "emp",
        "dept",
        "name",
        "salary",
        "bonus",
        "hired",
        "updated",
        "score",
        "active",
        "note",
        "dname",
        "budget",
        "region",
    ]
    for ident in identifiers:  # as whole words, case-sensitive (pg_dump's headers say "Name:")
        assert not re.search(rf"\b{ident}\b", dump), ident
