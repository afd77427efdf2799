"""A single-row INSERT's stored values made by the compiled layer, from the application's
parameters as they are (native/rnd/src/seal.rs ``RowSealer``).

:class:`recipes.RowSealer` coerces each value in Python, encodes it for each of its
onions, encrypts its DET layers one call each and seals the row's RND layers in one
batch.  For the commonest row -- integers, short strings, numerics, dates and booleans
in Eq, Ord and Single onions -- the compiled sealer does all of it in one call: it checks each
parameter as the column's encoding checks it, encodes it as ``to_bytes`` (Eq) or
``to_ope`` (Ord) does, encrypts it under the onion's DET key or by its order scheme
(memoized as the Python path memoizes it) and, at RND, under its RND key and a nonce
from the CSPRNG (one read for the row).  What it does not decide (another Python type,
a value out of range for its column, another onion, a layer other than RND or the inner
one) it leaves, and those slots are made by the RowSealer of the same row, their
columns coerced in the statement's order so that a bad value raises the error, and the
first one, the Python path raises.

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
from ..values.datetime_encodings import DateEncoding, TimestampEncoding
from ..values.encoding_base import (
    NATIVE_BYTES,
    NATIVE_INT,
    NATIVE_TEXT,
    NO_NATIVE_FORM,
    Encoding,
    NativeForm,
    compiled_form,
)
from ..values.numeric_encodings import IntEncoding, NumericEncoding
from ..values.text_encodings import BoolEncoding, CollatedTextEncoding, TextEncoding
from .metadata import ColumnMeta, OnionColumn
from .recipes import RowSealer


def _timestamp_form(enc: Encoding) -> NativeForm:
    """A timestamp without time zone at microseconds: naive datetimes, as they are (a
    timestamp(p) rounds them: the Python path's)."""
    assert isinstance(enc, TimestampEncoding)
    return compiled_form(enc) if enc.precision == 6 else NO_NATIVE_FORM


# the encodings the compiled sealer takes (by exact class: a subclass may coerce or encode
# otherwise): how it reads their values, and whether it makes their Ord onion's integer
# too (text's only under the C collation: a collated one's is the collator's sort key)
SEALED: dict[type[Encoding], tuple[Callable[[Encoding], NativeForm], bool]] = {
    IntEncoding: (compiled_form, True),
    NumericEncoding: (compiled_form, True),
    TextEncoding: (compiled_form, True),
    CollatedTextEncoding: (compiled_form, False),
    BoolEncoding: (compiled_form, True),
    DateEncoding: (compiled_form, True),
    TimestampEncoding: (_timestamp_form, True),
}

_rnd_native = native.load("adaptive_rnd_native")
_NATIVE_CTR: Any = getattr(_rnd_native, "Ctr", ())  # (an onion's RND key, compiled)
_NO_FORM = (NATIVE_BYTES, 0, 0, 0, 0, False)  # (a slot left to the Python path)


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
        self._python = python  # (made of the same slots: row_sealers)
        self._nonce_bytes = NONCE_BYTES * len(slots)
        self._indexes = [index for index, _, _, _ in slots]
        # per slot, its column's place in the statement: left slots are coerced in that
        # order, into the values RowSealer reads by it
        self._columns = [column for _, column, _, _ in slots]
        self._coerce = [col.encoding.coerce for _, _, col, _ in slots]
        self._width = 1 + max(self._columns, default=-1)

    def __call__(self, params: tuple[Any, ...] | list[Any]) -> list[Any]:
        stored, left, (det, ope, rnd) = self._compiled.seal(params, os.urandom(self._nonce_bytes))
        if det or ope or rnd:
            STATS.encrypted_row(det, ope, 0, rnd)
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


def row_sealers(
    slots: Sequence[tuple[int | None, int, ColumnMeta, OnionColumn]], compiled: bool = True
) -> tuple[RowSealer, CompiledRowSealer | None]:
    """The sealers of a row whose stored columns are ``slots`` -- per stored column, the
    index of its parameter (None: a NULL written in the statement), the column's place in
    the statement, the column and the onion: the Python path's (it takes the coerced
    values, by the columns' places), and the compiled layer's (it takes the parameters),
    or None without the compiled layer, where ``compiled`` is false, or where it would
    decide no slot."""
    python = RowSealer([(column, col, oc) for _, column, col, oc in slots])
    if _rnd_native is None or not compiled:
        return python, None
    native_slots = [(index, *_parts(col, oc), oc) for index, _, col, oc in slots]
    if not any(s[2] is not None or s[3] is not None for s in native_slots):
        return python, None
    return python, CompiledRowSealer(_rnd_native.RowSealer(native_slots), python, slots)


class _InnerLayer:
    """An onion as a comparand's slot shows it to the compiled sealer: always at its
    inner layer (a comparand is the DET or OPE ciphertext, never sealed under RND)."""

    __slots__ = ("layer",)

    def __init__(self, layer: str) -> None:
        self.layer = layer


def comparand_slot(index: int, col: ColumnMeta, oc: OnionColumn) -> tuple[Any, ...] | None:
    """The compiled layer's slot for the comparand of parameter ``index`` -- the
    ciphertext ``col``'s onion is compared with at its inner layer: an Eq onion's DET
    value, an Ord onion's OPE value -- or None where it does not make it: integers
    (and text, at DET) only.  A numeric's comparand is not rounded to the column's scale
    as its stored value is (``numeric(7,2) = 0.125`` matches nothing), and a text's
    Ord value is its collation's sort key."""
    if _rnd_native is None or oc.innermost not in ("DET", "OPE"):
        return None
    form, opener, ord_parts = _parts(col, oc)
    if opener is not None and oc.innermost == "DET" and form[0] in (NATIVE_INT, NATIVE_TEXT):
        return (index, form, opener, None, _InnerLayer("DET"))
    if ord_parts is not None and form[0] == NATIVE_INT:
        return (index, form, None, ord_parts, _InnerLayer("OPE"))
    return None


def comparand_sealer(slots: Sequence[tuple[Any, ...]]) -> Any:
    """The maker of the comparands of ``slots`` (:func:`comparand_slot`'s) in one call:
    its ``seal(params, nonces)`` gives them as :class:`RowSealer` gives stored values,
    ``left`` the slots it does not decide (another Python type, a value the column
    cannot hold), whose builders decide them."""
    assert _rnd_native is not None
    return _rnd_native.RowSealer(list(slots))


def _parts(col: ColumnMeta, oc: OnionColumn) -> tuple[Any, Any, Any]:
    """A slot's form, and its Eq or Single onion's opener or its Ord onion's parts
    (neither: the Python path's slot)."""
    enc = col.encoding
    sealed = SEALED.get(type(enc))
    if sealed is None:
        return _NO_FORM, None, None
    read, ord_too = sealed
    kind, width, scale, limit = read(enc)
    chars = enc.sql_type.precision or 0 if isinstance(enc, TextEncoding) else 0
    form = (kind, width, scale, limit, chars, enc.sql_type.name == "char")
    if kind == NATIVE_BYTES:
        return _NO_FORM, None, None
    if oc.innermost == "DET" or oc.stack == ("RND",):  # (an Exact onion has no opener)
        return form, oc.opener(compiled_form(enc)), None
    ctr = getattr(oc.rnd, "_ctr", None) if "RND" in oc.stack else None
    if oc.innermost == "OPE" and ord_too and (ctr is None) == ("RND" not in oc.stack):
        if ctr is not None and not isinstance(ctr, _NATIVE_CTR):
            return _NO_FORM, None, None  # (another RND backend: the Python path's)
        parts = (ctr, oc.memo.setdefault("OPE", {}), oc.ope.encrypt, oc.innermost)
        return form, None, parts
    return _NO_FORM, None, None


__all__ = ["SEALED", "CompiledRowSealer", "comparand_sealer", "comparand_slot", "row_sealers"]
