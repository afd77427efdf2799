"""The compiled opener (``adaptive_rnd_native.Opener`` / ``RowOpener``) gives the values
the Python path gives, or hands the stored value back.

For every type whose plaintext it decodes (integers, booleans, text and ``char(n)``,
scaled numerics, dates, timestamps) and one it does not (``timestamptz``, handed back as
bytes), values
drawn by hypothesis -- boundaries, NaN, the infinities, BC dates, years past 9999 among
them -- are encrypted at both layers of the Eq onion (RND over DET, DET alone) and in a
Single onion (RND alone), and opened by the compiled opener and by ``recipes.decrypt``:
equal values of equal types, or the position handed back.  Damaged ciphertexts (a wrong tag, a wrong key, a cut value, a long DET
value) are handed back, never decoded into a wrong value.
"""

from __future__ import annotations

import datetime as dt
import os
from decimal import Context, Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adaptive_client.catalog import recipes
from adaptive_client.catalog.metadata import ColumnMeta, OnionColumn
from adaptive_client.catalog.onions import Onion
from adaptive_client.compile.plan import ColumnValue, Output, decrypt_columns, open_rows
from adaptive_client.compile.plan import row_opening as make_row_opening
from adaptive_client.values import far_datetime
from adaptive_client.values.datetime_encodings import INFINITY, NEG_INFINITY
from adaptive_client.values.encoding_base import NATIVE_BYTES, NATIVE_TIMESTAMP, compiled_form
from adaptive_client.values.encodings import parse_sql_type
from adaptive_client.values.far_datetime import _PY_END_US, _PY_FIRST_US, PgDate, PgTimestamp

native = pytest.importorskip("adaptive_client.adaptive_rnd_native")


def _column(
    sql_type: str, layer: str = "RND", stack: tuple[str, ...] = ("RND", "DET")
) -> ColumnMeta:
    """A column whose one onion (key EQ) is an Eq onion, or with ``stack`` ("RND",) a
    Single onion (the value under RND alone)."""
    oc = OnionColumn(
        onion=Onion.SINGLE if stack == ("RND",) else Onion.EQ,
        anon="c_x_eq",
        stack=stack,
        layer=layer,
        floor=None,
        keys={name: os.urandom(32) for name in stack},
    )
    return ColumnMeta(name="x", type=parse_sql_type(sql_type), nullable=True, onions={Onion.EQ: oc})


def _stored(col: ColumnMeta, values: list[Any]) -> list[Any]:
    oc = col.onions[Onion.EQ]
    return [None if v is None else recipes.encrypt(col, oc, col.encoding.coerce(v)) for v in values]


def _python(fn: Any, *args: Any) -> Any:
    """``fn(*args)`` on the Python path alone (as ``connect(native=False)`` runs it)."""
    token = recipes.COMPILED.set(False)
    try:
        return fn(*args)
    finally:
        recipes.COMPILED.reset(token)


