"""RND: randomized encryption, AES-256-CTR under a fresh random 96-bit nonce per value.

Format (keyring format 3 on; the peel procedures depend on it)::

    0x01 || nonce (12 bytes) || AES-256-CTR(key, counter block nonce || 0^32, inner)

-- the standard counter mode (NIST SP 800-38A) with the counter block split as in GCM: a
96-bit nonce and a 32-bit big-endian block counter starting at 0.  13 bytes on top of the
inner value, against 18 to 33 for the previous format (``LegacyCbcRnd`` below).

Security (``docs/security.md``): CTR is IND-CPA as long as no counter block repeats under
one key.  Every onion column has its own RND key, the nonces are drawn from the operating
system's CSPRNG, and the counter never reaches 2**32 (a value is below 1 GB), so a repeat
needs two equal nonces among the q values ever written under one key: probability at most
q**2 / 2**97 (2**-33 after 2**32 values).  Leaks: the exact length of the inner
ciphertext (the previous format rounded it up to 16 bytes); nothing else.

In the database the layer is stripped set-based with pgcrypto: the keystream is
``encrypt(counter blocks, key, 'aes-ecb/pad:none')`` and the XOR is done on bit strings
(``adaptive_client/sql/udf/30_peel_layer.sql``); or per value with the PL/Python
``adaptive.rnd_decrypt``.

RND is the outer layer of an onion; the inner layer (DET or OPE) carries its own
structure, so RND itself is not authenticated (the threat model has an honest-but-curious
provider that does not tamper with data).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, ClassVar

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from ..errors import CiphertextError, ConfigError
from . import native
from .base import Scheme

Buffer = bytes | bytearray | memoryview

_TAG = b"\x01"
_BLOCK = 16
NONCE_BYTES = 12
_COUNTER_ZERO = b"\x00\x00\x00\x00"


def _buffer(value: object, what: str) -> bytes:
    if not isinstance(value, bytes | bytearray | memoryview):
        raise CiphertextError(f"{what} must be bytes, not {type(value).__name__}")
    return bytes(value)


class _OpenSslCtr:
    """AES-256-CTR through `cryptography` (OpenSSL): the fallback backend."""

    def __init__(self, key: bytes) -> None:
        self._aes = algorithms.AES(key)

    def apply(self, nonce: bytes, data: bytes) -> bytes:
        # CTR encryption and decryption are the same keystream XOR
        ctx = Cipher(self._aes, modes.CTR(nonce + _COUNTER_ZERO)).encryptor()
        return ctx.update(data) + ctx.finalize()


_native_module = native.load("adaptive_rnd_native")


def _native(name: str) -> Any:
    return getattr(_native_module, name, None)


# The compiled module (native/rnd: RustCrypto's AES-CTR / AES-CBC, ~0.1 us a call) when
# installed; otherwise OpenSSL through `cryptography` (~2-5 us a call, mostly Python-side
# set-up).
_NativeCtr = _native("Ctr")
_NativeCbc = _native("Cbc")
_native_seal_each = _native("seal_each")


class RND(Scheme):
    """AES-256-CTR with a random 96-bit nonce: reveals only the length."""

    name: ClassVar[str] = "RND"
    tag: ClassVar[int] = 0x01
    operators: ClassVar[frozenset[str]] = frozenset()
    strength: ClassVar[int] = 3
    key_size: ClassVar[int] = 32
    overhead: ClassVar[int] = 1 + NONCE_BYTES

    def __init__(self, key: Buffer) -> None:
        if len(key) != self.key_size:
            raise ConfigError("RND needs a 256-bit key")
        if _NativeCtr is None:
            native.fallback_used("RND")
        self._ctr = (_NativeCtr or _OpenSslCtr)(bytes(key))

    def __repr__(self) -> str:
        return "RND(<key hidden>)"

    def encrypt(self, inner: Buffer, nonce: Buffer | None = None) -> bytes:
        """``0x01 || nonce || AES-CTR(inner)``; ``nonce`` is random unless given (tests)."""
        nonce_bytes = os.urandom(NONCE_BYTES) if nonce is None else bytes(nonce)
        if len(nonce_bytes) != NONCE_BYTES:
            raise ValueError("the RND nonce is 12 bytes")
        return _TAG + nonce_bytes + bytes(self._ctr.apply(nonce_bytes, bytes(inner)))

    def decrypt(self, ct: Buffer) -> bytes:
        """The inner value; a wrong tag or a short value raises :class:`CiphertextError`."""
        data = ct if type(ct) is bytes else _buffer(ct, "an RND ciphertext")
        if not data or data[0] != self.tag:
            raise CiphertextError("not an RND ciphertext (wrong layer tag)")
        if len(data) < self.overhead:
            raise CiphertextError("RND ciphertext is truncated (shorter than its nonce)")
        return bytes(self._ctr.apply(data[1 : self.overhead], data[self.overhead :]))

    def encrypt_many(self, inners: Sequence[Buffer]) -> list[bytes]:
        """Encrypt a batch, each value under its own fresh nonce."""
        nonces = os.urandom(NONCE_BYTES * len(inners)) if inners else b""
        seal_many = getattr(self._ctr, "seal_many", None)  # the native module's batch call
        if seal_many is not None:
            try:
                return list(seal_many(self.tag, nonces, inners))
            except TypeError:  # a buffer it does not take (memoryview): the loop below
                pass
        apply = self._ctr.apply
        out = []
        for i, x in enumerate(inners):  # the loop of encrypt(), its checks hoisted
            nonce = nonces[i * NONCE_BYTES : (i + 1) * NONCE_BYTES]
            out.append(_TAG + nonce + bytes(apply(nonce, bytes(x))))
        return out

    def decrypt_many(self, cts: Sequence[Buffer]) -> list[bytes]:
        """Decrypt a batch: the loop of decrypt(), the same checks, fewer calls (one, with
        the native module: a fetched column of many rows is decrypted without a Python
        loop)."""
        open_many = getattr(self._ctr, "open_many", None)
        if open_many is not None and all(type(c) is bytes for c in cts):
            opened = list(open_many(self.tag, cts))
            for i, p in enumerate(opened):
                if p is None:
                    opened[i] = self.decrypt(cts[i])  # raises the precise CiphertextError
            return opened
        apply = self._ctr.apply
        out = []
        for c in cts:
            data = c if type(c) is bytes else _buffer(c, "an RND ciphertext")
            if len(data) < self.overhead or data[0] != 1:
                out.append(self.decrypt(data))  # raises the precise CiphertextError
                continue
            out.append(bytes(apply(data[1 : self.overhead], data[self.overhead :])))
        return out


def single_opener(key: bytes, form: tuple[int, int, int, int]) -> Any | None:
    """The compiled opener of stored values ``RND(key)`` over a value's bytes (a Single
    onion) that decode by ``form`` (native/rnd/src/open.rs); None without the compiled
    module."""
    opener = _native("Opener")
    return None if opener is None else opener(key, None, *form)


def seal_each(schemes: Sequence[RND], inners: Sequence[bytes]) -> list[bytes]:
    """``schemes[i].encrypt(inners[i])`` for each i: the RND layers of one row's onions,
    each under its own key and a fresh nonce of its own, the nonces drawn from the CSPRNG
    in one read (and, with the native module, sealed in one call)."""
    n = len(inners)
    nonces = os.urandom(NONCE_BYTES * n)
    ctrs = [s._ctr for s in schemes]
    if _native_seal_each is not None:
        try:
            return list(_native_seal_each(RND.tag, nonces, ctrs, inners))
        except TypeError:  # a buffer or a backend it does not take: the loop below
            pass
    out = []
    for i in range(n):
        nonce = nonces[i * NONCE_BYTES : (i + 1) * NONCE_BYTES]
        out.append(_TAG + nonce + bytes(ctrs[i].apply(nonce, bytes(inners[i]))))
    return out


class _OpenSslCbc:
    """AES-256-CBC + PKCS#7 through `cryptography` (OpenSSL): the legacy format's fallback."""

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


