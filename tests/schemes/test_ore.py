"""ORE: known answers, order from the stored forms alone, decryption, malformed input."""

from __future__ import annotations

import functools
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

# (in_bits, plaintext, the stored form's first 26 bytes (tag, key id, first left block),
# sha256 of the whole stored form) under KEY = 00 01 .. 1f and NONCE = 40 41 .. 4f.  The
# first left block depends on the first byte only: 0 in every domain shares it.
VECTORS: list[tuple[int, int, str, str]] = [
    (
        8,
        0,
        "0417c8326ed452268a25bb186e42c3c4ee701841f163bf1ad12e",
        "ee8498b93ba7eaded3ca64db05c8520bde0212860312c0912e1c7bc5db5851b9",
    ),
    (
        8,
        1,
        "0417c8326ed452268a2ee2ae411083e55c9035dfd0f60f71cf21",
        "b8c697ce2168d183bb77729c58616e68c388cc4a645aab30fd03faf8deeb2d40",
    ),
    (
        8,
        200,
        "0417c8326ed452268a465f4aac1c44d06b0e250efd0b25efc707",
        "06ed9350af951fb74ba82aa89081eaf42e9d00b745cfdfa5ed3fca049043ce54",
    ),
    (
        8,
        255,
        "0417c8326ed452268a7a97635f5c21a8bffc97097ad7936e16d3",
        "f0a80fdc7d66c1df894c7b1ab19f12466b40ca8fdd901766ef035ad92396db77",
    ),
    (
        16,
        0,
        "0417c8326ed452268a25bb186e42c3c4ee701841f163bf1ad12e",
        "e601967a0256823a1fd262ddfaa7ae6e10471e0e7f973310e245b6e68b1f5ab2",
    ),
    (
        16,
        12345,
        "0417c8326ed452268adc64cfb1fe754da4740198ab515d98821f",
        "7b9d2b86eecbe749b10b58c9a3a0e9110421387c79549627dbddce1f50f93c6f",
    ),
    (
        16,
        65535,
        "0417c8326ed452268a7a97635f5c21a8bffc97097ad7936e16d3",
        "489123cddb8914a54e100a0e32c5fd15c606c1cacfea61d75d5a2e6a9bf03a92",
    ),
    (
        32,
        0,
        "0417c8326ed452268a25bb186e42c3c4ee701841f163bf1ad12e",
        "a7e99d49c95b366feff63ba8f354f721b819dc78426ca32b867a4bcfc6af006d",
    ),
    (
        32,
        2147483648,
        "0417c8326ed452268ae8bd130214987d9e1686d9721d494aa027",
        "0219a8d68e26471c6cbbda107241613c731ae1859dc098e5206d76b5f180c2e1",
    ),
    (
        32,
        4294967295,
        "0417c8326ed452268a7a97635f5c21a8bffc97097ad7936e16d3",
        "479a3f8ef7704bfd4b1fa8048a7b2216df92684feaba19edd19e6d41c7f8d0ee",
    ),
    (
        64,
        0,
        "0417c8326ed452268a25bb186e42c3c4ee701841f163bf1ad12e",
        "545c5c2926e998c1dd299adf0477adeeb1694f00e5ab8f0673415d544dbcd940",
    ),
    (
        64,
        12345,
        "0417c8326ed452268a25bb186e42c3c4ee701841f163bf1ad12e",
        "1e458afa5a4e594990e93491d34f7f47b04f509698c3c687430fd6c22d12f5b8",
    ),
    (
        64,
        9223372036854775808,
        "0417c8326ed452268ae8bd130214987d9e1686d9721d494aa027",
        "0989cc1e5f2d886ea8cd56ea4a3b1c1add0a9d3134f14ec4a37d5bdfa2083487",
    ),
    (
        64,
        18446744073709551615,
        "0417c8326ed452268a7a97635f5c21a8bffc97097ad7936e16d3",
        "735855377c49b24718d17bb906d087ea21e9ad028f0727e4837865ea6e31a472",
    ),
    (
        95,
        19807040628566084398385987591,
        "0417c8326ed452268a9749b51666f741bd25fa3776af600abdfb",
        "4954673d7a4a13771e54eda7a2a6a840d902c2d467cf892f49973938ccc1fb39",
    ),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("in_bits", "plain", "head", "digest"), VECTORS)
def test_known_answers(backend: str, in_bits: int, plain: int, head: str, digest: str) -> None:
    o = ORE(KEY, in_bits, backend=backend)
    assert o.backend == backend
    ct = o.encrypt(plain, nonce=NONCE)
    assert len(ct) == stored_width(o.blocks) == 25 + 49 * ((in_bits + 7) // 8)
    assert ct[:26].hex() == head
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
        same = [ca[9 + 17 * i : 26 + 17 * i] == cb[9 + 17 * i : 26 + 17 * i] for i in range(8)]
        assert same == [i < shared for i in range(8)]


def test_nonces_are_fresh_and_left_parts_deterministic() -> None:
    o = ORE(KEY, 32)
    a, b = o.encrypt(7), o.encrypt(7)
    assert a != b and a[: 9 + 17 * 4] == b[: 9 + 17 * 4] and compare(a, b) == 0


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


def test_values_under_two_keys_are_ordered_by_key_id() -> None:
    """Two keys' values have no order between them, yet a B-tree may hold both (a join
    adjustment re-keys a column in place): the comparison stays a total order -- by key
    id first -- and antisymmetric."""
    one, two = ORE(KEY, 16), ORE(bytes(32), 16)
    assert one.key_id != two.key_id
    values = [o.encrypt(x) for o in (one, two) for x in (1, 500, 40000)]
    for a in values:
        for b in values:
            assert compare(a, b) == -compare(b, a)
            if a[1:9] != b[1:9]:
                assert compare(a, b) == (-1 if a[1:9] < b[1:9] else 1)
    ordered = sorted(values, key=functools.cmp_to_key(compare))
    assert [v[1:9] for v in ordered] == sorted(v[1:9] for v in values)
