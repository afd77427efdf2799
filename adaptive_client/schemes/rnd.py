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

import importlib
import os
from collections.abc import Sequence
from typing import Any, ClassVar

from cryptography.hazmat.primitives import padding
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


class _OpenSslCbc:
    """AES-256-CBC + PKCS#7 through `cryptography` (OpenSSL): the fallback backend."""

    def __init__(self, key: bytes) -> None:
        self._aes = algorithms.AES(key)

    def encrypt(self, iv: bytes, data: bytes) -> bytes:
        padder = padding.PKCS7(128).padder()
        enc = Cipher(self._aes, modes.CBC(iv)).encryptor()
        return enc.update(padder.update(data) + padder.finalize()) + enc.finalize()

    def decrypt(self, iv: bytes, data: bytes) -> bytes:
        dec = Cipher(self._aes, modes.CBC(iv)).decryptor()
        unpadder = padding.PKCS7(128).unpadder()
        return unpadder.update(dec.update(data) + dec.finalize()) + unpadder.finalize()


def _native_backend() -> Any:
    try:
        return importlib.import_module("adaptive_rnd_native").Cbc
    except ImportError:
        return None


# The compiled module (RustCrypto's AES-CBC, ~0.1 us a call) when installed; otherwise
# OpenSSL through `cryptography` (~3-5 us a call, mostly Python-side set-up).  Same bytes.
_NativeCbc = _native_backend()


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
        self._cbc = (_NativeCbc or _OpenSslCbc)(bytes(key))

    def __repr__(self) -> str:
        return "RND(<key hidden>)"

    def encrypt(self, inner: Buffer, iv: Buffer | None = None) -> bytes:
        """``0x01 || iv || AES-CBC(PKCS#7(inner))``; ``iv`` is random unless given (tests)."""
        iv_bytes = os.urandom(_BLOCK) if iv is None else bytes(iv)
        if len(iv_bytes) != _BLOCK:
            raise ValueError("the RND IV is 16 bytes")
        return _TAG + iv_bytes + bytes(self._cbc.encrypt(iv_bytes, bytes(inner)))

    def decrypt(self, ct: Buffer) -> bytes:
        """The inner value; a wrong tag, length or padding raises :class:`CiphertextError`."""
        data = _buffer(ct, "an RND ciphertext")
        if not data or data[0] != self.tag:
            raise CiphertextError("not an RND ciphertext (wrong layer tag)")
        if len(data) < 1 + 2 * _BLOCK or (len(data) - 1) % _BLOCK:
            raise CiphertextError("RND ciphertext is truncated (length is not 1 + 16 + 16k)")
        try:
            return bytes(self._cbc.decrypt(data[1:17], data[17:]))
        except ValueError:
            raise CiphertextError("RND ciphertext does not decrypt (bad padding)") from None

    def encrypt_many(self, inners: Sequence[Buffer]) -> list[bytes]:
        """Encrypt a batch, each value under its own fresh IV."""
        ivs = os.urandom(_BLOCK * len(inners)) if inners else b""
        seal_many = getattr(self._cbc, "seal_many", None)  # the native module's batch call
        if seal_many is not None:
            try:
                return list(seal_many(self.tag, ivs, inners))
            except TypeError:  # a buffer it does not take (memoryview): the loop below
                pass
        encrypt = self._cbc.encrypt
        out = []
        for i, x in enumerate(inners):  # the loop of encrypt(), its checks hoisted
            iv = ivs[i * _BLOCK : (i + 1) * _BLOCK]
            out.append(_TAG + iv + bytes(encrypt(iv, bytes(x))))
        return out

    def decrypt_many(self, cts: Sequence[Buffer]) -> list[bytes]:
        """Decrypt a batch: the loop of decrypt(), the same checks, fewer calls (one, with
        the native module: a fetched column of many rows is decrypted without a Python
        loop)."""
        open_many = getattr(self._cbc, "open_many", None)
        if open_many is not None and all(type(c) is bytes for c in cts):
            opened = list(open_many(self.tag, cts))
            for i, p in enumerate(opened):
                if p is None:
                    opened[i] = self.decrypt(cts[i])  # raises the precise CiphertextError
            return opened
        decrypt = self._cbc.decrypt
        out = []
        for c in cts:
            data = c if type(c) is bytes else _buffer(c, "an RND ciphertext")
            n = len(data)
            if not n or data[0] != 1 or n < 1 + 2 * _BLOCK or (n - 1) % _BLOCK:
                out.append(self.decrypt(data))  # raises the precise CiphertextError
                continue
            try:
                out.append(bytes(decrypt(data[1:17], data[17:])))
            except ValueError:
                raise CiphertextError("RND ciphertext does not decrypt (bad padding)") from None
        return out
