"""Arrays: the encoding of a column of PostgreSQL arrays (``integer[]``, ``text[][]``,
``numeric(10,2)[]``, ``_int4``, ...) of any element type the client encodes.

Values are what psycopg 3 returns: Python lists, nested for several dimensions, the
elements as the element type's encoding gives them (``None`` for NULL).  An array whose
lower bounds are not all 1 (``'[0:1]={1,2}'``) is a :class:`PgArray`: a list equal to
the one psycopg returns (psycopg drops the bounds) that keeps them, since PostgreSQL
tells such arrays apart (``'{1,2}' <> '[0:1]={1,2}'``).

Input is read as PostgreSQL's ``array_in`` reads it (``parse_array``: braces, quoting,
backslash escapes, unquoted ``NULL``, whitespace, explicit bounds ``[m:n]=``, its
SQLSTATEs and the DETAIL of a malformed literal); each element by the element type's
encoding, with storage semantics (``varchar(3)[]`` refuses a long element with 22001,
``numeric(5,2)[]`` rounds).  A Python list takes the shape psycopg's text dumper gives
it (a ragged list is a malformed literal, 22P02) and each element is coerced from its
Python value, as PostgreSQL casts a typed array element by element.

Equality and order are PostgreSQL's ``array_eq`` / ``array_cmp``: element by element
by the element type's order, a NULL element above every value, a shorter array (equal
up to its end) first, then by number of dimensions, dimension lengths and lower bounds.

Onions: Eq (``to_bytes``: dimensions, lower bounds and each element's canonical bytes,
length-prefixed: injective over arrays equal under ``=``); Exact where the elements
print differently while equal (unconstrained numeric); Ord where the element type has
one: OPE over the first element (``ope_exact`` False; the empty array lowest, a NULL
first element highest), the client finishing the order with ``order_key``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from decimal import Decimal
from typing import Any

import psycopg
from psycopg import errors as pg_errors

from ..errors import EncodingError, InvalidTextInput, NumericOutOfRange, StringTooLong
from . import far_datetime, handout
from .collation import Collation
from .encoding_base import type_error
from .encodings import (
    COMPOSITE_ENCODINGS,
    COMPOSITE_TEXT,
    EQ,
    ORD,
    Encoding,
    SqlType,
    encoding_for,
    pg_text,
)

MAXDIM = 6  # PostgreSQL's limit on dimensions
_INT_MAX = 2**31 - 1
_MAX_ITEMS = 134_217_727  # MaxArraySize: 1 GB of 8-byte items
_SPACE = frozenset(" \t\n\r\v\f")  # array_isspace


class PgArray(list[Any]):
    """An array whose lower bounds are not all 1: the list psycopg returns, plus
    ``lower``, the lower bound of each dimension."""

    lower: tuple[int, ...]

    def __init__(self, items: Sequence[Any], lower: tuple[int, ...]) -> None:
        super().__init__(items)
        self.lower = lower


class MalformedArray(InvalidTextInput):
    """An array literal PostgreSQL's array_in refuses (22P02) with its DETAIL."""

    def __init__(self, text: str, detail: str) -> None:
        super().__init__(f'malformed array literal: "{text}"\nDETAIL:  {detail}')
        self.detail = detail


class ArraySubscriptError(EncodingError, pg_errors.ArraySubscriptError):
    """Explicit bounds with the upper below the lower (2202E)."""


class ArrayLimitExceeded(EncodingError, pg_errors.ProgramLimitExceeded):
    """More dimensions or items than PostgreSQL's arrays hold (54000)."""


# --- array_in -----------------------------------------------------------------------------

