"""The compiled sealer (``adaptive_rnd_native.RowSealer``, catalog/compiled_sealing.py)
makes the stored values the Python path makes, or leaves the slot to it.

Rows of one column per type it encodes (integers of each width, numeric(p,s), text,
varchar(n), char(n), boolean, date, timestamp) and two it does not (timestamp(3),
timestamptz), in Eq onions at RND
and at DET, Ord onions at RND and at OPE and a Single onion, take parameters drawn by hypothesis from every Python
type an application passes -- ints beyond the column's range, bools, floats with NaN
and the infinities, Decimals with NaN, many digits and exponents, strings with NUL,
lone surrogates, trailing spaces and beyond the column's length, dates, datetimes, ISO
and other date strings.  Each row is sealed by the compiled sealer and by the Python
path (``connect(native=False)``): either both raise the same error, or every slot
holds the same value (DET, OPE: the same bytes; RND: the same bytes under a nonce of
its own).
"""

from __future__ import annotations

import datetime as dt
import os
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adaptive_client.catalog import recipes
from adaptive_client.catalog.compiled_sealing import row_sealers
from adaptive_client.catalog.metadata import ColumnMeta, OnionColumn
from adaptive_client.catalog.onions import Onion
from adaptive_client.values.encodings import encoding_for, parse_sql_type

pytest.importorskip("adaptive_client.adaptive_rnd_native")

TYPES = [
    "smallint",
    "integer",
    "bigint",
    "numeric(7,2)",
    "numeric(30,4)",
    "numeric(4,0)",
    "text",
    "varchar(6)",
    "char(5)",
    "boolean",
    "date",
    "timestamp",
    "timestamp(3)",
    "timestamptz",
]
# the Eq onion at RND and at DET, the Ord onion at RND and at OPE, and a Single onion
STACKS = {
    "eq-rnd": ("RND", ("RND", "DET")),
    "eq-det": ("DET", ("RND", "DET")),
    "ord-rnd": ("RND", ("RND", "OPE")),
    "ord-ope": ("OPE", ("RND", "OPE")),
    "single": ("RND", ("RND",)),
}
ONIONS = {("RND", "DET"): Onion.EQ, ("RND", "OPE"): Onion.ORD, ("RND",): Onion.SINGLE}


def _column(name: str, sql_type: str, stack: str) -> ColumnMeta:
    """A column with one onion (under the key EQ, whatever onion it is)."""
    layer, layers = STACKS[stack]
    t = parse_sql_type(sql_type)
    enc = encoding_for(t)
    oc = OnionColumn(
        onion=ONIONS[layers],
        ope_bits=enc.ope_bits,
        ope_exact=enc.ope_exact,
        anon=f"c_{name}_eq",
        stack=layers,
        layer=layer,
        floor=None,
        keys={k: os.urandom(32) for k in layers},
    )
    return ColumnMeta(name=name, type=t, nullable=True, onions={Onion.EQ: oc})


TEXTS = st.one_of(
    st.text(max_size=20),
    st.sampled_from(["", "  ", "abc  ", "abcdef", "abcdefg", "héllo wörld", "a\x00b", "\ud800"]),
)
VALUES = st.one_of(
    st.none(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, -1, 2**15 - 1, 2**15, -(2**31), 2**31, 2**63 - 1, -(2**63), 2**63]),
    st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.005, 1.005, -2.675, 2.0**-24, 2.0**-40, 1e20, 123456.785, 0.125]),
    st.decimals(allow_nan=True, allow_infinity=True),
    st.sampled_from(
        [
            Decimal("12.345"),
            Decimal("-0.005"),
            Decimal("1E+2"),
            Decimal("5E-9"),
            Decimal("99999.995"),
            Decimal("-99999.994"),
            Decimal("sNaN"),
            Decimal("-0"),
            Decimal("1" * 45),
        ]
    ),
    TEXTS,
    st.dates(),
    st.datetimes(),
    st.datetimes(timezones=st.just(dt.UTC)),
    st.sampled_from([dt.datetime(1999, 12, 31, 23, 59, 59, 999999), dt.datetime(1, 1, 1)]),
    st.sampled_from(["2024-02-29", "2023-02-29", "0001-01-01", "9999-12-31", "2024-1-1"]),
    st.sampled_from(["yesterday", "epoch", "1999-01-08 04:05:06", " 2024-01-01", "Jan 8 1999"]),
    st.dates().map(lambda d: d.isoformat()),
)


def _seal_both(cols: list[ColumnMeta], params: tuple[Any, ...]) -> tuple[Any, Any]:
    """(the compiled path's stored row or its error, the Python path's)."""
    python, compiled = row_sealers([(i, i, c, c.onions[Onion.EQ]) for i, c in enumerate(cols)])

    def run(fn: Any) -> Any:
        try:
            return fn()
        except Exception as exc:  # (compared by class and message)
            return exc

    def by_python() -> Any:
        return python(
            [None if v is None else c.encoding.coerce(v) for c, v in zip(cols, params, strict=True)]
        )

    want = run(by_python)
    got = want if compiled is None else run(lambda: compiled(params))
    return got, want


