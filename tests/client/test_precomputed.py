"""Precomputed onions: declared expressions computed by the client on every write and
used by the server wherever a statement names them -- each statement compared with plain
PostgreSQL (numerics as PostgreSQL prints them), and the plans checked to read the
precomputed column instead of shipping its inputs."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.config import load_config
from adaptive_client.compile.statements import compile_statement
from adaptive_client.errors import ConfigError, EncodingError, UndefinedColumn, UnsupportedQuery
from tpch.harness import printed_rows

DDL = (
    "CREATE TABLE sale (id integer PRIMARY KEY, price numeric(10,2), discount numeric(4,2), "
    "tax numeric(4,2), shipped date, note varchar(40), region char(4))"
)
CONFIG: dict[str, Any] = {
    "defaults": {"search": False},
    "precomputed": {
        "sale": {
            "revenue": {
                "expression": "price * (1 - discount)",
                "type": "numeric(20,4)",
                "onions": ["Eq", "Ord", "Sum"],
            },
            "charge": {
                "expression": "price*(1-discount)*(1+tax)",
                "type": "numeric(30,6)",
                "onions": ["Sum"],
            },
            "ship_year": {
                "expression": "extract(year from shipped)",
                "type": "numeric(4,0)",
                "onions": ["Eq", "Ord"],
            },
            "note_word": {
                "expression": "substring(note from 3 for 5)",
                "type": "text",
                "onions": ["Eq"],
            },
            "region_tail": {"expression": "substr(region, 2)", "type": "text", "onions": ["Eq"]},
            "plain_note": {
                "expression": "note NOT LIKE '%special%req%'",
                "type": "boolean",
                "onions": ["Eq"],
            },
        }
    },
}


def _rows() -> list[tuple[Any, ...]]:
    notes = ["a special request", "special requests here", "plain", None, "100% special_req"]
    out = []
    for i in range(1, 61):
        price = None if i % 11 == 0 else Decimal(i * 37 % 500) + Decimal(i % 7) / 4
        discount = None if i % 13 == 0 else Decimal(i % 10) / 100
        shipped = None if i % 17 == 0 else dt.date(1993 + i % 5, 1 + i % 12, 1 + i % 28)
        out.append(
            (i, price, discount, Decimal(i % 8) / 100, shipped, notes[i % 5], "r" + str(i % 3))
        )
    return out


class Pair:
    def __init__(self, plain: psycopg.Connection[Any], enc: adaptive_client.Connection):
        self.plain, self.enc = plain, enc

    def both(self, sql: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        expected = printed_rows(self.plain.execute(sql).fetchall())
        got = printed_rows(self.enc.execute(sql).fetchall())
        return expected, got


@pytest.fixture(scope="module")
def pair(new_database: Any, master_key: Any) -> Iterator[Pair]:
    plain = psycopg.connect(new_database("pcplain"), autocommit=True)
    enc = adaptive_client.connect(
        new_database("pcenc"), master_key=master_key, config=CONFIG, autocommit=True
    )
    rows = _rows()
    for c in (plain, enc):
        c.execute(DDL)
    plain.cursor().executemany("INSERT INTO sale VALUES (%s, %s, %s, %s, %s, %s, %s)", rows)
    # the encrypted one by every write path: COPY, a multi-row INSERT and single rows
    with enc.cursor().copy("COPY sale FROM STDIN") as copy:
        for r in rows[:30]:
            copy.write_row(r)
    enc.cursor().executemany("INSERT INTO sale VALUES (%s, %s, %s, %s, %s, %s, %s)", rows[30:50])
    for r in rows[50:]:
        enc.execute(
            "INSERT INTO sale (id, price, discount, tax, shipped, note, region) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s)",
            r,
        )
    try:
        yield Pair(plain, enc)
    finally:
        plain.close()
        enc.close()


QUERIES = [
    # sums over the Sum onion, whatever the spelling
    "SELECT sum(price * (1 - discount)) FROM sale",
    "SELECT region, sum(price*(1-discount)), sum(price * (1 - discount) * (1 + tax)), count(*) "
    "FROM sale GROUP BY region ORDER BY region",
    "SELECT s.region, sum((s.price) * (1 - s.discount)) AS r FROM sale AS s "
    "WHERE s.id > 5 GROUP BY s.region ORDER BY r DESC",
    # filters and order over Ord, grouping over Eq
    "SELECT id FROM sale WHERE price * (1 - discount) > 200 ORDER BY id",
    "SELECT id, price * (1 - discount) FROM sale ORDER BY price * (1 - discount) DESC, id LIMIT 7",
    "SELECT extract(year from shipped) AS y, count(*) FROM sale GROUP BY extract(year from shipped) "
    "ORDER BY y NULLS FIRST",
    "SELECT count(*) FROM sale WHERE extract(year from shipped) BETWEEN 1994 AND 1995",
    "SELECT id FROM sale WHERE note NOT LIKE '%special%req%' ORDER BY id",
    "SELECT count(*), sum(CASE WHEN note NOT LIKE '%special%req%' THEN 1 ELSE 0 END) FROM sale",
    # substrings: filtered and grouped over the Eq onion (char(n) without its padding)
    "SELECT substring(note from 3 for 5) AS w, count(*) FROM sale GROUP BY 1 ORDER BY 1",
    "SELECT id FROM sale WHERE substring(note from 3 for 5) IN ('speci', 'ecial') ORDER BY id",
    "SELECT id, substr(region, 2) FROM sale WHERE substr(region, 2) = '1' ORDER BY id",
    "SELECT substring(region from 2) || '|', count(*) FROM sale GROUP BY 1 ORDER BY 1",
    # the expression inside a larger one, in a subquery, and not matching (other columns)
    "SELECT sum(price * (1 - discount) * 2) FROM sale",
    "SELECT id FROM sale WHERE price * (1 - discount) > "
    "(SELECT avg(price * (1 - discount)) FROM sale) ORDER BY id",
    "SELECT sum(price * (1 - tax)) FROM sale",
    # a choice between scales summed over a derived table's product (scale 4, not 2)
    "SELECT region, sum(CASE WHEN id % 2 = 0 THEN v ELSE 0 END) FROM "
    "(SELECT price * tax AS v, region, id FROM sale) AS x GROUP BY region ORDER BY region",
]


@pytest.mark.parametrize("sql", QUERIES)
def test_equal_to_plain(pair: Pair, sql: str) -> None:
    expected, got = pair.both(sql)
    assert got == expected


def test_plans_read_the_precomputed_column(pair: Pair) -> None:
    catalog = pair.enc.catalog
    meta = catalog.table("sale")
    revenue = meta.precomputed["revenue"]
    sum_anon = revenue.onions[adaptive_client.catalog.onions.Onion.SUM].anon
    plan = compile_statement(catalog, _parse("SELECT sum(price*(1-discount)) FROM sale"))
    assert sum_anon in plan.sql and "int8send" in plan.sql.lower()  # ASHE: nonces shipped
    # the inputs are not read at all
    price_anons = {oc.anon for oc in meta.column("price").onions.values()}
    assert not any(a in plan.sql for a in price_anons)
    # not used where the expression differs
    other = compile_statement(catalog, _parse("SELECT sum(price * (1 - tax)) FROM sale"))
    assert sum_anon not in (other.sql or "")


def test_filter_runs_on_the_server(pair: Pair) -> None:
    before = pair.enc.stats.residual_rows
    pair.enc.execute("SELECT sum(tax) FROM sale WHERE note NOT LIKE '%special%req%'").fetchall()
    shipped = pair.enc.stats.residual_rows - before
    matching = pair.plain.execute(
        "SELECT count(*) FROM sale WHERE note NOT LIKE '%special%req%'"
    ).fetchone()
    assert matching is not None and shipped <= matching[0] < 60


def test_substring_filter_runs_on_the_server(pair: Pair) -> None:
    sql = "SELECT count(*) FROM sale WHERE substr(region, 2) = '1'"
    plan = compile_statement(pair.enc.catalog, _parse(sql))
    eq = pair.enc.catalog.table("sale").precomputed["region_tail"].onions
    assert plan.sql is not None and eq[adaptive_client.catalog.onions.Onion.EQ].anon in plan.sql
    expected, got = pair.both(sql)
    assert got == expected


@pytest.mark.parametrize("sql_type", ["char(6)", "varchar(8)", "text"])
def test_substring_evaluated_as_postgresql_does(pair: Pair, sql_type: str) -> None:
    from adaptive_client.catalog.metadata import ColumnMeta
    from adaptive_client.catalog.precomputed import compile_expression
    from adaptive_client.values.encodings import parse_sql_type

    col = ColumnMeta("v", parse_sql_type(sql_type), True, {})
    values = ["", "a", "héllo", "ab cd ", "  x", "éèê", None]
    for start in (-2, 0, 1, 2, 5, 9):
        for count in (None, 0, 1, 3, 7):
            bounds = f"from {start}" + ("" if count is None else f" for {count}")
            if start == -2 and count is not None:
                bounds = f"for {count}"  # no FROM: from the first character
            expr = compile_expression(f"substring(v {bounds})", {"v": col}, "test")
            for value in values:
                coerced = col.encoding.coerce(value)
                expected = pair.plain.execute(
                    f"SELECT substring(%s::{sql_type} {bounds})", (value,)
                ).fetchone()
                assert expected is not None
                assert expr.evaluate({"v": coerced}) == expected[0], (value, bounds)


@pytest.mark.parametrize(
    "text",
    [
        "substring(note from 'a.c')",
        "substring(note from id)",
        "substring(id from 1)",
        "substring(note from 1 for -1)",
        "substring(note)",
    ],
)
def test_substring_refused(text: str) -> None:
    from adaptive_client.catalog.metadata import ColumnMeta
    from adaptive_client.catalog.precomputed import compile_expression
    from adaptive_client.values.encodings import parse_sql_type

    cols = {
        "note": ColumnMeta("note", parse_sql_type("text"), True, {}),
        "id": ColumnMeta("id", parse_sql_type("integer"), True, {}),
    }
    with pytest.raises(ConfigError):
        compile_expression(text, cols, "test")


def _parse(sql: str) -> Any:
    import sqlglot

    return sqlglot.parse_one(sql, read="postgres")


def test_hidden_from_star_and_writes(pair: Pair) -> None:
    cur = pair.enc.execute("SELECT * FROM sale WHERE id = 1")
    assert [d[0] for d in cur.description or []] == [
        "id", "price", "discount", "tax", "shipped", "note", "region",
    ]  # fmt: skip
    with pytest.raises(UndefinedColumn):
        pair.enc.execute("INSERT INTO sale (id, revenue) VALUES (1000, 1)")
    # a column no expression reads is updated as usual
    pair.enc.execute("UPDATE sale SET id = 1001 WHERE id = 1")
    pair.plain.execute("UPDATE sale SET id = 1001 WHERE id = 1")
    expected, got = pair.both("SELECT id, region FROM sale ORDER BY id DESC LIMIT 3")
    assert got == expected


def test_declared_scale_is_checked(new_database: Any, master_key: Any) -> None:
    config = {
        "precomputed": {
            "t": {"p": {"expression": "a * b", "type": "numeric(20,2)", "onions": ["Ord"]}}
        }
    }
    with adaptive_client.connect(
        new_database("pcscale"), master_key=master_key, config=config, autocommit=True
    ) as enc:
        enc.execute("CREATE TABLE t (a numeric(6,2), b numeric(6,2))")
        with pytest.raises(EncodingError, match="scale 4"):
            enc.execute("INSERT INTO t VALUES (1.50, 2.00)")
        enc.execute("INSERT INTO t VALUES (NULL, 2.00)")  # NULL in, NULL out
        assert enc.execute("SELECT count(*) FROM t WHERE a * b IS NULL").fetchone() == (1,)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"expression": "a / b", "type": "numeric", "onions": ["Eq"]}, "cannot be precomputed"),
        ({"expression": "a * zz", "type": "numeric", "onions": ["Eq"]}, "no column 'zz'"),
        ({"expression": "1 + 2", "type": "integer", "onions": ["Eq"]}, "reads no column"),
        ({"expression": "a +", "type": "integer", "onions": ["Eq"]}, "cannot parse"),
        (
            {"expression": "a", "type": "integer", "onions": ["Single"], "layer": "DET"},
            "Eq, Ord or Sum",
        ),
        ({"expression": "a", "type": "integer"}, "`onions` is required"),
        ({"expression": "a", "type": "integer", "onions": ["Eq"], "x": 1}, "unknown keys"),
    ],
)
def test_configuration_errors(
    new_database: Any, master_key: Any, entry: dict[str, Any], message: str
) -> None:
    config = {"precomputed": {"t": {"p": entry}}}
    with pytest.raises(ConfigError, match=message):
        cfg = load_config(config)
        with adaptive_client.connect(
            new_database("pcbad"), master_key=master_key, config=cfg, autocommit=True
        ) as enc:
            enc.execute("CREATE TABLE t (a numeric(6,2), b numeric(6,2))")


def test_layers_lists_precomputed_onions(new_database: Any, tmp_path: Any, capsys: Any) -> None:
    """``adaptive-db layers`` shows each precomputed onion, its expression, its layer and
    what it reveals -- before and after a query peels it."""
    import json

    from adaptive_client.admin import cli
    from adaptive_client.catalog.keys import MasterKey

    dsn, key = new_database("pclayers"), MasterKey.generate()
    key_file = tmp_path / "master.key"
    key_file.write_text(key.hex())
    config = {
        "precomputed": {
            "t": {
                "big": {"expression": "a * b", "type": "numeric(20,4)", "onions": ["Ord", "Sum"]},
                "odd": {"expression": "note LIKE '%odd%'", "type": "boolean", "onions": ["Eq"]},
            }
        }
    }
    with adaptive_client.connect(dsn, master_key=key, config=config, autocommit=True) as enc:
        enc.execute("CREATE TABLE t (a numeric(6,2), b numeric(6,2), note text)")
        enc.execute("INSERT INTO t VALUES (1.00, 2.00, 'odd one'), (3.00, 4.00, 'even')")
        args = ["layers", "--dsn", dsn, "--master-key-file", str(key_file), "--json"]
        assert cli.main(args) == 0
        before = {
            (p["name"], p["onion"]): p for p in json.loads(capsys.readouterr().out)["precomputed"]
        }
        assert before[("big", "Ord")]["layer"] == "RND"
        assert before[("big", "Ord")]["expression"] == "a * b"
        assert before[("odd", "Eq")]["provider_learns"].startswith("nothing")
        assert enc.execute("SELECT count(*) FROM t WHERE a * b > 5").fetchone() == (1,)
        assert enc.execute("SELECT count(*) FROM t WHERE note LIKE '%odd%'").fetchone() == (1,)
    assert cli.main(args[:-1]) == 0
    out = capsys.readouterr().out
    assert "precomputed onions" in out
    rows = [line for line in out.splitlines() if line.startswith("t ") and "big" in line]
    assert any("OPE" in r and "order of the rows by a * b" in r for r in rows)
    assert any(
        "DET" in line and "which rows satisfy note LIKE '%odd%'" in line
        for line in out.splitlines()
    )


UPDATES = [
    # every input of what it changes assigned: computed from the statement alone
    "UPDATE sale SET note = 'my special request', region = 'r9' WHERE id IN (11, 12)",
    # every input of revenue assigned a constant (charge also reads tax: rows read)
    "UPDATE sale SET price = 12.50, discount = 0.25 WHERE id = 2",
    # computed from the row: read, computed and written back with the new values
    "UPDATE sale SET discount = discount + 0.01 WHERE id BETWEEN 3 AND 9",
    "UPDATE sale SET price = NULL WHERE id = 10",
    "UPDATE sale SET shipped = shipped + 400, note = 'a special req' WHERE id % 4 = 0",
    "UPDATE sale SET tax = 0.5 WHERE price * (1 - discount) > 300",
]
AFTER_UPDATES = [
    "SELECT id, price * (1 - discount) FROM sale WHERE price * (1 - discount) > 100 "
    "ORDER BY price * (1 - discount) DESC, id",
    "SELECT region, sum(price * (1 - discount) * (1 + tax)) FROM sale GROUP BY region "
    "ORDER BY region",
    "SELECT extract(year from shipped) AS y, count(*) FROM sale GROUP BY 1 ORDER BY 1",
    "SELECT id FROM sale WHERE note NOT LIKE '%special%req%' ORDER BY id",
    "SELECT substring(note from 3 for 5), count(*) FROM sale GROUP BY 1 ORDER BY 1",
    "SELECT id, substr(region, 2) FROM sale WHERE substr(region, 2) = '9' ORDER BY id",
]


def test_updates_of_inputs_recompute(new_database: Any, master_key: Any) -> None:
    """An UPDATE of a precomputed expression's input computes it again: from the
    statement's values where it assigns every input, else from each row read FOR UPDATE;
    the server's filters, orders and sums over the precomputed onions then agree with
    PostgreSQL's over the new values."""
    plain = psycopg.connect(new_database("pcuplain"), autocommit=True)
    enc = adaptive_client.connect(
        new_database("pcuenc"), master_key=master_key, config=CONFIG, autocommit=True
    )
    try:
        rows = _rows()
        for c in (plain, enc):
            c.execute(DDL)
            c.cursor().executemany("INSERT INTO sale VALUES (%s, %s, %s, %s, %s, %s, %s)", rows)
        both = Pair(plain, enc)
        # one statement when it assigns every input of what it changes; else rows read
        plans = [compile_statement(enc.catalog, _parse(u)) for u in UPDATES[:2]]
        assert plans[0].rmw is None and "UPDATE" in (plans[0].sql or "")
        assert plans[1].rmw is not None
        for update in UPDATES:
            plain.execute(update)
            enc.execute(update)
            for sql in AFTER_UPDATES:
                expected, got = both.both(sql)
                assert got == expected, (update, sql)
        with enc.transaction():  # a parameter's value, inside a transaction
            enc.execute("UPDATE sale SET discount = %s WHERE id = %s", (Decimal("0.5"), 5))
        plain.execute("UPDATE sale SET discount = %s WHERE id = %s", (Decimal("0.5"), 5))
        for sql in AFTER_UPDATES:
            expected, got = both.both(sql)
            assert got == expected, sql
        plans = enc.execute("EXPLAIN SELECT id FROM sale WHERE price * (1 - discount) > 100")
        assert plans.fetchall()  # (the filter still compiles over the precomputed onion)
    finally:
        plain.close()
        enc.close()


@pytest.mark.parametrize(
    "alter",
    [
        "ALTER TABLE sale DROP COLUMN discount",
        "ALTER TABLE sale RENAME COLUMN price TO cost",
        "ALTER TABLE sale ALTER COLUMN shipped TYPE timestamp",
    ],
)
def test_alter_of_an_input_is_refused(pair: Pair, alter: str) -> None:
    with pytest.raises(UnsupportedQuery, match="input of precomputed"):
        pair.enc.execute(alter)
    expected, got = pair.both("SELECT sum(price * (1 - discount)) FROM sale")
    assert got == expected
