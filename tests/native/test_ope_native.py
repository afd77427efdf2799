"""The native OPE (``adaptive_ope_native``) is bit-identical to pyope.

* every vector recorded from pyope by ``make_ope_vectors.py`` (keys of 0 to 100 bytes;
  domains of 1 value to 2**64 values, signed and unsigned; ranges up to 2**127 values,
  at both ends of the signed 128-bit integers; boundary and random plaintexts) encrypts
  to the recorded ciphertext and decrypts back, one call at a time and in batches;
* fresh random cases (random keys, ranges and plaintexts) agree with live pyope;
* values outside their ranges, invalid ranges and invalid ciphertexts raise ValueError.
"""

from __future__ import annotations

import gzip
import json
import os
import random
from collections import defaultdict
from pathlib import Path

import pytest

native = pytest.importorskip("adaptive_client.adaptive_ope_native")
pyope_ope = pytest.importorskip("pyope.ope")
OPE, ValueRange = pyope_ope.OPE, pyope_ope.ValueRange

VECTORS = Path(__file__).parent / "data" / "ope_vectors.jsonl.gz"

Shape = tuple[str, int, int, int, int]


def _load() -> dict[Shape, list[tuple[int, int]]]:
    groups: dict[Shape, list[tuple[int, int]]] = defaultdict(list)
    with gzip.open(VECTORS, "rt") as f:
        for line in f:
            v = json.loads(line)
            groups[(v["key"], *v["in"], *v["out"])].append((v["p"], v["c"]))
    return groups


@pytest.fixture(scope="module")
def recorded() -> dict[Shape, list[tuple[int, int]]]:
    return _load()


def test_recorded_vectors_cover_the_shapes(recorded: dict[Shape, list[tuple[int, int]]]) -> None:
    assert sum(len(v) for v in recorded.values()) >= 100_000
    keys = {k for k, *_ in recorded}
    assert len(keys) >= 8 and "" in keys
    assert any(a < 0 for _, a, _, _, _ in recorded)  # signed domains
    assert any(d - c + 1 == 2**127 for _, _, _, c, d in recorded)  # the largest range
    assert any(b - a + 1 == 2**64 for _, a, b, _, _ in recorded)


def test_recorded_vectors_in_batches(recorded: dict[Shape, list[tuple[int, int]]]) -> None:
    for (key_hex, a, b, c, d), vs in recorded.items():
        key = bytes.fromhex(key_hex)
        pts, cts = [p for p, _ in vs], [x for _, x in vs]
        got = native.encrypt_many(key, a, b, c, d, pts)
        bad = [(p, want, g) for p, want, g in zip(pts, cts, got, strict=True) if want != g]
        assert not bad, f"key {key_hex} in [{a}, {b}] out [{c}, {d}]: {bad[:3]}"
        assert native.decrypt_many(key, a, b, c, d, cts) == pts


def test_recorded_vectors_one_by_one(recorded: dict[Shape, list[tuple[int, int]]]) -> None:
    # single calls take another code path than the batches; every 5th vector
    for (key_hex, a, b, c, d), vs in recorded.items():
        key = bytes.fromhex(key_hex)
        for p, ct in vs[::5]:
            assert native.encrypt(key, a, b, c, d, p) == ct, (key_hex, a, b, c, d, p)
            assert native.decrypt(key, a, b, c, d, ct) == p, (key_hex, a, b, c, d, ct)


