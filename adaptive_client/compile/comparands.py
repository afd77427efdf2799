"""What a column's onion is compared with: a constant or parameter encrypted for that onion
at the layer it will be at, after coercion to the column's type.

A value the column's type cannot hold exactly (``int_col = 2.5``) compares equal to
nothing (:data:`NO_MATCH`) and is refused in a range; the deterministic layers keep
recent ciphertexts per builder (a repeated statement's parameter costs a lookup).
"""

from __future__ import annotations

import datetime
import math
import uuid
from decimal import Decimal
from typing import Any

from ..catalog import recipes
from ..catalog.compiled_sealing import comparand_slot
from ..catalog.metadata import OnionColumn
from ..catalog.onions import Cap
from ..errors import (
    DatetimeOutOfRange,
    EncodingError,
    NumericOutOfRange,
    OperandTypeMismatch,
    UnsupportedQuery,
    ValueOutOfDomain,
    ValueTypeMismatch,
)
from ..stats import STATS
from ..values.array_encoding import parse_array, same_elements
from ..values.encodings import (
    PARSED_STRING_TYPES,
    TEXT_TYPES,
    CollatedTextEncoding,
    FloatEncoding,
    FreeNumericEncoding,
    IntEncoding,
    NumericEncoding,
    TextEncoding,
)
from ..values.session import time_zone
from ..values.wire import CiphertextArray
from .constants import PositionalParam
from .plan import ParamBuilder, Params
from .scope import ColumnRef

_UNREPRESENTABLE = object()


# A ciphertext no stored value equals: real ones start with a layer tag (1..3).
NO_MATCH = b"\xff" * 17


def _same_value(given: Any, coerced: Any) -> bool:
    """Does the coerced (stored) form denote exactly the value the query compares with?"""
    if type(given) is int and type(coerced) is int:  # the common case, decided cheaply
        return bool(given == coerced)
    if isinstance(coerced, list):  # an array: element by element
        return same_elements(given, coerced, _same_value)
    numbers = (int, float, Decimal)
    if isinstance(given, bool) or isinstance(coerced, bool):
        return True
    if isinstance(given, numbers) and isinstance(coerced, numbers):
        if given != given or coerced != coerced:  # NaN denotes NaN, and only NaN
            return given != given and coerced != coerced
        try:
            return bool(Decimal(given) == Decimal(coerced))
        except (ValueError, ArithmeticError):
            return given == coerced
    if isinstance(given, str) and isinstance(coerced, Decimal):
        if not coerced.is_finite():
            return True  # NaN, ±Infinity: as the column's input rules read the string
        try:
            return Decimal(given.strip()) == coerced
        except ArithmeticError:
            return False
    if isinstance(given, str) and isinstance(coerced, str):
        return given.rstrip(" ") == coerced.rstrip(" ")
    return True


def _comparand(ref: ColumnRef, oc: OnionColumn, cap: Cap, layer: str, v: Any) -> Any:
    """The ciphertext a column's onion is compared with, for the value ``v``."""
    if v is None:
        return None
    if oc.innermost == "PLAIN":
        return v  # the server compares plain values itself, with its own casts
    c = _stored_form(ref, cap, v)
    return c if c is NO_MATCH else recipes.encrypt(ref.column, oc, c, layer)


# The parameter type whose comparands a column's encoding keeps (_DeterministicComparand):
# ints for numbers, strs for text -- one type each, since ``1 == 1.0 == True`` and
# ``Decimal('1.0') == Decimal('1.00')`` would share an entry; and none for dates and
# times, whose strings may depend on the session ('today', a time zone).
_KEPT_PARAMETER_TYPES: dict[type, type] = {
    IntEncoding: int,
    NumericEncoding: int,
    FreeNumericEncoding: int,
    FloatEncoding: int,
    TextEncoding: str,
    CollatedTextEncoding: str,
}


