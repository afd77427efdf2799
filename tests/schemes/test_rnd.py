"""RND: known answers, an independent AES cross-check, properties, malformed input; and
the previous format (``LegacyCbcRnd``), kept for the migration."""

from __future__ import annotations

import random

import pytest
from Crypto.Cipher import AES
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from hypothesis import given
from hypothesis import strategies as st

from adaptive_client.errors import CiphertextError, ConfigError
from adaptive_client.schemes import RND
from adaptive_client.schemes import rnd as rnd_module
from adaptive_client.schemes.rnd import LegacyCbcRnd

KEY = bytes(range(32))
NONCE = bytes(range(16, 28))
IV = bytes(range(16, 32))

# (inner, ciphertext with nonce = 10 11 .. 1b under KEY = 00 01 .. 1f)
VECTORS = [
    (b"", "01101112131415161718191a1b"),
    (b"hello", "01101112131415161718191a1bf4768e1e8b"),
    (
        b"\x02" + bytes(range(16)),  # a short DET value: 17 bytes, two counter blocks
        "01101112131415161718191a1b9e13e370e7d35b9b91ea85e02d5f34f60e",
    ),
    (
        bytes(range(40)),
        "01101112131415161718191a1b9c12e071e0d2589a9eeb86e12a5e37f7119e4c8e72f3edfb1b9074ffad"
        "f5ce2f5ddfba356dec1c94",
    ),
]

# the previous format: (inner, ciphertext with IV = 10 11 .. 1f under KEY)
LEGACY_VECTORS = [
    (b"", "01101112131415161718191a1b1c1d1e1f5a6e045708fb7196f02e553d02c3a692"),
    (b"hello", "01101112131415161718191a1b1c1d1e1f0468f1a5269ea7245bb84c64d456e94d"),
    (
        bytes(range(40)),
        "01101112131415161718191a1b1c1d1e1f9f3b7504926f8bd36e3118e903a4cd4a"
        "25c183f70fdb4812cc2453fa00b3d3902efd7cac310fe8da17dfedd46f1cde9f",
    ),
]


@pytest.mark.parametrize(("inner", "expected"), VECTORS)
def test_known_answers(inner: bytes, expected: str) -> None:
    r = RND(KEY)
    assert r.encrypt(inner, nonce=NONCE).hex() == expected
    assert r.decrypt(bytes.fromhex(expected)) == inner
    assert r.decrypt_many([bytes.fromhex(expected)]) == [inner]


@pytest.mark.parametrize(("inner", "expected"), LEGACY_VECTORS)
def test_legacy_known_answers(inner: bytes, expected: str) -> None:
    legacy = LegacyCbcRnd(KEY)
    assert legacy.encrypt(inner, iv=IV).hex() == expected
    assert legacy.decrypt(bytes.fromhex(expected)) == inner


