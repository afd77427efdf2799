"""Inference attacks on an Ord onion's stored ciphertexts, at OPE and at ORE.

    python bench/inference.py [--rows 20000] [--seed 0]

What a provider holding the stored column (and public knowledge of the data's
distribution) recovers of each row's value, for three columns:

* ``c_last`` -- dense: TPC-C's 1,000 syllable names, every one present (customers 1..1000
  take each once, the rest NURand(255) as in TPC-C's load), text under C (the Ord onion
  encrypts the first 8 bytes);
* ``o_entry_d`` -- dense: order dates over one year, every day present;
* ``c_balance`` -- sparse: customer balances in cents, spread over five orders of
  magnitude (log-normal), few values repeating.

and three attacks (Naveed, Kamara and Wright, CCS 2015, and the issue's bytes attack):

* **sorting**: the distinct ciphertexts in the server's order, mapped rank for rank onto
  the sorted domain (the names, the days; for the sparse column the auxiliary sample's
  distinct values) -- needs only the order, which OPE and ORE both reveal;
* **cumulative (CDF)**: each ciphertext's share of rows at or below it, matched to the
  value of an auxiliary sample (another draw from the same distribution) with the
  nearest share -- order and frequencies only;
* **bytes**: each stored value alone, read as a number: for text the top bytes as the
  prefix's characters (OPE's ciphertext is about the plaintext times ``2**32``), snapped
  to the nearest known name; for numbers and dates a line through the stored numbers'
  and the auxiliary sample's 10th and 90th percentiles; for ORE the same reading of its
  pseudo-random bytes.

Printed: per column, attack and layer, the fraction of rows recovered exactly and within
1 % (numbers: of the value; dates and names: of the domain's span).  The attacks run on
the ciphertexts the schemes make (``schemes.OPE``, ``schemes.ORE``), compared as the
server compares them (bytes for OPE, ``ore.compare`` -- adaptive.ore_cmp -- for ORE).
"""

from __future__ import annotations

import argparse
import bisect
import datetime as dt
import functools
import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from adaptive_client.schemes import OPE, ORE
from adaptive_client.schemes.ore import compare
from adaptive_client.values.encodings import encoding_for
from tpcc.rand import SYLLABLES

