"""OPE: recorded pyope answers, order as bytes, both backends, domains, malformed input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyope.ope import OPE as PyOPE
from pyope.ope import ValueRange

from adaptive_client.errors import CiphertextError, ConfigError, EncodingError, ValueOutOfDomain
from adaptive_client.schemes import OPE
from adaptive_client.schemes.ope import NATIVE_MAX_OUT_BITS

KEY = bytes(range(32))

try:
    OPE(KEY, 8, backend="native")
    BACKENDS = ["pyope", "native"]
except ConfigError:
    BACKENDS = ["pyope"]

# (in_bits, out_bits, plaintext, stored ciphertext) under KEY = 00 01 .. 1f, recorded from
# pyope 0.2.2 (out_bits None: the default in_bits + 32)
VECTORS: list[tuple[int, int | None, int, str]] = [
    (8, 16, 0, "030092"),
    (8, 16, 1, "03029d"),
    (8, 16, 57, "034903"),
    (8, 16, 128, "038994"),
    (8, 16, 255, "03ffa8"),
    (16, None, 0, "030000924819c8"),
    (16, None, 1, "0300033be95dc6"),
    (16, None, 12345, "033036eea7dbbd"),
    (16, None, 32768, "037fa1075b3017"),
    (16, None, 65535, "03ffffb0cc7384"),
    (32, None, 0, "0300000000924819c8"),
    (32, None, 12345, "030000302ebba9f6ef"),
    (32, None, 2**31, "037ffc5b0cc49893d7"),
    (32, None, 2**32 - 1, "03ffffffffa60d8033"),
    (41, None, 1, "030000000000033be95dc6"),
    (41, None, 2**40, "0301000074a14d7e9e4da0"),
    (41, None, 2**41 - 1, "0301ffffffffff183c3d29"),
    (64, None, 0, "030000000000000000924819c8"),
    (64, None, 12345, "03000000000000304bbba9f6ef"),
    (64, None, 2**63, "037fffffffcd973286f3d7528d"),
    (64, None, 2**64 - 1, "03ffffffffffffffffb0a2c990"),
]
RECORDED = json.loads((Path(__file__).parent / "data" / "ope_vectors.json").read_text())


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("in_bits", "out_bits", "plain", "expected"), VECTORS)
def test_known_answers(
    backend: str, in_bits: int, out_bits: int | None, plain: int, expected: str
) -> None:
    o = OPE(KEY, in_bits, out_bits, backend=backend)
    assert o.backend == backend
    assert o.encrypt(plain).hex() == expected
    assert o.decrypt(bytes.fromhex(expected)) == plain


@pytest.mark.parametrize("backend", BACKENDS)
def test_recorded_vectors_file(backend: str) -> None:
    for v in RECORDED:
        o = OPE(bytes.fromhex(v["key"]), v["in_bits"], v["out_bits"], backend=backend)
        ct = o.encrypt(v["plaintext"])
        assert len(ct) == 1 + (v["out_bits"] + 7) // 8
        assert int.from_bytes(ct[1:], "big") == v["ciphertext"]
        assert o.decrypt(ct) == v["plaintext"]


def test_is_pyope() -> None:
    """The stored integer is exactly pyope's ciphertext with the documented ranges."""
    py = PyOPE(KEY, ValueRange(0, 2**16 - 1), ValueRange(0, 2**48 - 1))
    o = OPE(KEY, 16)
    for x in (0, 7, 40000, 2**16 - 1):
        assert int.from_bytes(o.encrypt(x)[1:], "big") == py.encrypt(x)


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=25)
@given(a=st.integers(0, 2**32 - 1), b=st.integers(0, 2**32 - 1))
def test_order_preserved_as_bytes_32(backend: str, a: int, b: int) -> None:
    o = OPE(KEY, 32, backend=backend)
    ca, cb = o.encrypt(a), o.encrypt(b)
    assert (a < b) == (ca < cb) and (a == b) == (ca == cb)
    assert o.decrypt(ca) == a


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=10)
@given(xs=st.lists(st.integers(0, 2**64 - 1), min_size=2, max_size=6, unique=True))
def test_order_preserved_as_bytes_64(backend: str, xs: list[int]) -> None:
    xs += [0, 2**64 - 1, 2**63 - 1, 2**63] if not set(xs) & {0, 2**64 - 1} else []
    xs = sorted(set(xs))
    o = OPE(KEY, 64, backend=backend)
    cts = o.encrypt_many(xs)
    assert cts == sorted(cts) and len(set(cts)) == len(cts)
    assert o.decrypt_many(cts) == xs


