"""Encryption schemes, one module each, registered in one table by name.

| layer  | tag  | strength | enables                                           | leaks         |
|--------|------|----------|---------------------------------------------------|---------------|
| RND    | 0x01 | 3        | nothing                                           | padded length |
| DET    | 0x02 | 2        | ``=``, ``<>``, ``IN``, GROUP BY, DISTINCT, join   | equality      |
| HOM    | -    | 2        | ``SUM``, ``AVG``, ``+``                           | nothing       |
| ASHE   | -    | 2        | ``SUM``, ``AVG`` (the client removes the pads)    | nothing       |
| SEARCH | -    | 2        | whole-word match (``WORD``: ``~ '\\mword\\M'``) | shared words  |
| TRIGRAM| -    | 1        | candidate rows for LIKE / ILIKE / ``~`` (trigrams)  | shared trigrams |
| CONTAIN| -    | 2        | candidate rows for ``@>``, ``?``, ``&&``, ``= ANY`` | shared paths  |
| OPE    | 0x03 | 1        | comparisons, ORDER BY, MIN/MAX, equality          | order, and    |
|        |      |          |                                                   | about half of |
|        |      |          |                                                   | the bits      |
| ORE    | 0x04 | 1        | comparisons, ORDER BY, MIN/MAX, equality (through | order, first  |
|        |      |          | ``adaptive.ore_cmp``)                             | differing byte|
| PLAIN  | -    | 0        | everything (``*``)                                | everything    |
"""

from __future__ import annotations

from ..errors import ConfigError
from .ashe import ASHE
from .base import Scheme
from .contain import CONTAIN
from .det import DET
from .hom import HOM
from .ope import OPE
from .ore import ORE
from .plain import PLAIN
from .rnd import RND
from .search import SEARCH
from .trigram import TRIGRAM

SCHEMES: dict[str, type[Scheme]] = {
    cls.name: cls for cls in (RND, DET, OPE, ORE, HOM, ASHE, SEARCH, TRIGRAM, CONTAIN, PLAIN)
}


def scheme_class(name: str) -> type[Scheme]:
    """The scheme class called ``name`` (case-insensitive); unknown names: ConfigError."""
    try:
        return SCHEMES[str(name).strip().upper()]
    except KeyError:
        raise ConfigError(f"unknown encryption scheme {name!r}") from None


__all__ = [
    "ASHE",
    "CONTAIN",
    "DET",
    "HOM",
    "OPE",
    "ORE",
    "PLAIN",
    "RND",
    "SCHEMES",
    "SEARCH",
    "TRIGRAM",
    "Scheme",
    "scheme_class",
]
