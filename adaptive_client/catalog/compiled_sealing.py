"""A single-row INSERT's stored values made by the compiled layer, from the application's
parameters as they are (native/rnd/src/seal.rs ``RowSealer``).

:class:`recipes.RowSealer` coerces each value in Python, encodes it for each of its
onions, encrypts its DET layers one call each and seals the row's RND layers in one
batch.  For the commonest row -- integers, short strings, numerics, dates and booleans
in Eq onions -- the compiled sealer does all of it in one call: it checks each
parameter as the column's encoding checks it, encodes it as ``to_bytes`` does, and
encrypts it under the onion's DET key and, at RND, its RND key and a nonce from the
CSPRNG (one read for the row).  What it does not decide (another Python type, a value
out of range or too long for one block, an onion whose innermost layer is not DET, a
layer other than RND or DET) it leaves, and those slots are made here as
:func:`recipes.encrypt` makes them, the columns coerced in the statement's order so that
a bad value raises the error, and the first one, the Python path raises.

The encodings it takes are listed by exact class (``SEALED``): a subclass may coerce
or encode otherwise, and then is left to the Python path whole.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from ..schemes import native
from ..schemes.rnd import NONCE_BYTES
from ..stats import STATS
from ..values.datetime_encodings import DateEncoding
from ..values.encoding_base import NATIVE_BYTES, Encoding, compiled_form
from ..values.numeric_encodings import IntEncoding, NumericEncoding
from ..values.text_encodings import BoolEncoding, CollatedTextEncoding, TextEncoding
from .metadata import ColumnMeta, OnionColumn
from .recipes import RowSealer


def _no_limit(enc: Encoding) -> int:
    return 0


def _characters(enc: Encoding) -> int:
    return enc.sql_type.precision or 0  # varchar(n), char(n): n; text: none


# the encodings the compiled sealer takes (by exact class), and the characters a string
# for one may have before PostgreSQL's rules for the excess apply (the caller's then)
SEALED: dict[type[Encoding], Callable[[Encoding], int]] = {
    IntEncoding: _no_limit,
    NumericEncoding: _no_limit,
    TextEncoding: _characters,
    CollatedTextEncoding: _characters,
    BoolEncoding: _no_limit,
    DateEncoding: _no_limit,
}

_rnd_native = native.load("adaptive_rnd_native")


class CompiledRowSealer:
    """A single-row INSERT's stored values from its parameters (see the module's doc)."""

    __slots__ = (
        "_coerce",
        "_columns",
        "_compiled",
        "_indexes",
        "_nonce_bytes",
        "_python",
        "_width",
    )

    def __init__(
        self,
        compiled: Any,
        python: RowSealer,
        slots: Sequence[tuple[int | None, int, ColumnMeta, OnionColumn]],
    ) -> None:
        self._compiled = compiled
        self._python = python  # (its slots: the same, by the columns' places)
        self._nonce_bytes = NONCE_BYTES * len(slots)
        self._indexes = [index for index, _, _, _ in slots]
        # per slot, its column's place in the statement: left slots are coerced in that
        # order, into the values RowSealer reads by it
        self._columns = [column for _, column, _, _ in slots]
        self._coerce = [col.encoding.coerce for _, _, col, _ in slots]
        self._width = 1 + max(self._columns, default=-1)

    def __call__(self, params: tuple[Any, ...] | list[Any]) -> list[Any]:
        stored, left, det, rnd = self._compiled.seal(params, os.urandom(self._nonce_bytes))
        if det or rnd:
            STATS.encrypted_row(det, 0, 0, rnd)
        if left:
            columns = self._columns
            values: list[Any] = [None] * self._width
            coerced: set[int] = set()
            for j in sorted(left, key=columns.__getitem__):
                column = columns[j]
                if column not in coerced:
                    coerced.add(column)
                    index = self._indexes[j]
                    raw = None if index is None else params[index]
                    values[column] = None if raw is None else self._coerce[j](raw)
            self._python.fill(values, stored, left)
        return stored


def compiled_row_sealer(
    python: RowSealer, slots: Sequence[tuple[int | None, int, ColumnMeta, OnionColumn]]
) -> CompiledRowSealer | None:
    """The compiled sealer of a row whose stored columns are ``slots`` -- per stored
    column, the index of its parameter (None: a NULL written in the statement), the
    column's place in the statement, the column
    and the onion; ``python``: the RowSealer of the same slots, for what it leaves -- or
    None without the compiled layer or where it would decide no slot."""
    if _rnd_native is None:
        return None
    native_slots = []
    for index, _, col, oc in slots:
        enc = col.encoding
        chars = SEALED.get(type(enc))
        form = compiled_form(enc)
        opener = None
        if chars is not None and form[0] != NATIVE_BYTES and oc.innermost == "DET":
            opener = oc.opener(form)
        native_slots.append((index, opener, 0 if chars is None else chars(enc), oc))
    if not any(s[1] is not None for s in native_slots):
        return None
    return CompiledRowSealer(_rnd_native.RowSealer(native_slots), python, slots)


__all__ = ["SEALED", "CompiledRowSealer", "compiled_row_sealer"]