@pytest.mark.parametrize(("inner", "expected"), VECTORS)
def test_format_is_aes_ctr_with_a_32_bit_counter(inner: bytes, expected: str) -> None:
    """``0x01 || nonce || AES-256-CTR(key, nonce || 0^32, inner)``: each keystream block is
    AES of ``nonce || i`` (what the server's pgcrypto peel computes with AES-ECB), checked
    with an independent implementation (pycryptodome)."""
    ct = bytes.fromhex(expected)
    assert ct[0] == 0x01 and ct[1:13] == NONCE and len(ct) == 13 + len(inner)
    blocks = b"".join(NONCE + i.to_bytes(4, "big") for i in range(len(inner) // 16 + 1))
    keystream = AES.new(KEY, AES.MODE_ECB).encrypt(blocks)
    assert bytes(a ^ b for a, b in zip(ct[13:], keystream, strict=False)) == inner
    ctr = AES.new(KEY, AES.MODE_CTR, nonce=NONCE, initial_value=0)
    assert ctr.decrypt(ct[13:]) == inner


@given(st.binary(max_size=200))
def test_round_trip_and_randomized(data: bytes) -> None:
    r = RND(KEY)
    a, b = r.encrypt(data), r.encrypt(data)
    assert a != b  # a fresh nonce every time
    assert len(a) == 13 + len(data)  # no IV block, no padding
    assert r.decrypt(a) == r.decrypt(b) == data


@given(st.lists(st.binary(max_size=40), max_size=20))
def test_many(values: list[bytes]) -> None:
    r = RND(KEY)
    cts = r.encrypt_many(values)
    assert r.decrypt_many(cts) == values
    assert [r.decrypt(c) for c in cts] == values
    assert len({c[1:13] for c in cts}) == len(cts)  # distinct nonces
    assert r.decrypt_many([bytearray(c) for c in cts]) == values  # any buffer type


@pytest.mark.parametrize(
    "bad",
    [
        b"",
        b"\x01",
        b"\x01" + bytes(11),  # shorter than the nonce
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


def test_not_bytes() -> None:
    r = RND(KEY)
    ct = r.encrypt(b"value")
    with pytest.raises(CiphertextError):
        r.decrypt("not bytes")  # type: ignore[arg-type]
    with pytest.raises(CiphertextError):
        r.decrypt_many([ct, "not bytes"])  # type: ignore[list-item]


def test_wrong_key_never_returns_the_plaintext() -> None:
    ct = RND(KEY).encrypt(b"secret", nonce=NONCE)
    assert RND(bytes(32)).decrypt(ct) != b"secret"


@pytest.mark.parametrize(
    "bad", [b"", b"\x01" + bytes(16), b"\x01" + bytes(20), b"\x02" + bytes(32)]
)
def test_legacy_malformed(bad: bytes) -> None:
    with pytest.raises(CiphertextError):
        LegacyCbcRnd(KEY).decrypt(bad)
    ct = LegacyCbcRnd(KEY).encrypt(b"value", iv=IV)
    with pytest.raises(CiphertextError):  # last block garbled: the padding breaks
        LegacyCbcRnd(KEY).decrypt(ct[:-1] + bytes([ct[-1] ^ 0xFF]))


def test_parameters() -> None:
    assert (RND.name, RND.tag, RND.strength, RND.key_size) == ("RND", 1, 3, 32)
    assert RND.operators == frozenset()
    assert RND.overhead == 13
    with pytest.raises(ConfigError):
        RND(bytes(16))
    with pytest.raises(ConfigError):
        LegacyCbcRnd(bytes(16))
    with pytest.raises(ValueError):
        RND(KEY).encrypt(b"x", nonce=bytes(8))
    assert "00010203" not in repr(RND(KEY)) and "00010203" not in repr(LegacyCbcRnd(KEY))


@pytest.mark.skipif(rnd_module._NativeCtr is None, reason="native RND module not installed")
def test_native_and_openssl_backends_agree() -> None:
    rng = random.Random(5)
    for size in [0, 1, 15, 16, 17, 31, 32, 33, 100, 1000]:
        key, nonce = rng.randbytes(32), rng.randbytes(12)
        data = rng.randbytes(size)
        native, openssl = rnd_module._NativeCtr(key), rnd_module._OpenSslCtr(key)
        ct = native.apply(nonce, data)
        assert ct == openssl.apply(nonce, data)
        assert native.apply(nonce, ct) == data
        enc = Cipher(algorithms.AES(key), modes.CTR(nonce + bytes(4))).encryptor()
        assert ct == enc.update(data) + enc.finalize()
    with pytest.raises(ValueError):
        rnd_module._NativeCtr(KEY).apply(bytes(16), b"x")


@pytest.mark.skipif(rnd_module._NativeCtr is None, reason="native RND module not installed")
def test_native_batch_equals_encrypt_under_the_same_nonces() -> None:
    rng = random.Random(9)
    values = [rng.randbytes(n) for n in (0, 1, 15, 16, 17, 33, 100)]
    nonces = rng.randbytes(12 * len(values))
    native = rnd_module._NativeCtr(KEY)
    sealed = native.seal_many(1, nonces, [*values[:3], bytearray(values[3]), *values[4:]])
    r = RND(KEY)
    assert sealed == [
        r.encrypt(v, nonce=nonces[12 * i : 12 * i + 12]) for i, v in enumerate(values)
    ]
    assert native.open_many(1, [*sealed, b"\x01" + bytes(5), b"\x02" + bytes(20)]) == [
        *values,
        None,
        None,
    ]
    with pytest.raises(ValueError):
        native.seal_many(1, nonces[:-1], values)
    # a buffer the batch call does not take goes through the per-value loop, same result
    assert r.decrypt_many(r.encrypt_many([memoryview(v) for v in values])) == values


def test_seal_each_one_key_per_value(monkeypatch: pytest.MonkeyPatch) -> None:
    """seal_each (a row's RND layers, each under its own onion's key) is encrypt() of each
    value under its scheme with the nonces it drew, natively and through the fallback;
    every value gets a nonce of its own."""
    rng = random.Random(13)
    schemes = [RND(rng.randbytes(32)) for _ in range(5)]
    values = [rng.randbytes(n) for n in (0, 1, 16, 17, 40)]
    nonces = rng.randbytes(12 * len(values))
    monkeypatch.setattr(rnd_module.os, "urandom", lambda n: nonces[:n])
    want = [
        s.encrypt(v, nonce=nonces[12 * i : 12 * i + 12])
        for i, (s, v) in enumerate(zip(schemes, values, strict=True))
    ]
    assert rnd_module.seal_each(schemes, values) == want
    monkeypatch.setattr(rnd_module, "_native_seal_each", None)
    assert rnd_module.seal_each(schemes, values) == want
    monkeypatch.undo()
    sealed = rnd_module.seal_each(schemes, values)
    assert [s.decrypt(c) for s, c in zip(schemes, sealed, strict=True)] == values
    assert len({c[1:13] for c in sealed}) == len(sealed)
    assert rnd_module.seal_each([], []) == []


@pytest.mark.skipif(rnd_module._native_seal_each is None, reason="native RND module not installed")
def test_native_seal_each_checks_its_arguments() -> None:
    ctr = rnd_module._NativeCtr(KEY)
    with pytest.raises(ValueError):
        rnd_module._native_seal_each(1, bytes(12), [ctr, ctr], [b"a", b"b"])
    with pytest.raises(ValueError):
        rnd_module._native_seal_each(1, bytes(24), [ctr], [b"a", b"b"])
