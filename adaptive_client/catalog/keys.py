"""Master key, key hierarchy and authenticated key wrapping.

Hierarchy::

    master key (256 bits, held by clients only; never stored in the database)
      └─ wraps ─ root key (random, 256 bits; stored wrapped in adaptive.keyring)
            ├─ HKDF "metadata" → AES-GCM key encrypting every metadata row
            └─ HKDF "names"    → HMAC key anonymizing table/column/index names

Per column/onion/layer keys are random and live inside the encrypted (authenticated)
metadata rows.  Rotating the master key therefore re-wraps one row only.  The keyring
also stores a key-check value (KCV) so that a wrong master key is refused
(:class:`~adaptive_client.errors.WrongMasterKey`) before anything is read or written.
"""

from __future__ import annotations

import hmac
import os
from hashlib import sha256
from pathlib import Path

from Crypto.Cipher import AES
from Crypto.Hash import SHA256
from Crypto.Protocol.KDF import HKDF
from Crypto.Random import get_random_bytes

from ..errors import InvalidMasterKey, MasterKeyMissing, MetadataTampered, WrongMasterKey

MASTER_KEY_ENV = "ADAPTIVE_MASTER_KEY"
MASTER_KEY_FILE_ENV = "ADAPTIVE_MASTER_KEY_FILE"
KEY_BYTES = 32
_KCV_LABEL = b"adaptive-client key check v1"


def _hkdf(key: bytes, label: bytes, size: int = 32) -> bytes:
    out = HKDF(key, size, salt=b"adaptive-client", hashmod=SHA256, context=label)
    assert isinstance(out, bytes)
    return out


class MasterKey:
    """A 256-bit master key.  ``repr`` and ``str`` never show the key."""

    __slots__ = ("_key",)

    def __init__(self, key: bytes) -> None:
        if not isinstance(key, bytes | bytearray) or len(key) != KEY_BYTES:
            raise InvalidMasterKey("the master key must be exactly 256 bits (32 bytes)")
        self._key = bytes(key)

    def __repr__(self) -> str:
        return "MasterKey(<hidden>)"

    __str__ = __repr__

    @classmethod
    def generate(cls) -> MasterKey:
        return cls(get_random_bytes(KEY_BYTES))

    @classmethod
    def from_hex(cls, text: str) -> MasterKey:
        try:
            raw = bytes.fromhex(text.strip())
        except ValueError:
            raise InvalidMasterKey("the master key is not valid hex") from None
        return cls(raw)

    def hex(self) -> str:
        """The key as hex, for writing a key file.  Handle with care."""
        return self._key.hex()

    def key_check_value(self) -> bytes:
        return hmac.new(_hkdf(self._key, b"kcv"), _KCV_LABEL, sha256).digest()[:16]

    def wrap(self, key: bytes, label: str) -> bytes:
        """Authenticated wrapping (AES-SIV) of a key, bound to ``label``."""
        return wrap_key(_hkdf(self._key, b"wrap", 64), key, label)

    def unwrap(self, wrapped: bytes, label: str) -> bytes:
        return unwrap_key(_hkdf(self._key, b"wrap", 64), wrapped, label)

    def verify(self, kcv: bytes) -> None:
        if not hmac.compare_digest(self.key_check_value(), bytes(kcv)):
            raise WrongMasterKey("the master key does not match this database's key-check value")


def wrap_key(kek: bytes, key: bytes, label: str) -> bytes:
    cipher = AES.new(kek, AES.MODE_SIV)
    cipher.update(label.encode())
    ct, tag = cipher.encrypt_and_digest(key)
    return bytes(tag + ct)


