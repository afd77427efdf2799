"""TPC-C random data (specification clauses 2.1.6 and 4.3.2)."""

from __future__ import annotations

import random
import string
from dataclasses import dataclass

SYLLABLES = ["BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"]
ALNUM = string.ascii_letters + string.digits


@dataclass(frozen=True)
class NURandConstants:
    c_last: int
    c_id: int
    ol_i_id: int


class TpccRandom:
    def __init__(self, seed: int | None = None, constants: NURandConstants | None = None) -> None:
        self.rng = random.Random(seed)
        self.c = constants or NURandConstants(
            self.rng.randint(0, 255), self.rng.randint(0, 1023), self.rng.randint(0, 8191)
        )

    def uniform(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def nurand(self, a: int, lo: int, hi: int) -> int:
        c = {255: self.c.c_last, 1023: self.c.c_id, 8191: self.c.ol_i_id}[a]
        return (((self.uniform(0, a) | self.uniform(lo, hi)) + c) % (hi - lo + 1)) + lo

    def astring(self, lo: int, hi: int) -> str:
        return "".join(self.rng.choices(ALNUM, k=self.uniform(lo, hi)))

    def nstring(self, lo: int, hi: int) -> str:
        return "".join(self.rng.choices(string.digits, k=self.uniform(lo, hi)))

    def zip(self) -> str:
        return self.nstring(4, 4) + "11111"

    def data(self, lo: int, hi: int) -> str:
        """i_data / s_data: 10% contain ORIGINAL."""
        s = self.astring(lo, hi)
        if self.uniform(1, 10) == 1:
            pos = self.uniform(0, len(s) - 8)
            s = s[:pos] + "ORIGINAL" + s[pos + 8 :]
        return s

    def decimal_cents(self, lo_cents: int, hi_cents: int) -> str:
        v = self.uniform(lo_cents, hi_cents)
        return f"{v // 100}.{v % 100:02d}" if v >= 0 else f"-{-v // 100}.{-v % 100:02d}"

    def last_name(self, num: int) -> str:
        return SYLLABLES[num // 100] + SYLLABLES[(num // 10) % 10] + SYLLABLES[num % 10]
