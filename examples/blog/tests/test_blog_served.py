"""The blog served as in production: a threaded WSGI server, concurrent requests."""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from blog.app import create_app
from werkzeug.serving import make_server


@pytest.fixture()
def server(url: str) -> Iterator[str]:
    """The app on a threaded server on a free loopback port; its base URL."""
    app = create_app(url)
    served = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{served.server_port}"
    served.shutdown()
    thread.join(10)
    app.extensions["blog.engine"].dispose()


def call(base: str, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    request = urllib.request.Request(
        base + path,
        method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.status, json.loads(response.read() or b"null")


def test_concurrent_requests_on_a_threaded_server(server: str) -> None:
    """Eight clients at once: every new user gets its own id; reads and writes mixed."""

    def add(i: int) -> tuple[int, int]:
        status, out = call(
            server,
            "POST",
            "/users",
            {"name": f"u{i}", "email": f"u{i}@x.org", "joined": "2024-01-02"},
        )
        return status, out["id"]

    with ThreadPoolExecutor(8) as pool:
        made = list(pool.map(add, range(40)))
    assert {status for status, _ in made} == {201}
    ids = [i for _, i in made]
    assert len(set(ids)) == 40
    status, post = call(
        server,
        "POST",
        "/posts",
        {
            "author_id": ids[0],
            "title": "t",
            "body": "b",
            "tags": ["x"],
            "published": "2024-05-01T10:00:00",
        },
    )
    assert status == 201

    expected = call(server, "GET", "/posts?page=1")[1]
    assert [p["title"] for p in expected] == ["t"]

    def read(_: int) -> Any:
        return call(server, "GET", "/posts?page=1")[1]

    def vote(_: int) -> int:
        return int(call(server, "POST", f"/posts/{post['id']}/vote", {"delta": 1})[0])

    with ThreadPoolExecutor(8) as pool:  # reads and votes at once
        reads = pool.map(read, range(24))
        votes = pool.map(vote, range(24))
        assert all(r[0]["title"] == "t" for r in reads)
        assert set(votes) == {200}
    # (each vote reads the score and writes it back: under READ COMMITTED some are lost,
    # on PostgreSQL as here; none is counted twice)
    assert 1 <= call(server, "POST", f"/posts/{post['id']}/vote", {"delta": 0})[1]["score"] <= 24
