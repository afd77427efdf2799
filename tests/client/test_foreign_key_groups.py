"""Foreign keys added one after the other to columns already in a key group: every
member keeps the group's keys, whatever the order (a self-reference added after
another table's reference once re-keyed the referenced key alone)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.catalog.onions import Onion

SCHEMA = [
    "CREATE TABLE employee (id integer PRIMARY KEY, name text, reports_to integer)",
    "CREATE TABLE customer (id integer PRIMARY KEY, name text, rep integer)",
    "INSERT INTO employee VALUES (1, 'boss', NULL), (2, 'ann', 1)",
    "INSERT INTO customer VALUES (10, 'acme', 2)",
]
CUSTOMER_FK = "ALTER TABLE customer ADD FOREIGN KEY (rep) REFERENCES employee(id)"
SELF_FK = "ALTER TABLE employee ADD FOREIGN KEY (reports_to) REFERENCES employee(id)"
AFTER = [
    ("INSERT INTO employee VALUES (3, 'bob', 2)", None),
    ("INSERT INTO customer VALUES (11, 'initech', 3)", None),
    ("INSERT INTO customer VALUES (12, 'hooli', 1)", None),
    ("INSERT INTO customer VALUES (13, 'nobody', 99)", None),
    ("INSERT INTO employee VALUES (4, 'eve', 42)", None),
    (
        "SELECT c.name, e.name, b.name FROM customer c JOIN employee e ON e.id = c.rep "
        "LEFT JOIN employee b ON b.id = e.reports_to ORDER BY c.id",
        None,
    ),
]


def _run(conn: Any, order: list[str]) -> list[Any]:
    out: list[Any] = []
    for sql in SCHEMA + order:
        conn.execute(sql)
    for sql, params in AFTER:
        try:
            cur = conn.execute(sql, params)
            out.append(cur.fetchall() if cur.description else cur.rowcount)
        except psycopg.Error as exc:
            out.append(exc.sqlstate)
    return out


@pytest.mark.parametrize("order", [[CUSTOMER_FK, SELF_FK], [SELF_FK, CUSTOMER_FK]])
def test_foreign_keys_in_either_order(new_database: Callable[..., str], order: list[str]) -> None:
    key = MasterKey.generate()
    with psycopg.connect(new_database("fkplain"), autocommit=True) as plain:
        expected = _run(plain, order)
    with adaptive_client.connect(new_database("fkenc"), master_key=key, autocommit=True) as enc:
        got = _run(enc, order)
        members = [("employee", "id"), ("employee", "reports_to"), ("customer", "rep")]
        det_keys = {enc.catalog.table(t).column(c).onions[Onion.EQ].keys["DET"] for t, c in members}
    assert got == expected
    assert expected[3] == expected[4] == "23503"  # (the references are enforced)
    assert len(det_keys) == 1  # one key group


CHAIN = [
    "CREATE TABLE ta (col1 integer PRIMARY KEY)",
    "CREATE TABLE tb (a int REFERENCES ta)",
    "CREATE TABLE tc (a serial PRIMARY KEY)",
    "INSERT INTO tc VALUES (1), (2)",
    "INSERT INTO ta VALUES (1), (2)",
    "INSERT INTO tb VALUES (1), (2), (2)",
    # ta.col1, which tb.a references, now references tc.a: the three share one key
    "ALTER TABLE ta ADD FOREIGN KEY (col1) REFERENCES tc",
]
CHAIN_AFTER = [
    "INSERT INTO tc VALUES (3)",
    "INSERT INTO ta VALUES (3)",
    "INSERT INTO tb VALUES (3)",
    "INSERT INTO tb VALUES (4)",
    "INSERT INTO ta VALUES (5)",
    "SELECT a FROM tb ORDER BY a",
    "SELECT tb.a, tc.a FROM tb JOIN tc ON tb.a = tc.a ORDER BY 1",
    "SELECT count(*) FROM tb JOIN ta ON tb.a = ta.col1",
    "DELETE FROM tc WHERE a = 1",
    "DELETE FROM ta WHERE col1 = 3",
]


def _chain(conn: Any) -> list[Any]:
    for sql in CHAIN:
        conn.execute(sql)
    out: list[Any] = []
    for sql in CHAIN_AFTER:
        try:
            cur = conn.execute(sql)
            out.append(cur.fetchall() if cur.description else cur.rowcount)
        except psycopg.Error as exc:
            out.append(exc.sqlstate)
    return out


def test_referenced_key_joining_another_group_takes_its_referencers(
    new_database: Callable[..., str],
) -> None:
    """A referenced key that gains a foreign key of its own moves to the new key with the
    columns referencing it (with their rows): a valid insert into tb was 23503."""
    key = MasterKey.generate()
    with psycopg.connect(new_database("fkchainplain"), autocommit=True) as plain:
        expected = _chain(plain)
    with adaptive_client.connect(new_database("fkchain"), master_key=key, autocommit=True) as enc:
        assert _chain(enc) == expected
        members = [("ta", "col1"), ("tb", "a"), ("tc", "a")]
        det_keys = {enc.catalog.table(t).column(c).onions[Onion.EQ].keys["DET"] for t, c in members}
        assert len(det_keys) == 1
