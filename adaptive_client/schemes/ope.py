"""OPE: Boldyreva–Chenette–Lee–O'Neill order-preserving encryption (pyope's algorithm).

Leaks: the order and equality of plaintexts and, being a random order-preserving
function, roughly half of their leading bits (BCLO's "window one-wayness" bound):
ciphertexts approximate the plaintexts' distribution.

Plaintexts are integers in ``[0, 2**in_bits)`` (encodings offset signed values);
ciphertexts lie in ``[0, 2**out_bits)``, ``out_bits`` defaulting to ``in_bits + 32``.
The stored form (fixed: SQL aggregates depend on it) is::

    0x03 || ciphertext as unsigned big-endian in exactly ceil(out_bits / 8) bytes

so PostgreSQL's bytea comparison, ``min``/``max`` and B-tree indexes order ciphertexts
exactly as the integers.

Backends: the compiled module ``adaptive_client.adaptive_ope_native`` (bit-identical to
pyope, built into the wheel from ``native/ope``) when it is installed and the output
domain fits its 128-bit integers (``out_bits`` ≤ 127), pyope otherwise (a missing module
is logged once per process: ``schemes.native``); :attr:`OPE.backend` says which (on an
instance: the one that instance uses).
An instance keeps one native ``Cipher``: keyed once, it memoizes the tree nodes it has
sampled, so that an encryption skips the upper part of its path, shared with the values
encrypted before it (all share the top levels; nearby values much more).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from ..errors import CiphertextError, ConfigError, EncodingError, ValueOutOfDomain
from . import native
from .base import Scheme

Buffer = bytes | bytearray | memoryview


_native = native.load("adaptive_ope_native")
NATIVE_MAX_OUT_BITS = 127  # the native module's ranges have at most 2**127 elements

_TAG = b"\x03"


class OPE(Scheme):
    """BCLO order-preserving encryption of integers: reveals order."""

    name: ClassVar[str] = "OPE"
    tag: ClassVar[int] = 0x03
    operators: ClassVar[frozenset[str]] = frozenset(
        {"=", "<>", "<", "<=", ">", ">=", "BETWEEN", "ORDER BY", "MIN", "MAX"}
    )
    strength: ClassVar[int] = 1
    key_size: ClassVar[int] = 32
    backend: str = "native" if _native is not None else "pyope"

    def __init__(
        self, key: Buffer, in_bits: int, out_bits: int | None = None, *, backend: str | None = None
    ) -> None:
        """``backend``: ``"native"``, ``"pyope"`` or None (the fastest that can serve)."""
        if len(key) != self.key_size:
            raise ConfigError("OPE needs a 256-bit key")
        if out_bits is None:
            out_bits = in_bits + 32
        if not 1 <= in_bits <= out_bits:
            raise ConfigError(f"invalid OPE domain: in_bits={in_bits}, out_bits={out_bits}")
        self._key = bytes(key)
        self.in_bits = in_bits
        self.out_bits = out_bits
        self.width = (out_bits + 7) // 8
        self._in_end = (1 << in_bits) - 1
        self._out_end = (1 << out_bits) - 1
        native_ok = _native is not None and out_bits <= NATIVE_MAX_OUT_BITS
        if backend not in (None, "native", "pyope"):
            raise ConfigError(f"unknown OPE backend {backend!r}")
        if backend == "native" and not native_ok:
            raise ConfigError("the native OPE backend is not installed or the domain is too wide")
        self._native = _native if native_ok and backend != "pyope" else None
        self.backend = "native" if self._native is not None else "pyope"
        # the native module's keyed object with memoized splits (a build without it: the
        # module's functions, which key the HMAC and walk the whole tree on each call)
        self._cipher: Any = None
        if self._native is not None and hasattr(self._native, "Cipher"):
            self._cipher = self._native.Cipher(self._key, 0, self._in_end, 0, self._out_end)
        self._py: Any = None
        if self._native is None:
            if _native is None and backend is None:
                native.fallback_used("OPE")
            from pyope.ope import OPE as _PyOPE
            from pyope.ope import ValueRange

            self._py = _PyOPE(self._key, ValueRange(0, self._in_end), ValueRange(0, self._out_end))

    def __repr__(self) -> str:
        return f"OPE(<key hidden>, in_bits={self.in_bits}, out_bits={self.out_bits})"

    # -- integers ---------------------------------------------------------------------------
    def _check(self, x: object) -> int:
        if isinstance(x, bool) or not isinstance(x, int):
            raise EncodingError(f"OPE plaintexts are integers, not {type(x).__name__}")
        if not 0 <= x <= self._in_end:
            raise ValueOutOfDomain(f"OPE plaintext outside [0, 2**{self.in_bits})")
        return x

    def encrypt_int(self, x: int) -> int:
        """The ciphertext as an integer in ``[0, 2**out_bits)``."""
        x = self._check(x)
        if self._cipher is not None:
            return int(self._cipher.encrypt(x))
        if self._native is not None:
            return int(self._native.encrypt(self._key, 0, self._in_end, 0, self._out_end, x))
        return int(self._py.encrypt(x))

    def decrypt_int(self, c: int) -> int:
        if not 0 <= c <= self._out_end:
            raise CiphertextError("OPE ciphertext outside the output range")
        try:
            if self._cipher is not None:
                return int(self._cipher.decrypt(c))
            if self._native is not None:
                return int(self._native.decrypt(self._key, 0, self._in_end, 0, self._out_end, c))
            return int(self._py.decrypt(c))
        except (ValueError, ArithmeticError) as exc:  # pyope's errors are ValueErrors
            raise CiphertextError("OPE ciphertext does not decrypt under this key") from exc

    # -- stored form ------------------------------------------------------------------------
    def _pack(self, c: int) -> bytes:
        return _TAG + c.to_bytes(self.width, "big")

    def _unpack(self, ct: object) -> int:
        if not isinstance(ct, bytes | bytearray | memoryview):
            raise CiphertextError(f"an OPE ciphertext must be bytes, not {type(ct).__name__}")
        data = bytes(ct)
        if not data or data[0] != self.tag:
            raise CiphertextError("not an OPE ciphertext (wrong layer tag)")
        if len(data) != self.width + 1:
            raise CiphertextError("OPE ciphertext has the wrong width for this column")
        return int.from_bytes(data[1:], "big")

    def encrypt(self, x: int) -> bytes:
        if type(x) is int and 0 <= x <= self._in_end and self._cipher is not None:
            return _TAG + self._cipher.encrypt(x).to_bytes(self.width, "big")  # (checked)
        return self._pack(self.encrypt_int(x))

    def decrypt(self, ct: Buffer) -> int:
        return self.decrypt_int(self._unpack(ct))

    def encrypt_many(self, xs: Sequence[int]) -> list[bytes]:
        checked = [self._check(x) for x in xs]
        if self._native is not None and checked:
            if self._cipher is not None:
                cs = self._cipher.encrypt_many(checked)
            else:
                cs = self._native.encrypt_many(
                    self._key, 0, self._in_end, 0, self._out_end, checked
                )
            return [self._pack(int(c)) for c in cs]
        return [self._pack(int(self._py.encrypt(x))) for x in checked]

    def decrypt_many(self, cts: Sequence[Buffer]) -> list[int]:
        cs = [self._unpack(c) for c in cts]
        if self._native is not None and cs:
            try:
                if self._cipher is not None:
                    out = self._cipher.decrypt_many(cs)
                else:
                    out = self._native.decrypt_many(
                        self._key, 0, self._in_end, 0, self._out_end, cs
                    )
            except (ValueError, ArithmeticError) as exc:
                raise CiphertextError("OPE ciphertext does not decrypt under this key") from exc
            return [int(x) for x in out]
        return [self.decrypt_int(c) for c in cs]
