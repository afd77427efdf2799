"""The interface every encryption scheme implements.

A scheme is one *layer* of an onion.  Schemes are primitives: they know nothing of SQL
types (see :mod:`adaptive_client.values.encodings`) nor of onions (see
:mod:`adaptive_client.catalog.onions`).

Byte-level layers (RND, DET, OPE) produce **self-describing** ciphertexts: the first byte
is the layer's ``tag``.  That lets any client, even one whose cached metadata is stale,
tell at which layer a stored value is, and lets a CHECK constraint on the first byte
refuse a value written at the wrong layer.
"""

from __future__ import annotations

from abc import ABC
from typing import ClassVar


class Scheme(ABC):
    """One encryption layer.

    ``name`` is the layer's name as used in configuration and metadata, ``tag`` the first
    byte of its ciphertexts (0 when the layer's ciphertexts are not bytes), ``operators``
    the SQL operators the server can evaluate directly on ciphertexts of this layer.
    ``strength`` orders layers: higher is stronger (reveals less).
    """

    name: ClassVar[str]
    tag: ClassVar[int]
    operators: ClassVar[frozenset[str]]
    strength: ClassVar[int]
    key_size: ClassVar[int]
