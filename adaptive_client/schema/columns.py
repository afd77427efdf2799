"""A declared column made into its onions: layers, floors, keys and sequence.

CREATE TABLE and ALTER TABLE ... ADD COLUMN / TYPE build each column of a
:class:`~adaptive_client.catalog.tablespec.TableSpec` here (:func:`build_column`): the onions
its type and configuration ask for (those built on first use only recorded, see
ondemand.py), each at its start layer under fresh keys -- a join group's or the
referenced column's where it shares them, DET from the start on a key -- and the
server sequence of a serial or identity column (:func:`create_sequence`).  Nothing is
written to the table here.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql
from sqlglot import exp

from ..adapt.onion_storage import new_onion_column, onion_anon
from ..catalog import containment, foreign_keys, ord_layers, recipes
from ..catalog.config import Config
from ..catalog.keys import new_key
from ..catalog.metadata import Catalog, ColumnMeta, TableMeta
from ..catalog.onions import Onion, layer_index, stack_for, sum_layer_for
from ..catalog.tablespec import SequenceSpec, TableSpec
from ..errors import ConfigError, LayerFloorViolation
from ..values.collation import Collation, column_collation
from ..values.encodings import encoding_for
from . import sequence_objects
from .context import DdlContext


def _default_onions(col_type: Any, config: Config) -> tuple[Onion, ...]:
    encoding = encoding_for(col_type)
    supported = encoding.onions
    order = [Onion.EQ, Onion.ORD, Onion.SUM, Onion.SEARCH, Onion.SUBSTR]
    out = []
    storable = getattr(recipes, "EXACT_ONIONS", False)
    # (a type with no other onion -- json -- keeps its Exact one whatever the setting:
    # it is where the value is)
    only_exact = not (supported & {o.value for o in order})
    if encoding.exact_display and (config.exact is not False or only_exact):
        if config.exact and not storable:
            raise ConfigError(
                f"exact = true: this client cannot store an Exact onion for {col_type.sql()}"
            )
        if storable:
            out.append(Onion.EXACT)
    for o in order:
        if o.value not in supported:
            continue
        if o is Onion.SUM and not (config.sum or config.design_budget):
            continue  # (with online design: pending, built when a sum first wants it)
        if o is Onion.SEARCH and not config.search:
            continue
        if o is Onion.SUBSTR and not config.substring:
            continue
        out.append(o)
    # jsonb, and arrays of a type with equality: containment and membership tokens
    if config.containment and containment.offers(encoding):
        out.append(Onion.CONTAIN)
    return tuple(out)


def build_column(
    conn: psycopg.Connection[Any],
    catalog: Catalog,
    config: Config,
    spec: TableSpec,
    cname: str,
    keyed: set[str],
    shared: dict[str, tuple[dict[str, bytes], str]],
    taken: set[str] | None = None,
) -> ColumnMeta:
    """One declared column, with its onions, layers and keys (nothing written yet).
    ``taken``: the table's onion column names in use (a renamed column keeps its own)."""
    name = spec.name
    taken = taken or set()
    ccfg = config.column(name, cname)
    onions = ccfg.onions or _default_onions(spec.types[cname], config)
    onions = foreign_keys.onions_kept(spec, cname, onions)
    col = ColumnMeta(
        cname,
        spec.types[cname],
        spec.nullable[cname],
        {},
        spec.defaults.get(cname),
        ccfg.join_group,
    )
    col.joinable = ccfg.joins
    col.udt, col.from_domain = spec.udts.get(cname), list(spec.from_domain.get(cname, []))
    if cname in spec.runtime:
        col.default_sql, col.default_volatile = spec.runtime[cname]
    collation = spec.collations.get(cname)
    col.collation = (
        collation
        if isinstance(collation, Collation)
        else column_collation(conn, (col.type.element or col.type).name, collation)
    )
    enc = col.encoding
    group_keys = catalog.group_keys(conn, ccfg.join_group) if ccfg.join_group else {}
    if cname in shared:
        if ccfg.join_group:
            raise ConfigError(
                f"{name}.{cname}: a foreign key column shares the keys of the column it "
                f"references; it cannot also be in join group {ccfg.join_group}"
            )
        group_keys, col.join_group = shared[cname]
    # onions built on first use (ondemand.py): not those sharing keys with other columns
    # (a join group's, a foreign key's), nor one the configuration lists explicitly
    # without asking for that
    lazy = ccfg.on_demand if ccfg.on_demand is not None else config.on_demand
    if ccfg.onions is not None and ccfg.on_demand is None:
        lazy = ()
    if ccfg.on_demand is None:  # (an onion given a start layer is stored from the start)
        lazy = tuple(o for o in lazy if o not in ccfg.start)
    # (nor one a CHECK constraint compares: it is enforced over the onion from the start)
    checked = {c.name.lower() for _, e, _ in spec.checks for c in e.find_all(exp.Column)}
    if cname in shared or ccfg.join_group or cname in checked:
        lazy = ()
    # a Sum onion the configuration did not ask for is the online design's to build
    # (compile/design_wants.py): pending, or not at all where nothing may be pending
    if Onion.SUM in onions and ccfg.onions is None and not config.sum:
        refused = ccfg.on_demand == () or cname in shared or ccfg.join_group or cname in checked
        if refused:
            onions = tuple(o for o in onions if o is not Onion.SUM)
        else:
            lazy = (*lazy, Onion.SUM)
    for onion in onions:
        offered = containment.offers(enc) if onion is Onion.CONTAIN else onion.value in enc.onions
        if onion not in (Onion.SINGLE, Onion.EXACT) and not offered:
            raise ConfigError(f"{name}.{cname}: type {col.type.sql()} has no {onion} onion")
        # (a declared column's values may reach its type's bound: HOM past ASHE's 96 bits;
        # a precomputed column's type is a bound on paper, ASHE as configured)
        sum_layer = (
            sum_layer_for(enc.hom_bound, config.sum_layer)
            if cname in spec.order
            else (config.sum_layer)
        )
        stack = stack_for(onion, ccfg.layer, sum_layer)
        start = ccfg.start.get(onion, stack[0])
        floor = ccfg.floor.get(onion)
        if onion is Onion.EQ and (cname in keyed or cname in shared):
            start = "DET"  # keys are enforced on DET ciphertexts (documented leakage)
            if floor is not None and layer_index(stack, "DET") > layer_index(stack, floor):
                raise LayerFloorViolation(
                    f"{name}.{cname}: PRIMARY KEY / UNIQUE / REFERENCES needs its Eq onion "
                    f"at DET, below its floor {floor}"
                )
        if floor is not None and layer_index(stack, floor) < layer_index(stack, start):
            raise ConfigError(f"{name}.{cname}: floor {floor} is above the start {start}")
        ord_layer = config.ord_layer_of(name, cname)
        if onion is Onion.ORD and ord_layer == "ORE":
            ord_layers.require_type(conn, f"{name}.{cname}")
        if onion in lazy and len(onions) > 1:
            col.on_demand[onion] = {"start": start, "floor": floor}
            if onion is Onion.ORD and ord_layer != "OPE":
                col.on_demand[onion]["ord_layer"] = ord_layer
            continue
        anon = onion_anon(catalog, name, cname, onion, taken)
        col.onions[onion] = new_onion_column(
            conn, catalog, config.hom_bits, col, onion, stack, start, floor, anon, group_keys,
            ord_layer,
        )  # fmt: skip
    if cname in spec.sequences:
        seq = spec.sequences[cname]
        col.sequence = f"{name}_{cname}_seq"
        col.identity = seq.identity
        # a name of its own for each sequence ever created: the blocks of values other
        # connections drew from a dropped table's sequence never match a new table's
        col.sequence_anon = column_sequence_anon(catalog, name, cname)
    elif cname in spec.drawn_from:
        drawn = sequence_objects.named(catalog, spec.drawn_from[cname])
        col.sequence, col.sequence_anon = drawn.name, drawn.anon
    return col


def column_sequence_anon(catalog: Catalog, table: str, column: str) -> str:
    """A new server name for a serial or identity column's sequence: one of its own each
    time (the values other connections drew from an earlier one never match it)."""
    return catalog.root.anonymize("sequence", table, column, new_key(8).hex())


def create_sequence(ctx: DdlContext, meta: TableMeta, col: ColumnMeta, seq: SequenceSpec) -> None:
    """The server sequence of a serial or identity column, owned by the column (dropped
    with it, restarted by TRUNCATE ... RESTART IDENTITY)."""
    assert col.sequence_anon is not None
    ctx.conn.execute(
        sql.SQL("CREATE SEQUENCE {} AS {} {} OWNED BY {}.{}").format(
            sql.Identifier(col.sequence_anon),
            sql.SQL(col.type.sql()),
            sql.SQL(" ".join(seq.options)),
            sql.Identifier(meta.anon),
            sql.Identifier(next(iter(col.onions.values())).anon),
        )
    )
    ctx.runtime.reset(col.sequence_anon)  # (a name freed by a dropped table may be reused)


__all__ = ["build_column", "column_sequence_anon", "create_sequence"]
