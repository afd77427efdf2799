"""A TPC-C driver's schema file -- foreign keys, DEFAULT CURRENT_TIMESTAMP, composite keys,
several statements in one execute() -- loads through the client unchanged, and behaves
as on plain PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.keys import MasterKey

from .harness import Case, Pair

DDL = (Path(__file__).parent / "data" / "tpcc_ddl.sql").read_text()
TABLES = [
    "warehouse",
    "item",
    "stock",
    "district",
    "customer",
    "history",
    "oorder",
    "new_order",
    "order_line",
]
ROWS = [
    "INSERT INTO warehouse VALUES (1, 300000.00, 0.1000, 'w1', 's1', 's2', 'c', 'st', '123456789')",
    "INSERT INTO warehouse VALUES (2, 300000.00, 0.0500, 'w2', 's1', 's2', 'c', 'st', '123456789')",
    "INSERT INTO item VALUES (1, 'item one', 9.99, 'data', 11), (2, 'item two', 1.50, 'ORIGINAL', 12)",
    "INSERT INTO stock VALUES (1, 1, 50, 0, 0, 0, 'sd', 'd1', 'd2', 'd3', 'd4', 'd5', 'd6', "
    "'d7', 'd8', 'd9', 'd10'), (1, 2, 20, 0, 0, 0, 'sd', 'd1', 'd2', 'd3', 'd4', 'd5', 'd6', "
    "'d7', 'd8', 'd9', 'd10'), (2, 1, 5, 0, 0, 0, 'sd', 'd1', 'd2', 'd3', 'd4', 'd5', 'd6', "
    "'d7', 'd8', 'd9', 'd10')",
    "INSERT INTO district VALUES (1, 1, 30000, 0.0100, 3001, 'd', 's', 's', 'c', 'st', '12345'),"
    " (2, 1, 30000, 0.0200, 3001, 'd', 's', 's', 'c', 'st', '12345')",
    "INSERT INTO customer (c_w_id, c_d_id, c_id, c_discount, c_credit, c_last, c_first, "
    "c_credit_lim, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_street_1, "
    "c_street_2, c_city, c_state, c_zip, c_phone, c_middle, c_data) VALUES "
    "(1, 1, 1, 0.05, 'GC', 'BARBARBAR', 'first', 50000, -10, 10, 1, 0, 's', 's', 'c', 'st', "
    "'123', '555', 'OE', 'data'), (2, 1, 1, 0.10, 'BC', 'OUGHTABLE', 'f2', 50000, -10, 10, 1, 0,"
    " 's', 's', 'c', 'st', '123', '555', 'OE', 'data')",
    "INSERT INTO oorder (o_w_id, o_d_id, o_id, o_c_id, o_ol_cnt, o_all_local) VALUES "
    "(1, 1, 3001, 1, 2, 1), (2, 1, 3001, 1, 1, 0)",
    "INSERT INTO new_order VALUES (1, 1, 3001), (2, 1, 3001)",
    "INSERT INTO order_line (ol_w_id, ol_d_id, ol_o_id, ol_number, ol_i_id, ol_amount, "
    "ol_supply_w_id, ol_quantity, ol_dist_info) VALUES (1, 1, 3001, 1, 1, 19.98, 1, 2, 'd1'), "
    "(1, 1, 3001, 2, 2, 1.50, 1, 1, 'd1'), (2, 1, 3001, 1, 1, 9.99, 1, 1, 'd1')",
    "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_amount, h_data) "
    "VALUES (1, 1, 1, 1, 1, 10.00, 'h')",
]


@pytest.fixture(scope="module")
def pair(new_database: Any, master_key: MasterKey) -> Iterator[Pair]:
    plain = psycopg.connect(new_database("tpcc_plain"), autocommit=True)
    enc = adaptive_client.connect(new_database("tpcc_enc"), master_key=master_key, autocommit=True)
    for conn in (plain, enc):
        conn.execute(DDL)  # the whole file, in one execute()
        conn.execute(DDL)  # again: its DROP ... IF EXISTS CASCADE lines make it rerunnable
        for statement in ROWS:
            conn.execute(statement)
    plain.autocommit = enc.autocommit = False
    p = Pair(plain, enc, TABLES)
    assert p.contents(enc) == p.contents(plain)
    yield p
    plain.close()
    enc.close()


CASES = [
    Case.of(
        "fk-violation-composite",
        "INSERT INTO customer (c_w_id, c_d_id, c_id, c_discount, c_credit, c_last, c_first, c_credit_lim, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_middle, c_data) VALUES (9, 9, 1, 0, 'GC', 'x', 'y', 0, 0, 0, 0, 0, 's', 's', 'c', 'st', 'z', 'p', 'OE', 'd')",
    ),
    Case.of(
        "default-current-timestamp",
        "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_amount, h_data) VALUES (1, 1, 2, 1, 2, 5.00, 'h2') RETURNING h_date",
    ),
    Case.of("cascade-warehouse", "DELETE FROM warehouse WHERE w_id = 2"),
    Case.of("restrict-by-fk", "DELETE FROM item WHERE i_id = 2"),
    Case.of(
        "stock-level-join",
        "SELECT count(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = 1 AND ol_d_id = 1 AND ol_o_id < 3002 AND ol_o_id >= 2982 AND s_w_id = 1 AND s_i_id = ol_i_id AND s_quantity < 60",
    ),
    Case.of(
        "new-order-delete",
        "DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 1 AND no_o_id = 3001",
    ),
    Case.of(
        "order-status",
        "SELECT o_id, o_carrier_id, o_entry_d FROM oorder WHERE o_w_id = 1 AND o_d_id = 1 AND o_c_id = 1 ORDER BY o_id DESC LIMIT 1",
        ordered=True,
    ),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_tpcc_driver_schema(pair: Pair, case: Case) -> None:
    pair.check(case)
