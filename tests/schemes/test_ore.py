"""ORE: known answers, order from the stored forms alone, decryption, malformed input."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adaptive_client.errors import CiphertextError, ConfigError, EncodingError, ValueOutOfDomain
from adaptive_client.schemes import ORE, scheme_class
from adaptive_client.schemes.ore import compare, stored_width

KEY = bytes(range(32))
NONCE = bytes(range(0x40, 0x50))

try:
    ORE(KEY, 8, backend="native")
    BACKENDS = ["python", "native"]
except ConfigError:
    BACKENDS = ["python"]

# (in_bits, plaintext, the stored form's first 18 bytes (tag and first left block),
# sha256 of the whole stored form) under KEY = 00 01 .. 1f and NONCE = 40 41 .. 4f.  The
# first left block depends on the first byte only: 0 in every domain shares it.
VECTORS: list[tuple[int, int, str, str]] = [
    (
        8,
        0,
        "0425bb186e42c3c4ee701841f163bf1ad12e",
        "20d7f9681bee050f3ae1b8f2111a07ffea20217387aa9d4ef26c803ec25502a6",
    ),
    (
        8,
        1,
        "042ee2ae411083e55c9035dfd0f60f71cf21",
        "207565824a6a7af08c3ae6ec4753d1c8efd4dc53df36b25f39177532c6bc72ef",
    ),
    (
        8,
        200,
        "04465f4aac1c44d06b0e250efd0b25efc707",
        "5af885b354ae12629a058a865e83bda737f4aa51ba794afd7683c95473c31b7e",
    ),
    (
        8,
        255,
        "047a97635f5c21a8bffc97097ad7936e16d3",
        "2ddfb038d24fc89e67548f6f00444aa643d1be79448ada00fcc59fbfff3f29b2",
    ),
    (
        16,
        0,
        "0425bb186e42c3c4ee701841f163bf1ad12e",
        "444f0cd78d292c4dc26293e4a174b5b839ae4ab9af2ddfcca1752079bfd2a97d",
    ),
    (
        16,
        12345,
        "04dc64cfb1fe754da4740198ab515d98821f",
        "68f14bf887b6c5b792d6ca588139abc56047af8d1b903ba3b4aae784c358c2d5",
    ),
    (
        16,
        65535,
        "047a97635f5c21a8bffc97097ad7936e16d3",
        "96592f8a1ce35a16b5bb424ad1a6773f844a16b43e4067acac3a6b4e93010843",
    ),
    (
        32,
        0,
        "0425bb186e42c3c4ee701841f163bf1ad12e",
        "01eee6cf23f51fb0098c6e928ced0505a7808792f8e6519757a75e3266e0fdea",
    ),
    (
        32,
        2147483648,
        "04e8bd130214987d9e1686d9721d494aa027",
        "239673648e04e4ec420b15e407e1c22343acf6dafa0e534e2b9a31b143a470e5",
    ),
    (
        32,
        4294967295,
        "047a97635f5c21a8bffc97097ad7936e16d3",
        "b53734fac8ccf1e1a629a602eb7f4bead9e0cec39e5651e26f5526bc3646527c",
    ),
    (
        64,
        0,
        "0425bb186e42c3c4ee701841f163bf1ad12e",
        "855ae4b629a8c668e159e7777b89dc36be070212c8ced74e19d6fc9055d95058",
    ),
    (
        64,
        12345,
        "0425bb186e42c3c4ee701841f163bf1ad12e",
        "94343ef4610e5a611db0c0ca03f2db9ae4b6cc51e354fc87485693c5224fb9e0",
    ),
    (
        64,
        9223372036854775808,
        "04e8bd130214987d9e1686d9721d494aa027",
        "66e0e54d8eb9856fe81490f6a6907b83bb32438640a2896cfe34fcd92fc0897b",
    ),
    (
        64,
        18446744073709551615,
        "047a97635f5c21a8bffc97097ad7936e16d3",
        "d4802cad7892be2a93c08689499adb9989d09067a016f7349a4ec3b43a5f36f8",
    ),
    (
        95,
        19807040628566084398385987591,
        "049749b51666f741bd25fa3776af600abdfb",
        "7e1c8d74ddb4e3baaae2275caf826e6f57f01785b710684cd64342bb8f497bdf",
    ),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("in_bits", "plain", "head", "digest"), VECTORS)
def test_known_answers(backend: str, in_bits: int, plain: int, head: str, digest: str) -> None:
    o = ORE(KEY, in_bits, backend=backend)
    assert o.backend == backend
    ct = o.encrypt(plain, nonce=NONCE)
    assert len(ct) == stored_width(o.blocks) == 17 + 49 * ((in_bits + 7) // 8)
    assert ct[:18].hex() == head
    assert hashlib.sha256(ct).hexdigest() == digest
    assert o.decrypt(ct) == plain


def test_registered() -> None:
    assert scheme_class("ore") is ORE and ORE.tag == 0x04


def test_every_pair_of_a_byte_domain_compares() -> None:
    o = ORE(KEY, 8)
    cts = [o.encrypt(v) for v in range(256)]
    for a in range(256):
        for b in range(256):
            assert compare(cts[a], cts[b]) == (a > b) - (a < b)


@given(st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1), st.integers(0, 63))
def test_order_and_first_differing_byte(x: int, y: int, flip: int) -> None:
    o = ORE(KEY, 64)
    for a, b in ((x, y), (x, x ^ (1 << flip)), (x, x)):
        ca, cb = o.encrypt(a), o.encrypt(b)
        assert compare(ca, cb) == (a > b) - (a < b)
        assert compare(cb, ca) == (b > a) - (b < a)
        # the left parts share exactly the blocks before the first differing byte
        shared = next((i for i in range(8) if (a >> 8 * (7 - i)) != (b >> 8 * (7 - i))), 8)
        same = [ca[1 + 17 * i : 18 + 17 * i] == cb[1 + 17 * i : 18 + 17 * i] for i in range(8)]
        assert same == [i < shared for i in range(8)]


def test_nonces_are_fresh_and_left_parts_deterministic() -> None:
    o = ORE(KEY, 32)
    a, b = o.encrypt(7), o.encrypt(7)
    assert a != b and a[: 1 + 17 * 4] == b[: 1 + 17 * 4] and compare(a, b) == 0


def test_decrypt_checks_tag_width_and_key() -> None:
    o = ORE(KEY, 16)
    ct = o.encrypt(4242)
    with pytest.raises(CiphertextError):
        o.decrypt(b"\x03" + ct[1:])
    with pytest.raises(CiphertextError):
        o.decrypt(ct[:-1])
    with pytest.raises(CiphertextError):
        ORE(bytes(32), 16).decrypt(ct)
    with pytest.raises(CiphertextError):
        o.decrypt("not bytes")  # type: ignore[arg-type]
    with pytest.raises(CiphertextError):
        compare(ct, ORE(KEY, 32).encrypt(1))


def test_domain_and_key_checks() -> None:
    with pytest.raises(ConfigError):
        ORE(b"short", 8)
    with pytest.raises(ConfigError):
        ORE(KEY, 97)
    o = ORE(KEY, 12)
    with pytest.raises(ValueOutOfDomain):
        o.encrypt(1 << 12)
    with pytest.raises(EncodingError):
        o.encrypt(True)
    assert o.decrypt(o.encrypt((1 << 12) - 1)) == (1 << 12) - 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_encrypt_many_decrypts_and_orders(backend: str) -> None:
    o = ORE(KEY, 40, backend=backend)
    xs = [0, 1, 255, 256, 2**39, 2**40 - 1, 12345678, 12345679]
    cts = o.encrypt_many(xs)
    assert o.decrypt_many(cts) == xs
    assert len(set(cts)) == len(xs)  # fresh nonces
    for a, ca in zip(xs, cts, strict=True):
        for b, cb in zip(xs, cts, strict=True):
            assert compare(ca, cb) == (a > b) - (a < b)
