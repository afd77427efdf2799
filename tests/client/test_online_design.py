"""Online design: a statement the server cannot finish over the onions a table has gets
what the designer would propose -- a column's Sum onion, a precomputed expression -- on
its first run (compile/design_wants.py, adapt/designed.py), within the table's budget;
every answer equal to plain PostgreSQL's before, during and after, on a C and an ICU
database."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.adapt import index_rebuild, progress
from adaptive_client.admin import cli
from adaptive_client.admin.controls import layers_report
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.catalog.onions import Onion
from adaptive_client.compile.design_wants import ROW_BYTES

from .pairs import plain_and_encrypted

ICU = "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"
DDL = (
    "CREATE TABLE li (id integer PRIMARY KEY, grp text NOT NULL, price numeric(12,2) NOT NULL, "
    "disc numeric(4,2), qty integer, note text)"
)
ROWS = [
    (
        i,
        ["north", "South", "éast", "west"][i % 4],
        Decimal(i * 7 % 1000) + Decimal("0.25"),
        None if i % 11 == 0 else Decimal(i % 10) / 100,
        None if i % 13 == 0 else i % 9,
        None if i % 17 == 0 else ("special requests" if i % 5 == 0 else f"plain {i}"),
    )
    for i in range(1, 301)
]
REVENUE = "SELECT grp, sum(price * (1 - disc)) AS rev FROM li GROUP BY grp ORDER BY rev DESC"
SUMS = "SELECT sum(qty), avg(price), count(*) FROM li WHERE id > 10"
NOT_SPECIAL = "SELECT count(*) FROM li WHERE note NOT LIKE '%special%requests%'"


class Pair:
    def __init__(self, plain: psycopg.Connection[Any], enc: adaptive_client.Connection) -> None:
        self.plain, self.enc = plain, enc

    def same(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        """The rows and the output columns' names, as plain PostgreSQL gives them."""
        cur = self.plain.execute(sql, params)
        expected, names = cur.fetchall(), [d[0] for d in cur.description or ()]
        got_cur = self.enc.execute(sql, params)
        got = got_cur.fetchall()
        assert got == expected, sql
        assert [d[0] for d in got_cur.description or ()] == names, sql
        return got

    def shipped(self, sql: str) -> int:
        """The rows the client fetched to answer ``sql`` (equal to plain's answer)."""
        before = self.enc.stats.residual_rows
        self.same(sql)
        return self.enc.stats.residual_rows - before

    def designed(self) -> list[dict[str, Any]]:
        return list(self.enc.catalog.table("li").designed)

    def builds(self) -> int:
        row = self.enc.control.execute(
            "SELECT count(*) FROM adaptive.peel_log WHERE mode = 'build'"
        ).fetchone()
        return int(row[0]) if row else 0


@contextmanager
def _opened(
    new_database: Callable[..., str],
    master_key: MasterKey,
    name: str,
    locale: str = "",
    config: dict[str, Any] | None = None,
) -> Iterator[Pair]:
    with plain_and_encrypted(
        new_database, master_key, name, config or {}, [DDL], {"li": ROWS}, locale
    ) as (plain, enc):
        yield Pair(plain, enc)


@pytest.fixture(params=["C", "ICU"])
def pair(
    request: pytest.FixtureRequest, new_database: Callable[..., str], master_key: MasterKey
) -> Iterator[Pair]:
    locale = ICU if request.param == "ICU" else ""
    with _opened(new_database, master_key, f"design_{request.param.lower()}", locale) as p:
        yield p


def test_first_run_builds_what_the_designer_proposes(pair: Pair, master_key: Any) -> None:
    """The first run of each statement builds its wants; from then on the server does the
    work (nothing shipped) and the answers stay PostgreSQL's."""
    li = pair.enc.catalog.table("li")
    assert all(Onion.SUM in li.column(c).on_demand for c in ("price", "disc", "qty"))
    for sql in (REVENUE, SUMS, NOT_SPECIAL):
        pair.same(sql)
        assert pair.shipped(sql) == 0, sql
    whats = [d["what"] for d in pair.designed()]
    assert whats[0] == "price * (1 - disc)"  # (in the order the statements asked)
    assert sorted(whats[1:3]) == ["price's Sum onion", "qty's Sum onion"]
    assert whats[3:] == ["note NOT LIKE '%special%requests%'"]
    li = pair.enc.catalog.table("li")
    assert Onion.SUM in li.column("qty").onions and Onion.SUM not in li.column("qty").on_demand
    assert Onion.SUM in li.column("disc").on_demand  # (never summed alone: not built)
    # the DBA sees what was designed, in the order it appeared, and the budget spent
    report = layers_report(pair.enc.control, master_key)
    hidden = {r.column for r in report if r.table == "li"}
    assert {d["column"] for d in pair.designed()} <= hidden
    assert li.designed_bytes == sum(d["bytes"] for d in pair.designed()) <= 256
    # writes after the build keep the precomputed columns exact
    for conn in (pair.plain, pair.enc):
        conn.execute("INSERT INTO li VALUES (999, 'north', 10.50, 0.10, 3, 'special requests')")
        conn.execute("UPDATE li SET disc = 0.20 WHERE id BETWEEN 20 AND 40")
        conn.execute("UPDATE li SET note = 'special x requests' WHERE id IN (3, 4, 5, 6)")
        conn.execute("UPDATE li SET price = price + 1, qty = NULL WHERE id < 9")
        conn.execute("DELETE FROM li WHERE id > 280")
    for sql in (REVENUE, SUMS, NOT_SPECIAL):
        assert pair.shipped(sql) == 0, sql


