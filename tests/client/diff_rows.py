"""Rows of the differential schema (schema.py's ``dept`` and ``emp``) for the split
execution's differential corpus (diff_queries.py): few enough to run hundreds of queries
in seconds, chosen for the edges PostgreSQL's semantics have -- NULL in every nullable
column, duplicates, negative numbers, numerics with scale, dates before 2000 and
timestamps with microseconds, non-ASCII and case-differing text, empty strings, and the
LIKE wildcards themselves inside values."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

DEPT_NAMES = ["Sales", "sales", "Équipe", "R&D", "ops", "", "Zürich", "straße", "Ωmega",
              "naïve", "IT", "it_100%"]  # fmt: skip
REGIONS = ["north", "North", "", None, "südost", "west", "east"]
FIRST = ["Ann", "ann", "Bob", "Élise", "Zoë", "Ömer", "d'Arcy", "chloé", "ZED", "", "Ivan",
         "o_o", "50%", "Åsa", "Bo"]  # fmt: skip
LAST = ["Lee", "Stone", "", "Martin", "lee", "Øster", "Ng"]
WORDS = ["alpha", "Bravo", "charlie", "délta", "", "echo echo", "Foxtrot"]
N_EMP = 240


def dept_rows() -> list[tuple[Any, ...]]:
    rows = []
    for i, dname in enumerate(DEPT_NAMES, start=1):
        budget = None if i % 5 == 0 else (i * 7919 % 2000 - 700) * 10**6 + i
        rows.append((i, dname, budget, REGIONS[i % len(REGIONS)]))
    return rows


def emp_rows() -> list[tuple[Any, ...]]:
    """Department ids 13 and 14 have no dept row; every 29th employee has none at all."""
    rows = []
    for i in range(1, N_EMP + 1):
        first, last = FIRST[i % len(FIRST)], LAST[(i * 3) % len(LAST)]
        name = f"{first} {last}".strip() if i % 11 else first
        dept = None if i % 29 == 0 else (i * 5) % 14 + 1
        salary = None if i % 13 == 0 else Decimal((i * 4507) % 300000 - 20000) / 100
        if i % 17 == 0:
            salary = Decimal("1234.50")  # a duplicated value across departments
        bonus = None if i % 7 == 0 else (i * 37) % 401 - 200
        hired = None if i % 19 == 0 else dt.date(1985, 1, 1) + dt.timedelta(days=(i * 397) % 14000)
        updated = (
            None
            if i % 23 == 0
            else dt.datetime(2021, 1, 1) + dt.timedelta(seconds=i * 86413 * 3, microseconds=i * 7)
        )
        score = [None, 0.0, -1.5, 3.25, 12.125, -0.375][i % 6]
        active = [True, False, None][i % 3]
        note = (
            None
            if i % 9 == 0
            else " ".join(WORDS[(i + k) % len(WORDS)] for k in range(i % 3)).strip()
        )
        rows.append((i, name, dept, salary, bonus, hired, updated, score, active, note))
    return rows
