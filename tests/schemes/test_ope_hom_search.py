"""OPE (against pyope's recorded vectors), HOM (Paillier) and SEARCH."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adaptive_client.errors import CiphertextError, EncodingError, ValueOutOfDomain
from adaptive_client.schemes import HOM, OPE, SCHEMES, SEARCH, scheme_class

VECTORS = json.loads((Path(__file__).parent / "data" / "ope_vectors.json").read_text())
KEY = bytes(range(32))


def test_registry() -> None:
    assert set(SCHEMES) == {"RND", "DET", "OPE", "HOM", "SEARCH", "PLAIN"}
    assert scheme_class("ope") is OPE
    assert "<" in OPE.operators and "=" in SCHEMES["DET"].operators
    assert not SCHEMES["RND"].operators
    with pytest.raises(Exception, match="unknown"):
        scheme_class("ROT13")


@pytest.mark.parametrize(
    "vec", VECTORS, ids=lambda v: f"{v['in_bits']}-{v['out_bits']}-{v['plaintext']}"
)
def test_ope_matches_recorded_pyope_vectors(vec: dict[str, object]) -> None:
    o = OPE(bytes.fromhex(str(vec["key"])), int(vec["in_bits"]), int(vec["out_bits"]))  # type: ignore[call-overload]
    ct = o.encrypt(int(vec["plaintext"]))  # type: ignore[call-overload]
    assert ct[0] == 0x03 and len(ct) == 1 + math.ceil(int(vec["out_bits"]) / 8)  # type: ignore[call-overload]
    assert int.from_bytes(ct[1:], "big") == vec["ciphertext"]
    assert o.decrypt(ct) == vec["plaintext"]


@settings(max_examples=40)
@given(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1))
def test_ope_order_preserving_as_bytes(a: int, b: int) -> None:
    o = OPE(KEY, 32)
    ca, cb = o.encrypt(a), o.encrypt(b)
    assert (a < b) == (ca < cb) and (a == b) == (ca == cb)


def test_ope_domain_and_malformed() -> None:
    o = OPE(KEY, 16)
    with pytest.raises(ValueOutOfDomain):
        o.encrypt(2**16)
    with pytest.raises(ValueOutOfDomain):
        o.encrypt(-1)
    ct = o.encrypt(5)
    with pytest.raises(CiphertextError):
        o.decrypt(ct[:-1])
    with pytest.raises(CiphertextError):
        o.decrypt(b"\x02" + ct[1:])


# -- HOM ------------------------------------------------------------------------------------
P, Q = 1000000007, 998244353  # small known primes for a readable known-answer test


def test_hom_known_answer() -> None:
    h = HOM(P, Q)
    n = P * Q
    c = h.encrypt(42, r=12345)
    assert c == pow(1 + n, 42, n * n) * pow(12345, n, n * n) % (n * n)  # independent formula
    assert h.decrypt(c) == 42
    assert h.decrypt(h.encrypt(-7, r=999)) == -7


@pytest.fixture(scope="module")
def hom512() -> HOM:
    return HOM.generate(512)


@settings(max_examples=30)
@given(st.integers(-(2**100), 2**100), st.integers(-(2**100), 2**100))
def test_hom_adds(hom512: HOM, a: int, b: int) -> None:
    ca, cb = hom512.encrypt(a), hom512.encrypt(b)
    assert ca != hom512.encrypt(a)  # randomized
    assert hom512.decrypt(hom512.add(ca, cb)) == a + b
    assert hom512.decrypt(hom512.add_plain(ca, b)) == a + b


def test_hom_serialization_and_2048_default() -> None:
    h = HOM.generate()
    assert h.n.bit_length() >= 2047
    again = HOM.from_bytes(h.to_bytes())
    assert again.decrypt(h.encrypt(123456789)) == 123456789


def test_hom_rejects_malformed(hom512: HOM) -> None:
    for bad in (0, -1, hom512.n2, hom512.n2 + 5, hom512.n):
        with pytest.raises(CiphertextError):
            hom512.decrypt(bad)


# -- SEARCH ---------------------------------------------------------------------------------
def test_search_known_answer() -> None:
    assert SEARCH(KEY).token("alpha").hex() == "a689cedc1eea68d06617cbf684b04e62"


WORD = st.from_regex(r"[a-z]{1,8}", fullmatch=True)


@given(st.lists(WORD, max_size=8), WORD)
def test_search_matches_iff_word_present(words: list[str], w: str) -> None:
    s = SEARCH(KEY)
    assert (s.token(w) in s.tokens(" ".join(words))) == (w in words)


def test_search_rejects_non_words() -> None:
    with pytest.raises(EncodingError):
        SEARCH(KEY).token("two words")
    with pytest.raises(EncodingError):
        SEARCH(KEY).token("")
