"""Encodings: round trips through DET and OPE, equality and order, domains."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adaptive_client.encodings import encoding_for, parse_sql_type
from adaptive_client.errors import ConfigError, EncodingError, ValueOutOfDomain
from adaptive_client.schemes import DET, OPE

KEY = bytes(range(32))
DETS = DET(KEY)

# (type, strategy of values it stores)
TYPES: dict[str, st.SearchStrategy[Any]] = {
    "smallint": st.integers(-(2**15), 2**15 - 1),
    "integer": st.integers(-(2**31), 2**31 - 1),
    "bigint": st.integers(-(2**63), 2**63 - 1),
    "numeric(12,2)": st.decimals(
        min_value=Decimal("-9999999999.99"), max_value=Decimal("9999999999.99"), places=2
    ),
    "real": st.floats(width=32, allow_nan=False),
    "double precision": st.floats(allow_nan=False),
    "text": st.text(alphabet=st.characters(blacklist_characters="\x00"), max_size=40),
    "varchar(10)": st.text(alphabet=st.characters(blacklist_characters="\x00"), max_size=10),
    "date": st.dates(),
    "timestamp": st.datetimes(),
    "boolean": st.booleans(),
}
OPES = {t: OPE(KEY, encoding_for(t).ope_bits) for t in TYPES}
EXACT = [t for t in TYPES if encoding_for(t).ope_exact]


@pytest.mark.parametrize("t", list(TYPES))
@settings(max_examples=60)
@given(data=st.data())
def test_det_round_trip_and_equality(t: str, data: st.DataObject) -> None:
    enc = encoding_for(t)
    a = enc.coerce(data.draw(TYPES[t]))
    b = enc.coerce(data.draw(TYPES[t]))
    ca, cb = DETS.encrypt(enc.to_bytes(a)), DETS.encrypt(enc.to_bytes(b))
    assert enc.from_bytes(DETS.decrypt(ca)) == a
    assert (ca == cb) == (a == b)


@pytest.mark.parametrize("t", EXACT)
@settings(max_examples=8)
@given(data=st.data())
def test_ope_round_trip_and_order(t: str, data: st.DataObject) -> None:
    enc, o = encoding_for(t), OPES[t]
    a = enc.coerce(data.draw(TYPES[t]))
    b = enc.coerce(data.draw(TYPES[t]))
    ca, cb = o.encrypt(enc.to_ope(a)), o.encrypt(enc.to_ope(b))
    assert enc.from_ope(o.decrypt(ca)) == a
    assert (a < b) == (ca < cb)


def test_string_prefix_order_is_partial() -> None:
    enc = encoding_for("text")
    assert enc.to_ope("abcdefgh-1") == enc.to_ope("abcdefgh-2")  # ties: the client finishes
    assert enc.to_ope("abc") < enc.to_ope("abd") < enc.to_ope("b")
    with pytest.raises(EncodingError):
        enc.from_ope(5)


def test_numeric_rounding_and_sum_types() -> None:
    enc = encoding_for("numeric(6,2)")
    assert enc.coerce("1.005") == Decimal("1.01") and enc.coerce(-1.005) == Decimal("-1.01")
    assert enc.from_hom_sum(enc.to_hom(Decimal("12.34")) * 3) == Decimal("37.02")
    assert encoding_for("integer").from_hom_sum(10) == 10
    assert encoding_for("bigint").from_hom_sum(10) == Decimal(10)


@pytest.mark.parametrize(
    ("t", "value"),
    [
        ("smallint", 2**15),
        ("integer", -(2**31) - 1),
        ("bigint", 2**63),
        ("numeric(4,1)", "1000.0"),
        ("varchar(3)", "abcd"),
        ("double precision", float("nan")),
        ("numeric(5,2)", "NaN"),
    ],
)
def test_out_of_domain(t: str, value: Any) -> None:
    with pytest.raises(ValueOutOfDomain):
        encoding_for(t).coerce(value)


@pytest.mark.parametrize(
    ("t", "value"),
    [
        ("integer", "x1"),
        ("date", "yesterday"),
        ("boolean", 3),
        ("timestamp", 5),
        ("text", object()),
    ],
)
def test_bad_input(t: str, value: Any) -> None:
    with pytest.raises(EncodingError):
        encoding_for(t).coerce(value)


def test_canonical_forms() -> None:
    assert encoding_for("double precision").to_bytes(-0.0) == encoding_for(
        "double precision"
    ).to_bytes(0.0)
    ch = encoding_for("char(4)")
    assert ch.coerce("ab") == "ab  " and ch.to_bytes("ab  ") == ch.to_bytes("ab")
    assert encoding_for("date").coerce("2020-02-29") == dt.date(2020, 2, 29)
    assert encoding_for("timestamp").coerce("2020-02-29 01:02:03.5") == dt.datetime(
        2020, 2, 29, 1, 2, 3, 500000
    )


def test_parse_types() -> None:
    assert parse_sql_type("DECIMAL(10, 2)").sql() == "numeric(10,2)"
    assert parse_sql_type("character varying(16)").sql() == "varchar(16)"
    assert parse_sql_type("int8").name == "bigint"
    assert encoding_for("numeric").onions == frozenset({"Eq"})
    assert "Search" in encoding_for("text").onions and "Sum" not in encoding_for("text").onions
    with pytest.raises(ConfigError):
        parse_sql_type("geometry")
