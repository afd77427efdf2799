"""RND: randomized encryption, AES-256-CBC with a fresh random IV per value.

Leaks: the length of the inner ciphertext rounded up to a multiple of 16 bytes; nothing
else (IND-CPA).  Equal plaintexts give unrelated ciphertexts.

Format (fixed: the peel procedures depend on it)::

    0x01 || iv (16 bytes) || AES-256-CBC(key, iv, PKCS#7(inner))

which is exactly what pgcrypto strips inside the database::

    decrypt_iv(substring(ct from 18), key, substring(ct from 2 for 16), 'aes-cbc/pad:pkcs')

RND is the outer layer of an onion; the inner layer (DET or OPE) carries its own
integrity-relevant structure, so RND itself is not authenticated (the threat model has
an honest-but-curious provider that does not tamper with data).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import ClassVar

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from ..errors import CiphertextError, ConfigError
from .base import Scheme

Buffer = bytes | bytearray | memoryview

_TAG = b"\x01"
_BLOCK = 16


def _buffer(value: object, what: str) -> bytes:
    if not isinstance(value, bytes | bytearray | memoryview):
        raise CiphertextError(f"{what} must be bytes, not {type(value).__name__}")
    return bytes(value)


class RND(Scheme):
    """AES-256-CBC with a random IV: reveals only the (padded) length."""

    name: ClassVar[str] = "RND"
    tag: ClassVar[int] = 0x01
    operators: ClassVar[frozenset[str]] = frozenset()
    strength: ClassVar[int] = 3
    key_size: ClassVar[int] = 32

    def __init__(self, key: Buffer) -> None:
        if len(key) != self.key_size:
            raise ConfigError("RND needs a 256-bit key")
        # OpenSSL through `cryptography`: a CBC context costs ~3 us, pycryptodome's ~8 us
        self._aes = algorithms.AES(bytes(key))

    def __repr__(self) -> str:
        return "RND(<key hidden>)"

    def encrypt(self, inner: Buffer, iv: Buffer | None = None) -> bytes:
        """``0x01 || iv || AES-CBC(PKCS#7(inner))``; ``iv`` is random unless given (tests)."""
        iv_bytes = os.urandom(_BLOCK) if iv is None else bytes(iv)
        if len(iv_bytes) != _BLOCK:
            raise ValueError("the RND IV is 16 bytes")
        data = bytes(inner)
        fill = _BLOCK - len(data) % _BLOCK  # PKCS#7
        enc = Cipher(self._aes, modes.CBC(iv_bytes)).encryptor()
        return _TAG + iv_bytes + enc.update(data + bytes([fill]) * fill) + enc.finalize()

    def decrypt(self, ct: Buffer) -> bytes:
        """The inner value; a wrong tag, length or padding raises :class:`CiphertextError`."""
        data = _buffer(ct, "an RND ciphertext")
        if not data or data[0] != self.tag:
            raise CiphertextError("not an RND ciphertext (wrong layer tag)")
        if len(data) < 1 + 2 * _BLOCK or (len(data) - 1) % _BLOCK:
            raise CiphertextError("RND ciphertext is truncated (length is not 1 + 16 + 16k)")
        dec = Cipher(self._aes, modes.CBC(data[1:17])).decryptor()
        plain = dec.update(data[17:]) + dec.finalize()
        fill = plain[-1]
        if not 1 <= fill <= _BLOCK or plain[-fill:] != bytes([fill]) * fill:
            raise CiphertextError("RND ciphertext does not decrypt (bad padding)")
        return plain[:-fill]

    def encrypt_many(self, inners: Sequence[Buffer]) -> list[bytes]:
        """Encrypt a batch, each value under its own fresh IV."""
        ivs = os.urandom(_BLOCK * len(inners)) if inners else b""
        return [self.encrypt(x, ivs[i * _BLOCK : (i + 1) * _BLOCK]) for i, x in enumerate(inners)]

    def decrypt_many(self, cts: Sequence[Buffer]) -> list[bytes]:
        return [self.decrypt(c) for c in cts]