# ArrayCount's parse states
_NO_LEVEL, _LEVEL_STARTED, _ELEM_STARTED, _ELEM_COMPLETED = 0, 1, 2, 3
_QUOTED_STARTED, _QUOTED_COMPLETED, _ELEM_DELIMITED = 4, 5, 6
_LEVEL_COMPLETED, _LEVEL_DELIMITED = 7, 8
_CHAR_FOLLOWS = {
    # a character and the states it may follow (PostgreSQL 15's ArrayCount)
    "\\": frozenset({_LEVEL_STARTED, _ELEM_STARTED, _QUOTED_STARTED, _ELEM_DELIMITED}),
    '"': frozenset({_LEVEL_STARTED, _QUOTED_STARTED, _ELEM_DELIMITED}),
    "{": frozenset({_NO_LEVEL, _LEVEL_STARTED, _LEVEL_DELIMITED}),
    "}": frozenset({_ELEM_STARTED, _ELEM_COMPLETED, _QUOTED_COMPLETED, _LEVEL_COMPLETED}),
    ",": frozenset({_ELEM_STARTED, _ELEM_COMPLETED, _QUOTED_COMPLETED, _LEVEL_COMPLETED}),
    "": frozenset({_LEVEL_STARTED, _ELEM_STARTED, _ELEM_DELIMITED}),  # other non-space
}


def _count(s: str, at: int, original: str) -> list[int]:
    """The dimension lengths the braces from ``s[at]`` give (PostgreSQL 15's ArrayCount,
    quirks included); [] for an empty array."""

    def bad(detail: str) -> MalformedArray:
        return MalformedArray(original, detail)

    nest, ndim = 0, 1
    temp, dim, last = [0] * MAXDIM, [0] * MAXDIM, [0] * MAXDIM
    nelems = [1] * MAXDIM
    in_quotes, empty = False, True
    state = _NO_LEVEL
    i, n = at, len(s)
    done = False
    while not done:
        item_done = False
        while not item_done:
            if state in (_ELEM_STARTED, _QUOTED_STARTED):
                empty = False
            if i >= n:
                raise bad("Unexpected end of input.")
            c = s[i]
            if c == "\\":
                if state not in _CHAR_FOLLOWS["\\"]:
                    raise bad('Unexpected "\\" character.')
                if state != _QUOTED_STARTED:
                    state = _ELEM_STARTED
                if i + 1 >= n:
                    raise bad("Unexpected end of input.")
                i += 1
            elif c == '"':
                if state not in _CHAR_FOLLOWS['"']:
                    raise bad("Unexpected array element.")
                in_quotes = not in_quotes
                state = _QUOTED_STARTED if in_quotes else _QUOTED_COMPLETED
            elif c == "{" and not in_quotes:
                if state not in _CHAR_FOLLOWS["{"]:
                    raise bad('Unexpected "{" character.')
                state = _LEVEL_STARTED
                if nest >= MAXDIM:
                    raise ArrayLimitExceeded(
                        f"number of array dimensions ({nest + 1}) exceeds the maximum "
                        f"allowed ({MAXDIM})"
                    )
                temp[nest] = 0
                nest += 1
                ndim = max(ndim, nest)
            elif c == "}" and not in_quotes:
                if state not in _CHAR_FOLLOWS["}"] and not (nest == 1 and state == _LEVEL_STARTED):
                    raise bad('Unexpected "}" character.')
                state = _LEVEL_COMPLETED
                if nest == 0:
                    raise bad('Unmatched "}" character.')
                nest -= 1
                if last[nest] != 0 and nelems[nest] != last[nest]:
                    raise bad(
                        "Multidimensional arrays must have sub-arrays with matching dimensions."
                    )
                last[nest] = nelems[nest]
                nelems[nest] = 1
                if nest == 0:
                    done = item_done = True
                else:
                    temp[nest - 1] += 1
            elif not in_quotes and c not in "{}":
                if c == ",":
                    if state not in _CHAR_FOLLOWS[","]:
                        raise bad('Unexpected "," character.')
                    state = _LEVEL_DELIMITED if state == _LEVEL_COMPLETED else _ELEM_DELIMITED
                    item_done = True
                    nelems[nest - 1] += 1
                elif c not in _SPACE:
                    if state not in _CHAR_FOLLOWS[""]:
                        raise bad("Unexpected array element.")
                    state = _ELEM_STARTED
            if not item_done:
                i += 1
        temp[ndim - 1] += 1
        i += 1
    if any(c not in _SPACE for c in s[i:]):
        raise bad("Junk after closing right brace.")
    if empty:
        return []
    dim[:ndim] = temp[:ndim]
    return dim[:ndim]


