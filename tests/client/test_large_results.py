"""Large results: decrypted a column at a time, the same rows as value by value.

From ``BATCH_ROWS`` rows on, each plain column of a result is decrypted with one batched
call per layer.  The rows must be exactly the plain database's -- NULLs, every type,
expressions computed on the client next to the columns, ORDER BY -- also when a column
holds values at two layers (a stale client's view: the values say their layer), and the
decryption counts must be those of the per-value path.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog import recipes
from adaptive_client.compile.plan import BATCH_ROWS, ColumnValue, Output, decrypt_columns
from adaptive_client.errors import CiphertextError, EncodingError
from adaptive_client.stats import STATS

N = 3 * BATCH_ROWS + 5
DDL = (
    "CREATE TABLE big (id integer PRIMARY KEY, n integer, s text, amt numeric(10,2), "
    "d date, ts timestamp, f double precision)"
)


def _row(i: int) -> tuple[Any, ...]:
    return (
        i,
        None if i % 7 == 0 else i % 11 - 5,
        None if i % 5 == 0 else f"word{i % 13} {'x' * (i % 40)}",  # short and SIV-long
        None if i % 9 == 0 else Decimal(i * 37 % 10000) / 100,
        dt.date(2000, 1, 1) + dt.timedelta(days=i),
        dt.datetime(2020, 5, 17, 10, 30) + dt.timedelta(seconds=17 * i),
        i / 3,
    )


ROWS = [_row(i) for i in range(1, N + 1)]
QUERIES = [
    "SELECT * FROM big ORDER BY id",
    "SELECT id, n * 2, s, amt + 1 FROM big ORDER BY id",
    "SELECT s, id FROM big WHERE n > 0 OR n IS NULL ORDER BY id",
    "SELECT d, ts FROM big WHERE amt > 10 ORDER BY ts DESC",
]


@pytest.fixture(scope="module")
def pair(new_database: Any, master_key: Any) -> Any:
    plain_dsn, enc_dsn = new_database("bigp"), new_database("bige")
    insert = "INSERT INTO big VALUES " + ", ".join(["(%s, %s, %s, %s, %s, %s, %s)"] * N)
    params = [v for r in ROWS for v in r]
    with psycopg.connect(plain_dsn, autocommit=True) as plain:
        plain.execute(DDL)
        plain.execute(insert, params)
        with adaptive_client.connect(enc_dsn, master_key=master_key, autocommit=True) as conn:
            conn.execute(DDL)
            conn.execute(insert, params)
            yield plain, conn


@pytest.mark.parametrize("query", QUERIES)
def test_large_result_equals_plain(pair: Any, query: str) -> None:
    plain, conn = pair
    expected = plain.execute(query).fetchall()
    assert len(expected) >= BATCH_ROWS  # the batched path is the one under test
    assert conn.execute(query).fetchall() == expected


def test_batched_equals_per_value_with_mixed_layers(pair: Any) -> None:
    """Half the stored values at RND, half at DET, NULLs between: the column-wise result is
    the per-row one, and counts each decryption once, as the per-row path does."""
    _, conn = pair
    meta = conn.catalog.table("big")
    col = meta.column("s")
    eq = next(oc for oc in col.onions.values() if oc.innermost == "DET")
    values = [None if r[2] is None else col.encoding.coerce(r[2]) for r in ROWS]
    stored = [
        None if v is None else recipes.encrypt(col, eq, v, "RND" if i % 2 else "DET")
        for i, v in enumerate(values)
    ]
    outputs = [Output("s", ColumnValue(col, eq, 0)), Output("k", lambda row: row[1])]
    raw = [(s, i) for i, s in enumerate(stored)]
    STATS.reset()
    per_row = [tuple(o.fn(r) for o in outputs) for r in raw]
    per_row_counts = dict(STATS.decryptions)
    STATS.reset()
    batched = decrypt_columns(outputs, raw)
    assert batched == per_row
    assert [v for v, _ in batched] == values
    assert dict(STATS.decryptions) == per_row_counts


def test_every_onion_decrypts_as_a_batch_as_value_by_value(pair: Any) -> None:
    """Each onion of each column (DET, OPE, ASHE, HOM, RND-only, plain), stored at its
    current layer, NULLs and repeated values among them: ``decrypt_many`` is the
    per-value ``decrypt`` -- with and without NULLs in the column."""
    _, conn = pair
    meta = conn.catalog.table("big")
    for name, col in meta.columns.items():
        i = [c for c in ("id", "n", "s", "amt", "d", "ts", "f")].index(name)
        values = [None if r[i] is None else col.encoding.coerce(r[i]) for r in ROWS]
        for oc in col.onions.values():
            if oc.innermost in ("SEARCH", "TRIGRAM"):
                continue  # (word and trigram tokens are compared, never decrypted)
            with_nulls = [None if v is None else recipes.encrypt(col, oc, v) for v in values]
            for stored in (with_nulls, [v for v in with_nulls if v is not None]):
                try:
                    expected = [recipes.decrypt(col, oc, v) for v in stored]
                except EncodingError:  # (text's Ord onion orders by a prefix only)
                    with pytest.raises(EncodingError):
                        recipes.decrypt_many(col, oc, stored)
                    continue
                assert recipes.decrypt_many(col, oc, stored) == expected, (name, oc.onion)


# every kind of onion a column can have: Single onions at each layer, Paillier sums
KINDS_CONFIG: dict[str, Any] = {
    "defaults": {"sum_layer": "HOM", "hom_bits": 1024},
    "tables": {
        "kinds": {
            "p": {"onions": ["Single"], "layer": "PLAIN"},
            "r": {"onions": ["Single"], "layer": "RND"},
            "o": {"onions": ["Single"], "layer": "OPE"},
            "h": {"onions": ["Sum"]},
        }
    },
}


def test_single_and_paillier_onions_decrypt_as_a_batch(new_database: Any, master_key: Any) -> None:
    dsn = new_database("kinds")
    with adaptive_client.connect(dsn, master_key=master_key, config=KINDS_CONFIG) as conn:
        conn.execute("CREATE TABLE kinds (p integer, r text, o integer, h numeric(8,2))")
        meta = conn.catalog.table("kinds")
        rows = [(i, f"v{i % 4}", i % 5, Decimal(i) / 4) for i in range(20)] + [(None,) * 4]
        for i, name in enumerate(("p", "r", "o", "h")):
            col = meta.column(name)
            values = [None if r[i] is None else col.encoding.coerce(r[i]) for r in rows]
            for oc in col.onions.values():
                stored = [None if v is None else recipes.encrypt(col, oc, v) for v in values]
                expected = [recipes.decrypt(col, oc, v) for v in stored]
                assert recipes.decrypt_many(col, oc, stored) == expected, (name, oc.onion)


def test_tampered_value_in_a_large_result_is_a_typed_error(pair: Any) -> None:
    _, conn = pair
    meta = conn.catalog.table("big")
    col = meta.column("n")
    eq = next(oc for oc in col.onions.values() if oc.innermost == "DET")
    stored = [recipes.encrypt(col, eq, 1)] * BATCH_ROWS + [b"\x01" + b"\x00" * 20]
    with pytest.raises(CiphertextError):
        decrypt_columns([Output("n", ColumnValue(col, eq, 0))], [(s,) for s in stored])
