"""A plain database and an encrypted one holding the same tables and rows, for tests that
compare the client's answers with PostgreSQL's."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg

import adaptive_client
from adaptive_client.catalog.keys import MasterKey

Pair = tuple[psycopg.Connection[Any], adaptive_client.Connection]


@contextmanager
def plain_and_encrypted(
    new_database: Callable[..., str],
    master_key: MasterKey,
    name: str,
    config: dict[str, Any],
    ddl: Sequence[str],
    rows: dict[str, list[tuple[Any, ...]]],
    locale: str = "",
) -> Iterator[Pair]:
    """Both databases (autocommit), each created by ``ddl`` and given ``rows`` per table;
    ``locale``: their collation (``new_database``'s)."""
    plain = psycopg.connect(new_database(f"{name}_plain", locale=locale), autocommit=True)
    enc = adaptive_client.connect(
        new_database(f"{name}_enc", locale=locale),
        master_key=master_key.hex(),
        config=config,
        autocommit=True,
    )
    try:
        for conn in (plain, enc):
            for statement in ddl:
                conn.execute(statement)
            for table, values in rows.items():
                marks = ", ".join(["%s"] * len(values[0]))
                conn.cursor().executemany(f"INSERT INTO {table} VALUES ({marks})", values)
        yield plain, enc
    finally:
        plain.close()
        enc.close()
