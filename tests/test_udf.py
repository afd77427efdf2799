"""The stored procedures, checked against values built by hand in the test.

RND ciphertext format: ``0x01 || iv(16) || AES-256-CBC(key, iv, PKCS#7(inner))``; the
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
from Crypto.Util.Padding import pad

KEY = bytes(range(32))
WRONG_KEY = bytes(range(1, 33))
IV = bytes(range(100, 116))
INNERS = [
    b"",  # a whole block of padding
    b"\x02",
    b"\x02" + b"det ciphertext",  # 15 bytes: one byte of padding
    b"\x02" + bytes(15),  # 16 bytes: a whole block of padding
    b"\x03" + bytes(range(200)),
]

PGCRYPTO_STRIP = (
    "SELECT decrypt_iv(substring(%(ct)s::bytea from 18), %(key)s, "
    "substring(%(ct)s::bytea from 2 for 16), 'aes-cbc/pad:pkcs')"
)


def rnd_layer(inner: bytes, key: bytes = KEY, iv: bytes = IV) -> bytes:
    return b"\x01" + iv + AES.new(key, AES.MODE_CBC, iv=iv).encrypt(pad(inner, 16))


@pytest.fixture(scope="module")
def db(pg_dsn: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        yield conn


# --- (a) adaptive.rnd_decrypt and pgcrypto strip a client-made RND layer ----------------


@pytest.mark.parametrize("inner", INNERS, ids=lambda b: f"{len(b)}B")
def test_rnd_decrypt_strips_the_layer(db: psycopg.Connection[Any], inner: bytes) -> None:
    ct = rnd_layer(inner)
    assert len(ct) == 1 + 16 + (len(inner) // 16 + 1) * 16
    row = db.execute("SELECT adaptive.rnd_decrypt(%s, %s)", (ct, KEY)).fetchone()
    assert row is not None and bytes(row[0]) == inner


@pytest.mark.parametrize("inner", INNERS, ids=lambda b: f"{len(b)}B")
def test_pgcrypto_strips_the_same_layer(db: psycopg.Connection[Any], inner: bytes) -> None:
    ct = rnd_layer(inner)
    row = db.execute(PGCRYPTO_STRIP, {"ct": ct, "key": KEY}).fetchone()
    assert row is not None and bytes(row[0]) == inner


def test_rnd_decrypt_set_based_matches_pgcrypto(db: psycopg.Connection[Any]) -> None:
    rows = [(i, rnd_layer(inner, iv=bytes([i]) * 16)) for i, inner in enumerate(INNERS)]
    with db.transaction():
        db.execute("CREATE TEMP TABLE rnd_col (id int, c bytea) ON COMMIT DROP")
        with db.cursor() as cur:
            cur.executemany("INSERT INTO rnd_col VALUES (%s, %s)", rows)
        db.execute("INSERT INTO rnd_col VALUES (99, NULL)")
        got = db.execute(
            "SELECT id, adaptive.rnd_decrypt(c, %(k)s), "
            "decrypt_iv(substring(c from 18), %(k)s, substring(c from 2 for 16), "
            "'aes-cbc/pad:pkcs') FROM rnd_col ORDER BY id",
            {"k": KEY},
        ).fetchall()
    expected = [(i, inner, inner) for i, inner in enumerate(INNERS)] + [(99, None, None)]
    assert [(i, _bytes(a), _bytes(b)) for i, a, b in got] == expected


def _bytes(v: Any) -> bytes | None:
    return None if v is None else bytes(v)


def test_rnd_decrypt_wrong_key_is_an_sql_error(db: psycopg.Connection[Any]) -> None:
    ct = rnd_layer(b"\x02" + b"secret value")
    # with these fixed bytes the wrong key yields invalid padding (checked by hand)
    wrong = AES.new(WRONG_KEY, AES.MODE_CBC, iv=IV).decrypt(ct[17:])
    assert not 1 <= wrong[-1] <= 16 or wrong[-wrong[-1] :] != bytes([wrong[-1]]) * wrong[-1]
    with pytest.raises(psycopg.Error, match="bad padding"):
        db.execute("SELECT adaptive.rnd_decrypt(%s, %s)", (ct, WRONG_KEY))
    with pytest.raises(psycopg.Error):
        db.execute(PGCRYPTO_STRIP, {"ct": ct, "key": WRONG_KEY})


@pytest.mark.parametrize(
    "bad",
    [
        b"",
        b"\x01" + IV,  # no ciphertext block
        b"\x02" + rnd_layer(b"x")[1:],  # not the RND tag
        rnd_layer(b"x")[:-1],  # truncated
    ],
    ids=["empty", "no-block", "wrong-tag", "truncated"],
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
