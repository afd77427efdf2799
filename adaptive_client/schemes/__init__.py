"""Encryption schemes, one module each, registered in one table (like sqlglot's dialects)."""

from __future__ import annotations

from ..errors import ConfigError
from .base import Scheme
from .det import DET
from .hom import HOM
from .ope import OPE
from .plain import PLAIN
from .rnd import RND
from .search import SEARCH

SCHEMES: dict[str, type[Scheme]] = {cls.name: cls for cls in (RND, DET, OPE, HOM, SEARCH, PLAIN)}


def scheme_class(name: str) -> type[Scheme]:
    try:
        return SCHEMES[name.upper()]
    except KeyError:
        raise ConfigError(f"unknown encryption scheme {name!r}") from None


__all__ = ["DET", "HOM", "OPE", "PLAIN", "RND", "SCHEMES", "SEARCH", "Scheme", "scheme_class"]
