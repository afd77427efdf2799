"""A differential smoke: the same statements on a plain database (psycopg) and through
``adaptive_client`` on an encrypted one, results compared.

Self-contained (no pytest, nothing from the checkout) so that it also runs, as a script,
in a fresh virtualenv where only the built wheel is installed::

    python smoke.py --enc-dsn DSN --plain-dsn DSN [--expect-mode client]

with the master key in ``ADAPTIVE_MASTER_KEY``.  Every onion starts at RND, so the
WHERE/ORDER BY/GROUP BY/MIN/MAX statements force peels and builds (Eq RND -> DET, Ord built at OPE);
the integer column has a Sum onion, so ``SUM``/``AVG`` run over Paillier ciphertexts
(``adaptive.hom_sum``, plain SQL).  Prints one JSON line: the module's location, the peel
mode in use and the peels the audit log recorded.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
from decimal import Decimal
from typing import Any

import psycopg

import adaptive_client

CONFIG: dict[str, Any] = {"defaults": {"sum": True}}

DDL = (
    "CREATE TABLE item (id integer PRIMARY KEY, name text NOT NULL, qty integer, "
    "price numeric(10,2), added date)"
)
INSERT = "INSERT INTO item (id, name, qty, price, added) VALUES (%s, %s, %s, %s, %s)"
NAMES = ("bolt", "nut", "washer", "gear", "spring", "Axle")


def rows() -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for i in range(1, 41):
        qty = None if i % 11 == 0 else (i * 7) % 13
        price = None if i % 9 == 0 else Decimal(i * 37 % 100) + Decimal("0.25") * (i % 4)
        added = dt.date(2024, 1, 1) + dt.timedelta(days=(i * 5) % 60)
        out.append((i, NAMES[i % len(NAMES)], qty, price, added))
    return out


#: (statement, parameters, ordered?) -- SELECTs compared by rows, writes by rowcount
STATEMENTS: list[tuple[str, tuple[Any, ...], bool]] = [
    ("SELECT id, name FROM item WHERE qty = %s", (5,), False),  # Eq peel on qty
    ("SELECT id, price FROM item WHERE price > %s ORDER BY price, id", (Decimal("40"),), True),
    ("SELECT name, count(*) FROM item GROUP BY name ORDER BY name", (), True),
    ("SELECT min(price), max(price), min(added), max(added) FROM item", (), True),
    ("SELECT sum(qty), count(qty), avg(qty) FROM item", (), True),  # homomorphic sum
    (
        "SELECT id FROM item WHERE added BETWEEN %s AND %s",
        (dt.date(2024, 1, 10), dt.date(2024, 2, 1)),
        False,
    ),
    ("UPDATE item SET qty = qty + 1 WHERE id = %s", (3,), False),
    ("DELETE FROM item WHERE name = %s AND qty < %s", ("gear", 6), False),
    ("SELECT id, name, qty, price, added FROM item ORDER BY id", (), True),
    ("SELECT count(DISTINCT name), sum(qty) FROM item WHERE price <= %s", (Decimal("50"),), True),
]


def _norm(v: Any) -> Any:
    if isinstance(v, Decimal):
        return ("D", str(v.normalize()))
    return (type(v).__name__, repr(v))


def _result(cur: Any, ordered: bool) -> Any:
    if cur.description is None:
        return ("rowcount", cur.rowcount)
    out = [tuple(_norm(v) for v in r) for r in cur.fetchall()]
    return out if ordered else sorted(out)


def run(
    enc_dsn: str, plain_dsn: str, master_key: str | None = None, peel: str | None = None
) -> dict[str, Any]:
    """Load both databases, run every statement on both, raise AssertionError on a
    difference; return what ran (module location, peel mode, peels logged)."""
    data = rows()
    with (
        psycopg.connect(plain_dsn, autocommit=True) as plain,
        adaptive_client.connect(
            enc_dsn, master_key=master_key, config=CONFIG, peel=peel, autocommit=True
        ) as enc,
    ):
        for conn in (plain, enc):
            conn.execute(DDL)
            conn.cursor().executemany(INSERT, data)
        for sql, params, ordered in STATEMENTS:
            expected = _result(plain.execute(sql, params or None), ordered)
            got = _result(enc.execute(sql, params or None), ordered)
            if expected != got:
                raise AssertionError(f"{sql}: plain {expected!r} != client {got!r}")
        mode = enc.peel_mode
    with psycopg.connect(enc_dsn) as raw:
        peels = raw.execute(
            "SELECT onion, from_layer, to_layer, mode FROM adaptive.peel_log ORDER BY id"
        ).fetchall()
    return {
        "module": adaptive_client.__file__,
        "peel_mode": mode,
        "statements": len(STATEMENTS),
        "peels": [list(p) for p in peels],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--enc-dsn", required=True)
    p.add_argument("--plain-dsn", required=True)
    p.add_argument("--peel", choices=["server", "client", "off"])
    p.add_argument("--expect-mode", choices=["server", "client", "off"])
    args = p.parse_args(argv)
    out = run(args.enc_dsn, args.plain_dsn, os.environ.get("ADAPTIVE_MASTER_KEY"), args.peel)
    print(json.dumps(out))
    if args.expect_mode and out["peel_mode"] != args.expect_mode:
        print(f"peel mode {out['peel_mode']}, expected {args.expect_mode}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
