"""Counters the client keeps about its own work (exposed as ``Connection.stats``).

Encryptions and decryptions are counted per scheme (OPE apart from the rest, as in the
source paper's Table I) and per statement kind; client-side crypto time is accumulated
per statement kind; peels are counted.  Counting is cheap (dict increments).

Each connection has its own :class:`Stats`.  The modules that count write to
:data:`STATS`, which stands for the statistics of the connection whose statement the
current thread (or asyncio worker) is running: the connection binds them
(:func:`bind`) as it starts a statement, a commit or a rollback, whatever thread calls
it.  Outside any connection's work, :data:`STATS` is a process-wide :class:`Stats`.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Shipped:
    """What crossed the network for one client-evaluated (split) statement: per server
    SELECT (``fetches``: a description, rows, bytes of the values received) and in all."""

    statement: str
    fetches: list[tuple[str, int, int]] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return sum(r for _, r, _ in self.fetches)

    @property
    def bytes(self) -> int:
        return sum(b for _, _, b in self.fetches)


# how many split statements' records ``Stats.residual`` keeps (the newest)
RESIDUAL_HISTORY = 100


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
    # split statements: rows and bytes shipped to the client, the newest last
    residual: list[Shipped] = field(default_factory=list)
    residual_rows: int = 0
    residual_bytes: int = 0

    @property
    def last_residual(self) -> Shipped | None:
        return self.residual[-1] if self.residual else None

    def shipped(self, record: Shipped) -> None:
        self.residual.append(record)
        del self.residual[:-RESIDUAL_HISTORY]
        self.residual_rows += record.rows
        self.residual_bytes += record.bytes

    def bound(self) -> Stats:
        """This object (:data:`STATS` gives the current connection's)."""
        return self

    def _statement_counts(self) -> Counter[str]:
        """The counts of the statement kind running now (made at its first count)."""
        per = self.by_statement.get(self.current)
        if per is None:
            per = self.by_statement[self.current] = Counter()
        return per

    def count(self, scheme: str, decrypt: bool = False, n: int = 1) -> None:
        (self.decryptions if decrypt else self.encryptions)[scheme] += n
        key = (_DEC if decrypt else _ENC).get(scheme) or f"{'dec' if decrypt else 'enc'}:{scheme}"
        # (_statement_counts, inlined: this runs for every value bound or read)
        per = self.by_statement.get(self.current)
        if per is None:
            per = self.by_statement[self.current] = Counter()
        per[key] += n

    def decrypted(self, scheme: str, rnd: bool) -> None:
        """:meth:`count` of one value's decryption: ``scheme``'s, after RND's if ``rnd``."""
        per = self._statement_counts()
        if rnd:
            self.decryptions["RND"] += 1
            per["dec:RND"] += 1
        self.decryptions[scheme] += 1
        per[_DEC.get(scheme) or f"dec:{scheme}"] += 1

    def opened_columns(
        self, schemes: Sequence[str | None], counts: Sequence[tuple[int, int]]
    ) -> None:
        """:meth:`count` of the decryptions of a result the compiled layer opened: per
        column its scheme and (values opened, those of them after RND's), in one call."""
        per = self._statement_counts()
        decryptions = self.decryptions
        after_rnd = 0
        for scheme, (n, rnd) in zip(schemes, counts, strict=True):
            if n:
                name = scheme or ""
                decryptions[name] += n
                per[_DEC.get(name) or f"dec:{name}"] += n
                after_rnd += rnd
        if after_rnd:
            decryptions["RND"] += after_rnd
            per["dec:RND"] += after_rnd

    def encrypted_row(self, det: int, ope: int, search: int, rnd: int) -> None:
        """:meth:`count` of one row's encryptions at once (a single-row INSERT's)."""
        per = self._statement_counts()
        enc = self.encryptions
        for scheme, n in (("DET", det), ("OPE", ope), ("SEARCH", search), ("RND", rnd)):
            if n:
                enc[scheme] += n
                per[_ENC[scheme]] += n

    def statement(self, kind: str) -> _Statement:
        """Context: counts a statement of ``kind`` and attributes what happens inside to it."""
        return _Statement(self, kind)

    def crypto_time(self, seconds: float) -> None:
        """Add ``seconds`` of client-side crypto to the current statement kind (what
        :meth:`crypto` measures, for a caller that times itself)."""
        spent = self.crypto_seconds
        key = self.current
        spent[key] = spent.get(key, 0.0) + seconds

    def crypto(self) -> _CryptoTimer:
        """Context: the time inside is client-side crypto of the current statement kind."""
        return _CryptoTimer(self)

    def reset(self) -> None:
        self.encryptions.clear()
        self.decryptions.clear()
        self.by_statement.clear()
        self.crypto_seconds.clear()
        self.statements.clear()
        self.peels = 0
        self.retries = 0
        self.locked_reuse = 0
        self.residual.clear()
        self.residual_rows = 0
        self.residual_bytes = 0

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
            "residual_rows": self.residual_rows,
            "residual_bytes": self.residual_bytes,
        }


