"""ORE: Lewi–Wu block order-revealing encryption (CCS 2016), 8-bit blocks.

Leaks: the order of two values and the index of the first byte (block) at which their
plaintexts differ -- nothing readable from one stored value alone.  Unlike OPE, a
ciphertext is not a number near the plaintext: its bytes are pseudo-random, so the
stored column does not carry the values' leading bits, and the provider learns order
only by running the comparison (which every stored value allows: see below).

Plaintexts are integers in ``[0, 2**in_bits)`` (the Ord onion's encodings, as for OPE),
split into ``n = ceil(in_bits / 8)`` big-endian bytes ``x_0 .. x_(n-1)`` (at most 12).
Two AES-256 keys, derived from the layer key with HMAC-SHA256, act as PRFs on one block
each: ``F_p`` (per-prefix permutation seeds) and ``F_h`` (per-prefix hash keys), on
inputs ``domain || i || x_0..x_(i-1) (zero-padded to 12 bytes) || j || 0``.

* ``pi_i``, a pseudo-random permutation of the 256 byte values for block ``i`` keyed by
  the prefix before it: ``pi_i(v)`` is the rank of ``v``'s draw among the 256 draws of
  the AES-128-CTR keystream under the seed ``F_p(i, x_<i)`` (zero IV; draw ``v``: the
  big-endian 64-bit word ``v``; ties, with probability below 2**-48, ranked by ``v``) --
  a random permutation by sorting random keys;
* the **left** part, per block: ``F_h(i, x_<i, pi_i(x_i))`` (16 bytes) then
  ``pi_i(x_i)`` (1 byte) -- deterministic, decryptable with the key (the permutations
  are undone block by block);
* the **right** part: a 16-byte random nonce ``r``, then per block 256 bits, bit ``j``
  (byte ``j // 8``, bit ``j % 8`` from the least significant: PostgreSQL's ``get_bit``)
  being ``[pi_i^-1(j) > y_i] XOR H(F_h(i, y_<i, j), r)`` with ``H(k, r)`` the least
  significant bit of ``sha256(k || r)``'s first byte, which PostgreSQL computes with
  its built-in ``sha256``.

Stored form: ``0x04 || key id (8) || left (17 n bytes) || r (16) || right bits (32 n
bytes)``, that is ``25 + 49 n`` bytes (417 for a 64-bit domain); the key id is the first
8 bytes of ``HMAC-SHA256(key, "adaptive ORE key id")``.  Comparing ``a`` with ``b``:
values under different key ids are ordered by their key ids (ORE values under two keys
have no order between them, and a B-tree holds both while a join adjustment re-keys a
column, dead row versions included: the comparison must stay a total order); under one
key, their left parts are equal exactly when the values are; otherwise the first
differing 17-byte left block ``i`` is where the plaintexts first differ, and ``a > b``
exactly when ``get_bit(right_b, 256 i + h) XOR H(k, r_b)`` is 1, where ``k || h`` is
``a``'s left block ``i`` (``sql/udf/26_ore.sql``, ``adaptive.ore_cmp``).  Both parts are
stored in every value so that two stored values compare (joins, ORDER BY, B-tree
indexes), not only a query's constant against a stored value: the provider learns the
order of the column and, for each pair, the first differing block -- Lewi–Wu's leakage,
with every value usable as a left ciphertext -- and which values share a key (which it
knows anyway: a column's, or a join group's).

Backends: the compiled module ``adaptive_client.adaptive_ore_native`` (``native/ore``,
Rust: encryption, the same bytes) where it is installed, else Python over
``cryptography`` (AES-ECB in one call per batch of PRF inputs, AES-CTR for the
permutations' draws), ``hashlib`` and numpy; decryption is Python's (one permutation
per block).  :attr:`ORE.backend` says which.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from ..errors import CiphertextError, ConfigError, EncodingError, ValueOutOfDomain
from . import native
from .base import Scheme

_native = native.load("adaptive_ore_native")

Buffer = bytes | bytearray | memoryview

_TAG = b"\x04"
BLOCK_BITS = 8
MAX_BLOCKS = 12  # the prefix must fit in one PRF input block
KEY_ID = 8
HEAD = 1 + KEY_ID  # the tag and the key id
LEFT_BLOCK = 17  # hash key (16) + permuted byte (1)
RIGHT_BLOCK = 32  # 256 bits
NONCE = 16
_PERM, _HASH = 1, 2  # PRF domains
_ZERO_IV = bytes(16)
_DRAWS = bytes(8 * 256)  # one 64-bit draw per byte value
_J = np.arange(256, dtype=np.uint8)


def stored_width(blocks: int) -> int:
    """Bytes of a stored ORE ciphertext of ``blocks`` 8-bit blocks (the tag included)."""
    return HEAD + NONCE + (LEFT_BLOCK + RIGHT_BLOCK) * blocks


def _prf_input(domain: int, i: int, prefix: bytes, j: int = 0) -> bytes:
    return bytes((domain, i)) + prefix.ljust(MAX_BLOCKS, b"\x00") + bytes((j, 0))


def _permutation(seed: bytes) -> tuple[np.ndarray, np.ndarray]:
    """The permutation of 0..255 a seed gives, as ``(pi, pi^-1)`` arrays: ``pi[v]`` is
    the rank of draw ``v`` (a stable sort: ties ranked by ``v``)."""
    stream = Cipher(algorithms.AES(seed), modes.CTR(_ZERO_IV)).encryptor().update(_DRAWS)
    inverse = np.argsort(np.frombuffer(stream, dtype=">u8"), kind="stable").astype(np.uint8)
    forward = np.empty(256, dtype=np.uint8)
    forward[inverse] = _J
    return forward, inverse


def _h(key: bytes, nonce: bytes) -> int:
    return hashlib.sha256(key + nonce).digest()[0] & 1


class ORE(Scheme):
    """Lewi–Wu block ORE of integers: reveals order and the first differing byte."""

    name: ClassVar[str] = "ORE"
    tag: ClassVar[int] = 0x04
    operators: ClassVar[frozenset[str]] = frozenset(
        {"=", "<>", "<", "<=", ">", ">=", "BETWEEN", "ORDER BY", "MIN", "MAX"}
    )
    strength: ClassVar[int] = 1
    key_size: ClassVar[int] = 32
    backend: str = "native" if _native is not None else "python"

    def __init__(self, key: Buffer, in_bits: int, *, backend: str | None = None) -> None:
        """``backend``: ``"native"``, ``"python"`` or None (the fastest installed)."""
        if len(key) != self.key_size:
            raise ConfigError("ORE needs a 256-bit key")
        blocks = -(-in_bits // BLOCK_BITS)
        if not 1 <= blocks <= MAX_BLOCKS:
            raise ConfigError(f"invalid ORE domain: in_bits={in_bits} (at most 96)")
        key = bytes(key)
        self.in_bits = in_bits
        self.blocks = blocks
        self.width = stored_width(blocks)
        self._in_end = (1 << in_bits) - 1
        perm_key = hmac.new(key, b"adaptive ORE permutations", "sha256").digest()
        hash_key = hmac.new(key, b"adaptive ORE hash keys", "sha256").digest()
        self._perm_prf = Cipher(algorithms.AES(perm_key), modes.ECB())
        self._hash_prf = Cipher(algorithms.AES(hash_key), modes.ECB())
        if backend not in (None, "native", "python"):
            raise ConfigError(f"unknown ORE backend {backend!r}")
        if backend == "native" and _native is None:
            raise ConfigError("the native ORE backend is not installed")
        self._native = _native if backend != "python" else None
        self.backend = "native" if self._native is not None else "python"
        self._keys = (perm_key, hash_key)
        self.key_id = hmac.new(key, b"adaptive ORE key id", "sha256").digest()[:KEY_ID]

    def __repr__(self) -> str:
        return f"ORE(<key hidden>, in_bits={self.in_bits})"

    # -- pieces -----------------------------------------------------------------------------
    def _check(self, x: object) -> int:
        if isinstance(x, bool) or not isinstance(x, int):
            raise EncodingError(f"ORE plaintexts are integers, not {type(x).__name__}")
        if not 0 <= x <= self._in_end:
            raise ValueOutOfDomain(f"ORE plaintext outside [0, 2**{self.in_bits})")
        return x

    def _perms(self, digits: bytes) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each block's permutation, keyed by the plaintext's prefix before it."""
        seeds = self._perm_prf.encryptor().update(
            b"".join(_prf_input(_PERM, i, digits[:i]) for i in range(self.blocks))
        )
        return [_permutation(seeds[16 * i : 16 * i + 16]) for i in range(self.blocks)]

    def _left(self, digits: bytes, perms: list[tuple[np.ndarray, np.ndarray]]) -> bytes:
        permuted = [int(perms[i][0][digits[i]]) for i in range(self.blocks)]
        keys = self._hash_prf.encryptor().update(
            b"".join(_prf_input(_HASH, i, digits[:i], permuted[i]) for i in range(self.blocks))
        )
        return b"".join(
            keys[16 * i : 16 * i + 16] + bytes((permuted[i],)) for i in range(self.blocks)
        )

    def _right(
        self, digits: bytes, perms: list[tuple[np.ndarray, np.ndarray]], nonce: bytes
    ) -> bytes:
        inputs = np.zeros((self.blocks, 256, 16), dtype=np.uint8)
        for i in range(self.blocks):
            inputs[i, :, :14] = np.frombuffer(_prf_input(_HASH, i, digits[:i])[:14], np.uint8)
        inputs[:, :, 14] = _J  # j, the permuted byte value each bit answers for
        keys = self._hash_prf.encryptor().update(inputs.tobytes())
        sha256 = hashlib.sha256
        masks = np.fromiter(
            (sha256(keys[o : o + 16] + nonce).digest()[0] & 1 for o in range(0, len(keys), 16)),
            dtype=np.uint8,
            count=256 * self.blocks,
        ).reshape(self.blocks, 256)
        above = np.stack([perms[i][1] > digits[i] for i in range(self.blocks)])
        return np.packbits(masks ^ above, axis=1, bitorder="little").tobytes()

    # -- stored form ------------------------------------------------------------------------
    def encrypt(self, x: int, nonce: bytes | None = None) -> bytes:
        """``0x04 || key id || left || nonce || right``; ``nonce`` (16 bytes) is drawn fresh unless
        given (known-answer tests)."""
        x = self._check(x)
        if nonce is None:
            nonce = os.urandom(NONCE)
        elif len(nonce) != NONCE:
            raise ConfigError("an ORE nonce has 16 bytes")
        if self._native is not None:
            return bytes(self._native.encrypt(*self._keys, self.key_id, self.blocks, x, nonce))
        digits = x.to_bytes(self.blocks, "big")
        perms = self._perms(digits)
        left = self._left(digits, perms)
        return _TAG + self.key_id + left + nonce + self._right(digits, perms, nonce)

    def encrypt_many(self, xs: Sequence[int]) -> list[bytes]:
        checked = [self._check(x) for x in xs]
        if self._native is not None and checked:
            nonces = os.urandom(NONCE * len(checked))
            return [
                bytes(c)
                for c in self._native.encrypt_many(
                    *self._keys, self.key_id, self.blocks, checked, nonces
                )
            ]
        return [self.encrypt(x) for x in checked]

    def decrypt(self, ct: Buffer) -> int:
        if not isinstance(ct, bytes | bytearray | memoryview):
            raise CiphertextError(f"an ORE ciphertext must be bytes, not {type(ct).__name__}")
        data = bytes(ct)
        if not data or data[0] != self.tag:
            raise CiphertextError("not an ORE ciphertext (wrong layer tag)")
        if len(data) != self.width:
            raise CiphertextError("ORE ciphertext has the wrong width for this column")
        if data[1:HEAD] != self.key_id:
            raise CiphertextError("ORE ciphertext does not decrypt under this key")
        digits = bytearray()
        perms: list[tuple[np.ndarray, np.ndarray]] = []
        for i in range(self.blocks):  # each block's permutation is keyed by those before
            seed = self._perm_prf.encryptor().update(_prf_input(_PERM, i, bytes(digits)))
            perms.append(_permutation(seed))
            digits.append(int(perms[i][1][data[HEAD + LEFT_BLOCK * i + 16]]))
        if self._left(bytes(digits), perms) != data[HEAD : HEAD + LEFT_BLOCK * self.blocks]:
            raise CiphertextError("ORE ciphertext does not decrypt under this key")
        return int.from_bytes(digits, "big")

    def decrypt_many(self, cts: Sequence[Buffer]) -> list[int]:
        return [self.decrypt(c) for c in cts]


