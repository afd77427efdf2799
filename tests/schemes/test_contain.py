"""CONTAIN: keyed tokens of structural features (paths, path-values, array elements)."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adaptive_client.errors import ConfigError, EncodingError
from adaptive_client.schemes import CONTAIN

KEY = bytes(range(32))

# (feature, token under KEY = 00 01 .. 1f): the path "color", the path-value
# ("color", "red"), the number 1 as the element of a top-level array, the text[] element "a"
VECTORS = [
    (b"pk\x00\x00\x00\x05color", "4159902995379cffbf5b8c66f06ccc96"),
    (b"vk\x00\x00\x00\x05colorsred", "ecf712850e510565d08dc6ce8420a4ba"),
    (b"van1", "0d54a721031beef6d1c38fc6cb825326"),
    (b"ea", "b716ac9c49ea519d076b8ed252566d79"),
]


@pytest.mark.parametrize(("feature", "expected"), VECTORS)
def test_known_answers(feature: bytes, expected: str) -> None:
    assert CONTAIN(KEY).token(feature).hex() == expected
    # independently: the first 16 bytes of HMAC-SHA256(key, "c" + feature)
    assert hmac.new(KEY, b"c" + feature, hashlib.sha256).hexdigest()[:32] == expected


@given(st.lists(st.binary(max_size=40), max_size=20))
def test_tokens_sorted_distinct(features: list[bytes]) -> None:
    scheme = CONTAIN(KEY)
    toks = scheme.tokens(features)
    assert toks == sorted({scheme.token(f) for f in features})
    assert all(len(t) == 16 for t in toks)
    assert len(toks) == len(set(features))  # (no collision among a handful of features)


def test_keyed_and_separated_from_other_tokens() -> None:
    assert CONTAIN(KEY).token(b"x") != CONTAIN(bytes(32)).token(b"x")
    # not the bare HMAC a SEARCH or TRIGRAM token of the same bytes would be
    assert CONTAIN(KEY).token(b"x") != hmac.new(KEY, b"x", hashlib.sha256).digest()[:16]


def test_parameters() -> None:
    assert (CONTAIN.name, CONTAIN.tag, CONTAIN.key_size) == ("CONTAIN", 0, 32)
    assert {"@>", "<@", "?", "&&"} <= CONTAIN.operators
    assert "key hidden" in repr(CONTAIN(KEY))
    with pytest.raises(ConfigError):
        CONTAIN(b"short")
    with pytest.raises(EncodingError):
        CONTAIN(KEY).token("text")  # type: ignore[arg-type]
