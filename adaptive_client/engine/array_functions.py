"""PostgreSQL 15's array functions and operators over the client's values, with
PostgreSQL's results, NULLs, bounds and errors.

An array is what :class:`~adaptive_client.values.array_encoding.ArrayEncoding` gives: a
list (nested for several dimensions), a :class:`PgArray` where a lower bound is not 1,
``None`` for a NULL element.  Every function takes the encoding of its (first) array
argument first; elements are equal as the element type's ``=`` says (their canonical
bytes: numeric ``1.0`` equals ``1``).  Results keep the bounds PostgreSQL gives them
(``array_append`` keeps the lower bound, a slice starts at 1).

Set-returning ``unnest`` returns a list; the three-valued ``= ANY`` / ``<> ALL`` return
``None`` for SQL's unknown.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from psycopg import errors as pg_errors

from ..errors import AdaptiveError
from ..values.array_encoding import ArrayEncoding, PgArray, shape
from ..values.encodings import pg_text
from .order_bytes import key_bytes


class ArrayConcatError(AdaptiveError, pg_errors.ArraySubscriptError):
    """Arrays whose dimensions do not fit together (2202E)."""


class ArrayShapeError(AdaptiveError, pg_errors.DataException):
    """array_append / array_prepend of a multidimensional array (22000)."""


class ArrayUnsupported(AdaptiveError, pg_errors.FeatureNotSupported):
    """Searching or removing in a multidimensional array (0A000)."""


class ArrayNullNotAllowed(AdaptiveError, pg_errors.NullValueNotAllowed):
    """A NULL initial position for array_position (22004)."""


# --- shapes -----------------------------------------------------------------------------

Shape = tuple[tuple[int, ...], tuple[int, ...], list[Any]]


def build(flat: Sequence[Any], dims: Sequence[int], lower: Sequence[int]) -> list[Any]:
    """An array value of these elements (storage order), dimensions and lower bounds."""
    if not dims:
        return []
    out: list[Any] = list(flat)
    for d in reversed(dims[1:]):
        out = [out[i : i + d] for i in range(0, len(out), d)]
    if any(lb != 1 for lb in lower):
        return PgArray(out, tuple(lower))
    return out


def _key(enc: ArrayEncoding) -> Callable[[Any], bytes]:
    return enc.element.to_bytes


def _same(enc: ArrayEncoding, a: Any, b: Any) -> bool:
    """IS NOT DISTINCT FROM under the element type's ``=``."""
    if a is None or b is None:
        return a is None and b is None
    return bool(enc.element.to_bytes(a) == enc.element.to_bytes(b))


# --- dimensions -------------------------------------------------------------------------


def _dimension(a: list[Any], dim: int) -> tuple[int, int] | None:
    dims, lower, _ = shape(a)
    if not 1 <= dim <= len(dims):
        return None
    return dims[dim - 1], lower[dim - 1]


def array_length(enc: ArrayEncoding, a: list[Any], dim: int) -> int | None:
    d = _dimension(a, dim)
    return None if d is None else d[0]


def array_lower(enc: ArrayEncoding, a: list[Any], dim: int) -> int | None:
    d = _dimension(a, dim)
    return None if d is None else d[1]


def array_upper(enc: ArrayEncoding, a: list[Any], dim: int) -> int | None:
    d = _dimension(a, dim)
    return None if d is None else d[1] + d[0] - 1


def array_ndims(enc: ArrayEncoding, a: list[Any]) -> int | None:
    n = len(shape(a)[0])
    return n or None


def array_dims(enc: ArrayEncoding, a: list[Any]) -> str | None:
    dims, lower, _ = shape(a)
    if not dims:
        return None
    return "".join(f"[{lb}:{lb + d - 1}]" for d, lb in zip(dims, lower, strict=True))


def cardinality(enc: ArrayEncoding, a: list[Any]) -> int:
    return len(shape(a)[2])


# --- building ---------------------------------------------------------------------------


def _one_dimension(s: Shape) -> None:
    if len(s[0]) > 1:
        raise ArrayShapeError("argument must be empty or one-dimensional array")


def array_append(enc: ArrayEncoding, a: list[Any] | None, x: Any) -> list[Any]:
    """array_append (not strict: a NULL array is an empty one); the lower bound kept."""
    s = shape(a if a is not None else [])
    _one_dimension(s)
    dims, lower, flat = s
    if not dims:
        return [x]
    return build([*flat, x], (dims[0] + 1,), lower)


