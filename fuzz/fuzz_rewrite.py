"""Coverage-guided fuzzing of the client's parse/rewrite path.

    .venv/bin/python fuzz/fuzz_rewrite.py -max_total_time=300 -dict=fuzz/sql.dict fuzz/corpus

runs atheris (libFuzzer) against :func:`rewrite_target.run_case` on a real encrypted
schema (a scratch database ``adaptive_fuzz`` on the embedded cluster, or the database of
``ADAPTIVE_FUZZ_DSN``).  Each input is split into SQL text and up to four parameters.
Any exception other than the client's typed errors is reported with its input and the
run stops.  Without atheris (``pip install atheris``), ``--hypothesis N`` runs N cases
drawn by hypothesis instead (mutated seed statements and token soup), the documented
fallback; the test suite runs a short version of the same
(tests/security/test_fuzz_rewrite.py).
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def _dsn() -> str:
    env = os.environ.get("ADAPTIVE_FUZZ_DSN")
    if env:
        return env
    import psycopg

    from adaptive_client.admin.embedded import EmbeddedCluster
    from adaptive_client.catalog.install import install

    cluster = EmbeddedCluster.default()
    cluster.up()
    with psycopg.connect(cluster.dsn("postgres"), autocommit=True) as c:
        c.execute("DROP DATABASE IF EXISTS adaptive_fuzz WITH (FORCE)")
        c.execute("CREATE DATABASE adaptive_fuzz")
    dsn = cluster.dsn("adaptive_fuzz")
    with psycopg.connect(dsn) as c:
        install(c)
    return dsn


PARAM_KINDS: list[Any] = [
    0,
    -1,
    2**31,
    2**63,
    -(2**70),
    Decimal("1.25"),
    Decimal("NaN"),
    1.5,
    float("inf"),
    "",
    "a",
    "x" * 300,
    "O'Brien",
    None,
    True,
    dt.date(2024, 2, 29),
    dt.datetime(1, 1, 1),
    b"\x00",
    [1, 2],
]


def split_input(data: bytes) -> tuple[str, tuple[Any, ...]]:
    """The SQL text (up to a NUL byte) and parameters picked by the bytes after it."""
    text, _, tail = data.partition(b"\0")
    params = tuple(PARAM_KINDS[b % len(PARAM_KINDS)] for b in tail[:4])
    return text.decode("utf-8", "replace"), params


def main_atheris(argv: list[str]) -> None:
    import logging

    import atheris

    # sqlglot warns on every statement it falls back to parsing as a command
    logging.getLogger("sqlglot").setLevel(logging.ERROR)

    with atheris.instrument_imports():
        import sqlglot  # noqa: F401
        from rewrite_target import SEEDS, open_schema, run_case

        import adaptive_client  # noqa: F401

    from adaptive_client.catalog.keys import MasterKey

    conn = open_schema(_dsn(), MasterKey.generate())
    corpus = [a for a in argv[1:] if not a.startswith("-")]
    if corpus:
        Path(corpus[0]).mkdir(parents=True, exist_ok=True)
        for i, seed in enumerate(SEEDS):
            (Path(corpus[0]) / f"seed-{i:02d}").write_bytes(seed.encode() + b"\0\x01\x02\x03")

    def one(data: bytes) -> None:
        sql, params = split_input(data)
        run_case(conn, sql, params)

    atheris.Setup(argv, one)
    atheris.Fuzz()


def main_hypothesis(n: int) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
    from rewrite_target import open_schema, run_case
    from sql_strategies import statements

    from adaptive_client.catalog.keys import MasterKey

    conn = open_schema(_dsn(), MasterKey.generate())
    outcomes: dict[str, int] = {}

    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(statements(), st.lists(st.sampled_from(PARAM_KINDS), max_size=4))
    def case(sql: str, params: list[Any]) -> None:
        end = run_case(conn, sql, tuple(params))
        outcomes[end] = outcomes.get(end, 0) + 1

    case()
    print(f"{sum(outcomes.values())} cases: {outcomes}")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--hypothesis":
        main_hypothesis(int(sys.argv[2]))
    else:
        main_atheris(sys.argv)