def _same_stored(col: ColumnMeta, got: Any, want: Any) -> None:
    """The same value: at DET or OPE the same bytes; at RND a nonce of its own over the
    same bytes."""
    oc = col.onions[Onion.EQ]
    if want is None or got is None:
        assert got is None and want is None
        return
    if oc.layer != "RND":
        assert got == want
        return
    assert got != want
    assert oc.rnd.decrypt(got) == oc.rnd.decrypt(want)


EXAMPLES = int(os.environ.get("SEALER_EXAMPLES", "300"))


def drawn_row(
    data: st.DataObject, stack: str, types: list[str] = TYPES
) -> tuple[list[str], list[ColumnMeta], tuple[Any, ...]]:
    """One to four columns of ``types`` in onions of ``stack``, and a parameter each."""
    kinds = data.draw(st.lists(st.sampled_from(types), min_size=1, max_size=4))
    cols = [_column(f"x{i}", t, stack) for i, t in enumerate(kinds)]
    return kinds, cols, tuple(data.draw(VALUES) for _ in cols)


@pytest.mark.parametrize("stack", sorted(STACKS))
@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data())
def test_rows_sealed_as_the_python_path_seals_them(stack: str, data: st.DataObject) -> None:
    _, cols, params = drawn_row(data, stack)
    got, want = _seal_both(cols, params)
    if got is want:
        return  # (no slot the compiled layer takes: the Python path alone)
    if isinstance(want, Exception):
        assert type(got) is type(want) and str(got) == str(want), (params, got, want)
        return
    assert not isinstance(got, Exception), (params, got)
    assert len(got) == len(want)
    for col, g, w in zip(cols, got, want, strict=True):
        _same_stored(col, g, w)


def test_plain_rows_are_sealed_by_the_compiled_layer() -> None:
    """A row of plain values leaves nothing to the Python path (the point of it)."""
    cols = [
        _column("a", "integer", "eq-rnd"),
        _column("b", "numeric(12,2)", "eq-rnd"),
        _column("c", "varchar(20)", "eq-det"),
        _column("d", "date", "eq-rnd"),
        _column("e", "boolean", "eq-rnd"),
        _column("f", "timestamp", "ord-rnd"),
    ]
    slots = [(i, i, col, col.onions[Onion.EQ]) for i, col in enumerate(cols)]
    _, compiled = row_sealers(slots)
    assert compiled is not None
    params = (
        7,
        Decimal("10.50"),
        "owner 7",
        dt.date(2024, 1, 1),
        True,
        dt.datetime(2024, 1, 2, 3, 4, 5, 6),
    )
    stored, left, counts = compiled._compiled.seal(params, os.urandom(12 * len(cols)))
    assert left == [] and counts == (5, 1, 5)
    for col, s, v in zip(cols, stored, params, strict=True):
        assert recipes.decrypt(col, col.onions[Onion.EQ], s) == v


def test_first_bad_column_raises_as_the_python_path() -> None:
    """Two bad values: the error is the first column's, on either path."""
    cols = [
        _column("a", "integer", "eq-rnd"),
        _column("b", "date", "eq-rnd"),
        _column("c", "integer", "eq-rnd"),
    ]
    got, want = _seal_both(cols, (1, "not a date", "x"))
    assert isinstance(want, Exception) and "date" in str(want)
    assert type(got) is type(want) and str(got) == str(want)


def test_a_peel_between_rows_is_followed() -> None:
    """The layer is read on each call: after a peel to DET the row is sealed at DET."""
    col = _column("a", "integer", "eq-rnd")
    oc = col.onions[Onion.EQ]
    slots = [(0, 0, col, oc)]
    _, compiled = row_sealers(slots)
    assert compiled is not None
    at_rnd = compiled((5,))[0]
    oc.layer = "DET"
    at_det = compiled((5,))[0]
    assert at_rnd[0] == 1 and at_det[0] == 2
    assert at_det == oc.det.encrypt(col.encoding.to_bytes(5))


@pytest.mark.parametrize("sql_type", ["numeric(30,12)", "numeric(7,2)", "numeric(36,30)"])
def test_floats_at_fifteen_digit_ties(sql_type: str) -> None:
    """Floats whose exact value has a 5 just past the 15th digit (powers of two and
    their small multiples): the compiled layer rounds their 15 digits as Python's
    ``format(v, ".15g")`` does (half to even on the exact value)."""
    col = _column("a", sql_type, "eq-det")
    values = [
        sign * m * 2.0**k
        for k in range(-80, 80)
        for m in (1, 3, 5, 7, 9, 11, 13, 15)
        for sign in (1, -1)
    ]
    compared = 0
    for v in values:
        got, want = _seal_both([col], (v,))
        if isinstance(want, Exception):
            assert type(got) is type(want) and str(got) == str(want), v
            continue
        assert got == want, (v, got, want)
        compared += 1
    assert compared > 500


def test_a_null_written_in_the_statement_stays_null() -> None:
    """``VALUES (%s, NULL)``: the NULL's slot has no parameter and is stored NULL."""
    cols = [_column("a", "integer", "eq-rnd"), _column("b", "date", "eq-rnd")]
    slots = [
        (0, 0, cols[0], cols[0].onions[Onion.EQ]),
        (None, 1, cols[1], cols[1].onions[Onion.EQ]),
    ]
    _, compiled = row_sealers(slots)
    assert compiled is not None
    stored = compiled((3,))
    assert stored[1] is None
    assert recipes.decrypt(cols[0], cols[0].onions[Onion.EQ], stored[0]) == 3
