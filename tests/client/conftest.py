"""Fixtures of the client's differential tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import LOCALES, Pair, plain_and_encrypted


@pytest.fixture(params=sorted(LOCALES))
def collated_pair(
    request: pytest.FixtureRequest, new_database: Callable[..., str], master_key: MasterKey
) -> Iterator[Pair]:
    """A plain and an encrypted database on each of :data:`LOCALES`, both made by the
    test module's ``DDL``."""
    name = request.module.__name__.rpartition(".")[2].removeprefix("test_")
    locale = LOCALES[request.param]
    with plain_and_encrypted(
        new_database, master_key, name, {}, request.module.DDL, {}, locale
    ) as pair:
        yield pair
