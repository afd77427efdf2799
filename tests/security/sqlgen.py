"""Random schemas, data and SQL for differential fuzzing (hypothesis strategies).

A schema is drawn once per run from a seed: two tables whose key columns share a join
group, each with a handful of columns of the types the client supports.  Queries are
drawn by hypothesis: projections (columns, DISTINCT, aggregates with or without GROUP
BY), predicate trees (comparisons, BETWEEN, IN, IS [NOT] NULL, NOT/AND/OR) with constants
either inline or as ``%s`` parameters, ORDER BY with LIMIT/OFFSET, and equi-joins.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from hypothesis import strategies as st

TYPES = {
    "integer": lambda r: r.randint(-50, 50),
    "bigint": lambda r: r.randint(-(10**12), 10**12) if r.random() < 0.3 else r.randint(-9, 9),
    "numeric(8,2)": lambda r: Decimal(r.randint(-20000, 20000)) / 100,
    # (the last three tie on their 8-byte OPE prefix: the client finishes such sorts)
    "text": lambda r: r.choice(
        [
            "ab",
            "abc",
            "b",
            "",
            "Zed",
            "zed",
            "a b",
            "abd",
            "x" * 12,
            "prefix12",
            "prefix12Z",
            "prefix12 a",
        ]
    ),
    "varchar(12)": lambda r: r.choice(["red", "green", "blue", "Red", "cyan", "red "]),
    "date": lambda r: dt.date(2020, 1, 1) + dt.timedelta(days=r.randint(-400, 400)),
    "timestamp": lambda r: dt.datetime(2021, 6, 1, 12) + dt.timedelta(minutes=r.randint(-900, 900)),
    "boolean": lambda r: r.random() < 0.5,
}
NUMERIC = ("integer", "bigint", "numeric(8,2)")
ORDERED = (*NUMERIC, "text", "varchar(12)", "date", "timestamp")


@dataclass
class Column:
    name: str
    type: str


@dataclass
class Table:
    name: str
    columns: list[Column]  # columns[0] is the integer primary key "id"
    rows: list[tuple[Any, ...]]

    def ddl(self) -> str:
        cols = ", ".join(f"{c.name} {c.type}" for c in self.columns[1:])
        return f"CREATE TABLE {self.name} (id integer PRIMARY KEY, {cols})"

    def insert(self) -> str:
        names = ", ".join(c.name for c in self.columns)
        marks = ", ".join(["%s"] * len(self.columns))
        return f"INSERT INTO {self.name} ({names}) VALUES ({marks})"


@dataclass
class Schema:
    seed: int
    tables: list[Table]

    def config(self) -> dict[str, Any]:
        sums = {
            t.name: {
                c.name: {"onions": ["Eq", "Ord", "Sum"]} for c in t.columns[1:] if c.type in NUMERIC
            }
            for t in self.tables
        }
        for t in self.tables:
            sums[t.name]["id"] = {"join_group": "fuzz_id"}
            sums[t.name]["ref"] = {"join_group": "fuzz_id"}
        return {"defaults": {"sum": False, "search": True, "hom_bits": 512}, "tables": sums}


def random_schema(seed: int, rows: int = 80) -> Schema:
    r = random.Random(seed)
    tables = []
    for ti in range(2):
        kinds = r.sample(sorted(TYPES), 5)
        cols = [Column("id", "integer"), Column("ref", "integer")]
        cols += [Column(f"{k.split('(')[0][:4]}_{ti}{i}", k) for i, k in enumerate(kinds)]
        data = []
        for i in range(1, rows + 1):
            row: list[Any] = [i, r.randint(1, rows // 2) if r.random() < 0.9 else None]
            for c in cols[2:]:
                row.append(None if r.random() < 0.12 else TYPES[c.type](r))
            data.append(tuple(row))
        tables.append(Table(f"fz{ti}", cols, data))
    return Schema(seed, tables)


def _literal(value: Any, type_: str) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | Decimal):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


@dataclass
class Query:
    sql: str
    params: tuple[Any, ...]
    ordered: bool


def _order_terms(draw: Any, keys: list[Column]) -> list[str]:
    """``ORDER BY`` terms for ``keys``, each with a drawn direction and NULLS placement."""
    directions = st.sampled_from(["", " DESC", " NULLS FIRST", " DESC NULLS LAST"])
    return [f"{c.name}{draw(directions)}" for c in keys]


@st.composite
def queries(draw: Any, schema: Schema) -> Query:
    table = draw(st.sampled_from(schema.tables))
    params: list[Any] = []
    r = random.Random(draw(st.integers(0, 2**32)))

    def const(col: Column) -> str:
        value = (
            TYPES[col.type](r)
            if draw(st.booleans())
            else r.choice(table.rows)[table.columns.index(col)]
        )
        if value is None:
            value = TYPES[col.type](r)
        if draw(st.booleans()):
            params.append(value)
            return "%s"
        return _literal(value, col.type)

    def predicate(depth: int) -> str:
        kind = draw(
            st.sampled_from(
                ["cmp", "cmp", "between", "in", "null", "not", "and", "or"]
                if depth < 2
                else ["cmp", "between", "in", "null"]
            )
        )
        col = draw(st.sampled_from(table.columns))
        if kind == "cmp":
            ops = ["=", "<>"] + (["<", "<=", ">", ">="] if col.type in ORDERED else [])
            if col.type == "boolean" and draw(st.booleans()):
                return col.name
            return f"{col.name} {draw(st.sampled_from(ops))} {const(col)}"
        if kind == "between" and col.type in ORDERED:
            neg = "NOT " if draw(st.booleans()) else ""
            return f"{col.name} {neg}BETWEEN {const(col)} AND {const(col)}"
        if kind in ("in", "between"):
            neg = "NOT " if draw(st.booleans()) else ""
            items = ", ".join(const(col) for _ in range(draw(st.integers(1, 3))))
            return f"{col.name} {neg}IN ({items})"
        if kind == "null":
            return f"{col.name} IS {'NOT ' if draw(st.booleans()) else ''}NULL"
        if kind == "not":
            return f"NOT ({predicate(depth + 1)})"
        return f"({predicate(depth + 1)}) {kind.upper()} ({predicate(depth + 1)})"

    where = f" WHERE {predicate(0)}" if draw(st.booleans()) else ""
    shape = draw(st.sampled_from(["rows", "rows", "distinct", "aggregate", "group", "join"]))
    if shape == "join":
        other = next(t for t in schema.tables if t is not table)
        col = draw(st.sampled_from(other.columns[2:]))
        sql = f"SELECT a.id, b.{col.name} FROM {table.name} a JOIN {other.name} b ON a.ref = b.id"
        return Query(sql, (), False)
    if shape in ("aggregate", "group"):
        col = draw(st.sampled_from(table.columns))
        aggs = ["count(*)", f"count({col.name})", f"count(DISTINCT {col.name})"]
        if col.type in ORDERED:
            aggs += [f"min({col.name})", f"max({col.name})"]
        if col.type in NUMERIC:
            aggs += [f"sum({col.name})", f"avg({col.name})"]
        chosen = draw(st.lists(st.sampled_from(aggs), min_size=1, max_size=3))
        if shape == "group":
            key = draw(st.sampled_from(table.columns[1:]))
            sql = f"SELECT {key.name}, {', '.join(chosen)} FROM {table.name}{where} GROUP BY {key.name}"
            return Query(sql, tuple(params), False)
        return Query(f"SELECT {', '.join(chosen)} FROM {table.name}{where}", tuple(params), False)
    cols = draw(
        st.lists(st.sampled_from(table.columns), min_size=1, max_size=4, unique_by=lambda c: c.name)
    )
    distinct = "DISTINCT " if shape == "distinct" else ""
    sql = f"SELECT {distinct}{', '.join(c.name for c in cols)} FROM {table.name}{where}"
    if shape == "rows" and draw(st.booleans()):
        keys = draw(
            st.lists(
                st.sampled_from([c for c in table.columns if c.type in ORDERED]),
                max_size=2,
                unique_by=lambda c: c.name,
            )
        )
        order = _order_terms(draw, keys)
        order.append("id" + draw(st.sampled_from(["", " DESC"])))  # a total order
        if "id" not in [c.name for c in cols]:
            sql = sql.replace("SELECT ", "SELECT id, ", 1)
        sql += " ORDER BY " + ", ".join(order)
        if draw(st.booleans()):
            sql += f" LIMIT {draw(st.integers(0, 30))}"
            if draw(st.booleans()):
                sql += f" OFFSET {draw(st.integers(0, 20))}"
        return Query(sql, tuple(params), True)
    if distinct and all(c.type in ORDERED for c in cols) and draw(st.booleans()):
        # DISTINCT ordered by every selected column, in any order: a total order again
        sql += " ORDER BY " + ", ".join(_order_terms(draw, draw(st.permutations(cols))))
        if draw(st.booleans()):
            sql += f" LIMIT {draw(st.integers(0, 30))}"
        return Query(sql, tuple(params), True)
    return Query(sql, tuple(params), False)