def _same(a: Any, b: Any) -> bool:
    """Equal values of one type (Decimal: and one exponent; NaN is NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, Decimal):
        return (a.is_nan() and b.is_nan()) or (a == b and a.as_tuple() == b.as_tuple())
    return bool(a == b)


def _check(col: ColumnMeta, values: list[Any]) -> None:
    oc = col.onions[Onion.EQ]
    stored = _stored(col, values)
    opener = oc.opener(compiled_form(col.encoding))
    assert opener is not None
    opened, redo, outer = opener.open(stored)
    python = [_python(recipes.decrypt, col, oc, s) for s in stored]
    # and the per-value path with the compiled layer on: the same values
    assert all(_same(recipes.decrypt(col, oc, s), p) for s, p in zip(stored, python, strict=True))
    redone = set(redo)
    for i, (got, want) in enumerate(zip(opened, python, strict=True)):
        if i in redone:
            assert got is stored[i]  # (handed back unchanged)
        elif compiled_form(col.encoding)[0] == NATIVE_BYTES and got is not None:
            assert _same(col.encoding.from_bytes(got), want), (values[i], got, want)
        else:
            assert _same(got, want), (values[i], got, want)
    # (outer: an RND layer over a DET one; a Single onion's RND is the value's only layer)
    layered = oc.stack == ("RND", "DET")
    assert outer == sum(
        1
        for i, s in enumerate(stored)
        if layered and s is not None and i not in redone and s[0] == 1
    )


INTS = {"smallint": 15, "integer": 31, "bigint": 63}


# the Eq onion at RND and at DET, and a Single onion
STACKS = {
    "eq-rnd": ("RND", ("RND", "DET")),
    "eq-det": ("DET", ("RND", "DET")),
    "single": ("RND", ("RND",)),
}


@pytest.mark.parametrize("sql_type", sorted(INTS))
@pytest.mark.parametrize("stack", sorted(STACKS))
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_integers(sql_type: str, stack: str, data: st.DataObject) -> None:
    bits = INTS[sql_type]
    ints = st.integers(-(2**bits), 2**bits - 1)
    values = data.draw(st.lists(st.one_of(st.none(), ints), max_size=12))
    _check(_column(sql_type, *STACKS[stack]), [*values, -(2**bits), 2**bits - 1, 0, -1])


@pytest.mark.parametrize(
    "sql_type", ["numeric(12,2)", "numeric(5,0)", "numeric(30,10)", "numeric(3,3)"]
)
@pytest.mark.parametrize("stack", sorted(STACKS))
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_numerics(sql_type: str, stack: str, data: st.DataObject) -> None:
    t = parse_sql_type(sql_type)
    p, s = t.precision or 0, t.scale or 0
    exact = Context(prec=100)
    scaled = st.integers(-(10**p) + 1, 10**p - 1).map(lambda i: Decimal(i).scaleb(-s, exact))
    values = data.draw(st.lists(st.one_of(st.none(), scaled), max_size=12))
    extremes = [Decimal("NaN"), Decimal(0), -(Decimal(1).scaleb(-s))]
    _check(_column(sql_type, *STACKS[stack]), [*values, *extremes])


@pytest.mark.parametrize("sql_type", ["text", "varchar(20)", "char(6)", "char"])
@pytest.mark.parametrize("stack", sorted(STACKS))
@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.one_of(st.none(), st.text(max_size=40)), max_size=12))
def test_text(sql_type: str, stack: str, values: list[str | None]) -> None:
    # (PostgreSQL's text has no NUL; varchar(20), char(6) and char hold what fits)
    n = {"char": 1, "char(6)": 6, "varchar(20)": 20}.get(sql_type, 40)
    fit = [None if v is None else v.replace("\x00", "")[:n] for v in values]
    # long values (over 15 bytes: AES-SIV in an Eq onion) and padded ones
    extra = ["", "é" * n, "\U0001f600" * min(n, 4), "a "[:n], "x" * min(n, 16)]
    _check(_column(sql_type, *STACKS[stack]), [*fit, *extra])


@pytest.mark.parametrize("stack", sorted(STACKS))
@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.one_of(st.none(), st.booleans()), max_size=12))
def test_booleans(stack: str, values: list[bool | None]) -> None:
    _check(_column("boolean", *STACKS[stack]), values)


@pytest.mark.parametrize("stack", sorted(STACKS))
@settings(max_examples=150, deadline=None)
@given(values=st.lists(st.one_of(st.none(), st.dates()), max_size=12))
def test_dates(stack: str, values: list[dt.date | None]) -> None:
    # BC dates, years past 9999 and the infinities are handed back (Python has no date)
    far = [PgDate(1_000_000), PgDate(5_373_485), PgDate(1_721_425), INFINITY, NEG_INFINITY]
    edges = [dt.date.min, dt.date.max, dt.date(2000, 2, 29)]
    _check(_column("date", *STACKS[stack]), [*values, *edges, *far])


@pytest.mark.parametrize("sql_type", ["timestamp", "timestamp(2)"])
@pytest.mark.parametrize("stack", sorted(STACKS))
@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.one_of(st.none(), st.datetimes()), max_size=12))
def test_timestamps(sql_type: str, stack: str, values: list[dt.datetime | None]) -> None:
    # BC timestamps, years past 9999 and the infinities are handed back (Python has no
    # datetime); the last microsecond of each side of a day, of Python's years, of 2000
    far = [
        PgTimestamp(far_datetime.MIN_TIMESTAMP, False),
        PgTimestamp(far_datetime.END_TIMESTAMP - 1, False),
        PgTimestamp(_PY_FIRST_US - 1, False),
        PgTimestamp(_PY_END_US, False),
        INFINITY,
        NEG_INFINITY,
    ]
    edges = [
        dt.datetime.min,
        dt.datetime.max,
        dt.datetime(1999, 12, 31, 23, 59, 59, 999999),
        dt.datetime(2000, 1, 1),
        dt.datetime(1600, 2, 29, 12, 0, 0, 1),
    ]
    col = _column(sql_type, *STACKS[stack])
    assert compiled_form(col.encoding)[0] == NATIVE_TIMESTAMP
    _check(col, [*values, *edges, *far])


@pytest.mark.parametrize("stack", sorted(STACKS))
@settings(max_examples=50, deadline=None)
@given(values=st.lists(st.one_of(st.none(), st.datetimes(timezones=st.just(dt.UTC))), max_size=8))
def test_values_it_does_not_decode(stack: str, values: list[dt.datetime | None]) -> None:
    # timestamptz: its plaintext handed back as bytes, decoded by the Python encoding (in
    # the session's time zone)
    col = _column("timestamptz", *STACKS[stack])
    assert compiled_form(col.encoding)[0] == NATIVE_BYTES
    _check(col, values)


def test_damaged_values_are_handed_back() -> None:
    col = _column("integer")
    oc = col.onions[Onion.EQ]
    good = _stored(col, [7])[0]
    other = _stored(_column("integer"), [7])[0]  # another key: padding fails, or garbage
    opener = oc.opener(compiled_form(col.encoding))
    damaged = [good[:-1], b"\x03" + good[1:], b"", bytearray(good), good + b"\x00"]
    values, redo, _ = opener.open([*damaged, good])
    assert redo == list(range(len(damaged)))
    assert values[-1] == 7
    # a long (AES-SIV) value with one bit flipped does not authenticate: handed back
    text = _column("text")
    long = _stored(text, ["more than fifteen bytes of text"])[0]
    flipped = long[:-1] + bytes([long[-1] ^ 1])
    text_opener = text.onions[Onion.EQ].opener(compiled_form(text.encoding))
    values, redo, _ = text_opener.open([flipped, long])
    assert redo == [0] and values[1] == "more than fifteen bytes of text"
    # another key's value: its padding fails (a short DET value is not authenticated; a
    # foreign block unpads to four bytes with probability about 2**-88)
    assert opener.open([other])[1] == [0]


def test_row_opener_matches_the_python_path() -> None:
    cols = [
        _column("integer"),
        _column("text", "RND", ("RND",)),
        _column("timestamptz"),
        _column("numeric(8,3)"),
        _column("timestamp"),
    ]
    outputs = [
        Output(name=f"c{i}", type_code=0, fn=ColumnValue(c, c.onions[Onion.EQ], i))
        for i, c in enumerate(cols)
    ]
    zoned = dt.datetime(2024, 1, 2, 3, 4, tzinfo=dt.UTC)
    rows = [
        (1, "a", zoned, Decimal("1.5"), dt.datetime(2024, 1, 2, 3, 4, 5, 6)),
        (None, None, None, None, None),
        (-5, "long text, more than fifteen bytes", zoned, Decimal("NaN"), INFINITY),
    ]
    raw = [tuple(_stored(c, [v])[0] for c, v in zip(cols, row, strict=True)) for row in rows]
    opening = make_row_opening(outputs)
    assert opening is not None and [o.name for o in opening.others] == ["c2"]
    got = open_rows(outputs, raw, opening)
    want = _python(decrypt_columns, outputs, raw)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert all(_same(a, b) for a, b in zip(g, w, strict=True)), (g, w)


def test_openers_show_no_key() -> None:
    col = _column("integer")
    oc = col.onions[Onion.EQ]
    opener = oc.opener(compiled_form(col.encoding))
    outputs = [Output(name="c", type_code=23, fn=ColumnValue(col, oc, 0))]
    opening = make_row_opening(outputs)
    assert opening is not None
    for shown in (repr(opener), str(opener), repr(opening.opener), repr(opening)):
        assert "hidden" in shown or "RowOpener" in shown
        for key in oc.keys.values():
            assert key.hex() not in shown and repr(key) not in shown


def test_plans_and_onions_show_no_key() -> None:
    # (a plan's outputs and onions reach reprs, tracebacks and logs)
    cols = [_column("integer"), _column("timestamptz")]
    outputs = [
        Output(name=f"c{i}", type_code=0, fn=ColumnValue(c, c.onions[Onion.EQ], i))
        for i, c in enumerate(cols)
    ]
    opening = make_row_opening(outputs)
    assert opening is not None and opening.others
    shown = repr(opening) + repr(outputs) + repr(cols)
    assert "c_x_eq" in shown  # (the onions are in it)
    for c in cols:
        for key in c.onions[Onion.EQ].keys.values():
            assert key.hex() not in shown and repr(key) not in shown
