"""PLAIN: no encryption (a Single onion the DBA chose to leave in the clear)."""

from __future__ import annotations

from typing import Any, ClassVar

from .base import Scheme


class PLAIN(Scheme):
    name: ClassVar[str] = "PLAIN"
    tag: ClassVar[int] = 0
    operators: ClassVar[frozenset[str]] = frozenset({"*"})
    strength: ClassVar[int] = 0
    key_size: ClassVar[int] = 0

    def encrypt(self, value: Any) -> Any:
        return value

    def decrypt(self, value: Any) -> Any:
        return value
