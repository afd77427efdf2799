"""The blog through its Flask app."""

from __future__ import annotations

from typing import Any

import pytest
from blog.app import create_app


@pytest.fixture()
def client(url: str) -> Any:
    app = create_app(url)
    yield app.test_client()
    app.extensions["blog.engine"].dispose()


def seed(client: Any) -> dict[str, int]:
    ids = {}
    for i, name in enumerate(["ann", "bob", "cy"]):
        r = client.post(
            "/users",
            json={"name": name, "email": f"{name}@example.org", "joined": f"2024-0{i + 1}-15"},
        )
        assert r.status_code == 201
        ids[name] = r.json["id"]
    posts = [
        ("ann", "Encrypted databases for everyone", ["crypto", "db"], 1),
        ("bob", "Why onions peel", ["crypto"], 2),
        ("ann", "Postgres tips", ["db"], 3),
        ("cy", "Weekend news roundup", ["news"], 4),
        ("bob", "More onions and layers", ["crypto", "news"], 5),
        ("ann", "Databases in practice", ["db", "news"], 6),
        ("cy", "Hello world", [], 7),
    ]
    for author, title, tags, day in posts:
        r = client.post(
            "/posts",
            json={
                "author_id": ids[author],
                "title": title,
                "body": f"{title}, the text.",
                "tags": tags,
                "published": f"2024-05-{day:02d}T10:00:00",
            },
        )
        assert r.status_code == 201
        ids[title] = r.json["id"]
    return ids


def test_pagination_newest_first(client: Any) -> None:
    seed(client)
    first = client.get("/posts?page=1").json
    second = client.get("/posts?page=2").json
    assert [p["title"] for p in first] == [
        "Hello world",
        "Databases in practice",
        "More onions and layers",
        "Weekend news roundup",
        "Postgres tips",
    ]
    assert [p["title"] for p in second] == ["Why onions peel", "Encrypted databases for everyone"]
    assert first[1]["author"] == "ann" and first[1]["tags"] == ["db", "news"]
    assert client.get("/posts?page=3").json == []


def test_tags_and_search(client: Any) -> None:
    seed(client)
    assert client.get("/tags/crypto").json == [
        "Encrypted databases for everyone",
        "More onions and layers",
        "Why onions peel",
    ]
    assert client.get("/tags/nothing").json == []
    assert client.get("/posts/search?q=onions").json == [
        "Why onions peel",
        "More onions and layers",
    ]
    assert client.get("/posts/search?q=tips").json == ["Postgres tips"]


def test_votes_and_stats(client: Any) -> None:
    ids = seed(client)
    for title, delta in [
        ("Why onions peel", 3),
        ("Postgres tips", 5),
        ("Why onions peel", -1),
        ("Hello world", 2),
    ]:
        client.post(f"/posts/{ids[title]}/vote", json={"delta": delta})
    assert client.post(f"/posts/{ids['Postgres tips']}/vote", json={"delta": 1}).json == {
        "score": 6
    }
    stats = client.get("/stats").json
    assert [(s["name"], s["posts"], s["total"], s["best"]) for s in stats] == [
        ("ann", 3, 6, 6),
        ("bob", 2, 2, 2),
        ("cy", 2, 2, 2),
    ]
    assert stats[0]["latest"] == "2024-05-06T10:00:00"


def test_retag_and_delete_cascade(client: Any) -> None:
    ids = seed(client)
    assert client.put(f"/posts/{ids['Hello world']}/tags", json={"tags": ["db", "intro"]}).json == [
        "db",
        "intro",
    ]
    assert client.get("/tags/db").json == [
        "Databases in practice",
        "Encrypted databases for everyone",
        "Hello world",
        "Postgres tips",
    ]
    assert client.delete(f"/users/{ids['ann']}").status_code == 204
    assert client.get("/tags/db").json == ["Hello world"]
    assert [p["author"] for p in client.get("/posts").json] == ["cy", "bob", "cy", "bob"]
    assert [s["name"] for s in client.get("/stats").json] == ["bob", "cy"]
