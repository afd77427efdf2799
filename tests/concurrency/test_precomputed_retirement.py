"""A precomputed column retired while other connections of the same process write the
table (adapt/designed.py ``retire``): one of them holding the table in an open
transaction, the retirement waits for it; every row written once, the sums PostgreSQL's."""

from __future__ import annotations

import threading
import time
from decimal import Decimal

import psycopg

import adaptive_client

from .conftest import Pair, Watchdog

DDL = "CREATE TABLE li (id integer PRIMARY KEY, grp text NOT NULL, price numeric(30,2), disc numeric(4,2))"
REVENUE = "SELECT grp, sum(price * (1 - disc)), count(*) FROM li GROUP BY grp ORDER BY grp"
HUGE = Decimal("9999999999999999999999999999.99")  # (x 100.99: past ASHE's 96 bits)


def test_retired_while_others_write(pair: Pair, watchdog: Watchdog) -> None:
    plain = psycopg.connect(pair.plain, autocommit=True)
    setup = adaptive_client.connect(pair.enc, master_key=pair.key, autocommit=True)
    for conn in (plain, setup):
        conn.execute(DDL)
        conn.execute(
            "INSERT INTO li SELECT g, 'g' || g % 3, g + 0.25, 0.05 FROM generate_series(1, 30) g"
        )
    setup.execute(REVENUE).fetchall()
    assert [c.expression for c in setup.catalog.table("li").precomputed.values()] == [
        "price * (1 - disc)"
    ]
    writers = [
        adaptive_client.connect(pair.enc, master_key=pair.key, autocommit=True) for _ in range(2)
    ]
    holder = adaptive_client.connect(pair.enc, master_key=pair.key)
    held = threading.Event()
    rows = {
        i: [
            (100 * (i + 1) + n, f"g{n % 3}", Decimal(n) + Decimal("0.50"), Decimal("0.10"))
            for n in range(40)
        ]
        for i in range(2)
    }
    rows[0][20] = (120, "g2", HUGE, Decimal("-99.99"))  # (its writer retires the column)
    holding = [(900, "g1", Decimal("7.00"), Decimal("0.20"))]

    def hold() -> None:  # (the table's lock held in a transaction while the others run)
        holder.execute("INSERT INTO li VALUES (%s, %s, %s, %s)", holding[0])
        held.set()
        time.sleep(1.0)
        holder.commit()

    def write(i: int) -> None:
        held.wait(30)
        for row in rows[i]:
            writers[i].execute("INSERT INTO li VALUES (%s, %s, %s, %s)", row)

    watchdog.start(hold, name="holder")
    for i in range(2):
        watchdog.start(write, i, name=f"writer {i}")
    watchdog.join_all(120)
    for row in [*holding, *rows[0], *rows[1]]:
        plain.execute("INSERT INTO li VALUES (%s, %s, %s, %s)", row)
    expected = plain.execute(REVENUE).fetchall()
    for conn in (setup, *writers):
        assert conn.execute(REVENUE).fetchall() == expected
    assert setup.catalog.table("li").precomputed == {}
    assert setup.catalog.table("li").declined == ["price * (1 - disc)"]
    for conn in (plain, setup, holder, *writers):
        conn.close()
