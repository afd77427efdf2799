"""Counters the client keeps about its own work (exposed as ``Connection.stats``).

Encryptions and decryptions are counted per scheme (OPE apart from the rest, as in the
source paper's Table I) and per statement kind; client-side crypto time is accumulated
per statement kind; peels are counted.  Counting is cheap (dict increments).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Stats:
    encryptions: Counter[str] = field(default_factory=Counter)
    decryptions: Counter[str] = field(default_factory=Counter)
    by_statement: dict[str, Counter[str]] = field(default_factory=dict)
    crypto_seconds: dict[str, float] = field(default_factory=dict)
    statements: Counter[str] = field(default_factory=Counter)
    peels: int = 0
    retries: int = 0
    locked_reuse: int = 0  # RMW updates served from rows locked by SELECT ... FOR UPDATE
    current: str = "other"

    def count(self, scheme: str, decrypt: bool = False, n: int = 1) -> None:
        (self.decryptions if decrypt else self.encryptions)[scheme] += n
        key = f"{'dec' if decrypt else 'enc'}:{scheme}"
        per = self.by_statement.get(self.current)
        if per is None:
            per = self.by_statement[self.current] = Counter()
        per[key] += n

    @contextmanager
    def statement(self, kind: str) -> Iterator[None]:
        prev, self.current = self.current, kind
        self.statements[kind] += 1
        try:
            yield
        finally:
            self.current = prev

    @contextmanager
    def crypto(self) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            key = self.current
            self.crypto_seconds[key] = self.crypto_seconds.get(key, 0.0) + time.perf_counter() - t0

    def reset(self) -> None:
        self.encryptions.clear()
        self.decryptions.clear()
        self.by_statement.clear()
        self.crypto_seconds.clear()
        self.statements.clear()
        self.peels = 0
        self.retries = 0
        self.locked_reuse = 0

    def as_dict(self) -> dict[str, object]:
        return {
            "encryptions": dict(self.encryptions),
            "decryptions": dict(self.decryptions),
            "by_statement": {k: dict(v) for k, v in self.by_statement.items()},
            "crypto_seconds": dict(self.crypto_seconds),
            "statements": dict(self.statements),
            "peels": self.peels,
            "retries": self.retries,
            "locked_reuse": self.locked_reuse,
        }


STATS = Stats()