def test_one_statement_rewrites_its_table_once(pair: Pair) -> None:
    """Everything one statement wants of a table is built in one pass: one UPDATE of
    every row, however many onions (here a Sum onion and two precomputed expressions)."""
    sql = (
        "SELECT grp, sum(qty), sum(price * disc), count(*) FROM li "
        "WHERE note NOT LIKE '%special%' GROUP BY grp ORDER BY grp"
    )
    control = pair.enc.control
    anon = pair.enc.catalog.table("li").anon

    def updated() -> int:
        control.execute("SELECT pg_stat_force_next_flush()")
        row = control.execute(
            "SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = %s", (anon,)
        ).fetchone()
        return int(row[0]) if row else 0

    def log() -> list[tuple[str, Any, int]]:
        return control.execute(
            "SELECT mode, at, coalesce(rows, 0) FROM adaptive.peel_log ORDER BY id"
        ).fetchall()

    before, logged = updated(), len(log())
    pair.same(sql)
    assert len(pair.designed()) == 3
    entries = log()[logged:]
    builds = [e for e in entries if e[0] == "build"]
    # the three wants in one transaction; then, the grouping on the server, the Ord onion
    # of grp its ORDER BY needs there (built on first use, at OPE: a second pass)
    assert len(builds) == 4 and len({e[1] for e in builds[:3]}) == 1 < len({e[1] for e in builds})
    # the rows updated: every row once by the build, and once by the peels the statement
    # needed of its other columns (together: one UPDATE, each column's audit row naming
    # its rows); the new onions start at the layers the statement needs
    rewrites: dict[Any, int] = {}
    for mode, at, rows in entries:
        if mode != "build":
            rewrites[at] = max(rewrites.get(at, 0), rows)
    peeled = sum(rewrites.values())
    assert updated() - before == 2 * len(ROWS) + peeled
    assert pair.shipped(sql) == 0


def test_budget_bounds_what_is_built(new_database: Callable[..., str], master_key: Any) -> None:
    """A table's budget (bytes per row) bounds the online design: past it the statement
    is answered by the client, exactly, and nothing more is built."""
    config = {"defaults": {"design_budget": 1000}, "design_budget": {"li": ROW_BYTES[Onion.SUM]}}
    with _opened(new_database, master_key, "design_budget", config=config) as pair:
        pair.same(SUMS)
        (only,) = pair.designed()  # one of the two Sum onions the statement wants
        assert only["what"] in ("qty's Sum onion", "price's Sum onion") and only["bytes"] == 40
        assert pair.shipped(REVENUE) > 0  # over budget: the client sums
        assert pair.shipped(NOT_SPECIAL) > 0
        assert len(pair.designed()) == 1


def test_refused_by_configuration(new_database: Callable[..., str], master_key: Any) -> None:
    """``on_demand = false`` in the defaults: no pending Sum onion, nothing designed,
    answers equal."""
    config = {"defaults": {"on_demand": False}}
    with _opened(new_database, master_key, "design_off", config=config) as pair:
        assert not pair.enc.catalog.table("li").column("qty").on_demand
        for sql in (REVENUE, SUMS, NOT_SPECIAL):
            pair.same(sql)
        assert pair.designed() == [] and pair.builds() == 0


def test_not_inside_transactions_nor_with_peeling_off(
    new_database: Callable[..., str], master_key: MasterKey
) -> None:
    """A want never fails or waits in the application's transaction, and peel mode
    ``off`` builds nothing: the statement runs as compiled, equal to plain."""
    with _opened(new_database, master_key, "design_tx") as pair:
        pair.enc.autocommit = False
        pair.same("SELECT count(*) FROM li")  # (the transaction is open from here)
        pair.same(REVENUE)
        pair.same(SUMS)
        assert pair.designed() == []
        pair.enc.rollback()
        pair.enc.autocommit = True
        pair.same(REVENUE)
        # (REVENUE's precomputed column, and the Sum onions SUMS ran without in the
        # transaction: built after the first statement once it has ended)
        assert sorted(d["what"] for d in pair.designed()) == [
            "price * (1 - disc)",
            "price's Sum onion",
            "qty's Sum onion",
        ]
    with _opened(new_database, master_key, "design_peel_off") as pair:
        dsn = pair.enc.pg.info.dsn
        with adaptive_client.connect(
            dsn, master_key=master_key.hex(), peel="off", autocommit=True
        ) as off:
            expected = pair.plain.execute(REVENUE).fetchall()
            assert off.execute(REVENUE).fetchall() == expected
            assert off.catalog.table("li").designed == []


