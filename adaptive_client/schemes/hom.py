"""HOM: Paillier (g = n + 1), additively homomorphic: E(a)·E(b) mod n² = E(a + b).

Leaks nothing (IND-CPA under the decisional composite residuosity assumption).
Plaintexts are integers mod n; negatives are represented mod n and decrypted into
(-n/2, n/2].  Arithmetic on gmpy2.
"""

from __future__ import annotations

import json
import math
from typing import ClassVar

import gmpy2
from Crypto.Random.random import randrange
from Crypto.Util.number import getPrime

from ..errors import CiphertextError
from .base import Scheme


class HOM(Scheme):
    name: ClassVar[str] = "HOM"
    tag: ClassVar[int] = 0
    operators: ClassVar[frozenset[str]] = frozenset({"SUM", "AVG", "+"})
    strength: ClassVar[int] = 2
    key_size: ClassVar[int] = 0

    def __init__(self, p: int, q: int) -> None:
        if p == q:
            raise ValueError("Paillier needs two distinct primes")
        self.p, self.q = gmpy2.mpz(p), gmpy2.mpz(q)
        self.n = int(self.p * self.q)
        self.n2 = self.n * self.n
        self._n = gmpy2.mpz(self.n)
        self._n2 = gmpy2.mpz(self.n2)
        lam = gmpy2.lcm(self.p - 1, self.q - 1)
        self._lam = lam
        # with g = n + 1: L(g^lam mod n^2) = lam mod n, so mu = lam^-1 mod n
        self._mu = gmpy2.invert(lam % self._n, self._n)

    def __repr__(self) -> str:
        return f"HOM(<private key hidden>, bits={self.n.bit_length()})"

    @classmethod
    def generate(cls, bits: int = 2048) -> HOM:
        while True:
            p, q = getPrime(bits // 2), getPrime(bits // 2)
            if p != q and math.gcd(p * q, (p - 1) * (q - 1)) == 1:
                return cls(p, q)

    def to_bytes(self) -> bytes:
        return json.dumps({"p": int(self.p), "q": int(self.q)}).encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> HOM:
        d = json.loads(bytes(data))
        return cls(int(d["p"]), int(d["q"]))

    def encrypt(self, m: int, r: int | None = None) -> int:
        if r is None:
            r = randrange(1, self.n)
        gm = (1 + (m % self.n) * self._n) % self._n2
        return int(gm * gmpy2.powmod(r, self._n, self._n2) % self._n2)

    def decrypt(self, c: int) -> int:
        c = int(c)
        if not 0 < c < self.n2 or math.gcd(c, self.n) != 1:
            raise CiphertextError("not a Paillier ciphertext for this key")
        u = gmpy2.powmod(c, self._lam, self._n2)
        m = int(((u - 1) // self._n) * self._mu % self._n)
        return m - self.n if m > self.n // 2 else m

    def add(self, c1: int, c2: int) -> int:
        return int(gmpy2.mpz(c1) * c2 % self._n2)

    def add_plain(self, c: int, k: int) -> int:
        return int(gmpy2.mpz(c) * (1 + (k % self.n) * self._n) % self._n2)
