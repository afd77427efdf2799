"""ASHE: additively homomorphic symmetric encryption with per-value pads.

A value ``m`` is stored as ``(r, c)`` with a fresh random 64-bit nonce ``r`` and
``c = m + F_k(r) mod 2**128``, where ``F_k(r) = AES_k(r ‖ 0⁸)`` read as a 128-bit integer
(AES as a pseudorandom function of one block).  The server sums the ``c`` of any rows
and returns the rows' nonces beside the sum; the client subtracts ``Σ F_k(r)``, one AES
call over all the nonces (Seabed's ASHE, Papadimitriou et al., OSDI 2016, with random
nonces instead of row identifiers).  Without the key each ``c`` is uniformly distributed
(a one-time pad mod 2**128 under a PRF): the provider learns nothing of the values,
only, as with any sum, which rows a statement sums.  Two values sharing a nonce would
reveal their difference: with 64-bit random nonces, about n²/2⁶⁵ for n values.

Plaintexts are integers with ``|m| < 2**96``: a sum of up to 2**31 of them is exact
(the client maps the result back into ``(-2**127, 2**127]``).

Stored form: an ``int8[]`` ``{r, hi, lo}``, ``c = (hi + 2**63)·2**64 + (lo + 2**63)``
(each half offset into the signed range, so that the server's exact ``sum()`` of each
half gives ``Σc`` from the count alone).  PostgreSQL sums ``int8`` in 128-bit
integers, far faster than Paillier's products modulo n².
"""

from __future__ import annotations

import os
from typing import ClassVar

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from ..errors import CiphertextError, EncodingError, KeyError_, ValueOutOfDomain
from .base import Scheme

MODULUS = 1 << 128
BOUND = 1 << 96  # |plaintext| < BOUND: sums of up to 2**31 values are exact
_OFFSET = 1 << 63
_HALF = 1 << 64


