"""SQLAlchemy's own dialect compliance suite (sqlalchemy.testing.suite) through
postgresql+adaptive:// against a fresh encrypted database: CRUD, RETURNING,
insertmanyvalues, reflection of tables, columns, keys, indexes and views, server-side
cursors, types, expressions.  It runs as its own pytest session with SQLAlchemy's plugin
(tests/ecosystem/suite); the tests that cannot pass are listed there with the reason and
run as strict expected failures, so the list stays exact."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import sa_url

SUITE = Path(__file__).parent / "suite"


@pytest.mark.slow
def test_sqlalchemy_compliance_suite(new_database: object, key_file: Path) -> None:
    dsn = new_database("sa_suite")  # type: ignore[operator]
    url = sa_url(dsn, "adaptive", master_key_file=str(key_file)).render_as_string(
        hide_password=False
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-c",
            str(SUITE / "setup.cfg"),
            "--rootdir",
            str(SUITE),
            str(SUITE),
            "-q",
            "-rfE",
            "--dburi",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    tail = done.stdout[-6000:] + done.stderr[-2000:]
    assert done.returncode == 0, tail
    summary = done.stdout.strip().splitlines()[-1]
    passed = int(re.search(r"(\d+) passed", summary).group(1))  # type: ignore[union-attr]
    assert passed >= 680, summary
    assert not re.search(r"\d+ (failed|errors?)\b", summary), summary
