"""RND and DET: known answers, cross-checks with an independent AES, properties."""

from __future__ import annotations

import contextlib

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from hypothesis import given
from hypothesis import strategies as st

from adaptive_client.errors import CiphertextError
from adaptive_client.schemes import DET, RND

KEY = bytes(range(32))
IV = bytes(range(16, 32))


def test_rnd_known_answer() -> None:
    ct = RND(KEY).encrypt(b"hello", iv=IV)
    assert ct.hex() == "01101112131415161718191a1b1c1d1e1f0468f1a5269ea7245bb84c64d456e94d"
    assert RND(KEY).decrypt(ct) == b"hello"


def test_rnd_matches_independent_aes_cbc() -> None:
    """The format is 0x01 || iv || AES-256-CBC(PKCS#7): what pgcrypto's decrypt_iv strips."""
    ct = RND(KEY).encrypt(b"sixteen byte msg", iv=IV)
    dec = Cipher(algorithms.AES(KEY), modes.CBC(ct[1:17])).decryptor()
    padded = dec.update(ct[17:]) + dec.finalize()
    assert padded == b"sixteen byte msg" + bytes([16]) * 16


@given(st.binary(max_size=200))
def test_rnd_round_trip_and_randomized(data: bytes) -> None:
    r = RND(KEY)
    a, b = r.encrypt(data), r.encrypt(data)
    assert a != b  # fresh IV each time
    assert r.decrypt(a) == r.decrypt(b) == data


@pytest.mark.parametrize(
    "bad", [b"", b"\x01" + b"\x00" * 20, b"\x02" + b"\x00" * 32, b"\x01" + b"\x00" * 33]
)
def test_rnd_rejects_malformed(bad: bytes) -> None:
    with pytest.raises(CiphertextError):
        RND(KEY).decrypt(bad)


def test_rnd_wrong_key_is_detected_or_garbled() -> None:
    ct = RND(KEY).encrypt(b"x" * 5, iv=IV)
    with contextlib.suppress(CiphertextError):
        assert RND(bytes(32)).decrypt(ct) != b"x" * 5


def test_det_known_answers() -> None:
    d = DET(KEY)
    assert d.encrypt(b"\x00\x00\x00\x2a").hex() == "020ab815208258df71ef242b71845d3535"
    assert d.encrypt(b"").hex() == "0206ce39cd9d8b33e92dcb4fc12350d180"
    assert d.encrypt(b"a longer plaintext of 33 bytes!!!").hex() == (
        "028f5634d4c3ef6618bd2a79a4c65131d4af671d15ef436a374ec4b26ceb695bc1ddb5818fe503"
        "1410b36ac214ef6bffc013"
    )


def test_det_short_values_are_one_aes_block() -> None:
    """Independent check: HKDF-SHA256 subkey, ISO 7816-4 padding, one AES block."""
    block_key = HKDF(SHA256(), 32, salt=None, info=b"adaptive det block").derive(KEY)
    enc = Cipher(algorithms.AES(block_key), modes.ECB()).encryptor()
    expected = enc.update(b"abc" + b"\x80" + b"\x00" * 12) + enc.finalize()
    assert DET(KEY).encrypt(b"abc") == b"\x02" + expected


def test_det_no_shared_prefix_leak() -> None:
    d = DET(KEY)
    a = d.encrypt(b"common prefix of many bytes...A")
    b = d.encrypt(b"common prefix of many bytes...B")
    assert a[1:17] != b[1:17] and a[17:33] != b[17:33]


@given(st.binary(max_size=100), st.binary(max_size=100))
def test_det_equality_iff_equal(a: bytes, b: bytes) -> None:
    d = DET(KEY)
    assert (d.encrypt(a) == d.encrypt(b)) == (a == b)
    assert d.decrypt(d.encrypt(a)) == a


@pytest.mark.parametrize(
    "bad",
    [
        b"",
        b"\x02",
        b"\x02" + b"\x00" * 16,
        b"\x02" + b"\x00" * 20,
        b"\x01" + b"\x00" * 16,
        b"\x02" + b"\x00" * 40,
    ],
)
def test_det_rejects_malformed(bad: bytes) -> None:
    with pytest.raises(CiphertextError):
        DET(KEY).decrypt(bad)


def test_det_truncated_long_ciphertext() -> None:
    ct = DET(KEY).encrypt(b"y" * 40)
    with pytest.raises(CiphertextError):
        DET(KEY).decrypt(ct[:-1])
