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

from .driver import (
    CONFIGS,
    ISOLATION,
    PLAIN_STATEMENTS,
    Collected,
    RunSpec,
    collect,
    merge,
    open_connection,
    summarize,
    write_results,
)
from .load import SCALES, expected_rows, load


def _cluster_dsn(dbname: str) -> str:
    from adaptive_client.admin.embedded import EmbeddedCluster

    cluster = EmbeddedCluster.default()
    cluster.up()
    return str(cluster.dsn(dbname))


def key_file() -> Path:
    from adaptive_client.admin.embedded import project_root

    return project_root() / ".pgdata" / "tpcc-master.key"


def master_key() -> str:
    env = os.environ.get("ADAPTIVE_MASTER_KEY")
    if env:
        return env
    f = key_file()
    if not f.exists():
        from adaptive_client.catalog.keys import MasterKey

        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(MasterKey.generate().hex())
        f.chmod(0o600)
    return f.read_text().strip()


def dsn_for(args: argparse.Namespace) -> str:
    return str(args.dsn) if args.dsn else _cluster_dsn(f"tpcc_{args.config}")


def cmd_load(args: argparse.Namespace) -> int:
    from adaptive_client.catalog.install import install

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


def run_with_latency(spec: RunSpec, latency_ms: float, method: str = "auto") -> dict[str, Any]:
    return summarize(collect_with_latency(spec, latency_ms, method))


def collect_with_latency(spec: RunSpec, latency_ms: float, method: str = "auto") -> Collected:
    from netem import emulate

    info = psycopg.conninfo.conninfo_to_dict(spec.dsn)
    host, port = str(info.get("host") or "127.0.0.1"), int(str(info.get("port") or 5432))
    with emulate(host, port, latency_ms, method) as e:
        spec.server_dsn = spec.dsn
        spec.dsn = psycopg.conninfo.make_conninfo(spec.dsn, host=e.host, port=e.port)
        spec.latency_ms, spec.method = latency_ms, e.method
        return collect(spec, log=lambda m: print(m, file=sys.stderr))


def _spec(
    args: argparse.Namespace,
    config: str,
    dsn: str,
    clients: int,
    plain_statements: str | None = None,
    duration: float | None = None,
) -> RunSpec:
    return RunSpec(
        config=config,
        dsn=dsn,
        clients=clients,
        duration=args.duration if duration is None else duration,
        warmup=args.warmup,
        warehouses=args.warehouses,
        isolation=args.isolation,
        master_key=master_key(),
        scale=SCALES[args.scale],
        seed=args.seed,
        prime=not getattr(args, "no_prime", False),
        plain_statements=plain_statements or args.plain_statements,
    )


def cmd_run(args: argparse.Namespace) -> int:
    spec = _spec(args, args.config, dsn_for(args), args.clients)
    result = run_with_latency(spec, args.latency_ms, args.latency_method)
    path = write_results(result, Path(args.out))
    keys = ("config", "clients", "latency_ms", "tpm", "tpmC", "retries", "errors", "peels")
    print(json.dumps({k: result[k] for k in keys}, default=str))
    print(f"results: {path}", file=sys.stderr)
    return 0


def _dbname(dsn: str) -> str:
    return str(psycopg.conninfo.conninfo_to_dict(dsn)["dbname"])


def _recreate(dsn: str, template: str | None = None) -> None:
    """``dsn``'s database dropped and created again, empty or a copy of ``template``'s
    (a DSN too).  A copy is made by copying the files after a checkpoint (PostgreSQL 15's
    default instead writes every page of the copy to the WAL through shared buffers):
    a timed run on the copy starts with no dirty buffers, none of the copy's nor of the
    run before it, left for the checkpointer to write meanwhile."""
    name = _dbname(dsn)
    admin = psycopg.conninfo.make_conninfo(dsn, dbname="postgres")
    with psycopg.connect(admin, autocommit=True) as c:
        c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        if template is None:
            c.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        else:
            strategy = " STRATEGY FILE_COPY" if c.info.server_version >= 150000 else ""
            c.execute(
                sql.SQL("CREATE DATABASE {} TEMPLATE {}" + strategy).format(
                    sql.Identifier(name), sql.Identifier(_dbname(template))
                )
            )


