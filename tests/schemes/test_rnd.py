"""RND: known answers, an independent AES-CBC cross-check, properties, malformed input."""

from __future__ import annotations

import contextlib
import random

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from hypothesis import given
from hypothesis import strategies as st

from adaptive_client.errors import CiphertextError, ConfigError
from adaptive_client.schemes import RND
from adaptive_client.schemes import rnd as rnd_module

KEY = bytes(range(32))
IV = bytes(range(16, 32))

# (inner, ciphertext with IV = 10 11 .. 1f under KEY = 00 01 .. 1f)
VECTORS = [
    (b"", "01101112131415161718191a1b1c1d1e1f5a6e045708fb7196f02e553d02c3a692"),
    (b"hello", "01101112131415161718191a1b1c1d1e1f0468f1a5269ea7245bb84c64d456e94d"),
    (
        b"sixteen byte msg",
        "01101112131415161718191a1b1c1d1e1f465d535a920ddb68abd60dffeaacb288"
        "e54f1d09719813190c9327ebc33cc29a",
    ),
    (
        bytes(range(40)),
        "01101112131415161718191a1b1c1d1e1f9f3b7504926f8bd36e3118e903a4cd4a"
        "25c183f70fdb4812cc2453fa00b3d3902efd7cac310fe8da17dfedd46f1cde9f",
    ),
]


@pytest.mark.parametrize(("inner", "expected"), VECTORS)
def test_known_answers(inner: bytes, expected: str) -> None:
    r = RND(KEY)
    assert r.encrypt(inner, iv=IV).hex() == expected
    assert r.decrypt(bytes.fromhex(expected)) == inner


def test_format_is_what_pgcrypto_strips() -> None:
    """The format is ``0x01 || iv || AES-256-CBC(key, iv, PKCS#7(inner))``, so PostgreSQL
    strips the layer in place with pgcrypto::

        decrypt_iv(substring(ct from 18), key, substring(ct from 2 for 16), 'aes-cbc/pad:pkcs')

    Checked here against an independent AES implementation (the ``cryptography`` package).
    """
    inner = b"sixteen byte msg"
    ct = RND(KEY).encrypt(inner, iv=IV)
    assert ct[0] == 0x01 and ct[1:17] == IV and len(ct) == 1 + 16 + 32
    dec = Cipher(algorithms.AES(KEY), modes.CBC(ct[1:17])).decryptor()
    assert dec.update(ct[17:]) + dec.finalize() == inner + bytes([16]) * 16


@given(st.binary(max_size=200))
def test_round_trip_and_randomized(data: bytes) -> None:
    r = RND(KEY)
    a, b = r.encrypt(data), r.encrypt(data)
    assert a != b  # a fresh IV every time
    assert len(a) == 1 + 16 + 16 * (len(data) // 16 + 1)
    assert r.decrypt(a) == r.decrypt(b) == data


@given(st.lists(st.binary(max_size=40), max_size=20))
def test_many(values: list[bytes]) -> None:
    r = RND(KEY)
    cts = r.encrypt_many(values)
    assert r.decrypt_many(cts) == values
    assert len({c[1:17] for c in cts}) == len(cts)  # distinct IVs
    assert r.decrypt_many([bytearray(c) for c in cts]) == values  # any buffer type


@pytest.mark.skipif(rnd_module._NativeCbc is None, reason="native RND module not installed")
def test_native_batch_equals_encrypt_under_the_same_ivs() -> None:
    rng = random.Random(9)
    values = [rng.randbytes(n) for n in (0, 1, 15, 16, 17, 33, 100)]
    ivs = rng.randbytes(16 * len(values))
    sealed = rnd_module._NativeCbc(KEY).seal_many(
        1, ivs, [*values[:3], bytearray(values[3]), *values[4:]]
    )
    r = RND(KEY)
    assert sealed == [r.encrypt(v, iv=ivs[16 * i : 16 * i + 16]) for i, v in enumerate(values)]
    with pytest.raises(ValueError):
        rnd_module._NativeCbc(KEY).seal_many(1, ivs[:-1], values)
    # a buffer the batch call does not take goes through the per-value loop, same result
    assert r.decrypt_many(r.encrypt_many([memoryview(v) for v in values])) == values


@pytest.mark.parametrize(
    "bad",
    [
        b"",
        b"\x01",
        b"\x01" + bytes(16),  # IV but no block
        b"\x01" + bytes(20),  # not 1 + 16 + 16k
        b"\x01" + bytes(33),
        b"\x02" + bytes(32),  # DET tag
        b"\x03" + bytes(32),  # OPE tag
    ],
)
def test_malformed(bad: bytes) -> None:
    with pytest.raises(CiphertextError):
        RND(KEY).decrypt(bad)
    good = RND(KEY).encrypt(b"fine")
    with pytest.raises(CiphertextError):  # the batch refuses it as decrypt() does
        RND(KEY).decrypt_many([good, bad, good])


def test_truncated_and_garbled() -> None:
    r = RND(KEY)
    ct = r.encrypt(b"value", iv=IV)
    with pytest.raises(CiphertextError):
        r.decrypt(ct[:-1])
    with pytest.raises(CiphertextError):
        r.decrypt(ct[:17])
    garbled = ct[:-1] + bytes([ct[-1] ^ 0xFF])  # last block: padding breaks
    with pytest.raises(CiphertextError):
        r.decrypt(garbled)
    with pytest.raises(CiphertextError):
        r.decrypt_many([ct, garbled])
    with pytest.raises(CiphertextError):
        r.decrypt("not bytes")  # type: ignore[arg-type]
    with pytest.raises(CiphertextError):
        r.decrypt_many([ct, "not bytes"])  # type: ignore[list-item]


def test_wrong_key_never_returns_the_plaintext() -> None:
    ct = RND(KEY).encrypt(b"secret", iv=IV)
    with contextlib.suppress(CiphertextError):  # a padding error, or garbage
        assert RND(bytes(32)).decrypt(ct) != b"secret"


def test_parameters() -> None:
    assert (RND.name, RND.tag, RND.strength, RND.key_size) == ("RND", 1, 3, 32)
    assert RND.operators == frozenset()
    with pytest.raises(ConfigError):
        RND(bytes(16))
    with pytest.raises(ValueError):
        RND(KEY).encrypt(b"x", iv=bytes(8))
    assert "00010203" not in repr(RND(KEY))


@pytest.mark.skipif(rnd_module._NativeCbc is None, reason="native RND module not installed")
def test_native_and_openssl_backends_agree() -> None:
    rng = random.Random(5)
    for size in [0, 1, 15, 16, 17, 31, 32, 33, 100, 1000]:
        key, iv = rng.randbytes(32), rng.randbytes(16)
        data = rng.randbytes(size)
        native, openssl = rnd_module._NativeCbc(key), rnd_module._OpenSslCbc(key)
        ct = native.encrypt(iv, data)
        assert ct == openssl.encrypt(iv, data)
        assert native.decrypt(iv, ct) == openssl.decrypt(iv, ct) == data
        bad = ct[:-1] + bytes([ct[-1] ^ 0xFF])  # last block garbled: bad padding
        for backend in (native, openssl):
            with pytest.raises(ValueError):
                backend.decrypt(iv, bad)
