"""``adaptive-tpcc``: load, run and check TPC-C on plain, encrypted and adaptive databases."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from adaptive_client.errors import AdaptiveError

from .driver import CONFIGS, ISOLATION, RunSpec, open_connection, run, write_results
from .load import SCALES, expected_rows, load


def _cluster_dsn(dbname: str) -> str:
    from adaptive_client.embedded import EmbeddedCluster

    cluster = EmbeddedCluster.default()
    cluster.up()
    return str(cluster.dsn(dbname))


def key_file() -> Path:
    from adaptive_client.embedded import project_root

    return project_root() / ".pgdata" / "tpcc-master.key"


def master_key() -> str:
    env = os.environ.get("ADAPTIVE_MASTER_KEY")
    if env:
        return env
    f = key_file()
    if not f.exists():
        from adaptive_client.keys import MasterKey

        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(MasterKey.generate().hex())
        f.chmod(0o600)
    return f.read_text().strip()


def dsn_for(args: argparse.Namespace) -> str:
    return str(args.dsn) if args.dsn else _cluster_dsn(f"tpcc_{args.config}")


def cmd_load(args: argparse.Namespace) -> int:
    from adaptive_client.install import install

    dsn = dsn_for(args)
    info = psycopg.conninfo.conninfo_to_dict(dsn)
    admin = psycopg.conninfo.make_conninfo(dsn, dbname="postgres")
    with psycopg.connect(admin, autocommit=True) as c:
        c.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                sql.Identifier(str(info["dbname"]))
            )
        )
        c.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(str(info["dbname"]))))
    if args.config != "plain":
        with psycopg.connect(dsn) as c:
            install(c)
    scale = SCALES[args.scale]
    conn = open_connection(args.config, dsn, master_key(), "read committed")
    total = expected_rows(args.warehouses, scale)
    t0 = time.perf_counter()
    from rich.progress import Progress

    with Progress(transient=not sys.stdout.isatty()) as bar:
        task = bar.add_task(f"loading {args.config}", total=total)
        load(conn, args.warehouses, scale, progress=lambda n: bar.advance(task, n))
    conn.close()
    secs = time.perf_counter() - t0
    print(
        json.dumps(
            {
                "config": args.config,
                "warehouses": args.warehouses,
                "scale": args.scale,
                "rows": total,
                "load_seconds": round(secs, 1),
            }
        )
    )
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    spec = RunSpec(
        config=args.config,
        dsn=dsn_for(args),
        clients=args.clients,
        duration=args.duration,
        warmup=args.warmup,
        warehouses=args.warehouses,
        isolation=args.isolation,
        master_key=master_key(),
        scale=SCALES[args.scale],
        seed=args.seed,
    )
    result = run(spec, log=lambda m: print(m, file=sys.stderr))
    path = write_results(result, Path(args.out))
    print(
        json.dumps(
            {
                k: result[k]
                for k in ("config", "clients", "tpm", "tpmC", "retries", "errors", "peels")
            },
            default=str,
        )
    )
    print(f"results: {path}", file=sys.stderr)
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from .check import check

    conn = open_connection(args.config, dsn_for(args), master_key(), "repeatable read")
    problems = check(conn)
    conn.close()
    for p in problems:
        print(p)
    print("consistent" if not problems else f"{len(problems)} violations")
    return 0 if not problems else 1


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="adaptive-tpcc", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    def common(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--config", choices=CONFIGS, required=True)
        sp.add_argument("--dsn", help="database (default: tpcc_<config> on the embedded cluster)")
        sp.add_argument("--warehouses", type=int, default=1)
        sp.add_argument(
            "--scale",
            choices=sorted(SCALES),
            default="full",
            help="cardinalities: full (the specification's) or smaller ones for tests",
        )

    sp = sub.add_parser("load", help="create and load a TPC-C database")
    common(sp)
    sp.set_defaults(fn=cmd_load)
    sp = sub.add_parser("run", help="run the transaction mix")
    common(sp)
    sp.add_argument("--clients", type=int, default=5)
    sp.add_argument("--duration", type=float, default=60.0, help="measured seconds")
    sp.add_argument("--warmup", type=float, default=10.0, help="seconds before measuring")
    sp.add_argument("--isolation", choices=sorted(ISOLATION), default="repeatable read")
    sp.add_argument("--seed", type=int, default=1)
    sp.add_argument("--out", default="results", help="results folder")
    sp.set_defaults(fn=cmd_run)
    sp = sub.add_parser("check", help="consistency conditions 1-4")
    common(sp)
    sp.set_defaults(fn=cmd_check)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.fn(args))
    except (AdaptiveError, psycopg.Error) as exc:
        print(f"adaptive-tpcc: {exc}", file=sys.stderr)
        return 1


_ = Any

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