def _exists(dsn: str) -> bool:
    name = _dbname(dsn)
    admin = psycopg.conninfo.make_conninfo(dsn, dbname="postgres")
    with psycopg.connect(admin, autocommit=True) as c:
        return (
            c.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
            is not None
        )


def database_bytes(dsn: str) -> int:
    """On-disk size of a database (tables, indexes, TOAST), measured after VACUUM."""
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("VACUUM ANALYZE")  # settled sizes: visibility maps and statistics built
        row = c.execute("SELECT pg_database_size(current_database())").fetchone()
    return int(row[0]) if row else 0


def _load_into(dsn: str, config: str, warehouses: int, scale: str) -> float:
    """Load ``dsn``'s database under a temporary name, renamed to it once complete: a load
    interrupted half-way never leaves a database a later sweep would take for a template."""
    from adaptive_client.catalog.install import install

    name = _dbname(dsn)
    loading = psycopg.conninfo.make_conninfo(dsn, dbname=f"{name}_loading")
    _recreate(loading)
    if config != "plain":
        with psycopg.connect(loading) as c:
            install(c)
    conn = open_connection(config, loading, master_key(), "read committed")
    t0 = time.perf_counter()
    from rich.progress import Progress

    with Progress(transient=True) as bar:
        task = bar.add_task(f"loading {config}", total=expected_rows(warehouses, SCALES[scale]))
        load(conn, warehouses, SCALES[scale], progress=lambda n: bar.advance(task, n))
    conn.close()
    secs = time.perf_counter() - t0
    admin = psycopg.conninfo.make_conninfo(dsn, dbname="postgres")
    with psycopg.connect(admin, autocommit=True) as c:
        c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        c.execute(
            sql.SQL("ALTER DATABASE {} RENAME TO {}").format(
                sql.Identifier(f"{name}_loading"), sql.Identifier(name)
            )
        )
    return secs


def template_fingerprint(dsn: str) -> dict[str, int]:
    """Each table's row count: a reused template is checked against the one the sweep's
    earlier points ran on (a reload or another run's writes would change it)."""
    with psycopg.connect(dsn, autocommit=True) as c:
        tables = [
            r[0]
            for r in c.execute(
                "SELECT relname FROM pg_class WHERE relkind = 'r' "
                "AND relnamespace = 'public'::regnamespace ORDER BY relname"
            ).fetchall()
        ]
        counts = {}
        for t in tables:
            row = c.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(t))).fetchone()
            counts[t] = int(row[0]) if row else 0
        return counts


# What a point's result must share with the sweep to count as one of its points.
# (plain_statements, rounds, kept_latencies: recorded only where not the default, so
# older sweeps match)
_POINT_KEYS = (
    "duration",
    "warmup",
    "warehouses",
    "scale",
    "plain_statements",
    "rounds",
    "kept_latencies",
)

# the second plain baseline: plain psycopg given the adaptive client's rule of keeping
# prepared statements across rollbacks (driver.PLAIN_STATEMENTS)
KEPT = "plain-kept"


