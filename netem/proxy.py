"""A user-space TCP proxy that adds a fixed one-way delay to each direction.

Every chunk read from one side is delivered to the other side ``delay`` seconds after it
arrived, in order; bandwidth is not limited and chunks are not merged, so a request /
response exchange gains exactly one round trip of ``2 * delay``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def deliver() -> None:
        while True:
            due, data = await queue.get()
            if not data:
                break
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
        with contextlib.suppress(OSError):
            writer.close()

    task = asyncio.create_task(deliver())
    try:
        while True:
            data = await reader.read(65536)
            queue.put_nowait((time.monotonic() + delay, data))
            if not data:
                break
    except (ConnectionError, OSError):
        queue.put_nowait((0.0, b""))
    await task


async def _serve(
    listen_port: int,
    target_host: str,
    target_port: int,
    delay: float,
    ready: object | None,
    listen_host: str = "127.0.0.1",
) -> None:
    async def handle(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        try:
            server_r, server_w = await asyncio.open_connection(target_host, target_port)
        except OSError:
            client_w.close()
            return
        for w in (client_w, server_w):
            sock = w.get_extra_info("socket")
            if sock is not None:
                import socket

                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        await asyncio.gather(
            _pump(client_r, server_w, delay),
            _pump(server_r, client_w, delay),
            return_exceptions=True,
        )

    server = await asyncio.start_server(handle, listen_host, listen_port)
    if ready is not None:
        ready.set()  # type: ignore[attr-defined]
    async with server:
        await server.serve_forever()


def run_proxy(
    listen_port: int,
    target_host: str,
    target_port: int,
    rtt_ms: float,
    ready: object | None = None,
    listen_host: str = "127.0.0.1",
) -> None:
    """Run until killed (the parent terminates the process)."""
    asyncio.run(_serve(listen_port, target_host, target_port, rtt_ms / 2000.0, ready, listen_host))


if __name__ == "__main__":  # a forwarder started inside a network namespace
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", required=True, help="host:port")
    ap.add_argument("--target", required=True, help="host:port")
    ap.add_argument("--rtt-ms", type=float, default=0.0)
    a = ap.parse_args()
    lh, lp = a.listen.rsplit(":", 1)
    th, tp = a.target.rsplit(":", 1)
    run_proxy(int(lp), th, int(tp), a.rtt_ms, None, lh)