def _items(s: str, at: int, dims: list[int], original: str) -> Iterator[tuple[int, str | None]]:
    """(offset, element text or None for NULL) of each element from ``s[at]``, in the
    order written (PostgreSQL 15's ReadArrayStr; the structure is checked already)."""
    ndim = len(dims)
    prod = [1] * ndim
    for k in range(ndim - 2, -1, -1):
        prod[k] = prod[k + 1] * dims[k + 1]
    nitems = prod[0] * dims[0]
    indx = [0] * ndim
    nest, in_quotes = 0, False
    i, n = at, len(s)
    done = False
    while not done:
        item_done, leading, quoted = False, True, False
        out: list[str] = []
        end = 0  # the length of ``out`` without trailing unquoted whitespace
        pos = -1
        while not item_done:
            if i >= n:
                raise MalformedArray(original, "Unexpected end of input.")
            c = s[i]
            if c == "\\":
                i += 1
                if i >= n:
                    raise MalformedArray(original, "Unexpected end of input.")
                out.append(s[i])
                i += 1
                leading, quoted = False, True
                end = len(out)
            elif c == '"':
                in_quotes = not in_quotes
                if in_quotes:
                    leading = False
                else:
                    end = len(out)
                quoted = True
                i += 1
            elif c == "{" and not in_quotes:
                if nest >= ndim:
                    raise MalformedArray(original, 'Unexpected "{" character.')
                nest += 1
                indx[nest - 1] = 0
                i += 1
            elif c == "}" and not in_quotes:
                if nest == 0:
                    raise MalformedArray(original, 'Unmatched "}" character.')
                if pos == -1:
                    pos = sum(x * p for x, p in zip(indx, prod, strict=True))
                indx[nest - 1] = 0
                nest -= 1
                if nest == 0:
                    done = item_done = True
                else:
                    indx[nest - 1] += 1
                i += 1
            elif in_quotes:
                out.append(c)
                i += 1
            elif c == ",":
                if pos == -1:
                    pos = sum(x * p for x, p in zip(indx, prod, strict=True))
                item_done = True
                indx[ndim - 1] += 1
                i += 1
            elif c in _SPACE:
                if not leading:
                    out.append(c)
                i += 1
            else:
                out.append(c)
                i += 1
                leading = False
                end = len(out)
        if not 0 <= pos < nitems:
            raise MalformedArray(
                original, "Multidimensional arrays must have sub-arrays with matching dimensions."
            )
        text = "".join(out[:end])
        yield pos, (None if not quoted and text.lower() == "null" else text)


def _atoi(s: str) -> int:
    """C's atoi on the characters array_in reads as a bound (digits and signs)."""
    j = 1 if s[:1] in ("+", "-") else 0
    k = j
    while k < len(s) and s[k].isdigit():
        k += 1
    v = int(s[j:k]) if k > j else 0
    v = -v if s[:1] == "-" else v
    return (v + 2**31) % 2**32 - 2**31  # (an int's wrap-around)