def finished_points(out: Path, meta: dict[str, Any]) -> set[tuple[str, int, float]]:
    """(configuration, clients, latency) of every point already written to ``out`` by a
    sweep with the same settings (a point's JSON is written last, atomically)."""
    from .driver import variant

    done = set()
    for f in out.glob("*-c*-l*.json"):
        try:
            r = json.loads(f.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        settings = r.get("sweep", {})
        if all(settings.get(k) == meta.get(k) for k in _POINT_KEYS):
            done.add((variant(r), int(r["clients"]), float(r["latency_ms"])))
    return done


def _write_meta(out: Path, meta: dict[str, Any]) -> None:
    tmp = out / "sweep.json.tmp"
    tmp.write_text(json.dumps(meta, indent=2))
    tmp.replace(out / "sweep.json")


def schedule(
    configs: list[str],
    clients: list[int],
    latencies: list[float],
    rounds: int,
    kept_latencies: list[float],
    done: set[tuple[str, int, float]],
) -> list[tuple[int, float, list[list[str]]]]:
    """The runs of a sweep: per (clients, latency) point not done yet, its rounds, each
    the point's configurations one after another (plain, then :data:`KEPT` at the
    ``kept_latencies``, encrypted, adaptive).  Interleaved so: a drift of the machine's
    speed over the point's minutes moves its configurations alike, not the ratios."""
    todo = []
    for n in clients:
        for lat in latencies:
            variants = [
                v
                for c in configs
                for v in ([c, KEPT] if c == "plain" and lat in kept_latencies else [c])
            ]
            if all((v, n, lat) in done for v in variants):
                continue
            todo.append((n, lat, [list(variants) for _ in range(rounds)]))
    return todo


def cmd_sweep(args: argparse.Namespace) -> int:
    """Every (clients, latency) point: its configurations in interleaved rounds, each run
    on a fresh copy of its loaded template with the emulated latency; a point's results
    (its rounds merged) are written as soon as its last round ends.  With ``--resume``
    the points already in ``--out`` are skipped, so the study can span several sittings
    (the templates are reused, and checked unchanged)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    console = Console(stderr=True)
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    latencies = [float(x) for x in args.latencies.split(",")]
    clients = [int(x) for x in args.clients.split(",")]
    kept = [float(x) for x in args.kept_latencies.split(",") if x.strip()]
    for config in configs:
        if config not in CONFIGS:
            raise AdaptiveError(f"unknown configuration {config!r}")
    if args.rounds < 1:
        raise AdaptiveError("--rounds must be at least 1")
    if kept and ("plain" not in configs or args.plain_statements == "kept"):
        raise AdaptiveError("--kept-latencies adds a second plain baseline: plain must run")
    out = Path(args.out)
    meta: dict[str, Any] = {
        "configs": configs,
        "latencies": latencies,
        "clients": clients,
        "duration": args.duration,
        "warmup": args.warmup,
        "warehouses": args.warehouses,
        "scale": args.scale,
        "load_seconds": {},
        "database_mb": {},
        "templates": {},
    }
    if args.plain_statements != "psycopg":
        meta["plain_statements"] = args.plain_statements
    if args.rounds != 1:
        meta["rounds"] = args.rounds
    if kept:
        meta["kept_latencies"] = kept
    done: set[tuple[str, int, float]] = set()
    if args.resume and (out / "sweep.json").exists():
        before = json.loads((out / "sweep.json").read_text())
        if any(before.get(k) != meta.get(k) for k in _POINT_KEYS):
            raise AdaptiveError(
                f"{out} holds a sweep with other settings "
                f"({', '.join(f'{k}={before.get(k)}' for k in _POINT_KEYS)}); "
                "use another --out"
            )
        for k in ("load_seconds", "database_mb", "templates", "primed"):
            meta[k] = before.get(k, {})
        done = finished_points(out, meta)
    elif (out / "sweep.json").exists() and finished_points(out, meta):
        raise AdaptiveError(
            f"{out} already holds sweep results: add --resume, or use another --out"
        )
    out.mkdir(parents=True, exist_ok=True)
    _write_meta(out, meta)
    # a point's rounds run its configurations in turn (see schedule), a point at a time,
    # so that a study stopped half-way holds complete ratios
    todo = schedule(configs, clients, latencies, args.rounds, kept, done)
    if done:
        console.print(f"resuming: {len(done)} point(s) done, {len(todo)} to run")
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
    )
    revision = _revision()
    finished = 0
    try:
        templates = {}
        for config in configs:
            if todo:
                templates[config] = _template(args, config, meta, console)
                if config == "adaptive" and args.warmup > 0:
                    templates[config] = _primed(args, templates[config], meta, console)
                _write_meta(out, meta)
        _print_sizes(meta, console)
        runs = sum(len(r) for _n, _lat, rounds in todo for r in rounds)
        with Progress(*columns, console=console) as bar:
            task = bar.add_task("sweep", total=runs)
            for n, lat, rounds in todo:
                parts: dict[str, list[Collected]] = {}
                problems: dict[str, list[str]] = {}
                for round_no, variants in enumerate(rounds, 1):
                    for v in variants:
                        bar.update(
                            task, description=f"{v}, {n} clients, {lat:g} ms, round {round_no}"
                        )
                        parts.setdefault(v, []).append(
                            _run_round(args, templates, v, n, lat, len(rounds))
                        )
                        config = "plain" if v == KEPT else v
                        target = _run_dsn(args, config)
                        problems.setdefault(v, []).extend(_check(config, target))
                        bar.advance(task)
                for v, collected in parts.items():
                    result = summarize(merge(collected))
                    if v == KEPT:
                        result["variant"] = KEPT
                    result["sweep"] = {k: meta.get(k) for k in _POINT_KEYS}
                    result["revision"] = revision
                    result["consistency"] = problems[v]
                    write_results(result, out)
                    per_round = ", ".join(f"{r['tpm']:.0f}" for r in result["rounds"])
                    console.print(
                        f"{v}, {n} clients, {lat:g} ms: tpm {result['tpm']:.0f} "
                        f"(rounds {per_round}), "
                        f"tpmC {result['tpmC']:.0f}, peels {result['peels']}, "
                        f"errors {sum(result['errors'].values())}, "
                        f"{'consistent' if not result['consistency'] else 'INCONSISTENT'}"
                    )
                finished += 1
    except KeyboardInterrupt:
        console.print(
            f"interrupted: {len({(n, lat) for _v, n, lat in done}) + finished} point(s) "
            f"kept in {out}; run the same command with --resume to go on"
        )
        return 130
    print(out)
    return 0


def _run_dsn(args: argparse.Namespace, config: str) -> str:
    # (named after its template: sweeps at other scales never share it)
    return _cluster_dsn(f"tpcc_{config}_{args.scale}_w{args.warehouses}_run")


def _run_round(
    args: argparse.Namespace,
    templates: dict[str, str],
    variant: str,
    clients: int,
    latency: float,
    rounds: int,
) -> Collected:
    """One round of ``variant`` at a point: a fresh copy of its template, run for the
    round's share of the point's measured seconds after the whole warm-up."""
    config = "plain" if variant == KEPT else variant
    target = _run_dsn(args, config)
    _recreate(target, template=templates[config])
    without_autovacuum(target)
    spec = _spec(
        args,
        config,
        target,
        clients,
        plain_statements="kept" if variant == KEPT else None,
        duration=args.duration / rounds,
    )
    return collect_with_latency(spec, latency, args.latency_method)


def without_autovacuum(dsn: str) -> None:
    """No autovacuum of ``dsn``'s tables: a timed run's copy starts from a settled
    template (frozen, analyzed), and whether the launcher's next visit to the copy falls
    inside a round -- to vacuum a stock table three times plain's size for encrypted --
    would otherwise be chance, one round's and one configuration's but not another's."""
    with psycopg.connect(dsn, autocommit=True) as c:
        tables = c.execute(
            "SELECT oid::regclass::text FROM pg_class WHERE relkind = 'r' "
            "AND relnamespace = 'public'::regnamespace"
        ).fetchall()
        for (table,) in tables:
            c.execute(
                f"ALTER TABLE {table} SET (autovacuum_enabled = off, "
                "toast.autovacuum_enabled = off)"
            )


def _print_sizes(meta: dict[str, Any], console: Any) -> None:
    """The templates' sizes, and the primed adaptive one's against plain's."""
    sizes = meta.get("database_mb", {})
    console.print("templates (MB): " + ", ".join(f"{k} {v:g}" for k, v in sizes.items()))
    primed, plain = sizes.get(PRIMED), sizes.get("plain")
    if primed and plain:
        console.print(f"the primed adaptive template is {primed / plain:.2f}x plain's size")


def _revision() -> str:
    """The code a point ran: the checkout's commit (``-modified`` with local changes)."""
    import subprocess

    root = Path(__file__).resolve().parent.parent

    def git(*args: str) -> str:
        run = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
        if run.returncode:
            raise OSError(run.stderr)
        return run.stdout.strip()

    try:
        rev = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except OSError:
        return "unknown"
    return f"{rev}-modified" if dirty else rev


PRIMED = "adaptive primed"  # the primed adaptive template's key in the sweep's sizes
SETTLE_WAIT_MS = 60_000  # (a sweep's own runs are over; another client's may not be)


def settle(dsn: str, compact: bool) -> None:
    """A template made ready to be copied for timed runs, so that no run pays for what
    making the template left behind.  With ``compact``, its tables are rewritten without
    the row versions its writes replaced (``VACUUM FULL``): priming rewrites whole
    columns of the largest tables, and the client's own compaction after each rewrite
    gives way to whatever holds the table -- an autovacuum the rewrite itself set off
    among them -- so a primed template could keep three times its rows' size.  Then
    every row is frozen (a copy's readers have no commit status to look up and no hint
    bits to write, its autovacuum nothing to freeze), the visibility maps are built and
    the planner's statistics gathered, for the onion columns priming added too.

    ``VACUUM FULL`` keeps every row version a transaction running anywhere in the
    cluster may still see: it first waits (at most :data:`SETTLE_WAIT_MS`) for those
    running now to end, as the client's compaction does, with the template's own
    autovacuum switched off and any running one ended (its ANALYZE holds a snapshot)."""
    from adaptive_client.adapt.compaction import older_transactions_ended

    without_autovacuum(dsn)
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND backend_type = 'autovacuum worker'"
        )
        if compact:
            older_transactions_ended(c, SETTLE_WAIT_MS)
            c.execute("VACUUM (FULL, FREEZE)")
        c.execute("VACUUM (FREEZE, ANALYZE)")


