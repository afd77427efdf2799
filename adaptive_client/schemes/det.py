"""DET: deterministic encryption that leaks equality and length only.

Short values (≤ 15 bytes, which covers every fixed-size encoding) are padded (ISO/IEC
7816-4) to one block and encrypted with one AES-256 block operation, a pseudo-random
permutation: ``0x02 || 16 bytes``.  Longer values use AES-SIV (RFC 5297), a
deterministic authenticated mode with no prefix leak: ``0x02 || tag (16) || ciphertext``.
(CBC with a constant IV, the classic choice, would reveal shared prefixes.)
"""

from __future__ import annotations

from typing import ClassVar

from Crypto.Cipher import AES
from Crypto.Hash import SHA256
from Crypto.Protocol.KDF import HKDF

from ..errors import CiphertextError
from .base import Scheme


class DET(Scheme):
    name: ClassVar[str] = "DET"
    tag: ClassVar[int] = 0x02
    operators: ClassVar[frozenset[str]] = frozenset(
        {"=", "<>", "IN", "GROUP BY", "DISTINCT", "JOIN"}
    )
    strength: ClassVar[int] = 2
    key_size: ClassVar[int] = 32

    def __init__(self, key: bytes) -> None:
        if len(key) != self.key_size:
            raise ValueError("DET needs a 256-bit key")
        block_key = HKDF(bytes(key), 32, salt=b"", hashmod=SHA256, context=b"adaptive det block")
        siv_key = HKDF(bytes(key), 64, salt=b"", hashmod=SHA256, context=b"adaptive det siv")
        assert isinstance(block_key, bytes) and isinstance(siv_key, bytes)
        self._block = AES.new(block_key, AES.MODE_ECB)
        self._siv_key = siv_key

    def __repr__(self) -> str:
        return "DET(<key hidden>)"

    def encrypt(self, plaintext: bytes) -> bytes:
        plaintext = bytes(plaintext)
        if len(plaintext) <= 15:
            block = plaintext + b"\x80" + b"\x00" * (15 - len(plaintext))
            return b"\x02" + self._block.encrypt(block)
        cipher = AES.new(self._siv_key, AES.MODE_SIV)
        ct, tag = cipher.encrypt_and_digest(plaintext)
        return b"\x02" + tag + ct

    def decrypt(self, ct: bytes) -> bytes:
        ct = bytes(ct)
        if not ct or ct[0] != self.tag:
            raise CiphertextError("not a DET ciphertext (wrong tag)")
        if len(ct) == 17:
            block = self._block.decrypt(ct[1:])
            stripped = block.rstrip(b"\x00")
            if not stripped or stripped[-1] != 0x80:
                raise CiphertextError("DET ciphertext fails to decrypt (bad padding)")
            return stripped[:-1]
        if len(ct) < 33:
            raise CiphertextError("DET ciphertext is truncated")
        cipher = AES.new(self._siv_key, AES.MODE_SIV)
        try:
            return bytes(cipher.decrypt_and_verify(ct[17:], ct[1:17]))
        except ValueError:
            raise CiphertextError("DET ciphertext fails authentication") from None

    def encrypt_many(self, pts: list[bytes]) -> list[bytes]:
        return [self.encrypt(x) for x in pts]

    def decrypt_many(self, cts: list[bytes]) -> list[bytes]:
        return [self.decrypt(x) for x in cts]
