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

# the non-C collations differential tests run on (CREATE DATABASE options)
LOCALES = {
    "icu": "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'",
    "libc": "LC_COLLATE 'en_US.UTF-8' LC_CTYPE 'en_US.UTF-8'",
}


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


def outcome(
    conn: Any,
    sql: str,
    params: Any = None,
    describe: Callable[[Any], Any] = lambda d: d.name,
) -> tuple[Any, ...]:
    """What a statement gives, as a differential test compares it: ``("error",
    SQLSTATE)``, ``("ok", rowcount)`` for a statement without a result, or ``("rows",
    rows, [describe(column) ...])``."""
    cur = conn.cursor()
    try:
        cur.execute(sql, params)
    except psycopg.Error as exc:
        return ("error", exc.sqlstate)
    if cur.description is None:
        return ("ok", cur.rowcount)
    return ("rows", cur.fetchall(), [describe(d) for d in cur.description])


def script_differences(
    pair: Pair,
    script: Sequence[str],
    describe: Callable[[Any], Any] = lambda d: d.name,
    judged: Callable[[Any, str], tuple[Any, ...]] | None = None,
) -> list[tuple[str, tuple[Any, ...], tuple[Any, ...]]]:
    """Each statement of ``script`` run on both databases in turn: those whose
    :func:`outcome` (or ``judged``'s outcome) differs, with PostgreSQL's and the
    client's."""
    plain, enc = pair

    def judge(conn: Any, sql: str) -> tuple[Any, ...]:
        return judged(conn, sql) if judged is not None else outcome(conn, sql, describe=describe)

    return [
        (sql, want, got)
        for sql in script
        if (want := judge(plain, sql)) != (got := judge(enc, sql))
    ]


def with_status(conn: Any, sql: str) -> tuple[Any, ...]:
    """:func:`outcome`, and the transaction status the statement leaves."""
    pg = conn if hasattr(conn, "pgconn") else conn.pg
    return (*outcome(conn, sql), pg.pgconn.transaction_status)


def transaction_differences(
    pair: Pair, script: Sequence[str]
) -> list[tuple[str, tuple[Any, ...], tuple[Any, ...]]]:
    """:func:`script_differences` judged by :func:`with_status`; where the transaction
    states part, both are rolled back, so that the rest is judged apart from it."""
    plain, enc = pair
    differences = []
    for sql in script:
        want, got = with_status(plain, sql), with_status(enc, sql)
        if want != got:
            differences.append((sql, want, got))
        if want[-1] != got[-1]:
            plain.rollback()
            enc.rollback()
    return differences