class LegacyCbcRnd:
    """The RND layer of keyring formats 1 and 2, kept for ``adaptive-db migrate`` only::

    0x01 || iv (16 bytes) || AES-256-CBC(key, iv, PKCS#7(inner))
    """

    def __init__(self, key: Buffer) -> None:
        if len(key) != RND.key_size:
            raise ConfigError("RND needs a 256-bit key")
        self._cbc = (_NativeCbc or _OpenSslCbc)(bytes(key))

    def __repr__(self) -> str:
        return "LegacyCbcRnd(<key hidden>)"

    def encrypt(self, inner: Buffer, iv: Buffer | None = None) -> bytes:
        """The previous format: for tests and for building databases to migrate."""
        iv_bytes = os.urandom(_BLOCK) if iv is None else bytes(iv)
        if len(iv_bytes) != _BLOCK:
            raise ValueError("the legacy RND IV is 16 bytes")
        return _TAG + iv_bytes + bytes(self._cbc.encrypt(iv_bytes, bytes(inner)))

    def decrypt(self, ct: Buffer) -> bytes:
        data = _buffer(ct, "an RND ciphertext")
        if not data or data[0] != RND.tag:
            raise CiphertextError("not an RND ciphertext (wrong layer tag)")
        if len(data) < 1 + 2 * _BLOCK or (len(data) - 1) % _BLOCK:
            raise CiphertextError("legacy RND ciphertext is truncated (not 1 + 16 + 16k bytes)")
        try:
            return bytes(self._cbc.decrypt(data[1:17], data[17:]))
        except ValueError:
            raise CiphertextError("legacy RND ciphertext does not decrypt (bad padding)") from None
