r"""The differential suite's statements: each runs on plain PostgreSQL and through the client.

``ordered`` statements compare row lists; the others compare multisets.  Together they
cover DESIGN §5: point lookups, composite predicates, IN, BETWEEN, IS [NOT] NULL,
AND/OR/NOT, ORDER BY (integers, numerics, dates, timestamps, strings, DESC, NULLs) with
LIMIT/OFFSET, COUNT(*), COUNT(col), COUNT(DISTINCT), SUM, AVG, MIN/MAX, GROUP BY, HAVING,
explicit JOIN ... ON and comma joins with aliases, whole-word search, client-side
arithmetic, and parameters (``%s``) alongside constants in the SQL text.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, NamedTuple


class Q(NamedTuple):
    sql: str
    params: tuple[Any, ...] = ()
    ordered: bool = False


def queries() -> list[Q]:
    qs: list[Q] = []
    add = qs.append
    # point lookups and composite keys
    for i in (1, 2, 3, 77, 5000, 9999, 10000, 123456):
        add(Q("SELECT * FROM emp WHERE id = %s", (i,)))
    add(Q("SELECT name, salary FROM emp WHERE id = 42"))
    add(Q("SELECT id FROM emp WHERE id = %s AND dept = %s", (17, 3)))
    add(Q("SELECT * FROM dept WHERE id = 5"))
    # equality on every type, constants in text and as parameters
    eqs = [
        ("dept", "7"),
        ("dept", "%s"),
        ("name", "'Ann Bobson'"),
        ("name", "%s"),
        ("salary", "100.50"),
        ("salary", "%s"),
        ("bonus", "-5"),
        ("bonus", "%s"),
        ("hired", "'2001-02-03'"),
        ("hired", "%s"),
        ("score", "3.25"),
        ("score", "-1.5"),
        ("active", "true"),
        ("active", "%s"),
        ("note", "'alpha bravo'"),
    ]
    params = {
        "dept": (12,),
        "name": ("Kim Louson",),
        "salary": (Decimal("1234.00"),),
        "bonus": (17,),
        "hired": (dt.date(2003, 3, 3),),
        "active": (False,),
    }
    for col, val in eqs:
        p = params[col] if val == "%s" else ()
        add(Q(f"SELECT id, {col} FROM emp WHERE {col} = {val} ORDER BY id", p, True))
        add(Q(f"SELECT COUNT(*) FROM emp WHERE {col} <> {val}", p))
    # ranges
    ranges = [
        ("id", "9990"),
        ("dept", "20"),
        ("salary", "10000"),
        ("salary", "-10.5"),
        ("bonus", "0"),
        ("hired", "'2010-06-30'"),
        ("updated", "'2021-07-01 12:00:00'"),
        ("score", "0"),
        ("hired", "%s"),
        ("updated", "%s"),
    ]
    rparams = {"hired": (dt.date(1999, 12, 31),), "updated": (dt.datetime(2022, 2, 2, 2, 2, 2, 5),)}
    for col, val in ranges:
        p = rparams[col] if val == "%s" else ()
        for op in ("<", "<=", ">", ">="):
            if op in ("<", ">=") or val != "%s":
                add(Q(f"SELECT COUNT(*) FROM emp WHERE {col} {op} {val}", p))
        add(
            Q(f"SELECT id, {col} FROM emp WHERE {col} > {val} ORDER BY {col}, id LIMIT 15", p, True)
        )
    # BETWEEN, IN, IS NULL, boolean logic
    add(Q("SELECT id FROM emp WHERE id BETWEEN 100 AND 120 ORDER BY id", (), True))
    add(Q("SELECT id FROM emp WHERE salary BETWEEN %s AND %s", (Decimal("10"), Decimal("20"))))
    add(Q("SELECT id FROM emp WHERE hired BETWEEN '2005-01-01' AND '2005-12-31'"))
    add(Q("SELECT id FROM emp WHERE updated NOT BETWEEN '2020-01-02' AND '2022-12-31'"))
    add(Q("SELECT id FROM emp WHERE bonus BETWEEN -10 AND 10 AND dept BETWEEN 1 AND 5"))
    add(Q("SELECT id, dept FROM emp WHERE dept IN (1, 2, 3) AND id < 500"))
    add(Q("SELECT id FROM emp WHERE dept IN (%s, %s)", (4, 9)))
    add(Q("SELECT id FROM emp WHERE name IN ('Ann Bobson', 'Eve Kimson', 'Nobody')"))
    add(Q("SELECT id FROM emp WHERE dept NOT IN (1, 2) AND id < 300"))
    add(Q("SELECT id FROM emp WHERE hired IN ('2001-01-01', '2002-02-02', '2003-03-03')"))
    for col in ("dept", "salary", "bonus", "hired", "updated", "score", "active", "note"):
        add(Q(f"SELECT COUNT(*) FROM emp WHERE {col} IS NULL"))
        add(Q(f"SELECT id FROM emp WHERE {col} IS NOT NULL AND id <= 50 ORDER BY id", (), True))
    add(Q("SELECT id FROM emp WHERE (dept = 1 OR dept = 2) AND NOT active"))
    add(Q("SELECT id FROM emp WHERE dept = 3 OR bonus > 990 OR salary < -40"))
    add(Q("SELECT id FROM emp WHERE NOT (dept = 3 OR dept IS NULL) AND id < 100"))
    add(Q("SELECT id FROM emp WHERE active AND dept = 5"))
    add(Q("SELECT id FROM emp WHERE active = false AND hired > '2020-01-01'"))
    # ORDER BY on every type, ASC/DESC, NULLs, LIMIT/OFFSET
    for col in ("id", "dept", "salary", "bonus", "hired", "updated", "score", "name"):
        add(Q(f"SELECT id, {col} FROM emp ORDER BY {col}, id LIMIT 25", (), True))
        add(Q(f"SELECT id, {col} FROM emp ORDER BY {col} DESC, id DESC LIMIT 25", (), True))
    add(Q("SELECT id, name FROM emp WHERE dept = 4 ORDER BY name, id", (), True))
    add(
        Q(
            "SELECT id, name FROM emp WHERE dept = 4 ORDER BY name DESC, id LIMIT 7 OFFSET 3",
            (),
            True,
        )
    )
    add(Q("SELECT id FROM emp WHERE dept = 9 ORDER BY id DESC LIMIT 1", (), True))
    add(Q("SELECT id, salary FROM emp ORDER BY salary DESC NULLS LAST, id LIMIT 10", (), True))
    add(Q("SELECT id, hired FROM emp ORDER BY hired NULLS FIRST, id LIMIT 10", (), True))
    add(Q("SELECT id FROM emp ORDER BY id LIMIT %s OFFSET %s", (5, 100), True))
    add(Q("SELECT id, dept FROM emp WHERE dept = 2 AND bonus > 5 ORDER BY 2, 1 LIMIT 5", (), True))
    add(Q("SELECT id AS k, salary AS s FROM emp WHERE dept = 6 ORDER BY s, k", (), True))
    add(Q("SELECT dname FROM dept ORDER BY dname", (), True))
    # aggregates
    add(Q("SELECT COUNT(*) FROM emp"))
    for col in ("dept", "salary", "note", "updated"):
        add(Q(f"SELECT COUNT({col}) FROM emp"))
    for col in ("dept", "name", "hired", "active", "bonus"):
        add(Q(f"SELECT COUNT(DISTINCT {col}) FROM emp"))
    for col in ("salary", "bonus"):
        add(Q(f"SELECT SUM({col}) FROM emp"))
        add(Q(f"SELECT SUM({col}), AVG({col}) FROM emp WHERE dept = 3"))
        add(Q(f"SELECT AVG({col}) FROM emp WHERE id < 1000"))
        add(Q(f"SELECT SUM({col}) FROM emp WHERE id < 0"))
    add(Q("SELECT SUM(budget), AVG(budget) FROM dept"))
    for col in ("id", "dept", "salary", "bonus", "hired", "updated", "score"):
        add(Q(f"SELECT MIN({col}), MAX({col}) FROM emp"))
    add(Q("SELECT MAX(id) FROM emp WHERE dept = 7"))
    add(Q("SELECT MIN(hired) FROM emp WHERE dept = 7 AND active"))
    # GROUP BY / HAVING
    add(Q("SELECT dept, COUNT(*) FROM emp GROUP BY dept"))
    add(Q("SELECT dept, COUNT(*), SUM(salary), AVG(bonus) FROM emp GROUP BY dept"))
    add(Q("SELECT dept, MIN(salary), MAX(hired) FROM emp WHERE id < 3000 GROUP BY dept"))
    add(Q("SELECT active, COUNT(*) FROM emp GROUP BY active"))
    add(Q("SELECT dept, COUNT(*) FROM emp GROUP BY dept HAVING COUNT(*) > 250"))
    add(Q("SELECT dept, active, COUNT(*) FROM emp GROUP BY dept, active"))
    add(Q("SELECT dept, COUNT(DISTINCT bonus) FROM emp GROUP BY 1"))
    add(Q("SELECT region, COUNT(*) FROM dept GROUP BY region"))
    add(Q("SELECT dept, COUNT(*) AS n FROM emp GROUP BY dept ORDER BY dept LIMIT 10", (), True))
    # DISTINCT
    add(Q("SELECT DISTINCT dept FROM emp"))
    add(Q("SELECT DISTINCT active, dept FROM emp WHERE id < 200"))
    add(Q("SELECT DISTINCT region FROM dept"))
    # joins
    add(Q("SELECT e.id, d.dname FROM emp e JOIN dept d ON e.dept = d.id WHERE e.id < 200"))
    add(
        Q(
            "SELECT e.id, d.dname FROM emp AS e JOIN dept AS d ON e.dept = d.id "
            "WHERE d.region = 'north' ORDER BY e.id LIMIT 30",
            (),
            True,
        )
    )
    add(Q("SELECT e.id, d.region FROM emp e LEFT JOIN dept d ON e.dept = d.id WHERE e.id < 300"))
    add(Q("SELECT COUNT(*) FROM emp e, dept d WHERE e.dept = d.id AND d.budget > 0"))
    add(Q("SELECT d.id, COUNT(*) FROM dept d JOIN emp e ON d.id = e.dept GROUP BY d.id"))
    add(
        Q(
            "SELECT COUNT(DISTINCT e.dept) FROM emp e, dept d WHERE e.id < %s AND e.id >= %s "
            "AND d.id = e.dept AND d.budget < %s",
            (5000, 4000, 10**11),
        )
    )
    add(
        Q(
            "SELECT emp.name FROM emp JOIN dept ON emp.dept = dept.id WHERE dept.id = 3 "
            "AND emp.id < 1000"
        )
    )
    # whole-word search
    for w in ("alpha", "echo", "india", "zulu"):
        add(Q(f"SELECT id FROM emp WHERE note ~ '\\m{w}\\M'"))
    add(Q("SELECT COUNT(*) FROM emp WHERE note ~ %s AND dept < 10", ("\\mgolf\\M",)))
    # expressions evaluated by the client after decryption
    add(Q("SELECT id, bonus * 2, bonus + 1, -bonus FROM emp WHERE id < 40 ORDER BY id", (), True))
    add(Q("SELECT id, salary * 3 - 1 FROM emp WHERE id < 25 ORDER BY id", (), True))
    add(Q("SELECT id, dept / 3, dept % 4 FROM emp WHERE id < 25 ORDER BY id", (), True))
    add(Q("SELECT COUNT(*) + 1 FROM emp WHERE dept = 2"))
    # constants the column type cannot hold: equal to nothing, as in PostgreSQL
    add(Q("SELECT COUNT(*) FROM emp WHERE bonus = 2.5"))
    add(Q("SELECT COUNT(*) FROM emp WHERE bonus <> 2.5"))
    add(Q("SELECT COUNT(*) FROM emp WHERE salary = 100.505"))
    add(Q("SELECT COUNT(*) FROM emp WHERE name = %s", ("x" * 41,)))
    add(Q("SELECT id FROM emp WHERE bonus IN (1.5, 7) AND id < 3000"))
    # LIKE without wildcards is equality
    add(Q("SELECT id FROM emp WHERE name LIKE 'Ivy Calson'"))
    return qs


def dml() -> list[Q]:
    """Writes applied to both databases, in order; contents are compared afterwards."""
    return [
        Q(
            "INSERT INTO emp (id, name, dept, salary, bonus, hired, updated, score, active, note) "
            "VALUES (20001, 'New Person', 3, 10.10, 5, '2024-01-02', "
            "'2024-01-02 03:04:05.678', 1.5, "
            "true, 'hotel india')"
        ),
        Q("INSERT INTO emp (id, name) VALUES (%s, %s), (%s, %s)", (20002, "Two", 20003, "Three")),
        Q("INSERT INTO emp VALUES (20004, 'Four', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)"),
        Q("UPDATE emp SET dept = 4 WHERE id = 20002"),
        Q("UPDATE emp SET bonus = bonus + 5 WHERE dept = 3"),
        Q("UPDATE emp SET salary = salary * 2, bonus = 7 WHERE id < 30"),
        Q("UPDATE emp SET note = %s, active = %s WHERE id = %s", ("echo echo", False, 20003)),
        Q("UPDATE emp SET bonus = bonus - %s WHERE id BETWEEN %s AND %s", (3, 100, 120)),
        Q("DELETE FROM emp WHERE id = 20004"),
        Q("DELETE FROM emp WHERE dept = 44 AND bonus < 0"),
        Q("UPDATE dept SET budget = budget + 1000 WHERE region = 'east'"),
        Q("DELETE FROM emp WHERE hired < '1992-02-01'"),
    ]


def client_aggregates() -> list[Q]:
    """Aggregates no onion lets the server compute: the client reduces decrypted rows."""
    return [
        Q("SELECT SUM(dept), AVG(dept) FROM emp WHERE id < 500"),
        Q("SELECT SUM(id), COUNT(*), MIN(name), MAX(name) FROM emp WHERE dept = 3"),
        Q("SELECT SUM(score) FROM emp WHERE dept = 4"),
        Q("SELECT COUNT(DISTINCT name) FROM emp WHERE dept < 3"),
    ]
