"""PLAIN: no encryption, for a Single onion the DBA chose to leave in the clear.

Leaks: everything.  Adaptive peeling never goes down to PLAIN; only an explicit
configuration stores a column this way.  ``operators`` is ``{"*"}``: every operator.
"""

from __future__ import annotations

from typing import Any, ClassVar

from .base import Scheme

ALL_OPERATORS = "*"


class PLAIN(Scheme):
    """The identity layer: the server sees (and can compute anything on) the value."""

    name: ClassVar[str] = "PLAIN"
    tag: ClassVar[int] = 0
    operators: ClassVar[frozenset[str]] = frozenset({ALL_OPERATORS})
    strength: ClassVar[int] = 0
    key_size: ClassVar[int] = 0

    def __repr__(self) -> str:
        return "PLAIN()"

    def encrypt(self, value: Any) -> Any:
        return value

    def decrypt(self, value: Any) -> Any:
        return value

    def encrypt_many(self, values: list[Any]) -> list[Any]:
        return list(values)

    def decrypt_many(self, values: list[Any]) -> list[Any]:
        return list(values)
