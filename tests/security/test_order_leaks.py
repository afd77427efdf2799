"""The leading-byte and linear leak checks (``order_leaks``) find what an Ord onion at OPE
stores -- a text column's first characters verbatim, an integer column's values on a
straight line -- and find nothing in RND, DET or ORE ciphertexts.

The OPE cases are the known leak the checks exist for (docs/security.md, "What OPE
ciphertexts show"): these tests assert the detection, so that a check that stops
seeing it fails here.  The database test stores the values through the client, has one
``ORDER BY`` peel each Ord onion to OPE, and reads the stored bytes as the provider
would.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable

import psycopg
import pytest
from psycopg import sql

import adaptive_client
from adaptive_client.catalog import recipes
from adaptive_client.catalog.onions import Onion
from adaptive_client.schemes import DET, OPE, ORE, RND
from adaptive_client.values.encodings import encoding_for

from .order_leaks import order_leaks, prefix_hits, rank_correlation

KEY = bytes(range(32))
NAMES = [
    "Alice", "Bob", "Zelda", "Mallory", "Charlie", "Dorothy", "Eve", "Frank", "Grace",
    "Heidi", "Ivan", "Judy", "Karl", "Liam", "Mona", "Nina", "Oscar", "Peggy", "Quentin",
    "Rupert", "Sybil", "Trent", "Ursula", "Victor", "Walter", "Xavier", "Yolanda", "Zack",
    "Abigail", "Bertrand", "Cecilia", "Desmond", "Eleanor", "Fitzgerald", "Gwendolyn",
    "Horatio", "Isadora", "Jasper", "Katarina", "Leopold",
]  # fmt: skip
SALARIES = [52_000 + 1_750 * i + (i * i) % 997 for i in range(40)] + [250_000]


def _text_pairs(scheme: Callable[[int], bytes]) -> tuple[list[bytes], list[bytes], list[bytes]]:
    enc = encoding_for("text")
    keys = [enc.order_key(n) for n in NAMES]
    return keys, [n.encode() for n in NAMES], [scheme(enc.to_ope(n)) for n in NAMES]


def _int_pairs(scheme: Callable[[int], bytes]) -> tuple[list[int], list[bytes]]:
    enc = encoding_for("integer")
    return SALARIES, [scheme(enc.to_ope(s)) for s in SALARIES]


def test_checks_find_opes_leading_bytes_and_line() -> None:
    ope_text, ope_int = OPE(KEY, 64), OPE(KEY, 32)
    keys, raw, stored = _text_pairs(ope_text.encrypt)
    found = {leak.check for leak in order_leaks(keys, raw, stored)}
    assert found == {"prefix", "rank"}, found  # the known leak: the scan must see it
    assert prefix_hits(list(zip(raw, stored, strict=True))) > 0.5
    plains, stored_int = _int_pairs(ope_int.encrypt)
    assert [leak.check for leak in order_leaks(plains, None, stored_int)] == ["rank"]
    assert rank_correlation(plains, stored_int) == pytest.approx(1.0)


@pytest.mark.parametrize("layer", ["RND", "DET", "ORE", "RND over ORE"])
def test_checks_pass_on_layers_that_hide_values(layer: str) -> None:
    rnd, det = RND(KEY), DET(KEY)
    ore_text, ore_int = ORE(KEY, 64), ORE(KEY, 32)

    def text(x: int) -> bytes:
        data = x.to_bytes(8, "big")
        return {
            "RND": lambda: rnd.encrypt(data),
            "DET": lambda: det.encrypt(data),
            "ORE": lambda: ore_text.encrypt(x),
            "RND over ORE": lambda: rnd.encrypt(ore_text.encrypt(x)),
        }[layer]()

    def integer(x: int) -> bytes:
        data = x.to_bytes(4, "big")
        return {
            "RND": lambda: rnd.encrypt(data),
            "DET": lambda: det.encrypt(data),
            "ORE": lambda: ore_int.encrypt(x),
            "RND over ORE": lambda: rnd.encrypt(ore_int.encrypt(x)),
        }[layer]()

    keys, raw, stored = _text_pairs(text)
    assert order_leaks(keys, raw, stored) == []
    plains, stored_int = _int_pairs(integer)
    assert order_leaks(plains, None, stored_int) == []


def test_rank_correlation_of_random_bytes_is_small() -> None:
    rng = random.Random(7)
    plains = list(range(400))
    stored = [rng.randbytes(20) for _ in plains]
    assert abs(rank_correlation(plains, stored)) < 0.2


def test_ope_column_in_the_database_shows_its_values(new_database: Callable[..., str]) -> None:
    """The issue's example as a provider sees it: names and salaries stored through the
    client, one ORDER BY on each (their Ord onions peeled), read raw; each row's
    plaintexts found through its id (decrypted with the test's keys)."""
    dsn = new_database("ordleak")
    rows = {i: (NAMES[i % len(NAMES)], SALARIES[i % len(SALARIES)]) for i in range(80)}
    with adaptive_client.connect(dsn, master_key=os.urandom(32).hex(), autocommit=True) as enc:
        enc.execute("CREATE TABLE emp (id integer PRIMARY KEY, name text, salary integer)")
        enc.cursor().executemany(
            "INSERT INTO emp VALUES (%s, %s, %s)", [(i, *v) for i, v in rows.items()]
        )
        enc.execute("SELECT name FROM emp ORDER BY name").fetchall()
        enc.execute("SELECT salary FROM emp ORDER BY salary").fetchall()
        enc.catalog.reload(enc.control)
        meta = enc.catalog.table("emp")
        id_col = meta.column("id")
        id_eq = id_col.onions[Onion.EQ]
        name_ord = meta.column("name").onions[Onion.ORD]
        salary_ord = meta.column("salary").onions[Onion.ORD]
        with psycopg.connect(dsn) as raw:
            stored = raw.execute(
                sql.SQL("SELECT {}, {}::bytea, {}::bytea FROM {}").format(
                    sql.Identifier(id_eq.anon),
                    sql.Identifier(name_ord.anon),
                    sql.Identifier(salary_ord.anon),
                    sql.Identifier(meta.anon),
                )
            ).fetchall()
        ids = [recipes.decrypt(id_col, id_eq, r[0]) for r in stored]
    layer = name_ord.shown_layer  # (ORE where ADAPTIVE_ORD_LAYER=ORE chose it)
    assert layer in ("OPE", "ORE") and salary_ord.shown_layer == layer
    text = encoding_for("text")
    names = [rows[i][0] for i in ids]
    leaks = order_leaks(
        [text.order_key(n) for n in names],
        [n.encode() for n in names],
        [bytes(r[1]) for r in stored],
    )
    salary_leaks = order_leaks([rows[i][1] for i in ids], None, [bytes(r[2]) for r in stored])
    if layer == "OPE":  # the known leak: leading characters and a line
        assert {leak.check for leak in leaks} == {"prefix", "rank"}, leaks
        assert [leak.check for leak in salary_leaks] == ["rank"], salary_leaks
    else:
        assert leaks == [] and salary_leaks == [], (leaks, salary_leaks)
