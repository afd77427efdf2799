"""The embedded PostgreSQL cluster kept under the project directory.

``adaptive-db up`` creates it on first use (``initdb`` with C collation and UTF-8, so
string order is byte order, the order the client reproduces when it finishes a sort),
starts it on its own port and socket directory, and creates the extensions the project
needs (``plpython3u`` and ``pgcrypto``) in its database.  PostgreSQL refuses to run as
root, so when we are root the server runs as the unprivileged ``postgres`` OS user.

``adaptive-db up --standbys N`` adds N streaming standbys beside it, for tests and
benchmarks of read replicas: each a ``pg_basebackup -R`` copy on the next port
(``port + 1`` ...), replicating through a physical slot of its own, hot standby (it
answers reads).  initdb's defaults already allow it (``wal_level = replica``, WAL senders,
slots, and replication connections from loopback under trust), so the primary's
configuration is not changed.  ``down`` stops the standbys first.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import pwd
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import AdaptiveError

DEFAULT_PORT = 54329
DEFAULT_DBNAME = "adaptive"
SERVER_USER = "postgres"


class EmbeddedDbError(AdaptiveError):
    """The embedded cluster cannot be created, started or stopped."""


def project_root() -> Path:
    """The directory holding the cluster: ``ADAPTIVE_HOME``, else the checkout root."""
    env = os.environ.get("ADAPTIVE_HOME")
    if env:
        return Path(env).resolve()
    here = Path(__file__).resolve().parents[2]  # (adaptive_client/admin/embedded.py)
    if (here / "pyproject.toml").exists():
        return here
    return Path.cwd()


def _reachable_by_server_user(path: Path) -> bool:
    """Can the unprivileged server user traverse every directory down to ``path``?"""
    try:
        pw = pwd.getpwnam(SERVER_USER)
    except KeyError:
        return True  # reported later, when the cluster is created
    current = Path(path).resolve()
    for directory in [current, *current.parents]:
        try:
            st = directory.stat()
        except OSError:
            return False
        if st.st_uid == pw.pw_uid:
            ok = bool(st.st_mode & 0o100)
        elif st.st_gid == pw.pw_gid:
            ok = bool(st.st_mode & 0o010)
        else:
            ok = bool(st.st_mode & 0o001)
        if not ok:
            return False
    return True


def find_bindir() -> Path:
    """Locate the PostgreSQL server binaries (``ADAPTIVE_PG_BINDIR`` overrides)."""
    env = os.environ.get("ADAPTIVE_PG_BINDIR")
    candidates: list[Path] = [Path(env)] if env else []
    versions = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"),
        key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit() else 0,
        reverse=True,
    )
    candidates += [Path(p) for p in versions]
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    for c in candidates:
        if (c / "pg_ctl").exists() and (c / "initdb").exists() and (c / "postgres").exists():
            return c
    raise EmbeddedDbError(
        "PostgreSQL server binaries not found (looked for initdb/pg_ctl/postgres under "
        "/usr/lib/postgresql/*/bin and on PATH). Install PostgreSQL 15 "
        "(Debian: apt-get install postgresql-15 postgresql-plpython3-15 postgresql-contrib) "
        "or set ADAPTIVE_PG_BINDIR."
    )


def port_free(port: int) -> bool:
    """Whether a server could listen on ``port`` on loopback now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_ports(starts: tuple[int, ...], width: int, wait: float = 90.0) -> int:
    """The first of ``starts`` from which ``width`` ports are all free on loopback, waited
    for up to ``wait`` seconds.  (Ports in the range the kernel hands to clients' sockets
    can be held a while by a closed connection, in TIME_WAIT.)"""
    deadline = time.monotonic() + wait
    while True:
        for start in starts:
            if all(port_free(p) for p in range(start, start + width)):
                return start
        if time.monotonic() > deadline:
            raise EmbeddedDbError(f"no {width} free ports on 127.0.0.1 from any of {starts}")
        time.sleep(1)


