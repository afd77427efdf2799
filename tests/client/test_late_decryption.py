"""Late decryption (compile/late.py): a column the client engine only carries to the
output is loaded as its ciphertext and decrypted for the rows the statement returns --
every statement compared with plain PostgreSQL (order, char(n) padding, numeric scale
and NULLs included), and the decryptions counted."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest

from adaptive_client.catalog.keys import MasterKey
from adaptive_client.compile.late import LatePlan
from adaptive_client.stats import STATS
from tpch.harness import printed_rows

from .pairs import Pair, plain_and_encrypted

DDL = [
    "CREATE TABLE cust (id integer PRIMARY KEY, name text, city varchar(20), code char(5), "
    "bal numeric(10,2), joined date)",
    "CREATE TABLE ord (id integer PRIMARY KEY, cust_id integer REFERENCES cust, "
    "amount numeric(10,2))",
]
CONFIG: dict[str, Any] = {
    "defaults": {"search": False},
    "tables": {
        "cust": {"bal": {"onions": ["Eq", "Ord"]}},
        "ord": {"amount": {"onions": ["Eq", "Sum"]}},
    },
}
CUSTOMERS = 60


@pytest.fixture(scope="module")
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    customers = [
        (
            i,
            None if i % 17 == 0 else f"name {i % 23}",
            f"city{i % 4}",
            None if i % 13 == 0 else f"c{i % 9}",
            Decimal(i * 37 % 900) / 4,
            dt.date(2020, 1 + i % 12, 1 + i % 27),
        )
        for i in range(1, CUSTOMERS + 1)
    ]
    orders = [(i, 1 + i * 7 % CUSTOMERS, Decimal(i * 13 % 500) / 8) for i in range(1, 301)]
    rows = {"cust": customers, "ord": orders}
    with plain_and_encrypted(new_database, master_key, "late", CONFIG, DDL, rows) as both:
        yield both


def _both(pair: Any, sql: str) -> tuple[list[Any], list[Any], int]:
    plain, enc = pair
    expected = printed_rows(plain.execute(sql).fetchall())
    enc.execute(sql).fetchall()  # (the peels the statement needs, done once)
    before = sum(STATS.decryptions.values())
    got = printed_rows(enc.execute(sql).fetchall())
    return expected, got, sum(STATS.decryptions.values()) - before


# Q10's shape: one row per customer shipped, the top ones returned
TOP = (
    "SELECT c.id, c.name, c.city, c.code, c.bal, c.joined, sum(o.amount) AS total "
    "FROM cust c JOIN ord o ON o.cust_id = c.id "
    "GROUP BY c.id, c.name, c.city, c.code, c.bal, c.joined ORDER BY total DESC, c.id LIMIT 3"
)


def test_top_groups_decrypt_only_the_returned_rows(pair: Any) -> None:
    expected, got, decrypted = _both(pair, TOP)
    assert got == expected and len(got) == 3
    # the sums of every group (ASHE), the ordered key (every group), and five carried
    # columns for three rows -- not five for every customer
    assert decrypted <= 2 * CUSTOMERS + 5 * 3


@pytest.mark.parametrize(
    "sql",
    [
        TOP,
        # named or numbered by ORDER BY: decrypted on arrival, ordered by the value
        "SELECT c.name, c.code, sum(o.amount) FROM cust c JOIN ord o ON o.cust_id = c.id "
        "GROUP BY c.name, c.code ORDER BY c.name NULLS FIRST, 2 LIMIT 5",
        "SELECT c.city AS town, max(o.amount) FROM cust c JOIN ord o ON o.cust_id = c.id "
        "GROUP BY c.city ORDER BY town DESC",
        "SELECT c.code, count(*) FROM cust c JOIN ord o ON o.cust_id = c.id "
        "GROUP BY c.code ORDER BY 1 NULLS LAST",
        # in HAVING, in an expression, twice in the output: decrypted on arrival
        "SELECT c.name, sum(o.amount) FROM cust c JOIN ord o ON o.cust_id = c.id "
        "GROUP BY c.name HAVING c.name > 'name 5' ORDER BY 2 DESC",
        "SELECT c.city, upper(c.city), c.city, sum(o.amount) AS s FROM cust c "
        "JOIN ord o ON o.cust_id = c.id GROUP BY c.city ORDER BY s",
        # carried: char(n) padding, numeric scale, dates, NULLs
        "SELECT c.code, c.bal, c.joined, sum(o.amount) AS s FROM cust c "
        "JOIN ord o ON o.cust_id = c.id GROUP BY c.code, c.bal, c.joined "
        "ORDER BY s DESC, c.joined LIMIT 8",
        # not grouped: carried from any layer
        "SELECT c.name, c.code, c.bal FROM cust c WHERE lower(c.city) = 'city2' "
        "ORDER BY c.id LIMIT 4",
        "SELECT DISTINCT c.city, c.code FROM cust c WHERE lower(c.name) LIKE '%1%'",
        "SELECT c.name FROM cust c WHERE c.id IN (SELECT o.cust_id FROM ord o "
        "WHERE o.amount * 2 > 100) ORDER BY c.id",
        # joined on the client: carried by row number, NULL where the outer join adds
        # a row without a match
        "SELECT c.name, c.code, o.id FROM cust c RIGHT JOIN ord o ON o.cust_id = c.id "
        "AND o.amount * 2 > c.bal ORDER BY o.id",
        "SELECT c.name, c.name AS again, c.joined FROM cust c LEFT JOIN ord o "
        "ON o.cust_id = c.id AND o.amount > c.bal WHERE c.id < 20 ORDER BY c.id, o.id",
        # grouped by the server, then DISTINCT on the client: equal outputs of different
        # groups merge (never carried as row numbers)
        "SELECT DISTINCT c.city, count(*) FROM cust c JOIN ord o ON o.cust_id = c.id "
        "GROUP BY c.id, c.city HAVING sum(o.amount) > 10",
        # a derived table the server aggregates, joined on the client
        "SELECT c.name, c.code, t.total FROM cust c JOIN (SELECT o.cust_id, "
        "sum(o.amount) AS total FROM ord o GROUP BY o.cust_id) t ON t.cust_id = c.id "
        "WHERE lower(c.city) = 'city1' ORDER BY t.total DESC, c.id LIMIT 5",
    ],
)
def test_equal_to_plain(pair: Any, sql: str) -> None:
    expected, got, _ = _both(pair, sql)
    if "ORDER BY" not in sql:
        expected, got = sorted(expected, key=repr), sorted(got, key=repr)
    assert got == expected


def test_a_key_only_grouped_by_is_never_decrypted(pair: Any) -> None:
    """TPC-H Q13's shape: the derived table's key is dropped from its outputs (nothing
    reads it) and only groups -- over its ciphertexts."""
    sql = (
        "SELECT cnt, count(*) AS n FROM (SELECT c.id, count(o.id) AS cnt FROM cust c "
        "LEFT JOIN ord o ON o.cust_id = c.id AND o.id > 100 GROUP BY c.id) AS x "
        "GROUP BY cnt ORDER BY n DESC, cnt DESC"
    )
    expected, got, decrypted = _both(pair, sql)
    assert got == expected and len(got) >= 2
    assert decrypted == 0


def test_outputs_only_copied_are_carried_as_row_numbers(
    pair: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A carried column only copied to the output -- or grouped by again on the client
    where the server's groups are already the statement's (TPC-H Q10's shape) -- is
    loaded into the client engine as the fetched row's number, its ciphertexts kept
    aside and looked up for the rows returned; a column grouped by on the client over
    rows the server did not group is loaded as its ciphertext."""
    kept_columns: list[set[tuple[int, int]]] = []
    original = LatePlan.by_reference

    def spy(self: LatePlan, relation: int, columns: Any, kept: Any) -> Any:
        out = original(self, relation, columns, kept)
        kept_columns.append(set(kept))
        return out

    monkeypatch.setattr(LatePlan, "by_reference", spy)
    expected, got, decrypted = _both(pair, TOP)
    assert got == expected and len(got) == 3
    assert kept_columns and len(kept_columns[-1]) == 5  # name, city, code, bal, joined
    assert decrypted <= 2 * CUSTOMERS + 5 * 3
    kept_columns.clear()
    # grouped by on the client (the filter is the client's): the ciphertexts, grouped
    grouped = "SELECT c.city, count(*) FROM cust c WHERE lower(c.name) LIKE '%1%' GROUP BY c.city"
    expected, got, _ = _both(pair, grouped)
    assert sorted(got, key=repr) == sorted(expected, key=repr) and len(got) > 1
    assert kept_columns and not any(kept_columns)
