"""PLAIN (the identity layer) and the scheme registry."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adaptive_client.errors import ConfigError
from adaptive_client.schemes import (
    ASHE,
    CONTAIN,
    DET,
    HOM,
    OPE,
    ORE,
    PLAIN,
    RND,
    SCHEMES,
    SEARCH,
    TRIGRAM,
    Scheme,
    scheme_class,
)


@pytest.mark.parametrize(
    "value", [None, 0, -5, Decimal("1.50"), 2.5, "text", b"\x00\x01", dt.date(2020, 1, 2), True]
)
def test_identity_known_answers(value: Any) -> None:
    assert PLAIN().encrypt(value) is value
    assert PLAIN().decrypt(value) is value


@given(st.lists(st.one_of(st.integers(), st.text(), st.binary(), st.none())))
def test_identity(values: list[Any]) -> None:
    p = PLAIN()
    assert p.encrypt_many(values) == values == p.decrypt_many(values)


def test_plain_parameters() -> None:
    assert (PLAIN.name, PLAIN.tag, PLAIN.strength, PLAIN.key_size) == ("PLAIN", 0, 0, 0)
    assert PLAIN.operators == {"*"}  # every operator


def test_registry() -> None:
    assert SCHEMES == {
        "RND": RND,
        "DET": DET,
        "OPE": OPE,
        "ORE": ORE,
        "HOM": HOM,
        "ASHE": ASHE,
        "SEARCH": SEARCH,
        "TRIGRAM": TRIGRAM,
        "CONTAIN": CONTAIN,
        "PLAIN": PLAIN,
    }
    assert scheme_class("ope") is OPE and scheme_class(" Det ") is DET
    for name, cls in SCHEMES.items():
        assert issubclass(cls, Scheme) and cls.name == name
        assert isinstance(cls.operators, frozenset) and isinstance(cls.strength, int)
    with pytest.raises(ConfigError, match="ROT13"):
        scheme_class("ROT13")


def test_strength_order_and_tags() -> None:
    """Outer layers are stronger; byte layers carry distinct tags."""
    assert RND.strength > DET.strength > OPE.strength > PLAIN.strength
    assert {RND.tag, DET.tag, OPE.tag} == {1, 2, 3}
    assert HOM.tag == SEARCH.tag == PLAIN.tag == 0
    assert not RND.operators and {"=", "<>"} <= DET.operators & OPE.operators