class ASHE(Scheme):
    """Per-value pads under AES: reveals nothing; the server sums, the client unpads."""

    name: ClassVar[str] = "ASHE"
    tag: ClassVar[int] = 0
    operators: ClassVar[frozenset[str]] = frozenset({"SUM", "AVG"})
    strength: ClassVar[int] = 2
    key_size: ClassVar[int] = 16

    def __init__(self, key: bytes) -> None:
        if len(key) not in (16, 24, 32):
            raise KeyError_("an ASHE key is 16, 24 or 32 bytes")
        self._key = bytes(key)

    def __repr__(self) -> str:
        return "ASHE(<key hidden>)"

    def pad_sum(self, nonces: bytes) -> int:
        """``Σ F_k(r) mod 2**128`` over nonces packed as 8-byte big-endian integers (as
        PostgreSQL's ``int8send`` writes them)."""
        if len(nonces) % 8:
            raise CiphertextError("ASHE nonces come in 8-byte units")
        n = len(nonces) // 8
        if n == 0:
            return 0
        if n <= 16:  # a few values: no array machinery
            blocks = b"".join(nonces[i : i + 8] + bytes(8) for i in range(0, len(nonces), 8))
            out = self._prf(blocks)
            total = sum(int.from_bytes(out[i : i + 16], "big") for i in range(0, len(out), 16))
            return total % MODULUS
        import numpy as np

        grid = np.zeros((n, 16), dtype=np.uint8)
        grid[:, :8] = np.frombuffer(nonces, dtype=np.uint8).reshape(n, 8)
        out = self._prf(grid.tobytes())
        # four 32-bit limbs per pad, each column summed exactly in 64 bits (n < 2**32)
        limbs = np.frombuffer(out, dtype=">u4").reshape(n, 4).astype(np.uint64).sum(axis=0)
        total = sum(int(limbs[k]) << (32 * (3 - k)) for k in range(4))
        return total % MODULUS

    def _prf(self, blocks: bytes) -> bytes:
        # ECB over distinct one-block inputs: AES applied as a PRF to each nonce block
        enc = Cipher(algorithms.AES(self._key), modes.ECB()).encryptor()
        return enc.update(blocks) + enc.finalize()

    def _pads(self, nonces: bytes) -> bytes:
        """The 16-byte pad of each 8-byte nonce in ``nonces``, in one AES call (each
        nonce's block: the nonce, then eight zero bytes)."""
        import numpy as np

        n = len(nonces) // 8
        grid = np.zeros((n, 16), dtype=np.uint8)
        grid[:, :8] = np.frombuffer(nonces, dtype=np.uint8).reshape(n, 8)
        return self._prf(grid.tobytes())

    # -- values -------------------------------------------------------------------------
    @staticmethod
    def _plain(m: int) -> int:
        if isinstance(m, bool) or not isinstance(m, int):
            raise EncodingError(f"ASHE plaintexts are integers, not {type(m).__name__}")
        if not -BOUND < m < BOUND:
            raise ValueOutOfDomain("ASHE plaintext outside (-2**96, 2**96)")
        return m

    def encrypt(self, m: int, nonce: int | None = None) -> list[int]:
        """``[r, hi, lo]``; ``nonce`` (a signed 64-bit integer) is random unless given."""
        return self.encrypt_many([m], None if nonce is None else [nonce])[0]

    def encrypt_many(self, values: list[int], nonces: list[int] | None = None) -> list[list[int]]:
        """:meth:`encrypt` of many values, the pads in one AES call."""
        ms = [self._plain(m) for m in values]
        if nonces is None:
            raw = os.urandom(8 * len(ms))
        else:
            if len(nonces) != len(ms):
                raise ValueError("one nonce per value")
            raw = b"".join(int(r).to_bytes(8, "big", signed=True) for r in nonces)
        out = self._prf(b"".join(raw[i : i + 8] + bytes(8) for i in range(0, len(raw), 8)))
        stored = []
        for j, m in enumerate(ms):
            c = (m + int.from_bytes(out[16 * j : 16 * j + 16], "big")) % MODULUS
            r = int.from_bytes(raw[8 * j : 8 * j + 8], "big", signed=True)
            stored.append([r, (c >> 64) - _OFFSET, (c & (_HALF - 1)) - _OFFSET])
        return stored

    def decrypt(self, stored: list[int]) -> int:
        """The plaintext of one stored ``[r, hi, lo]``."""
        if not (isinstance(stored, list | tuple) and len(stored) == 3):
            raise CiphertextError("an ASHE value is [nonce, hi, lo]")
        r, hi, lo = (int(x) for x in stored)
        return self.decrypt_sum(hi, lo, 1, r.to_bytes(8, "big", signed=True))

    def decrypt_many(self, stored: list[list[int]]) -> list[int]:
        """:meth:`decrypt` of many values, their pads in one AES call and the 128-bit
        subtractions in numpy (as two 64-bit limbs with a borrow); a value beyond
        64 bits is finished in Python."""
        import numpy as np

        for s in stored:
            if not (isinstance(s, list | tuple) and len(s) == 3):
                raise CiphertextError("an ASHE value is [nonce, hi, lo]")
        if not stored:
            return []
        try:
            rows = np.array(stored, dtype=np.int64)
        except OverflowError as exc:
            raise CiphertextError("an ASHE value's parts are 64-bit integers") from exc
        pads = np.frombuffer(self._pads(rows[:, 0].astype(">i8").tobytes()), dtype=">u8")
        pads = pads.reshape(len(rows), 2)
        top = np.uint64(_OFFSET)
        c_hi = rows[:, 1].view(np.uint64) ^ top  # hi + 2**63 mod 2**64
        c_lo = rows[:, 2].view(np.uint64) ^ top
        p_hi, p_lo = pads[:, 0].astype(np.uint64), pads[:, 1].astype(np.uint64)
        m_lo = c_lo - p_lo  # (wraps, as the 128-bit difference's low limb does)
        m_hi = c_hi - p_hi - (c_lo < p_lo).astype(np.uint64)
        small = ((m_hi == 0) & (m_lo < top)) | ((m_hi == np.uint64(_HALF - 1)) & (m_lo >= top))
        out: list[int] = m_lo.view(np.int64).tolist()  # (a value within 64 bits, signed)
        for j in np.flatnonzero(~small).tolist():
            m = (int(m_hi[j]) << 64) + int(m_lo[j])
            out[j] = m - MODULUS if m > MODULUS // 2 else m
        return out

    def decrypt_sum(self, hi_sum: int, lo_sum: int, count: int, nonces: bytes) -> int:
        """The plaintext sum of ``count`` values from the server's ``sum(hi)``,
        ``sum(lo)`` and the values' nonces."""
        if len(nonces) != 8 * count:
            raise CiphertextError("an ASHE sum needs one nonce per value summed")
        c = ((int(hi_sum) + count * _OFFSET) << 64) + int(lo_sum) + count * _OFFSET
        m = (c - self.pad_sum(nonces)) % MODULUS
        return m - MODULUS if m > MODULUS // 2 else m

    def decrypt_sums(self, sums: list[tuple[int, int, int, bytes]]) -> list[int]:
        """:meth:`decrypt_sum` of many ``(hi_sum, lo_sum, count, nonces)``, e.g. one per
        group of a GROUP BY: every pad in one AES call, summed per group with numpy."""
        import numpy as np

        for _hi, _lo, count, nonces in sums:
            if count < 1 or len(nonces) != 8 * count:
                raise CiphertextError("an ASHE sum needs one nonce per value summed")
        if not sums:
            return []
        raw = b"".join(s[3] for s in sums)
        limbs = np.frombuffer(self._pads(raw), dtype=">u4").reshape(len(raw) // 8, 4)
        starts = np.cumsum([0] + [s[2] for s in sums[:-1]])
        # per group, each 32-bit limb summed exactly in 64 bits (a group has < 2**32 values)
        per_group = np.add.reduceat(limbs.astype(np.uint64), starts, axis=0).tolist()
        out = []
        for (hi, lo, count, _), (a, b, c_, d) in zip(sums, per_group, strict=True):
            pad = (a << 96) + (b << 64) + (c_ << 32) + d
            c = ((int(hi) + count * _OFFSET) << 64) + int(lo) + count * _OFFSET
            m = (c - pad) % MODULUS
            out.append(m - MODULUS if m > MODULUS // 2 else m)
        return out