def _primed(args: argparse.Namespace, template: str, meta: dict[str, Any], console: Any) -> str:
    """The adaptive template once primed: a copy on which the workload's transactions
    ran until it built and peeled every onion they need (what each run's warm-up would
    otherwise do again, for minutes at full scale), then settled (:func:`settle`).  Every
    adaptive point starts from it, its runs then prime nothing; the copy is made again if
    missing, and checked unchanged by its row counts like the template."""
    from .driver import peel_count, prime

    primed = _cluster_dsn(f"{_dbname(template)}_primed")
    recorded = meta.setdefault("primed", {}).get("fingerprint")
    if recorded is None or not _exists(primed):
        console.print("[bold]priming[/] adaptive: the onions the workload needs, built and peeled")
        _recreate(primed, template=template)
        before, t0 = peel_count(primed), time.perf_counter()
        prime(_spec(args, "adaptive", primed, 1))
        peels, seconds = peel_count(primed) - before, round(time.perf_counter() - t0, 1)
        t0 = time.perf_counter()
        settle(primed, compact=True)
        meta["primed"] = {
            "peels": peels,
            "seconds": seconds,
            "settle_seconds": round(time.perf_counter() - t0, 1),
            "fingerprint": template_fingerprint(primed),
        }
        meta["database_mb"][PRIMED] = round(database_bytes(primed) / 2**20, 1)
    elif template_fingerprint(primed) != recorded:
        raise AdaptiveError(
            "the primed adaptive template changed since the sweep's first points ran on it: "
            "start again in another --out"
        )
    return primed


