"""A choice between an aggregate and a constant in a grouped statement --
``coalesce(sum(amount), 0)``, the report's usual guard against an empty group -- keeps
each value's own display scale as PostgreSQL does (``15.50``, and ``0`` for the empty
group): the client engine computes the scale beside the value.  It was refused ("a
choice between numerics of different scales").  Judged with the Decimals' exact
digits, which ``==`` would not tell apart."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, outcome, plain_and_encrypted, script_differences

DDL = [
    "CREATE TABLE ev (id integer PRIMARY KEY, user_id int NOT NULL, kind text NOT NULL, "
    "amount numeric(10,2), qty int, price numeric(8,3))"
]
ROWS = {
    "ev": [
        (1, 1, "buy", Decimal("10.50"), 1, Decimal("1.5")),
        (2, 1, "buy", Decimal("5"), 2, Decimal("2")),
        (3, 2, "refund", Decimal("-3.25"), None, None),
        (4, 2, "buy", Decimal("7"), 3, Decimal("0.125")),
        (5, 3, "view", None, None, None),
    ]
}
SCRIPT = [
    "SELECT user_id, coalesce(sum(amount), 0) AS net FROM ev GROUP BY user_id ORDER BY user_id",
    "SELECT user_id, coalesce(sum(amount) FILTER (WHERE kind = 'buy'), 0) FROM ev "
    "GROUP BY user_id ORDER BY user_id",
    "SELECT coalesce(sum(amount), 0), coalesce(max(price), 0.5), "
    "coalesce(min(amount), sum(price)) FROM ev WHERE user_id = 3",
    "SELECT coalesce(sum(amount), 0) FROM ev",
    "SELECT user_id, CASE WHEN count(*) > 1 THEN sum(amount) ELSE 0 END FROM ev "
    "GROUP BY user_id ORDER BY 1",
    "SELECT user_id, greatest(max(amount), 0) FROM ev GROUP BY user_id ORDER BY 1",
    "SELECT user_id, coalesce(sum(qty * price), 0) FROM ev GROUP BY user_id ORDER BY 1",
    "SELECT kind, coalesce(sum(amount), 0) + 1 FROM ev GROUP BY kind ORDER BY 1",
]


def _digits(conn: Any, sql: str) -> tuple[Any, ...]:
    got = outcome(conn, sql)
    if got[0] != "rows":
        return got
    shown = [tuple(str(v) if isinstance(v, Decimal) else v for v in row) for row in got[1]]
    return ("rows", shown, got[2])


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "choices", {}, DDL, ROWS) as pair:
        yield pair


def test_group_choices_keep_their_scales(pair: Pair) -> None:
    assert script_differences(pair, SCRIPT, judged=_digits) == []
