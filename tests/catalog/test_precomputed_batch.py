"""A precomputed expression over a batch of rows: arithmetic over numbers of fixed scale
is computed a column at a time on scaled integers, and gives exactly what the row-by-row
evaluation (PostgreSQL's exact numeric arithmetic) gives -- values, scales and NULLs."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adaptive_client.catalog import precomputed
from adaptive_client.catalog.metadata import ColumnMeta, TableMeta
from adaptive_client.values.encodings import parse_sql_type

COLUMNS = {
    "price": "numeric(15,2)",
    "disc": "numeric(4,2)",
    "tax": "numeric(15,2)",
    "qty": "integer",
    "big": "bigint",
}
CASES = [
    ("price * (1 - disc)", "numeric(31,4)"),
    ("(price * (1 - disc)) * (1 + tax)", "numeric(38,6)"),
    ("price * disc", "numeric(19,4)"),
    ("price * qty - tax", "numeric(30,2)"),
    ("-price + 0.125 * qty", "numeric(30,3)"),
    ("big * price", "numeric(38,2)"),
]


def _table(expression: str, sql_type: str) -> tuple[TableMeta, ColumnMeta]:
    columns = {n: ColumnMeta(n, parse_sql_type(t), True, {}) for n, t in COLUMNS.items()}
    col = ColumnMeta("pc", parse_sql_type(sql_type), True, {})
    col.expression = precomputed.compile_expression(expression, columns, "test").text
    table = TableMeta("t", "t_test", columns, precomputed={"pc": col})
    return table, col


def _value(scale: int, digits: int) -> st.SearchStrategy[Decimal | None]:
    bound = 10**digits - 1
    return st.none() | st.integers(-bound, bound).map(lambda x: Decimal(x).scaleb(-scale))


ROWS = st.lists(
    st.fixed_dictionaries(
        {
            "price": _value(2, 13),
            "disc": _value(2, 2),
            "tax": _value(2, 13),
            "qty": st.none() | st.integers(-(2**31), 2**31 - 1),
            "big": st.none() | st.integers(-(10**15), 10**15),
        }
    ),
    max_size=30,
)


@pytest.mark.parametrize(("expression", "sql_type"), CASES)
@settings(max_examples=60, deadline=None)
@given(rows=ROWS)
def test_batch_equals_row_by_row(expression: str, sql_type: str, rows: list[dict]) -> None:
    table, col = _table(expression, sql_type)
    columns = {n: [r[n] for r in rows] for n in COLUMNS}
    compiled = precomputed.expression_of(table, col)
    one_by_one = [precomputed.value_of(col, compiled, r) for r in rows]
    batch = precomputed.values_of(table, col, columns)
    assert batch == one_by_one
    assert [None if v is None else v.as_tuple().exponent for v in batch] == [
        None if v is None else v.as_tuple().exponent for v in one_by_one
    ]


def test_the_batch_path_is_taken() -> None:
    """(the scaled-integer path answers for arithmetic; a LIKE is evaluated per row)"""
    table, _ = _table("price * (1 - disc)", "numeric(31,4)")
    rows = {"price": [Decimal("10.00"), None], "disc": [Decimal("0.05"), Decimal("0.10")]}
    found = precomputed._scaled_arithmetic(
        precomputed.expression_of(table, table.precomputed["pc"]).tree, table.columns, rows, 2
    )
    assert found == ([95000, None], 4)
