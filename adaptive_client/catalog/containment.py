r"""The features a Contain onion tokenizes, and why its server filters are supersets.

A Contain onion (``Onion.CONTAIN``, scheme ``CONTAIN``) stores the keyed tokens of a
value's *features*, byte strings defined here; a containment or membership predicate
compiles to a test over token arrays that every row satisfying the predicate passes.
The client engine evaluates the predicate itself on the rows that come back: the
tokens only have to keep every row that matches (a superset), never to decide.

Features
--------
**jsonb.**  A node's *path* is the sequence of steps from the root to it, a step being
an object key (``k`` + its length as 4 bytes + its UTF-8 bytes) or "any element of an
array" (``a``).  The container a path ends in is not part of it (an object and an array
at the same place share it), so ``?`` can find a key whatever its value is.  A top-level
raw scalar is read as a one-element array (PostgreSQL stores it so, and containment
treats it so).  The features of a document are

* ``p`` + path, for every node but the root (every path prefix of every leaf, and the
  paths of empty containers);
* ``v`` + path + value, for every scalar node: ``s`` + the string's UTF-8 bytes, ``n`` +
  the number as numeric prints its normalised form (``1.0`` and ``1`` both ``1``: the
  Eq onion's canonical text), ``t``, ``f``, ``z`` for true, false, null.

Paths are self-delimiting (each step starts with ``k`` or ``a``, a key carries its
length) and a value starts with a byte that starts no step: the encoding is injective.

**Arrays** (of an element type with an Eq onion).  ``e`` + the element's canonical
bytes (``to_bytes``: equal bytes exactly when the element type's ``=`` says equal), for
every non-NULL element; dimensions and bounds are ignored, as ``@>`` ignores them.

The superset property
---------------------
*Claim.*  For all values A and B of one column type: if PostgreSQL says ``A @> B``,
then features(B) is a subset of features(A).

*Arrays.*  ``array_contain_compare`` holds ``A @> B`` when every element of B is
non-NULL and equal (the element type's ``=``) to some element of A, dimensions
ignored.  Equal elements have equal canonical bytes, so each ``e`` feature of B is one
of A's; B's NULLs have no feature (and make ``@>`` false anyway).

*jsonb.*  PostgreSQL's ``jsonb_contains`` requires the roots to be of one kind (both
objects, or both arrays -- a raw scalar being an array) and then ``JsonbDeepContains``.
We show, by induction on the depth of b, the stronger statement: if containers a and b,
of one kind, sit at the same path P in A and B and ``JsonbDeepContains(a, b)`` holds,
then every feature of B whose path extends P through b is a feature of A.

* b an object: for each pair (k, w) of b, a has a pair (k, u) -- so the path P.k of w is
  one of A's.  If w is a scalar, u is a scalar equal to it (``equalsJsonbScalarValue``:
  strings bytewise, numbers by ``numeric_eq``, so equal numbers print the same
  normalised text; null = null; booleans by value): the ``v`` features agree.  If w is
  a container, u is a container of the same kind and ``JsonbDeepContains(u, w)``: the
  induction hypothesis at path P.k.
* b an array: for each element w of b, at path P.a -- a path A has too, since its
  element matched one of a's (below).  A scalar w equals some scalar element of a (the
  same ``equalsJsonbScalarValue``): same ``v`` feature at P.a.  A container w is
  contained (``JsonbDeepContains``, which starts by comparing the kinds) by some
  container element of a: the induction hypothesis at P.a.

Applied at the root (P empty), every feature of B is one of A's.  Raw scalars: PostgreSQL
lets a raw scalar contain a raw scalar and an array contain a raw scalar, both read as
one-element arrays here, so the array case covers them.

*Consequences* (the candidate filters of ``compile/containment.py``), t(x) the tokens
of x's features:

* ``col @> c`` (and ``c <@ col``): t(c) is a subset of t(col) -- ``tokens @> t(c)``;
* ``col <@ c`` (and ``c @> col``): t(col) is a subset of t(c) -- ``tokens <@ t(c)``;
* arrays ``col && c``: a common non-NULL equal element gives a common token --
  ``tokens && t(c)``;
* arrays ``x = ANY(col)``: ``col @> ARRAY[x]`` -- ``tokens @> t(ARRAY[x])``;
* jsonb ``col ? k``: k is a key of the top-level object (feature ``p`` + step k) or a
  string element of the top-level array or raw scalar (``v`` + ``a`` + ``s`` + k) --
  ``tokens && [both]``; ``?|``: one ``&&`` over every key's two tokens; ``?&``: one
  ``&&`` per key, all of them.

Nothing else is claimed: what the tokens cannot decide (an object against an array,
nested-array matching, the exact set under ``<@``) the client engine decides.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from ..errors import EncodingError
from ..values.array_encoding import UNFIT, shape
from ..values.encodings import EQ, Encoding

PATH, LEAF, ELEMENT = b"p", b"v", b"e"
ANY_ELEMENT = b"a"
_SCALARS = {"true": b"t", "false": b"f", "null": b"z"}

# the lexical items of a jsonb value's canonical text (well formed: its own output)
_ITEM = re.compile(
    r'[ ]*(?:"((?:[^"\\]|\\.)*)"|([\[\]{}:,])|(-?[0-9][0-9.eE+\-]*)|(true|false|null))'
)


def key_step(key: str) -> bytes:
    """The path step of an object key."""
    b = key.encode("utf-8")
    return b"k" + len(b).to_bytes(4, "big") + b


def jsonb_features(canonical: str) -> set[bytes]:
    """The features of a jsonb document given its canonical text (see the docstring).
    Iterative: documents nest as deep as PostgreSQL allows."""
    out: set[bytes] = set()
    stack: list[tuple[bytes, bool]] = []  # per open container: its path, is it an object
    key = b""  # the step of the object member whose value comes next
    want_key = False
    i, n = 0, len(canonical)
    while i < n:
        m = _ITEM.match(canonical, i)
        if m is None:
            raise EncodingError("malformed jsonb canonical text")
        i = m.end()
        quote, punct, number, word = m.groups()
        if punct == "," or punct == ":":
            want_key = punct == "," and stack[-1][1]
            continue
        if punct == "]" or punct == "}":
            stack.pop()
            continue
        if quote is not None:
            text = quote if "\\" not in quote else json.loads(f'"{quote}"')
            if want_key:
                key, want_key = key_step(text), False
                continue
        # a value: its path, from its container's
        if stack:
            parent, in_object = stack[-1]
            path = parent + (key if in_object else ANY_ELEMENT)
        else:
            # the root: a container has the empty path; a raw scalar is the one element
            # of a pseudo-array
            path = b"" if punct is not None else ANY_ELEMENT
        if path:
            out.add(PATH + path)
        if punct is not None:  # "[" or "{"
            stack.append((path, punct == "{"))
            want_key = punct == "{"
            continue
        if quote is not None:
            value = b"s" + text.encode("utf-8")
        elif number is not None:
            value = b"n" + number.encode("ascii")
        else:
            value = _SCALARS[word]
        out.add(LEAF + path + value)
    return out


class _Pairs(list[tuple[str, Any]]):
    """An object's pairs (telling objects from arrays in a parsed document)."""


