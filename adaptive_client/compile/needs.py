"""What compiling a statement can find it needs before it can run, as data.

The compiler never adapts the database: where a statement needs two columns under one
key (:class:`JoinNeed`) or an onion not built yet (:class:`BuildNeed`), it returns the
need in the plan, and the connection meets it -- a join adjustment (joins.py), a build
(ondemand.py) -- then compiles the statement again.  A :class:`FieldNeed` is a want, not a
need: the plan runs without it, and better once it is met.
Each need names its columns by plain names, so that it survives a catalog reload.
An :class:`ExpressionNeed` (and a :class:`BuildNeed` of a pending Sum onion) is the
online design's want (design_wants.py), met the same way as a field's.
(A peel's need, an onion above the layer an operator requires, is ``rewrite.plan.Need``.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..catalog.metadata import ColumnMeta
from ..catalog.onions import STACKS, Cap, Onion, capabilities


@dataclass(frozen=True)
class JoinNeed:
    """Two columns' onions must be brought under one ``key`` (DET or OPE) before the
    statement can compare them on the server.  Sides are named by plain names, so that
    the need survives a catalog reload."""

    onion: Onion
    key: str
    a: tuple[str, str]  # (table, column)
    b: tuple[str, str]

    def describe(self) -> str:
        return f"{'.'.join(self.a)} = {'.'.join(self.b)} ({self.onion} onion, {self.key} key)"


@dataclass(frozen=True)
class BuildNeed:
    """``table.column`` must have its ``onion`` built before the statement can run.
    Named by plain names, so that the need survives a catalog reload."""

    table: str
    column: str
    onion: Onion
    # the layer to build it at, the one the statement needs it at (None: the start
    # layer recorded at CREATE TABLE): built there, it is not peeled at once after
    layer: str | None = None

    def describe(self) -> str:
        return f"{self.table}.{self.column}'s {self.onion} onion"


@dataclass(frozen=True)
class FieldNeed:
    """A jsonb field (``expression``: ``attrs ->> 'sku'`` over ``table``'s ``column``)
    a statement filters, orders, groups or joins by, which an onion of its own would let
    the server do: built on first use where adaptations may run (adapt/field_onions.py),
    else the statement runs as compiled."""

    table: str
    column: str
    expression: str

    def describe(self) -> str:
        return f"{self.table}'s field onion for {self.expression}"


@dataclass(frozen=True)
class ExpressionNeed:
    """A precomputed expression the online design would add to ``table``
    (compile/design_wants.py): a hidden column of ``type`` holding ``expression`` (over
    the row's own columns, canonical text) in ``onions``, which would let the server sum,
    group, compare or filter by it.  A want, like :class:`FieldNeed`."""

    table: str
    expression: str
    type: str
    onions: tuple[Onion, ...]

    def describe(self) -> str:
        kinds = ", ".join(o.value for o in self.onions)
        return f"{self.table}'s precomputed {self.expression} ({kinds})"


# what the online design asks for: a column's pending Sum onion, or an expression's onions
DesignNeed = BuildNeed | ExpressionNeed


def pending_offering(col: ColumnMeta, cap: Cap) -> Onion | None:
    """The onion of ``col`` not built yet that would offer ``cap`` (at some layer its
    floor allows).  Not a pending Sum onion: a sum the server cannot compute is computed
    by the client, and the Sum onion is the online design's want (design_wants.py),
    never a need."""
    for onion in col.on_demand:
        if onion is not Onion.SUM and _offered(col, onion, cap, _allowed_layers(col, onion)):
            return onion
    return None


def pending_below_floor(col: ColumnMeta, cap: Cap) -> Onion | None:
    """The onion of ``col`` not built yet that offers ``cap`` only below the floor it
    will have: the statement is refused before anything is built, as for a stored onion."""
    for onion in col.on_demand:
        if (
            onion is not Onion.SUM
            and _offered(col, onion, cap, STACKS[onion])
            and not _offered(col, onion, cap, _allowed_layers(col, onion))
        ):
            return onion
    return None


def _offered(col: ColumnMeta, onion: Onion, cap: Cap, layers: Sequence[str]) -> bool:
    return any(cap in capabilities(onion, layer, col.encoding.ope_exact) for layer in layers)


def _allowed_layers(col: ColumnMeta, onion: Onion) -> Sequence[str]:
    """The layers a pending onion may reach: from its start down to its floor."""
    stack = STACKS[onion]
    pending = col.on_demand[onion]
    start, floor = pending.get("start"), pending.get("floor")
    first = stack.index(start) if start in stack else 0
    last = stack.index(floor) if floor in stack else len(stack) - 1
    return stack[first : last + 1]


__all__ = [
    "BuildNeed",
    "DesignNeed",
    "ExpressionNeed",
    "FieldNeed",
    "JoinNeed",
    "pending_below_floor",
    "pending_offering",
]