def parse_array(text: str) -> tuple[list[int], list[int], list[str | None]]:
    """(dimension lengths, lower bounds, element texts in storage order, None for NULL)
    of an array literal, as PostgreSQL's array_in reads it; ``([], [], [])`` is the
    empty array."""
    p, n = 0, len(text)
    dims: list[int] = []
    lower: list[int] = []
    while True:
        while p < n and text[p] in _SPACE:
            p += 1
        if p >= n or text[p] != "[":
            break
        p += 1
        if len(dims) >= MAXDIM:
            raise ArrayLimitExceeded(
                f"number of array dimensions ({len(dims) + 1}) exceeds the maximum "
                f"allowed ({MAXDIM})"
            )
        q = p
        while q < n and (text[q].isdigit() or text[q] in "+-"):
            q += 1
        if q == p:
            raise MalformedArray(text, '"[" must introduce explicitly-specified array dimensions.')
        lb = 1
        if q < n and text[q] == ":":
            lb = _atoi(text[p:q])
            p = q + 1
            q = p
            while q < n and (text[q].isdigit() or text[q] in "+-"):
                q += 1
            if q == p:
                raise MalformedArray(text, "Missing array dimension value.")
        if q >= n or text[q] != "]":
            raise MalformedArray(text, 'Missing "]" after array dimensions.')
        ub = _atoi(text[p:q])
        p = q + 1
        if ub < lb:
            raise ArraySubscriptError("upper bound cannot be less than lower bound")
        dims.append(ub - lb + 1)
        lower.append(lb)
    if not dims:
        if p >= n or text[p] != "{":
            raise MalformedArray(text, 'Array value must start with "{" or dimension information.')
        dims = _count(text, p, text)
        lower = [1] * len(dims)
    else:
        if text[p : p + 1] != "=":
            raise MalformedArray(text, 'Missing "=" after array dimensions.')
        p += 1
        while p < n and text[p] in _SPACE:
            p += 1
        if p >= n or text[p] != "{":
            raise MalformedArray(text, 'Array contents must start with "{".')
        if _count(text, p, text) != dims:
            raise MalformedArray(text, "Specified array dimensions do not match array contents.")
    items = _checked_size(dims, lower)
    if items == 0:
        return [], [], []
    values: list[str | None] = [None] * items
    for pos, item in _items(text, p, dims, text):
        values[pos] = item
    return dims, lower, values


def _checked_size(dims: list[int], lower: list[int]) -> int:
    """The number of items (ArrayGetNItems, ArrayCheckBounds)."""
    items = 1
    for d, lb in zip(dims, lower, strict=True):
        items *= d
        if items > _MAX_ITEMS:
            raise ArrayLimitExceeded(f"array size exceeds the maximum allowed ({_MAX_ITEMS})")
        if d + lb > _INT_MAX:
            raise ArrayLimitExceeded(f"array lower bound is too large: {lb}")
    return items if dims else 0


def _list_shape(value: list[Any], dumped: bool = True) -> tuple[list[int], list[Any]]:
    """(dimension lengths, elements in order) of a Python list as PostgreSQL reads the
    literal psycopg's text dumper makes of it (a ragged list: 22P02)."""
    flat: list[Any] = []
    parts: list[str] = []

    def walk(v: list[Any]) -> None:
        parts.append("{")
        for k, x in enumerate(v):
            if k:
                parts.append(",")
            if isinstance(x, list):
                walk(x)
            else:
                parts.append(_quoted(pg_text(x)))  # (as the dumper writes it, for errors)
                flat.append(x)
        parts.append("}")

    walk(value)
    kinds = {type(x) for x in flat if x is not None}
    if dumped and len(kinds) > 1:  # (psycopg refuses to send such a list)
        names = ", ".join(sorted(k.__name__ for k in kinds))
        raise psycopg.DataError(f"cannot dump lists of mixed types; got: {names}")
    skeleton = "".join(parts)
    dims = _count(skeleton, 0, skeleton)
    _checked_size(dims, [1] * len(dims))
    if not dims:
        return [], []
    items = 1
    for d in dims:
        items *= d
    placed: list[Any] = [None] * items
    for (pos, _), x in zip(_items(skeleton, 0, dims, skeleton), flat, strict=True):
        placed[pos] = x
    return dims, placed


# --- values -------------------------------------------------------------------------------


def _nest(flat: list[Any], dims: Sequence[int]) -> list[Any]:
    out = flat
    for d in reversed(dims[1:]):
        out = [out[i : i + d] for i in range(0, len(out), d)]
    return out


def _build(flat: list[Any], dims: Sequence[int], lower: Sequence[int]) -> list[Any]:
    nested = _nest(flat, dims)
    if any(lb != 1 for lb in lower):
        return PgArray(nested, tuple(lower))
    return nested


def as_list(v: Any) -> Any:
    """An array value as psycopg returns it: a plain list (lower bounds dropped)."""
    return list(v) if isinstance(v, PgArray) else v


