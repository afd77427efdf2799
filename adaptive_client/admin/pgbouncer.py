"""PgBouncer in front of a PostgreSQL server, for the tests and benchmarks of a client
behind a connection pooler (docs/poolers.md).

:class:`PgBouncer` writes a configuration under a temporary directory (every database
of the server, ``trust`` authentication on loopback as the embedded cluster's), starts
PgBouncer on the first free port of a range -- as the server's OS user where we are
root: PgBouncer refuses to run as root --, and stops it by :meth:`PgBouncer.stop` or,
should the process that started it die or hang, by a detached watchdog after a bounded
lifetime.  :func:`program` finds the binary (Debian installs it in ``/usr/sbin``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from .embedded import SERVER_USER

LIFETIME = 900  # seconds a PgBouncer lives at most (its watchdog)


def program() -> str:
    """The ``pgbouncer`` binary; ``FileNotFoundError`` where it is not installed."""
    found = shutil.which("pgbouncer") or next(
        (p for p in ("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer") if Path(p).exists()), None
    )
    if found is None:
        raise FileNotFoundError("pgbouncer is not installed (scripts/install-system-deps.sh)")
    return found


class PgBouncer:
    """A PgBouncer on loopback in front of the server of ``server_dsn``, in pool ``mode``
    with ``pool_size`` server connections per database and user, run as the server's OS
    user when we are root; stopped by :meth:`stop` or, after ``lifetime`` seconds at the
    latest, by its watchdog.  It listens on the first of ``ports`` it can bind (a port
    of the range may be another connection's local end for a while)."""

    def __init__(
        self, server_dsn: str, ports: range, mode: str, pool_size: int, lifetime: int = LIFETIME
    ) -> None:
        self.mode, self.server_dsn, self.pool_size = mode, server_dsn, pool_size
        self.dir = Path(tempfile.mkdtemp(prefix=f"adaptive-pgbouncer-{mode}-"))
        self.dir.chmod(0o755)
        server = conninfo_to_dict(server_dsn)
        (self.dir / "users.txt").write_text(f'"{server.get("user", SERVER_USER)}" ""\n')
        for port in ports:
            self.port = port
            pid = self._start(server)
            if pid is not None:
                self.pid = pid
                break
        else:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise RuntimeError(f"pgbouncer could not listen on any of {ports}")
        # the watchdog: a detached shell that stops PgBouncer after ``lifetime`` seconds,
        # even where this process was killed or hangs
        self.watchdog = subprocess.Popen(
            ["sh", "-c", f"sleep {lifetime}; kill {self.pid} 2>/dev/null"],
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def _start(self, server: dict[str, Any]) -> int | None:
        """Start PgBouncer on :attr:`port`; its pid, or None where the port was taken."""
        for name in ("pgbouncer.log", "pgbouncer.pid"):
            (self.dir / name).unlink(missing_ok=True)
        (self.dir / "pgbouncer.ini").write_text(
            "[databases]\n"
            f"* = host={server.get('host', '127.0.0.1')} port={server.get('port', 5432)}\n"
            "[pgbouncer]\n"
            f"listen_addr = 127.0.0.1\nlisten_port = {self.port}\nunix_socket_dir =\n"
            f"auth_type = trust\nauth_file = {self.dir / 'users.txt'}\n"
            f"pool_mode = {self.mode}\ndefault_pool_size = {self.pool_size}\n"
            "max_client_conn = 100\n"
            # a client waiting for a server connection fails rather than hangs
            "query_wait_timeout = 60\n"
            # (a startup option such as a statement_timeout bound: ignored, not refused)
            "ignore_startup_parameters = options\n"
            f"logfile = {self.dir / 'pgbouncer.log'}\npidfile = {self.dir / 'pgbouncer.pid'}\n"
        )
        argv = [program(), "-d"]
        if os.geteuid() == 0:
            shutil.chown(self.dir, SERVER_USER)
            for f in self.dir.iterdir():
                shutil.chown(f, SERVER_USER)
            argv = ["runuser", "-u", SERVER_USER, "--", *argv]
        subprocess.run([*argv, str(self.dir / "pgbouncer.ini")], check=True, timeout=30)
        deadline = time.monotonic() + 10
        pid = None
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, ValueError):
                pid = int((self.dir / "pgbouncer.pid").read_text())
            if pid is not None and "cannot listen" in self.log():
                break
            with contextlib.suppress(psycopg.OperationalError):
                if pid is not None:
                    with psycopg.connect(self.dsn(self.server_dsn), connect_timeout=2):
                        return pid
            time.sleep(0.05)
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if "cannot listen" in self.log():
            return None
        raise RuntimeError(f"pgbouncer did not start: {self.log()}")

    def log(self) -> str:
        with contextlib.suppress(OSError):
            return (self.dir / "pgbouncer.log").read_text()[-2000:]
        return ""

    def dsn(self, dsn: str, **options: Any) -> str:
        """``dsn`` (a database of the server) reached through this PgBouncer."""
        return make_conninfo(dsn, host="127.0.0.1", port=self.port, **options)

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.watchdog.pid, signal.SIGTERM)
        self.watchdog.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)


__all__ = ["LIFETIME", "PgBouncer", "program"]
