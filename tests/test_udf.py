"""The stored procedures, checked against values built by hand in the test.

RND ciphertext format: ``0x01 || nonce(12) || AES-256-CTR(key, nonce || 0^32, inner)``; the
inner value keeps its own leading layer tag.  The Sum onion's aggregate multiplies
ciphertexts modulo n².
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import psycopg
import pytest
from Crypto.Cipher import AES

KEY = bytes(range(32))
WRONG_KEY = bytes(range(1, 33))
NONCE = bytes(range(100, 112))
INNERS = [
    b"",  # nothing but the nonce
    b"\x02",
    b"\x02" + b"det ciphertext",  # 15 bytes: part of one keystream block
    b"\x02" + bytes(15),  # 16 bytes: one whole block
    b"\x02" + bytes(16),  # 17 bytes (a short DET value): two blocks
    b"\x03" + bytes(range(200)),
    b"\x02" + bytes(range(256)) * 20,  # 5121 bytes: beyond the peel's 256-block template
]

# What adaptive.peel_layer strips with pgcrypto (30_peel_layer.sql, here on one value):
# the counter blocks spelled out in hex from a template, AES-ECB, XOR on bit strings.
TEMPLATE = "".join(f"@{i:08x}" for i in range(256))
PGCRYPTO_STRIP = (
    "SELECT substring(varbit_send(('x' || encode(substring(v from 14), 'hex'))::varbit "
    "# ('x' || encode(substring(encrypt(CASE WHEN (octet_length(v) + 2) / 16 <= 256 "
    "THEN decode(replace(left(%(t)s, 9 * ((octet_length(v) + 2) / 16)), '@', "
    "encode(substring(v from 2 for 12), 'hex')), 'hex') "
    "ELSE (SELECT string_agg(substring(v from 2 for 12) || int4send(i), ''::bytea ORDER BY i) "
    "FROM generate_series(0, (octet_length(v) + 2) / 16 - 1) AS i) END, %(key)s, "
    "'aes-ecb/pad:none') from 1 for octet_length(v) - 13), 'hex'))::varbit) from 5) "
    "FROM (SELECT %(ct)s::bytea AS v) AS s"
)


def rnd_layer(inner: bytes, key: bytes = KEY, nonce: bytes = NONCE) -> bytes:
    return b"\x01" + nonce + AES.new(key, AES.MODE_CTR, nonce=nonce, initial_value=0).encrypt(inner)


@pytest.fixture(scope="module")
def db(pg_dsn: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        yield conn


# --- (a) adaptive.rnd_decrypt and pgcrypto strip a client-made RND layer ----------------


@pytest.mark.parametrize("inner", INNERS, ids=lambda b: f"{len(b)}B")
def test_rnd_decrypt_strips_the_layer(db: psycopg.Connection[Any], inner: bytes) -> None:
    ct = rnd_layer(inner)
    assert len(ct) == 13 + len(inner)
    row = db.execute("SELECT adaptive.rnd_decrypt(%s, %s)", (ct, KEY)).fetchone()
    assert row is not None and bytes(row[0]) == inner


@pytest.mark.parametrize("inner", INNERS, ids=lambda b: f"{len(b)}B")
def test_pgcrypto_strips_the_same_layer(db: psycopg.Connection[Any], inner: bytes) -> None:
    ct = rnd_layer(inner)
    row = db.execute(PGCRYPTO_STRIP, {"ct": ct, "key": KEY, "t": TEMPLATE}).fetchone()
    assert row is not None and bytes(row[0]) == inner


def test_rnd_decrypt_wrong_key_is_garbage_not_the_value(db: psycopg.Connection[Any]) -> None:
    # counter mode has no padding to fail on: a wrong key gives other bytes (the peel
    # checks the inner layer's tag of every stripped value, test_peel_refuses_a_wrong_key)
    ct = rnd_layer(b"\x02" + b"secret value")
    row = db.execute("SELECT adaptive.rnd_decrypt(%s, %s)", (ct, WRONG_KEY)).fetchone()
    assert row is not None and bytes(row[0]) != b"\x02" + b"secret value"


@pytest.mark.parametrize(
    "bad",
    [
        b"",
        b"\x01" + NONCE[:11],  # shorter than the nonce
        b"\x02" + rnd_layer(b"x")[1:],  # not the RND tag
    ],
    ids=["empty", "short", "wrong-tag"],
)
def test_rnd_decrypt_rejects_malformed_input(db: psycopg.Connection[Any], bad: bytes) -> None:
    with pytest.raises(psycopg.Error, match="not an RND ciphertext"):
        db.execute("SELECT adaptive.rnd_decrypt(%s, %s)", (bad, KEY))


def test_rnd_decrypt_is_strict(db: psycopg.Connection[Any]) -> None:
    assert db.execute("SELECT adaptive.rnd_decrypt(NULL, %s)", (KEY,)).fetchone() == (None,)


# --- (b) the server's Python has pycryptodome under one of its namespaces -------------


def test_server_python_imports_pycryptodome(db: psycopg.Connection[Any]) -> None:
    notices: list[str] = []

    def collect(diag: psycopg.errors.Diagnostic) -> None:
        notices.append(diag.message_primary or "")

    db.add_notice_handler(collect)
    try:
        db.execute(
            """
            DO LANGUAGE plpython3u $$
            found = []
            for ns in ("Cryptodome", "Crypto"):
                try:
                    __import__(ns + ".Cipher.AES")
                    found.append(ns)
                except ImportError:
                    pass
            plpy.notice("pycryptodome namespaces: " + ",".join(found))
            $$
            """
        )
    finally:
        db.remove_notice_handler(collect)
    reports = [n for n in notices if n.startswith("pycryptodome namespaces: ")]
    assert reports, notices
    found = reports[-1].split(": ", 1)[1].split(",")
    assert {"Cryptodome", "Crypto"} & set(found), reports
    # and the function that relies on it works with whichever one is there
    row = db.execute("SELECT adaptive.rnd_decrypt(%s, %s)", (rnd_layer(b"\x02ok"), KEY)).fetchone()
    assert row is not None and bytes(row[0]) == b"\x02ok"


# --- (c) adaptive.hom_sum multiplies modulo n2 ------------------------------------------


def test_hom_sum_is_the_product_mod_n2(db: psycopg.Connection[Any]) -> None:
    n2 = Decimal(101)
    with db.transaction():
        db.execute("CREATE TEMP TABLE hs (g int, c numeric) ON COMMIT DROP")
        with db.cursor() as cur:
            # fmt: off
            cur.executemany(
                "INSERT INTO hs VALUES (%s, %s)",
                [
                    (1, 3), (1, 5), (1, 7),      # 105 mod 101 = 4
                    (2, 50), (2, 60), (2, None),  # 3000 mod 101 = 71; NULL ignored
                    (3, 42),                      # a single value is itself
                    (4, None),                    # only NULLs: NULL
                    (5, 100), (5, 100),           # (-1)(-1) = 1
                ],
            )
            # fmt: on
        got = db.execute(
            "SELECT g, adaptive.hom_sum(c, %s) FROM hs GROUP BY g ORDER BY g", (n2,)
        ).fetchall()
        empty = db.execute("SELECT adaptive.hom_sum(c, %s) FROM hs WHERE false", (n2,)).fetchone()
    assert got == [(1, 4), (2, 71), (3, 42), (4, None), (5, 1)]
    assert empty == (None,)


def test_hom_sum_large_moduli_are_exact(db: psycopg.Connection[Any]) -> None:
    n2 = Decimal((2**2048 + 981) ** 2)
    values = [2**2047 + 12345, 3**1200, 7**700]
    expected = 1
    for v in values:
        expected = expected * v % int(n2)
    row = db.execute(
        "SELECT adaptive.hom_sum(c, %s) FROM unnest(%s::numeric[]) AS c",
        (n2, [Decimal(v) for v in values]),
    ).fetchone()
    assert row is not None and int(row[0]) == expected