# Stops every server whose data lies under a directory, and removes the directory, once
# the process that started them is gone (killed, or hung and killed): a finalizer that
# runs even when the process's own do not.
_WATCHDOG = r"""
import os, shutil, subprocess, sys, time
parent, runuser, pg_ctl, root = sys.argv[1:]
while True:
    try:
        os.kill(int(parent), 0)
    except OSError:
        break
    time.sleep(1)
for where, _, files in os.walk(root):
    if "postmaster.pid" in files:
        argv = [pg_ctl, "stop", "-m", "immediate", "-D", where]
        subprocess.run(([runuser, "-u", "postgres", "--"] if runuser else []) + argv,
                       capture_output=True, timeout=60)
shutil.rmtree(root, ignore_errors=True)
"""


def watchdog(root: Path) -> subprocess.Popen[bytes]:
    """A detached process that, once this one is gone, stops the servers whose data lie
    under ``root`` (clusters of a test's or a benchmark's own) and removes ``root``.
    Kill it when they were stopped in the ordinary way."""
    runuser = shutil.which("runuser") if os.geteuid() == 0 else None
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            _WATCHDOG,
            str(os.getpid()),
            runuser or "",
            str(find_bindir() / "pg_ctl"),
            str(root),
        ],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


@dataclass
class EmbeddedCluster:
    root: Path
    port: int = DEFAULT_PORT
    dbname: str = DEFAULT_DBNAME

    @classmethod
    def default(cls) -> EmbeddedCluster:
        port = int(os.environ.get("ADAPTIVE_DB_PORT", DEFAULT_PORT))
        return cls(project_root(), port=port)

    # -- paths ---------------------------------------------------------------------------
    @property
    def base(self) -> Path:
        """``.pgdata`` in the project -- unless, running as root, the server user cannot
        reach the project (e.g. a checkout under a 0700 ``/root``): then a directory of
        its own under ``/var/lib/adaptive-client``, named after the project path."""
        local = self.root / ".pgdata"
        if os.geteuid() != 0 or _reachable_by_server_user(self.root):
            return local
        digest = hashlib.sha256(str(self.root).encode()).hexdigest()[:12]
        return Path("/var/lib/adaptive-client") / f"{self.root.name}-{digest}"

    @property
    def datadir(self) -> Path:
        return self.base / "data"

    @property
    def sockdir(self) -> Path:
        return self.base / "run"

    @property
    def logfile(self) -> Path:
        return self.base / "server.log"

    def dsn(self, dbname: str | None = None) -> str:
        return f"host=127.0.0.1 port={self.port} user={SERVER_USER} dbname={dbname or self.dbname}"

    # -- running commands as the server user ---------------------------------------------
    def _as_server_user(self, argv: list[str]) -> list[str]:
        if os.geteuid() != 0:
            return argv
        try:
            pwd.getpwnam(SERVER_USER)
        except KeyError as exc:
            raise EmbeddedDbError(
                f"running as root needs the unprivileged OS user {SERVER_USER!r} "
                "(created by the Debian postgresql packages)"
            ) from exc
        runuser = shutil.which("runuser")
        if runuser:
            return [runuser, "-u", SERVER_USER, "--", *argv]
        return ["su", SERVER_USER, "-s", "/bin/sh", "-c", " ".join(argv)]

    def _run(self, argv: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            self._as_server_user(argv), capture_output=True, text=True, cwd="/", check=False
        )
        if check and proc.returncode != 0:
            raise EmbeddedDbError(
                f"{Path(argv[0]).name} failed ({proc.returncode}): "
                f"{(proc.stderr or proc.stdout).strip()}"
            )
        return proc

    def _chown(self, path: Path) -> None:
        if os.geteuid() == 0:
            pw = pwd.getpwnam(SERVER_USER)
            os.chown(path, pw.pw_uid, pw.pw_gid)

    # -- state ---------------------------------------------------------------------------
    def initialized(self) -> bool:
        return (self.datadir / "PG_VERSION").exists()

    def running(self) -> bool:
        if not self.initialized():
            return False
        bindir = find_bindir()
        proc = self._run([str(bindir / "pg_ctl"), "status", "-D", str(self.datadir)], check=False)
        return proc.returncode == 0

    def _port_free(self) -> bool:
        return port_free(self.port)

    # -- lifecycle -----------------------------------------------------------------------
    def init(self) -> None:
        bindir = find_bindir()
        self.base.mkdir(parents=True, exist_ok=True)
        self._chown(self.base)
        self.datadir.mkdir(exist_ok=True)
        self.datadir.chmod(0o700)
        self._chown(self.datadir)
        self.sockdir.mkdir(exist_ok=True)
        self._chown(self.sockdir)
        self._run(
            [
                str(bindir / "initdb"),
                "-D",
                str(self.datadir),
                "-U",
                SERVER_USER,
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
            ]
        )
        conf = self.datadir / "postgresql.conf"
        with conf.open("a") as f:
            f.write(
                "\n# embedded cluster settings\n"
                "listen_addresses = '127.0.0.1'\n"
                f"port = {self.port}\n"
                f"unix_socket_directories = '{self.sockdir}'\n"
                "max_connections = 200\n"
                "shared_buffers = 256MB\n"
                "max_wal_size = 2GB\n"
                "lc_messages = 'C'\n"
            )

    def up(self) -> str:
        """Create (first time) and start the cluster; return its DSN.  Idempotent."""
        find_bindir()  # (missing binaries said before anything is created)
        if not self.initialized():
            self.init()
        if not self.running():
            if not self._port_free():
                raise EmbeddedDbError(
                    f"port {self.port} on 127.0.0.1 is taken by another program; "
                    "set ADAPTIVE_DB_PORT to another port"
                )
            self._start()
        self._wait_ready()
        self.ensure_database(self.dbname)
        return self.dsn()

    def _start(self) -> None:
        """``pg_ctl start``; a failure says what the server's log says."""
        bindir = find_bindir()
        self.logfile.touch(exist_ok=True)
        self._chown(self.logfile)
        try:
            self._run(
                [
                    str(bindir / "pg_ctl"),
                    "start",
                    "-w",
                    "-t",
                    "60",
                    "-D",
                    str(self.datadir),
                    "-l",
                    str(self.logfile),
                    "-o",
                    f"-p {self.port} -k {self.sockdir}",
                ]
            )
        except EmbeddedDbError as exc:
            tail = self.logfile.read_text(errors="replace").strip().splitlines()[-5:]
            raise EmbeddedDbError(f"{exc}; the server's log ends: {' / '.join(tail)}") from None

    def _wait_ready(self, timeout: float = 30.0) -> None:
        import psycopg

        deadline = time.monotonic() + timeout
        while True:
            try:
                with psycopg.connect(self.dsn("postgres"), connect_timeout=2):
                    return
            except psycopg.OperationalError as exc:
                if time.monotonic() > deadline:
                    raise EmbeddedDbError(f"the embedded server does not answer: {exc}") from exc
                time.sleep(0.2)

    def ensure_database(self, dbname: str) -> None:
        """Create ``dbname`` (if missing) with the extensions the project needs."""
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.dsn("postgres"), autocommit=True) as conn:
            exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)
            ).fetchone()
            if not exists:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))
        with psycopg.connect(self.dsn(dbname), autocommit=True) as conn:
            create_extensions(conn)

    def down(self) -> bool:
        """Stop the cluster (its standbys first); return False if it was not running.
        Idempotent."""
        for standby in self.standbys():
            standby.down()
        return self._stop()

    def _stop(self) -> bool:
        if not self.running():
            return False
        bindir = find_bindir()
        self._run([str(bindir / "pg_ctl"), "stop", "-w", "-m", "fast", "-D", str(self.datadir)])
        return True

    # -- streaming standbys ----------------------------------------------------------------
    def standby(self, number: int) -> EmbeddedStandby:
        """The ``number``-th standby (1, 2, ...), on port ``port + number``."""
        return EmbeddedStandby(self.root, port=self.port + number, primary=self, number=number)

    def standbys(self) -> list[EmbeddedStandby]:
        """The standbys created so far, in order."""
        found: list[EmbeddedStandby] = []
        while (standby := self.standby(len(found) + 1)).initialized():
            found.append(standby)
        return found

    def up_standbys(self, count: int) -> list[str]:
        """Create (first time) and start standbys 1..``count`` of the running primary,
        stop any further ones; return their DSNs.  Idempotent."""
        wanted = [self.standby(n) for n in range(1, count + 1)]
        for extra in self.standbys()[count:]:
            extra.down()
        return [standby.up() for standby in wanted]

    def destroy(self) -> None:
        with contextlib.suppress(EmbeddedDbError):
            self.down()
        shutil.rmtree(self.base, ignore_errors=True)


