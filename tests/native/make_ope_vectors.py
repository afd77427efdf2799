"""Record OPE test vectors from pyope itself, for ``test_ope_native.py``.

    python tests/native/make_ope_vectors.py [--per-shape 450] [--procs 2]

Writes ``data/ope_vectors.jsonl.gz``: one JSON object per line,
``{"key": hex, "in": [start, end], "out": [start, end], "p": plaintext, "c": ciphertext}``.
The output is deterministic: a fixed seed, results written in task order, and no
timestamp in the gzip header.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import time
from collections.abc import Iterator
from multiprocessing import Pool
from pathlib import Path

from pyope.ope import OPE, ValueRange

OUT = Path(__file__).parent / "data" / "ope_vectors.jsonl.gz"
SEED = 20240601
CHUNK = 40

# (in_start, in_end, out_start, out_end)
SMALL_SHAPES = [
    (0, 0, 0, 0),  # one value into one value
    (5, 5, -3, 1000),  # one value into many
    (0, 1, 0, 1),  # equal sizes
    (0, 9, 0, 19),  # samples of at most 10 balls: the HYP sampler
    (-10, 10, -20, 20),
    (0, 15, 0, 255),
    (0, 99, 0, 120),  # tight
    (0, 255, 0, 255),  # equal sizes
    (-128, 127, -(2**15), 2**15 - 1),
    (0, 1000, 0, 1500),
    (3, 1002, 10**6, 10**6 + 2**20),  # odd sizes and offsets
]
LARGE_SHAPES = [
    (0, 2**16 - 1, 0, 2**32 - 1),
    (0, 2**16 - 1, 0, 2**48 - 1),
    (0, 2**16 - 1, 0, 2**64 - 1),
    (-(2**15), 2**15 - 1, -(2**31), 2**31 - 1),
    (0, 2**16 - 1, 0, 2**16 + 999),  # nearly equal sizes
    (1000, 1000 + 2**20, -(2**40), 2**40 + 12345),
    (0, 2**24 - 1, 0, 2**40 - 1),
    (0, 2**32 - 1, 0, 2**48 - 1),
    (0, 2**32 - 1, 0, 2**64 - 1),
    (0, 2**32 - 1, 0, 2**80 - 1),
    (-(2**31), 2**31 - 1, 0, 2**64 - 1),
    (-(2**31), 2**31 - 1, -(2**63), 2**63 - 1),
    (-(2**31), 2**31 - 1, -(2**47), 2**47 - 1),
    (0, 2**48 - 1, 0, 2**80 - 1),
    (0, 2**64 - 1, 0, 2**80 - 1),
    (0, 2**64 - 1, 0, 2**96 - 1),
    (0, 2**64 - 1, 0, 2**112 - 1),
    (-(2**63), 2**63 - 1, -(2**79), 2**79 - 1),
    (-(2**63), 2**63 - 1, -(2**95), 2**95 - 1),
    (-(2**63), 2**63 - 1, 0, 2**127 - 1),  # the largest ciphertext range: 2**127 values
    (0, 2**64 - 1, -(2**126), 2**126 - 1),
    (0, 2**64 - 1, 2**127 - 2**96, 2**127 - 1),  # ends at the largest signed 128-bit value
    (-(2**127) + 2**64, -(2**127) + 2**65 - 1, -(2**127), -(2**127) + 2**100 - 1),  # smallest
]


def keys(rng: random.Random) -> list[bytes]:
    return [
        bytes(32),
        b"",
        b"key",
        rng.randbytes(16),
        rng.randbytes(32),
        rng.randbytes(32),
        rng.randbytes(32),
        rng.randbytes(64),  # exactly one SHA-256 block
        rng.randbytes(100),  # longer than a block: HMAC hashes it first
        rng.randbytes(7),
    ]


def plaintexts(rng: random.Random, a: int, b: int, n: int) -> list[int]:
    if b - a + 1 <= n:
        return list(range(a, b + 1))
    edge = [a, a + 1, a + 2, b - 2, b - 1, b, (a + b) // 2, (a + b) // 2 + 1]
    edge += [x for x in (-1, 0, 1) if a <= x <= b]
    pts = list(dict.fromkeys(edge))
    while len(pts) < n:
        pts.append(rng.randint(a, b))
    return pts


def tasks(per_shape: int) -> Iterator[tuple[str, int, int, int, int, list[int]]]:
    rng = random.Random(SEED)
    for key in keys(rng):
        for a, b, c, d in SMALL_SHAPES + LARGE_SHAPES:
            n = per_shape if (a, b, c, d) in LARGE_SHAPES else min(per_shape, 300)
            pts = plaintexts(rng, a, b, n)
            for i in range(0, len(pts), CHUNK):
                yield key.hex(), a, b, c, d, pts[i : i + CHUNK]


def run(task: tuple[str, int, int, int, int, list[int]]) -> list[str]:
    key, a, b, c, d, pts = task
    ope = OPE(bytes.fromhex(key), ValueRange(a, b), ValueRange(c, d))
    return [
        json.dumps({"key": key, "in": [a, b], "out": [c, d], "p": p, "c": ope.encrypt(p)})
        for p in pts
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-shape", type=int, default=450, help="vectors per (key, shape)")
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    todo = list(tasks(args.per_shape))
    total = sum(len(t[-1]) for t in todo)
    t0, done = time.monotonic(), 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    with (
        open(tmp, "wb") as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz,
        Pool(args.procs) as pool,
    ):
        for lines in pool.imap(run, todo, chunksize=1):
            gz.write(("\n".join(lines) + "\n").encode())
            done += len(lines)
            if done % 5000 < len(lines):
                el = time.monotonic() - t0
                print(f"{done}/{total} vectors, {el:.0f} s", file=sys.stderr, flush=True)
    tmp.replace(args.out)
    print(f"{total} vectors in {time.monotonic() - t0:.0f} s -> {args.out}")


if __name__ == "__main__":
    main()
