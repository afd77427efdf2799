"""The nine TPC-C tables (specification clause 1.3) and the indexes the transactions use."""

from __future__ import annotations

DIST = ", ".join(f"s_dist_{i:02d} char(24)" for i in range(1, 11))

DDL = [
    "CREATE TABLE warehouse (w_id integer PRIMARY KEY, w_name varchar(10), w_street_1 varchar(20), "
    "w_street_2 varchar(20), w_city varchar(20), w_state char(2), w_zip char(9), "
    "w_tax numeric(4,4), w_ytd numeric(12,2))",
    "CREATE TABLE district (d_id integer, d_w_id integer, d_name varchar(10), "
    "d_street_1 varchar(20), d_street_2 varchar(20), d_city varchar(20), d_state char(2), "
    "d_zip char(9), d_tax numeric(4,4), d_ytd numeric(12,2), d_next_o_id integer, "
    "PRIMARY KEY (d_w_id, d_id))",
    "CREATE TABLE customer (c_id integer, c_d_id integer, c_w_id integer, c_first varchar(16), "
    "c_middle char(2), c_last varchar(16), c_street_1 varchar(20), c_street_2 varchar(20), "
    "c_city varchar(20), c_state char(2), c_zip char(9), c_phone char(16), c_since timestamp, "
    "c_credit char(2), c_credit_lim numeric(12,2), c_discount numeric(4,4), "
    "c_balance numeric(12,2), c_ytd_payment numeric(12,2), c_payment_cnt integer, "
    "c_delivery_cnt integer, c_data varchar(500), PRIMARY KEY (c_w_id, c_d_id, c_id))",
    "CREATE INDEX customer_last ON customer (c_w_id, c_d_id, c_last)",
    "CREATE TABLE history (h_c_id integer, h_c_d_id integer, h_c_w_id integer, h_d_id integer, "
    "h_w_id integer, h_date timestamp, h_amount numeric(6,2), h_data varchar(24))",
    "CREATE TABLE new_order (no_o_id integer, no_d_id integer, no_w_id integer, "
    "PRIMARY KEY (no_w_id, no_d_id, no_o_id))",
    "CREATE TABLE orders (o_id integer, o_d_id integer, o_w_id integer, o_c_id integer, "
    "o_entry_d timestamp, o_carrier_id integer, o_ol_cnt integer, o_all_local integer, "
    "PRIMARY KEY (o_w_id, o_d_id, o_id))",
    "CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id)",
    "CREATE TABLE order_line (ol_o_id integer, ol_d_id integer, ol_w_id integer, "
    "ol_number integer, ol_i_id integer, ol_supply_w_id integer, ol_delivery_d timestamp, "
    "ol_quantity integer, ol_amount numeric(6,2), ol_dist_info char(24), "
    "PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number))",
    "CREATE TABLE item (i_id integer PRIMARY KEY, i_im_id integer, i_name varchar(24), "
    "i_price numeric(5,2), i_data varchar(50))",
    f"CREATE TABLE stock (s_i_id integer, s_w_id integer, s_quantity integer, {DIST}, "
    "s_ytd integer, s_order_cnt integer, s_remote_cnt integer, s_data varchar(50), "
    "PRIMARY KEY (s_w_id, s_i_id))",
]

TABLES = [
    "warehouse",
    "district",
    "customer",
    "history",
    "new_order",
    "orders",
    "order_line",
    "item",
    "stock",
]

# a total order for comparing contents
ORDER_KEYS = {
    "warehouse": "w_id",
    "district": "d_w_id, d_id",
    "customer": "c_w_id, c_d_id, c_id",
    "history": "h_c_w_id, h_c_d_id, h_c_id, h_date, h_amount",
    "new_order": "no_w_id, no_d_id, no_o_id",
    "orders": "o_w_id, o_d_id, o_id",
    "order_line": "ol_w_id, ol_d_id, ol_o_id, ol_number",
    "item": "i_id",
    "stock": "s_w_id, s_i_id",
}
