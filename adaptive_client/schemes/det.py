"""DET: deterministic encryption that leaks equality (and a length class) only.

Two subkeys are derived from the layer key with HKDF-SHA256: a 32-byte block key and a
64-byte AES-SIV key.

* Values of at most 15 bytes (every fixed-size encoding: integers, numerics up to
  about 35 digits, floats, dates, timestamps, booleans, short strings) are padded
  (ISO/IEC 7816-4: ``0x80`` then zeros) to one block and encrypted with a single AES-256
  block operation, a pseudo-random permutation: ``0x02 || 16 bytes`` (17 bytes).
* Longer values use AES-SIV (RFC 5297) without nonce, a deterministic authenticated
  mode: ``0x02 || tag (16) || ciphertext`` (at least 33 bytes).

Leaks: which values are equal, whether a value is short (≤ 15 bytes) and, for long
values, their exact length.  No shared-prefix leak: the classic AES-CBC with a constant
IV would reveal how many leading blocks two values share; neither a single block nor
SIV does.  Short values are not authenticated (a wrong key yields a padding error or
garbage), long ones are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from Crypto.Hash import SHA256
from Crypto.Protocol.KDF import HKDF
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESSIV

from ..errors import CiphertextError, ConfigError
from . import native
from .base import Scheme

_native = native.load("adaptive_rnd_native")

Buffer = bytes | bytearray | memoryview

_TAG = b"\x02"
_SHORT_MAX = 15
_SHORT_LEN = 17  # tag + one block
_LONG_MIN = 33  # tag + SIV tag + at least one block of ciphertext
# what _pad appends to a short value of each length
_PADDING = [b"\x80" + b"\x00" * (_SHORT_MAX - n) for n in range(_SHORT_MAX + 1)]


def _buffer(value: object) -> bytes:
    if not isinstance(value, bytes | bytearray | memoryview):
        raise CiphertextError(f"a DET ciphertext must be bytes, not {type(value).__name__}")
    return bytes(value)


def _subkey(key: bytes, size: int, label: bytes) -> bytes:
    out = HKDF(key, size, salt=b"", hashmod=SHA256, context=label)
    assert isinstance(out, bytes)
    return out


class DET(Scheme):
    """One AES block (short values) or AES-SIV (long values): reveals equality only."""

    name: ClassVar[str] = "DET"
    tag: ClassVar[int] = 0x02
    operators: ClassVar[frozenset[str]] = frozenset(
        {"=", "<>", "IN", "GROUP BY", "DISTINCT", "JOIN"}
    )
    strength: ClassVar[int] = 2
    key_size: ClassVar[int] = 32

    def __init__(self, key: Buffer) -> None:
        if len(key) != self.key_size:
            raise ConfigError("DET needs a 256-bit key")
        key = bytes(key)
        # One AES block permutation, through OpenSSL contexts kept open: ECB has no state
        # between blocks, so each update() is an independent block operation (~0.3 us,
        # against ~4 us for a pycryptodome call)
        self._block_key = _subkey(key, 32, b"adaptive det block")
        block = Cipher(algorithms.AES(self._block_key), modes.ECB())
        self._block_enc = block.encryptor()
        self._block_dec = block.decryptor()
        # OpenSSL's AES-SIV: the same RFC 5297 output as pycryptodome's, ~100x less
        # per-call overhead (a fresh pycryptodome SIV object costs ~90 us per value)
        self._siv_key = _subkey(key, 64, b"adaptive det siv")
        self._siv = AESSIV(self._siv_key)

    def __repr__(self) -> str:
        return "DET(<key hidden>)"

    def opener(self, rnd_key: bytes | None, form: tuple[int, int, int, int]) -> Any | None:
        """The compiled opener of stored values ``[RND(rnd_key) →] DET(this key)`` whose
        plaintexts decode by ``form`` (native/rnd/src/open.rs: what it does not decide it
        hands back); None without the compiled module."""
        if _native is None:
            return None
        return _native.Opener(rnd_key, self._block_key, *form, self._siv_key)

    @staticmethod
    def _pad(plaintext: bytes) -> bytes:
        return plaintext + b"\x80" + b"\x00" * (_SHORT_MAX - len(plaintext))

    def _siv_encrypt(self, plaintext: bytes) -> bytes:
        return _TAG + self._siv.encrypt(plaintext, None)  # tag || ciphertext

    @staticmethod
    def _unpad(block: bytes) -> bytes:
        body = block.rstrip(b"\x00")
        if not body or body[-1] != 0x80:
            raise CiphertextError("DET ciphertext does not decrypt (bad padding)")
        return body[:-1]

    def encrypt(self, plaintext: Buffer) -> bytes:
        data = plaintext if type(plaintext) is bytes else bytes(plaintext)
        if len(data) <= _SHORT_MAX:
            return _TAG + self._block_enc.update(data + _PADDING[len(data)])
        return self._siv_encrypt(data)

    def decrypt(self, ct: Buffer) -> bytes:
        data = ct if type(ct) is bytes else _buffer(ct)
        if len(data) == _SHORT_LEN and data[0] == 2:  # a short value (the checks inlined)
            return self._unpad(self._block_dec.update(data[1:]))
        self._check(data)
        if len(data) == _SHORT_LEN:
            return self._unpad(self._block_dec.update(data[1:]))
        try:
            return self._siv.decrypt(data[1:], None)
        except InvalidTag:
            raise CiphertextError("DET ciphertext fails authentication") from None

    def _check(self, data: bytes) -> None:
        if not data or data[0] != self.tag:
            raise CiphertextError("not a DET ciphertext (wrong layer tag)")
        if len(data) != _SHORT_LEN and len(data) < _LONG_MIN:
            raise CiphertextError("DET ciphertext is truncated")

    def encrypt_many(self, plaintexts: Sequence[Buffer]) -> list[bytes]:
        """Encrypt a batch; the short values go through AES in one call."""
        datas = [p if type(p) is bytes else bytes(p) for p in plaintexts]
        if all(len(d) <= _SHORT_MAX for d in datas):  # the common case: one AES call
            enc = self._block_enc.update(b"".join([d + _PADDING[len(d)] for d in datas]))
            return [_TAG + enc[i : i + 16] for i in range(0, len(enc), 16)]
        out: list[bytes] = [b""] * len(plaintexts)
        short: list[int] = []
        blocks = bytearray()
        for i, data in enumerate(datas):
            if len(data) <= _SHORT_MAX:
                short.append(i)
                blocks += self._pad(data)
            else:
                out[i] = self._siv_encrypt(data)
        if short:
            enc = self._block_enc.update(bytes(blocks))
            for j, i in enumerate(short):
                out[i] = _TAG + enc[16 * j : 16 * j + 16]
        return out

    def rekey_many(self, cts: Sequence[bytes], new: DET) -> list[bytes]:
        """``cts`` (this key's ciphertexts) as ``new`` 's ciphertexts of the same values.
        A short value's block is decrypted and encrypted again as it is (its padded
        plaintext is the same under both keys): two AES calls for the whole batch; long
        values go through AES-SIV, opened and sealed."""
        if all(len(c) == _SHORT_LEN and c[0] == 2 for c in cts):  # the common case
            plain = self._block_dec.update(b"".join([c[1:] for c in cts]))
            # a wrong key is caught on the first block's padding (each value's padding
            # survives a re-key unchanged, so checking them all would prove no more)
            if plain and plain[:16].rstrip(b"\x00")[-1:] != b"\x80":
                raise CiphertextError("DET ciphertext does not decrypt (bad padding)")
            enc = new._block_enc.update(plain)
            return [_TAG + enc[k : k + 16] for k in range(0, len(enc), 16)]
        out: list[bytes] = [b""] * len(cts)
        short = [i for i, c in enumerate(cts) if len(c) == _SHORT_LEN and c[0] == 2]
        for i, c in zip(short, self.rekey_many([cts[i] for i in short], new), strict=True):
            out[i] = c
        for i, c in enumerate(cts):
            if not out[i]:
                out[i] = new.encrypt(self.decrypt(c))
        return out

    def rekey_packed(self, packed: bytes, new: DET) -> bytes | None:
        """``packed`` (short ciphertexts of this key, end to end, 17 bytes each) as
        ``new`` 's ciphertexts of the same values, packed the same way; None when a value
        is not a short one.  The blocks are gathered and scattered by strided slices, so
        a million values cost two AES calls and a few dozen copies, not a million
        objects."""
        n, rest = divmod(len(packed), _SHORT_LEN)
        if rest or packed[0::_SHORT_LEN] != _TAG * n:
            return None
        blocks = bytearray(16 * n)
        for j in range(16):
            blocks[j::16] = packed[j + 1 :: _SHORT_LEN]
        plain = self._block_dec.update(bytes(blocks))
        # a wrong key is caught on the first block's padding (as in rekey_many)
        if plain and plain[:16].rstrip(b"\x00")[-1:] != b"\x80":
            raise CiphertextError("DET ciphertext does not decrypt (bad padding)")
        enc = new._block_enc.update(plain)
        out = bytearray(packed)  # (the tags stay)
        for j in range(16):
            out[j + 1 :: _SHORT_LEN] = enc[j::16]
        return bytes(out)

    def decrypt_many(self, cts: Sequence[Buffer]) -> list[bytes]:
        """Decrypt a batch; the short values go through AES in one call."""
        out: list[bytes] = [b""] * len(cts)
        short: list[int] = []
        blocks = bytearray()
        for i, c in enumerate(cts):
            data = c if type(c) is bytes else _buffer(c)
            if len(data) == _SHORT_LEN and data[0] == 2:
                short.append(i)
                blocks += data[1:]
            else:
                out[i] = self.decrypt(data)
        if short:
            dec = self._block_dec.update(bytes(blocks))
            for j, i in enumerate(short):  # _unpad, inlined: it runs once per value
                body = dec[16 * j : 16 * j + 16].rstrip(b"\x00")
                if not body or body[-1] != 0x80:
                    raise CiphertextError("DET ciphertext does not decrypt (bad padding)")
                out[i] = body[:-1]
        return out
