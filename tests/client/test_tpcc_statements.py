"""Every statement shape the TPC-C transactions need, through the client vs plain psycopg.

A miniature TPC-C database (same nine tables, fewer rows) is loaded into a plain and an
encrypted database; each transaction's statements run on both and must agree, and the
databases must have equal contents afterwards.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import psycopg
import pytest

import adaptive_client

from .test_differential import _rows

DDL = [
    "CREATE TABLE warehouse (w_id integer PRIMARY KEY, w_name varchar(10), w_tax numeric(4,4), "
    "w_ytd numeric(12,2))",
    "CREATE TABLE district (d_w_id integer, d_id integer, d_name varchar(10), d_tax numeric(4,4), "
    "d_ytd numeric(12,2), d_next_o_id integer, PRIMARY KEY (d_w_id, d_id))",
    "CREATE TABLE customer (c_w_id integer, c_d_id integer, c_id integer, c_first varchar(16), "
    "c_middle char(2), c_last varchar(16), c_credit char(2), c_discount numeric(4,4), "
    "c_balance numeric(12,2), c_ytd_payment numeric(12,2), c_payment_cnt integer, "
    "c_delivery_cnt integer, c_data varchar(500), PRIMARY KEY (c_w_id, c_d_id, c_id))",
    "CREATE INDEX customer_name ON customer (c_w_id, c_d_id, c_last, c_first)",
    "CREATE TABLE history (h_c_id integer, h_c_d_id integer, h_c_w_id integer, h_d_id integer, "
    "h_w_id integer, h_date timestamp, h_amount numeric(6,2), h_data varchar(24))",
    "CREATE TABLE orders (o_w_id integer, o_d_id integer, o_id integer, o_c_id integer, "
    "o_entry_d timestamp, o_carrier_id integer, o_ol_cnt integer, o_all_local integer, "
    "PRIMARY KEY (o_w_id, o_d_id, o_id))",
    "CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)",
    "CREATE TABLE new_order (no_w_id integer, no_d_id integer, no_o_id integer, "
    "PRIMARY KEY (no_w_id, no_d_id, no_o_id))",
    "CREATE TABLE order_line (ol_w_id integer, ol_d_id integer, ol_o_id integer, "
    "ol_number integer, ol_i_id integer, ol_supply_w_id integer, ol_delivery_d timestamp, "
    "ol_quantity integer, ol_amount numeric(6,2), ol_dist_info char(24), "
    "PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number))",
    "CREATE TABLE item (i_id integer PRIMARY KEY, i_im_id integer, i_name varchar(24), "
    "i_price numeric(5,2), i_data varchar(50))",
    "CREATE TABLE stock (s_w_id integer, s_i_id integer, s_quantity integer, s_dist_01 char(24), "
    "s_ytd integer, s_order_cnt integer, s_remote_cnt integer, s_data varchar(50), "
    "PRIMARY KEY (s_w_id, s_i_id))",
]

CONFIG: dict[str, Any] = {
    "defaults": {"hom_bits": 1024},
    "tables": {
        "order_line": {
            "ol_i_id": {"join_group": "item_id"},
            "ol_amount": {"onions": ["Eq", "Ord", "Sum"]},
        },
        "stock": {"s_i_id": {"join_group": "item_id"}},
        "customer": {
            "c_data": {"onions": ["Single"], "layer": "RND"},
            "c_w_id": {"join_group": "w_id"},
        },
        "warehouse": {"w_id": {"join_group": "w_id"}},
    },
}

N_ITEMS, N_CUST, N_ORD = 60, 30, 30
LAST = ["BAR", "OUGHT", "ABLE", "PRI", "PRES"]


def _data() -> dict[str, list[tuple[Any, ...]]]:
    rng = random.Random(11)
    t0 = dt.datetime(2024, 5, 1, 12, 0, 0)
    d: dict[str, list[tuple[Any, ...]]] = {
        k: []
        for k in (
            "warehouse",
            "district",
            "customer",
            "orders",
            "new_order",
            "order_line",
            "item",
            "stock",
        )
    }
    d["warehouse"].append((1, "W1", Decimal("0.1000"), Decimal("300000.00")))
    for i in range(1, N_ITEMS + 1):
        d["item"].append(
            (i, rng.randint(1, 10000), f"item-{i}", Decimal(rng.randint(100, 10000)) / 100, "data")
        )
        d["stock"].append((1, i, rng.randint(10, 100), "dist" * 6, 0, 0, 0, "sdata"))
    for di in (1, 2):
        d["district"].append((1, di, f"D{di}", Decimal("0.0500"), Decimal("30000.00"), N_ORD + 1))
        for c in range(1, N_CUST + 1):
            d["customer"].append(
                (
                    1,
                    di,
                    c,
                    f"first{rng.randint(1, 9)}",
                    "OE",
                    LAST[c % 5],
                    rng.choice(["GC", "BC"]),
                    Decimal("0.0100"),
                    Decimal("-10.00"),
                    Decimal("10.00"),
                    1,
                    0,
                    "c data " * 5,
                )
            )
        for o in range(1, N_ORD + 1):
            cnt = rng.randint(5, 15)
            carrier = rng.randint(1, 10) if o < 21 else None
            d["orders"].append((1, di, o, rng.randint(1, N_CUST), t0, carrier, cnt, 1))
            if o >= 21:
                d["new_order"].append((1, di, o))
            for n in range(1, cnt + 1):
                d["order_line"].append(
                    (
                        1,
                        di,
                        o,
                        n,
                        rng.randint(1, N_ITEMS),
                        1,
                        t0 if o < 21 else None,
                        5,
                        Decimal(rng.randint(1, 999999)) / 100 if o >= 21 else Decimal("0"),
                        "x" * 24,
                    )
                )
    return d


def _insert_sql(table: str, n: int) -> str:
    return f"INSERT INTO {table} VALUES ({', '.join(['%s'] * n)})"


@pytest.fixture(scope="module")
def dbs(new_database: Any, master_key: Any) -> Iterator[tuple[Any, Any]]:
    plain = psycopg.connect(new_database("tpcc_plain"))
    enc = adaptive_client.connect(new_database("tpcc_enc"), master_key=master_key, config=CONFIG)
    data = _data()
    for conn in (plain, enc):
        for stmt in DDL:
            conn.execute(stmt)
        cur = conn.cursor()
        for table, rows in data.items():
            cur.executemany(_insert_sql(table, len(rows[0])), rows)
        conn.commit()
    yield plain, enc
    plain.close()
    enc.close()


def both(dbs: tuple[Any, Any], sql: str, params: tuple[Any, ...] = (), ordered: bool = True) -> Any:
    plain, enc = dbs
    a = plain.execute(sql, params or None)
    b = enc.execute(sql, params or None)
    ra = a.fetchall() if a.description else a.rowcount
    rb = b.fetchall() if b.description else b.rowcount
    if isinstance(ra, list):
        assert _rows(ra, ordered) == _rows(rb, ordered), sql
    else:
        assert ra == rb, sql
    return ra


def test_new_order(dbs: tuple[Any, Any]) -> None:
    both(
        dbs,
        "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse "
        "WHERE w_id = %s AND c_w_id = w_id AND c_d_id = %s AND c_id = %s",
        (1, 1, 7),
    )
    ((next_o,),) = [
        r[:1]
        for r in both(
            dbs,
            "SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = %s AND d_id = %s FOR UPDATE",
            (1, 2),
        )
    ]
    both(
        dbs,
        "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = %s AND d_id = %s",
        (1, 2),
    )
    both(
        dbs,
        "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s)",
        (next_o, 2, 1, 7, dt.datetime(2024, 6, 1, 9, 30), 2, 1),
    )
    both(
        dbs, "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (%s, %s, %s)", (next_o, 2, 1)
    )
    for n, item in enumerate((3, 44), start=1):
        both(dbs, "SELECT i_price, i_name, i_data FROM item WHERE i_id = %s", (item,))
        both(
            dbs,
            "SELECT s_quantity, s_data, s_dist_01 FROM stock WHERE s_i_id = %s AND s_w_id = %s "
            "FOR UPDATE",
            (item, 1),
        )
        both(
            dbs,
            "UPDATE stock SET s_quantity = %s, s_ytd = s_ytd + %s, "
            "s_order_cnt = s_order_cnt + 1 WHERE s_i_id = %s AND s_w_id = %s",
            (50, 5, item, 1),
        )
        both(
            dbs,
            "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, "
            "ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (next_o, 2, 1, n, item, 1, 5, Decimal("12.34") * n, "d" * 24),
        )
    both(dbs, "SELECT i_price FROM item WHERE i_id = %s", (N_ITEMS + 1,))  # the 1% rollback path


def test_payment(dbs: tuple[Any, Any]) -> None:
    both(dbs, "UPDATE warehouse SET w_ytd = w_ytd + %s WHERE w_id = %s", (Decimal("42.50"), 1))
    both(dbs, "SELECT w_name FROM warehouse WHERE w_id = %s", (1,))
    both(
        dbs,
        "UPDATE district SET d_ytd = d_ytd + %s WHERE d_w_id = %s AND d_id = %s",
        (Decimal("42.50"), 1, 1),
    )
    both(
        dbs,
        "SELECT COUNT(c_id) FROM customer WHERE c_last = %s AND c_d_id = %s AND c_w_id = %s",
        ("ABLE", 1, 1),
    )
    both(
        dbs,
        "SELECT c_id, c_first, c_middle, c_last, c_balance FROM customer "
        "WHERE c_w_id = %s AND c_d_id = %s AND c_last = %s ORDER BY c_first",
        (1, 2, "PRI"),
        ordered=False,
    )
    both(
        dbs,
        "SELECT c_first, c_last FROM customer WHERE c_w_id = %s AND c_d_id = %s "
        "AND c_last = %s ORDER BY c_first, c_id",
        (1, 2, "PRI"),
    )
    both(
        dbs,
        "UPDATE customer SET c_balance = c_balance - %s, c_ytd_payment = c_ytd_payment + %s, "
        "c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
        (Decimal("42.50"), Decimal("42.50"), 1, 1, 3),
    )
    both(
        dbs,
        "SELECT c_data FROM customer WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
        (1, 1, 3),
    )
    both(
        dbs,
        "UPDATE customer SET c_data = %s WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
        ("new data", 1, 1, 3),
    )
    both(
        dbs,
        "INSERT INTO history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, "
        "h_data) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
        (1, 1, 3, 1, 1, dt.datetime(2024, 6, 1), Decimal("42.50"), "W1    D1"),
    )


def test_order_status(dbs: tuple[Any, Any]) -> None:
    both(
        dbs,
        "SELECT c_balance, c_first, c_middle, c_last FROM customer "
        "WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
        (1, 1, 5),
    )
    both(
        dbs,
        "SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = %s AND o_d_id = %s "
        "AND o_c_id = %s ORDER BY o_id DESC LIMIT 1",
        (1, 1, 5),
    )
    both(
        dbs,
        "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line "
        "WHERE ol_w_id = %s AND ol_d_id = %s AND ol_o_id = %s",
        (1, 1, 12),
        ordered=False,
    )


def test_delivery(dbs: tuple[Any, Any]) -> None:
    for d in (1, 2):
        rows = both(
            dbs,
            "SELECT no_o_id FROM new_order WHERE no_d_id = %s AND no_w_id = %s "
            "AND no_o_id > %s ORDER BY no_o_id LIMIT 1",
            (d, 1, -1),
        )
        o_id = rows[0][0]
        both(
            dbs,
            "DELETE FROM new_order WHERE no_w_id = %s AND no_d_id = %s AND no_o_id = %s",
            (1, d, o_id),
        )
        both(
            dbs,
            "SELECT o_c_id FROM orders WHERE o_id = %s AND o_d_id = %s AND o_w_id = %s",
            (o_id, d, 1),
        )
        both(
            dbs,
            "UPDATE orders SET o_carrier_id = %s WHERE o_id = %s AND o_d_id = %s AND o_w_id = %s",
            (7, o_id, d, 1),
        )
        both(
            dbs,
            "UPDATE order_line SET ol_delivery_d = %s WHERE ol_o_id = %s AND ol_d_id = %s "
            "AND ol_w_id = %s",
            (dt.datetime(2024, 6, 2), o_id, d, 1),
        )
        both(
            dbs,
            "SELECT SUM(ol_amount) FROM order_line WHERE ol_o_id = %s AND ol_d_id = %s "
            "AND ol_w_id = %s",
            (o_id, d, 1),
        )
        both(
            dbs,
            "UPDATE customer SET c_balance = c_balance + %s, c_delivery_cnt = c_delivery_cnt + 1 "
            "WHERE c_id = %s AND c_d_id = %s AND c_w_id = %s",
            (Decimal("99.99"), 4, d, 1),
        )


def test_stock_level(dbs: tuple[Any, Any]) -> None:
    (next_o,) = both(
        dbs, "SELECT d_next_o_id FROM district WHERE d_w_id = %s AND d_id = %s", (1, 1)
    )[0]
    both(
        dbs,
        "SELECT COUNT(DISTINCT ol_i_id) FROM order_line, stock WHERE ol_w_id = %s "
        "AND ol_d_id = %s AND ol_o_id < %s AND ol_o_id >= %s AND s_w_id = %s "
        "AND s_i_id = ol_i_id AND s_quantity < %s",
        (1, 1, next_o, next_o - 20, 1, 60),
    )


def test_contents_equal_after_transactions(dbs: tuple[Any, Any]) -> None:
    plain, enc = dbs
    plain.commit()
    enc.commit()
    keys = {
        "warehouse": "w_id",
        "district": "d_w_id, d_id",
        "customer": "c_w_id, c_d_id, c_id",
        "orders": "o_w_id, o_d_id, o_id",
        "new_order": "no_w_id, no_d_id, no_o_id",
        "order_line": "ol_w_id, ol_d_id, ol_o_id, ol_number",
        "item": "i_id",
        "stock": "s_w_id, s_i_id",
        "history": "h_c_id, h_date",
    }
    for table, key in keys.items():
        both(dbs, f"SELECT * FROM {table} ORDER BY {key}")
