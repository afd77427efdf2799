"""RND: IND-CPA, AES-256-CBC with a fresh random IV.

Leaks: the length of the inner ciphertext (rounded up to 16 bytes), nothing else.
Format: ``0x01 || iv (16) || AES-256-CBC(key, iv, PKCS#7(inner))`` -- the format
pgcrypto's ``decrypt_iv(..., 'aes-cbc/pad:pkcs')`` strips inside the database.
"""

from __future__ import annotations

from typing import ClassVar

from Crypto.Cipher import AES
from Crypto.Random import get_random_bytes
from Crypto.Util.Padding import pad, unpad

from ..errors import CiphertextError
from .base import Scheme


class RND(Scheme):
    name: ClassVar[str] = "RND"
    tag: ClassVar[int] = 0x01
    operators: ClassVar[frozenset[str]] = frozenset()
    strength: ClassVar[int] = 3
    key_size: ClassVar[int] = 32

    def __init__(self, key: bytes) -> None:
        if len(key) != self.key_size:
            raise ValueError("RND needs a 256-bit key")
        self._key = bytes(key)

    def __repr__(self) -> str:
        return "RND(<key hidden>)"

    def encrypt(self, inner: bytes, iv: bytes | None = None) -> bytes:
        iv = get_random_bytes(16) if iv is None else iv
        ct = AES.new(self._key, AES.MODE_CBC, iv=iv).encrypt(pad(inner, 16))
        return b"\x01" + iv + ct

    def decrypt(self, ct: bytes) -> bytes:
        ct = bytes(ct)
        if len(ct) < 33 or ct[0] != self.tag or (len(ct) - 17) % 16:
            raise CiphertextError("not an RND ciphertext (wrong tag or truncated)")
        plain = AES.new(self._key, AES.MODE_CBC, iv=ct[1:17]).decrypt(ct[17:])
        try:
            return unpad(plain, 16)
        except ValueError:
            raise CiphertextError("RND ciphertext fails to decrypt (bad padding)") from None

    def encrypt_many(self, inners: list[bytes]) -> list[bytes]:
        return [self.encrypt(x) for x in inners]

    def decrypt_many(self, cts: list[bytes]) -> list[bytes]:
        return [self.decrypt(x) for x in cts]
