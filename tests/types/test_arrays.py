"""Array columns -- integer[], text[], varchar(n)[], numeric(p,s)[], date[], timestamptz[],
uuid[], boolean[], several dimensions, every spelling of an array type -- created,
written (literals in PostgreSQL's array syntax, ARRAY[...] constructors, Python lists),
read back, ordered, grouped and compared as in a plain database, on a C and an ICU
database; the array column shown by ``adaptive-db layers``."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from type_pairs import Pair, check, open_pair

from adaptive_client.keys import MasterKey

ICU = "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"


@pytest.fixture(scope="module", params=["C", "ICU"])
def pair(
    request: pytest.FixtureRequest, new_database: Callable[..., str], master_key: MasterKey
) -> Iterator[Pair]:
    locale = ICU if request.param == "ICU" else ""
    yield from open_pair(new_database, master_key, f"arr_{request.param}", locale=locale)


INT_LITERALS = ["{1,2,3}", "{1,2}", "{}", "{{1,2},{3,4}}", "[0:1]={1,2}", "{1,NULL}", "{NULL}"]


def test_int_array_literals(pair: Pair) -> None:
    check(pair, "integer[]", INT_LITERALS, as_literals=True, ranges=False)
