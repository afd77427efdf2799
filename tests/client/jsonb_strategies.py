"""Hypothesis strategies of the jsonb and array differential suite: documents (objects,
arrays and scalars, nested, with numbers written as jsonb keeps them -- ``1``, ``1.0``,
``-0``, ``1e2``, long decimals -- and keys and strings that collate differently under ICU
than bytewise), sub-documents of a drawn document (what ``@>`` finds), paths into one,
and ``text[]`` / ``int[]`` values with NULL elements.

A document is a tree of dicts, lists, str, bool, None and :class:`Number` (a JSON number's
text): :func:`to_json` writes it as JSON text, numbers as drawn."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st


@dataclass(frozen=True)
class Number:
    """A JSON number as written (jsonb keeps ``1.0`` apart from ``1`` in its text, not in
    its equality)."""

    text: str


NUMBER_TEXTS = [
    "0", "1", "1.0", "1.00", "-0", "-0.0", "1e2", "100", "100.0", "1E+2", "0.1", "0.10",
    "-1.5e-3", "-0.0015", "2.5", "12.50", "123456789012345678901234567890.5",
    "1e-20", "0.00000000000000000001", "9223372036854775808", "-7", "3",
]  # fmt: skip
# strings and keys whose order under ICU en-US differs from the bytewise order
WORDS = [
    "", " ", "a", "A", "b", "B", "ab", "a-b", "äpfel", "apple", "Apple", "é", "e", "E",
    "e\u0301", "ß", "ss", "straße", "日本", "東京", "Ω", "z", "Z", "ǅ", "sale", "new", "x",
    "null", "1", "k",
]  # fmt: skip

numbers = st.one_of(st.sampled_from(NUMBER_TEXTS), st.integers(-1000, 1000).map(str)).map(Number)
texts = st.one_of(
    st.sampled_from(WORDS),
    st.text(st.characters(exclude_characters="\x00", exclude_categories=["Cs"]), max_size=5),
)
keys = st.one_of(st.sampled_from(WORDS), texts)
scalars = st.one_of(st.none(), st.booleans(), numbers, texts)
documents: st.SearchStrategy[Any] = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(keys, children, max_size=4),
    ),
    max_leaves=12,
)


class SqlNull:
    """A row's SQL NULL document (a drawn ``None`` is JSON ``null``)."""


SQL_NULL = SqlNull()
# top-level documents: mostly objects, as applications store them
top_documents = st.one_of(
    st.dictionaries(keys, documents, max_size=5), documents, st.just(SQL_NULL)
)
text_arrays = st.one_of(
    st.none(), st.lists(st.one_of(st.none(), st.sampled_from(WORDS)), max_size=4)
)
int_arrays = st.one_of(st.none(), st.lists(st.one_of(st.none(), st.integers(-3, 3)), max_size=4))


def to_json(doc: Any) -> str:
    """The JSON text of a drawn document (numbers as drawn)."""
    if isinstance(doc, Number):
        return doc.text
    if isinstance(doc, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {to_json(v)}" for k, v in doc.items()) + "}"
    if isinstance(doc, list):
        return "[" + ", ".join(to_json(v) for v in doc) + "]"
    return json.dumps(doc)


def sub_document(data: st.DataObject, doc: Any) -> Any:
    """A document ``doc`` contains (as ``@>`` decides it): some of an object's keys, each
    with a sub-document of its value; some of an array's elements, each a sub-document
    of one; a scalar itself."""
    if isinstance(doc, dict):
        chosen = data.draw(st.lists(st.sampled_from(sorted(doc)), unique=True)) if doc else []
        return {k: sub_document(data, doc[k]) for k in chosen}
    if isinstance(doc, list):
        if not doc:
            return []
        picks = data.draw(st.lists(st.integers(0, len(doc) - 1), max_size=3))
        return [sub_document(data, doc[i]) for i in picks]
    return doc


def path_in(data: st.DataObject, doc: Any) -> list[str]:
    """A path (``#>``'s text[]) into ``doc``: object keys and array indexes (negative
    ones too) down some way, now and then one more step that leads nowhere."""
    path: list[str] = []
    while isinstance(doc, dict | list) and doc and data.draw(st.booleans()):
        if isinstance(doc, dict):
            key = data.draw(st.sampled_from(sorted(doc)))
            path.append(key)
            doc = doc[key]
        else:
            index = data.draw(st.integers(-len(doc), len(doc) - 1))
            path.append(str(index))
            doc = doc[index]
    if data.draw(st.integers(0, 4)) == 0:
        path.append(data.draw(st.sampled_from(["nope", "0", "-1", "99", ""])))
    return path


def top_keys(doc: Any) -> list[str]:
    """What ``?`` finds at the top level: an object's keys, an array's string elements,
    a string scalar itself."""
    if isinstance(doc, dict):
        return list(doc)
    if isinstance(doc, list):
        return [e for e in doc if isinstance(e, str)]
    return [doc] if isinstance(doc, str) else []