class _DeterministicComparand:
    """The builder of a comparand at a deterministic layer (DET, OPE): the ciphertexts of
    the values of one type given before are kept, so that a repeated statement's
    parameter costs a lookup -- coercion, checks and encoding are what the memo in
    recipes.encrypt leaves to each call."""

    __slots__ = ("_args", "_kept", "_type", "_value")
    _LIMIT = 4096

    def __init__(
        self, ref: ColumnRef, oc: OnionColumn, cap: Cap, layer: str, value: ParamBuilder, kept: type
    ) -> None:
        self._args = (ref, oc, cap, layer)
        self._value = value
        self._type = kept
        self._kept: dict[Any, Any] = {}

    def compiled_slot(self) -> tuple[Any, ...] | None:
        """The compiled layer's slot for this comparand (compile/plan.py
        ``CompiledBinder``), where it makes it from the parameter as given: a DET or OPE
        comparand of a ``%s`` parameter (``comparand_slot`` says of which columns).
        What it does not decide, this builder does."""
        ref, oc, _, _ = self._args
        if type(self._value) is not PositionalParam:
            return None
        return comparand_slot(self._value.index, ref.column, oc)

    def __call__(self, p: Params) -> Any:
        v = self._value(p)
        if type(v) is not self._type:
            return _comparand(*self._args, v)
        kept = self._kept
        c = kept.get(v)
        if c is not None:
            if c is not NO_MATCH:
                STATS.count(self._args[3])  # (as recipes.encrypt counts a memoized one)
            return c
        c = _comparand(*self._args, v)
        if len(kept) >= self._LIMIT:
            kept.clear()
        kept[v] = c
        return c


def _comparands(ref: ColumnRef, oc: OnionColumn, cap: Cap, layer: str, items: Any) -> list[Any]:
    """:func:`_comparand` of each item, the values encrypted in one batched call (a
    split statement's semi-join compares a key with tens of thousands)."""
    if oc.innermost not in ("DET", "OPE") or layer == "PLAIN":
        return [_comparand(ref, oc, cap, layer, v) for v in items]
    out: list[Any] = [None] * len(items)
    at: list[int] = []
    stored: list[Any] = []
    for i, v in enumerate(items):
        if v is not None:
            c = _stored_form(ref, cap, v)
            if c is NO_MATCH:
                out[i] = c
            else:
                at.append(i)
                stored.append(c)
    for i, ct in zip(at, recipes.encrypt_many(ref.column, oc, stored, layer), strict=True):
        out[i] = ct
    return out


def _float_on_scale(encoding: Any, v: float, ref: ColumnRef) -> Any:
    """A float compared with a ``numeric(p,s)`` column, as the one value of the column's
    scale it equals: PostgreSQL compares ``numeric = float8`` as float8 (the numeric
    converted, correctly rounded), so the rows that match are those whose value rounds
    to ``v`` -- of the values on the scale's grid, the nearest to ``v`` or one of its
    two neighbours.  None of them: a value the column cannot hold (no row equals it; a
    range with it is refused, as with any value off the grid).  More than one (a scale
    finer than a float's precision there): refused, no one comparand says which."""
    quantum = Decimal(1).scaleb(-encoding.s)
    if encoding.p and abs(Decimal(v)) >= Decimal(1).scaleb(encoding.p - encoding.s):
        return _UNREPRESENTABLE  # (beyond the column's precision: no value is that large)
    nearest = Decimal(v).quantize(quantum)
    equal = [g for g in (nearest - quantum, nearest, nearest + quantum) if float(g) == v]
    if len(equal) > 1:
        raise UnsupportedQuery(
            f"comparing {ref.table.name}.{ref.column.name} ({ref.column.type.sql()}) with "
            f"the float {v!r}: several of its values convert to it (pass a Decimal)",
            "float comparand of several numeric values",
        )
    return equal[0] if equal else _UNREPRESENTABLE  # (off the grid)


def _float_refused(encoding: Any, v: float, ref: ColumnRef) -> Any:
    """A float compared with an unconstrained ``numeric``: PostgreSQL compares the two
    as float8, so every stored value that rounds to ``v`` matches -- decimals of any
    length, which no one comparand of the Eq onion finds (it would miss 1/7 stored to
    28 digits where PostgreSQL finds it): refused, by name."""
    raise UnsupportedQuery(
        f"comparing {ref.table.name}.{ref.column.name} (numeric without a scale) with the "
        f"float {v!r}: PostgreSQL compares them as float8, which its Eq onion cannot "
        "(pass a Decimal, or declare numeric(p,s))",
        "float comparand of an unconstrained numeric",
    )


