r"""SEARCH: keyed word tokens for whole-word search.

A text is stored as the sorted set of its words' tokens, ``HMAC-SHA256(key, word)[:16]``
(words are maximal runs of ``\w``), in a ``bytea[]`` column the server can index with
GIN.  ``col ~ '\mword\M'`` becomes ``col @> ARRAY[token(word)]``.  Leaks: which rows
share a word, and how many distinct words each row has.
"""

from __future__ import annotations

import hmac
import re
from typing import ClassVar

from ..errors import EncodingError
from .base import Scheme

_WORD = re.compile(r"\w+")


class SEARCH(Scheme):
    name: ClassVar[str] = "SEARCH"
    tag: ClassVar[int] = 0
    operators: ClassVar[frozenset[str]] = frozenset({"WORD"})
    strength: ClassVar[int] = 2
    key_size: ClassVar[int] = 32

    def __init__(self, key: bytes) -> None:
        self._key = bytes(key)

    def __repr__(self) -> str:
        return "SEARCH(<key hidden>)"

    def token(self, word: str) -> bytes:
        if not _WORD.fullmatch(word):
            raise EncodingError("a search word must be one run of letters, digits or _")
        return hmac.digest(self._key, word.encode("utf-8"), "sha256")[:16]

    def tokens(self, text: str) -> list[bytes]:
        return sorted({self.token(w) for w in _WORD.findall(text)})
