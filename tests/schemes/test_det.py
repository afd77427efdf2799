"""DET: known answers, independent cross-checks (HKDF, AES, AES-SIV), equality only."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESSIV
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from hypothesis import given
from hypothesis import strategies as st

from adaptive_client.errors import CiphertextError, ConfigError
from adaptive_client.schemes import DET

KEY = bytes(range(32))

# (plaintext, ciphertext under KEY = 00 01 .. 1f)
VECTORS = [
    (b"", "0206ce39cd9d8b33e92dcb4fc12350d180"),
    (b"\x00\x00\x00\x2a", "020ab815208258df71ef242b71845d3535"),
    (b"fifteen bytes!!", "02252f96aabaad42dbb9585d0bde8c72de"),
    (
        b"sixteen bytes!!!",
        "0231bee46426f15df7cece72222aca5887c6610127c2da169ac50dfbfe93fc981d",
    ),
    (
        b"a longer plaintext of 33 bytes!!!",
        "028f5634d4c3ef6618bd2a79a4c65131d4af671d15ef436a374ec4b26ceb695bc1"
        "ddb5818fe5031410b36ac214ef6bffc013",
    ),
]


def _subkey(size: int, label: bytes) -> bytes:
    return HKDF(SHA256(), size, salt=None, info=label).derive(KEY)


@pytest.mark.parametrize(("plain", "expected"), VECTORS)
def test_known_answers(plain: bytes, expected: str) -> None:
    d = DET(KEY)
    assert d.encrypt(plain).hex() == expected
    assert d.decrypt(bytes.fromhex(expected)) == plain


@given(st.binary(max_size=15))
def test_short_values_are_one_aes_block(plain: bytes) -> None:
    """Independent check: HKDF-SHA256 block key, ISO/IEC 7816-4 padding, one AES block."""
    enc = Cipher(algorithms.AES(_subkey(32, b"adaptive det block")), modes.ECB()).encryptor()
    block = plain + b"\x80" + bytes(15 - len(plain))
    assert DET(KEY).encrypt(plain) == b"\x02" + enc.update(block) + enc.finalize()


@given(st.binary(min_size=16, max_size=100))
def test_long_values_are_aes_siv(plain: bytes) -> None:
    """Independent check: RFC 5297 AES-SIV (no associated data), ``tag || ciphertext``."""
    expected = AESSIV(_subkey(64, b"adaptive det siv")).encrypt(plain, None)
    assert DET(KEY).encrypt(plain) == b"\x02" + expected


@given(st.binary(max_size=80), st.binary(max_size=80))
def test_equal_iff_equal(a: bytes, b: bytes) -> None:
    d = DET(KEY)
    ca, cb = d.encrypt(a), d.encrypt(b)
    assert (ca == cb) == (a == b)
    assert d.decrypt(ca) == a and d.decrypt(cb) == b
    assert len(ca) == (17 if len(a) <= 15 else 17 + len(a))


def test_no_shared_prefix_leak() -> None:
    d = DET(KEY)
    a = d.encrypt(b"a common prefix of many bytes, then A")
    b = d.encrypt(b"a common prefix of many bytes, then B")
    assert a[1:17] != b[1:17] and a[17:33] != b[17:33]
    c, e = d.encrypt(b"prefix-1"), d.encrypt(b"prefix-2")
    assert c[1:9] != e[1:9]


@given(st.lists(st.binary(max_size=40), max_size=30))
def test_many_matches_one_by_one(values: list[bytes]) -> None:
    d = DET(KEY)
    cts = d.encrypt_many(values)
    assert cts == [d.encrypt(v) for v in values]
    assert d.decrypt_many(cts) == values


@pytest.mark.parametrize(
    "bad",
    [
        b"",
        b"\x02",
        b"\x02" + bytes(15),  # short by one
        b"\x02" + bytes(16),  # one block that does not unpad (all zeros)
        b"\x02" + bytes(20),  # neither one block nor tag + block
        b"\x02" + bytes(31),
        b"\x02" + bytes(40),  # long form failing authentication
        b"\x01" + bytes(16),  # RND tag
        b"\x03" + bytes(16),  # OPE tag
    ],
)
def test_malformed(bad: bytes) -> None:
    with pytest.raises(CiphertextError):
        DET(KEY).decrypt(bad)
    with pytest.raises(CiphertextError):
        DET(KEY).decrypt_many([bad])


def test_truncated_and_garbled() -> None:
    d = DET(KEY)
    long_ct = d.encrypt(b"y" * 40)
    for bad in (long_ct[:-1], long_ct[:33], long_ct[:-1] + bytes([long_ct[-1] ^ 1])):
        with pytest.raises(CiphertextError):
            d.decrypt(bad)
    with pytest.raises(CiphertextError):
        DET(bytes(32)).decrypt(long_ct)  # wrong key: SIV authentication fails
    with pytest.raises(CiphertextError):
        d.decrypt(None)  # type: ignore[arg-type]


def test_parameters() -> None:
    assert (DET.name, DET.tag, DET.strength, DET.key_size) == ("DET", 2, 2, 32)
    assert DET.operators == {"=", "<>", "IN", "GROUP BY", "DISTINCT", "JOIN"}
    with pytest.raises(ConfigError):
        DET(bytes(31))


def test_rekey_many_equals_encryption_under_the_new_key() -> None:
    """A join adjustment re-keys DET ciphertexts: the result is exactly what the new key
    encrypts the same values to (short values block by block, long ones through SIV),
    and a wrong old key is refused."""
    old, new = DET(bytes(range(32))), DET(bytes(range(1, 33)))
    values = [b"", b"a", b"x" * 15, b"y" * 16, b"z" * 40, b"\x80", b"\x00\x00"]
    for batch in (values, values[:3], values[3:5]):
        assert old.rekey_many(old.encrypt_many(batch), new) == new.encrypt_many(batch)
    assert old.rekey_many([], new) == []
    with pytest.raises(CiphertextError):
        new.rekey_many(old.encrypt_many([b"short"] * 3), old)


def test_rekey_packed_equals_encryption_under_the_new_key() -> None:
    """The packed re-key of a join adjustment's positional path: short ciphertexts end
    to end come back as the new key's ciphertexts of the same values, in order; a run
    with a long value (or a torn one) is left to the caller (None); a wrong old key is
    refused."""
    old, new = DET(bytes(range(32))), DET(bytes(range(1, 33)))
    short = [b"", b"a", b"x" * 15, b"\x80", b"\x00\x00", b"a"]
    packed = b"".join(old.encrypt_many(short))
    assert new.encrypt_many(short) == [
        r[i : i + 17] for r in [old.rekey_packed(packed, new) or b""] for i in range(0, 102, 17)
    ]
    assert old.rekey_packed(packed + b"\x02", new) is None
    assert old.rekey_packed(b"".join(old.encrypt_many([b"y" * 16])), new) is None
    with pytest.raises(CiphertextError):
        new.rekey_packed(packed, old)
