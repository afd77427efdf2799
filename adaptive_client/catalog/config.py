"""Onion configuration (``onion_config/*.toml``): which onions each column gets.

Format::

    [defaults]
    sum = false          # give integer/numeric columns a Sum onion
    sum_layer = "ASHE"   # the Sum onion's scheme: ASHE (pads) or HOM (Paillier)
    search = true        # give string columns a Search onion
    substring = false    # give string columns a Substr onion (trigrams: LIKE, ILIKE, ~)
    containment = true   # give jsonb and array columns a Contain onion (@>, ?, &&, = ANY)
    hom_bits = 2048      # Paillier modulus size
    peel = "client"      # server, client or off (default: the database's recorded mode)
    residual_row_cap = 1000000  # most rows one client-evaluated statement may fetch
    on_demand = ["Ord", "Search"]  # built when a query first needs them (also "Contain")
    statement_log = "statements.jsonl"  # record the statements rewritten (advise reads it)
    server_jit = false   # leave the server's JIT compilation on for this client's statements
    exact = true         # an Exact onion where equal values print apart (numeric's scale)
    json_fields = 8      # per jsonb column, the most field onions (attrs ->> 'k') built
                         # when a statement first filters, orders, groups or joins by one
    design_budget = 256  # online design: the most bytes per row the Sum onions and
                         # precomputed expressions built on first use add to a table
                         # (0 or on_demand = false: none)
    ord_layer = "OPE"    # the Ord onions' order layer: OPE or ORE (ord_layers.py; the
                         # environment's ADAPTIVE_ORD_LAYER where not configured)

    [design_budget]
    lineitem = 512                      # a table's own budget

    [tables.customer.c_id]
    onions = ["Eq", "Ord"]             # any of Eq, Ord, Sum, Search -- or ["Single"]
    start = { Eq = "RND", Ord = "RND" } # starting layer per onion (default: outermost)
    floor = { Eq = "DET" }              # lowest layer the onion may be peeled to
    join_group = "customer_id"          # columns of a group share DET/OPE keys
    joins = true                        # false: never re-keyed to join another column
    on_demand = []                      # this column's onions built on first use
    ord_layer = "ORE"                   # this column's Ord onion: ORE or OPE

    [tables.customer.c_data]
    onions = ["Single"]
    layer = "RND"                       # PLAIN, DET, OPE or RND

    [precomputed.lineitem.disc_price]   # a per-row precomputed onion (precomputed.py)
    expression = "l_extendedprice * (1 - l_discount)"
    type = "numeric(30,4)"
    onions = ["Sum", "Ord"]

A column not listed gets the defaults of its type (see :mod:`adaptive_client.values.encodings`).
The configuration is read when a table is created; afterwards the table's (sealed)
metadata is authoritative.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from . import ord_layers
from .onions import SINGLE_LAYERS, STACKS, SUM_LAYERS, Onion

PEEL_MODES = ("server", "client", "off")


@dataclass(frozen=True)
class ColumnConfig:
    onions: tuple[Onion, ...] | None = None
    start: dict[Onion, str] = field(default_factory=dict)
    floor: dict[Onion, str] = field(default_factory=dict)
    layer: str | None = None  # for a Single onion
    join_group: str | None = None
    joins: bool = True  # may be re-keyed at run time to join a column of another key group
    # onions left out at CREATE TABLE and built when a statement first needs them
    # (ondemand.py); None: the defaults'
    on_demand: tuple[Onion, ...] | None = None
    ord_layer: str | None = None  # the Ord onion's scheme (ord_layers.py); None: the default


ON_DEMAND_ONIONS = (Onion.ORD, Onion.SEARCH, Onion.CONTAIN)
# What a column stores only once a statement needs it, where the configuration does not
# say: its Ord and Search onions (the order and word-search layers are most of a load's
# encryption time and bytes, and a column no statement orders or searches never shows
# the provider either).  ``on_demand = []`` stores every onion at CREATE TABLE.
DEFAULT_ON_DEMAND = (Onion.ORD, Onion.SEARCH)


@dataclass(frozen=True)
class Config:
    sum: bool = False
    sum_layer: str = "ASHE"  # the Sum onions' scheme (SUM_LAYERS)
    search: bool = True
    substring: bool = False
    containment: bool = True
    hom_bits: int = 2048
    # an Exact onion (the value as written, RND alone) for the types whose equal values
    # print differently (an unconstrained numeric: 1.50 = 1.5); results read it.  None:
    # wherever this client's recipes can store one
    exact: bool | None = None
    peel: str | None = None  # None: the database's recorded default (``adaptive-db init``)
    # the most rows one client-evaluated (split) statement may ship; None: no cap
    residual_row_cap: int | None = None
    # a file the connection appends its statements to, for `adaptive-db advise`
    statement_log: str | None = None
    # onions a column gets by default but only builds when a statement first needs them
    on_demand: tuple[Onion, ...] = DEFAULT_ON_DEMAND
    # PostgreSQL's JIT for the rewritten statements: off by default (see connection.py)
    server_jit: bool = False
    # per jsonb column, the most field onions built on first use (adapt/field_onions.py)
    json_fields: int = 8
    # online design (compile/design_wants.py): the most bytes per row the Sum onions and
    # precomputed expressions built on first use may add to a table (0: none), and per
    # table its own
    design_budget: int = 256
    design_budgets: dict[str, int] = field(default_factory=dict)
    # the Ord onions' order layer, OPE or ORE (ord_layers.py); None: the environment's
    ord_layer: str | None = None
    tables: dict[str, dict[str, ColumnConfig]] = field(default_factory=dict)
    # per table, per name: an expression over the row stored in onions of its own
    precomputed: dict[str, dict[str, PrecomputedConfig]] = field(default_factory=dict)

    def budget(self, table: str) -> int:
        """The online design's budget of ``table``: bytes per row."""
        return self.design_budgets.get(table.lower(), self.design_budget)

    def column(self, table: str, column: str) -> ColumnConfig:
        found = self.tables.get(table.lower(), {}).get(column.lower())
        if found is None and column.lower() in self.precomputed.get(table.lower(), {}):
            found = self.precomputed[table.lower()][column.lower()].column
        return found or ColumnConfig()

    def ord_layer_of(self, table: str, column: str) -> str:
        """The scheme of a new Ord onion of ``table.column`` (ord_layers.chosen)."""
        return ord_layers.chosen(self.column(table, column).ord_layer, self.ord_layer)


