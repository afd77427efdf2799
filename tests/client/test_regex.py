"""Which regular expressions the client engine matches as PostgreSQL does (the rest
stay refused): results are compared in the read-query corpus; this is the filter."""

from __future__ import annotations

import pytest

from adaptive_client.engine.regexes import portable_regex


@pytest.mark.parametrize(
    "pattern",
    ["^[A-Z]", "(ee|ob)$", "^[a-z]+[0-9]{1,2}@ex\\.org$", "a.c", "x{2,}", "[^a-z ]", "é+"],
)
def test_portable(pattern: str) -> None:
    assert portable_regex(pattern)


@pytest.mark.parametrize(
    "pattern",
    [
        "\\d",  # a class escape: the locale's digits in PostgreSQL
        "[[:alpha:]]",  # a character class
        "(?i)abc",  # embedded options
        "(a)\\1",  # a back-reference
        "[]a]",  # a leading ] in brackets
        "[a\\]b]",  # an escape inside brackets
        "a{x}",  # not a bound
        "abc[",  # unterminated
        "a\nb",  # a control character
    ],
)
def test_not_portable(pattern: str) -> None:
    assert not portable_regex(pattern)