def decides_jsonb(value: Any) -> bool:
    """Whether the features of document ``c`` decide ``A @> c`` for every A exactly --
    ``tokens @> t(c)`` then answers it on the server, nothing left to the client:

    * c is a non-empty object or a raw scalar: a top-level array would also be found in
      a raw scalar holding the same element (which PostgreSQL does not let contain an
      array), an empty one in any document;
    * no container of c is empty: an empty container's path is all its features, and a
      scalar at that path has it too;
    * every container that is an element of an array holds exactly one scalar, however
      deep: its one ``v`` feature is then found only in an element of A's array that
      holds it on the same path (where two could each be found in a different element).

    Given these, every step of a feature of c says the kind of A's node it passes
    (a key step, an object; an element step, an array), each ``v`` feature pins a scalar
    by ``equalsJsonbScalarValue``'s equality, and an object's keys are unique: A's
    having all of c's features is ``JsonbDeepContains``."""
    try:
        root = json.loads(value.canonical, object_pairs_hook=_Pairs)
    except RecursionError:
        return False
    if isinstance(root, list) and not isinstance(root, _Pairs):
        return False
    if isinstance(root, _Pairs) and not root:
        return False
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        if not isinstance(node, list):
            continue
        if not node:
            return False
        if isinstance(node, _Pairs):
            stack.extend(v for _, v in node)
            continue
        for element in node:
            if isinstance(element, list) and _scalars(element) != 1:
                return False
            stack.append(element)
    return True


def _scalars(node: list[Any]) -> int:
    """How many scalars a container holds, however deep (2 once past one)."""
    count, stack = 0, [node]
    while stack and count < 2:
        current = stack.pop()
        if isinstance(current, _Pairs):
            stack.extend(v for _, v in current)
        elif isinstance(current, list):
            stack.extend(current)
        else:
            count += 1
    return count


def key_features(key: str) -> list[bytes]:
    """The features one of which a document has if ``key`` exists at its top level
    (``?``): the key of its top-level object, or a string element of its top-level
    array (or raw scalar)."""
    return [PATH + key_step(key), LEAF + ANY_ELEMENT + b"s" + key.encode("utf-8")]


def array_features(encoding: Any, value: list[Any]) -> set[bytes]:
    """The features of an array: its non-NULL elements' canonical bytes (an element
    that no stored element can equal -- ``UNFIT``, beyond the column's modifier -- has
    none: a filter without it keeps more rows, never fewer)."""
    to_bytes = encoding.element.to_bytes
    return {ELEMENT + to_bytes(x) for x in shape(value)[2] if x is not None and x is not UNFIT}


def _jsonb(encoding: Any, value: Any) -> set[bytes]:
    return jsonb_features(value.canonical)


# per column type (the encoding's SQL type name): the features of a (coerced) value
_FEATURES: dict[str, Callable[[Any, Any], set[bytes]]] = {
    "jsonb": _jsonb,
    "array": array_features,
}


def offers(encoding: Encoding) -> bool:
    """Whether a column of this encoding can have a Contain onion: jsonb, and arrays of
    a type with equality (an Eq onion)."""
    name = encoding.sql_type.name
    if name == "array":
        element = getattr(encoding, "element", None)
        return element is not None and EQ in element.onions
    return name in _FEATURES


def features(encoding: Encoding, value: Any) -> set[bytes]:
    """The features of a column's (coerced, non-NULL) value or of a comparand of it."""
    return _FEATURES[encoding.sql_type.name](encoding, value)
