"""CONTAIN: keyed tokens of a value's structural features, for containment and membership.

A value (a ``jsonb`` document, an array) is stored as the sorted set of the tokens of its
*features*, byte strings its column's recipe derives from it
(:mod:`adaptive_client.catalog.containment`: for jsonb each path and each path with its
scalar value, for an array each element).  Each token is the first 16 bytes of
``HMAC-SHA256(key, "c" + feature)``: the ``"c"`` separates these tokens from every other
keyed token of the client even under a shared key (each onion has its own anyway).

The scheme knows nothing of what the features mean: a query's features are derived the
same way, and the server keeps the rows whose token arrays contain them (``@>``,
``<@``, ``&&``, GIN-indexed).  Whether that is a superset of the rows the query asks for
is the recipe's proof, not the scheme's.

Leaks (once peeled): which rows share a feature, and how many distinct features each row
has; once a query ran, which rows hold the features it asked for.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from typing import ClassVar

from ..errors import ConfigError, EncodingError
from .base import Scheme

TOKEN_SIZE = 16
DOMAIN = b"c"
# distinct features remembered per key (paths and common values repeat across rows)
_MEMO_LIMIT = 65_536


class CONTAIN(Scheme):
    """HMAC-SHA256 feature tokens: reveals which rows share a path, value or element."""

    name: ClassVar[str] = "CONTAIN"
    tag: ClassVar[int] = 0
    operators: ClassVar[frozenset[str]] = frozenset({"@>", "<@", "?", "?|", "?&", "&&"})
    strength: ClassVar[int] = 2
    key_size: ClassVar[int] = 32

    def __init__(self, key: bytes | bytearray | memoryview) -> None:
        if len(key) != self.key_size:
            raise ConfigError("CONTAIN needs a 256-bit key")
        self._key = bytes(key)
        self._memo: dict[bytes, bytes] = {}

    def __repr__(self) -> str:
        return "CONTAIN(<key hidden>)"

    def token(self, feature: bytes) -> bytes:
        """The token of one feature."""
        if not isinstance(feature, bytes | bytearray):
            raise EncodingError(f"CONTAIN tokens bytes, not {type(feature).__name__}")
        found = self._memo.get(feature)
        if found is None:
            found = hmac.digest(self._key, DOMAIN + feature, "sha256")[:TOKEN_SIZE]
            if len(self._memo) >= _MEMO_LIMIT:
                self._memo.clear()
            self._memo[bytes(feature)] = found
        return found

    def tokens(self, features: Iterable[bytes]) -> list[bytes]:
        """The sorted distinct tokens of ``features``."""
        token = self.token
        return sorted({token(f) for f in features})
