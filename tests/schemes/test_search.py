r"""SEARCH: keyed word tokens; a word matches a text iff the text has it as a whole word."""

from __future__ import annotations

import hashlib
import hmac
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adaptive_client.errors import ConfigError, EncodingError
from adaptive_client.schemes import SEARCH

KEY = bytes(range(32))

# (word, token under KEY = 00 01 .. 1f)
VECTORS = [
    ("alpha", "a689cedc1eea68d06617cbf684b04e62"),
    ("Straße", "18ae8c28fb9f9d557a29a0ac75297452"),
    ("x_1", "726625a9d3cdff2c083ed53d07fd54ca"),
    ("42", "7df989924b2ebf8832c80802d1213a8a"),
]


@pytest.mark.parametrize(("word", "expected"), VECTORS)
def test_known_answers(word: str, expected: str) -> None:
    assert SEARCH(KEY).token(word).hex() == expected
    # independently: the first 16 bytes of HMAC-SHA256(key, UTF-8 word)
    assert hmac.new(KEY, word.encode(), hashlib.sha256).hexdigest()[:32] == expected


def test_tokens_of_a_text() -> None:
    s = SEARCH(KEY)
    toks = s.tokens("the cat, and THE hat!")
    assert [t.hex() for t in toks] == [
        "06147653750ca2aff7ae1b371c10d7f2",
        "31c8141f4caa666b51eda6b89ce733ad",
        "71ca6bb9e64eebcba226a5c26342bf9a",
        "8b2f81fdb4ef3682cbbe9f8d777021e3",
        "ceede66954e140fc494bdd83b0b9fb1c",
    ]
    assert toks == sorted({s.token(w) for w in ("the", "cat", "and", "THE", "hat")})
    assert s.tokens("") == [] and s.tokens(" ,;- ") == []
    assert s.tokens("a-b a_b") == sorted({s.token("a"), s.token("b"), s.token("a_b")})


WORD = st.from_regex(r"[A-Za-z0-9_]{1,8}", fullmatch=True)
SEP = st.sampled_from([" ", ", ", ". ", "-", "\n", "; ", "(", ")"])


@given(st.lists(st.tuples(WORD, SEP), max_size=10), WORD)
def test_match_iff_whole_word_present(parts: list[tuple[str, str]], w: str) -> None:
    """``tok(w) in tokens(text)`` exactly when ``text ~ '\\mw\\M'`` would match (ASCII)."""
    s = SEARCH(KEY)
    text = "".join(a + b for a, b in parts)
    expected = re.search(rf"(?<!\w){re.escape(w)}(?!\w)", text) is not None
    assert (s.token(w) in s.tokens(text)) == expected
    assert (w in {a for a, _ in parts}) == expected


@given(st.text(max_size=60))
def test_tokens_sorted_distinct(text: str) -> None:
    try:
        toks = SEARCH(KEY).tokens(text)
    except EncodingError:  # lone surrogates cannot be UTF-8 encoded
        return
    assert toks == sorted(set(toks)) and all(len(t) == 16 for t in toks)


def test_keyed() -> None:
    assert SEARCH(KEY).token("word") != SEARCH(bytes(32)).token("word")


@pytest.mark.parametrize("bad", ["", "two words", "dash-ed", " x", "x\n", "%", 5])
def test_rejects_non_words(bad: object) -> None:
    with pytest.raises(EncodingError):
        SEARCH(KEY).token(bad)  # type: ignore[arg-type]


def test_parameters() -> None:
    assert (SEARCH.name, SEARCH.tag, SEARCH.strength, SEARCH.key_size) == ("SEARCH", 0, 2, 32)
    assert SEARCH.operators == {"WORD"}
    with pytest.raises(ConfigError):
        SEARCH(b"short")
    with pytest.raises(EncodingError):
        SEARCH(KEY).tokens(b"bytes")  # type: ignore[arg-type]


def test_token_memo_is_exact_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tokens are memoized per word (a text's words repeat across rows); a memoized token
    is the HMAC itself, and the memo starts over when full."""
    from adaptive_client.schemes import search as search_module

    monkeypatch.setattr(search_module, "_MEMO_LIMIT", 3)
    s = SEARCH(KEY)
    words = ["a", "b", "c", "d", "a", "e", "b"]
    for w in words:
        want = hmac.new(KEY, w.encode(), hashlib.sha256).digest()[:16]
        assert s.token(w) == want
        assert len(s._memo) <= 3
    assert s.tokens("a b a") == sorted({s.token("a"), s.token("b")})
