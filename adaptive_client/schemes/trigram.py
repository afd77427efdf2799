r"""TRIGRAM: keyed tokens of a text's three-character sequences, for LIKE/ILIKE/regex.

A text is stored as the sorted set of the tokens of its *trigrams*: every three
consecutive characters of ``STX + fold(text) + ETX`` (``\x02``, ``\x03`` mark its start and
end, so a prefix or suffix pattern has trigrams of its own), where ``fold`` maps ASCII
letters to lower case.  Trigrams with a character outside ASCII are left out (PostgreSQL's
case mapping of non-ASCII characters depends on the collation: such trigrams could be
missing from a text that matches).  Each token is the first 16 bytes of
``HMAC-SHA256(key, "t" + trigram as UTF-8)``.

A pattern's literal runs (between wildcards) give the trigrams every matching text must
have: the server keeps the rows whose token array contains them all (``@>``, GIN-indexed)
-- a superset of the matches, since the tokens are case-folded and ignore what lies
between the runs -- and the client evaluates the pattern exactly on those rows.

Leaks (once peeled): which rows share a three-character sequence (case-folded), and the
number of distinct trigrams per row (about the text's length); once a pattern is
searched, which rows contain its trigrams.  Much more than word tokens: trigram sets of
a row can be chained into likely substrings by frequency analysis.
"""

from __future__ import annotations

import hmac
from typing import ClassVar

from ..errors import ConfigError, EncodingError
from .base import Scheme

TOKEN_SIZE = 16
START, END = "\x02", "\x03"


def fold(text: str) -> str:
    """ASCII letters to lower case, every other character unchanged."""
    return text.translate(_ASCII_LOWER)


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def trigrams(text: str) -> set[str]:
    """The ASCII trigrams of ``text`` (already marked and folded)."""
    return {g for i in range(len(text) - 2) if (g := text[i : i + 3]).isascii()}


class TRIGRAM(Scheme):
    """HMAC-SHA256 trigram tokens: reveals shared three-character sequences."""

    name: ClassVar[str] = "TRIGRAM"
    tag: ClassVar[int] = 0
    operators: ClassVar[frozenset[str]] = frozenset({"LIKE", "ILIKE", "~"})
    strength: ClassVar[int] = 1
    key_size: ClassVar[int] = 32

    def __init__(self, key: bytes | bytearray | memoryview) -> None:
        if len(key) != self.key_size:
            raise ConfigError("TRIGRAM needs a 256-bit key")
        self._key = bytes(key)

    def __repr__(self) -> str:
        return "TRIGRAM(<key hidden>)"

    def _token(self, gram: str) -> bytes:
        return hmac.digest(self._key, b"t" + gram.encode("utf-8"), "sha256")[:TOKEN_SIZE]

    def tokens(self, text: str) -> list[bytes]:
        """The sorted distinct tokens of the trigrams of ``text``."""
        if not isinstance(text, str):
            raise EncodingError(f"TRIGRAM indexes text, not {type(text).__name__}")
        return sorted({self._token(g) for g in trigrams(START + fold(text) + END)})

    def required(self, runs: list[tuple[str, bool, bool]]) -> list[bytes]:
        """The tokens every text matching a pattern has: ``runs`` are its literal runs,
        each with whether it is anchored at the text's start and at its end."""
        grams: set[str] = set()
        for run, at_start, at_end in runs:
            marked = (START if at_start else "") + fold(run) + (END if at_end else "")
            grams |= trigrams(marked)
        return sorted({self._token(g) for g in grams})
