"""``adaptive-db``: the DBA's commands, and the embedded cluster for tests and benchmarks.

The database is named as libpq names it: ``--dsn`` (a conninfo or URI), else the
standard ``PG*`` environment variables and service files (``PGHOST``, ``PGDATABASE``,
``PGSERVICE``...), exactly as ``psql`` reads them; ``--embedded`` picks the embedded
cluster's database instead.  The master key: ``--master-key-file``, else
``ADAPTIVE_MASTER_KEY`` (hex) or ``ADAPTIVE_MASTER_KEY_FILE``; ``adaptive-db keygen``
makes one.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from ..catalog.keys import (
    KEY_BYTES,
    MASTER_KEY_ENV,
    MASTER_KEY_FILE_ENV,
    MasterKey,
    load_master_key,
)
from ..errors import AdaptiveError, ConfigError, MasterKeyMissing
from ..syntax.names import as_written, shown

DESCRIPTION = "Adaptive encryption for PostgreSQL: the DBA's commands and the embedded cluster."
EPILOG = (
    "The database: --dsn, else libpq's PG* environment variables and service files "
    "(as psql), or --embedded for the embedded cluster.  The master key: "
    f"--master-key-file, else {MASTER_KEY_ENV} (64 hex digits) or {MASTER_KEY_FILE_ENV}."
)


def _cluster() -> Any:
    from .embedded import EmbeddedCluster

    return EmbeddedCluster.default()


def _dsn(args: argparse.Namespace) -> str:
    """``--dsn`` if given; with ``--embedded`` the embedded cluster's database (which must
    be running); else the empty conninfo, which libpq completes from the ``PG*``
    environment variables and service files."""
    if getattr(args, "dsn", None):
        return str(args.dsn)
    if not getattr(args, "embedded", False):
        return ""
    cluster = _cluster()
    if not cluster.initialized():
        raise AdaptiveError(
            "no --dsn given and the embedded cluster does not exist: run `adaptive-db up`"
        )
    if not cluster.running():
        raise AdaptiveError(
            "no --dsn given and the embedded cluster is stopped: run `adaptive-db up`"
        )
    return str(cluster.dsn())


def _redacted(dsn: str) -> str:
    """The conninfo without its password, for messages."""
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "<invalid conninfo>"
    if "password" in params:
        params["password"] = "***"
    return make_conninfo("", **params)


def _connect(dsn: str, autocommit: bool = True) -> psycopg.Connection[Any]:
    try:
        return psycopg.connect(dsn, autocommit=autocommit, connect_timeout=10)
    except psycopg.Error as exc:
        where = repr(_redacted(dsn)) if dsn else "the database libpq's PG* settings name"
        raise AdaptiveError(
            f"cannot connect to {where}: {str(exc).strip()} "
            "(name the database with --dsn, the PG* environment variables, or --embedded)"
        ) from None


def cmd_up(args: argparse.Namespace) -> int:
    from ..catalog.install import install

    cluster = _cluster()
    dsn = cluster.up()
    with _connect(dsn) as conn:
        install(conn)
    print(dsn)
    if args.standbys is not None:
        for standby_dsn in cluster.up_standbys(args.standbys):
            print(standby_dsn)
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    stopped = _cluster().down()
    print("stopped" if stopped else "not running")
    return 0


def cmd_dsn(args: argparse.Namespace) -> int:
    cluster = _cluster()
    if not cluster.initialized():
        raise AdaptiveError("the embedded cluster does not exist yet: run `adaptive-db up`")
    print(cluster.dsn())
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    cluster = _cluster()
    state = "running" if cluster.running() else ("stopped" if cluster.initialized() else "absent")
    print(f"embedded cluster: {state} ({cluster.datadir}, port {cluster.port})")
    for standby in cluster.standbys():
        running = standby.running()
        replay = ""
        if running:
            try:
                in_recovery, lsn = standby.replay_position()
                replay = f", replayed to {lsn}" if in_recovery else ", promoted (not a standby)"
            except Exception as exc:  # (status reports; it does not fail on one server)
                replay = f", not answering: {str(exc).strip()}"
        print(
            f"  standby {standby.number}: {'running' if running else 'stopped'} "
            f"(port {standby.port}{replay})"
        )
    return 0 if state == "running" else 3


def cmd_init(args: argparse.Namespace) -> int:
    from ..catalog.install import install_database

    with _connect(_dsn(args)) as conn:
        report = install_database(conn, peel=args.peel)
    print(f"installed: {', '.join(report.scripts)}")
    print(report.summary())
    return 0


def _master(args: argparse.Namespace) -> MasterKey:
    try:
        return load_master_key(args.master_key_file or None)
    except MasterKeyMissing:
        raise MasterKeyMissing(
            f"no master key: use --master-key-file FILE, or set {MASTER_KEY_ENV} (64 hex "
            f"digits) or {MASTER_KEY_FILE_ENV} (make one with `adaptive-db keygen FILE`)"
        ) from None


def cmd_keygen(args: argparse.Namespace) -> int:
    """A new random master key, written to a new file readable by its owner only."""
    key = secrets.token_bytes(KEY_BYTES)
    try:
        fd = os.open(args.file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise ConfigError(f"{args.file} exists: a key file is never overwritten") from None
    except OSError as exc:
        raise ConfigError(f"cannot create {args.file}: {exc.strerror}") from None
    with os.fdopen(fd, "w") as out:
        out.write(key.hex() + "\n")
    print(
        f"wrote a new master key to {args.file} (mode 0600).  Keep a copy somewhere safe: "
        "without it the encrypted data cannot be read, by anyone."
    )
    return 0


def cmd_layers(args: argparse.Namespace) -> int:
    from ..catalog.metadata import Catalog
    from .controls import (
        audit_log,
        column_summary,
        design_report,
        foreign_key_report,
        layers_report,
        precomputed_report,
    )

    with _connect(_dsn(args)) as conn:
        master = _master(args)
        rows = layers_report(conn, master)
        catalog = Catalog.open(conn, master)
        fks = foreign_key_report(catalog)
        computed = precomputed_report(catalog)
        designed = design_report(catalog)
        log = audit_log(conn, master, args.log) if args.log else []
    if args.json:
        print(
            json.dumps(
                as_written(
                    {
                        "onions": [vars(r) for r in rows],
                        "columns": [
                            {"column": c, "most_revealing": o, "provider_learns": learns}
                            for c, o, learns in column_summary(rows)
                        ],
                        "foreign_keys": [
                            {"name": n, "columns": c, "references": r, "provider_learns": learns}
                            for n, c, r, learns in fks
                        ],
                        "precomputed": [vars(p) for p in computed],
                        "designed": [vars(d) for d in designed],
                        "peels": [vars(p) for p in log],
                    }
                ),
                default=str,
                indent=2,
            )
        )
        return 0
    headers = ["table", "column", "type", "onion", "stored as", "layer", "floor", "provider learns"]
    table = [
        [r.table, r.column, r.type, r.onion, r.stored_as, r.layer, r.floor, r.provider_learns]
        for r in rows
    ]
    _print_table(headers, table)
    if fks:
        print("\nforeign keys (each an implied join group, enforced on DET ciphertexts):")
        _print_table(
            ["constraint", "columns", "references", "provider learns"], [list(f) for f in fks]
        )
    if computed:
        print("\nprecomputed onions (the client computes each from the row on every write):")
        _print_table(
            ["table", "name", "expression", "onion", "layer", "provider learns"],
            [
                [p.table, p.name, p.expression, p.onion, p.layer, p.provider_learns]
                for p in computed
            ],
        )
    if designed:
        print(
            "\nbuilt by the online design, in the order statements asked (bytes per row "
            "against each table's design_budget):"
        )
        _print_table(
            ["table", "#", "what", "stored as", "bytes/row", "table total"],
            [
                [d.table, str(d.order), d.what, d.column, str(d.bytes_per_row), str(d.table_total)]
                for d in designed
            ],
        )
    print("\nper column, from all its onions together:")
    _print_table(
        ["column", "most revealing onion", "provider learns"],
        [list(c) for c in column_summary(rows)],
    )
    if log:
        print("\npeel audit log (newest first):")
        _print_table(
            [
                "when",
                "by",
                "from host",
                "application",
                "column",
                "onion",
                "from",
                "to",
                "mode",
                "rows",
                "ms",
            ],
            [
                [
                    str(x)
                    for x in (
                        p.at,
                        p.by_user,
                        p.client_addr,
                        p.application,
                        p.column,
                        p.onion,
                        p.from_layer,
                        p.to_layer,
                        p.mode,
                        p.rows,
                        p.duration_ms,
                    )
                ]
                for p in log
            ],
        )
    return 0


def cmd_peel(args: argparse.Namespace) -> int:
    from ..catalog.install import resolve_peel_mode
    from .controls import peel_column

    with _connect(_dsn(args)) as conn:
        mode = resolve_peel_mode(conn, args.mode)
        if mode == "off":  # the database's default; a DBA's explicit peel still runs
            mode = "client"
        rows = peel_column(
            conn, _master(args), args.table, args.column, args.onion, args.layer, mode
        )
    print(
        f"{args.table}.{args.column} {args.onion}: peeled to {args.layer.upper()} ({rows} rows)"
        if rows > 0
        else "nothing to do"
    )
    return 0


def cmd_rotate_master_key(args: argparse.Namespace) -> int:
    from .controls import rotate_master_key

    new = load_master_key(args.new_key_file)
    with _connect(_dsn(args), autocommit=True) as conn:
        rotate_master_key(conn, _master(args), new)
    print("master key rotated: every key re-wrapped; the old key is refused from now on")
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    from .migrate import migrate

    with _connect(_dsn(args), autocommit=True) as conn:
        report = migrate(conn, _master(args))
    print(report.summary())
    return 0


def _print_table(headers: list[str], rows: list[list[str]]) -> None:
    rows = [[shown(c) for c in r] for r in rows]  # (names as written: syntax/names.py)
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="adaptive-db", description=DESCRIPTION, epilog=EPILOG)
    sub = p.add_subparsers(dest="command", required=True)

    def add(
        name: str, fn: Any, help_: str, dsn: bool = False, key: bool = False
    ) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help_)
        sp.set_defaults(fn=fn)
        if dsn:
            where = sp.add_mutually_exclusive_group()
            where.add_argument(
                "--dsn", help="libpq conninfo or URI (default: libpq's PG* variables)"
            )
            where.add_argument(
                "--embedded", action="store_true", help="the embedded cluster's database"
            )
        if key:
            sp.add_argument(
                "--master-key-file",
                help="file holding the hex master key "
                "(default: ADAPTIVE_MASTER_KEY / ADAPTIVE_MASTER_KEY_FILE)",
            )
        return sp

    sp = add("keygen", cmd_keygen, "write a new random master key to a new file (mode 0600)")
    sp.add_argument("file", help="the key file to create (never overwritten)")
    sp = add("up", cmd_up, "start (creating on first use) the embedded cluster; print its DSN")
    sp.add_argument(
        "--standbys",
        type=int,
        metavar="N",
        help="also start N streaming standbys (ports after the primary's), printing their "
        "DSNs; further ones are stopped",
    )
    add("down", cmd_down, "stop the embedded cluster and its standbys")
    add("dsn", cmd_dsn, "print the embedded cluster's conninfo")
    add("status", cmd_status, "is the embedded cluster running? (and its standbys)")
    sp = add("init", cmd_init, "install the metadata schema and stored procedures", dsn=True)
    sp.add_argument(
        "--peel",
        choices=["server", "client", "off"],
        help="record the database's default peel mode (default: server where this role may "
        "create the PL/Python peel functions, else client; an earlier choice is kept)",
    )
    sp = add(
        "layers", cmd_layers, "each column's onions, layers, floors and leakage", dsn=True, key=True
    )
    sp.add_argument("--log", type=int, default=20, help="also show the last N peels (0: none)")
    sp.add_argument("--json", action="store_true", help="machine-readable output")
    sp = add(
        "peel", cmd_peel, "peel one onion down to a layer (floors enforced)", dsn=True, key=True
    )
    sp.add_argument("table")
    sp.add_argument("column")
    sp.add_argument("onion", help="Eq or Ord")
    sp.add_argument("layer", help="DET, or OPE (ORE for an Ord onion at ORE)")
    sp.add_argument(
        "--mode",
        choices=["server", "client"],
        help="where the layer is stripped (default: the database's recorded peel mode)",
    )
    sp = add(
        "rotate-master-key",
        cmd_rotate_master_key,
        "re-wrap every key under a new master key",
        dsn=True,
        key=True,
    )
    sp.add_argument("--new-key-file", required=True, help="file holding the new hex master key")
    add(
        "migrate",
        cmd_migrate,
        "bring an earlier version's database to this one: RND format, range indexes (atomic)",
        dsn=True,
        key=True,
    )
    sp = add(
        "advise",
        cmd_advise,
        "propose an onion configuration (onions, precomputed expressions) from a statement log",
    )
    sp.add_argument("--schema", required=True, help="the application's CREATE TABLE statements")
    sp.add_argument(
        "--log",
        required=True,
        action="append",
        help="a statement log (connect(statement_log=...)) or a .sql file; repeatable",
    )
    sp.add_argument(
        "--no-sum",
        action="store_true",
        help="propose no Sum onion: every sum is then computed by the client",
    )
    return p


def cmd_advise(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..dbapi.statement_log import read_statements
    from .advise import advise, read_schema, render

    try:
        schema_text = Path(args.schema).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {args.schema}: {exc.strerror}") from None
    tables = read_schema(schema_text)
    statements = [s for path in args.log for s in read_statements(path)]
    proposal = advise(tables, statements, sums=not args.no_sum)
    print(render(tables, proposal, len(statements)), end="")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``adaptive-db`` command; the exit status (errors: a message, status 1)."""
    args = build_parser().parse_args(None if argv is None else list(argv))
    try:
        return int(args.fn(args))
    except AdaptiveError as exc:
        print(f"adaptive-db: {exc}", file=sys.stderr)
        return 1
    except psycopg.Error as exc:
        print(f"adaptive-db: database error: {str(exc).strip()}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("adaptive-db: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
