"""Hypothesis strategies for SQL-ish text: the seed statements mutated token by token,
token soup from the SQL dictionary, and arbitrary text."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from rewrite_target import SEEDS

TOKENS = [
    line.strip()[1:-1].encode().decode("unicode_escape")
    for line in (Path(__file__).resolve().parent / "sql.dict").read_text().splitlines()
    if line.startswith('"')
]


def _tokens(sql: str) -> list[str]:
    return re.findall(r"\s+|'[^']*'|\w+|%s|[^\w\s]", sql)


@st.composite
def mutated(draw: Any) -> str:
    toks = _tokens(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 6))):
        if not toks:
            break
        i = draw(st.integers(0, len(toks) - 1))
        action = draw(st.sampled_from(["delete", "insert", "replace", "duplicate", "swap"]))
        if action == "delete":
            del toks[i]
        elif action == "insert":
            toks.insert(i, " " + draw(st.sampled_from(TOKENS)) + " ")
        elif action == "replace":
            toks[i] = draw(st.sampled_from(TOKENS))
        elif action == "duplicate":
            toks.insert(i, toks[i])
        else:
            j = draw(st.integers(0, len(toks) - 1))
            toks[i], toks[j] = toks[j], toks[i]
    return "".join(toks)


def statements() -> st.SearchStrategy[str]:
    soup = st.lists(st.sampled_from(TOKENS), max_size=25).map(" ".join)
    return st.one_of(mutated(), mutated(), mutated(), soup, st.text(max_size=80))
