r"""SEARCH: keyed word tokens for whole-word search.

A text is stored as the sorted set of its words' tokens, each the first 16 bytes of
``HMAC-SHA256(key, word as UTF-8)``, in a ``bytea[]`` column the server indexes with GIN.
Words are maximal runs of ``\w`` (Unicode letters, digits and ``_``), which on ASCII
text are exactly the words PostgreSQL's ``\m...\M`` regex boundaries delimit; so
``col ~ '\mword\M'`` becomes ``col @> ARRAY[token(word)]``.  Matching is case-sensitive,
as ``~`` is.

Leaks: which rows share a word (and, once a word is searched for, which rows contain it)
and how many distinct words each row has; not the words nor their order or repetitions.
The operator this layer enables is named ``WORD`` (whole-word regular-expression match).
"""

from __future__ import annotations

import hmac
import re
from typing import ClassVar

from ..errors import ConfigError, EncodingError
from .base import Scheme

_WORD = re.compile(r"\w+")
TOKEN_SIZE = 16
# the most word tokens a SEARCH object remembers (a text's words repeat across rows: the
# HMAC of each is computed once); when full it starts over
_MEMO_LIMIT = 50_000


class SEARCH(Scheme):
    """HMAC-SHA256 word tokens: reveals repeated words across rows, not the words."""

    name: ClassVar[str] = "SEARCH"
    tag: ClassVar[int] = 0
    operators: ClassVar[frozenset[str]] = frozenset({"WORD"})
    strength: ClassVar[int] = 2
    key_size: ClassVar[int] = 32

    def __init__(self, key: bytes | bytearray | memoryview) -> None:
        if len(key) != self.key_size:
            raise ConfigError("SEARCH needs a 256-bit key")
        self._key = bytes(key)
        self._memo: dict[str, bytes] = {}
        # keyed once: a token is a copy of it, fed the word (no key schedule per word)
        self._hmac = hmac.new(self._key, digestmod="sha256")

    def __repr__(self) -> str:
        return "SEARCH(<key hidden>)"

    def _token(self, word: str) -> bytes:
        token = self._memo.get(word)
        if token is None:
            mac = self._hmac.copy()
            mac.update(word.encode("utf-8"))
            token = mac.digest()[:TOKEN_SIZE]
            if len(self._memo) >= _MEMO_LIMIT:
                self._memo.clear()
            self._memo[word] = token
        return token

    def token(self, word: str) -> bytes:
        """The token of one word; anything but a single ``\\w+`` run is an EncodingError."""
        if not isinstance(word, str) or not _WORD.fullmatch(word):
            raise EncodingError("a search word must be one run of letters, digits or _")
        try:
            return self._token(word)
        except UnicodeEncodeError:
            raise EncodingError("a search word must be valid Unicode text") from None

    def tokens(self, text: str) -> list[bytes]:
        """The sorted distinct tokens of the words of ``text``."""
        if not isinstance(text, str):
            raise EncodingError(f"SEARCH indexes text, not {type(text).__name__}")
        try:
            return sorted({self._token(w) for w in _WORD.findall(text)})
        except UnicodeEncodeError:
            raise EncodingError("text must be valid Unicode (no lone surrogates)") from None
