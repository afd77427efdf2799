"""PostgreSQL 15's casts of jsonb to scalar types (jsonb.c: jsonb_numeric, jsonb_bool,
jsonb_int4, ...) and to text (jsonb_out), over the client's values.

A cast to a scalar type takes a top-level scalar of the matching jsonb kind; anything
else raises 22023 "cannot cast jsonb <kind> to type <type>" (an array or object named
as such).  A number cast to numeric is given as its text (``numeric_out``: its display
scale kept), which the statement then reads as ``text::numeric`` (engine/numeric_keys.py
where it is compared, engine/engine_sql.py where it is shown or summed): the client
engine's DECIMAL cannot hold every jsonb number.  Integer types round half away from
zero (numeric_int4) and raise 22003 out of their range; double precision reads the
number's text (float8in: out of range is 22003).
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any, Final

from psycopg import errors as pg_errors

from ..errors import AdaptiveError
from ..values.json_encoding import JsonbEncoding, JsonbText
from ..values.jsonb_tree import NUMBER, Json, jsonb_text, kind, number_text, tree
from .numeric import numeric_int


class JsonbCastError(AdaptiveError, pg_errors.InvalidParameterValue):
    """A jsonb value of another kind than the cast takes (22023)."""


class JsonbCastRange(AdaptiveError, pg_errors.NumericValueOutOfRange):
    """A jsonb number beyond the cast's type (22003)."""


def _scalar(doc: JsonbText, wanted: str, sql_type: str) -> Json:
    v = tree(doc)
    k = kind(v)
    if k != wanted:
        named = "numeric" if k == NUMBER else k  # (jsonb.c names its kinds so)
        raise JsonbCastError(f"cannot cast jsonb {named} to type {sql_type}")
    return v


def to_numeric_text(enc: JsonbEncoding, doc: JsonbText) -> str:
    """``jsonb::numeric``, as the number's text (read back as numeric by the caller)."""
    value = _scalar(doc, NUMBER, "numeric")
    assert isinstance(value, Decimal)
    return number_text(value)


def to_boolean(enc: JsonbEncoding, doc: JsonbText) -> bool:
    value = _scalar(doc, "boolean", "boolean")
    assert isinstance(value, bool)
    return value


def _integer(doc: JsonbText, name: str) -> int:
    value = _scalar(doc, NUMBER, name)
    assert isinstance(value, Decimal)
    return numeric_int(value, name, JsonbCastRange)  # (a jsonb number: never NaN)


def to_integer(enc: JsonbEncoding, doc: JsonbText) -> int:
    return _integer(doc, "integer")


def to_bigint(enc: JsonbEncoding, doc: JsonbText) -> int:
    return _integer(doc, "bigint")


def to_smallint(enc: JsonbEncoding, doc: JsonbText) -> int:
    return _integer(doc, "smallint")


def to_double(enc: JsonbEncoding, doc: JsonbText) -> float:
    value = _scalar(doc, NUMBER, "double precision")
    assert isinstance(value, Decimal)
    text = number_text(value)
    result = float(text)
    if math.isinf(result) or (result == 0 and not value.is_zero()):
        raise JsonbCastRange(f'"{text}" is out of range for type double precision')
    return result


def to_text(enc: JsonbEncoding, doc: JsonbText) -> str:
    """``jsonb::text``: the value as jsonb_out prints it."""
    return jsonb_text(tree(doc))


# the casts by the client engine's name of the type cast to: (the row function's name,
# the PostgreSQL type it gives; numeric's is its text)
CASTS: Final[dict[str, tuple[str, str]]] = {
    "DECIMAL": ("jsonb::numeric", "text"),
    "BOOLEAN": ("jsonb::boolean", "boolean"),
    "INT": ("jsonb::integer", "integer"),
    "BIGINT": ("jsonb::bigint", "bigint"),
    "SMALLINT": ("jsonb::smallint", "smallint"),
    "DOUBLE": ("jsonb::double precision", "double precision"),
    "TEXT": ("jsonb::text", "text"),
    "VARCHAR": ("jsonb::text", "text"),
}

IMPLS: Final[dict[str, Any]] = {
    "jsonb::numeric": to_numeric_text,
    "jsonb::boolean": to_boolean,
    "jsonb::integer": to_integer,
    "jsonb::bigint": to_bigint,
    "jsonb::smallint": to_smallint,
    "jsonb::double precision": to_double,
    "jsonb::text": to_text,
}
