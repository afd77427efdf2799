"""jsonb's casts to scalar types and text, text's to boolean and numeric where the client
engine compares or sums them: PostgreSQL 15's results and errors over the client's
values (the differential suite tests/client/test_jsonb_arrays.py runs them in
statements)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from psycopg import errors as pg_errors

from adaptive_client.engine import jsonb_casts
from adaptive_client.engine.runtime import numeric_key, numeric_text_sum, pg_bool_in
from adaptive_client.values.encodings import encoding_for

JSONB = encoding_for("jsonb")


def doc(text: str) -> Any:
    return JSONB.coerce(text)


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("jsonb::numeric", "1.50", "1.50"),
        ("jsonb::numeric", "123456789012345678901234567890.5", "123456789012345678901234567890.5"),
        ("jsonb::boolean", "true", True),
        ("jsonb::integer", "2.5", 3),
        ("jsonb::integer", "-2.5", -3),
        ("jsonb::bigint", "9223372036854775807", 9223372036854775807),
        ("jsonb::double precision", "0.1", 0.1),
        ("jsonb::text", '{"b": 1.0, "a": [1, "x"]}', '{"a": [1, "x"], "b": 1.0}'),
    ],
)
def test_cast(name: str, text: str, expected: Any) -> None:
    assert jsonb_casts.IMPLS[name](JSONB, doc(text)) == expected


@pytest.mark.parametrize(
    ("name", "text", "error", "message"),
    [
        ("jsonb::numeric", '"1"', pg_errors.InvalidParameterValue, "jsonb string to type numeric"),
        ("jsonb::numeric", "null", pg_errors.InvalidParameterValue, "jsonb null to type numeric"),
        ("jsonb::numeric", "[1]", pg_errors.InvalidParameterValue, "jsonb array to type numeric"),
        ("jsonb::boolean", "1", pg_errors.InvalidParameterValue, "jsonb numeric to type boolean"),
        ("jsonb::smallint", "40000", pg_errors.NumericValueOutOfRange, "smallint out of range"),
        ("jsonb::double precision", "1e400", pg_errors.NumericValueOutOfRange, "out of range"),
    ],
)
def test_cast_error(name: str, text: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        jsonb_casts.IMPLS[name](JSONB, doc(text))


def test_numeric_keys_order_as_numerics() -> None:
    texts = ["-1e40", "-2", "-0.5", "0", "0.0", "1", "1.00", "123456789012345678901234567890.5",
             "Infinity", "NaN"]  # fmt: skip
    keys = [numeric_key(t) for t in texts]
    assert keys == sorted(keys)
    assert numeric_key("0") == numeric_key("-0.0") and numeric_key("1") == numeric_key("1.00")
    assert numeric_key("NaN") == numeric_key("nan") != numeric_key("Infinity")
    with pytest.raises(pg_errors.InvalidTextRepresentation):
        numeric_key("abc")


def test_text_sum_is_exact_at_the_largest_scale() -> None:
    assert numeric_text_sum(["123456789012345678901234567890.5", "0.25", None]) == (
        "123456789012345678901234567890.75"
    )
    assert Decimal(numeric_text_sum(["1.0", "2"]) or "") == Decimal("3.0")
    assert numeric_text_sum(["1.0", "2"]) == "3.0"
    assert numeric_text_sum([None]) is None
    assert numeric_text_sum(["Infinity", "-Infinity"]) == "NaN"


@pytest.mark.parametrize(
    ("text", "value"),
    [("t", True), (" YES ", True), ("on", True), ("1", True), ("of", False), ("no", False)],
)
def test_bool_in(text: str, value: bool) -> None:
    assert pg_bool_in(text) is value


@pytest.mark.parametrize("text", ["o", "", "10", "truth", "n o"])
def test_bool_in_refuses(text: str) -> None:
    with pytest.raises(pg_errors.InvalidTextRepresentation, match="type boolean"):
        pg_bool_in(text)
