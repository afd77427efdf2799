"""OPE speed: the native extension against pyope, side by side in one run.

    python bench/ope.py [--n 200] [--seed 0]

For each shape (a 32-bit plaintext domain into a 64-bit range, a 64-bit domain into a
96-bit range) both implementations encrypt the same ``--n`` random plaintexts, one call
each, and decrypt the resulting ciphertexts; their results must be equal.  The two are
timed alternately on small chunks of the values (the native calls repeated until the
chunk takes long enough to time), in CPU time of this process, so that other load on the
machine affects both alike.  The "batch" column is ``encrypt_many``/``decrypt_many`` over
all the values at once (not used for the speed-up).

The last line gives, per operation, the smallest speed-up over the shapes, and the
smaller of the two.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from functools import partial

from pyope.ope import OPE, ValueRange

from adaptive_client import adaptive_ope_native as native

SHAPES = ((32, 64), (64, 96))
CHUNK = 20
clock = time.process_time


def timed(fn: Callable[[int], int], items: list[int], min_seconds: float) -> float:
    """Seconds per call of ``fn`` over ``items``, repeated until ``min_seconds`` have passed."""
    rounds, t0 = 0, clock()
    while True:
        for x in items:
            fn(x)
        rounds += 1
        elapsed = clock() - t0
        if elapsed >= min_seconds:
            return elapsed / rounds


def side_by_side(
    py_fn: Callable[[int], int], nat_fn: Callable[[int], int], data: list[int], want: list[int]
) -> tuple[float, float]:
    """Seconds per operation of pyope and of the native calls, alternating chunk by chunk."""
    t_py = t_nat = 0.0
    for i in range(0, len(data), CHUNK):
        chunk = data[i : i + CHUNK]
        t0 = clock()
        got = [py_fn(x) for x in chunk]
        t_py += clock() - t0
        if got != want[i : i + CHUNK] or [nat_fn(x) for x in chunk] != got:
            raise SystemExit("native and pyope disagree")
        t_nat += timed(nat_fn, chunk, min_seconds=0.02)
    return t_py / len(data), t_nat / len(data)


def batch(fn: Callable[[list[int]], list[int]], items: list[int]) -> float:
    return timed(lambda _: len(fn(items)), [0], min_seconds=0.2) / len(items)


def main() -> None:
    ap = argparse.ArgumentParser(description="OPE: native vs pyope")
    ap.add_argument("--n", type=int, default=200, help="plaintexts per shape (pyope is slow)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    key = rng.randbytes(32)
    ratios: dict[str, list[float]] = {"encrypt": [], "decrypt": []}
    print(f"OPE, {args.n} random values per shape, CPU µs per operation")
    print(f"{'shape':>12} {'op':>8} {'pyope':>10} {'native':>9} {'batch':>8} {'speed-up':>9}")
    for in_bits, out_bits in SHAPES:
        ie, oe = 2**in_bits - 1, 2**out_bits - 1
        py = OPE(key, ValueRange(0, ie), ValueRange(0, oe))
        pts = [rng.randint(0, ie) for _ in range(args.n)]
        cts = native.encrypt_many(key, 0, ie, 0, oe, pts)
        for op, data, want, py_fn, fn, many in (
            ("encrypt", pts, cts, py.encrypt, native.encrypt, native.encrypt_many),
            ("decrypt", cts, pts, py.decrypt, native.decrypt, native.decrypt_many),
        ):
            t_py, t_nat = side_by_side(py_fn, partial(fn, key, 0, ie, 0, oe), data, want)
            t_batch = batch(partial(many, key, 0, ie, 0, oe), data)
            ratios[op].append(t_py / t_nat)
            print(
                f"{in_bits:>4} -> {out_bits:<4} {op:>8} {t_py * 1e6:10.1f} {t_nat * 1e6:9.2f} "
                f"{t_batch * 1e6:8.2f} {t_py / t_nat:8.0f}x"
            )
    enc, dec = min(ratios["encrypt"]), min(ratios["decrypt"])
    worst = min(enc, dec)
    print(f"ope native/pyope speedup: encrypt {enc:.0f}x, decrypt {dec:.0f}x, min {worst:.0f}x")


if __name__ == "__main__":
    main()
