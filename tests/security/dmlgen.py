"""Random writes for differential fuzzing, over the schemas of sqlgen: INSERT with
RETURNING and ON CONFLICT, UPDATE and DELETE with RETURNING, ``= ANY(%s)`` with lists,
casts on parameters, INSERT ... SELECT, and several statements in one script."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st

from .sqlgen import NUMERIC, ORDERED, TYPES, Column, Query, Schema, Table, _literal

_CASTS = {
    "integer": "integer",
    "bigint": "bigint",
    "numeric(8,2)": "numeric(8,2)",
    "text": "text",
    "varchar(12)": "varchar(12)",
    "date": "date",
    "timestamp": "timestamp",
    "boolean": "boolean",
}


def _value(r: random.Random, table: Table, col: Column) -> Any:
    if col.name == "id":
        return r.choice([r.randint(1, 120), table.rows[r.randrange(len(table.rows))][0]])
    if col.name == "ref":
        return r.choice([None, r.randint(1, 40)])
    return None if r.random() < 0.1 else TYPES[col.type](r)


@st.composite
def writes(draw: Any, schema: Schema) -> Query:
    table = draw(st.sampled_from(schema.tables))
    r = random.Random(draw(st.integers(0, 2**32)))
    params: list[Any] = []

    def put(col: Column, value: Any) -> str:
        mode = draw(st.sampled_from(["param", "literal", "cast"]))
        if mode == "literal" or value is None:
            return _literal(value, col.type)
        params.append(value)
        return f"%s::{_CASTS[col.type]}" if mode == "cast" else "%s"

    def returning() -> str:
        if not draw(st.booleans()):
            return ""
        cols = draw(st.lists(st.sampled_from(table.columns), min_size=1, max_size=3))
        return " RETURNING " + ("*" if draw(st.booleans()) else ", ".join(c.name for c in cols))

    def where() -> str:
        col = draw(st.sampled_from(table.columns))
        kind = draw(st.sampled_from(["eq", "any", "range", "null"]))
        if kind == "any":
            params.append([_value(r, table, col) for _ in range(draw(st.integers(0, 4)))])
            return f" WHERE {col.name} = ANY(%s)"
        if kind == "range" and col.type in ORDERED:
            return f" WHERE {col.name} > {put(col, _value(r, table, col))}"
        if kind == "null":
            return f" WHERE {col.name} IS NULL"
        return f" WHERE {col.name} = {put(col, _value(r, table, col))}"

    kind = draw(st.sampled_from(["insert", "insert", "upsert", "update", "delete", "copy-in"]))
    if kind in ("insert", "upsert"):
        cols = [
            table.columns[0],
            *draw(
                st.lists(st.sampled_from(table.columns[1:]), max_size=4, unique_by=lambda c: c.name)
            ),
        ]
        nrows = draw(st.integers(1, 3))
        values = ", ".join(
            "(" + ", ".join(put(c, _value(r, table, c)) for c in cols) + ")" for _ in range(nrows)
        )
        sql = f"INSERT INTO {table.name} ({', '.join(c.name for c in cols)}) VALUES {values}"
        if kind == "upsert":
            if draw(st.booleans()) or len(cols) == 1:
                sql += " ON CONFLICT (id) DO NOTHING"
            else:
                sets = ", ".join(f"{c.name} = EXCLUDED.{c.name}" for c in cols[1:])
                sql += f" ON CONFLICT (id) DO UPDATE SET {sets}"
        return Query(sql + returning(), tuple(params), False)
    if kind == "update":
        col = draw(st.sampled_from(table.columns[2:]))
        if col.type in NUMERIC and draw(st.booleans()):
            assignment = f"{col.name} = {col.name} + 1"
        else:
            assignment = f"{col.name} = {put(col, _value(r, table, col))}"
        return Query(
            f"UPDATE {table.name} SET {assignment}{where()}{returning()}", tuple(params), False
        )
    if kind == "delete":
        return Query(f"DELETE FROM {table.name}{where()}{returning()}", tuple(params), False)
    # INSERT ... SELECT of the table's own rows under new keys, then a read, as a script
    col = draw(st.sampled_from(table.columns[2:]))
    offset = 1000 + draw(st.integers(0, 100))
    sql = (
        f"INSERT INTO {table.name} (id, {col.name}) SELECT id + {offset}, {col.name} "
        f"FROM {table.name} WHERE id < 10; SELECT count(*) FROM {table.name}"
    )
    return Query(sql, (), False)