NAMES = [SYLLABLES[n // 100] + SYLLABLES[(n // 10) % 10] + SYLLABLES[n % 10] for n in range(1000)]
DAY0 = dt.date(2024, 1, 1)


@dataclass
class Column:
    name: str
    sql_type: str
    rows: list[Any]  # the true values, one per row
    aux: list[Any]  # the attacker's auxiliary sample of the distribution
    domain: list[Any] | None  # every possible value, sorted (dense columns)
    position: Callable[[Any], float]  # a number whose 1 % closeness is "within 1 %"
    relative: bool  # within 1 % of the value (True) or of the domain's span


def _nurand(rng: random.Random, a: int, lo: int, hi: int) -> int:
    return (((rng.randint(0, a) | rng.randint(lo, hi)) + 123) % (hi - lo + 1)) + lo


def columns(rows: int, rng: random.Random) -> list[Column]:
    def names(n: int) -> list[str]:
        return [NAMES[i] if i < 1000 else NAMES[_nurand(rng, 255, 0, 999)] for i in range(n)]

    rank = {v: i for i, v in enumerate(sorted(NAMES, key=lambda s: s.encode()))}

    def days(n: int) -> list[dt.date]:
        first = [DAY0 + dt.timedelta(days=d) for d in range(365)]
        return first + [DAY0 + dt.timedelta(days=rng.randrange(365)) for _ in range(n - 365)]

    def balances(n: int) -> list[int]:
        return [max(1, int(math.exp(rng.gauss(9.0, 2.0)))) for _ in range(n)]

    return [
        Column("c_last (dense text)", "text", names(rows), names(rows),
               sorted(NAMES, key=lambda s: s.encode()), lambda v: rank[v], False),
        Column("o_entry_d (dense date)", "date", days(rows), days(rows),
               [DAY0 + dt.timedelta(days=d) for d in range(365)], lambda v: v.toordinal(), False),
        Column("c_balance (sparse)", "integer", balances(rows), balances(rows), None,
               float, True),
    ]  # fmt: skip


def _order_key(layer: str) -> Callable[[bytes], Any]:
    return (lambda c: c) if layer == "OPE" else functools.cmp_to_key(compare)


def sorting_attack(col: Column, stored: list[bytes], layer: str) -> dict[bytes, Any]:
    distinct = sorted(set(stored), key=_order_key(layer))
    if col.domain is not None:  # values tied in the onion (a text's 8-byte prefix): one
        enc = encoding_for(col.sql_type)
        target = list({enc.to_ope(v): v for v in reversed(col.domain)}.values())[::-1]
    else:
        target = sorted(set(col.aux))
    k, m = len(distinct), len(target)
    return {c: target[round(i * (m - 1) / max(1, k - 1))] for i, c in enumerate(distinct)}


def cdf_attack(col: Column, stored: list[bytes], layer: str) -> dict[bytes, Any]:
    counts = Counter(stored)
    distinct = sorted(counts, key=_order_key(layer))
    aux = sorted(col.aux, key=col.position)
    guess, seen = {}, 0
    for c in distinct:
        seen += counts[c]
        share = seen / len(stored)
        guess[c] = aux[min(len(aux) - 1, max(0, math.ceil(share * len(aux)) - 1))]
    return guess


def bytes_attack(col: Column, stored: list[bytes], layer: str) -> dict[bytes, Any]:
    """Each value alone, its bytes after the tag read as a number: text -- the top bytes
    as the prefix's characters (OPE's ciphertext is about the plaintext times 2**32),
    snapped to the nearest known name; numbers and dates -- a line through two points,
    the stored numbers' and the auxiliary sample's 10th and 90th percentiles ("two known
    values calibrate the rest")."""
    enc = encoding_for(col.sql_type)
    bits = enc.ope_bits
    width = (bits + 32 + 7) // 8
    numbers = {c: int.from_bytes(c[1 : 1 + width], "big") for c in set(stored)}
    out: dict[bytes, Any] = {}
    if col.domain is not None and col.sql_type == "text":
        keys = [enc.to_ope(v) for v in col.domain]  # (sorted: the domain is in SQL order)
        for c, number in numbers.items():
            estimate = number >> (8 * width - bits)
            i = bisect.bisect_left(keys, estimate)
            near = [j for j in (i - 1, i) if 0 <= j < len(keys)]
            out[c] = col.domain[min(near, key=lambda j: abs(keys[j] - estimate))]
        return out
    # two calibration points: the 10th and 90th percentiles of the stored numbers (per
    # row) and of the auxiliary sample
    per_row = sorted(numbers[c] for c in stored)
    aux = sorted(col.position(v) for v in col.aux)
    lo_n, hi_n = per_row[len(per_row) // 10], per_row[9 * len(per_row) // 10]
    lo_p, hi_p = aux[len(aux) // 10], aux[9 * len(aux) // 10]
    for c, number in numbers.items():
        p = lo_p + (number - lo_n) * (hi_p - lo_p) / max(1, hi_n - lo_n)
        out[c] = dt.date.fromordinal(round(p)) if col.sql_type == "date" else round(p)
    return out


ATTACKS: dict[str, Callable[[Column, list[bytes], str], dict[bytes, Any]]] = {
    "sorting": sorting_attack,
    "cumulative": cdf_attack,
    "bytes": bytes_attack,
}


def score(col: Column, stored: Sequence[bytes], guess: dict[bytes, Any]) -> tuple[float, float]:
    exact = near = 0
    if col.relative:
        span = 0.0
    else:
        assert col.domain is not None
        span = col.position(col.domain[-1]) - col.position(col.domain[0])
    for value, c in zip(col.rows, stored, strict=True):
        g = guess[c]
        exact += g == value
        tolerance = 0.01 * (abs(col.position(value)) if col.relative else span)
        near += abs(col.position(g) - col.position(value)) <= tolerance
    return exact / len(col.rows), near / len(col.rows)


def main() -> None:
    ap = argparse.ArgumentParser(description="inference attacks at OPE and ORE")
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    key = rng.randbytes(32)
    print(f"{args.rows} rows per column; fraction of rows recovered: exact / within 1 %")
    print(f"{'column':<24} {'attack':<11} {'OPE':>15} {'ORE':>15}")
    for col in columns(args.rows, rng):
        enc = encoding_for(col.sql_type)
        schemes = {"OPE": OPE(key, enc.ope_bits), "ORE": ORE(key, enc.ope_bits)}
        stored: dict[str, list[bytes]] = {}
        for layer, scheme in schemes.items():
            # one ciphertext per Ord plaintext, as the client memoizes them (ORE: equal
            # plaintexts' left parts are equal anyway)
            by_plain = {x: scheme.encrypt(x) for x in {enc.to_ope(v) for v in col.rows}}
            stored[layer] = [by_plain[enc.to_ope(v)] for v in col.rows]
        for attack, run in ATTACKS.items():
            cells = []
            for layer in ("OPE", "ORE"):
                exact, near = score(col, stored[layer], run(col, stored[layer], layer))
                cells.append(f"{exact:6.1%} / {near:6.1%}")
            print(f"{col.name:<24} {attack:<11} {cells[0]:>15} {cells[1]:>15}")


if __name__ == "__main__":
    main()