@dataclass
class EmbeddedStandby(EmbeddedCluster):
    """A streaming standby of an embedded cluster: a ``pg_basebackup -R`` copy of the
    primary under ``standby<N>`` beside its data, following it through the physical
    replication slot ``adaptive_standby_<N>``."""

    primary: EmbeddedCluster | None = None
    number: int = 1

    @property
    def base(self) -> Path:
        assert self.primary is not None
        return self.primary.base / f"standby{self.number}"

    @property
    def slot(self) -> str:
        return f"adaptive_standby_{self.number}"

    def init(self) -> None:
        """Copy the primary (which must be running) and configure the copy as a standby."""
        assert self.primary is not None
        bindir = find_bindir()
        self.base.mkdir(parents=True, exist_ok=True)
        self._chown(self.base)
        self.sockdir.mkdir(exist_ok=True)
        self._chown(self.sockdir)
        shutil.rmtree(self.datadir, ignore_errors=True)  # (a copy interrupted before)
        self._drop_slot()
        self._run(
            [
                str(bindir / "pg_basebackup"),
                "-D",
                str(self.datadir),
                "-h",
                "127.0.0.1",
                "-p",
                str(self.primary.port),
                "-U",
                SERVER_USER,
                "-X",
                "stream",
                "-R",  # standby.signal and primary_conninfo
                "-C",
                "-S",
                self.slot,
                "-c",
                "fast",
            ]
        )
        conf = self.datadir / "postgresql.conf"
        with conf.open("a") as f:
            f.write(
                "\n# embedded standby settings\n"
                f"port = {self.port}\n"
                f"unix_socket_directories = '{self.sockdir}'\n"
                "hot_standby = on\n"
                # the primary keeps the rows a standby's running reads still see, so a
                # replayed VACUUM does not cancel them
                "hot_standby_feedback = on\n"
            )

    def _drop_slot(self) -> None:
        import psycopg

        assert self.primary is not None
        with psycopg.connect(self.primary.dsn("postgres"), autocommit=True) as conn:
            conn.execute(
                "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                "WHERE slot_name = %s AND NOT active",
                (self.slot,),
            )

    def up(self) -> str:
        """Create (first time) and start the standby; return its DSN.  Idempotent."""
        assert self.primary is not None
        if not self.primary.running():
            raise EmbeddedDbError("the primary is not running: start it first")
        if not self.initialized():
            self.init()
        if not self.running():
            if not self._port_free():
                raise EmbeddedDbError(
                    f"port {self.port} on 127.0.0.1 (standby {self.number}) is taken by "
                    "another program; set ADAPTIVE_DB_PORT to another port"
                )
            self._start()
        self._wait_ready()
        return self.dsn()

    def down(self) -> bool:
        return self._stop()

    def destroy(self) -> None:
        with contextlib.suppress(EmbeddedDbError):
            self.down()
        shutil.rmtree(self.base, ignore_errors=True)
        if self.primary is not None and self.primary.running():
            with contextlib.suppress(Exception):
                self._drop_slot()

    def standbys(self) -> list[EmbeddedStandby]:
        return []

    def replay_position(self) -> tuple[bool, str | None]:
        """Whether the server is in recovery, and its last replayed WAL position."""
        import psycopg

        with psycopg.connect(self.dsn("postgres"), connect_timeout=5) as conn:
            row = conn.execute(
                "SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text"
            ).fetchone()
        assert row is not None
        return bool(row[0]), row[1]


def create_extensions(conn: object) -> None:
    """Create plpython3u and pgcrypto in an embedded-cluster database, with a clear
    message when the local server lacks a package.  (Other databases, hosted ones among
    them, go through :func:`adaptive_client.catalog.install.install_database`, which installs
    what the role may and falls back to the client peel mode.)"""
    import psycopg

    assert isinstance(conn, psycopg.Connection)
    for ext, package in (
        ("plpython3u", "postgresql-plpython3-15"),
        ("pgcrypto", "postgresql-contrib"),
    ):
        try:
            conn.execute(f"CREATE EXTENSION IF NOT EXISTS {ext}")
        except psycopg.Error as exc:
            raise EmbeddedDbError(
                f"the embedded cluster cannot create extension {ext} (on Debian, install "
                f"the package {package}): {exc}"
            ) from exc