def test_outputs_keep_their_names(pair: Pair) -> None:
    """A sum over a precomputed column is named as the application's item (``sum``),
    its positional GROUP BY and ORDER BY still the item's."""
    sql = (
        "SELECT substring(grp from 1 for 2), sum(price * disc), sum(price * (1 - disc)) "
        "FROM li GROUP BY 1 ORDER BY 1, 2"
    )
    pair.same(sql)
    assert len(pair.designed()) == 3  # (the grouped substring too: an Eq onion)
    assert pair.shipped(sql) <= 4  # the groups at most (ordered by the client)


def test_integer_expressions_are_left_to_the_client(pair: Pair) -> None:
    """PostgreSQL types ``qty + 1`` integer and sums it as bigint: a wider stored type
    would answer in another, so the design leaves it to the client -- same values and
    types as plain."""
    sql = "SELECT grp, sum(qty + 1), sum(qty * 2) FROM li GROUP BY grp ORDER BY grp"
    rows = pair.same(sql)
    assert all(isinstance(v, int) for r in rows for v in r[1:] if v is not None)
    assert pair.designed() == []


def test_the_dba_sees_what_was_designed(
    new_database: Callable[..., str], master_key: MasterKey, tmp_path: Any, capsys: Any
) -> None:
    """``adaptive-db layers`` lists what the online design built, in the order it
    appeared, with the bytes per row each added and the table's total."""
    with _opened(new_database, master_key, "design_cli") as pair:
        pair.same(REVENUE)
        pair.same(NOT_SPECIAL)
        dsn = pair.enc.pg.info.dsn
    key_file = tmp_path / "master.key"
    key_file.write_text(master_key.hex())
    args = ["layers", "--dsn", dsn, "--master-key-file", str(key_file)]
    assert cli.main([*args, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [
        (d["order"], d["what"], d["bytes_per_row"], d["table_total"]) for d in report["designed"]
    ] == [
        (1, "price * (1 - disc)", 40, 40),
        (2, "note NOT LIKE '%special%requests%'", 48, 88),
    ]
    assert cli.main(args) == 0
    text = capsys.readouterr().out
    assert "built by the online design" in text and "note NOT LIKE" in text


def test_a_long_build_reports_its_progress(
    new_database: Callable[..., str], master_key: MasterKey, caplog: Any, monkeypatch: Any
) -> None:
    """A build past a second logs its steps (table, what, rows) at INFO on the client's
    logger; nothing of a key or a value appears."""
    monkeypatch.setattr(progress, "REPORT_AFTER_S", 0.0)
    with (
        _opened(new_database, master_key, "design_log") as pair,
        caplog.at_level(logging.INFO, logger="adaptive_client.adapt"),
    ):
        pair.same(REVENUE)
    lines = [r.getMessage() for r in caplog.records if r.name == "adaptive_client.adapt"]
    assert any("li: building price * (1 - disc)" in ln and "(300 rows)" in ln for ln in lines)
    assert any(ln.startswith("li: building") and "done" in ln for ln in lines)
    assert not any(master_key.hex() in ln or "special" in ln for ln in lines)


def test_indexes_are_built_again_as_they_were(
    new_database: Callable[..., str], master_key: MasterKey, monkeypatch: Any
) -> None:
    """A build drops the table's indexes for its rewrite and builds each again, under
    its own name: the primary key and the application's index are there after it, the
    same, and enforce and serve as before."""
    monkeypatch.setattr(index_rebuild, "REBUILD_FROM_BYTES", 0)
    with _opened(new_database, master_key, "design_idx") as pair:
        for conn in (pair.plain, pair.enc):
            conn.execute("CREATE INDEX li_grp ON li (grp)")
        anon = pair.enc.catalog.table("li").anon

        def indexes() -> list[tuple[str, str]]:
            return pair.enc.control.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s ORDER BY 1",
                (anon,),
            ).fetchall()

        before = indexes()
        assert len(before) >= 2
        pair.same(REVENUE)
        assert pair.designed() and indexes() == before
        with pytest.raises(psycopg.errors.UniqueViolation):
            pair.enc.execute("INSERT INTO li (id, grp, price) VALUES (1, 'x', 1)")
        pair.same("SELECT id FROM li WHERE grp = 'north' ORDER BY id")
