"""Ciphertexts as PostgreSQL sees them: OPE order by the server, HOM sums by the server,
RND layers stripped by the server (PL/Python and pgcrypto)."""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal
from typing import Any

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adaptive_client.schemes import HOM, OPE, RND
from adaptive_client.values.encodings import encoding_for

KEY = bytes(range(32))

VALUES: dict[str, list[Any]] = {
    "bigint": [-(2**63), 2**63 - 1, 0, -1, 1, -(2**40), 2**40, 123, -123],
    "integer": [-(2**31), 2**31 - 1, 0, -5, 5, 77, -77],
    "numeric(12,2)": [
        Decimal("-9999999999.99"),
        Decimal("9999999999.99"),
        Decimal("0"),
        Decimal("-0.01"),
        Decimal("0.01"),
        Decimal("12.5"),
        Decimal("-12.5"),
    ],
    "date": [
        dt.date(1, 1, 1),
        dt.date(9999, 12, 31),
        dt.date(2000, 2, 29),
        dt.date(1999, 12, 31),
        dt.date(1970, 1, 1),
    ],
    "timestamp": [
        dt.datetime(1, 1, 1),
        dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
        dt.datetime(2020, 1, 1, 0, 0, 0, 1),
        dt.datetime(2020, 1, 1),
        dt.datetime(1969, 12, 31, 23, 59, 59),
    ],
    "double precision": [float("-inf"), -1e300, -1.5, -0.0, 1e-300, 2.5, 1e300, float("inf")],
}


@pytest.fixture(scope="module")
def db(pg_dsn: str) -> Any:
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        yield conn


@pytest.mark.parametrize("t", list(VALUES))
def test_postgres_orders_ope_ciphertexts(db: psycopg.Connection[Any], t: str) -> None:
    enc = encoding_for(t)
    ope = OPE(KEY, enc.ope_bits)
    rng = random.Random(t)
    values = [enc.coerce(v) for v in VALUES[t]]
    rng.shuffle(values)
    db.execute("DROP TABLE IF EXISTS ope_order")
    db.execute("CREATE TABLE ope_order (i int, c bytea)")
    db.execute("CREATE INDEX ON ope_order (c)")
    with db.cursor() as cur:
        cur.executemany(
            "INSERT INTO ope_order VALUES (%s, %s)",
            [(i, ope.encrypt(enc.to_ope(v))) for i, v in enumerate(values)],
        )
    order = [r[0] for r in db.execute("SELECT i FROM ope_order ORDER BY c")]
    assert [values[i] for i in order] == sorted(values)
    db.execute("SET enable_seqscan = off")
    try:
        lo = db.execute("SELECT i FROM ope_order ORDER BY c LIMIT 1").fetchone()
    finally:
        db.execute("RESET enable_seqscan")
    assert lo is not None and values[lo[0]] == min(values)


def test_postgres_sums_paillier_ciphertexts(db: psycopg.Connection[Any]) -> None:
    h = HOM.generate(1024)
    values = [5, -3, 10**12, -(10**12) + 1, 0, 42]
    db.execute("DROP TABLE IF EXISTS hom_sum")
    db.execute("CREATE TABLE hom_sum (g int, c numeric)")
    with db.cursor() as cur:
        cur.executemany(
            "INSERT INTO hom_sum VALUES (%s, %s)",
            [(i % 2, Decimal(h.encrypt(v))) for i, v in enumerate(values)],
        )
    rows = db.execute(
        "SELECT g, adaptive.hom_sum(c, %s) FROM hom_sum GROUP BY g ORDER BY g", (Decimal(h.n2),)
    ).fetchall()
    assert [h.decrypt(int(r[1])) for r in rows] == [sum(values[0::2]), sum(values[1::2])]
    (empty,) = db.execute(
        "SELECT adaptive.hom_sum(c, %s) FROM hom_sum WHERE false", (Decimal(h.n2),)
    ).fetchone()  # type: ignore[misc]
    assert empty is None


def test_server_strips_client_rnd_layer(db: psycopg.Connection[Any]) -> None:
    inner = b"\x02" + bytes(range(16))
    ct = RND(KEY).encrypt(inner)
    (got,) = db.execute("SELECT adaptive.rnd_decrypt(%s, %s)", (ct, KEY)).fetchone()  # type: ignore[misc]
    assert bytes(got) == inner
    # the pgcrypto path of adaptive.peel_layer: AES-ECB of nonce || counter, XORed
    (fast,) = db.execute(
        "SELECT substring(varbit_send(('x' || encode(substring(v from 14), 'hex'))::varbit "
        "# ('x' || encode(substring(encrypt(substring(v from 2 for 12) || int4send(0) "
        "|| substring(v from 2 for 12) || int4send(1), %s, 'aes-ecb/pad:none') "
        "from 1 for octet_length(v) - 13), 'hex'))::varbit) from 5) "
        "FROM (SELECT %s::bytea AS v) AS s",
        (KEY, ct),
    ).fetchone()  # type: ignore[misc]
    assert bytes(fast) == inner
    (wrong,) = db.execute("SELECT adaptive.rnd_decrypt(%s, %s)", (ct, bytes(32))).fetchone()  # type: ignore[misc]
    assert bytes(wrong) != inner


def test_server_python_has_pycryptodome(db: psycopg.Connection[Any]) -> None:
    db.execute("DROP FUNCTION IF EXISTS pg_temp.which_crypto()")
    db.execute(
        "CREATE FUNCTION pg_temp.which_crypto() RETURNS text LANGUAGE plpython3u AS $$\n"
        "try:\n    import Cryptodome\n    return 'Cryptodome'\n"
        "except ImportError:\n    import Crypto\n    return 'Crypto'\n$$"
    )
    (name,) = db.execute("SELECT pg_temp.which_crypto()").fetchone()  # type: ignore[misc]
    assert name in ("Cryptodome", "Crypto")


STRATEGIES: dict[str, Any] = {
    "bigint": st.integers(-(2**63), 2**63 - 1),
    "numeric(12,2)": st.decimals(
        min_value=Decimal("-9999999999.99"), max_value=Decimal("9999999999.99"), places=2
    ),
    "date": st.dates(),
    "timestamp": st.datetimes(),
    "double precision": st.floats(allow_nan=False),
}


@pytest.mark.parametrize("t", list(STRATEGIES))
@settings(max_examples=5)
@given(data=st.data())
def test_postgres_order_matches_plaintext_order(
    db: psycopg.Connection[Any], t: str, data: st.DataObject
) -> None:
    """a < b  ⇔  OPE(a) < OPE(b), with the comparison done by PostgreSQL."""
    enc = encoding_for(t)
    ope = OPE(KEY, enc.ope_bits)
    values = [enc.coerce(v) for v in data.draw(st.lists(STRATEGIES[t], min_size=2, max_size=6))]
    cts = [ope.encrypt(enc.to_ope(v)) for v in values]
    rows = db.execute(
        "SELECT a.i, b.i, a.c < b.c, a.c = b.c FROM unnest(%s::bytea[]) WITH ORDINALITY a(c, i), "
        "unnest(%s::bytea[]) WITH ORDINALITY b(c, i)",
        (cts, cts),
    ).fetchall()
    for i, j, lt, eq in rows:
        assert lt == (values[i - 1] < values[j - 1]) and eq == (values[i - 1] == values[j - 1])