def _check(config: str, dsn: str) -> list[str]:
    """The specification's consistency conditions on a point's database after its run
    (what ``adaptive-tpcc check`` prints): empty when consistent."""
    from .check import check

    conn = open_connection(config, dsn, master_key(), "repeatable read")
    try:
        return check(conn)
    finally:
        conn.close()


def template_name(config: str, scale: str, warehouses: int) -> str:
    """The database a sweep loads ``config``'s data into at these settings (its runs are
    copies of it; adaptive's of the primed copy, named after it with ``_primed``)."""
    return f"tpcc_{config}_{scale}_w{warehouses}_template"


def _template(args: argparse.Namespace, config: str, meta: dict[str, Any], console: Any) -> str:
    """The loaded template of ``config`` (loaded now if missing or ``--reload``), checked
    against the fingerprint the sweep recorded for it."""
    template = _cluster_dsn(template_name(config, args.scale, args.warehouses))
    recorded = meta["templates"].get(config)
    if args.reload and recorded is not None:
        raise AdaptiveError("--reload would change the database the finished points ran on")
    if args.reload or not _exists(template):
        if recorded is not None:
            raise AdaptiveError(
                f"the {config} template the finished points ran on is gone: "
                "start the sweep again in another --out"
            )
        console.print(f"[bold]loading[/] {config} ({args.warehouses} warehouse(s), {args.scale})")
        meta["load_seconds"][config] = round(
            _load_into(template, config, args.warehouses, args.scale), 1
        )
        settle(template, compact=False)
    fingerprint = template_fingerprint(template)
    if recorded is not None and recorded != fingerprint:
        raise AdaptiveError(
            f"the {config} template changed since the sweep's first points ran on it "
            f"(row counts {recorded} then, {fingerprint} now): start again in another --out"
        )
    meta["templates"][config] = fingerprint
    meta["database_mb"][config] = round(database_bytes(template) / 2**20, 1)
    return template


