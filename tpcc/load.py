"""The TPC-C initial database (clause 4.3.3), written through any DB-API connection.

Plain databases are loaded with psycopg, encrypted and adaptive ones through the client,
so loading exercises the client's INSERT path: multi-row INSERTs of ``BATCH`` rows, each
compiled once and encrypted value by value.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .rand import TpccRandom
from .schema import DDL

BATCH = 200


@dataclass(frozen=True)
class Scale:
    """Cardinalities; ``FULL`` is the specification's, smaller ones are for tests."""

    items: int = 100_000
    customers: int = 3000  # per district
    orders: int = 3000  # per district
    new_orders: int = 900  # the last ones of each district
    districts: int = 10

    @property
    def delivered(self) -> int:
        return self.orders - self.new_orders


FULL = Scale()
TINY = Scale(items=200, customers=30, orders=30, new_orders=9, districts=10)
SCALES = {
    "full": FULL,
    "tiny": TINY,
    "small": Scale(items=5000, customers=300, orders=300, new_orders=90),
    # `make demo`: many small warehouses, one terminal each, so that clients rarely wait on
    # one another's locks (TPC-C's own terminals are mostly idle, keying and thinking)
    "demo": Scale(items=1000, customers=30, orders=30, new_orders=9),
}


def _batches(rows: Iterator[tuple[Any, ...]], size: int) -> Iterator[list[tuple[Any, ...]]]:
    batch: list[tuple[Any, ...]] = []
    for r in rows:
        batch.append(r)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def insert_rows(
    conn: Any,
    table: str,
    rows: Iterator[tuple[Any, ...]],
    width: int,
    progress: Callable[[int], None] | None = None,
) -> int:
    cur = conn.cursor()
    one = "(" + ", ".join(["%s"] * width) + ")"
    n = 0
    for batch in _batches(rows, BATCH):
        sql = f"INSERT INTO {table} VALUES " + ", ".join([one] * len(batch))
        cur.execute(sql, [v for r in batch for v in r])
        n += len(batch)
        if progress:
            progress(len(batch))
    return n


def create_schema(conn: Any) -> None:
    for stmt in DDL:
        conn.execute(stmt)
    conn.commit()


def items(r: TpccRandom, scale: Scale) -> Iterator[tuple[Any, ...]]:
    for i in range(1, scale.items + 1):
        yield (
            i,
            r.uniform(1, 10000),
            r.astring(14, 24),
            r.decimal_cents(100, 10000),
            r.data(26, 50),
        )


def load_warehouse(
    conn: Any,
    w: int,
    r: TpccRandom,
    scale: Scale,
    now: dt.datetime,
    progress: Callable[[int], None] | None = None,
) -> None:
    def addr() -> tuple[str, str, str, str, str]:
        return (
            r.astring(10, 20),
            r.astring(10, 20),
            r.astring(10, 20),
            r.astring(2, 2).upper(),
            r.zip(),
        )

    tax = f"0.{r.uniform(0, 2000):04d}"
    insert_rows(
        conn, "warehouse", iter([(w, r.astring(6, 10), *addr(), tax, "300000.00")]), 9, progress
    )
    stock = (
        (i, w, r.uniform(10, 100), *[r.astring(24, 24) for _ in range(10)], 0, 0, 0, r.data(26, 50))
        for i in range(1, scale.items + 1)
    )
    insert_rows(conn, "stock", stock, 17, progress)
    conn.commit()
    for d in range(1, scale.districts + 1):
        insert_rows(
            conn,
            "district",
            iter(
                [
                    (
                        d,
                        w,
                        r.astring(6, 10),
                        *addr(),
                        f"0.{r.uniform(0, 2000):04d}",
                        "30000.00",
                        scale.orders + 1,
                    )
                ]
            ),
            11,
            progress,
        )

        def customers(d: int = d) -> Iterator[tuple[Any, ...]]:
            for c in range(1, scale.customers + 1):
                last = r.last_name(c - 1 if c <= 1000 else r.nurand(255, 0, 999))
                yield (
                    c,
                    d,
                    w,
                    r.astring(8, 16),
                    "OE",
                    last,
                    *addr(),
                    r.nstring(16, 16),
                    now,
                    "BC" if r.uniform(1, 10) == 1 else "GC",
                    "50000.00",
                    f"0.{r.uniform(0, 5000):04d}",
                    "-10.00",
                    "10.00",
                    1,
                    0,
                    r.astring(300, 500),
                )

        insert_rows(conn, "customer", customers(), 21, progress)
        history = (
            (c, d, w, d, w, now, "10.00", r.astring(12, 24)) for c in range(1, scale.customers + 1)
        )
        insert_rows(conn, "history", history, 8, progress)
        perm = list(range(1, scale.customers + 1))
        r.rng.shuffle(perm)
        counts = [r.uniform(5, 15) for _ in range(scale.orders)]
        orders = (
            (
                o,
                d,
                w,
                perm[(o - 1) % len(perm)],
                now,
                r.uniform(1, 10) if o <= scale.delivered else None,
                counts[o - 1],
                1,
            )
            for o in range(1, scale.orders + 1)
        )
        insert_rows(conn, "orders", orders, 8, progress)

        def lines(d: int = d, counts: list[int] = counts) -> Iterator[tuple[Any, ...]]:
            for o in range(1, scale.orders + 1):
                delivered = o <= scale.delivered
                for n in range(1, counts[o - 1] + 1):
                    yield (
                        o,
                        d,
                        w,
                        n,
                        r.uniform(1, scale.items),
                        w,
                        now if delivered else None,
                        5,
                        "0.00" if delivered else r.decimal_cents(1, 999999),
                        r.astring(24, 24),
                    )

        insert_rows(conn, "order_line", lines(), 10, progress)
        new = ((o, d, w) for o in range(scale.delivered + 1, scale.orders + 1))
        insert_rows(conn, "new_order", new, 3, progress)
        conn.commit()


def expected_rows(warehouses: int, scale: Scale) -> int:
    per_district = scale.customers * 2 + scale.orders * 11 + scale.new_orders + 1
    return scale.items + warehouses * (1 + scale.items + scale.districts * per_district)


def load(
    conn: Any,
    warehouses: int,
    scale: Scale = FULL,
    seed: int = 1,
    progress: Callable[[int], None] | None = None,
) -> None:
    r = TpccRandom(seed)
    now = dt.datetime(2026, 1, 1, 12, 0, 0)
    create_schema(conn)
    insert_rows(conn, "item", items(r, scale), 5, progress)
    conn.commit()
    for w in range(1, warehouses + 1):
        load_warehouse(conn, w, r, scale, now, progress)