def array_prepend(enc: ArrayEncoding, x: Any, a: list[Any] | None) -> list[Any]:
    """array_prepend (not strict); the lower bound kept."""
    s = shape(a if a is not None else [])
    _one_dimension(s)
    dims, lower, flat = s
    if not dims:
        return [x]
    return build([x, *flat], (dims[0] + 1,), lower)


def _incompatible(detail: str) -> ArrayConcatError:
    return ArrayConcatError(f"cannot concatenate incompatible arrays\nDETAIL:  {detail}")


def array_cat(enc: ArrayEncoding, a: list[Any] | None, b: list[Any] | None) -> list[Any] | None:
    """array_cat and ``anyarray || anyarray`` (not strict: a NULL side is ignored)."""
    if a is None or b is None:
        return b if a is None else a
    dims1, lower1, flat1 = shape(a)
    dims2, lower2, flat2 = shape(b)
    if not dims1:
        return b
    if not dims2:
        return a
    n1, n2 = len(dims1), len(dims2)
    if n1 == n2:
        if dims1[1:] != dims2[1:] or lower1[1:] != lower2[1:]:
            raise _incompatible(
                "Arrays with differing element dimensions are not compatible for concatenation."
            )
        return build(flat1 + flat2, (dims1[0] + dims2[0], *dims1[1:]), lower1)
    if abs(n1 - n2) != 1:
        raise _incompatible(
            f"Arrays of {n1} and {n2} dimensions are not compatible for concatenation."
        )
    # one side is an element of the other's outer dimension
    (outer, outer_lower), (inner, inner_lower) = (
        ((dims2, lower2), (dims1, lower1)) if n1 < n2 else ((dims1, lower1), (dims2, lower2))
    )
    if outer[1:] != inner or outer_lower[1:] != inner_lower:
        raise _incompatible(
            "Arrays with differing dimensions are not compatible for concatenation."
        )
    return build(flat1 + flat2, (outer[0] + 1, *outer[1:]), outer_lower)


def array_remove(enc: ArrayEncoding, a: list[Any] | None, x: Any) -> list[Any] | None:
    """array_remove: every element not distinct from ``x`` (NULL removes NULLs)."""
    if a is None:
        return None
    dims, lower, flat = shape(a)
    if len(dims) > 1:
        raise ArrayUnsupported("removing elements from multidimensional arrays is not supported")
    kept = [e for e in flat if not _same(enc, e, x)]
    if len(kept) == len(flat):
        return a
    return build(kept, (len(kept),), lower) if kept else []


def array_replace(enc: ArrayEncoding, a: list[Any] | None, x: Any, y: Any) -> list[Any] | None:
    """array_replace: every element not distinct from ``x`` becomes ``y``."""
    if a is None:
        return None
    dims, lower, flat = shape(a)
    return build([y if _same(enc, e, x) else e for e in flat], dims, lower)


def _searched(a: list[Any]) -> Shape:
    s = shape(a)
    if len(s[0]) > 1:
        raise ArrayUnsupported("searching for elements in multidimensional arrays is not supported")
    return s


def array_position(
    enc: ArrayEncoding, a: list[Any] | None, x: Any, *start: int | None
) -> int | None:
    """array_position(array, element[, start]): the first subscript at or after
    ``start`` whose element is not distinct from ``x``."""
    if a is None:
        return None
    dims, lower, flat = _searched(a)
    if not dims:
        return None
    if start and start[0] is None:
        raise ArrayNullNotAllowed("initial position must not be null")
    first = start[0] if start else lower[0]
    assert first is not None
    for i, e in enumerate(flat):
        if lower[0] + i >= first and _same(enc, e, x):
            return lower[0] + i
    return None


def array_positions(enc: ArrayEncoding, a: list[Any] | None, x: Any) -> list[int] | None:
    if a is None:
        return None
    _, lower, flat = _searched(a)
    return [lower[0] + i for i, e in enumerate(flat) if _same(enc, e, x)]


