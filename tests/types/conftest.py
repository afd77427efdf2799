"""The fixture of the type suites: a plain and an encrypted database (``type_pairs``),
each suite run on a C database and on an ICU one.  A module defining its own ``pair``
(one database, or tables made first) uses that instead."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from type_pairs import ICU, Pair, open_pair

from adaptive_client.catalog.keys import MasterKey


@pytest.fixture(scope="module", params=["C", "ICU"])
def pair(
    request: pytest.FixtureRequest, new_database: Callable[..., str], master_key: MasterKey
) -> Iterator[Pair]:
    name = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_")
    locale = ICU if request.param == "ICU" else ""
    yield from open_pair(new_database, master_key, f"{name}_{request.param}", locale=locale)
