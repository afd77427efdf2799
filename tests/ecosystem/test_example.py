"""The example application (examples/blog) runs its own tests, written as for a plain
database, against a plain database and against an encrypted one: only the URL differs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .capabilities import client_supports
from .conftest import sa_url

BLOG = Path(__file__).parents[2] / "examples" / "blog"


def _run_blog_tests(url: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BLOG_DATABASE_URL": url}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-c",
            os.devnull,
            "--rootdir",
            str(BLOG),
            "tests",
        ],
        cwd=BLOG,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_example_on_plain_database(dsn_pair: tuple[str, str]) -> None:
    done = _run_blog_tests(sa_url(dsn_pair[0], "psycopg").render_as_string(hide_password=False))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "6 passed" in done.stdout


def test_example_on_encrypted_database(
    dsn_pair: tuple[str, str], key_file: Path, pg_cluster: str
) -> None:
    missing = {"serial", "foreign_keys"} - client_supports(pg_cluster)
    if missing:
        pytest.xfail(f"the example's models use {sorted(missing)}, which the client's DDL lacks")
    url = sa_url(dsn_pair[1], "adaptive", master_key_file=str(key_file))
    done = _run_blog_tests(url.render_as_string(hide_password=False))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "6 passed" in done.stdout