def shape(v: list[Any]) -> tuple[tuple[int, ...], tuple[int, ...], list[Any]]:
    """(dimension lengths, lower bounds, elements in order) of an array value."""
    dims: list[int] = []
    level: Any = v
    while isinstance(level, list) and level:
        dims.append(len(level))
        level = level[0]
    flat: list[Any] = v
    for _ in dims[1:]:
        flat = [x for sub in flat for x in sub]
    lower = v.lower if isinstance(v, PgArray) else (1,) * len(dims)
    return tuple(dims), tuple(lower), flat


def array_text(v: list[Any], element: Callable[[Any], str | None] = pg_text) -> str:
    """An array as PostgreSQL's array_out prints it: ``{1,NULL,"a b"}``, bounds other
    than 1 as ``[0:1]={1,2}``."""
    dims, lower, flat = shape(v)
    if not dims:
        return "{}"
    texts = [_quoted(element(x)) for x in flat]
    body = _braced(texts, dims)
    if any(lb != 1 for lb in lower):
        bounds = "".join(f"[{lb}:{lb + d - 1}]" for lb, d in zip(lower, dims, strict=True))
        return f"{bounds}={body}"
    return body


def _quoted(text: str | None) -> str:
    if text is None:
        return "NULL"
    if text == "" or text.lower() == "null" or any(c in '{}",\\' or c in _SPACE for c in text):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return text


def _braced(texts: list[str], dims: Sequence[int]) -> str:
    if len(dims) == 1:
        return "{" + ",".join(texts) + "}"
    step = len(texts) // dims[0]
    return (
        "{"
        + ",".join(_braced(texts[i : i + step], dims[1:]) for i in range(0, len(texts), step))
        + "}"
    )


# --- ARRAY[...] constructors ----------------------------------------------------------------


class Constructed:
    """The value of an ``ARRAY[...]`` constructor of constants: its items (nested lists
    for ``ARRAY[[1,2],[3,4]]``) and the element type PostgreSQL resolves for them
    (``integer`` for numbers, ``text`` for strings and NULLs alone, ``boolean``).  Stored
    into a column, it is cast as PostgreSQL's assignment casts the array (numbers to any
    number or text, anything to text; text into integer[] is 42804); under an explicit
    cast (``ARRAY['1']::int[]``) each element is read as the cast's element type."""

    __slots__ = ("items", "kind")

    def __init__(self, items: list[Any], kind: str) -> None:
        self.items = items
        self.kind = kind


_KINDS = {bool: "boolean", int: "number", Decimal: "number", str: "text"}


def construct(items: list[Any]) -> Constructed:
    """An ``ARRAY[...]`` of these values (sub-constructors for more dimensions)."""
    nested = [x.items if isinstance(x, Constructed) else x for x in items]
    subarrays = [isinstance(x, Constructed) for x in items]
    if any(subarrays) and (not all(subarrays) or len({repr(_dims_of(x)) for x in nested}) > 1):
        raise pg_errors.ArraySubscriptError(
            "multidimensional arrays must have array expressions with matching dimensions"
        )
    leaves = [x for x in _leaves(nested) if x is not None]
    kinds = {_KINDS.get(type(x), "text") for x in leaves}
    if "number" in kinds:
        kinds.discard("text")  # (a string constant takes the numbers' type)
    if len(kinds) > 1:
        raise pg_errors.DatatypeMismatch("ARRAY types integer and boolean cannot be matched")
    return Constructed(nested, kinds.pop() if kinds else "text")


def _dims_of(v: list[Any]) -> list[int]:
    dims: list[int] = []
    level: Any = v
    while isinstance(level, list):
        dims.append(len(level))
        level = level[0] if level else None
    return dims


def _leaves(v: list[Any]) -> Iterator[Any]:
    for x in v:
        if isinstance(x, list):
            yield from _leaves(x)
        else:
            yield x


# the element types each constructor's element type is assigned to (PostgreSQL's
# assignment casts, text taking anything through its output)
_ASSIGNABLE = {
    "number": frozenset({"smallint", "integer", "bigint", "numeric", "real", "double precision"}),
    "boolean": frozenset({"boolean"}),
    "text": frozenset(),
}
_TEXTUAL = frozenset({"text", "varchar", "char"})