_DEC = {scheme: f"dec:{scheme}" for scheme in ("DET", "OPE", "RND", "HOM", "ASHE", "SEARCH")}
_ENC = {scheme: f"enc:{scheme}" for scheme in _DEC}


# Plain classes rather than @contextmanager generators: these wrap every statement, and
# a generator-based context costs several times as much.
class _Statement:
    __slots__ = ("kind", "prev", "stats")

    def __init__(self, stats: Stats, kind: str) -> None:
        self.stats, self.kind, self.prev = stats, kind, stats.current

    def __enter__(self) -> None:
        self.prev, self.stats.current = self.stats.current, self.kind
        self.stats.statements[self.kind] += 1

    def __exit__(self, *exc: object) -> None:
        self.stats.current = self.prev


class _CryptoTimer:
    __slots__ = ("stats", "t0")

    def __init__(self, stats: Stats) -> None:
        self.stats, self.t0 = stats, 0.0

    def __enter__(self) -> None:
        self.t0 = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        seconds = self.stats.crypto_seconds
        key = self.stats.current
        seconds[key] = seconds.get(key, 0.0) + time.perf_counter() - self.t0


# what a thread counts outside any connection's work
PROCESS = Stats()
_CURRENT: ContextVar[Stats] = ContextVar("adaptive_stats", default=PROCESS)

bind = _CURRENT.set  # bind(stats): count the current thread's work to ``stats`` from now on


class _CurrentStats:
    """:data:`STATS`: the current connection's :class:`Stats`, attribute by attribute.
    The counting methods are spelled out (a method lookup through ``__getattr__`` would
    cost each counted value a failed lookup first)."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        return getattr(_CURRENT.get(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(_CURRENT.get(), name, value)

    def bound(self) -> Stats:
        """The current connection's :class:`Stats` itself: for code that reads or sets
        several attributes (each through this proxy is a failed lookup first)."""
        return _CURRENT.get()

    def count(self, scheme: str, decrypt: bool = False, n: int = 1) -> None:
        _CURRENT.get().count(scheme, decrypt, n)

    def decrypted(self, scheme: str, rnd: bool) -> None:
        _CURRENT.get().decrypted(scheme, rnd)

    def encrypted_row(self, det: int, ope: int, search: int, rnd: int) -> None:
        _CURRENT.get().encrypted_row(det, ope, search, rnd)

    def opened_columns(
        self, schemes: Sequence[str | None], counts: Sequence[tuple[int, int]]
    ) -> None:
        _CURRENT.get().opened_columns(schemes, counts)

    def crypto(self) -> _CryptoTimer:
        return _CryptoTimer(_CURRENT.get())

    def crypto_time(self, seconds: float) -> None:
        _CURRENT.get().crypto_time(seconds)


STATS: Stats = _CurrentStats()  # type: ignore[assignment]
