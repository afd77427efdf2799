"""Counters the client keeps about its own work (exposed as ``Connection.stats``).

Encryptions and decryptions are counted per scheme (OPE apart from the rest, as in the
source paper's Table I) and per statement kind; client-side crypto time is accumulated
per statement kind; peels are counted, and the statements compiled (a plan cache miss:
a repeated statement compiles nothing).  Counting is cheap: what a statement counts is
a record counted in a dict, added up when the counters are read.

Each connection has its own :class:`Stats`.  The modules that count write to
:data:`STATS`, which stands for the statistics of the connection whose statement the
current thread (or asyncio worker) is running: the connection binds them
(:func:`bind`) as it starts a statement, a commit or a rollback, whatever thread calls
it.  Outside any connection's work, :data:`STATS` is a process-wide :class:`Stats`.
"""

from __future__ import annotations

import threading
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
    statements: Counter[str] = field(default_factory=Counter)
    crypto_seconds: dict[str, float] = field(default_factory=dict)
    peels: int = 0
    retries: int = 0
    locked_reuse: int = 0  # RMW updates served from rows locked by SELECT ... FOR UPDATE
    compilations: int = 0  # statements compiled (a plan cache miss: none for a repeat)
    current: str = "other"
    # split statements: rows and bytes shipped to the client, the newest last
    residual: list[Shipped] = field(default_factory=list)
    residual_rows: int = 0
    residual_bytes: int = 0
    # Encryptions and decryptions as counted, not yet added up: every value a statement
    # binds or reads is counted, alike from one run of a statement to the next, and one
    # count of a record (what, statement kind, schemes, numbers) costs a fraction of
    # adding to three counters; the counters add the records up when read (``_fold``).
    _pending: dict[tuple[Any, ...], int] = field(default_factory=dict, repr=False)
    _encryptions: Counter[str] = field(default_factory=Counter, repr=False)
    _decryptions: Counter[str] = field(default_factory=Counter, repr=False)
    _by_statement: dict[str, Counter[str]] = field(default_factory=dict, repr=False)
    _counting: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _folding: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def encryptions(self) -> Counter[str]:
        """Encryptions per scheme."""
        self._fold()
        return self._encryptions

    @property
    def decryptions(self) -> Counter[str]:
        """Decryptions per scheme."""
        self._fold()
        return self._decryptions

    @property
    def by_statement(self) -> dict[str, Counter[str]]:
        """Per statement kind, ``enc:SCHEME`` and ``dec:SCHEME`` counts."""
        self._fold()
        return self._by_statement

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

    def _logged(self, record: tuple[Any, ...]) -> None:
        # (under a lock: another thread may count to the same statistics -- the
        # PROCESS ones, a connection's while another thread reads them -- and a fold
        # must not miss a count made while it takes the records)
        with self._counting:
            pending = self._pending
            pending[record] = pending.get(record, 0) + 1
            full = len(pending) >= _PENDING_LIMIT
        if full:
            self._fold()

    def count(self, scheme: str, decrypt: bool = False, n: int = 1) -> None:
        self._logged((_COUNT, self.current, scheme, decrypt, n))

    def decrypted(self, scheme: str, rnd: bool) -> None:
        """:meth:`count` of one value's decryption: ``scheme``'s, after RND's if ``rnd``."""
        self._logged((_DECRYPTED, self.current, scheme, rnd))

    def opened_columns(
        self, schemes: Sequence[str | None], counts: Sequence[tuple[int, int]]
    ) -> None:
        """:meth:`count` of the decryptions of a result the compiled layer opened: per
        column its scheme and (values opened, those of them after RND's), in one call."""
        self._logged((_OPENED, self.current, tuple(schemes), tuple(counts)))

    def encrypted_row(self, det: int, ope: int, search: int, rnd: int) -> None:
        """:meth:`count` of one row's encryptions at once (a single-row INSERT's)."""
        self._logged((_ROW, self.current, det, ope, search, rnd))

    def _fold(self) -> None:
        """Add the records counted so far to the counters, each once, times its number."""
        if not self._pending:
            return
        with self._folding:
            with self._counting:
                pending, self._pending = self._pending, {}
            for record, times in pending.items():
                per = self._by_statement.get(record[1])
                if per is None:
                    per = self._by_statement[record[1]] = Counter()
                _FOLD[record[0]](self, per, record, times)

    def _fold_count(self, per: Counter[str], record: tuple[Any, ...], times: int) -> None:
        _, _, scheme, decrypt, n = record
        (self._decryptions if decrypt else self._encryptions)[scheme] += n * times
        names = _DEC if decrypt else _ENC
        per[names.get(scheme) or f"{'dec' if decrypt else 'enc'}:{scheme}"] += n * times

    def _fold_decrypted(self, per: Counter[str], record: tuple[Any, ...], times: int) -> None:
        _, _, scheme, rnd = record
        if rnd:
            self._decryptions["RND"] += times
            per["dec:RND"] += times
        self._decryptions[scheme] += times
        per[_DEC.get(scheme) or f"dec:{scheme}"] += times

    def _fold_opened(self, per: Counter[str], record: tuple[Any, ...], times: int) -> None:
        after_rnd = 0
        for scheme, (n, rnd) in zip(record[2], record[3], strict=True):
            if n:
                name = scheme or ""
                self._decryptions[name] += n * times
                per[_DEC.get(name) or f"dec:{name}"] += n * times
                after_rnd += rnd * times
        if after_rnd:
            self._decryptions["RND"] += after_rnd
            per["dec:RND"] += after_rnd

    def _fold_row(self, per: Counter[str], record: tuple[Any, ...], times: int) -> None:
        for scheme, n in zip(("DET", "OPE", "SEARCH", "RND"), record[2:], strict=True):
            if n:
                self._encryptions[scheme] += n * times
                per[_ENC[scheme]] += n * times

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
        self._fold()
        self._encryptions.clear()
        self._decryptions.clear()
        self._by_statement.clear()
        self.crypto_seconds.clear()
        self.statements.clear()
        self.peels = 0
        self.retries = 0
        self.locked_reuse = 0
        self.compilations = 0
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
            "compilations": self.compilations,
            "residual_rows": self.residual_rows,
            "residual_bytes": self.residual_bytes,
        }


# what a log record counts (its first item)
_COUNT, _DECRYPTED, _OPENED, _ROW = range(4)
# distinct records kept before they are added up, whatever reads the counters
_PENDING_LIMIT = 1024

# how each kind of record adds up
_FOLD = (Stats._fold_count, Stats._fold_decrypted, Stats._fold_opened, Stats._fold_row)

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