def test_wide_domain_uses_pyope() -> None:
    """numeric(38, s) needs 128 plaintext bits: beyond the native module's 127-bit ranges."""
    o = OPE(KEY, 128)
    assert o.out_bits == 160 and o.backend == "pyope" and o.out_bits > NATIVE_MAX_OUT_BITS
    xs = [5, 2**128 - 1]  # pyope takes about half a second per operation at this width
    cts = o.encrypt_many(xs)
    assert cts == sorted(cts) and all(len(c) == 21 for c in cts)
    assert o.decrypt_many(cts) == xs
    with pytest.raises(ConfigError):
        OPE(KEY, 128, backend="native")


@pytest.mark.parametrize("backend", BACKENDS)
def test_domain(backend: str) -> None:
    o = OPE(KEY, 16, backend=backend)
    for bad in (-1, 2**16, 2**200):
        with pytest.raises(ValueOutOfDomain):
            o.encrypt(bad)
        with pytest.raises(ValueOutOfDomain):
            o.encrypt_many([1, bad])
    with pytest.raises(EncodingError):
        o.encrypt(True)
    with pytest.raises(EncodingError):
        o.encrypt(1.0)  # type: ignore[arg-type]


def _decrypts(o: OPE, c: int) -> bool:
    try:
        o.decrypt_int(c)
    except CiphertextError:
        return False
    return True


@pytest.mark.parametrize("backend", BACKENDS)
def test_malformed(backend: str) -> None:
    o = OPE(KEY, 8, 12, backend=backend)  # 256 images among the 4096 integers < 2**12
    ct = o.encrypt(100)
    non_image = next(x for x in range(2**12) if not _decrypts(o, x))
    bad = [
        b"",
        ct[:-1],  # truncated
        ct + b"\x00",  # too wide
        b"\x02" + ct[1:],  # DET tag
        b"\x01" + ct[1:],  # RND tag
        b"\x03\xff\xff",  # beyond 2**12
        b"\x03" + non_image.to_bytes(2, "big"),  # no plaintext encrypts to it
    ]
    for b in bad:
        with pytest.raises(CiphertextError):
            o.decrypt(b)
        with pytest.raises(CiphertextError):
            o.decrypt_many([ct, b])
    with pytest.raises(CiphertextError):
        o.decrypt("03ffff")  # type: ignore[arg-type]


def test_sparse_image_rejects_non_ciphertexts() -> None:
    """With 32 extra bits almost no integer is a ciphertext: garbled ones fail."""
    o = OPE(KEY, 16)
    ct = bytearray(o.encrypt(1234))
    ct[-1] ^= 0x5A
    with pytest.raises(CiphertextError):
        o.decrypt(bytes(ct))


def test_parameters() -> None:
    assert (OPE.name, OPE.tag, OPE.strength, OPE.key_size) == ("OPE", 3, 1, 32)
    assert {"<", "<=", ">", ">=", "BETWEEN", "ORDER BY", "MIN", "MAX", "="} <= OPE.operators
    assert OPE.backend in ("native", "pyope")
    o = OPE(KEY, 20)
    assert (o.in_bits, o.out_bits, o.width) == (20, 52, 7)
    for args in ((0,), (16, 8)):
        with pytest.raises(ConfigError):
            OPE(KEY, *args)
    with pytest.raises(ConfigError):
        OPE(bytes(16), 8)
    with pytest.raises(ConfigError):
        OPE(KEY, 8, backend="fast")
