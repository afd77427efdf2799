"""The 22 TPC-H queries on a plain and an encrypted database, side by side in one run.

    python bench/tpch.py --sf 0.1 [--dsn DSN] [--runs 3] [--data DIR] [--reuse]

Both databases are loaded from the same ``tpchgen-cli`` data (plain by psycopg's COPY,
encrypted by the client's ``cursor.copy()`` with the harness's onion configuration,
tpch/harness.py).  Each query runs once on the encrypted database before timing: the
peels its operators need happen there, as an adaptive database's warm-up would do them;
then both databases are compacted (``VACUUM FULL ANALYZE``: each peel rewrote its table).
Then each query runs ``--runs`` times on each database, alternating, and the best time
of each is kept; every encrypted answer is compared with the plain one.

The table gives per query the plain and encrypted times, their ratio, and the rows and
bytes the split execution shipped to the client; its last line is the median ratio.
``--reuse`` keeps the databases (``bench_tpch_sf<N>_plain`` / ``_enc``, the master key
in the data directory) and skips the load when they are there.

``--layers-from 0.1`` loads the encrypted database with every onion starting at the
layer it has in the warmed-up SF 0.1 database of an earlier run (the queries peel the
same onions at any scale): the same database the warm-up would leave, without its
peels -- at SF 1 each peel of a lineitem onion rewrites 6 million rows (minutes)::

    python bench/tpch.py --sf 0.1 --reuse --data DIR          # once: the warmed SF 0.1
    python bench/tpch.py --sf 1 --layers-from 0.1 --data DIR
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import sys
import time
from pathlib import Path
from typing import Any

# this script's own directory first on sys.path would make ``tpch`` this file
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

import psycopg  # noqa: E402
from psycopg.conninfo import make_conninfo  # noqa: E402

from adaptive_client.admin.embedded import EmbeddedCluster  # noqa: E402
from adaptive_client.catalog.install import install  # noqa: E402
from tpch import harness  # noqa: E402
from tpch.queries import NUMBERS  # noqa: E402


def _exists(admin: str, name: str) -> bool:
    with psycopg.connect(admin, autocommit=True) as c:
        return (
            c.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
            is not None
        )


def _scratch(admin: str, name: str, install_schema: bool) -> str:
    with psycopg.connect(admin, autocommit=True) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        c.execute(f"CREATE DATABASE \"{name}\" TEMPLATE template0 LOCALE 'C' ENCODING 'UTF8'")
    dsn = make_conninfo(admin, dbname=name)
    if install_schema:
        with psycopg.connect(dsn) as c:
            install(c)
    return dsn


def _names(admin: str, scale: float, data: Path) -> tuple[str, str, Path]:
    tag = f"{scale:g}".replace(".", "_")
    return f"bench_tpch_sf{tag}_plain", f"bench_tpch_sf{tag}_enc", data / f"sf{scale:g}.master-key"


def warmed(admin: str, scale: float, data: Path) -> dict[str, Any]:
    """The onion configuration starting at the layers of the warmed-up encrypted
    database of ``scale`` (an earlier run of this script, its key in ``data``)."""
    plain_name, enc_name, key_file = _names(admin, scale, data)
    if not (key_file.exists() and _exists(admin, enc_name)):
        sys.exit(f"no warmed-up database of SF {scale:g} with its key in {data}")
    dbs = harness.Databases(
        make_conninfo(admin, dbname=plain_name),
        make_conninfo(admin, dbname=enc_name),
        key_file.read_text().strip(),
        scale,
    )
    with dbs.connect_encrypted() as conn:
        return harness.warmed_config(conn)


def _peels(dsn: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as c:
        row = c.execute("SELECT count(*) FROM adaptive.peel_log").fetchone()
    return int(row[0]) if row else 0


def databases(
    admin: str, scale: float, data: Path, reuse: bool, config: dict[str, Any] | None = None
) -> harness.Databases:
    plain_name, enc_name, key_file = _names(admin, scale, data)
    if reuse and key_file.exists() and _exists(admin, plain_name) and _exists(admin, enc_name):
        return harness.Databases(
            make_conninfo(admin, dbname=plain_name),
            make_conninfo(admin, dbname=enc_name),
            key_file.read_text().strip(),
            scale,
        )
    key = secrets.token_hex(32)
    data.mkdir(parents=True, exist_ok=True)
    key_file.write_text(key)
    key_file.chmod(0o600)
    return harness.build(
        _scratch(admin, plain_name, False),
        _scratch(admin, enc_name, True),
        key,
        scale,
        data,
        progress=lambda m: print(m, file=sys.stderr, flush=True),
        config=config,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sf", type=float, default=0.1, help="scale factor")
    ap.add_argument("--dsn", default=None, help="maintenance DSN (default: embedded cluster)")
    ap.add_argument("--runs", type=int, default=3, help="timed runs per query and database")
    ap.add_argument("--data", type=Path, default=Path("results/tpch-data"))
    ap.add_argument("--reuse", action="store_true", help="keep and reuse the databases")
    ap.add_argument("--queries", default="", help="comma-separated numbers (default: all)")
    ap.add_argument(
        "--layers-from",
        type=float,
        default=None,
        metavar="SF",
        help="load the encrypted database at the layers the warmed-up database of this "
        "scale factor reached (its key in --layers-data), instead of peeling in the warm-up",
    )
    ap.add_argument("--layers-data", type=Path, default=None, help="default: --data")
    ap.add_argument(
        "--default-config",
        action="store_true",
        help="load the encrypted database with the default onion configuration (no "
        "designer's proposals: every adaptation happens online, in the first runs)",
    )
    args = ap.parse_args()
    admin = args.dsn or EmbeddedCluster.default().dsn("postgres")
    numbers = [int(q) for q in args.queries.split(",") if q] or list(NUMBERS)

    t0 = time.perf_counter()
    config = None
    if args.layers_from is not None:
        config = warmed(admin, args.layers_from, args.layers_data or args.data)
    elif args.default_config:
        config = {}
    dbs = databases(admin, args.sf, args.data, args.reuse, config)
    if dbs.load_seconds:
        print(
            f"load: plain {dbs.load_seconds['plain']:.1f} s, "
            f"encrypted {dbs.load_seconds['encrypted']:.1f} s",
            flush=True,
        )
    plain, enc = dbs.connect_plain(), dbs.connect_encrypted()
    peels_before = _peels(dbs.encrypted)
    warm = time.perf_counter()
    first_run: dict[int, float] = {}
    for n in numbers:  # the adaptations each query needs, before anything is timed
        first_run[n] = harness.run(enc, n, args.sf).seconds
    print(f"warm-up (peels): {time.perf_counter() - warm:.1f} s", flush=True)
    # a peel rewrites every row of its table: after the warm-up's peels the encrypted
    # tables hold that many dead versions, which every later scan would read; the DBA
    # compacts them as after any full-table rewrite (the plain ones get the same pass)
    vac = time.perf_counter()
    peeled = _peels(dbs.encrypted) > peels_before
    for dsn in (dbs.plain, dbs.encrypted):
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("VACUUM (FULL, ANALYZE)" if peeled else "ANALYZE")
    done = "VACUUM FULL ANALYZE after the peels" if peeled else "ANALYZE (no peel)"
    print(f"{done}: {time.perf_counter() - vac:.1f} s", flush=True)

    print(f"TPC-H SF {args.sf:g}, best of {args.runs} runs")
    print(
        f"{'query':>5} {'plain ms':>10} {'enc ms':>10} {'ratio':>7} {'rows shipped':>13} "
        f"{'MB':>8} {'first run s':>12}"
    )
    ratios = []
    wrong = []
    for n in numbers:
        best_plain = best_enc = float("inf")
        shipped_rows = shipped_bytes = 0
        for _ in range(args.runs):
            expected = harness.run(plain, n, args.sf)
            got = harness.run(enc, n, args.sf)
            best_plain, best_enc = min(best_plain, expected.seconds), min(best_enc, got.seconds)
            shipped_rows, shipped_bytes = got.shipped_rows, got.shipped_bytes
            if got.rows != expected.rows or got.columns != expected.columns:
                wrong.append(n)
        ratio = best_enc / best_plain
        ratios.append(ratio)
        print(
            f"{'Q' + str(n):>5} {best_plain * 1000:10.1f} {best_enc * 1000:10.1f} {ratio:7.2f} "
            f"{shipped_rows:13d} {shipped_bytes / 1e6:8.2f} {first_run[n]:12.2f}",
            flush=True,
        )
    plain.close()
    enc.close()
    if wrong:
        print(f"ANSWERS DIFFER from plain: {sorted(set(wrong))}")
    print(f"total {time.perf_counter() - t0:.0f} s; worst ratio {max(ratios):.2f}")
    print(f"median ratio (encrypted / plain): {statistics.median(ratios):.2f}")
    if wrong:
        sys.exit(1)


if __name__ == "__main__":
    main()
