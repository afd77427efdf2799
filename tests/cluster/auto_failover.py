"""A pg_auto_failover formation of a test's own: a monitor, a primary and a synchronous
standby (``pg_autoctl``), under a temporary directory, on loopback, on the test's ports,
run as the ``postgres`` OS user, always stopped.

Each ``pg_autoctl`` runs in a session of its own (its keeper processes and its
postmaster are one process group), so that a node can be killed whole -- the machine
lost -- with one ``SIGKILL`` of its group, and every node stopped at the end the same
way.  A detached watchdog kills what is left after ``lifetime`` seconds, even if the
test process itself was killed.

The monitor's health checks are shortened (a second instead of five; a node unhealthy
after two seconds without a report instead of twenty), so that a lost primary is failed
over in a few seconds; ``pg_basebackup``'s spread checkpoint, which the standby's
creation waits for, is hurried by ``CHECKPOINT`` on the primary.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import psycopg

from adaptive_client.admin.embedded import SERVER_USER, find_bindir

from .own_servers import as_server_user, scratch_dir

#: the monitor's settings (pgautofailover.*): detect a lost node in about two seconds
MONITOR_SETTINGS = {
    "health_check_period": "1000ms",
    "health_check_timeout": "1000ms",
    "health_check_max_retries": "1",
    "health_check_retry_delay": "500ms",
    "node_considered_unhealthy_timeout": "2000ms",
    "primary_demote_timeout": "5000ms",
}


class FormationError(RuntimeError):
    """The formation did not reach the state asked for in time."""


class Formation:
    """``start()``: monitor, primary ``node1`` holding ``dbname``, then ``add_standby()``."""

    def __init__(self, monitor_port: int, node_ports: tuple[int, int], dbname: str,
                 lifetime: int = 600) -> None:  # fmt: skip
        self.root = scratch_dir("adaptive-failover-")
        os.chown(self.root, *_server_ids())
        self.monitor_port = monitor_port
        self.node_ports = node_ports
        self.dbname = dbname
        self.lifetime = lifetime
        self.bindir = find_bindir()
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.watchdog: subprocess.Popen[bytes] | None = None

    # -- names ---------------------------------------------------------------------------
    def pgdata(self, name: str) -> Path:
        return self.root / name

    def port(self, name: str) -> int:
        return self.monitor_port if name == "monitor" else self.node_ports[int(name[-1]) - 1]

    def dsn(self, name: str, dbname: str | None = None) -> str:
        return (
            f"host=127.0.0.1 port={self.port(name)} user={SERVER_USER} "
            f"dbname={dbname or self.dbname} sslmode=disable"
        )

    def multi_host_dsn(self, **extra: str) -> str:
        """Both nodes, the writable one chosen by libpq (target_session_attrs)."""
        ports = ",".join(str(p) for p in self.node_ports)
        options = " ".join(f"{k}={v}" for k, v in extra.items())
        return (
            f"host=127.0.0.1,127.0.0.1 port={ports} user={SERVER_USER} dbname={self.dbname} "
            f"target_session_attrs=read-write sslmode=disable connect_timeout=2 {options}"
        ).strip()

    @property
    def monitor_uri(self) -> str:
        return f"postgres://autoctl_node@127.0.0.1:{self.monitor_port}/pg_auto_failover?sslmode=disable"

    # -- running pg_autoctl ----------------------------------------------------------------
    def _argv(self, *args: str) -> list[str]:
        env = [
            "env",
            f"XDG_CONFIG_HOME={self.root / 'xdg' / 'config'}",
            f"XDG_DATA_HOME={self.root / 'xdg' / 'data'}",
            f"XDG_RUNTIME_DIR={self.root / 'xdg' / 'run'}",
            f"PATH={self.bindir}:/usr/bin:/bin",
        ]
        return as_server_user([*env, "pg_autoctl", *args])

    def _spawn(self, name: str, *args: str) -> None:
        log = (self.root / f"{name}.log").open("ab")
        self.procs[name] = proc = subprocess.Popen(
            self._argv(*args), stdout=log, stderr=log, cwd="/", start_new_session=True
        )
        with (self.root / "groups.txt").open("a") as groups:
            groups.write(f"{proc.pid}\n")

    def _common(self, name: str) -> list[str]:
        return [
            "--pgdata", str(self.pgdata(name)), "--pgport", str(self.port(name)),
            "--hostname", "127.0.0.1", "--listen", "127.0.0.1", "--auth", "trust",
            "--no-ssl", "--pgctl", str(self.bindir / "pg_ctl"),
        ]  # fmt: skip

    def log(self, name: str) -> str:
        try:
            return (self.root / f"{name}.log").read_text(errors="replace")[-3000:]
        except OSError:
            return ""

    # -- lifecycle -------------------------------------------------------------------------
    def start_watchdog(self) -> None:
        pg_ctl = str(self.bindir / "pg_ctl")
        stops = "; ".join(
            " ".join(as_server_user([pg_ctl, "stop", "-m", "immediate", "-D", str(self.pgdata(n))]))
            + " >/dev/null 2>&1"
            for n in ("node1", "node2", "monitor")
        )
        # the process groups of the pg_autoctl sessions, by id (groups.txt lists them)
        script = (
            f"sleep {self.lifetime}; "
            f"for g in $(cat '{self.root}/groups.txt'); do kill -KILL -- -$g; done; "
            f"{stops}; rm -rf '{self.root}'"
        )
        self.watchdog = subprocess.Popen(
            ["/bin/sh", "-c", script],
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def start(self, timeout: float = 60) -> None:
        """The monitor, then ``node1`` as a single primary with ``dbname``."""
        self.start_watchdog()
        run = subprocess.run(
            self._argv("create", "monitor", *self._common("monitor")),
            capture_output=True, text=True, timeout=120, cwd="/", check=False,
        )  # fmt: skip
        if run.returncode != 0:
            raise FormationError(f"pg_autoctl create monitor: {run.stderr[-2000:]}")
        self._spawn("monitor", "run", "--pgdata", str(self.pgdata("monitor")))
        self._wait(lambda: self._monitor_settings(), timeout, "the monitor")
        self._spawn(
            "node1", "create", "postgres", *self._common("node1"), "--monitor",
            self.monitor_uri, "--dbname", self.dbname, "--name", "node1", "--run",
        )  # fmt: skip
        self._wait(lambda: self.states().get("node1") == ("single", "single"), timeout, "node1")

    def add_standby(self, timeout: float = 120) -> None:
        """``node2``, a synchronous standby of ``node1``: until both report primary and
        secondary."""
        self._spawn(
            "node2", "create", "postgres", *self._common("node2"), "--monitor",
            self.monitor_uri, "--dbname", self.dbname, "--name", "node2", "--run",
        )  # fmt: skip

        def ready() -> bool:
            with (  # hurry the base backup's checkpoint
                contextlib.suppress(psycopg.Error),
                psycopg.connect(self.dsn("node1"), autocommit=True, connect_timeout=2) as c,
            ):
                c.execute("CHECKPOINT")
            states = self.states()
            return states.get("node1") == ("primary", "primary") and states.get("node2") == (
                "secondary",
                "secondary",
            )

        self._wait(ready, timeout, "node2 as a secondary", pause=1.0)

    def _monitor_settings(self) -> bool:
        try:
            with psycopg.connect(self.dsn("monitor", "pg_auto_failover"), autocommit=True,
                                 connect_timeout=2) as c:  # fmt: skip
                for name, value in MONITOR_SETTINGS.items():
                    c.execute(f"ALTER SYSTEM SET pgautofailover.{name} = '{value}'")
                c.execute("SELECT pg_reload_conf()")
        except psycopg.Error:
            return False
        return True

    def states(self) -> dict[str, tuple[str, str]]:
        """Node name -> (reported state, assigned state), as the monitor has them."""
        try:
            with psycopg.connect(self.dsn("monitor", "pg_auto_failover"), connect_timeout=2) as c:
                rows = c.execute(
                    "SELECT nodename, reportedstate::text, goalstate::text FROM pgautofailover.node"
                ).fetchall()
        except psycopg.Error:
            return {}
        return {name: (reported, goal) for name, reported, goal in rows}

    def _wait(self, ready: Any, timeout: float, what: str, pause: float = 0.3) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            if time.monotonic() > deadline:
                raise FormationError(
                    f"{what} not ready after {timeout:.0f} s: {self.states()}\n"
                    + "\n".join(f"--- {n}\n{self.log(n)}" for n in self.procs)
                )
            time.sleep(pause)

    def writable(self, name: str) -> bool:
        """Does ``name`` accept writes now (as libpq's read-write check asks)?"""
        with (
            contextlib.suppress(psycopg.Error),
            psycopg.connect(self.dsn(name), connect_timeout=1) as c,
        ):
            return bool(c.execute("SHOW transaction_read_only").fetchone() == ("off",))
        return False

    def wait_writable(self, name: str, timeout: float) -> None:
        self._wait(lambda: self.writable(name), timeout, f"{name} writable", pause=0.1)

    def postmaster_pid(self, name: str) -> int:
        return int((self.pgdata(name) / "postmaster.pid").read_text().split()[0])

    def kill_node(self, name: str) -> None:
        """The node lost: its keeper and its postmaster killed (SIGKILL), nothing flushed,
        no goodbye to the monitor."""
        pid = self.postmaster_pid(name)
        proc = self.procs.pop(name)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        proc.wait(timeout=10)

    def destroy(self) -> None:
        for proc in self.procs.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        self.procs.clear()
        for name in ("node1", "node2", "monitor"):
            if (self.pgdata(name) / "postmaster.pid").exists():
                subprocess.run(
                    as_server_user(
                        [str(self.bindir / "pg_ctl"), "stop", "-m", "immediate", "-D",
                         str(self.pgdata(name))]
                    ),
                    capture_output=True, timeout=30, check=False,
                )  # fmt: skip
        if self.watchdog is not None and self.watchdog.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.watchdog.pid, signal.SIGKILL)
            self.watchdog.wait(timeout=10)
        shutil.rmtree(self.root, ignore_errors=True)


def _server_ids() -> tuple[int, int]:
    import pwd

    pw = pwd.getpwnam(SERVER_USER)
    return pw.pw_uid, pw.pw_gid
