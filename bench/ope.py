"""OPE speed: native extension vs pyope, side by side in one run.

    python bench/ope.py [--n 2000]

The last line is the smaller of the encryption and decryption speed-ups.
"""

from __future__ import annotations

import argparse
import random
import time
from functools import partial

import adaptive_ope_native as native
from pyope.ope import OPE, ValueRange


def per_op(fn, items: list[int]) -> float:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    for x in items:
        fn(x)
    return (time.perf_counter() - t0) / len(items)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000, help="native operations per measurement")
    args = ap.parse_args()
    rng = random.Random(0)
    key = rng.randbytes(32)
    ratios = []
    print(f"{'domain':>14} {'op':>8} {'pyope µs':>10} {'native µs':>10} {'speed-up':>9}")
    for in_bits, out_bits in ((32, 64), (64, 96)):
        ie, oe = 2**in_bits - 1, 2**out_bits - 1
        py = OPE(key, ValueRange(0, ie), ValueRange(0, oe))
        pts = [rng.randint(0, ie) for _ in range(args.n)]
        few = pts[: max(20, args.n // 50)]
        cts = [native.encrypt(key, 0, ie, 0, oe, p) for p in pts]
        for op, py_fn, nat_fn, data in (
            ("encrypt", py.encrypt, partial(native.encrypt, key, 0, ie, 0, oe), pts),
            ("decrypt", py.decrypt, partial(native.decrypt, key, 0, ie, 0, oe), cts),
        ):
            t_py = per_op(py_fn, data[: len(few)])
            t_nat = per_op(nat_fn, data)
            ratios.append((op, t_py / t_nat))
            print(
                f"{in_bits}→{out_bits} bits {op:>8} {t_py * 1e6:10.1f} {t_nat * 1e6:10.1f} "
                f"{t_py / t_nat:8.0f}x"
            )
    enc = min(r for op, r in ratios if op == "encrypt")
    dec = min(r for op, r in ratios if op == "decrypt")
    print(
        f"ope native/pyope speedup: encrypt {enc:.0f}x, decrypt {dec:.0f}x, min {min(enc, dec):.0f}x"
    )


if __name__ == "__main__":
    main()
