"""Choose and set up the latency emulation; tear it down on exit (also on Ctrl-C)."""

from __future__ import annotations

import multiprocessing as mp
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

NAMESPACE = "adaptive-wan"


@dataclass(frozen=True)
class Emulation:
    host: str
    port: int
    rtt_ms: float
    method: str  # "none", "netem" or "proxy"


def _run(*argv: str) -> bool:
    return subprocess.run(argv, capture_output=True, check=False).returncode == 0


def netem_available() -> bool:
    """True when this kernel has the netem qdisc (tried in a scratch namespace)."""
    if shutil.which("tc") is None or shutil.which("ip") is None:
        return False
    probe = f"{NAMESPACE}-probe"
    if not _run("ip", "netns", "add", probe):
        return False
    try:
        return _run(
            "ip",
            "netns",
            "exec",
            probe,
            "tc",
            "qdisc",
            "add",
            "dev",
            "lo",
            "root",
            "netem",
            "delay",
            "1ms",
        )
    finally:
        _run("ip", "netns", "del", probe)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def _proxy(
    host: str, port: int, rtt_ms: float, listen_host: str = "127.0.0.1"
) -> Iterator[Emulation]:
    from .proxy import run_proxy

    ctx = mp.get_context("spawn")
    ready = ctx.Event()
    listen = _free_port()
    proc = ctx.Process(
        target=run_proxy, args=(listen, host, port, rtt_ms, ready, listen_host), daemon=True
    )
    proc.start()
    try:
        if not ready.wait(30):
            raise RuntimeError("the latency proxy did not start")
        yield Emulation(listen_host, listen, rtt_ms, "proxy")
    finally:
        proc.terminate()
        proc.join(5)
        if proc.is_alive():
            proc.kill()


@contextmanager
def _netem(host: str, port: int, rtt_ms: float) -> Iterator[Emulation]:
    """Kernel delay on a veth pair between the root namespace and one of ours.

    Clients (root namespace) connect to 10.77.0.2 inside the namespace; a forwarder there
    connects back to 10.77.0.1, where a forwarder in the root namespace reaches the
    server on loopback.  Each exchange crosses the veth pair twice each way, so each of
    the four egress qdiscs delays by rtt/4.
    """
    ns, a, b = NAMESPACE, "adwan0", "adwan1"
    quarter = f"{rtt_ms / 4:.3f}ms"
    steps = [
        ("ip", "netns", "add", ns),
        ("ip", "link", "add", a, "type", "veth", "peer", "name", b),
        ("ip", "link", "set", b, "netns", ns),
        ("ip", "addr", "add", "10.77.0.1/30", "dev", a),
        ("ip", "link", "set", a, "up"),
        ("ip", "netns", "exec", ns, "ip", "addr", "add", "10.77.0.2/30", "dev", b),
        ("ip", "netns", "exec", ns, "ip", "link", "set", b, "up"),
        ("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up"),
        ("tc", "qdisc", "add", "dev", a, "root", "netem", "delay", quarter),
        (
            "ip",
            "netns",
            "exec",
            ns,
            "tc",
            "qdisc",
            "add",
            "dev",
            b,
            "root",
            "netem",
            "delay",
            quarter,
        ),
    ]
    inner: subprocess.Popen[bytes] | None = None
    try:
        for step in steps:
            if not _run(*step):
                raise RuntimeError(f"netem set-up failed at: {' '.join(step)}")
        with _proxy(host, port, 0.0, listen_host="10.77.0.1") as root_side:
            listen = _free_port()
            inner = subprocess.Popen(
                [
                    "ip",
                    "netns",
                    "exec",
                    ns,
                    sys.executable,
                    "-m",
                    "netem.proxy",
                    "--listen",
                    f"10.77.0.2:{listen}",
                    "--target",
                    f"10.77.0.1:{root_side.port}",
                ],
                cwd=str(Path(__file__).resolve().parent.parent),
            )
            _wait_port("10.77.0.2", listen)
            yield Emulation("10.77.0.2", listen, rtt_ms, "netem")
    finally:
        if inner is not None:
            inner.terminate()
            inner.wait(5)
        _run("ip", "link", "del", a)
        _run("ip", "netns", "del", ns)


def _wait_port(host: str, port: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            s.settimeout(0.5)
            if s.connect_ex((host, port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"the forwarder on {host}:{port} did not start")


@contextmanager
def emulate(host: str, port: int, rtt_ms: float, method: str = "auto") -> Iterator[Emulation]:
    """Yield where to connect so that each round trip to ``host:port`` gains ``rtt_ms``."""
    if rtt_ms <= 0 and method == "auto":
        yield Emulation(host, port, 0.0, "none")
        return
    chosen = method
    if method == "auto":
        chosen = "netem" if netem_available() else "proxy"
    if chosen == "netem":
        with _netem(host, port, rtt_ms) as e:
            yield e
    else:
        with _proxy(host, port, rtt_ms) as e:
            yield e