def cmd_report(args: argparse.Namespace) -> int:
    from .report import write_report

    path = write_report(Path(args.results))
    print(path)
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    problems = _check(args.config, dsn_for(args))
    for p in problems:
        print(p)
    print("consistent" if not problems else f"{len(problems)} violations")
    return 0 if not problems else 1


def plain_statements_option(sp: argparse.ArgumentParser) -> None:
    sp.add_argument(
        "--plain-statements",
        choices=PLAIN_STATEMENTS,
        default="psycopg",
        help="plain's prepared statements: psycopg's rule (dropped at every rollback) or "
        "kept across rollbacks as the adaptive client keeps them",
    )


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
    sp.add_argument("--latency-ms", type=float, default=0.0, help="emulated round trip, ms")
    sp.add_argument("--latency-method", choices=["auto", "netem", "proxy"], default="auto")
    sp.add_argument(
        "--no-prime",
        action="store_true",
        help="adaptive: do not drive the peels before measuring (with --warmup 0, every "
        "peel happens in the measured interval)",
    )
    plain_statements_option(sp)
    sp.set_defaults(fn=cmd_run)
    sp = sub.add_parser("sweep", help="every configuration x clients x latency")
    sp.add_argument("--configs", default="plain,encrypted,adaptive")
    sp.add_argument("--latencies", default="0,30,60,90,120", help="round trips in ms")
    sp.add_argument("--clients", default="5,20")
    sp.add_argument("--duration", type=float, default=60.0)
    sp.add_argument("--warmup", type=float, default=10.0)
    sp.add_argument("--warehouses", type=int, default=1)
    sp.add_argument("--scale", choices=sorted(SCALES), default="full")
    sp.add_argument("--isolation", choices=sorted(ISOLATION), default="repeatable read")
    sp.add_argument("--seed", type=int, default=1)
    sp.add_argument("--latency-method", choices=["auto", "netem", "proxy"], default="auto")
    plain_statements_option(sp)
    sp.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="per point, run the configurations in turn this many times, each run a "
        "fresh copy measured for --duration / rounds seconds after the whole --warmup",
    )
    sp.add_argument(
        "--kept-latencies",
        default="",
        help="latencies at which plain runs a second time, with the statement rule kept "
        "(the baseline plain-kept, beside plain in each round)",
    )
    sp.add_argument("--reload", action="store_true", help="reload the templates")
    sp.add_argument(
        "--resume",
        action="store_true",
        help="skip the points already in --out (same settings), reusing the loaded templates",
    )
    sp.add_argument("--out", default=f"results/sweep-{time.strftime('%Y%m%d-%H%M%S')}")
    sp.set_defaults(fn=cmd_sweep)
    sp = sub.add_parser("report", help="plots and tables from a results folder")
    sp.add_argument("results")
    sp.set_defaults(fn=cmd_report)
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