def _assigned(c: Constructed, element: SqlType, sql: str) -> list[Any]:
    """A constructor's items as assigned to an array of ``element`` (kind ``cast``:
    under an explicit cast, each item read as the element type)."""
    if c.kind == "cast":
        return c.items
    if not c.items:
        raise pg_errors.IndeterminateDatatype("cannot determine type of empty array")
    if element.name in _TEXTUAL:
        if c.kind == "boolean":
            return _mapped(c.items, lambda x: "true" if x else "false")
        return c.items
    if element.name not in _ASSIGNABLE[c.kind]:
        kind = {"number": "integer"}.get(c.kind, c.kind)
        raise pg_errors.DatatypeMismatch(
            f"column is of type {sql} but expression is of type {kind}[]"
        )
    return c.items


def _mapped(v: list[Any], f: Callable[[Any], Any]) -> list[Any]:
    return [_mapped(x, f) if isinstance(x, list) else None if x is None else f(x) for x in v]


UNFIT = object()  # an element of a comparand that no element of the column can equal
_MODIFIED = frozenset({"numeric", "varchar", "char"})  # (elements bounded by a modifier)


def same_elements(given: Any, coerced: list[Any], same: Callable[[Any, Any], bool]) -> bool:
    """Does each element of ``coerced`` (a comparand read from ``given``) denote
    exactly the element written (``same``: the scalar test)?  ``'{1.555}'`` compared
    with a numeric(5,2)[] column is not ``{1.56}``."""
    if isinstance(given, str):
        written: list[Any] = parse_array(given)[2]
    elif isinstance(given, Constructed):
        written = list(_leaves(given.items))
    elif isinstance(given, list) and not isinstance(given, PgArray):
        written = _list_shape(given)[1]
    else:
        return True
    flat = shape(coerced)[2]
    return len(written) == len(flat) and all(
        c is not UNFIT and (w is None or c is None or same(w, c))
        for w, c in zip(written, flat, strict=True)
    )


# --- the encoding -------------------------------------------------------------------------


def _length(b: bytes) -> bytes:
    return len(b).to_bytes(4, "big")


