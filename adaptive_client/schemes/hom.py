"""HOM: Paillier encryption with g = n + 1, additively homomorphic.

``E(a) · E(b) mod n² = E(a + b)``, so the server sums a column by multiplying its
ciphertexts (stored in ``numeric`` columns) modulo n².  Leaks nothing (IND-CPA under the
decisional composite residuosity assumption); ciphertexts are randomized.

Plaintexts are integers in ``(-n/2, n/2]``, represented mod n; ``decrypt`` maps back into
that interval, so sums of negative values come out negative.  Decryption uses the CRT
(exponentiations mod p² and q² instead of mod n²), and so does encryption, which has the
private key too.  Arithmetic on gmpy2.

The private key serializes (``to_bytes``) as JSON ``{"p": ..., "q": ...}``, to be
wrapped by the master key like every other layer key.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from typing import Any, ClassVar

import gmpy2
from Crypto.Random.random import randrange
from Crypto.Util.number import getPrime

from ..errors import CiphertextError, ConfigError, EncodingError, KeyError_, ValueOutOfDomain
from .base import Scheme


class HOM(Scheme):
    """Paillier (g = n + 1) on gmpy2: reveals nothing; sums under encryption."""

    name: ClassVar[str] = "HOM"
    tag: ClassVar[int] = 0
    operators: ClassVar[frozenset[str]] = frozenset({"SUM", "AVG", "+"})
    strength: ClassVar[int] = 2
    key_size: ClassVar[int] = 0  # keys are generated (HOM.generate), not random bytes

    def __init__(self, p: int, q: int) -> None:
        mp, mq = gmpy2.mpz(p), gmpy2.mpz(q)
        if mp == mq or mp < 3 or mq < 3 or not (gmpy2.is_prime(mp) and gmpy2.is_prime(mq)):
            raise KeyError_("a Paillier key needs two distinct odd primes")
        n = mp * mq
        if gmpy2.gcd(n, (mp - 1) * (mq - 1)) != 1:
            raise KeyError_("gcd(pq, (p-1)(q-1)) must be 1")
        self._p, self._q = mp, mq
        self._n, self._n2 = n, n * n
        self._half = n // 2
        self._p2, self._q2 = mp * mp, mq * mq
        # CRT decryption (Paillier 1999, §7): m_p = L_p(c^(p-1) mod p²) · h_p mod p, with
        # h_p = L_p(g^(p-1) mod p²)^-1 mod p and L_p(x) = (x - 1) / p.
        self._hp = gmpy2.invert(self._lp(gmpy2.powmod(n + 1, mp - 1, self._p2), mp), mp)
        self._hq = gmpy2.invert(self._lp(gmpy2.powmod(n + 1, mq - 1, self._q2), mq), mq)
        self._q_inv_p = gmpy2.invert(mq, mp)  # for m = m_q + q·((m_p - m_q)·q⁻¹ mod p)
        # CRT for r^n mod n²: exponents reduced mod φ(p²) = p(p-1), φ(q²) = q(q-1)
        self._en_p, self._en_q = n % (mp * (mp - 1)), n % (mq * (mq - 1))
        self._q2_inv_p2 = gmpy2.invert(self._q2, self._p2)
        self._pool: _NoncePool | None = None

    @staticmethod
    def _lp(x: Any, p: Any) -> Any:
        return (x - 1) // p

    def __repr__(self) -> str:
        return f"HOM(<private key hidden>, bits={self.n.bit_length()})"

    @property
    def n(self) -> int:
        """The public modulus."""
        return int(self._n)

    @property
    def n2(self) -> int:
        """n², the modulus of ciphertexts."""
        return int(self._n2)

    # -- keys -------------------------------------------------------------------------------
    @classmethod
    def generate(cls, bits: int = 2048) -> HOM:
        """A fresh key with an n of exactly ``bits`` bits (p, q of ``bits/2`` bits each)."""
        if bits < 64 or bits % 2:
            raise ConfigError("Paillier modulus size must be an even number of bits ≥ 64")
        while True:
            p, q = getPrime(bits // 2), getPrime(bits // 2)
            if p != q and (p * q).bit_length() == bits:
                try:
                    return cls(p, q)
                except KeyError_:  # pragma: no cover - gcd condition, practically never
                    continue

    def to_bytes(self) -> bytes:
        """The private key, for wrapping: JSON ``{"p": ..., "q": ...}``."""
        return json.dumps({"p": int(self._p), "q": int(self._q)}).encode()

    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview) -> HOM:
        try:
            d = json.loads(bytes(data))
            p, q = d["p"], d["q"]
        except (ValueError, TypeError, KeyError):
            raise KeyError_("malformed Paillier private key") from None
        if not (isinstance(p, int) and isinstance(q, int)):
            raise KeyError_("malformed Paillier private key")
        return cls(p, q)

    # -- encryption -------------------------------------------------------------------------
    def _plain(self, m: int) -> Any:
        if isinstance(m, bool) or not isinstance(m, int):
            raise EncodingError(f"Paillier plaintexts are integers, not {type(m).__name__}")
        if not -self._half < m <= self._half:
            raise ValueOutOfDomain("Paillier plaintext outside (-n/2, n/2]")
        return gmpy2.mpz(m) % self._n

    def _r_to_n(self, r: Any) -> Any:
        """r^n mod n² through the CRT (same result as ``powmod(r, n, n²)``)."""
        xp = gmpy2.powmod(r, self._en_p, self._p2)
        xq = gmpy2.powmod(r, self._en_q, self._q2)
        return xq + self._q2 * ((xp - xq) * self._q2_inv_p2 % self._p2)

    def encrypt(self, m: int, r: int | None = None) -> int:
        """``(1 + m·n) · r^n mod n²``; ``r`` is random unless given (tests)."""
        mm = self._plain(m)
        if r is None:
            if self._pool is None:
                self._pool = _NoncePool(self._fresh_r_to_n)
            return int((1 + mm * self._n) * self._pool.take() % self._n2)
        else:
            rr = gmpy2.mpz(r)
            if not 0 < rr < self._n or gmpy2.gcd(rr, self._n) != 1:
                raise ValueError("Paillier r must be in [1, n) and coprime to n")
        return int((1 + mm * self._n) * self._r_to_n(rr) % self._n2)

    def _fresh_r_to_n(self) -> Any:
        while True:
            rr = gmpy2.mpz(randrange(1, self.n))
            if gmpy2.gcd(rr, self._n) == 1:
                return self._r_to_n(rr)

    def _ciphertext(self, c: int) -> Any:
        if isinstance(c, bool) or not isinstance(c, int | type(gmpy2.mpz(0))):
            raise CiphertextError(f"a Paillier ciphertext is an integer, not {type(c).__name__}")
        cc = gmpy2.mpz(c)
        if not 0 < cc < self._n2 or gmpy2.gcd(cc, self._n) != 1:
            raise CiphertextError("not a Paillier ciphertext for this key")
        return cc

    def decrypt(self, c: int) -> int:
        """The plaintext in ``(-n/2, n/2]``."""
        cc = self._ciphertext(c)
        p, q = self._p, self._q
        mp = self._lp(gmpy2.powmod(cc, p - 1, self._p2), p) * self._hp % p
        mq = self._lp(gmpy2.powmod(cc, q - 1, self._q2), q) * self._hq % q
        m = mq + q * ((mp - mq) * self._q_inv_p % p)
        return int(m - self._n if m > self._half else m)

    def add(self, c1: int, c2: int) -> int:
        """E(a), E(b) → E(a + b)."""
        return int(self._ciphertext(c1) * self._ciphertext(c2) % self._n2)

    def add_plain(self, c: int, k: int) -> int:
        """E(a), k → E(a + k) (not re-randomized)."""
        return int(self._ciphertext(c) * (1 + self._plain(k) * self._n) % self._n2)


class _NoncePool:
    """Precomputed r^n mod n², the expensive half of a Paillier encryption.

    A daemon thread refills the pool whenever it falls below half of ``size``; an
    encryption takes a value from it (never reused) or, if it is empty, computes its own.
    The refill runs mostly while the client waits on the network -- the GIL is free then
    -- so under WAN latency an encryption costs one multiplication.
    """

    def __init__(self, fresh: Any, size: int = 64) -> None:
        self._fresh, self._size = fresh, size
        self._values: deque[Any] = deque()
        self._wanted = threading.Event()
        self._wanted.set()
        threading.Thread(target=self._fill, name="paillier-nonces", daemon=True).start()

    def take(self) -> Any:
        try:
            value = self._values.popleft()
        except IndexError:
            value = self._fresh()
        if len(self._values) < self._size // 2:
            self._wanted.set()
        return value

    def _fill(self) -> None:
        # gmpy2 keeps the GIL through a powmod unless told otherwise (per thread): held, it
        # would stall the application's thread for a whole r^n (several ms) every time
        # that thread came back from the network
        gmpy2.get_context().allow_release_gil = True
        while True:
            self._wanted.wait()
            while len(self._values) < self._size:
                self._values.append(self._fresh())
            self._wanted.clear()
            if len(self._values) < self._size // 2:  # drained while we were clearing
                self._wanted.set()
