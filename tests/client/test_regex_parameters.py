"""``col ~ %s`` over an encrypted column: a parameter of the form ``\\mword\\M`` is a word
search the server answers over the Search onion (the rows PostgreSQL gives); any other
pattern, known only when the statement runs, is refused as a feature the client does
not support (0A000, the transaction failed as PostgreSQL fails it on its own refusals)
-- it raised a DataError (22000) before, a class PostgreSQL never gives it."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import psycopg
import pytest

from adaptive_client.catalog.keys import MasterKey
from adaptive_client.errors import UnsupportedQuery

from .pairs import Pair, outcome, plain_and_encrypted

DDL = ["CREATE TABLE art (id int PRIMARY KEY, headline text)"]
ROWS = {"art": [(1, "the quick fox"), (2, "quickly now"), (3, None), (4, "a fox")]}


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "regexparam", {}, DDL, ROWS) as pair:
        yield pair


def test_a_word_parameter_is_searched(pair: Pair) -> None:
    plain, enc = pair
    sql = "SELECT id FROM art WHERE headline ~ %s ORDER BY id"
    for word in ("\\mfox\\M", "\\mquick\\M", "\\mnothing\\M"):
        assert outcome(enc, sql, (word,)) == outcome(plain, sql, (word,))


def test_another_pattern_parameter_is_refused_and_fails_the_transaction(pair: Pair) -> None:
    _, enc = pair
    enc.autocommit = False
    try:
        enc.execute("SELECT 1")
        with pytest.raises(UnsupportedQuery) as refused:
            enc.execute("SELECT id FROM art WHERE headline ~ %s", ("qu.ck",))
        assert refused.value.sqlstate == "0A000"
        assert enc.pg.pgconn.transaction_status == psycopg.pq.TransactionStatus.INERROR
        enc.rollback()
    finally:
        enc.autocommit = True