def _random_case(rng: random.Random) -> tuple[bytes, int, int, int, int, list[int]]:
    key = rng.randbytes(rng.choice([0, 1, 16, 32, 32, 32, 64, 65, 100]))
    in_bits = rng.choice([0, 1, 2, 3, 5, 8, 12, 16, 20, 24, 31, 32, 33, 40, 48, 63, 64])
    in_size = 2**in_bits + rng.choice([0, 0, 0, rng.randint(-(2**in_bits) + 1, 2**in_bits)])
    extra = rng.choice([0, 1, 4, 8, 16, 24, 32, 40, 48, 63 - in_bits if in_bits < 63 else 0])
    out_size = min(in_size * 2**extra + rng.randint(0, 2**extra), 2**127)
    in_start = rng.choice([0, -(in_size // 2), rng.randint(-(2**100), 2**100), 1 - 2**127])
    out_start = rng.choice([0, -(out_size // 2), rng.randint(-(2**126), 2**126 - out_size)])
    out_start = rng.choice([out_start, 2**127 - out_size, -(2**127)])
    in_end, out_end = in_start + in_size - 1, out_start + out_size - 1
    pts = [in_start, in_end] + [rng.randint(in_start, in_end) for _ in range(2)]
    return key, in_start, in_end, out_start, out_end, rng.sample(pts, 2)


@pytest.mark.parametrize(("bits", "n"), [(64, 31), (64, 33), (64, 200), (32, 65), (21, 500)])
def test_batches_split_over_cores_equal_single_calls(bits: int, n: int) -> None:
    """A batch holding enough work is split over the cores (from 32 values of a 64-bit
    domain on a machine with two); its parts must agree with one call per value, in the
    caller's order, duplicates and all."""
    rng = random.Random(bits * 1000 + n)
    key = rng.randbytes(32)
    a, b, c, d = 0, 2**bits - 1, 0, 2 ** (bits + 32) - 1
    pts = [rng.randint(a, b) for _ in range(n - 1)]
    pts.append(pts[0])  # a duplicate lands in whichever part sorts it
    want = [native.encrypt(key, a, b, c, d, p) for p in pts]
    assert native.encrypt_many(key, a, b, c, d, pts) == want
    assert native.decrypt_many(key, a, b, c, d, want) == pts


def test_live_against_pyope() -> None:
    seed = int.from_bytes(os.urandom(8), "big")
    rng = random.Random(seed)
    for case in range(100):  # 200 plaintexts in all
        key, a, b, c, d, pts = _random_case(rng)
        where = f"seed {seed}, case {case}: key {key.hex()} in [{a}, {b}] out [{c}, {d}]"
        py = OPE(key, ValueRange(a, b), ValueRange(c, d))
        want = [py.encrypt(p) for p in pts]
        assert [native.encrypt(key, a, b, c, d, p) for p in pts] == want, where
        assert native.encrypt_many(key, a, b, c, d, pts) == want, where
        assert [native.decrypt(key, a, b, c, d, ct) for ct in want] == pts, where
        assert py.decrypt(want[0]) == native.decrypt(key, a, b, c, d, want[0]), where


KEY = bytes(range(32))


@pytest.mark.parametrize(
    ("in_range", "out_range", "value"),
    [
        ((0, 15), (0, 255), 16),
        ((0, 15), (0, 255), -1),
        ((-(2**31), 2**31 - 1), (0, 2**64 - 1), 2**31),
        ((-(2**31), 2**31 - 1), (0, 2**64 - 1), -(2**31) - 1),
        ((0, 2**64 - 1), (0, 2**96 - 1), 2**64),
        ((0, 2**64 - 1), (0, 2**96 - 1), 2**200),  # beyond 128 bits
        ((0, 2**64 - 1), (0, 2**96 - 1), -(2**200)),
    ],
)
def test_plaintext_out_of_range(
    in_range: tuple[int, int], out_range: tuple[int, int], value: int
) -> None:
    with pytest.raises(ValueError):
        OPE(KEY, ValueRange(*in_range), ValueRange(*out_range)).encrypt(value)
    with pytest.raises(ValueError):
        native.encrypt(KEY, *in_range, *out_range, value)
    with pytest.raises(ValueError):
        native.encrypt_many(KEY, *in_range, *out_range, [in_range[0], value])


@pytest.mark.parametrize("value", [256, -1, 2**130, -(2**130)])
def test_ciphertext_out_of_range(value: int) -> None:
    with pytest.raises(ValueError):
        OPE(KEY, ValueRange(0, 15), ValueRange(0, 255)).decrypt(value)
    with pytest.raises(ValueError):
        native.decrypt(KEY, 0, 15, 0, 255, value)
    with pytest.raises(ValueError):
        native.decrypt_many(KEY, 0, 15, 0, 255, [0, value])


@pytest.mark.parametrize(
    "ranges",
    [
        (5, 4, 0, 255),  # in start > end
        (0, 15, 255, 0),  # out start > end
        (0, 300, 0, 255),  # input range larger than output range
        (0, 15, 0, 2**127),  # 2**127 + 1 values
        (0, 15, -(2**127), 2**127 - 1),  # 2**128 values
        (0, 15, 0, 2**128),  # a limit beyond 128 bits
        (-(2**130), 15, 0, 255),
    ],
)
def test_invalid_ranges(ranges: tuple[int, int, int, int]) -> None:
    with pytest.raises(ValueError):
        native.encrypt(KEY, *ranges, 3)
    with pytest.raises(ValueError):
        native.decrypt(KEY, *ranges, 3)
    with pytest.raises(ValueError):
        native.encrypt_many(KEY, *ranges, [3])


def test_invalid_ciphertexts_like_pyope() -> None:
    rng = random.Random(7)
    shapes = [(0, 15, 0, 2**20 - 1), (-(2**31), 2**31 - 1, 0, 2**64 - 1), (0, 1, 0, 1000)]
    for a, b, c, d in shapes:
        py = OPE(KEY, ValueRange(a, b), ValueRange(c, d))
        cts = native.encrypt_many(KEY, a, b, c, d, [rng.randint(a, b) for _ in range(10)])
        valid = set(cts)
        probes = {x for ct in cts for x in (ct - 1, ct + 1, ct + 12345) if c <= x <= d} - valid
        probes |= {c, d} - valid
        for x in sorted(probes):
            try:
                want: int | None = py.decrypt(x)
            except ValueError:  # pyope's InvalidCiphertextError or InvalidRangeLimitsError
                want = None
            if want is None:
                with pytest.raises(ValueError):
                    native.decrypt(KEY, a, b, c, d, x)
                with pytest.raises(ValueError):
                    native.decrypt_many(KEY, a, b, c, d, [*cts, x])
            else:
                assert native.decrypt(KEY, a, b, c, d, x) == want
        # decrypting a ciphertext under another key fails (or, rarely, gives another value)
        other = bytes(32)
        for ct in cts:
            try:
                got = native.decrypt(other, a, b, c, d, ct)
            except ValueError:
                continue
            assert got == OPE(other, ValueRange(a, b), ValueRange(c, d)).decrypt(ct)


def test_types() -> None:
    with pytest.raises(TypeError):
        native.encrypt("not bytes", 0, 15, 0, 255, 3)
    with pytest.raises(TypeError):
        native.encrypt(KEY, 0, 15, 0, 255, 3.0)
    with pytest.raises(ValueError):
        native.encrypt(KEY, 0, 15.0, 0, 255, 3)
    assert native.encrypt_many(KEY, 0, 15, 0, 255, []) == []
    assert (
        native.encrypt_many(KEY, 0, 15, 0, 255, (x for x in [3, 3]))
        == [native.encrypt(KEY, 0, 15, 0, 255, 3)] * 2
    )


# -- Cipher: keyed once, splits memoized -------------------------------------------------


def test_cipher_recorded_vectors(recorded: dict[Shape, list[tuple[int, int]]]) -> None:
    """A ``Cipher`` gives the functions' results, whatever its memo holds: each shape's
    vectors one by one (the memo filled by the values before), in reverse, in batches."""
    for (key_hex, a, b, c, d), vs in recorded.items():
        key = bytes.fromhex(key_hex)
        cipher = native.Cipher(key, a, b, c, d)
        for p, ct in vs[::3]:
            assert cipher.encrypt(p) == ct, (key_hex, a, b, c, d, p)
        for p, ct in reversed(vs[::3]):
            assert cipher.decrypt(ct) == p, (key_hex, a, b, c, d, ct)
        pts, cts = [p for p, _ in vs], [x for _, x in vs]
        assert cipher.encrypt_many(pts) == cts
        assert cipher.decrypt_many(cts) == pts
        assert cipher.cached_nodes <= native.CACHE_MAX_NODES


def test_cipher_memo_is_bounded_and_exact() -> None:
    """More distinct nodes than the memo holds: it starts over and stays exact."""
    rng = random.Random(11)
    a, b, c, d = 0, 2**32 - 1, 0, 2**64 - 1
    cipher = native.Cipher(KEY, a, b, c, d)
    pts = [rng.randint(a, b) for _ in range(1500)]  # about 26 memoized nodes each
    got = [cipher.encrypt(p) for p in pts]
    assert 0 < cipher.cached_nodes <= native.CACHE_MAX_NODES
    sample = pts[::50]
    assert [got[i] for i in range(0, len(pts), 50)] == [
        native.encrypt(KEY, a, b, c, d, p) for p in sample
    ]
    assert cipher.decrypt_many(got) == pts


def test_cipher_errors_as_the_functions() -> None:
    cipher = native.Cipher(KEY, 0, 15, 0, 2**20 - 1)
    with pytest.raises(ValueError):
        cipher.encrypt(16)
    with pytest.raises(TypeError):
        cipher.encrypt(3.0)
    with pytest.raises(ValueError):
        cipher.decrypt(2**20)
    cts = cipher.encrypt_many(range(16))
    invalid = next(x for x in range(cts[0] + 1, cts[1]) if x not in cts)
    with pytest.raises(ValueError):
        cipher.decrypt(invalid)
    with pytest.raises(ValueError):
        cipher.decrypt_many([*cts, invalid])
    assert cipher.decrypt_many(cts) == list(range(16))
    with pytest.raises(ValueError):
        native.Cipher(KEY, 5, 4, 0, 255)
    assert "key" not in repr(cipher).replace("<key hidden>", "")
