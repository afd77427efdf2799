"""Onions, their layer stacks, and which capability each layer gives the server.

A *capability* is what a query asks of a column: to be decrypted by the client, compared
for equality, ordered, summed, or searched for a word.  Each onion offers capabilities
at some of its layers; a query that needs a capability the onion's actual layer does not
offer makes the client peel the onion down to the layer that does.
"""

from __future__ import annotations

from enum import StrEnum

from ..errors import ConfigError
from ..schemes.ashe import BOUND as ASHE_BOUND


class Onion(StrEnum):
    EQ = "Eq"
    ORD = "Ord"
    SUM = "Sum"
    SEARCH = "Search"
    SUBSTR = "Substr"  # trigram tokens: candidate rows for LIKE / ILIKE / regex
    # path and path-value tokens (jsonb), element tokens (arrays): candidate rows for
    # @>, <@, ?, ?|, ?&, &&, = ANY(col)
    CONTAIN = "Contain"
    SINGLE = "Single"
    # the value as written, under RND alone, where equal values may print differently
    # (an unconstrained numeric's scale: 1.50 = 1.5): results are read from it, while
    # the Eq onion holds the canonical form that equality and grouping compare
    EXACT = "Exact"


class Cap(StrEnum):
    """What a query needs from a column."""

    DECRYPT = "decrypt"  # the client reads the value back
    EQ = "equality"  # =, <>, IN, GROUP BY, DISTINCT, equi-join
    ORD = "order"  # <, <=, >, >=, BETWEEN, ORDER BY, MIN, MAX
    SUM = "sum"  # SUM, AVG, col = col + k in place
    WORD = "word search"  # col ~ '\mword\M'
    SUBSTR = "substring search"  # LIKE '%abc%', ILIKE 'abc%', ~ 'abc': candidate rows
    CONTAIN = "containment"  # @>, <@, ?, ?|, ?&, &&, x = ANY(col): candidate rows


# Layer stacks, outer -> inner.  Single onions have a one-layer stack chosen by the DBA.
STACKS: dict[Onion, tuple[str, ...]] = {
    Onion.EQ: ("RND", "DET"),
    Onion.ORD: ("RND", "OPE"),
    # the Sum onion's one layer: ASHE (per-value pads, the client removes them from a
    # sum) unless the configuration chooses HOM (Paillier); see SUM_LAYERS
    Onion.SUM: ("ASHE",),
    # the RND layer of a Search onion hides the tokens until the first search; tables
    # created before it existed keep the one-layer stack recorded in their metadata
    Onion.SEARCH: ("RND", "SEARCH"),
    Onion.SUBSTR: ("RND", "TRIGRAM"),
    Onion.CONTAIN: ("RND", "CONTAIN"),
    Onion.EXACT: ("RND",),
}
SINGLE_LAYERS = ("PLAIN", "DET", "OPE", "RND")
SUM_LAYERS = ("ASHE", "HOM")

# Layer tags: the first byte of every bytea ciphertext (see schemes.base).
TAGS = {"RND": 1, "DET": 2, "OPE": 3}

# Short suffixes for the anonymized column names of each onion (the provider sees which
# onion a column is anyway: its layer is public, see adaptive.layers).
SUFFIX = {
    Onion.EQ: "eq",
    Onion.ORD: "ord",
    Onion.SUM: "sum",
    Onion.SEARCH: "srch",
    Onion.SUBSTR: "substr",
    Onion.CONTAIN: "cont",
    Onion.EXACT: "ex",
}
# Onions stored as token arrays (bytea[], GIN-indexed once peeled)
TOKEN_ONIONS = frozenset({Onion.SEARCH, Onion.SUBSTR, Onion.CONTAIN})

# What each layer reveals to the provider, in words, for `adaptive-db layers`.
LEAKAGE = {
    "RND": "nothing (beyond exact length and NULLs)",
    "DET": "which rows are equal",
    "OPE": (
        "order of values (and equality), and their approximate values: the stored bytes "
        "read as a number lie near the value scaled (about its leading half of bits)"
    ),
    "ORE": "order of values (and equality), and for two values the first byte they differ in",
    "HOM": "nothing (sums computable)",
    "ASHE": "nothing (sums computable; a sum ships the summed rows' nonces)",
    "SEARCH": "which rows share a word",
    "TRIGRAM": "which rows share a 3-character sequence (case-folded): far more than words",
    "CONTAIN": (
        "jsonb: which rows share a path (a key at a place in the document) or a path with "
        "its scalar value; arrays: which rows share an element; how many of these each row "
        "has"
    ),
    "PLAIN": "the values themselves",
}


def capabilities(onion: Onion, layer: str, ope_exact: bool) -> frozenset[Cap]:
    """Capabilities the server has over an onion at ``layer``.

    ``ope_exact`` is False for strings, whose OPE covers a prefix only: such an Ord onion
    orders (the client finishes the sort on ties) but cannot decide equality or decrypt.
    """
    if layer == "PLAIN":
        return frozenset(Cap)
    if layer == "RND":
        # a Search onion's tokens are not the value: nothing to decrypt from them
        return frozenset() if onion in TOKEN_ONIONS else frozenset({Cap.DECRYPT})
    if layer == "DET":
        return frozenset({Cap.DECRYPT, Cap.EQ})
    if layer == "OPE":
        return frozenset({Cap.DECRYPT, Cap.EQ, Cap.ORD}) if ope_exact else frozenset({Cap.ORD})
    if layer == "ASHE":  # a value alone decrypts too: its pad is one AES block
        return frozenset({Cap.SUM, Cap.DECRYPT})
    if layer == "HOM":
        return frozenset({Cap.SUM})
    if layer == "SEARCH":
        return frozenset({Cap.WORD})
    if layer == "TRIGRAM":
        return frozenset({Cap.SUBSTR})
    if layer == "CONTAIN":
        return frozenset({Cap.CONTAIN})
    raise ConfigError(f"unknown layer {layer!r}")


def sum_layer_for(hom_bound: int, configured: str = "ASHE") -> str:
    """The Sum onion's layer for values below ``hom_bound`` in magnitude: the configured
    one, except ASHE where the values do not fit its 96 bits (numeric(p,s) from p = 29):
    HOM, whose Paillier domain holds them."""
    return "HOM" if configured == "ASHE" and hom_bound > ASHE_BOUND else configured


def stack_for(
    onion: Onion, single_layer: str | None = None, sum_layer: str = "ASHE"
) -> tuple[str, ...]:
    if onion is Onion.SUM:
        if sum_layer not in SUM_LAYERS:
            raise ConfigError(f"a Sum onion's layer is one of {', '.join(SUM_LAYERS)}")
        return (sum_layer,)
    if onion is Onion.SINGLE:
        if single_layer not in SINGLE_LAYERS:
            raise ConfigError(f"a Single onion needs one layer of {', '.join(SINGLE_LAYERS)}")
        return (single_layer,)
    return STACKS[onion]


def layer_index(stack: tuple[str, ...], layer: str) -> int:
    try:
        return stack.index(layer)
    except ValueError:
        raise ConfigError(f"layer {layer} is not in the onion's stack {stack}") from None