class ArrayEncoding(Encoding):
    """An array of ``element``'s values (see the module docstring)."""

    ope_exact = False

    def __init__(self, sql_type: SqlType, element: Encoding) -> None:
        super().__init__(sql_type)
        self.element = element
        self.onions = frozenset({EQ} | ({ORD} & element.onions))
        self.ope_bits = element.ope_bits + 1 if ORD in self.onions else 0
        self.exact_display = element.exact_display

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.element!r})"

    # -- input -------------------------------------------------------------------------
    def coerce(self, value: Any) -> Any:
        return self._read(value, self.element.coerce)

    def comparand(self, value: Any) -> Any:
        """The array a comparison compares with: PostgreSQL reads it as an array of the
        element type without its modifier, so an element beyond ``numeric(p,s)`` or
        ``varchar(n)`` is no error but a value no stored array holds (``UNFIT``)."""
        return self._read(value, self._element_comparand)

    def _element_comparand(self, x: Any) -> Any:
        try:
            return self.element.comparand(x)
        except (StringTooLong, NumericOutOfRange):
            element = self.element.sql_type
            if element.precision is None or element.name not in _MODIFIED:
                raise
            return UNFIT

    def _read(self, value: Any, convert: Callable[[Any], Any]) -> Any:
        if value is None:
            return None
        if isinstance(value, str):
            dims, lower, texts = parse_array(value)
            return _build([convert(t) for t in texts], dims, lower)
        if isinstance(value, Constructed):
            assert self.sql_type.element is not None
            items = _assigned(value, self.sql_type.element, self.sql_type.sql())
            dims, flat = _list_shape(items, dumped=False)
            return _build([convert(x) for x in flat], dims, [1] * len(dims))
        if isinstance(value, PgArray):
            dims_, lower_, flat = shape(value)
            return _build([convert(x) for x in flat], dims_, lower_)
        if isinstance(value, list):
            dims, flat = _list_shape(value)
            return _build([convert(x) for x in flat], dims, [1] * len(dims))
        raise type_error(self.sql_type, value)  # (42804 assigned, 42883 compared)

    # -- Eq and Exact ----------------------------------------------------------------------
    def _bytes(self, v: list[Any], encode: Callable[[Any], bytes]) -> bytes:
        dims, lower, flat = shape(v)
        out = [bytes([len(dims)])]
        for d, lb in zip(dims, lower, strict=True):
            out.append(d.to_bytes(4, "big") + lb.to_bytes(4, "big", signed=True))
        for x in flat:
            if x is None:
                out.append(b"\xff\xff\xff\xff")
            else:
                b = encode(x)
                out.append(_length(b) + b)
        return b"".join(out)

    def _value(self, b: bytes, decode: Callable[[bytes], Any]) -> Any:
        b = bytes(b)
        try:
            ndim = b[0]
            dims, lower = [], []
            p = 1
            for _ in range(ndim):
                dims.append(int.from_bytes(b[p : p + 4], "big"))
                lower.append(int.from_bytes(b[p + 4 : p + 8], "big", signed=True))
                p += 8
            items = 1
            for d in dims:
                items *= d
            flat: list[Any] = []
            for _ in range(items if dims else 0):
                size = int.from_bytes(b[p : p + 4], "big")
                p += 4
                if size == 0xFFFFFFFF:
                    flat.append(None)
                    continue
                if p + size > len(b):
                    raise self._bad("encoding")
                flat.append(decode(b[p : p + size]))
                p += size
        except IndexError:
            raise self._bad("encoding") from None
        if p != len(b) or ndim > MAXDIM:
            raise self._bad("encoding")
        return _build(flat, dims, lower)

    def to_bytes(self, v: list[Any]) -> bytes:
        return self._bytes(v, self.element.to_bytes)

    def from_bytes(self, b: bytes) -> Any:
        return self._value(b, self.element.from_bytes)

    def to_exact_bytes(self, v: list[Any]) -> bytes:
        return self._bytes(v, self.element.to_exact_bytes)

    def from_exact_bytes(self, b: bytes) -> Any:
        return self._value(b, self.element.from_exact_bytes)

    # -- Ord ---------------------------------------------------------------------------
    def to_ope(self, v: list[Any]) -> int:
        if ORD not in self.onions:
            return super().to_ope(v)
        _, _, flat = shape(v)
        if not flat:
            return 0  # the empty array sorts first
        if flat[0] is None:
            return (1 << self.element.ope_bits) + 1  # a NULL element above every value
        return 1 + self.element.to_ope(flat[0])

    def order_key(self, v: list[Any]) -> Any:
        """PostgreSQL's array_cmp as a key: the elements (NULL above every value; a
        prefix first), then the number of dimensions, their lengths, their lower
        bounds."""
        dims, lower, flat = shape(v)
        key = self.element.order_key
        items = tuple((1, 0) if x is None else (0, key(x)) for x in flat)
        return (items, len(dims), dims, lower)


def _array_encoding(t: SqlType, collation: Collation | None) -> Encoding:
    if t.element is None:
        raise EncodingError(f"{t.sql()} is not an array type")
    return ArrayEncoding(t, encoding_for(t.element, collation))


COMPOSITE_ENCODINGS["array"] = _array_encoding
COMPOSITE_TEXT[list] = array_text


# arrays of the types whose values may be held in a form of the client's own (a date
# outside Python's years, an infinity): by type code, the element's type code
_DATED_ARRAYS = {1182: 1082, 1115: 1114, 1185: 1184}


def _internal(v: Any) -> bool:
    return any(_internal(x) if isinstance(x, list) else type(x) in handout.APPLICATION for x in v)


def _application_array(v: list[Any], oid: int) -> Any:
    """An array holding such a value, as psycopg's loader gives the application its
    text (by default psycopg's error); any other array as it is."""
    if not _internal(v):
        return v
    return far_datetime.loaded(oid, lambda: array_text(v))


for _kind in (list, PgArray):
    handout.register_typed(_kind, _application_array, *_DATED_ARRAYS)
