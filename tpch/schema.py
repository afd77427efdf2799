"""The eight TPC-H tables (specification clause 1.4), with their primary and foreign keys.

Column types are the specification's (identifiers ``integer``, decimals
``numeric(15,2)``, fixed text ``char(n)``, variable text ``varchar(n)``).  The foreign keys
matter to the encrypted database: a referencing column is encrypted under the referenced
key's DET/OPE keys, so every join of the 22 queries along a foreign key runs on the
server.  Tables are listed referenced-first, the order they are created and loaded in.
"""

from __future__ import annotations

TABLES: dict[str, str] = {
    "region": "CREATE TABLE region (r_regionkey integer PRIMARY KEY, r_name char(25), "
    "r_comment varchar(152))",
    "nation": "CREATE TABLE nation (n_nationkey integer PRIMARY KEY, n_name char(25), "
    "n_regionkey integer REFERENCES region (r_regionkey), n_comment varchar(152))",
    "part": "CREATE TABLE part (p_partkey integer PRIMARY KEY, p_name varchar(55), "
    "p_mfgr char(25), p_brand char(10), p_type varchar(25), p_size integer, "
    "p_container char(10), p_retailprice numeric(15,2), p_comment varchar(23))",
    "supplier": "CREATE TABLE supplier (s_suppkey integer PRIMARY KEY, s_name char(25), "
    "s_address varchar(40), s_nationkey integer REFERENCES nation (n_nationkey), "
    "s_phone char(15), s_acctbal numeric(15,2), s_comment varchar(101))",
    "partsupp": "CREATE TABLE partsupp (ps_partkey integer REFERENCES part (p_partkey), "
    "ps_suppkey integer REFERENCES supplier (s_suppkey), ps_availqty integer, "
    "ps_supplycost numeric(15,2), ps_comment varchar(199), "
    "PRIMARY KEY (ps_partkey, ps_suppkey))",
    "customer": "CREATE TABLE customer (c_custkey integer PRIMARY KEY, c_name varchar(25), "
    "c_address varchar(40), c_nationkey integer REFERENCES nation (n_nationkey), "
    "c_phone char(15), c_acctbal numeric(15,2), c_mktsegment char(10), "
    "c_comment varchar(117))",
    "orders": "CREATE TABLE orders (o_orderkey integer PRIMARY KEY, "
    "o_custkey integer REFERENCES customer (c_custkey), o_orderstatus char(1), "
    "o_totalprice numeric(15,2), o_orderdate date, o_orderpriority char(15), "
    "o_clerk char(15), o_shippriority integer, o_comment varchar(79))",
    "lineitem": "CREATE TABLE lineitem (l_orderkey integer REFERENCES orders (o_orderkey), "
    "l_partkey integer REFERENCES part (p_partkey), "
    "l_suppkey integer REFERENCES supplier (s_suppkey), l_linenumber integer, "
    "l_quantity numeric(15,2), l_extendedprice numeric(15,2), l_discount numeric(15,2), "
    "l_tax numeric(15,2), l_returnflag char(1), l_linestatus char(1), l_shipdate date, "
    "l_commitdate date, l_receiptdate date, l_shipinstruct char(25), l_shipmode char(10), "
    "l_comment varchar(44), PRIMARY KEY (l_orderkey, l_linenumber), "
    "FOREIGN KEY (l_partkey, l_suppkey) REFERENCES partsupp (ps_partkey, ps_suppkey))",
}

DDL = list(TABLES.values())

# Indexes on the foreign keys the queries join through, created after the load in both
# databases (as any TPC-H setup does: without them, plain PostgreSQL runs Q17's and Q20's
# correlated subqueries as a scan of lineitem per outer row -- tens of seconds at SF 0.1).
# In the encrypted database they index the keys' Eq onions.
INDEXES = [
    "CREATE INDEX lineitem_part_supp ON lineitem (l_partkey, l_suppkey)",
    "CREATE INDEX lineitem_supp ON lineitem (l_suppkey)",
    "CREATE INDEX orders_cust ON orders (o_custkey)",
    "CREATE INDEX partsupp_supp ON partsupp (ps_suppkey)",
]
