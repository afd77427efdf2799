"""A plain and an encrypted TPC-H database side by side, and the queries run on both.

The encrypted database uses :data:`CONFIG`, ``onions.toml``: the configuration
``adaptive-db advise`` proposes from the 22 queries -- per column only the
onions the queries use (Eq to decrypt, compare and group; Ord for ranges and order;
Sum (ASHE) for the columns and per-row expressions the queries sum, so the server
aggregates Q1, Q6 and the like),
lineitem's three dates in one join group (Q4, Q12 and Q21 compare a line's dates with
each other; what it reveals: the order of a line's ship, commit and receipt dates), and
the ``LIKE`` predicates of Q2, Q9, Q13 and Q16 as precomputed boolean onions, so the
server filters on them.  Foreign keys put the join columns in implied join groups."""

from __future__ import annotations

import copy
import datetime as dt
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import psycopg

import adaptive_client

from .load import create_schema, generate, load
from .queries import query
from .schema import INDEXES

CONFIG: dict[str, Any] = tomllib.loads((Path(__file__).parent / "onions.toml").read_text())


def printed(value: Any) -> Any:
    """A value as PostgreSQL prints it (numerics with their scale, no exponent)."""
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    return value


def printed_rows(rows: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
    return [tuple(printed(v) for v in r) for r in rows]


@dataclass
class Result:
    columns: list[str]
    rows: list[tuple[Any, ...]]
    seconds: float
    shipped_rows: int = 0
    shipped_bytes: int = 0


@dataclass
class Databases:
    """The two databases of one scale factor."""

    plain: str
    encrypted: str
    master_key: str
    scale: float
    counts: dict[str, int] = field(default_factory=dict)
    load_seconds: dict[str, float] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=lambda: CONFIG)

    def connect_plain(self) -> psycopg.Connection[Any]:
        return psycopg.connect(self.plain)

    def connect_encrypted(self) -> adaptive_client.Connection:
        return adaptive_client.connect(
            self.encrypted, master_key=self.master_key, config=self.config
        )


def warmed_config(conn: adaptive_client.Connection) -> dict[str, Any]:
    """:data:`CONFIG` with each onion starting at the layer it has in the database of
    ``conn`` -- one the 22 queries have warmed up.  A database loaded with it is the one
    the warm-up would leave (the same onions at the same layers: the queries peel the
    same onions at any scale), without rewriting each table once per peel, which at
    SF 1 takes minutes per lineitem onion.  What it reveals is what the warm-up reveals."""
    config = copy.deepcopy(CONFIG)
    tables = config.setdefault("tables", {})
    precomputed = config.setdefault("precomputed", {})
    for table in conn.catalog.tables.values():
        for section, columns in ((tables, table.columns), (precomputed, table.precomputed)):
            for column in columns.values():
                for oc in column.onions.values():
                    if oc.layer == oc.stack[0]:
                        continue  # not peeled
                    entry = section.setdefault(table.name, {}).setdefault(column.name, {})
                    entry.setdefault("start", {})[oc.onion.value] = oc.layer
    return config


def build(
    plain_dsn: str,
    encrypted_dsn: str,
    master_key: str,
    scale: float,
    data_dir: Path,
    progress: Callable[[str], None] | None = None,
    config: dict[str, Any] | None = None,
) -> Databases:
    """Generate the data of ``scale`` and load it into both (empty, installed) databases
    (the encrypted one with ``config``, by default :data:`CONFIG`)."""
    data = generate(scale, data_dir)
    dbs = Databases(
        plain_dsn, encrypted_dsn, master_key, scale, config=CONFIG if config is None else config
    )
    t0 = time.perf_counter()
    with dbs.connect_plain() as conn:
        create_schema(conn)
        dbs.counts = load(conn, data)
        for stmt in INDEXES:
            conn.execute(stmt)
        conn.execute("ANALYZE")
        conn.commit()
    dbs.load_seconds["plain"] = time.perf_counter() - t0
    if progress is not None:
        progress(f"plain loaded in {dbs.load_seconds['plain']:.1f}s: {dbs.counts}")
    t0 = time.perf_counter()
    with dbs.connect_encrypted() as conn:
        create_schema(conn)
        load(conn, data)
        for stmt in INDEXES:
            conn.execute(stmt)
        conn.commit()
    with psycopg.connect(encrypted_dsn, autocommit=True) as raw:
        raw.execute("ANALYZE")
    dbs.load_seconds["encrypted"] = time.perf_counter() - t0
    if progress is not None:
        progress(f"encrypted loaded in {dbs.load_seconds['encrypted']:.1f}s")
    return dbs


def run(conn: Any, number: int, scale: float) -> Result:
    """Query ``number`` through ``conn`` (plain psycopg or the client), timed."""
    text = query(number, scale)
    stats = getattr(conn, "stats", None)
    before = (stats.residual_rows, stats.residual_bytes) if stats is not None else (0, 0)
    t0 = time.perf_counter()
    cur = conn.cursor()
    cur.execute(text)
    rows = cur.fetchall()
    seconds = time.perf_counter() - t0
    columns = [d[0] for d in cur.description or []]
    cur.close()
    conn.rollback()
    result = Result(columns, printed_rows(rows), seconds)
    if stats is not None:  # rows the split execution shipped to the client
        result.shipped_rows = stats.residual_rows - before[0]
        result.shipped_bytes = stats.residual_bytes - before[1]
    return result