def unwrap_key(kek: bytes, wrapped: bytes, label: str) -> bytes:
    if len(wrapped) < 17:
        raise MetadataTampered(f"wrapped key {label!r} is truncated")
    cipher = AES.new(kek, AES.MODE_SIV)
    cipher.update(label.encode())
    try:
        return bytes(cipher.decrypt_and_verify(bytes(wrapped[16:]), bytes(wrapped[:16])))
    except ValueError:
        raise MetadataTampered(f"wrapped key {label!r} fails authentication") from None


def load_master_key(
    master_key: MasterKey | bytes | str | os.PathLike[str] | None = None,
) -> MasterKey:
    """Resolve the master key from an argument, a key file, or the environment.

    Accepted: a :class:`MasterKey`; 32 raw bytes; a 64-digit hex string; a path to a file
    holding the hex key.  Without an argument: ``ADAPTIVE_MASTER_KEY`` (hex), then
    ``ADAPTIVE_MASTER_KEY_FILE`` (a path).
    """
    if isinstance(master_key, MasterKey):
        return master_key
    if isinstance(master_key, bytes | bytearray):
        return MasterKey(bytes(master_key))
    if isinstance(master_key, os.PathLike):
        return _from_file(Path(master_key))
    if isinstance(master_key, str):
        text = master_key.strip()
        if len(text) == 2 * KEY_BYTES and all(c in "0123456789abcdefABCDEF" for c in text):
            return MasterKey.from_hex(text)
        if Path(text).is_file():
            return _from_file(Path(text))
        raise InvalidMasterKey("the master key must be 64 hex digits or the path of a key file")
    env = os.environ.get(MASTER_KEY_ENV)
    if env:
        return MasterKey.from_hex(env)
    env_file = os.environ.get(MASTER_KEY_FILE_ENV)
    if env_file:
        return _from_file(Path(env_file))
    raise MasterKeyMissing(
        f"no master key: pass master_key=..., or set {MASTER_KEY_ENV} (hex) "
        f"or {MASTER_KEY_FILE_ENV}"
    )


def _from_file(path: Path) -> MasterKey:
    try:
        text = path.read_text().strip()
    except OSError as exc:
        raise InvalidMasterKey(f"cannot read the master key file: {exc.strerror}") from None
    return MasterKey.from_hex(text)


class RootKeys:
    """Keys derived from the unwrapped root key."""

    __slots__ = ("metadata_key", "names_key", "root")

    def __init__(self, root: bytes) -> None:
        self.root = root
        self.metadata_key = _hkdf(root, b"metadata")
        self.names_key = _hkdf(root, b"names")

    def __repr__(self) -> str:
        return "RootKeys(<hidden>)"

    def seal(self, plaintext: bytes, aad: bytes) -> bytes:
        """AES-256-GCM under the metadata key: nonce(12) || tag(16) || ciphertext."""
        nonce = get_random_bytes(12)
        cipher = AES.new(self.metadata_key, AES.MODE_GCM, nonce=nonce)
        cipher.update(aad)
        ct, tag = cipher.encrypt_and_digest(plaintext)
        return bytes(nonce + tag + ct)

    def open(self, sealed: bytes, aad: bytes) -> bytes:
        sealed = bytes(sealed)
        if len(sealed) < 28:
            raise MetadataTampered("a metadata row is truncated")
        cipher = AES.new(self.metadata_key, AES.MODE_GCM, nonce=sealed[:12])
        cipher.update(aad)
        try:
            return bytes(cipher.decrypt_and_verify(sealed[28:], sealed[12:28]))
        except ValueError:
            raise MetadataTampered(
                "a metadata row fails authentication (altered, swapped or replayed)"
            ) from None

    def anonymize(self, kind: str, *parts: str, length: int = 16) -> str:
        """A keyed, deterministic identifier: the provider cannot invert it."""
        msg = "\x1f".join((kind, *parts)).encode()
        digest = hmac.new(self.names_key, msg, sha256).hexdigest()[:length]
        return f"{kind[0]}_{digest}"


def new_key(size: int = KEY_BYTES) -> bytes:
    return get_random_bytes(size)