def array_to_string(
    enc: ArrayEncoding, a: list[Any] | None, delimiter: str | None, null: str | None = None
) -> str | None:
    """array_to_string: the elements' text joined; NULL elements skipped unless a null
    string is given."""
    if a is None or delimiter is None:
        return None
    texts = [pg_text(e) if e is not None else null for e in shape(a)[2]]
    return delimiter.join(t for t in texts if t is not None)


def unnest(enc: ArrayEncoding, a: list[Any]) -> list[Any]:
    """unnest(array): every element in storage order."""
    return list(shape(a)[2])


def string_to_array(
    enc: Any, s: str | None, delimiter: str | None, null: str | None = None
) -> list[str | None] | None:
    """string_to_array (not strict): a NULL delimiter splits into characters, an empty
    one gives the whole string; a field equal to ``null`` is NULL."""
    if s is None:
        return None
    if s == "":
        return []
    if delimiter is None:
        fields = list(s)
    elif delimiter == "":
        fields = [s]
    else:
        fields = s.split(delimiter)
    return [None if null is not None and f == null else f for f in fields]


# --- containment and membership ---------------------------------------------------------


def _contain_compare(enc: ArrayEncoding, a: list[Any], b: list[Any], match_all: bool) -> bool:
    """array_contain_compare: does each (match_all) or some element of ``a`` equal an
    element of ``b``?  A NULL never matches."""
    key = _key(enc)
    have = {key(e) for e in shape(b)[2] if e is not None}
    for e in shape(a)[2]:
        if e is None:
            if match_all:
                return False
            continue
        found = key(e) in have
        if found and not match_all:
            return True
        if not found and match_all:
            return False
    return match_all


def contains(enc: ArrayEncoding, a: list[Any], b: list[Any]) -> bool:
    """``a @> b`` (dimensions ignored)."""
    return _contain_compare(enc, b, a, match_all=True)


def contained(enc: ArrayEncoding, a: list[Any], b: list[Any]) -> bool:
    """``a <@ b``."""
    return _contain_compare(enc, a, b, match_all=True)


def overlap(enc: ArrayEncoding, a: list[Any], b: list[Any]) -> bool:
    """``a && b``."""
    return _contain_compare(enc, a, b, match_all=False)


def _quantified(
    enc: ArrayEncoding, x: Any, a: list[Any] | None, equal: bool, any_: bool
) -> bool | None:
    """``x = ANY(a)`` and its kin as ExecEvalScalarArrayOp: an empty array decides
    alone, a NULL ``x`` is NULL, a NULL element makes an undecided result NULL."""
    key = _key(enc)

    def test_of(x: Any) -> Callable[[Any], bool]:
        kx = key(x)
        return lambda e: (key(e) == kx) == equal

    return _scalar_array_op(x, a, any_, test_of)


def _scalar_array_op(
    x: Any, a: list[Any] | None, any_: bool, test_of: Callable[[Any], Callable[[Any], bool]]
) -> bool | None:
    """ExecEvalScalarArrayOp's three-valued reading of ``x op ANY / ALL(a)``, each
    non-NULL element ``e`` tested by ``test_of(x)(e)``: an empty array decides alone, a
    NULL ``x`` or array is NULL, a NULL element makes an undecided result NULL."""
    if a is None:
        return None
    flat = shape(a)[2]
    if not flat:
        return not any_
    if x is None:
        return None
    test = test_of(x)
    unknown = False
    for e in flat:
        if e is None:
            unknown = True
            continue
        if test(e) == any_:
            return any_
    return None if unknown else not any_


def eq_any(enc: ArrayEncoding, x: Any, a: list[Any] | None) -> bool | None:
    """``x = ANY(a)``."""
    return _quantified(enc, x, a, equal=True, any_=True)


def ne_all(enc: ArrayEncoding, x: Any, a: list[Any] | None) -> bool | None:
    """``x <> ALL(a)``."""
    return _quantified(enc, x, a, equal=False, any_=False)


def eq_all(enc: ArrayEncoding, x: Any, a: list[Any] | None) -> bool | None:
    """``x = ALL(a)``."""
    return _quantified(enc, x, a, equal=True, any_=False)


def ne_any(enc: ArrayEncoding, x: Any, a: list[Any] | None) -> bool | None:
    """``x <> ANY(a)``."""
    return _quantified(enc, x, a, equal=False, any_=True)


