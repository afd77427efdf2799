"""Input literals of PostgreSQL's regression tests for numeric, float4, float8 and uuid
(numeric.sql, float4.sql, float8.sql, uuid.sql: the inputs they feed the types' input
functions, good and bad), written through the client and into plain PostgreSQL, as
literals and as string parameters: the same values stored, or the same SQLSTATE."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from type_pairs import Pair, check, open_pair

from adaptive_client.catalog.keys import MasterKey


@pytest.fixture(scope="module")
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    yield from open_pair(new_database, master_key, "literals")


NUMERIC = [
    " 123", "   3245874    ", "  -93853", "555.50", "-555.50", "NaN ", "        nan",
    " inf ", " +inf ", " -inf ", " Infinity ", " +inFinity ", " -INFINITY ",
    "     ", "   1234   %", "xyz", "- 1234", "5 . 0", "5. 0   ", "", " N aN ",
    "+ infinity", "1e5", "1.5e-3", ".5", "5.", "-0", "+12.5", "1e", "e5", "0x10",
    "1_000",
]  # fmt: skip
FLOAT = [
    "    0.0", "1004.30   ", "     -34.84    ", "1.2345678901234e+20", "1.2345678901234e-20",
    "10e70", "-10e70", "10e-70", "-10e-70", "10e400", "-10e400", "10e-400", "-10e-400",
    "", "       ", "xyz", "5.0.0", "5 . 0", "5.   0", "     - 3.0", "123            5",
    "NaN", "nan", "   NAN  ", "infinity", "          -INFINiTY   ", "N A N", "NaN x",
    " INFINITY    x", "1e-45", "3.4e38", "3.5e38", "1.17549435e-38", "-0.0", "+inf",
]  # fmt: skip
UUIDS = [
    "11111111-1111-1111-1111-111111111111F", "{11111111-1111-1111-1111-11111111111}",
    "111-11111-1111-1111-1111-111111111111", "{22222222-2222-2222-2222-222222222222 ",
    "11111111-1111-1111-G111-111111111111", "11+11111-1111-1111-1111-111111111111",
    "11111111-1111-1111-1111-111111111111", "{22222222-2222-2222-2222-222222222222}",
    "3f3e3c3b3a3039383736353433a2313e", "3f3e3c3b-3a30-3938-3736-353433a2313e",
]  # fmt: skip


@pytest.mark.parametrize("as_literals", [True, False])
def test_numeric_input(pair: Pair, as_literals: bool) -> None:
    """numeric(12,2) (a declared scale: the values read back as written at that scale)
    and an unconstrained numeric over the inputs without a display scale of their own."""
    check(pair, "numeric(12,2)", NUMERIC, as_literals=as_literals, probes=["123", "-555.5"])
    unscaled = [v for v in NUMERIC if "." not in v]
    check(pair, "numeric", unscaled, as_literals=as_literals, ordered=False, probes=["123"])


@pytest.mark.parametrize("sql_type", ["double precision", "real"])
@pytest.mark.parametrize("as_literals", [True, False])
def test_float_input(pair: Pair, sql_type: str, as_literals: bool) -> None:
    values = [v for v in FLOAT if v != "-0.0"]  # (the sign of a zero: see test_special_numbers)
    check(pair, sql_type, values, as_literals=as_literals, probes=["0", "1004.3", "-34.84"])


@pytest.mark.parametrize("as_literals", [True, False])
def test_uuid_input(pair: Pair, as_literals: bool) -> None:
    check(pair, "uuid", UUIDS, as_literals=as_literals, ranges=False)
