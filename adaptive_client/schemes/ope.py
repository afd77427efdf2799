"""OPE: Boldyreva–Chenette–Lee–O'Neill order-preserving encryption (pyope's algorithm).

Leaks: order (and equality) of plaintexts, and roughly their distribution.  Plaintexts
are integers in ``[0, 2**in_bits)`` (encodings offset signed values); ciphertexts are
stored as ``0x03 || unsigned big-endian in ceil(out_bits / 8) bytes``, so PostgreSQL's
bytea comparison and B-tree indexes order them exactly as the integers.

The native extension ``adaptive_ope_native`` (bit-identical to pyope, checked against
recorded vectors) is used when installed; pyope otherwise.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..errors import CiphertextError, ValueOutOfDomain
from .base import Scheme

try:  # pragma: no cover - depends on the build
    import adaptive_ope_native as _native
except ImportError:  # pragma: no cover
    _native = None


class OPE(Scheme):
    name: ClassVar[str] = "OPE"
    tag: ClassVar[int] = 0x03
    operators: ClassVar[frozenset[str]] = frozenset(
        {"=", "<>", "<", "<=", ">", ">=", "BETWEEN", "ORDER BY", "MIN", "MAX"}
    )
    strength: ClassVar[int] = 1
    key_size: ClassVar[int] = 32

    def __init__(self, key: bytes, in_bits: int, out_bits: int | None = None) -> None:
        self._key = bytes(key)
        self.in_bits = in_bits
        self.out_bits = out_bits if out_bits is not None else in_bits + 32
        self.width = (self.out_bits + 7) // 8
        self._in_end = 2**in_bits - 1
        self._out_end = 2**self.out_bits - 1
        self.backend = "native" if _native is not None else "pyope"
        self._py: Any = None
        if _native is None:
            from pyope.ope import OPE as _PyOPE
            from pyope.ope import ValueRange

            self._py = _PyOPE(self._key, ValueRange(0, self._in_end), ValueRange(0, self._out_end))

    def __repr__(self) -> str:
        return f"OPE(<key hidden>, in_bits={self.in_bits}, out_bits={self.out_bits})"

    def _check(self, x: int) -> None:
        if not isinstance(x, int) or not 0 <= x <= self._in_end:
            raise ValueOutOfDomain(f"OPE plaintext outside [0, 2**{self.in_bits})")

    def encrypt_int(self, x: int) -> int:
        self._check(x)
        if _native is not None:
            return int(_native.encrypt(self._key, 0, self._in_end, 0, self._out_end, x))
        return int(self._py.encrypt(x))

    def encrypt(self, x: int) -> bytes:
        return b"\x03" + self.encrypt_int(x).to_bytes(self.width, "big")

    def decrypt(self, ct: bytes) -> int:
        ct = bytes(ct)
        if len(ct) != self.width + 1 or ct[0] != self.tag:
            raise CiphertextError("not an OPE ciphertext of this column (tag or width)")
        c = int.from_bytes(ct[1:], "big")
        try:
            if _native is not None:
                return int(_native.decrypt(self._key, 0, self._in_end, 0, self._out_end, c))
            return int(self._py.decrypt(c))
        except Exception as exc:  # pyope's InvalidCiphertextError, native ValueError
            raise CiphertextError("OPE ciphertext does not decrypt under this key") from exc

    def encrypt_many(self, xs: list[int]) -> list[bytes]:
        if _native is not None:
            for x in xs:
                self._check(x)
            cs = _native.encrypt_many(self._key, 0, self._in_end, 0, self._out_end, xs)
            return [b"\x03" + int(c).to_bytes(self.width, "big") for c in cs]
        return [self.encrypt(x) for x in xs]

    def decrypt_many(self, cts: list[bytes]) -> list[int]:
        return [self.decrypt(c) for c in cts]
