"""ASHE (per-value pads under AES, sums mod 2**128): known answers, sums, bad input."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adaptive_client.errors import CiphertextError, EncodingError, KeyError_, ValueOutOfDomain
from adaptive_client.schemes import ASHE, scheme_class
from adaptive_client.schemes.ashe import BOUND

KEY = bytes(range(16))
# recorded with an independent AES (PyCryptodome): pad = AES_KEY(r ‖ 0⁸),
# c = (m + pad) mod 2**128, stored as [r, hi - 2**63, lo - 2**63]
R = 0x0123456789ABCDEF
PAD = 0xE2C812120E7A4400E70CC21693557D5E
STORED = [81985529216486895, 7117959079820674048, 7425523287720570953]  # m = -123456789


def _nonces(stored: list[list[int]]) -> bytes:
    return b"".join(s[0].to_bytes(8, "big", signed=True) for s in stored)


def _sum(a: ASHE, stored: list[list[int]]) -> int:
    """What the server's sum(hi), sum(lo), count and string_agg(int8send(r)) give."""
    return a.decrypt_sum(
        sum(s[1] for s in stored), sum(s[2] for s in stored), len(stored), _nonces(stored)
    )


def test_known_answer() -> None:
    a = ASHE(KEY)
    assert a.pad_sum(R.to_bytes(8, "big")) == PAD
    assert a.encrypt(-123456789, R) == STORED
    assert a.decrypt(STORED) == -123456789


def test_registered() -> None:
    assert scheme_class("ashe") is ASHE


def test_random_nonces_hide_equal_values() -> None:
    a = ASHE(os.urandom(16))
    x, y = a.encrypt(42), a.encrypt(42)
    assert x != y and x[0] != y[0]
    assert a.decrypt(x) == a.decrypt(y) == 42


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=-BOUND + 1, max_value=BOUND - 1), max_size=40))
def test_sums_are_exact(values: list[int]) -> None:
    a = ASHE(KEY)
    stored = a.encrypt_many(values)
    assert _sum(a, stored) == sum(values)


def test_large_batch_sum_uses_the_vector_path() -> None:
    a = ASHE(os.urandom(32))
    values = [(-1) ** i * (BOUND - 1 - i) for i in range(5000)]
    assert _sum(a, a.encrypt_many(values)) == sum(values)


def test_wrong_key_or_nonces_do_not_give_the_sum() -> None:
    a, b = ASHE(KEY), ASHE(bytes(16))
    stored = a.encrypt_many([1, 2, 3])
    assert _sum(b, stored) != 6
    with pytest.raises(CiphertextError):
        a.decrypt_sum(0, 0, 3, b"\x00" * 16)
    with pytest.raises(CiphertextError):
        a.pad_sum(b"\x00" * 7)
    with pytest.raises(CiphertextError):
        a.decrypt([1, 2])


def test_bad_plaintexts_and_keys() -> None:
    a = ASHE(KEY)
    with pytest.raises(ValueOutOfDomain):
        a.encrypt(BOUND)
    with pytest.raises(EncodingError):
        a.encrypt(1.5)  # type: ignore[arg-type]
    with pytest.raises(EncodingError):
        a.encrypt(True)
    with pytest.raises(KeyError_):
        ASHE(b"short")
    assert "key" not in repr(a).replace("<key hidden>", "")


def test_decrypt_many_equals_decrypt() -> None:
    a = ASHE(KEY)
    values = [0, 1, -1, BOUND - 1, -BOUND + 1, 123456789]
    stored = a.encrypt_many(values)
    assert a.decrypt_many(stored) == values == [a.decrypt(s) for s in stored]
    assert a.decrypt_many([STORED]) == [-123456789]
    with pytest.raises(CiphertextError):
        a.decrypt_many([[1, 2]])


def test_empty_sum() -> None:
    assert ASHE(KEY).decrypt_sum(0, 0, 0, b"") == 0


@settings(max_examples=50)
@given(st.lists(st.lists(st.integers(-BOUND + 1, BOUND - 1), min_size=1, max_size=20), max_size=8))
def test_decrypt_sums_equals_one_sum_per_group(groups: list[list[int]]) -> None:
    a = ASHE(KEY)
    parts = []
    for values in groups:
        stored = a.encrypt_many(values)
        parts.append(
            (sum(s[1] for s in stored), sum(s[2] for s in stored), len(stored), _nonces(stored))
        )
    assert a.decrypt_sums(parts) == [sum(v) for v in groups]
    assert a.decrypt_sums(parts) == [a.decrypt_sum(*p) for p in parts]


def test_decrypt_sums_refuses_a_group_without_its_nonces() -> None:
    a = ASHE(KEY)
    stored = a.encrypt_many([5, 6])
    good = (stored[0][1], stored[0][2], 1, _nonces(stored[:1]))
    with pytest.raises(CiphertextError):
        a.decrypt_sums([good, (0, 0, 2, _nonces(stored[:1]))])
    with pytest.raises(CiphertextError):
        a.decrypt_sums([(0, 0, 0, b"")])  # the caller leaves out the empty groups


_EDGES = [0, 1, -1, 2**63 - 1, -(2**63), 2**63, -(2**63) - 1, 2**64, -(2**64), BOUND - 1]


@given(
    st.lists(
        st.one_of(st.integers(min_value=-BOUND + 1, max_value=BOUND - 1), st.sampled_from(_EDGES)),
        max_size=60,
    )
)
def test_batched_decryption_equals_one_by_one(values: list[int]) -> None:
    # the batch subtracts in two 64-bit limbs, finishing values beyond 64 bits in Python
    a = ASHE(KEY)
    values = [v for v in values if abs(v) < BOUND]
    stored = a.encrypt_many(values)
    assert a.decrypt_many(stored) == values == [a.decrypt(s) for s in stored]
