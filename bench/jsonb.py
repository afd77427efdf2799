"""Containment over jsonb and arrays through the client against plain PostgreSQL with GIN.

    python bench/jsonb.py [--dsn DSN] [--rows 100000] [--repeat 20]

The same ``--rows`` documents of varied shapes (objects with a color, a size, a SKU,
nested dimensions, optional keys, arrays of variants; a few top-level arrays) and a
``text[]`` of tags go into a plain database, by COPY, with GIN indexes on both columns,
and through the client (default onions: the Contain onion on both columns), by COPY --
the client's fastest load; both load times are printed.  The first use of each query
peels the column's Contain onion and builds its GIN index (not timed); then each query
runs ``--repeat`` times on both, plain and client interleaved so that other load on the
machine affects both alike, answers compared.  Printed: rows, medians, client / plain.

Queries: a selective ``attrs @> '{"color": ...}'``, ``%s = ANY(tags)`` (plain
PostgreSQL cannot use its GIN index for it: it scans), ``tags @> ARRAY[%s]``.  The last
line is the worst ratio of the client's median to plain's (the target: at most 3).

Each line also times the client's fetch alone: the server SELECT split execution sends
(the candidate filter over the peeled tokens through their GIN index), run by psycopg,
without decryption or the client's exact check -- the server's share of the client's
time.  Where the client cannot run a query (its engine refuses the operator:
``UnsupportedQuery``), the line says so, and the ratio is the fetch's.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import time
from collections.abc import Callable
from typing import Any

import psycopg
from scratch import scratch

import adaptive_client
from adaptive_client.admin.controls import peel_column
from adaptive_client.admin.embedded import EmbeddedCluster
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.compile.compiler import Compiler
from adaptive_client.compile.select import compile_select
from adaptive_client.compile.split import FETCHING
from adaptive_client.errors import UnsupportedQuery
from adaptive_client.values import wire

DDL = "CREATE TABLE item (id integer PRIMARY KEY, attrs jsonb, tags text[])"
COLORS = 500
TAGS = 300
QUERIES: list[tuple[str, Any, str]] = [
    ("SELECT id, attrs FROM item WHERE attrs @> %s ORDER BY id", '{"color": "c123"}', "attrs"),
    ("SELECT id, tags FROM item WHERE %s = ANY(tags) ORDER BY id", "t17", "tags"),
    ("SELECT id, tags FROM item WHERE tags @> ARRAY[%s] ORDER BY id", "t42", "tags"),
]


def document(i: int) -> Any:
    """Documents of varied shapes: most objects, some nested deeper, some arrays."""
    if i % 50 == 0:
        return [f"c{i % COLORS}", i % 9, {"color": f"c{(i + 1) % COLORS}"}]
    doc: dict[str, Any] = {
        "color": f"c{i % COLORS}",
        "size": [1, 1.5, 2, 10, 42][i % 5],
        "sku": f"SKU-{i:07d}",
        "dims": {"w": i % 17, "h": i % 11, "unit": "cm" if i % 3 else "in"},
    }
    if i % 7 == 0:
        doc["discount"] = {"pct": i % 30, "until": "2025-12-31"}
    if i % 4 == 0:
        doc["variants"] = [{"color": f"c{(i * 7) % COLORS}", "stock": i % 13}, None, True]
    if i % 11 == 0:
        doc["note"] = "ünïcode ☃ text"
    return doc


def rows(n: int) -> list[tuple[int, str, list[str]]]:
    out = []
    for i in range(n):
        tags = [f"t{(i * k) % TAGS}" for k in range(1, 2 + i % 4)]
        out.append((i, json.dumps(document(i), ensure_ascii=False), tags))
    return out


def load(conn: Any, data: list[tuple[int, str, list[str]]]) -> float:
    conn.execute(DDL)
    t = time.perf_counter()
    with conn.cursor().copy("COPY item FROM STDIN") as copy:
        for r in data:
            copy.write_row(r)
    return time.perf_counter() - t


def run(conn: Any, query: str, param: Any) -> tuple[float, list[Any]]:
    t = time.perf_counter()
    got = conn.execute(query, (param,)).fetchall()
    return time.perf_counter() - t, got


def server_fetch(
    enc: adaptive_client.Connection, dsn: str, master_key: str, query: str, column: str
) -> Callable[[Any], tuple[float, list[Any]]]:
    """The server's part of the client's work for ``query``: the SELECT split execution
    fetches the rows with (the Contain onion's candidate filter; the onion peeled first),
    run by psycopg -- no decryption, no exact check on the client."""
    with psycopg.connect(dsn, autocommit=True) as raw:
        peel_column(raw, MasterKey.from_hex(master_key), "item", column, "Contain", "CONTAIN")
        raw.execute("VACUUM ANALYZE")
    enc.execute("SELECT 1")  # (the catalog reloaded)
    where = query.split(" WHERE ", 1)[1].split(" ORDER BY ")[0].replace("%s", "%(v)s")
    compiler = Compiler(enc.catalog, FETCHING)
    plan = compile_select(compiler, enc.parse(f"SELECT id, {column} FROM item WHERE {where}")[0])
    assert not compiler.needs
    raw = psycopg.connect(dsn, autocommit=True)
    wire.register(raw)

    def fetch(param: Any) -> tuple[float, list[Any]]:
        t = time.perf_counter()
        got = raw.execute(plan.sql, plan.bind({"v": param})).fetchall()
        return time.perf_counter() - t, got

    return fetch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dsn", default=None, help="maintenance DSN (default: embedded cluster)")
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    admin = args.dsn or EmbeddedCluster.default().dsn("postgres")
    key = os.environ.get("ADAPTIVE_MASTER_KEY") or secrets.token_hex(32)
    data = rows(args.rows)
    plain = psycopg.connect(scratch(admin, "bench_jsonb_plain", False), autocommit=True)
    enc_dsn = scratch(admin, "bench_jsonb_client", True)
    enc = adaptive_client.connect(enc_dsn, master_key=key, autocommit=True)
    t_plain = load(plain, data)
    t_client = load(enc, data)
    plain.execute("CREATE INDEX ON item USING gin (attrs)")
    plain.execute("CREATE INDEX ON item USING gin (tags)")
    plain.execute("VACUUM ANALYZE item")
    print(
        f"rows: {args.rows}; COPY load: plain {t_plain:.2f} s, client {t_client:.2f} s "
        f"(x{t_client / t_plain:.2f})"
    )
    worst = 0.0
    for query, param, column in QUERIES:
        label = query.split(" WHERE ")[1].split(" ORDER BY ")[0] % repr(param)
        client: Callable[[Any], tuple[float, list[Any]]] | None = lambda p, q=query: run(enc, q, p)  # noqa: E731
        try:
            client(param)  # first use: peels the Contain onion, builds its index
        except UnsupportedQuery as exc:
            print(f"{label}: the client refuses it ({exc}); timing its fetch only")
            client = None
        fetch = server_fetch(enc, enc_dsn, key, query, column)
        times: dict[str, list[float]] = {"plain": [], "client": [], "fetch": []}
        expected: list[Any] = []
        got: list[Any] = []
        for _ in range(args.repeat):
            p, expected = run(plain, query, param)
            times["plain"].append(p)
            if client is not None:
                c, got = client(param)
                times["client"].append(c)
            f, fetched = fetch(param)
            times["fetch"].append(f)
        assert client is None or got == expected, label
        assert len(fetched) >= len(expected), label  # (a superset of the rows)
        med = {k: statistics.median(v) for k, v in times.items() if v}
        ratio = med.get("client", med["fetch"]) / med["plain"]
        worst = max(worst, ratio)
        shown = f"client {1000 * med['client']:7.2f} ms  " if "client" in med else ""
        print(
            f"{label:<30} rows {len(expected):5d}  plain {1000 * med['plain']:7.2f} ms  "
            f"{shown}its fetch {1000 * med['fetch']:7.2f} ms ({len(fetched)} rows)  "
            f"x{ratio:.2f}"
        )
    print(f"worst client / plain: {worst:.2f} (target <= 3)")
    plain.close()
    enc.close()


if __name__ == "__main__":
    main()
