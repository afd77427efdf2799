"""The session settings a statement compiles under: everything compile reads besides the
statement and the catalog snapshot.

Compile is a function of ``(statement, catalog, settings)``.  What the settings know of
the database (its default collation, its case mapping, the collation a ``COLLATE
"name"`` names) is given as values or as callables the caller supplies: compile calls
one only where the statement needs it (a connection reads each from the server once),
and without one the statement compiles as on a database that has none to tell.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import TypeVar

from ..values.collation import (
    COLLATION_NAMED,
    DATABASE_CASE_MAPPING,
    DATABASE_COLLATION,
    CaseMapping,
    Collation,
)


@dataclass(frozen=True)
class KeptRows:
    """Rows read by primary key that are kept for a later ``UPDATE ... SET x = x + k``
    of the same row in the transaction, so that it needs no read of its own
    (compile/select.py): the rows of the tables the session updates so, and of each only
    the columns those updates read (``tables``: the table's name and those columns'),
    learned as the updates are compiled.  A ``SELECT ... FOR UPDATE`` keeps its row
    (every column where the table is not known yet); a plain read keeps its row only
    where ``snapshot`` -- its transaction runs on one snapshot (REPEATABLE READ,
    SERIALIZABLE) and may write -- and only for a known table."""

    snapshot: bool = False
    tables: tuple[tuple[str, frozenset[str]], ...] = ()

    def columns(self, table: str) -> frozenset[str] | None:
        """The columns kept of ``table``'s rows; None where the session has not updated
        it by read-modify-write."""
        for name, columns in self.tables:
            if name == table:
                return columns
        return None

    def same_for(self, other: KeptRows, table: str | None) -> bool:
        """Whether a plan compiled under ``other`` whose reads follow the rule for
        ``table`` (None: for no table: Compiled.kept_table) is the plan under these
        rules too: learning another table's updates changes nothing of it."""
        return self.snapshot == other.snapshot and (
            table is None or self.columns(table) == other.columns(table)
        )

    def learned(self, table: str, reads: frozenset[str]) -> KeptRows:
        """These rules once an update of ``table`` reading ``reads`` is compiled."""
        known = self.columns(table)
        if known is not None and reads <= known:
            return self
        others = tuple(entry for entry in self.tables if entry[0] != table)
        return replace(self, tables=(*others, (table, reads | (known or frozenset()))))


NO_KEPT_ROWS = KeptRows()


@dataclass(frozen=True)
class Settings:
    """``kept_rows``: which rows read by primary key are kept to serve a later
    read-modify-write of that row, and which of their columns (:class:`KeptRows`).
    ``database_collation`` and ``case_mapping``: the database's default
    collation and case mapping (a value, or a callable giving it when first needed);
    ``named_collation``: the collation ``COLLATE "name"`` names (without it only "C" and
    "POSIX" are known); ``json_fields``: how many field onions (``attrs ->> 'k'``) a
    jsonb column may have built on first use (compile/field_onions.py);
    ``design_budget``: per table, the bytes per row the online design may add
    (compile/design_wants.py)."""

    kept_rows: KeptRows = NO_KEPT_ROWS
    database_collation: Collation | Callable[[], Collation] | None = None
    case_mapping: CaseMapping | Callable[[], CaseMapping] | None = None
    named_collation: Callable[[str], Collation] | None = None
    # per jsonb column, the most field onions a statement may ask to be built (0: none)
    json_fields: int = 0
    # online design (design_wants.py): per table, the bytes per row its Sum onions and
    # precomputed expressions built on first use may add (None: no online design)
    design_budget: Callable[[str], int] | None = None


T = TypeVar("T")


# no database to tell: text constants ordered bytewise, no row read kept for an UPDATE
DEFAULT_SETTINGS = Settings()


def _reader(value: T | Callable[[], T] | None) -> Callable[[], T] | None:
    if value is None or callable(value):
        return value
    return lambda: value


@contextlib.contextmanager
def applied(settings: Settings) -> Iterator[None]:
    """The settings visible to the passes that read them (the client engine's text order
    and case mapping), for the duration of one compilation."""
    token = DATABASE_COLLATION.set(_reader(settings.database_collation))
    case_token = DATABASE_CASE_MAPPING.set(_reader(settings.case_mapping))
    named_token = COLLATION_NAMED.set(settings.named_collation)
    try:
        yield
    finally:
        COLLATION_NAMED.reset(named_token)
        DATABASE_CASE_MAPPING.reset(case_token)
        DATABASE_COLLATION.reset(token)


__all__ = ["DEFAULT_SETTINGS", "Settings", "applied"]
