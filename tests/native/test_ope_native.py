"""The native OPE is bit-identical to pyope: recorded vectors and live random cases."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from pyope.ope import OPE, ValueRange

native = pytest.importorskip("adaptive_ope_native")

VECTORS = json.loads(
    (Path(__file__).parent.parent / "schemes" / "data" / "ope_vectors.json").read_text()
)


def test_recorded_vectors() -> None:
    for v in VECTORS:
        key, ie, oe = bytes.fromhex(v["key"]), 2 ** v["in_bits"] - 1, 2 ** v["out_bits"] - 1
        assert native.encrypt(key, 0, ie, 0, oe, v["plaintext"]) == v["ciphertext"]
        assert native.decrypt(key, 0, ie, 0, oe, v["ciphertext"]) == v["plaintext"]


@pytest.mark.parametrize("seed", range(8))
def test_live_against_pyope(seed: int) -> None:
    rng = random.Random(seed)
    key = rng.randbytes(32)
    in_bits = rng.choice([4, 16, 32, 64])
    signed = rng.random() < 0.5
    lo = -(2 ** (in_bits - 1)) if signed else 0
    hi = lo + 2**in_bits - 1
    out_lo = rng.choice([0, -(2**20)])
    out_hi = out_lo + 2 ** (in_bits + rng.choice([0, 8, 16, 32])) - 1
    py = OPE(key, ValueRange(lo, hi), ValueRange(out_lo, out_hi))
    pts = [lo, hi] + [rng.randint(lo, hi) for _ in range(10)]
    cts = native.encrypt_many(key, lo, hi, out_lo, out_hi, pts)
    assert cts == [py.encrypt(p) for p in pts]
    assert native.decrypt_many(key, lo, hi, out_lo, out_hi, cts) == pts


def test_errors() -> None:
    key = bytes(32)
    with pytest.raises(ValueError):
        native.encrypt(key, 0, 15, 0, 255, 16)
    with pytest.raises(ValueError):
        native.encrypt(key, 0, 300, 0, 255, 1)  # input range larger than output range
    with pytest.raises(ValueError):
        native.decrypt(key, 0, 15, 0, 255, 256)
    ct = native.encrypt(key, 0, 15, 0, 2**20 - 1, 7)
    with pytest.raises(ValueError):
        native.decrypt(key, 0, 15, 0, 2**20 - 1, ct + 1 if ct % 2 else ct - 1)