# how a float parameter or constant is compared with a numeric column's values
_FLOAT_AS_NUMERIC: dict[type, Any] = {
    NumericEncoding: _float_on_scale,
    FreeNumericEncoding: _float_refused,
}


# What PostgreSQL calls a parameter of each Python type psycopg sends typed (a str goes
# untyped -- 'unknown' -- and is read with the column type's input function, so it is
# checked there), and the parameter types it compares a column of each type with
# (through an operator or an implicit cast; numbers with numbers, dates with dates and
# timestamps).  Any other pair has no operator: 42883.  Types not listed are not checked.
_PARAMETER_TYPES: tuple[tuple[type | tuple[type, ...], str, str], ...] = (
    # (Python type, its kind here, PostgreSQL's name for it in the error)
    (bool, "boolean", "boolean"),  # (before int: a bool is an int)
    (int, "number", "integer"),
    (float, "number", "double precision"),
    (Decimal, "number", "numeric"),
    ((bytes, bytearray, memoryview), "bytea", "bytea"),
    (datetime.datetime, "timestamp", "timestamp without time zone"),  # (before date)
    (datetime.date, "date", "date"),
    (datetime.time, "time", "time"),
    (datetime.timedelta, "interval", "interval"),
    (uuid.UUID, "uuid", "uuid"),
)
_NUMBERS = frozenset({"number"})
_DATES = frozenset({"date", "timestamp"})
_COMPARED_WITH: dict[str, frozenset[str]] = {
    "smallint": _NUMBERS,
    "integer": _NUMBERS,
    "bigint": _NUMBERS,
    "numeric": _NUMBERS,
    "real": _NUMBERS,
    "double precision": _NUMBERS,
    "text": frozenset(),
    "varchar": frozenset(),
    "char": frozenset(),
    "boolean": frozenset({"boolean"}),
    "date": _DATES,
    "timestamp": _DATES,
    "timestamptz": _DATES,
    "time": frozenset({"time"}),
    "interval": frozenset({"interval", "time"}),  # (a time casts to an interval)
    "uuid": frozenset({"uuid"}),
    "bytea": frozenset({"bytea"}),
    "money": frozenset(),  # (money has operators with money alone)
    "inet": frozenset(),
    "cidr": frozenset(),
}


def _check_operand_type(ref: ColumnRef, cap: Cap, v: Any) -> None:
    """PostgreSQL's error where it has no operator between the column's type and the
    parameter's (as psycopg types it)."""
    col_type = ref.column.type
    allowed = _COMPARED_WITH.get(col_type.name) if col_type.element is None else None
    if allowed is None or isinstance(v, str):
        return
    kind, name = next(
        ((k, n) for types, k, n in _PARAMETER_TYPES if isinstance(v, types)), ("", "")
    )
    if kind and kind not in allowed:
        raise OperandTypeMismatch(
            f"operator does not exist: {col_type.sql()} {'=' if cap is Cap.EQ else '<'} {name}"
        )


def _operand(ref: ColumnRef, v: Any) -> Any:
    """``v`` as PostgreSQL compares it with the column where it is of another type: a
    datetime with a date as the date at its midnight (a timestamptz's in the session's
    time zone), a float with a numeric as the value it converts to (_FLOAT_AS_NUMERIC),
    a number with a real or double precision column as the float8 it converts to;
    _UNREPRESENTABLE where no value of the column equals it."""
    col = ref.column
    if type(v) is datetime.datetime and col.type.name == "date":
        local = v if v.tzinfo is None else v.astimezone(time_zone()).replace(tzinfo=None)
        return local.date() if local.time() == datetime.time() else _UNREPRESENTABLE
    if type(v) is float and math.isfinite(v):
        numeric = _FLOAT_AS_NUMERIC.get(type(col.encoding))
        if numeric is not None:
            return numeric(col.encoding, v, ref)
    if type(v) in (float, Decimal, int) and type(col.encoding) is FloatEncoding:
        # a number with a real or double precision column: PostgreSQL compares them as
        # float8, the number converted (correctly rounded) to it, a real widened
        try:
            f = float(v)
        except OverflowError:
            return _UNREPRESENTABLE
        equal = col.encoding.equal_to_double(f)
        return _UNREPRESENTABLE if equal is None else equal
    return v


