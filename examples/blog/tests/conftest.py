"""The blog's tests run against the database BLOG_DATABASE_URL names; each test starts
from empty tables."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).parents[1]))

from blog.models import Base


@pytest.fixture()
def url() -> Iterator[str]:
    url = os.environ.get("BLOG_DATABASE_URL")
    if not url:
        pytest.skip("set BLOG_DATABASE_URL to the blog's database")
    yield url
    engine = sa.create_engine(url)
    Base.metadata.drop_all(engine)
    engine.dispose()
