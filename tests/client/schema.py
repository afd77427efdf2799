"""The differential suite's schema, data and configuration (shared by its tests)."""

from __future__ import annotations

import datetime as dt
import os
import random
from decimal import Decimal
from typing import Any

DDL = [
    """CREATE TABLE dept (
        id integer PRIMARY KEY,
        dname varchar(30) NOT NULL,
        budget bigint,
        region text
    )""",
    """CREATE TABLE emp (
        id integer PRIMARY KEY,
        name varchar(40) NOT NULL,
        dept integer,
        salary numeric(10,2),
        bonus integer,
        hired date,
        updated timestamp,
        score double precision,
        active boolean,
        note text
    )""",
    "CREATE INDEX emp_dept_idx ON emp (dept)",
]

CONFIG: dict[str, Any] = {
    "defaults": {"sum": False, "search": True, "hom_bits": 1024},
    "tables": {
        "emp": {
            "dept": {"join_group": "dept_id"},
            "salary": {"onions": ["Eq", "Ord", "Sum"]},
            "bonus": {"onions": ["Eq", "Ord", "Sum"]},
        },
        "dept": {
            "id": {"join_group": "dept_id"},
            "budget": {"onions": ["Eq", "Ord", "Sum"]},
        },
    },
}

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"]
REGIONS = ["north", "south", "east", "west", None]
FIRST = ["Ann", "Bob", "Cid", "Dee", "Eve", "Fay", "Gus", "Hal", "Ivy", "Jon", "Kim", "Lou"]
N_EMP = int(os.environ.get("ADAPTIVE_DIFF_ROWS", "10000"))
N_DEPT = 40

# Values that must never appear in the encrypted database's dump.
MARKERS = [f"Zyxwvut-marker-{i}" for i in range(5)]


def dept_rows() -> list[tuple[Any, ...]]:
    rng = random.Random(7)
    rows = []
    for i in range(1, N_DEPT + 1):
        rows.append(
            (
                i,
                f"Dept {i:02d}",
                rng.choice([None, rng.randint(-(10**12), 10**12)]),
                rng.choice(REGIONS),
            )
        )
    return rows


def emp_rows() -> list[tuple[Any, ...]]:
    rng = random.Random(42)
    base = dt.date(2000, 1, 1)
    rows = []
    for i in range(1, N_EMP + 1):
        name = f"{rng.choice(FIRST)} {rng.choice(FIRST)}son" if i > len(MARKERS) else MARKERS[i - 1]
        dept = rng.randint(1, N_DEPT + 5) if rng.random() > 0.02 else None
        salary = Decimal(rng.randint(-5000, 2_000_000)) / 100 if rng.random() > 0.05 else None
        bonus = rng.randint(-1000, 1000) if rng.random() > 0.3 else None
        hired = base + dt.timedelta(days=rng.randint(-3000, 9000)) if rng.random() > 0.05 else None
        updated = (
            dt.datetime(2020, 1, 1)
            + dt.timedelta(seconds=rng.randint(0, 10**8), microseconds=rng.randint(0, 999999))
            if rng.random() > 0.05
            else None
        )
        score = rng.choice([None, 0.0, -1.5, 3.25, float(rng.randint(-100, 100)) / 8])
        active = rng.choice([True, False, None])
        note = " ".join(rng.sample(WORDS, rng.randint(0, 4))) if rng.random() > 0.1 else None
        rows.append((i, name, dept, salary, bonus, hired, updated, score, active, note))
    return rows
