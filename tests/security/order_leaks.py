"""Leading-byte and linear leaks of stored ciphertexts: what a ``pg_dump`` shows of values.

The leak scan's needles are whole plaintexts (ten characters or more): an Ord onion at
OPE stores no whole value, yet its ciphertexts carry the values' leading bits -- a text
column's first three or four characters verbatim (the ciphertext is about the plaintext
times a constant), an integer column's values on a straight line.  Two checks find that,
from (plaintext, stored ciphertext) pairs alone:

* :func:`prefix_hits`: the pairs whose plaintext's first ``min_len`` (3) bytes appear
  anywhere inside the stored ciphertext; pseudo-random bytes hold a given 3-byte string
  with probability about ``len / 2**24`` (a 409-byte ORE value: 2.4e-5), so more than a
  few percent of pairs is a leak;
* :func:`rank_correlation`: Spearman's rank correlation between the plaintexts and the
  raw ciphertext bytes read as big-endian numbers (bytewise order); near 0 for
  pseudo-random bytes (about ``1 / sqrt(n)``), near 1 for OPE.  Alone it mistakes a few
  clusters for a line: values sharing their leading bytes (salaries between 65,536 and
  131,071 all have the same first three bytes) share an ORE ciphertext's leading blocks
  -- the equality of prefixes ORE reveals by design -- and two or three clusters in
  random order correlate by chance.  So a rank leak also needs :func:`neighbour_order`:
  the fraction of consecutive distinct plaintexts whose ciphertexts are in the same
  order, 1 for OPE, about 1/2 within clusters of pseudo-random bytes.

:func:`order_leaks` runs both and names what it found; an empty list is a pass.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: a prefix found in more than this fraction of the pairs is a leak
PREFIX_FRACTION = 0.05
#: a rank correlation (absolute) above this is a leak (random bytes: about 1/sqrt(n))
CORRELATION = 0.5
#: ... and neighbours in order further than this from one half (a line: 0.5)
NEIGHBOURS = 0.35
MIN_PAIRS = 30


@dataclass(frozen=True)
class Leak:
    check: str
    measure: float
    detail: str


def prefix_hits(pairs: Sequence[tuple[bytes, bytes]], min_len: int = 3) -> float:
    """The fraction of pairs (plaintext bytes, stored bytes) whose plaintext's first
    ``min_len`` bytes occur inside the stored bytes (plaintexts shorter: not counted)."""
    long = [(p, c) for p, c in pairs if len(p) >= min_len]
    if not long:
        return 0.0
    return sum(p[:min_len] in c for p, c in long) / len(long)


def _ranks(keys: Sequence[Any]) -> list[float]:
    """Ranks from 1, ties sharing their mean rank (as Spearman's coefficient wants)."""
    order = sorted(range(len(keys)), key=lambda i: keys[i])
    ranks = [0.0] * len(keys)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and keys[order[j + 1]] == keys[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def rank_correlation(plains: Sequence[Any], stored: Sequence[bytes]) -> float:
    """Spearman's rho between the plaintexts (their own order) and the stored bytes read
    as big-endian numbers (shorter values padded on the right: bytewise order)."""
    n = len(plains)
    if n < 2:
        return 0.0
    width = max(len(c) for c in stored)
    rx = _ranks(list(plains))
    ry = _ranks([bytes(c).ljust(width, b"\x00") for c in stored])
    mx, my = sum(rx) / n, sum(ry) / n
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    vx = sum((a - mx) ** 2 for a in rx)
    vy = sum((b - my) ** 2 for b in ry)
    return 0.0 if vx == 0 or vy == 0 else cov / (vx * vy) ** 0.5


def neighbour_order(plains: Sequence[Any], stored: Sequence[bytes]) -> float:
    """The fraction of consecutive distinct plaintexts (in their order) whose stored
    values are in the same bytewise order (ties count as out of order)."""
    first: dict[Any, bytes] = {}
    for p, c in zip(plains, stored, strict=True):
        first.setdefault(p, bytes(c))
    chain = [first[p] for p in sorted(first)]
    if len(chain) < 2:
        return 0.5
    return sum(a < b for a, b in itertools.pairwise(chain)) / (len(chain) - 1)


def order_leaks(
    plains: Sequence[Any], plain_bytes: Sequence[bytes] | None, stored: Sequence[bytes]
) -> list[Leak]:
    """The leading-byte and linear leaks of a column's stored ciphertexts: ``plains`` in
    their SQL order (numbers, or strings' order keys), ``plain_bytes`` the bytes whose
    prefixes to look for (text: UTF-8; None: no prefix check), ``stored`` the stored
    values of the same rows."""
    if len(stored) < MIN_PAIRS:
        raise ValueError(f"a leak check needs at least {MIN_PAIRS} values, got {len(stored)}")
    out: list[Leak] = []
    if plain_bytes is not None:
        share = prefix_hits(list(zip(plain_bytes, stored, strict=True)))
        if share > PREFIX_FRACTION:
            out.append(Leak("prefix", share, f"{share:.0%} hold their plaintext's first 3 bytes"))
    rho = rank_correlation(plains, stored)
    along = neighbour_order(plains, stored)
    if abs(rho) > CORRELATION and abs(along - 0.5) > NEIGHBOURS:
        detail = f"rank correlation {rho:.3f}, neighbours in order {along:.0%}"
        out.append(Leak("rank", rho, detail))
    return out