@dataclass(frozen=True)
class PrecomputedConfig:
    """``[precomputed.<table>.<name>]``: the value of ``expression`` (PostgreSQL syntax,
    over the row's own columns) of type ``type``, computed by the client on every write
    and stored in ``column``'s onions, which the server uses where a statement names the
    expression (see :mod:`adaptive_client.catalog.precomputed`)."""

    expression: str
    type: str
    column: ColumnConfig


def _onion(name: str, where: str) -> Onion:
    for o in Onion:
        if o.value.lower() == str(name).lower():
            return o
    raise ConfigError(
        f"{where}: unknown onion {name!r} (Eq, Ord, Sum, Search, Substr, Contain, Exact or Single)"
    )


def _layers(raw: Any, where: str, what: str) -> dict[Onion, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: {what} must be a table of onion = layer")
    out: dict[Onion, str] = {}
    for k, v in raw.items():
        onion = _onion(k, where)
        layer = str(v).upper()
        allowed = SUM_LAYERS if onion is Onion.SUM else STACKS.get(onion, ())
        if onion is not Onion.SINGLE and layer not in allowed:
            raise ConfigError(
                f"{where}: {what} layer {v!r} is not in the {onion} onion ({allowed})"
            )
        out[onion] = layer
    return out


def _column(raw: Any, where: str) -> ColumnConfig:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a table")
    unknown = set(raw) - {
        "onions", "start", "floor", "layer", "join_group", "joins", "on_demand", "ord_layer"
    }  # fmt: skip
    if unknown:
        raise ConfigError(f"{where}: unknown keys {sorted(unknown)}")
    onions = None
    if "onions" in raw:
        onions = tuple(_onion(o, where) for o in raw["onions"])
        if Onion.SINGLE in onions and len(onions) > 1:
            raise ConfigError(f"{where}: a Single onion cannot be combined with others")
    layer = raw.get("layer")
    if layer is not None:
        layer = str(layer).upper()
        if layer not in SINGLE_LAYERS:
            raise ConfigError(f"{where}: layer must be one of {SINGLE_LAYERS}")
    if onions == (Onion.SINGLE,) and layer is None:
        raise ConfigError(f"{where}: a Single onion needs `layer`")
    return ColumnConfig(
        onions=onions,
        start=_layers(raw.get("start"), where, "start"),
        floor=_layers(raw.get("floor"), where, "floor"),
        layer=layer,
        join_group=raw.get("join_group"),
        joins=_flag(raw.get("joins", True), where, "joins"),
        on_demand=_on_demand(raw["on_demand"], where) if "on_demand" in raw else None,
        ord_layer=ord_layers.parse(raw.get("ord_layer"), where),
    )


def _on_demand(raw: Any, where: str) -> tuple[Onion, ...]:
    """The onions built on first use: Ord (its OPE encryption is most of an adaptive
    load's time, and a third of its bytes), Search (a fifth of its bytes) and Contain
    (a jsonb document's paths and values: as many tokens as it has features).
    ``false``: none (and, in the defaults, no online design either)."""
    if raw is False:
        return ()
    if not isinstance(raw, list):
        raise ConfigError(f"{where}: on_demand must be a list of onions")
    onions = tuple(_onion(o, where) for o in raw)
    for onion in onions:
        if onion not in ON_DEMAND_ONIONS:
            raise ConfigError(
                f"{where}: only {', '.join(o.value for o in ON_DEMAND_ONIONS)} can be built "
                f"on first use, not {onion}"
            )
    return onions


def _budgets(raw: Any) -> dict[str, int]:
    if not isinstance(raw, dict):
        raise ConfigError("design_budget: expected a table of table = bytes per row")
    return {t.lower(): _count(v, "design_budget", t) for t, v in raw.items()}


def _flag(raw: Any, where: str, what: str) -> bool:
    if not isinstance(raw, bool):
        raise ConfigError(f"{where}: {what} must be true or false")
    return raw


def _count(raw: Any, where: str, what: str) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
        raise ConfigError(f"{where}: {what} must be a whole number, 0 or more")
    return raw


def load_config(source: str | Path | dict[str, Any] | Config | None) -> Config:
    """Read a configuration from a TOML path, a dict of the same shape, or None."""
    if source is None:
        return Config()
    if isinstance(source, Config):
        return source
    if isinstance(source, str | Path):
        path = Path(source)
        try:
            data = tomllib.loads(path.read_text())
        except OSError as exc:
            raise ConfigError(f"cannot read onion configuration {path}: {exc.strerror}") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: {exc}") from None
    else:
        data = dict(source)
    defaults = data.get("defaults", {})
    peel = defaults.get("peel")
    if peel is not None and peel not in PEEL_MODES:
        raise ConfigError(f"peel mode must be one of {PEEL_MODES}, not {peel!r}")
    tables: dict[str, dict[str, ColumnConfig]] = {}
    for tname, cols in data.get("tables", {}).items():
        if not isinstance(cols, dict):
            raise ConfigError(f"tables.{tname}: expected a table of columns")
        tables[tname.lower()] = {
            cname.lower(): _column(craw, f"tables.{tname}.{cname}") for cname, craw in cols.items()
        }
    precomputed: dict[str, dict[str, PrecomputedConfig]] = {}
    for tname, entries in data.get("precomputed", {}).items():
        if not isinstance(entries, dict):
            raise ConfigError(f"precomputed.{tname}: expected a table of precomputed onions")
        precomputed[tname.lower()] = {
            pname.lower(): _precomputed(praw, f"precomputed.{tname}.{pname}")
            for pname, praw in entries.items()
        }
        for pname in precomputed[tname.lower()]:
            if pname in tables.get(tname.lower(), {}):
                raise ConfigError(f"precomputed.{tname}.{pname}: also configured as a column")
    return Config(
        sum=bool(defaults.get("sum", False)),
        sum_layer=_sum_layer(defaults.get("sum_layer", "ASHE")),
        search=bool(defaults.get("search", True)),
        substring=bool(defaults.get("substring", False)),
        containment=_flag(defaults.get("containment", True), "defaults", "containment"),
        hom_bits=int(defaults.get("hom_bits", 2048)),
        exact=None if "exact" not in defaults else _flag(defaults["exact"], "defaults", "exact"),
        peel=peel,
        residual_row_cap=_row_cap(defaults.get("residual_row_cap")),
        statement_log=_optional_text(defaults.get("statement_log"), "statement_log"),
        on_demand=_on_demand(
            defaults.get("on_demand", [o.value for o in DEFAULT_ON_DEMAND]), "defaults"
        ),
        design_budget=0
        if defaults.get("on_demand") is False
        else _count(defaults.get("design_budget", 256), "defaults", "design_budget"),
        design_budgets=_budgets(data.get("design_budget", {})),
        server_jit=_flag(defaults.get("server_jit", False), "defaults", "server_jit"),
        json_fields=_count(defaults.get("json_fields", 8), "defaults", "json_fields"),
        ord_layer=ord_layers.parse(defaults.get("ord_layer"), "defaults"),
        tables=tables,
        precomputed=precomputed,
    )


def _sum_layer(raw: Any) -> str:
    layer = str(raw).upper()
    if layer not in SUM_LAYERS:
        raise ConfigError(f"defaults.sum_layer: {raw!r} is not one of {', '.join(SUM_LAYERS)}")
    return layer


def _precomputed(raw: Any, where: str) -> PrecomputedConfig:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a table")
    for key in ("expression", "type", "onions"):
        if not isinstance(raw.get(key), str if key != "onions" else list):
            raise ConfigError(f"{where}: `{key}` is required")
    column = _column({k: v for k, v in raw.items() if k not in ("expression", "type")}, where)
    if column.onions and Onion.SINGLE in column.onions:
        raise ConfigError(f"{where}: a precomputed value has Eq, Ord or Sum onions")
    if column.join_group is not None:
        raise ConfigError(f"{where}: a precomputed value joins nothing (no join_group)")
    return PrecomputedConfig(str(raw["expression"]), str(raw["type"]), column)


def _row_cap(raw: Any) -> int | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
        raise ConfigError(f"residual_row_cap must be a non-negative integer, not {raw!r}")
    return raw


def _optional_text(raw: Any, what: str) -> str | None:
    if raw is not None and not isinstance(raw, str):
        raise ConfigError(f"{what} must be a string, not {raw!r}")
    return raw
