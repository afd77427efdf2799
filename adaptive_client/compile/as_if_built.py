"""The catalog as it would be once every onion still to be built on first use is built.

A statement that needs such an onion is compiled twice: once to learn what it needs (the
build), and -- before anything is built -- once more over this catalog, so that a
statement refused for another reason (a construct the client does not support, a layer
below a floor) is refused *before* its build: a refused statement changes nothing on
the server, not even the onions it would have needed.  The plan over it also says at
which layer the statement needs each onion (built there, not peeled after) and what the
online design wants of the same tables (built in the same pass).  A third compile, over
the catalog :func:`without_pending` gives, is the plan that runs where the build cannot
(inside a transaction): the statement answered with the onions stored now.

Each pending onion (not a Sum onion: the online design's, never a need) appears at the
start layer and with the floor recorded at CREATE TABLE, under throwaway keys: the plan
compiled over it is never run, only whether it compiles matters.  The catalog itself is
left as it is (the tables holding pending onions are copied, with copied columns).
"""

from __future__ import annotations

import copy
import secrets
from collections.abc import Callable

from ..catalog.metadata import Catalog
from ..catalog.onions import STACKS, Onion
from ..catalog.table_meta import ColumnMeta, OnionColumn
from .needs import BuildNeed
from .plan import Compiled

_ANON = "as_if_built_"


def as_if_built(catalog: Catalog) -> Catalog:
    """A shallow copy of ``catalog`` whose tables have their pending onions built."""
    return _with_columns(catalog, _built)


def without_pending(catalog: Catalog) -> Catalog:
    """A shallow copy of ``catalog`` whose tables have no onion left to build on first
    use: what a statement can do with the onions stored now (a sort the client finishes,
    split execution), for where a build cannot run now (inside a transaction)."""
    return _with_columns(catalog, _unbuilt)


def _with_columns(catalog: Catalog, change: Callable[[ColumnMeta], ColumnMeta]) -> Catalog:
    hypothetical = copy.copy(catalog)
    hypothetical.tables = dict(catalog.tables)
    hypothetical.by_anon = dict(catalog.by_anon)
    for name, meta in catalog.tables.items():
        if not any(_pending(c) for c in (*meta.columns.values(), *meta.precomputed.values())):
            continue
        built = copy.copy(meta)
        built.columns = {n: change(c) for n, c in meta.columns.items()}
        built.precomputed = {n: change(c) for n, c in meta.precomputed.items()}
        hypothetical.tables[name] = built
        hypothetical.by_anon[meta.anon] = built
    return hypothetical


def _pending(col: ColumnMeta) -> list[Onion]:
    return [o for o in col.on_demand if o is not Onion.SUM]


def _unbuilt(col: ColumnMeta) -> ColumnMeta:
    pending = _pending(col)
    if not pending:
        return col
    unbuilt = copy.copy(col)
    unbuilt.on_demand = {o: v for o, v in col.on_demand.items() if o not in pending}
    return unbuilt


def _built(col: ColumnMeta) -> ColumnMeta:
    pending = _pending(col)
    if not pending:
        return col
    built = copy.copy(col)
    built.onions = dict(col.onions)
    built.on_demand = {o: v for o, v in col.on_demand.items() if o not in pending}
    for onion in pending:
        record = col.on_demand[onion]
        stack = STACKS[onion]
        built.onions[onion] = OnionColumn(
            onion=onion,
            anon=f"{_ANON}{onion.value.lower()}",
            stack=stack,
            layer=str(record.get("start") or stack[0]),
            floor=record.get("floor"),
            keys={layer: secrets.token_bytes(32) for layer in stack if layer != "PLAIN"},
            ope_bits=col.encoding.ope_bits,
            ope_exact=col.encoding.ope_exact,
            ord_scheme=str(record.get("ord_layer") or "OPE") if onion is Onion.ORD else "OPE",
        )
    return built


def builds_at_layers(plan: Compiled) -> list[BuildNeed]:
    """The onions a plan of kind "build" needs built: each one the compile over the
    as-if catalog peels, at the layer it peels it to (built there, not peeled after),
    and the plan's own builds at their start layers where it does not."""
    at: dict[tuple[str, str, Onion], str] = {}
    for need in plan.as_if.needs if plan.as_if is not None else []:
        if need.onion.anon.startswith(_ANON):
            at[(need.table.name, need.column.name, need.onion.onion)] = need.layer
    builds = [
        BuildNeed(table, column, onion, layer) for (table, column, onion), layer in at.items()
    ]
    return builds + [b for b in plan.builds if (b.table, b.column, b.onion) not in at]


__all__ = ["as_if_built", "builds_at_layers", "without_pending"]
