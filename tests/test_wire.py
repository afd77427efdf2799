"""Word-token and comparand arrays go to the server in binary: the same bytea[] as psycopg's
text form."""

from __future__ import annotations

import os

import psycopg
import pytest

from adaptive_client.values import wire
from adaptive_client.values.wire import WordTokens

CASES = [
    [],
    [b"\x00" * 16],
    [b'\\"{},' + bytes(range(11)), b"\xff" * 16, os.urandom(16)],  # what text must escape
    [os.urandom(16) for _ in range(50)],
]


@pytest.mark.parametrize("tokens", CASES)
def test_binary_tokens_equal_text_array(pg_dsn: str, tokens: list[bytes]) -> None:
    with psycopg.connect(pg_dsn) as conn:
        wire.register(conn)
        row = conn.execute(
            "SELECT %s, %s = %s, pg_typeof(%s)::text",
            (WordTokens(tokens), WordTokens(tokens), list(tokens) or "{}", WordTokens(tokens)),
        ).fetchone()
    assert row is not None
    assert row[0] == tokens
    assert row[1] is True
    assert row[2] == "bytea[]"


def test_binary_tokens_serve_containment(pg_dsn: str) -> None:
    """``col @> ARRAY[token]``, the Search onion's operator, on binary-sent arrays."""
    a, b = os.urandom(16), os.urandom(16)
    with psycopg.connect(pg_dsn) as conn:
        wire.register(conn)
        cur = conn.execute(
            "SELECT %s @> %s, %s @> %s", (WordTokens([a, b]), [b], WordTokens([a]), [b])
        )
        assert cur.fetchone() == (True, False)


@pytest.mark.parametrize(
    "values", [[], [None], [b"\x01" * 17, None, b"", b'\\"{},' + os.urandom(20)], *CASES]
)
def test_binary_comparands_equal_text_array(pg_dsn: str, values: list[bytes | None]) -> None:
    """``col = ANY(%s)``'s comparands (NULLs among them) as sent in binary."""
    with psycopg.connect(pg_dsn) as conn:
        wire.register(conn)
        sent = wire.CiphertextArray(values)
        row = conn.execute(
            "SELECT %s, %s IS NOT DISTINCT FROM %s::bytea[], pg_typeof(%s)::text",
            (sent, sent, list(values) or "{}", sent),
        ).fetchone()
    assert row is not None
    assert row[0] == values
    assert row[1] is True
    assert row[2] == "bytea[]"
