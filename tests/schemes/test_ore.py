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

# (in_bits, plaintext, the stored form's first 18 bytes (tag and first left block),
# sha256 of the whole stored form) under KEY = 00 01 .. 1f and NONCE = 40 41 .. 4f.  The
# first left block depends on the first byte only: 0 in every domain shares it.
VECTORS: list[tuple[int, int, str, str]] = [
    (
        8,
        0,
        "0454e8e7972009c7d7e760f9845ce7fd9f2b",
        "f38397f4621df0f7095d59b50b02247d0339173a46e4d09b6428bb1fe436be2b",
    ),
    (
        8,
        1,
        "04e73f7cb5d9c4cb6380ed57c2e7e636d896",
        "5e36447e54cbf2475bdba4d4365ae56ec40ba67ae45033b802570efd59f96eab",
    ),
    (
        8,
        200,
        "04419b10d878ff6e2e6bdf67585e5d9ae439",
        "f14f2fedd9765ecd15170e7364b90fd6bee7772788a7938dd996a622ff9495a1",
    ),
    (
        8,
        255,
        "0441ef2d0212d1f3c497ca96598fbb438657",
        "3ead1f9f979e62f58f8bfc6f2e48594034dcf456b4f47467f40dbdcb4598edeb",
    ),
    (
        16,
        0,
        "0454e8e7972009c7d7e760f9845ce7fd9f2b",
        "e104053a8fda1dd6e3efde6e972256d2f895b7b1b60dd4e5342c964972c8b43e",
    ),
    (
        16,
        12345,
        "04f1592d4ced1a511dc8066f25b879d82768",
        "4e6151cd7d8491ea514f9d82d77af170ce9e036a8988dac2396a50f532ed5d0e",
    ),
    (
        16,
        65535,
        "0441ef2d0212d1f3c497ca96598fbb438657",
        "693bc2c41f2fba58a5fc6a9335ee3801fb372c861c06a503ca20c531405585cd",
    ),
    (
        32,
        0,
        "0454e8e7972009c7d7e760f9845ce7fd9f2b",
        "3bebb4b2f588ff16c90262e16cae81007c326fbe8456d12742e5a75ebcc09039",
    ),
    (
        32,
        2147483648,
        "04fe281a341b7ffbda64fcee2faf28d16feb",
        "a95eb2278362d70a4c87998e0e33cade9be2506aa867968b9695ce37af845d86",
    ),
    (
        32,
        4294967295,
        "0441ef2d0212d1f3c497ca96598fbb438657",
        "fce2b28f54f6fc6393ae91f39bf79aa8603d8b6078cd88447e71df890e889806",
    ),
    (
        64,
        0,
        "0454e8e7972009c7d7e760f9845ce7fd9f2b",
        "2441e8f2b8cfd9d5b01786d995b181ddea9c11b4265b7a726ba3ec660be63906",
    ),
    (
        64,
        12345,
        "0454e8e7972009c7d7e760f9845ce7fd9f2b",
        "bc19f424ab3d88ab4cf4e31156f1ddf2f24aac7460f829b0ff8ff3e0ec484aa1",
    ),
    (
        64,
        9223372036854775808,
        "04fe281a341b7ffbda64fcee2faf28d16feb",
        "f6bc08366de3d2070dd827f92ad24f8162224f8693f9117bd4ff45b1cea5ed47",
    ),
    (
        64,
        18446744073709551615,
        "0441ef2d0212d1f3c497ca96598fbb438657",
        "c902e7dd7d69f2d1f2512ff367c27c61aa204c9722dfb4b9305edaac2a2b0058",
    ),
    (
        95,
        19807040628566084398385987591,
        "04de6b6a8f39c58fbb6ec8194f45a19d87e3",
        "a28da7ac0d5936ad4e415a25d1b209296f6d147b5a67878eb3202e77e2e615bf",
    ),
]


@pytest.mark.parametrize(("in_bits", "plain", "head", "digest"), VECTORS)
def test_known_answers(in_bits: int, plain: int, head: str, digest: str) -> None:
    o = ORE(KEY, in_bits)
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