def _coerced(ref: ColumnRef, v: Any) -> Any:
    """``v`` read by the column's type for a comparison (not rounded to a timestamp(p)'s
    precision); _UNREPRESENTABLE where the type holds no such value."""
    col = ref.column
    try:
        return col.encoding.comparand(v)
    except ValueTypeMismatch as mismatch:
        # (the type's own check, for the types _check_operand_type does not list)
        raise OperandTypeMismatch(str(mismatch)) from None
    except DatetimeOutOfRange:
        raise  # the comparand itself is out of range: PostgreSQL fails the statement
    except ValueOutOfDomain as exc:
        if isinstance(v, str) and col.type.name not in TEXT_TYPES:
            if isinstance(exc, NumericOutOfRange) and type(col.encoding) is NumericEncoding:
                # a number beyond numeric(p,s)'s precision: PostgreSQL reads the text as
                # numeric, without the column's precision -- a value no row holds
                return _UNREPRESENTABLE
            # a string constant (or parameter) has no type of its own: PostgreSQL reads it
            # with the column type's input function, and its error is the statement's
            raise
        return _UNREPRESENTABLE


def _stored_form(ref: ColumnRef, cap: Cap, v: Any) -> Any:
    """``v`` coerced to the column's type, NO_MATCH where it equals no value the column
    can hold (``int_col = 2.5``, ``varchar(3)_col = 'abcd'``); a range with such a
    value is refused."""
    col = ref.column
    _check_operand_type(ref, cap, v)
    v = _operand(ref, v)
    c = v if v is _UNREPRESENTABLE else _coerced(ref, v)
    parsed = isinstance(v, str) and col.type.name in PARSED_STRING_TYPES
    if isinstance(v, str) and isinstance(c, str) and col.type.name != "char":
        # (trailing spaces count in varchar and text: 'ab   ' stored in a varchar(2)
        # column is 'ab', which a comparison with 'ab   ' does not match)
        same = v == c
    else:
        same = c is not _UNREPRESENTABLE and _same_value(v, c)
    if c is _UNREPRESENTABLE or not (parsed or same):
        if cap is Cap.EQ:
            return NO_MATCH
        raise UnsupportedQuery(
            f"comparing {ref.table.name}.{col.name} ({col.type.sql()}) with a value "
            "its type cannot hold exactly",
            "range comparison with an unrepresentable value",
        )
    return c


def comparand_builder(
    ref: ColumnRef, oc: OnionColumn, cap: Cap, layer: str, value: ParamBuilder
) -> ParamBuilder:
    """The parameter ``ref``'s onion ``oc`` at ``layer`` is compared with, for ``value``."""
    kept = _KEPT_PARAMETER_TYPES.get(type(ref.column.encoding))
    if kept is not None and layer in ("DET", "OPE") and oc.innermost == layer:
        return _DeterministicComparand(ref, oc, cap, layer, value, kept)

    def build(p: Params) -> Any:
        return _comparand(ref, oc, cap, layer, value(p))

    return build


def comparand_list_builder(
    ref: ColumnRef, oc: OnionColumn, cap: Cap, layer: str, value: ParamBuilder
) -> ParamBuilder:
    """``col op ANY(%s)`` with a list: each element encrypted as a comparand."""

    def build(p: Params) -> Any:
        items = value(p)
        if items is None:
            return None
        if isinstance(items, str):  # an array literal, '{5,0}': its elements' texts
            items = parse_array(items)[2]
        if not isinstance(items, list | tuple):
            raise EncodingError(
                f"ANY/ALL of {ref.table.name}.{ref.column.name} needs a list, "
                f"not a {type(items).__name__}"
            )
        values = _comparands(ref, oc, cap, layer, items)
        if oc.innermost == "PLAIN" or layer == "PLAIN":
            return values
        return CiphertextArray(values)  # (in binary: nothing escaped)

    return build
