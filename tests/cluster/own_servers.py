"""PostgreSQL servers of a test's own: under a temporary directory, on loopback, on a port
the test names, run as the ``postgres`` OS user (initdb refuses root), always stopped.

Each server is an :class:`~adaptive_client.admin.embedded.EmbeddedCluster` rooted in a
directory of its own (the embedded cluster's layout, settings and extensions), so that
what the tests restore into is what ``adaptive-db up`` makes.  Two guards stop it:

* the test's finalizer (:meth:`OwnServer.destroy`, idempotent), and
* a watchdog: a detached shell started with the server that, after ``lifetime`` seconds,
  stops it (``immediate``) and removes its directory -- even if the test process was
  killed or hangs, nothing outlives the run by more than that.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from adaptive_client.admin.embedded import SERVER_USER, EmbeddedCluster, find_bindir
from adaptive_client.admin.embedded import free_ports as embedded_free_ports

#: how long a watchdog lets a server live (seconds)
DEFAULT_LIFETIME = 900


def free_ports(starts: tuple[int, ...], count: int = 1) -> tuple[int, ...]:
    """The first run of ``count`` free consecutive ports beginning at one of ``starts``
    (the embedded cluster's own search, not waited for)."""
    start = embedded_free_ports(starts, count, wait=0)
    return tuple(range(start, start + count))


def scratch_dir(prefix: str) -> Path:
    """A new temporary directory the server user may traverse (mkdtemp makes it 0700)."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o755)
    return path


def as_server_user(argv: list[str]) -> list[str]:
    """``argv`` run as the unprivileged server user when we are root."""
    if os.geteuid() != 0:
        return argv
    return ["runuser", "-u", SERVER_USER, "--", *argv]


def bin_path(name: str) -> str:
    """A PostgreSQL program of the server's own version (not the distribution wrapper)."""
    return str(find_bindir() / name)


class OwnServer:
    """One server: ``start()`` creates and starts it; ``destroy()`` stops and removes it."""

    def __init__(self, port: int, prefix: str = "adaptive-own-", lifetime: int = DEFAULT_LIFETIME):
        self.root = scratch_dir(prefix)
        self.cluster = EmbeddedCluster(self.root, port=port)
        self.port = port
        self.lifetime = lifetime
        self.watchdog: subprocess.Popen[bytes] | None = None

    @property
    def datadir(self) -> Path:
        return self.cluster.datadir

    def dsn(self, dbname: str = "postgres") -> str:
        return self.cluster.dsn(dbname)

    def start_watchdog(self) -> None:
        if self.watchdog is not None:
            return
        script = (
            f"sleep {self.lifetime}; "
            f"{' '.join(as_server_user([bin_path('pg_ctl'), 'stop', '-m', 'immediate', '-D', str(self.datadir)]))}"
            f" >/dev/null 2>&1; rm -rf '{self.root}'"
        )
        self.watchdog = subprocess.Popen(
            ["/bin/sh", "-c", script],
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def start(self) -> OwnServer:
        """Create (first time) and start the server with the project's extensions in its
        ``adaptive`` database."""
        self.start_watchdog()
        self.cluster.up()
        return self

    def start_existing(self) -> OwnServer:
        """Start a data directory put in place by other means (a base backup)."""
        self.start_watchdog()
        self.cluster.sockdir.mkdir(exist_ok=True)
        self.cluster.logfile.touch(exist_ok=True)
        subprocess.run(["chown", "-R", SERVER_USER, str(self.cluster.base)], check=True, timeout=60)
        self.datadir.chmod(0o700)
        proc = subprocess.run(
            as_server_user(
                [
                    bin_path("pg_ctl"),
                    "start",
                    "-w",
                    "-t",
                    "60",
                    "-D",
                    str(self.datadir),
                    "-l",
                    str(self.cluster.logfile),
                    "-o",
                    f"-p {self.port} -k {self.cluster.sockdir}",
                ]
            ),
            check=False,
            capture_output=True,
            text=True,
            timeout=90,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"pg_ctl start failed: {proc.stderr}\n{self.log()}")
        return self

    def log(self) -> str:
        try:
            return self.cluster.logfile.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def destroy(self) -> None:
        with contextlib.suppress(Exception):
            subprocess.run(
                as_server_user(
                    [
                        bin_path("pg_ctl"),
                        "stop",
                        "-w",
                        "-t",
                        "30",
                        "-m",
                        "fast",
                        "-D",
                        str(self.datadir),
                    ]
                ),
                capture_output=True,
                timeout=60,
                check=False,
            )
        with contextlib.suppress(Exception):
            subprocess.run(
                as_server_user(
                    [bin_path("pg_ctl"), "stop", "-m", "immediate", "-D", str(self.datadir)]
                ),
                capture_output=True,
                timeout=30,
                check=False,
            )
        if self.watchdog is not None and self.watchdog.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.watchdog.pid, signal.SIGKILL)
            self.watchdog.wait(timeout=10)
        shutil.rmtree(self.root, ignore_errors=True)