def compare(a: Buffer, b: Buffer) -> int:
    """-1, 0 or 1 as ``a``'s plaintext is below, equal to or above ``b``'s: what the
    server computes (``adaptive.ore_cmp``), from the stored forms alone, without a key."""
    a, b = bytes(a), bytes(b)
    if len(a) != len(b) or len(a) < stored_width(1) or (len(a) - HEAD - NONCE) % 49:
        raise CiphertextError("ORE ciphertexts of different widths do not compare")
    if a[1:HEAD] != b[1:HEAD]:  # two keys: ordered by key id, a total order all the same
        return -1 if a[1:HEAD] < b[1:HEAD] else 1
    blocks = (len(a) - HEAD - NONCE) // 49
    left_end = HEAD + LEFT_BLOCK * blocks
    if a[HEAD:left_end] == b[HEAD:left_end]:
        return 0
    i = next(
        i
        for i in range(blocks)
        if a[HEAD + LEFT_BLOCK * i : HEAD + LEFT_BLOCK * (i + 1)]
        != b[HEAD + LEFT_BLOCK * i : HEAD + LEFT_BLOCK * (i + 1)]
    )
    key = a[HEAD + LEFT_BLOCK * i : HEAD + LEFT_BLOCK * i + 16]
    h = a[HEAD + LEFT_BLOCK * i + 16]
    nonce = b[left_end : left_end + NONCE]
    byte = b[left_end + NONCE + RIGHT_BLOCK * i + (h >> 3)]
    return 1 if ((byte >> (h & 7)) & 1) ^ _h(key, nonce) else -1