# the order comparisons of ``x op ANY / ALL(a)``, over the elements' order keys
_ORDER_TESTS: dict[str, Callable[[bytes, bytes], bool]] = {
    "<": lambda e, x: x < e,
    "<=": lambda e, x: x <= e,
    ">": lambda e, x: x > e,
    ">=": lambda e, x: x >= e,
}


def ordered_quantified(
    enc: ArrayEncoding, x: Any, a: list[Any] | None, op: str, any_: bool
) -> bool | None:
    """``x < ANY(a)`` and its kin (``op``; ``any_`` false: ALL): as :func:`_quantified`,
    each element compared with ``x`` in the element type's order (its collation's, for
    text)."""
    element = enc.element
    compare = _ORDER_TESTS[op]

    def test_of(x: Any) -> Callable[[Any], bool]:
        kx = key_bytes(element.order_key(element.coerce(x)))
        return lambda e: compare(key_bytes(element.order_key(e)), kx)

    return _scalar_array_op(x, a, any_, test_of)


# --- array_agg of arrays -----------------------------------------------


def array_agg_arrays(enc: ArrayEncoding, arrays: list[Any]) -> list[Any] | None:
    """array_agg(anyarray): the arrays as the rows of an array of one more dimension
    (NULL over no rows); NULL or empty arrays, or arrays of different dimensions, raise
    as PostgreSQL's array_agg_array_transfn raises."""
    if not arrays:
        return None
    first: tuple[int, ...] | None = None
    for a in arrays:
        if a is None:
            raise ArrayNullNotAllowed("cannot accumulate null arrays")
        dims, lower, _ = shape(a)
        if not dims:
            raise ArrayConcatError("cannot accumulate empty arrays")
        if isinstance(a, PgArray) or any(lb != 1 for lb in lower):
            raise ArrayUnsupported("array_agg of arrays with lower bounds other than 1")
        if first is None:
            first = dims
        elif dims != first:
            raise ArrayConcatError("cannot accumulate arrays of different dimensionality")
    return [list(a) for a in arrays]


# --- subscripts -------------------------------------------------------------------------


def subscript(enc: ArrayEncoding, a: list[Any], *indexes: int) -> Any:
    """``a[i][j]...``: the element, NULL unless there is one subscript per dimension,
    each within its bounds."""
    dims, lower, flat = shape(a)
    if not dims or len(indexes) != len(dims):
        return None
    pos = 0
    for i, d, lb in zip(indexes, dims, lower, strict=True):
        if not lb <= i < lb + d:
            return None
        pos = pos * d + (i - lb)
    return flat[pos]


class _Omitted:
    def __repr__(self) -> str:
        return "OMITTED"


OMITTED: Any = _Omitted()  # a slice bound left out (``a[:2]``, ``a[2:]``)


def slice_(enc: ArrayEncoding, a: list[Any] | None, *bounds: Any) -> list[Any] | None:
    """``a[l1:u1][l2:u2]...`` (bounds given flat, lower then upper, :data:`OMITTED`
    for one left out; a plain ``[i]`` among slices is ``[1:i]``): the sub-array,
    bounds clipped, its lower bounds 1; empty if nothing is left.  Not strict: a NULL
    bound gives NULL."""
    if a is None or any(b is None for b in bounds):
        return None
    dims, lower, flat = shape(a)
    n = len(bounds) // 2
    if not dims or len(dims) < n:
        return []
    lo: list[int] = []
    hi: list[int] = []
    for k, (d, lb) in enumerate(zip(dims, lower, strict=True)):
        low = bounds[2 * k] if k < n else OMITTED
        high = bounds[2 * k + 1] if k < n else OMITTED
        low = lb if low is OMITTED or low < lb else low
        high = lb + d - 1 if high is OMITTED or high >= lb + d else high
        if low > high:
            return []
        lo.append(low)
        hi.append(high)
    out: list[Any] = []
    strides = [1] * len(dims)
    for k in range(len(dims) - 2, -1, -1):
        strides[k] = strides[k + 1] * dims[k + 1]

    def walk(k: int, base: int) -> None:
        for i in range(lo[k], hi[k] + 1):
            at = base + (i - lower[k]) * strides[k]
            if k == len(dims) - 1:
                out.append(flat[at])
            else:
                walk(k + 1, at)

    walk(0, 0)
    return build(out, [h - low + 1 for low, h in zip(lo, hi, strict=True)], [1] * len(dims))
